//! `mmcheck`: check scenario files, print the verdict table, counterexamples and replay lines.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use mmcheck::check::{check, Report, RunOptions, Verdict};
use mmcheck::engine::stateful::cluster::Cluster;
use mmcheck::engine::{EngineName, Memory};
use mmcheck::registry::{AnyModel, Registry};
use mmcheck::runtime::RunError;
use mmcheck::scenario::{self, Scenario, ScenarioError};
use mmcheck::term::{escape_control, show_path};
use mmcheck::token::ReplayToken;

#[derive(Parser)]
#[command(
    name = "mmcheck",
    version,
    about = "Model-check Linux mm synchronisation protocols (kswapd tree_lock stall, compaction contention)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The stateful engine's search over several processes, on timely dataflow (docs/model.md,
/// "Many machines"; docs/scenarios.md, "A cluster").
#[derive(clap::Args, Debug, Default)]
struct ClusterArgs {
    /// Search over N processes (with --process and --hostfile), each with --workers threads.
    /// Every process is started with the same files and options; process 0 prints the result.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    processes: Option<u16>,
    /// This process's index, 0 to N-1.
    #[arg(long, value_name = "I")]
    process: Option<u16>,
    /// One host:port per line, process 0 first (lines starting with # are comments).
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
    /// Start N processes on 127.0.0.1 (this one is process 0) and search over them: a cluster
    /// on one machine, for trying it and for the tests.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    local_cluster: Option<u16>,
    /// How long a cluster process waits for the others to be reachable before it gives up.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    connect_timeout: u64,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check scenario files (default: scenarios/) and print one row per scenario.
    Check {
        /// Scenario files or folders (searched recursively for *.toml).
        paths: Vec<PathBuf>,
        /// One JSON object per scenario instead of the table.
        #[arg(long)]
        json: bool,
        /// Reproduce the counterexample a previous run printed (one scenario file).
        #[arg(long, value_name = "TOKEN")]
        replay: Option<String>,
        /// Show every event in race diagrams (wait-queue locks too).
        #[arg(long)]
        verbose: bool,
        /// Print counterexamples of matching violation scenarios too (not only mismatches).
        #[arg(long)]
        traces: bool,
        /// Run with this engine instead of the scenario's: loom, shuttle-pct, shuttle-random,
        /// shuttle-dfs, stateful, or all (a cross-check: loom, both randomised shuttle
        /// schedulers and stateful must agree).
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Also run the online monitors on every execution and fail (verdict error) on the
        /// first one where they disagree with the trace monitors.
        #[arg(long)]
        check_online: bool,
        /// The stateful engine's search with no reduction (no symmetry, no partial-order reduction),
        /// whatever the scenario's `[explore] reduce` says.
        #[arg(long)]
        no_reduce: bool,
        /// The stateful engine's memory model, whatever the scenario's `[explore] memory` says: sc
        /// (sequential consistency) or lkmm (the Linux-kernel memory model, no load buffering;
        /// see docs/model.md, "The kernel's memory model").
        #[arg(long, value_name = "MODEL")]
        memory: Option<String>,
        /// The stateful engine's search on N worker threads sharing one visited table (default
        /// 1; see docs/model.md, "Many workers"). Verdicts and state counts do not depend on N.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        workers: u16,
        #[command(flatten)]
        cluster: ClusterArgs,
        /// Also write one self-contained HTML page per violation and DIR/index.html (see
        /// docs/scenarios.md).
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
        /// Also write the swimlane drawing of the counterexample as SVG (one scenario file).
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    /// Run litmus tests in the kernel's C format (tools/memory-model/litmus-tests) on the
    /// stateful platform under the kernel's memory model, and compare each outcome (Always,
    /// Sometimes, Never) with the file's `Result:` line.
    Litmus {
        /// .litmus files or folders (searched recursively).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// One JSON object per test instead of the table.
        #[arg(long)]
        json: bool,
        /// The memory model: lkmm (default) or sc.
        #[arg(long, value_name = "MODEL", default_value = "lkmm")]
        memory: String,
    },
    /// For each model, invariants x variants: holds or violated, with the evidence, built by
    /// checking the shipped scenarios (default: scenarios/, without mutants/ and heavy/).
    Matrix {
        /// Only this model (kswapd-stall or compaction).
        #[arg(long)]
        model: Option<String>,
        /// Scenario files or folders to build the matrix from.
        paths: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Also write the matrices, every scenario and a page per violation as HTML into DIR.
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
    },
    /// Run a scenario on real threads (the std platform, real timeouts), many iterations, and
    /// print the protocol's counters (see docs/performance.md for settings that make the
    /// contended paths happen on a small machine).
    Run {
        file: PathBuf,
        #[command(flatten)]
        args: RunArgs,
        /// One JSON object with every counter's amean/min/max instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Run several scenarios (or one scenario under several variants) on real threads,
    /// iterations interleaved, and print a before/after table in the style of the seeds'
    /// mmtests comparisons (Amean/Min/Max, % change of the mean against the first column).
    Compare {
        files: Vec<PathBuf>,
        /// Run the one FILE under each of these variants (comma-separated).
        #[arg(long, value_delimiter = ',')]
        variants: Vec<String>,
        #[command(flatten)]
        args: RunArgs,
    },
    /// Run every seeded mutant (scenarios/mutants/) and show which check catches it; exits 1 if
    /// any survives.
    Selftest {
        /// Only list the mutants.
        #[arg(long)]
        list: bool,
        /// The folder of mutant scenarios (default: scenarios/mutants).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// Die quietly when stdout is a closed pipe (`mmcheck check | head`), as Unix tools do,
/// instead of panicking on the failed write: restore SIGPIPE's default action, which Rust's
/// runtime sets to "ignore".
#[cfg(unix)]
fn default_sigpipe() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: signal(2) with SIG_DFL for SIGPIPE, before any thread is started.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

/// Why a command could not do what it was asked. Every kind is exit status 2 but a run on
/// real threads that hung (1: the check found something, as a violation would).
#[derive(Debug)]
enum CliError {
    /// Flags or arguments that cannot work together, or a bad value.
    Usage(String),
    /// Several bad flags: one message each, one line each.
    Flags(Vec<String>),
    /// Scenario files that cannot be read or parsed: every error, one per line.
    Scenarios(Vec<ScenarioError>),
    /// A run on real threads stopped.
    Run(RunError),
    /// An output could not be written.
    Output(String),
    /// The command already said what went wrong (on stderr, naming the file and line).
    Reported,
}

impl CliError {
    fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Run(RunError::Hung(_)) => ExitCode::from(1),
            _ => ExitCode::from(2),
        }
    }
    fn report(&self) {
        match self {
            CliError::Usage(m) | CliError::Output(m) => warn(m),
            CliError::Flags(ms) => ms.iter().for_each(warn),
            CliError::Scenarios(es) => es.iter().for_each(warn),
            CliError::Run(e) => warn(e),
            CliError::Reported => {}
        }
    }
}

/// `mmcheck: MESSAGE` on standard error. A failed write is ignored: there is nowhere left to
/// report it (`eprintln!` would panic).
fn warn(message: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "mmcheck: {message}");
}

/// What a command concluded: everything as expected (exit 0) or not (exit 1).
type Done = Result<bool, CliError>;

/// Write `text` to standard output and flush it. Every write to stdout goes through here (or
/// [`emit`]): `println!` panics when the write fails (a full disk, a closed pipe with SIGPIPE
/// ignored), this returns [`CliError::Output`].
fn emit_raw(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Output(format!("cannot write to standard output: {e}")))
}

/// One line (or several) of standard output, as `println!` would print it.
fn emit(text: impl std::fmt::Display) -> Result<(), CliError> {
    emit_raw(&format!("{text}\n"))
}

/// `value` as one line of JSON.
fn emit_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    emit(serde_json::to_string(value).map_err(|e| CliError::Output(format!("cannot serialise JSON: {e}")))?)
}

mod cluster;

fn main() -> ExitCode {
    default_sigpipe();
    let filter = std::env::var("RUST_LOG")
        .ok()
        .map(|f| log_filter(&f))
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok());
    let filter = filter.unwrap_or_else(|| tracing_subscriber::EnvFilter::new(log_filter("warn")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
        .without_time()
        .init();
    let cli = Cli::parse();
    let reg = Registry::default();
    let done = match cli.cmd {
        Cmd::Check {
            paths,
            json,
            replay,
            verbose,
            traces,
            engine,
            check_online,
            no_reduce,
            memory,
            workers,
            cluster,
            html,
            svg,
        } => {
            let out = HtmlOut { html, svg, verbose };
            match cluster::start(&cluster, workers, replay.is_some()) {
                Err(e) => Err(e),
                Ok(c) => {
                    let done = cmd_check(
                        &reg,
                        paths,
                        json,
                        replay,
                        verbose,
                        traces,
                        engine,
                        (check_online, no_reduce, memory, workers, c.as_ref().map(|c| Arc::clone(&c.cluster))),
                        &out,
                    );
                    match c {
                        Some(c) => c.finish(done),
                        None => done,
                    }
                }
            }
        }
        Cmd::Matrix { model, paths, json, html } => {
            cmd_matrix(&reg, model, paths, json, &HtmlOut { html, svg: None, verbose: false })
        }
        Cmd::Litmus { paths, json, memory } => cmd_litmus(paths, json, &memory),
        Cmd::Selftest { list, dir, json } => cmd_selftest(&reg, list, dir, json),
        Cmd::Run { file, args, json } => cmd_run(&reg, vec![file], Vec::new(), args, json, false),
        Cmd::Compare { files, variants, args } => cmd_run(&reg, files, variants, args, false, true),
    };
    match done {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            e.report();
            e.exit_code()
        }
    }
}

/// The checkers' own crates (each group: the names a filter may use for it, and its
/// directives), kept at `warn` unless the user's filter names them: loom logs every
/// execution's threads at `info`, thousands of lines per scenario.
const CHECKER_LOGS: &[(&[&str], &str)] = &[
    (&["loom"], "loom=warn"),
    (&["shuttle", "shuttle_engine"], "shuttle=warn,shuttle_engine=warn"),
    (&["generator"], "generator=off"),
];

/// The user's `RUST_LOG` filter, with the directives of each of [`CHECKER_LOGS`] that no
/// directive of it names (`RUST_LOG=info` shows mmcheck's lines, not loom's; `info,loom=debug`
/// shows loom's too).
fn log_filter(user: &str) -> String {
    let targets: Vec<&str> = user
        .split(',')
        .map(|d| d.trim().split(['=', '[']).next().unwrap_or("").trim())
        .filter(|t| !t.is_empty())
        .collect();
    let names =
        |name: &str| targets.iter().any(|t| *t == name || t.strip_prefix(name).is_some_and(|r| r.starts_with("::")));
    let mut out: Vec<&str> = vec![user.trim()];
    out.extend(CHECKER_LOGS.iter().filter(|(aliases, _)| !aliases.iter().any(|a| names(a))).map(|(_, d)| *d));
    out.retain(|d| !d.is_empty());
    out.join(",")
}

/// `scenarios/` in the current directory, or the repository's when run from elsewhere.
fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
    }
}

/// The default scenario set: everything under scenarios/ except the opt-in heavy runs.
fn default_scenario_paths() -> Vec<PathBuf> {
    let root = scenarios_root();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n != "heavy"))
                // Only folders and *.toml files, as inside folders (a README is not a scenario).
                .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_else(|_| vec![root.clone()]);
    v.sort();
    v
}

/// Parse every scenario file `paths` stand for (each file once); on any error, all of them.
fn load_all(reg: &Registry, paths: &[PathBuf]) -> Result<Vec<Scenario>, CliError> {
    let files = mmcheck::files::collect(paths).map_err(|e| CliError::Scenarios(vec![e.into()]))?;
    let mut errors: Vec<ScenarioError> = Vec::new();
    let mut out = Vec::new();
    for f in files {
        match scenario::load_all_with(reg, &f) {
            Ok(s) => out.push(s),
            Err(es) => errors.extend(es),
        }
    }
    if !errors.is_empty() {
        return Err(CliError::Scenarios(errors));
    }
    Ok(out)
}

fn progress_bar(enabled: bool) -> (Option<indicatif::ProgressBar>, Option<mmcheck::check::Progress>) {
    if !enabled {
        return (None, None);
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
    let pb2 = pb.clone();
    let f: mmcheck::check::Progress = Arc::new(move |label: &str, p: &mmcheck::engine::Progress| {
        let t = p.seconds;
        let per_s = |n: u64| if t > 0.0 { n as f64 / t } else { 0.0 };
        let msg = match (p.states, p.depth) {
            (Some(states), Some(depth)) => format!(
                "{label}: {states} states ({:.0}/s), depth {depth}, {} executions, {t:.1} s",
                per_s(states),
                p.executions
            ),
            _ => format!("{label}: {} executions, {t:.1} s, {:.0}/s", p.executions, per_s(p.executions)),
        };
        pb2.set_message(msg);
        pb2.tick();
    });
    (Some(pb), Some(f))
}

/// `mmcheck litmus`.
fn cmd_litmus(paths: Vec<PathBuf>, json: bool, memory: &str) -> Done {
    let model = match memory {
        "lkmm" => mmcheck::litmus::run::Model::Lkmm,
        "sc" => mmcheck::litmus::run::Model::Sc,
        m => {
            return Err(CliError::Usage(format!(
                "--memory: unknown memory model \"{}\"; expected one of: sc, lkmm",
                escape_control(m)
            )))
        }
    };
    let mut out = std::io::stdout().lock();
    match mmcheck::litmus::report::run(&paths, model, json, &mut out) {
        0 => Ok(true),
        1 => Ok(false),
        _ => Err(CliError::Reported),
    }
}

#[allow(clippy::too_many_arguments)] // one per option of `mmcheck check`
fn cmd_check(
    reg: &Registry,
    paths: Vec<PathBuf>,
    json: bool,
    replay: Option<String>,
    verbose: bool,
    traces: bool,
    engine: Option<String>,
    (check_online, no_reduce, memory, workers, cluster): (bool, bool, Option<String>, u16, Option<Arc<Cluster>>),
    out: &HtmlOut,
) -> Done {
    let memory = match &memory {
        None => None,
        Some(m) => Some(Memory::from_name(m).ok_or_else(|| {
            CliError::Usage(format!(
                "--memory: unknown memory model \"{}\"; expected one of: sc, lkmm",
                escape_control(m)
            ))
        })?),
    };
    let paths = if paths.is_empty() { default_scenario_paths() } else { paths };
    let scenarios = load_all(reg, &paths)?;
    out.prepare(scenarios.len())?;
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
        let runs_stateful = |sc: &Scenario| match engine {
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
        if scenarios.len() != 1 {
            return Err(CliError::Usage(format!(
                "--replay takes exactly one scenario file ({} given)",
                scenarios.len()
            )));
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
        let engines = match engine {
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
        let fitting: Vec<_> = engines.into_iter().filter(|e| t.fits(&*sc.spec, *e)).collect();
        if fitting.is_empty() {
            return Err(CliError::Usage(format!(
                "{}: --replay: token {} does not fit this scenario{} (it was made for another scenario, engine or version)",
                show_path(&sc.file),
                escape_control(tok),
                engine.map(|e| format!(" under --engine {}", e.name())).unwrap_or_default()
            )));
        }
        replay_engines = Some(fitting);
        opts.replay = Some(t);
    }
    let interactive = !json && std::io::stderr().is_terminal();
    let (bar, progress) = progress_bar(interactive);
    opts.progress = progress;

    let widths = widths(&scenarios);
    let mut reports: Vec<Report> = Vec::new();
    // Printed with the first row: a replay refused after its exploration prints nothing.
    let mut header = !json;
    for sc in &scenarios {
        tracing::info!(scenario = %sc.name, file = %sc.file.display(), "checking");
        let mut opts = opts.clone();
        if let Some(e) = engine {
            opts.engine_override = Some(mmcheck::check::engines_named(sc, e));
        }
        if let Some(es) = &replay_engines {
            opts.engine_override = Some(es.clone());
        }
        let r = check(sc, &opts);
        tracing::info!(scenario = %sc.name, verdict = %r.verdict.label(), executions = r.executions(), "checked");
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
        if json {
            let mut j = r.to_json();
            if traces {
                j.diagram = r.counterexample(verbose);
            }
            emit_json(&j)?;
        } else {
            let mut row = format!("{}\n{}", table_row(&r, &widths), coverage_line(&r));
            if let Some(note) = &r.note {
                // A verdict that needs saying beside it (a violation only loom's weak memory shows).
                row.push_str(&format!("\n    note: {note}"));
            }
            if std::mem::take(&mut header) {
                row = format!("{}\n{row}", table_header(&widths));
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
    variant: usize,
    verdict: usize,
}

fn variant_label(sc: &Scenario) -> String {
    match sc.spec.mutation() {
        Some(m) => format!("{}+{m}", sc.spec.variant()),
        None => sc.spec.variant().to_string(),
    }
}

fn widths(scenarios: &[Scenario]) -> Widths {
    let width = |s: &str| s.chars().count();
    let mut w = Widths { name: 24, variant: 14, verdict: 12 };
    for sc in scenarios {
        w.name = w.name.max(width(&escape_control(&sc.name)));
        w.variant = w.variant.max(width(&variant_label(sc)));
        for inv in sc.model().invariants() {
            w.verdict = w.verdict.max(width(&format!("violation({})", inv.id)));
        }
    }
    w
}

fn table_header(w: &Widths) -> String {
    format!(
        "{:<nw$} {:<12} {:<vw$} {:<16} {:>11} {:>10} {:>8}  {:<dw$} {:<dw$} {}",
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
        vw = w.variant,
        dw = w.verdict
    )
}

fn table_row(r: &Report, w: &Widths) -> String {
    let sc = &r.scenario;
    let variant = variant_label(sc);
    // What the verdict covers: the engine with its bound, and its memory model.
    let engine = if r.runs.len() > 1 {
        "all c11+sc".to_string()
    } else {
        r.runs.first().map_or("-".to_string(), |run| {
            // A reduction that ran says so (`stateful sym2 por sc`: symmetry, a group of 2, and
            // partial-order reduction; `snap`: snapshots), and so do several workers (`w2`).
            let reduced = match run.outcome.stats {
                Some(st) => {
                    let sym = if st.symmetry_group > 1 { format!(" sym{}", st.symmetry_group) } else { String::new() };
                    let por = if st.reductions.contains("por") { " por" } else { "" };
                    let snap = if st.reductions.contains("snapshot") { " snap" } else { "" };
                    let workers = if st.workers > 1 { format!(" w{}", st.workers) } else { String::new() };
                    let procs = if st.processes > 1 { format!(" p{}", st.processes) } else { String::new() };
                    format!("{sym}{por}{snap}{workers}{procs}")
                }
                _ => String::new(),
            };
            format!("{}{reduced} {}", run.outcome.engine.short(), run.outcome.engine.memory_model())
        })
    };
    format!(
        "{:<nw$} {:<12} {:<vw$} {:<16} {:>11} {:>10} {:>8.2}  {:<dw$} {:<dw$} {}",
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
        vw = w.variant,
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

fn cmd_matrix(reg: &Registry, model: Option<String>, paths: Vec<PathBuf>, json: bool, out: &HtmlOut) -> Done {
    out.prepare(0)?;
    let mut models: Vec<&'static dyn AnyModel> = match &model {
        None => reg.models().to_vec(),
        Some(m) => vec![reg.find(m).ok_or_else(|| {
            CliError::Usage(format!("--model: unknown model \"{}\" ({})", escape_control(m), reg.names().join(", ")))
        })?],
    };
    let paths = if paths.is_empty() {
        default_scenario_paths().into_iter().filter(|p| p.file_name().is_some_and(|n| n != "mutants")).collect()
    } else {
        paths
    };
    let scenarios = load_all(reg, &paths)?;
    let chosen: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| models.iter().any(|m| m.name() == s.model().name()) && s.spec.mutation().is_none())
        .collect();
    if chosen.is_empty() {
        let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
        return Err(CliError::Usage(format!(
            "matrix: nothing to decide: no {} scenario without a mutation among the {} file(s) given (mutants are \
             left out of the matrix); name scenario files or folders of that model",
            names.join(" or "),
            scenarios.len()
        )));
    }
    // Without --model, only the models the files are about.
    if model.is_none() {
        models.retain(|m| chosen.iter().any(|s| s.model().name() == m.name()));
    }
    let (bar, progress) = progress_bar(!json && std::io::stderr().is_terminal());
    let opts = RunOptions { progress, ..RunOptions::default() };
    let reports: Vec<Report> = chosen.iter().map(|s| check(s, &opts)).collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let matrices: Vec<mmcheck::matrix::Matrix> = models.iter().map(|m| mmcheck::matrix::build(*m, &reports)).collect();
    if matrices.iter().all(|mx| mx.cells.is_empty()) {
        return Err(CliError::Usage(format!(
            "matrix: nothing to decide: every cell is empty ({} scenario(s) checked; a cell needs a violation, or an \
             exhaustive exploration (loom, shuttle-dfs or stateful) that completes); add such scenarios",
            reports.len()
        )));
    }
    out.write(&reports, &matrices, json)?;
    for mx in &matrices {
        if json {
            emit_json(mx)?;
        } else {
            emit(mmcheck::matrix::render(mx))?;
        }
    }
    let all = reports.iter().all(|r| r.matched);
    if !all {
        warn("some scenarios did not get their expected verdict (run mmcheck check for details)");
    }
    Ok(all)
}

/// `--html DIR` and `--svg FILE`: where the pictures go (mmcheck::html makes them).
struct HtmlOut {
    html: Option<PathBuf>,
    svg: Option<PathBuf>,
    verbose: bool,
}

impl HtmlOut {
    /// Refuse, before any exploration, an output that cannot be written.
    fn prepare(&self, scenarios: usize) -> Result<(), CliError> {
        if self.svg.is_some() && scenarios != 1 {
            return Err(CliError::Usage(format!(
                "--svg draws one counterexample: name exactly one scenario file ({scenarios} given)"
            )));
        }
        if let Some(dir) = &self.html {
            mmcheck::html::prepare_dir(dir).map_err(CliError::Output)?;
        }
        if let Some(f) = &self.svg {
            mmcheck::html::prepare_file("--svg", f).map_err(CliError::Output)?;
        }
        Ok(())
    }

    fn write(&self, reports: &[Report], matrices: &[mmcheck::matrix::Matrix], json: bool) -> Result<(), CliError> {
        if let Some(dir) = &self.html {
            let title = if matrices.is_empty() { "mmcheck check" } else { "mmcheck matrix" };
            let files = mmcheck::html::site(dir, title, reports, matrices, self.verbose);
            mmcheck::html::write_all("--html", dir, &files).map_err(CliError::Output)?;
            if !json {
                emit(format_args!("html: {}", show_path(&dir.join("index.html"))))?;
            }
        }
        if let Some(f) = &self.svg {
            let r = &reports[0];
            let text = mmcheck::html::svg(r, self.verbose).ok_or_else(|| {
                CliError::Usage(format!(
                    "--svg {}: {} has no counterexample to draw (verdict {})",
                    show_path(f),
                    show_path(&r.scenario.file),
                    r.verdict.label()
                ))
            })?;
            mmcheck::html::write_one("--svg", f, &text).map_err(CliError::Output)?;
            if !json {
                emit(format_args!("svg: {}", show_path(f)))?;
            }
        }
        Ok(())
    }
}

fn cmd_selftest(reg: &Registry, list: bool, dir: Option<PathBuf>, json: bool) -> Done {
    if list {
        if !json {
            emit(format_args!("{:<32} {:<13} {:<22} what it changes", "mutant", "model", "caught by"))?;
        }
        for model in reg.models() {
            for m in model.mutations() {
                if json {
                    emit_json(&serde_json::json!({
                        "name": m.name, "model": m.model, "targets": m.targets, "description": m.description,
                    }))?;
                } else {
                    emit(format_args!("{:<32} {:<13} {:<22} {}", m.name, m.model, m.targets, m.description))?;
                }
            }
        }
        return Ok(true);
    }
    let dir = dir.unwrap_or_else(|| scenarios_root().join("mutants"));
    let scenarios = load_all(reg, std::slice::from_ref(&dir))?;
    if !scenarios.iter().any(|s| s.spec.mutation().is_some()) {
        return Err(CliError::Usage(format!(
            "{}: nothing to decide: no mutant scenario among its {} file(s) (a mutant scenario names a seeded bug: \
             mutation = \"NAME\", see mmcheck selftest --list); name the folder of the mutant scenarios with --dir",
            show_path(&dir),
            scenarios.len()
        )));
    }
    let (bar, progress) = progress_bar(!json && std::io::stderr().is_terminal());
    let opts = RunOptions { progress, ..RunOptions::default() };
    let results = mmcheck::selftest::run(reg, &scenarios, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if json {
        for r in &results {
            emit_json(&serde_json::json!({
                "mutant": r.mutation.name, "model": r.mutation.model, "targets": r.mutation.targets,
                "caught_by": r.caught_by, "executions_to_catch": r.executions_to_catch, "engine": r.engine,
                "scenario": r.scenario, "mutation_ran": r.mutation_ran, "unmutated_violates": r.unmutated_violates,
                "killed": r.killed,
            }))?;
        }
    } else {
        emit(format_args!(
            "{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {:<4} {:<9} status",
            "mutant", "model", "targets", "caught by", "execs", "engine", "ran", "unmutated"
        ))?;
        for r in &results {
            emit(format_args!(
                "{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {:<4} {:<9} {}",
                r.mutation.name,
                r.mutation.model,
                r.mutation.targets,
                r.caught_by.unwrap_or("-"),
                r.executions_to_catch.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                r.engine.as_deref().map(|e| e.split('(').next().unwrap_or(e)).unwrap_or("-"),
                if r.mutation_ran { "yes" } else { "no" },
                match r.unmutated_violates {
                    Some(true) => "violates",
                    Some(false) => "holds",
                    None => "-",
                },
                r.status()
            ))?;
        }
        let alive = results.iter().filter(|r| !r.killed).count();
        emit(format_args!("\n{} mutant(s), {} killed, {} survived", results.len(), results.len() - alive, alive))?;
    }
    Ok(results.iter().all(|r| r.killed))
}

/// The options of `run` and `compare`.
#[derive(clap::Args)]
struct RunArgs {
    #[arg(long, default_value_t = 200)]
    iterations: u64,
    /// Run each thread of the scenario K times over (kswapd-stall: on fresh nodes;
    /// compaction: killers and resched threads aim at their own copy of the compactor).
    #[arg(long, default_value_t = 1, value_name = "K")]
    threads_scale: usize,
    /// Length of a jiffy in microseconds (the kswapd stall is HZ/100 = 10 jiffies,
    /// wait_iff_congested HZ/10 = 100 jiffies).
    #[arg(long, default_value_t = 10, value_name = "US")]
    jiffy_us: u64,
    /// Multiply every thread's work (batches, holds, attempts) by this.
    #[arg(long, default_value_t = 1, value_name = "N")]
    work: u32,
    /// Spin-loop hints inside each of a writer's tree_lock holds (a longer critical section).
    #[arg(long, default_value_t = 0, value_name = "N")]
    hold_spins: u32,
    /// Start threads of role KIND a random time in [0, US] microseconds after the others
    /// (comma-separated; e.g. bdi=500 keeps the device congested a while, killer=1 lands
    /// SIGKILL in the middle of a compaction). The same draws for every compared column.
    #[arg(long, value_delimiter = ',', value_name = "KIND=US")]
    delay: Vec<String>,
    /// Seed of the start delays.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop with an error if one iteration runs longer than this many seconds.
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    iteration_cap: f64,
    /// Also write an SVG chart of every counter's per-iteration distribution per column.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
}

fn cmd_run(reg: &Registry, files: Vec<PathBuf>, variants: Vec<String>, a: RunArgs, json: bool, compare: bool) -> Done {
    let RunArgs { iterations, threads_scale, jiffy_us, work, hold_spins, delay, seed, iteration_cap, svg } = a;
    let cmd = if compare { "compare" } else { "run" };
    if files.is_empty() {
        return Err(CliError::Usage(format!("{cmd}: name at least one scenario file")));
    }
    // Every bad flag, one message each.
    let mut bad = Vec::new();
    let mut range = |flag: &str, value: String, ok: bool, range: &str| {
        if !ok {
            bad.push(format!("{flag} {value}: out of range {range}"));
        }
    };
    range("--iterations", iterations.to_string(), (1..=10_000_000).contains(&iterations), "1..=10000000");
    range("--threads-scale", threads_scale.to_string(), (1..=8).contains(&threads_scale), "1..=8");
    range("--jiffy-us", jiffy_us.to_string(), (1..=1_000_000).contains(&jiffy_us), "1..=1000000");
    range("--work", work.to_string(), (1..=100_000).contains(&work), "1..=100000");
    range("--iteration-cap", iteration_cap.to_string(), (0.001..=86_400.0).contains(&iteration_cap), "0.001..=86400");
    let mut delays: Vec<(String, std::time::Duration)> = Vec::new();
    for d in &delay {
        let parsed = d.split_once('=').and_then(|(k, v)| {
            let k = k.trim();
            let us = v.trim().parse::<u64>().ok().filter(|us| *us <= 1_000_000)?;
            (!k.is_empty()).then(|| (k.to_string(), us))
        });
        match parsed {
            Some((k, _)) if delays.iter().any(|(seen, _)| *seen == k) => bad.push(format!(
                "--delay {}: kind \"{}\" is given twice; give each kind one delay",
                escape_control(d),
                escape_control(&k)
            )),
            Some((k, us)) => delays.push((k, std::time::Duration::from_micros(us))),
            None => bad.push(format!(
                "--delay {}: not KIND=US (a role kind and microseconds, at most 1000000), e.g. bdi=300",
                escape_control(d)
            )),
        }
    }
    if !bad.is_empty() {
        return Err(CliError::Flags(bad));
    }
    for f in &files {
        if f.is_dir() {
            return Err(CliError::Usage(format!(
                "{}: a folder; {cmd} takes scenario files: name a file in it (mmcheck check takes folders)",
                show_path(f)
            )));
        }
    }
    for (i, a) in files.iter().enumerate() {
        if let Some(b) = files[..i].iter().find(|b| mmcheck::files::same_file(a, b)) {
            return Err(CliError::Usage(format!(
                "{cmd}: {} and {} are the same file: a file compared with itself shows only noise; name different \
                 files, or one file with --variants A,B",
                show_path(b),
                show_path(a)
            )));
        }
    }
    let mut scenarios = Vec::new();
    for f in &files {
        scenarios.extend(load_all(reg, std::slice::from_ref(f))?);
    }
    if let Some(other) = scenarios.iter().find(|s| s.model().name() != scenarios[0].model().name()) {
        return Err(CliError::Usage(format!(
            "{cmd}: {} is a {} scenario and {} a {} scenario: the two models share no counters; compare scenarios of \
             one model",
            show_path(&scenarios[0].file),
            scenarios[0].model().name(),
            show_path(&other.file),
            other.model().name()
        )));
    }
    // A delay for a kind of thread a file does not have would do nothing there.
    let mut lacking = Vec::new();
    for (d, (kind, _)) in delay.iter().zip(&delays) {
        for sc in &scenarios {
            let mut kinds = sc.spec.role_kinds();
            kinds.dedup();
            let mut uniq: Vec<&str> = Vec::new();
            for k in kinds {
                if !uniq.contains(&k) {
                    uniq.push(k);
                }
            }
            let msg = format!(
                "--delay {}: {} has no thread of kind \"{}\" (its kinds: {})",
                escape_control(d),
                show_path(&sc.file),
                escape_control(kind),
                uniq.join(", ")
            );
            if !uniq.contains(&kind.as_str()) && !lacking.contains(&msg) {
                lacking.push(msg);
            }
        }
    }
    if !lacking.is_empty() {
        return Err(CliError::Flags(lacking));
    }
    if !variants.is_empty() {
        if scenarios.len() != 1 {
            return Err(CliError::Usage("--variants takes exactly one scenario file".into()));
        }
        let base = scenarios.remove(0);
        for v in &variants {
            let spec = base.spec.with_variant(v).map_err(|e| {
                CliError::Usage(format!("{}: --variants: {}", show_path(&base.file), escape_control(&e)))
            })?;
            scenarios.push(Scenario { spec, ..base.clone() });
        }
    }
    let bar = (!json && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(iterations * scenarios.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} iterations, {elapsed} (eta {eta})")
                .expect("valid template"),
        );
        pb
    });
    let cfg = mmcheck::runtime::RunConfig {
        iterations,
        threads_scale,
        jiffy: std::time::Duration::from_micros(jiffy_us),
        work,
        hold_spins,
        delays,
        seed,
        iteration_cap: std::time::Duration::from_secs_f64(iteration_cap),
        progress: bar
            .clone()
            .map(|pb| Arc::new(move |_i: u64, _n: u64| pb.inc(1)) as Arc<dyn Fn(u64, u64) + Send + Sync>),
    };
    let results = mmcheck::runtime::run_interleaved(&scenarios, &cfg);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let results = results.map_err(CliError::Run)?;
    let settings = format!(
        "{iterations} iterations on real threads, jiffy {jiffy_us} us, --work {work}, --hold-spins {hold_spins}, --threads-scale {threads_scale}{}",
        if delay.is_empty() { String::new() } else { format!(", --delay {} (seed {seed})", escape_control(&delay.join(","))) }
    );
    if json {
        for r in &results {
            let mut counters = serde_json::Map::new();
            for name in mmcheck::runtime::counter_names(std::slice::from_ref(r)) {
                let (mean, min, max) = mmcheck::runtime::stats(&r.samples, &name);
                counters.insert(name, serde_json::json!({"amean": mean, "min": min, "max": max}));
            }
            let v = serde_json::json!({"name": r.name, "variant": r.label, "iterations": r.samples.len(), "seconds": r.seconds,
                "settings": settings, "violations": r.violations, "counters": counters});
            emit(v)?;
        }
    } else {
        if compare {
            let names: Vec<String> = results.iter().map(|r| escape_control(&r.name).into_owned()).collect();
            let mut uniq = names.clone();
            uniq.dedup();
            emit(format_args!("{}: {settings}", uniq.join(" vs ")))?;
        } else {
            emit(format_args!(
                "{} ({}): {settings}, {:.2} s",
                escape_control(&results[0].name),
                results[0].label,
                results[0].seconds
            ))?;
        }
        emit_raw(&mmcheck::runtime::compare_table(&results))?;
    }
    if let Some(path) = svg {
        let title =
            format!("{}\n{settings}", results.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(" vs "));
        std::fs::write(&path, mmcheck::runtime::svg_chart(&results, &title))
            .map_err(|e| CliError::Output(format!("--svg {}: {e}", show_path(&path))))?;
        if !json {
            emit(format_args!("chart: {}", show_path(&path)))?;
        }
    }
    Ok(true)
}
