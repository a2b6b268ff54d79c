//! `mmcheck check`: check scenario files, print the verdict table, counterexamples and replay
//! lines.

use std::path::PathBuf;
use std::sync::Arc;

use mmcheck::check::{check, Report, RunOptions, Verdict};
use mmcheck::engine::stateful::cluster::Cluster;
use mmcheck::engine::{EngineName, Memory};
use mmcheck::registry::Registry;
use mmcheck::scenario::{self, Scenario};
use mmcheck::term::{escape_control, show_path};
use mmcheck::token::ReplayToken;

use super::cluster;
use super::inputs::{default_scenario_paths, load_all, memory_flag};
use super::output::{emit, emit_json, emit_raw, progress_bar, warn, CliError, Done, HtmlOut};

#[allow(clippy::too_many_arguments)] // one per option of `mmcheck check`
pub fn cmd_check(
    reg: &Registry,
    paths: Vec<PathBuf>,
    json: bool,
    replay: Option<String>,
    verbose: bool,
    (traces, wide): (bool, bool),
    engine: Option<String>,
    (check_online, no_reduce, memory, workers, cluster): (bool, bool, Option<String>, u16, Option<Arc<Cluster>>),
    out: &HtmlOut,
) -> Done {
    let memory = memory_flag(memory.as_deref())?;
    let paths = if paths.is_empty() { default_scenario_paths()? } else { paths };
    let mut scenarios = load_all(reg, &paths)?;
    let follower = cluster.as_ref().is_some_and(|c| c.process != 0);
    let mut opts =
        RunOptions { check_online, no_reduce, memory, workers: workers as usize, cluster, ..RunOptions::default() };
    let engine = match &engine {
        None => None,
        Some(e) => Some(EngineName::from_name(e).ok_or_else(|| {
            CliError::Usage(format!(
                "--engine: unknown engine \"{}\"; expected one of: {}",
                escape_control(e),
                EngineName::names()
            ))
        })?),
    };
    if opts.cluster.is_some() {
        cluster::refuse_files(&scenarios, engine)?;
    }
    if let Some(m) = memory {
        // A memory model is the stateful engine's: a file that runs another engine would
        // ignore it.
        let runs_stateful = |sc: &mmcheck::scenario::Scenario| match engine {
            Some(e) => matches!(e, EngineName::Stateful | EngineName::All),
            None => sc.engines.iter().any(|e| matches!(e, mmcheck::engine::Engine::Stateful { .. })),
        };
        let refused: Vec<String> = scenarios
            .iter()
            .filter(|sc| !runs_stateful(sc))
            .map(|sc| {
                format!(
                    "{}: --memory {}: only the stateful engine takes a memory model (add --engine stateful)",
                    show_path(&sc.file),
                    m.name()
                )
            })
            .collect();
        if !refused.is_empty() {
            return Err(CliError::Flags(refused));
        }
    }
    if let Some(e) = engine {
        // Every file the engine cannot run, one line each.
        let mut refused = Vec::new();
        for sc in &scenarios {
            let tasks = sc.spec.tasks();
            if let Some(why) =
                mmcheck::check::engines_named(sc, e).into_iter().find_map(|en| scenario::engine_refusal(en, tasks))
            {
                refused.push(format!("{}: --engine {}: {why}", show_path(&sc.file), e.name()));
            }
        }
        if !refused.is_empty() {
            return Err(CliError::Flags(refused));
        }
    }
    let mut replay_engines = None;
    if let Some(tok) = &replay {
        let mut files: Vec<&std::path::Path> = scenarios.iter().map(|s| s.file.as_path()).collect();
        files.dedup();
        if files.len() != 1 {
            return Err(CliError::Usage(format!("--replay takes exactly one scenario file ({} given)", files.len())));
        }
        let sc = &scenarios[0];
        let Some(t) = ReplayToken::parse(tok) else {
            return Err(CliError::Usage(format!(
                "{}: --replay: \"{}\" is not a replay token (engine-index-fingerprint)",
                show_path(&sc.file),
                escape_control(tok)
            )));
        };
        if let (Some(e), Some(own)) = (engine, t.engine_name()) {
            if e != EngineName::All && e != own {
                return Err(CliError::Usage(format!(
                    "{}: --replay: token {} was made by the {} engine, and --engine {} cannot replay it \
                     (leave out --engine, or give --engine {})",
                    show_path(&sc.file),
                    escape_control(tok),
                    own.name(),
                    e.name(),
                    own.name()
                )));
            }
        }
        // The engine the token was made by: the one --engine names, or else the scenario's,
        // or else the token's own (a stateful token for a loom scenario, say).
        let engines_of = |sc: &mmcheck::scenario::Scenario| {
            let mut es = match engine {
                Some(e) => mmcheck::check::engines_named(sc, e),
                None => {
                    let mut es = sc.engines.clone();
                    if let Some(own) = t.engine_name() {
                        for e in mmcheck::check::engines_named(sc, own) {
                            // (Once each: the scenario's own engine would replay twice.)
                            if !es.contains(&e) {
                                es.push(e);
                            }
                        }
                    }
                    es
                }
            };
            // The stateful engine's memory model: the one --memory names; without it, the
            // file's, or else the other one (a token made under `--memory lkmm` replays with
            // the command line the run printed, which does not repeat the flag).
            let mut other = Vec::new();
            for e in &mut es {
                if let mmcheck::engine::Engine::Stateful { memory: m, max_states } = e {
                    match memory {
                        Some(want) => *m = want,
                        None => {
                            let flip = if *m == Memory::Sc { Memory::Lkmm } else { Memory::Sc };
                            other.push(mmcheck::engine::Engine::Stateful { memory: flip, max_states: *max_states });
                        }
                    }
                }
            }
            for e in other {
                if !es.contains(&e) {
                    es.push(e);
                }
            }
            es
        };
        // A file with `variants` is one scenario per variant: the token fits one of them (its
        // fingerprint covers the variant), which is the one replayed.
        let (fitting, which) = scenarios
            .iter()
            .enumerate()
            .map(|(i, sc)| (engines_of(sc).into_iter().filter(|e| t.fits(&*sc.spec, *e)).collect::<Vec<_>>(), i))
            .find(|(f, _)| !f.is_empty())
            .unwrap_or_default();
        if fitting.is_empty() {
            // Which of the three (issue 37, row 9): the engine is in the token; the scenario
            // and the code are hashed together into its last word, so they cannot be told apart.
            let ours: Vec<String> =
                engines_of(sc).iter().map(|e| ReplayToken::new(&*sc.spec, *e, t.replay.clone()).engine_tag).collect();
            let why = if !ours.contains(&t.engine_tag) {
                format!(
                    "it was made for engine `{}`, and this scenario runs under {}",
                    escape_control(&t.engine_tag),
                    ours.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
                )
            } else {
                "its engine is one this scenario runs, so it was made for another scenario (or this file before \
                 an edit), with other engine settings, or by another version of mmcheck: its last word hashes the \
                 scenario, the engine settings and the model, monitor and engine sources together"
                    .to_string()
            };
            return Err(CliError::Usage(format!(
                "{}: --replay: token {} does not fit this scenario{}: {why}",
                show_path(&sc.file),
                escape_control(tok),
                engine.map(|e| format!(" under --engine {}", e.name())).unwrap_or_default()
            )));
        }
        replay_engines = Some(fitting);
        opts.replay = Some(t);
        let chosen = scenarios.swap_remove(which);
        scenarios = vec![chosen];
    }
    // (After --replay picked the one scenario of a file with variants that its token fits.)
    out.prepare(scenarios.len())?;
    let (bar, progress) = progress_bar(json);
    opts.progress = progress;

    let widths = widths(&scenarios);
    let mut reports: Vec<Report> = Vec::new();
    // Printed with the first row: a replay refused after its exploration prints nothing.
    let mut header = !json;
    for sc in &scenarios {
        // Logged under the binary's name, as when this was main.rs (`RUST_LOG` filters and
        // the lines users see name `mmcheck`, not this module).
        tracing::info!(target: "mmcheck", scenario = %sc.name, file = %sc.file.display(), "checking");
        let mut opts = opts.clone();
        if let Some(e) = engine {
            opts.engine_override = Some(mmcheck::check::engines_named(sc, e));
        }
        if let Some(es) = &replay_engines {
            opts.engine_override = Some(es.clone());
        }
        let r = check(sc, &opts);
        tracing::info!(target: "mmcheck", scenario = %sc.name, verdict = %r.verdict.label(), executions = r.executions(), "checked");
        if opts.cluster.is_some() {
            // A cluster that could not run ends the command (exit 2); a process other than 0
            // prints nothing.
            if let Verdict::Error(e) = &r.verdict {
                if let Some(e) = e.strip_prefix(mmcheck::engine::stateful::cluster::ERROR) {
                    return Err(CliError::Usage(format!("{}: {e}", show_path(&sc.file))));
                }
            }
            if follower {
                continue;
            }
        }
        if let Some(t) = &opts.replay {
            // A replay that reached nothing has no verdict to print.
            if r.runs.first().and_then(|run| run.outcome.found.as_ref()).is_none() {
                if let Some(b) = &bar {
                    b.finish_and_clear();
                }
                let diverged = r.runs.iter().find_map(|run| {
                    run.outcome
                        .error
                        .as_deref()
                        .filter(|e| e.starts_with(mmcheck::engine::stateful::schedule::REPLAY_DIVERGED))
                });
                if let Some(e) = diverged {
                    return Err(CliError::Usage(format!(
                        "{}: --replay: token {}: {e} (was it edited? its last word checks the scenario, not the \
                         schedule)",
                        show_path(&r.scenario.file),
                        escape_control(&t.to_string())
                    )));
                }
                return Err(CliError::Usage(format!(
                    "{}: --replay: the exploration has only {} executions; there is no {}",
                    show_path(&r.scenario.file),
                    r.executions(),
                    t.replay_label()
                )));
            }
        }
        if let Some(b) = &bar {
            b.set_message(String::new());
        }
        if let Err(e) = out.check_svg(&r) {
            if let Some(b) = &bar {
                b.finish_and_clear();
            }
            return Err(e);
        }
        if json {
            let mut j = r.to_json();
            if traces {
                j.diagram = r.counterexample(verbose);
            }
            emit_json(&j)?;
        } else {
            let mut row = if wide {
                format!("{}\n{}", table_row(&r, &widths), coverage_line(&r))
            } else {
                format!("{}\n{}", narrow_row(&r, &widths), numbers_and_coverage(&r))
            };
            if let Some(note) = &r.note {
                // A verdict that needs saying beside it (a violation only loom's weak memory shows).
                row.push_str(&format!("\n    note: {note}"));
            }
            if std::mem::take(&mut header) {
                let head = if wide { table_header(&widths) } else { narrow_header(&widths) };
                row = format!("{head}\n{row}");
            }
            match &bar {
                Some(b) => b.suspend(|| emit(&row))?,
                None => emit(&row)?,
            }
        }
        reports.push(r);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if follower {
        return Ok(true);
    }
    out.write(&reports, &[], json)?;
    if !json {
        for r in &reports {
            let show = opts.replay.is_some() || !r.matched || traces;
            if show {
                print_detail(r, verbose)?;
            }
        }
        let bad = reports.iter().filter(|r| !r.matched).count();
        emit(format_args!("\n{} scenario(s), {} as expected, {} not", reports.len(), reports.len() - bad, bad))?;
    }
    if let Some(t) = &opts.replay {
        // A replay succeeds when it reproduces a counterexample.
        let r = &reports[0];
        let found = r.runs.first().and_then(|run| run.outcome.found.as_ref());
        if found.is_some_and(|f| f.violations.is_empty()) {
            warn(format_args!("{}: {} violates no invariant", show_path(&r.scenario.file), t.replay_label()));
            return Ok(false);
        }
        // A reproduced counterexample is judged like any check: a verdict that does not match
        // the file's expectation (MISMATCH) is exit status 1, as it is without --replay.
        return Ok(r.matched);
    }
    Ok(reports.iter().all(|r| r.matched))
}

/// The widths of the table's text columns, sized to the scenarios it will have rows for
/// (known before any runs, so that rows print as they finish): scenario name, variant (with
/// its mutation), and verdict and expectation (the longest `violation(<invariant>)`).
struct Widths {
    name: usize,
    model: usize,
    /// The variant alone (the default table), and with its mutation (`--wide`).
    variant: usize,
    variant_full: usize,
    verdict: usize,
}

/// The default table's width, and the width its coverage lines are folded to.
pub const TABLE_COLS: usize = 120;

impl Widths {
    /// The default table's scenario column: what the other columns leave of [`TABLE_COLS`]
    /// (at least 20); a longer name has a line of its own, the row's cells on the next.
    fn narrow_name(&self) -> usize {
        let rest = self.model + 1 + self.variant + 1 + 16 + 1 + self.verdict + 1 + "MISMATCH".len();
        self.name.min(TABLE_COLS.saturating_sub(rest + 1).max(20))
    }
}

fn variant_label(sc: &Scenario) -> String {
    match sc.spec.mutation() {
        Some(m) => format!("{}+{m}", sc.spec.variant()),
        None => sc.spec.variant().to_string(),
    }
}

fn widths(scenarios: &[Scenario]) -> Widths {
    let width = |s: &str| s.chars().count();
    let mut w = Widths { name: 8, model: 5, variant: 7, variant_full: 7, verdict: 7 };
    for sc in scenarios {
        w.name = w.name.max(width(&escape_control(&sc.name)));
        w.model = w.model.max(width(sc.model().name()));
        w.variant = w.variant.max(width(sc.spec.variant()));
        w.variant_full = w.variant_full.max(width(&variant_label(sc)));
        for inv in sc.model().invariants() {
            w.verdict = w.verdict.max(width(&format!("violation({})", inv.id)));
        }
    }
    w
}

/// The default table's header: scenario, model, variant, engine, verdict, ok?.
fn narrow_header(w: &Widths) -> String {
    format!(
        "{:<nw$} {:<mw$} {:<vw$} {:<16} {:<dw$} ok?",
        "scenario",
        "model",
        "variant",
        "engine",
        "verdict",
        nw = w.narrow_name(),
        mw = w.model,
        vw = w.variant,
        dw = w.verdict
    )
}

/// A row of the default table: `ok`, or `MISMATCH: expected ...` in the last column.
fn narrow_row(r: &Report, w: &Widths) -> String {
    let sc = &r.scenario;
    let name = escape_control(&sc.name);
    let nw = w.narrow_name();
    let ok = if r.matched { "ok" } else { "MISMATCH" };
    let cells = format!(
        "{:<mw$} {:<vw$} {:<16} {:<dw$} {ok}",
        sc.model().name(),
        sc.spec.variant(),
        covers_label(r),
        r.verdict.label(),
        mw = w.model,
        vw = w.variant,
        dw = w.verdict
    );
    if name.chars().count() > nw {
        format!("{name}\n{:nw$} {cells}", "")
    } else {
        format!("{name:<nw$} {cells}")
    }
}

/// The default table's lines under a row: executions, states, seconds, then the coverage
/// counts folded to [`TABLE_COLS`].
fn numbers_and_coverage(r: &Report) -> String {
    let states = r.stateful().map_or(String::new(), |s| format!(", {} states", s.states));
    let mutation = r.scenario.spec.mutation().map_or(String::new(), |m| format!("seeded mutation {m}; "));
    let expected = if r.matched { String::new() } else { format!("expected {}; ", r.expected_label()) };
    let mut out = format!("    {expected}{mutation}{} executions{states}, {:.2} s\n", r.executions(), r.seconds());
    out.push_str(&fold(&coverage_line(r), TABLE_COLS, "      "));
    out
}

/// `line` folded at spaces into lines of at most `cols` characters, each continuation
/// starting with `indent` (a word longer than a line stays whole; the spacing of what fits is
/// kept, so columns stay aligned).
pub fn fold(line: &str, cols: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut cur = line.to_string();
    let mut min = 0;
    loop {
        let chars: Vec<char> = cur.chars().collect();
        if chars.len() <= cols {
            out.push_str(&cur);
            return out;
        }
        let Some(i) = (min + 1..=cols).rev().find(|&i| chars[i] == ' ') else {
            out.push_str(&cur);
            return out;
        };
        let head: String = chars[..i].iter().collect();
        let rest: String = chars[i..].iter().collect();
        out.push_str(head.trim_end());
        out.push('\n');
        cur = format!("{indent}{}", rest.trim_start());
        min = indent.chars().count();
    }
}

fn table_header(w: &Widths) -> String {
    format!(
        "{:<nw$} {:<mw$} {:<vw$} {:<16} {:>11} {:>10} {:>8}  {:<dw$} {:<dw$} {}",
        "scenario",
        "model",
        "variant",
        "engine",
        "executions",
        "states",
        "seconds",
        "verdict",
        "expected",
        "ok?",
        nw = w.name,
        mw = w.model,
        vw = w.variant_full,
        dw = w.verdict
    )
}

/// What the verdict covers: the engine with its bound and reductions, and its memory model
/// (the tags are in docs/scenarios.md, "The table").
fn covers_label(r: &Report) -> String {
    if r.runs.len() > 1 {
        format!("all {}", r.memory_models())
    } else {
        r.runs.first().map_or("-".to_string(), |run| {
            // A reduction that ran says so (`stateful sym2 por sc`: symmetry, a group of 2, and
            // partial-order reduction; `pers`: persistent sets; `snap`: snapshots; `live`: live locals; `proj`: the monitor
            // projection), and so do several workers (`w2`).
            let reduced = match run.outcome.stats {
                Some(st) => {
                    let sym = if st.symmetry_group > 1 { format!(" sym{}", st.symmetry_group) } else { String::new() };
                    let por = if st.reductions.contains("por") { " por" } else { "" };
                    let pers = if st.persistent { " pers" } else { "" };
                    let snap = if st.reductions.contains("snapshot") { " snap" } else { "" };
                    let live = if st.live_locals { " live" } else { "" };
                    let proj = if st.projection { " proj" } else { "" };
                    let workers = if st.workers > 1 { format!(" w{}", st.workers) } else { String::new() };
                    let procs = if st.processes > 1 { format!(" p{}", st.processes) } else { String::new() };
                    format!("{sym}{por}{pers}{snap}{live}{proj}{workers}{procs}")
                }
                _ => String::new(),
            };
            format!("{}{reduced} {}", run.outcome.engine.short(), run.outcome.engine.memory_model())
        })
    }
}

/// A row of the wide table (`--wide`): every column on one line.
fn table_row(r: &Report, w: &Widths) -> String {
    let sc = &r.scenario;
    let variant = variant_label(sc);
    let engine = covers_label(r);
    format!(
        "{:<nw$} {:<mw$} {:<vw$} {:<16} {:>11} {:>10} {:>8.2}  {:<dw$} {:<dw$} {}",
        escape_control(&sc.name),
        sc.model().name(),
        variant,
        engine,
        r.executions(),
        r.stateful().map_or("-".to_string(), |s| s.states.to_string()),
        r.seconds(),
        r.verdict.label(),
        r.expected_label(),
        if r.matched { "ok" } else { "MISMATCH" },
        nw = w.name,
        mw = w.model,
        vw = w.variant_full,
        dw = w.verdict
    )
}

/// The compact coverage line under each row: the model's coverage events, in order.
fn coverage_line(r: &Report) -> String {
    let cov = r.coverage();
    let parts: Vec<String> = r
        .scenario
        .model()
        .coverage_names()
        .iter()
        .map(|n| format!("{n}={}", cov.get(n).copied().unwrap_or(0)))
        .collect();
    format!("    coverage: {}", parts.join(" "))
}

fn print_detail(r: &Report, verbose: bool) -> Result<(), CliError> {
    let name = escape_control(&r.scenario.name);
    emit("")?;
    match &r.verdict {
        Verdict::Vacuous(missing) => emit(format_args!(
            "{}: vacuous pass: never reached {} in {} executions",
            name,
            missing.join(", "),
            r.executions()
        ))?,
        Verdict::Disagreement(d) => emit(format_args!("{}: engines disagree: {d}", name))?,
        Verdict::Error(e) => emit(format_args!("{}: engine error: {e}", name))?,
        Verdict::Incomplete => match r.stateful() {
            Some(st) => emit(format_args!(
                "{}: incomplete: stopped by the {} after {} states, {} transitions, depth {} ({} MiB); not a pass",
                name,
                st.stopped_by.unwrap_or("time limit"),
                st.states,
                st.transitions,
                st.max_depth,
                st.memory_bytes >> 20
            ))?,
            None => emit(format_args!("{}: stopped at the time limit before the exploration was complete", name))?,
        },
        _ => {}
    }
    if let Some(ce) = r.counterexample(verbose) {
        emit_raw(&ce)?;
    } else if r.verdict == Verdict::Pass {
        emit(format_args!("{}: pass, {} executions; expected {}", name, r.executions(), r.expected_label()))?;
    }
    Ok(())
}
