//! Counterexamples people can look at: `mmcheck check --html DIR` writes one self-contained
//! HTML page per violation (inline CSS, script and SVG; nothing fetched, opens from `file://`)
//! and `DIR/index.html` listing every scenario; `--svg FILE` writes the swimlane drawing
//! alone.
//!
//! The pages are built with maud: its `html!` macro is checked at compile time and escapes
//! every interpolated value, so a scenario name, description or invariant statement with
//! markup in it renders as text. The drawing is [`svg`]; the state panel's values are
//! [`state`]'s replay of the trace's events. Every file is written under a temporary name and
//! renamed into place ([`write_all`]), so an error leaves no half-written file.

pub mod state;
pub mod svg;

use std::path::{Component, Path, PathBuf};

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::check::{Report, Verdict};
use crate::engine::Engine;
use crate::matrix::Matrix;
use crate::term::show_path;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");
/// The invariants' documentation, for the anchors of its sections.
const INVARIANTS_MD: &str = include_str!("../../../docs/invariants.md");

/// The version of the model, monitors and engines (the hash replay tokens carry).
pub fn model_version() -> &'static str {
    env!("MMCHECK_CODE_HASH")
}

/// A heading's anchor as Markdown renderers make it: lower case, spaces to `-`, punctuation
/// other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchor of invariant `id`'s section in docs/invariants.md: the heading `## id`, or
/// `## id (model)` where two models share the id.
pub fn invariant_anchor(model: &str, id: &str) -> Option<String> {
    let own = format!("{id} ({model})");
    INVARIANTS_MD.lines().filter_map(|l| l.strip_prefix("## ")).find(|h| h.trim() == own || h.trim() == id).map(slug)
}

/// What a bound an engine's verdict covers, in words.
pub fn bound_text(e: &Engine) -> String {
    match *e {
        Engine::Loom { preemption_bound: None } => "no preemption bound".into(),
        Engine::Loom { preemption_bound: Some(b) } => format!("preemption bound {b}"),
        Engine::ShuttlePct { iterations, depth, seed } => {
            format!("{iterations} iterations, depth {depth}, seed {seed}")
        }
        Engine::ShuttleRandom { iterations, seed } => format!("{iterations} iterations, seed {seed}"),
        Engine::ShuttleDfs { iterations } => format!("at most {iterations} executions"),
        Engine::Stateful { max_states: None, .. } => "no bound (states stored)".into(),
        Engine::Stateful { max_states: Some(n), .. } => format!("at most {n} states"),
    }
}

/// The relative path from folder `from` to file `to` (both absolute).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

/// A link from pages in `dir` to the docs/invariants.md of the repository `scenario_file`
/// is in, when there is one.
fn docs_href(dir: &Path, scenario_file: &Path) -> Option<String> {
    let file = scenario_file.canonicalize().ok()?;
    let docs = file.ancestors().map(|a| a.join("docs/invariants.md")).find(|d| d.is_file())?;
    let dir = dir.canonicalize().ok()?;
    let rel = relative(&dir, &docs);
    Some(rel.to_str()?.replace('\\', "/"))
}

/// A counterexample's drawing input, from its report.
struct Parts {
    comms: Vec<String>,
    rows: Vec<crate::trace::DiagramRow>,
    kernel: Vec<(mmmodel::ghost::Pid, Option<mmmodel::event::KernelEvent>)>,
    signals: Vec<(usize, mmmodel::ghost::Pid)>,
    cycle_from: Option<usize>,
}

fn parts(r: &Report, verbose: bool) -> Option<Parts> {
    let run = &r.runs[r.shown?];
    let f = run.outcome.found.as_ref()?;
    let comms = r.scenario.spec.comms();
    let rows = f.trace.rows(comms.len(), &f.violations, verbose);
    let kernel = f.trace.kernel_events();
    let signals = f
        .trace
        .events::<mmmodel::compaction::Event>()
        .map(|ev| {
            ev.iter()
                .enumerate()
                .filter_map(|(i, (_, e))| match e.proto() {
                    Some(mmmodel::compaction::Event::SignalSent { target })
                    | Some(mmmodel::compaction::Event::ReschedSet { target }) => Some((i, *target)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Parts { comms, rows, kernel, signals, cycle_from: f.cycle_from })
}

/// The title of a drawing: the scenario and its verdict, then what was violated where.
fn title(r: &Report) -> Vec<String> {
    let run = &r.runs[r.shown.unwrap_or(0)];
    let mut t = vec![format!("{}: {} on {}", r.scenario.name, r.verdict.label(), run.outcome.engine)];
    if let Some(f) = &run.outcome.found {
        if let Some(v) = f.violations.first() {
            t.push(format!("violated {}: {}", v.invariant, v.message));
        }
    }
    t
}

/// The swimlane drawing of `r`'s counterexample (`--svg`), if it has one.
pub fn svg(r: &Report, verbose: bool) -> Option<String> {
    let p = parts(r, verbose)?;
    Some(svg::render(&svg::Drawing {
        title: title(r),
        comms: &p.comms,
        rows: &p.rows,
        kernel: &p.kernel,
        signals: &p.signals,
        cycle_from: p.cycle_from,
    }))
}

/// One step of the page's state panel.
#[derive(serde::Serialize)]
struct Step<'a> {
    /// The trace index of the row's event (`None`: the initial state).
    event: Option<usize>,
    task: String,
    text: &'a str,
    in_cycle: bool,
    values: &'a [state::Entry],
}

/// JSON for inside a `<script>` element: `<` written `\u003c`, so no `</script>` can end it.
fn script_json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("serialisable").replace('<', "\\u003c")
}

/// The page of `r`'s counterexample, if it has one. `docs` links docs/invariants.md.
pub fn page(r: &Report, verbose: bool, docs: Option<&str>) -> Option<String> {
    let p = parts(r, verbose)?;
    let run = &r.runs[r.shown?];
    let f = run.outcome.found.as_ref()?;
    let sc = &r.scenario;
    let d = svg::Drawing {
        title: title(r),
        comms: &p.comms,
        rows: &p.rows,
        kernel: &p.kernel,
        signals: &p.signals,
        cycle_from: p.cycle_from,
    };
    let drawing = svg::render(&d);
    let heads = svg::render_heads(&d);
    let snaps = state::replay(r)?;
    let mut steps =
        vec![Step { event: None, task: String::new(), text: "initial state", in_cycle: false, values: &snaps[0] }];
    for row in &p.rows {
        steps.push(Step {
            event: Some(row.index),
            task: format!("T{} {}", row.pid, p.comms.get(row.pid).map(String::as_str).unwrap_or("")),
            text: &row.text,
            in_cycle: f.cycle_from.is_some_and(|c| row.index >= c),
            values: &snaps[row.index + 1],
        });
    }
    let first_marked = p.rows.iter().position(|x| x.marked).map(|n| n + 1).unwrap_or(steps.len() - 1);
    let infos = sc.model().invariants();
    let model = sc.model().name();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let violations: Vec<_> = f
        .violations
        .iter()
        .filter(|v| {
            let k = (v.invariant, v.message.as_str());
            let new = !seen.contains(&k);
            seen.push(k);
            new
        })
        .collect();
    let replay = r.replay.as_ref().map(|t| crate::term::replay_command(&sc.file, &t.to_string()));
    let text_diagram = f.trace.render_lasso(&p.comms, &f.violations, verbose, f.cycle_from);
    let wasted: u64 = f.violations.iter().filter(|v| v.invariant == "no-lost-wakeup").map(|v| v.wasted_jiffies).sum();
    let markup: Markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (sc.name) ": " (r.verdict.label()) }
                style { (PreEscaped(CSS)) }
            }
            body data-initial-step=(first_marked) {
                header {
                    p.crumb { a href="index.html" { "all scenarios" } }
                    h1 #scenario-name { (sc.name) }
                    @if !sc.description.is_empty() { p.description { (sc.description) } }
                    p.verdict {
                        span.badge.bad { (r.verdict.label()) }
                        " on " (run.outcome.engine) ", " (f.trace.len()) " events; expected " (r.expected_label())
                        (if r.matched { " (as expected)" } else { " (MISMATCH)" })
                    }
                }
                section.violations {
                    @for v in &violations {
                        div.violated data-invariant=(v.invariant) {
                            h2 {
                                "violated "
                                @match (docs, invariant_anchor(model, v.invariant)) {
                                    (Some(d), Some(a)) => { a href={ (d) "#" (a) } { code { (v.invariant) } } }
                                    (None, Some(a)) => { code { (v.invariant) } " (the scenario file is outside an mmcheck checkout: see docs/invariants.md#" (a) " in the repository)" }
                                    _ => { code { (v.invariant) } }
                                }
                                @if let Some(at) = v.at { " at " a.goto href={ "#step=e" (at) } data-event=(at) { "#" (at) } }
                            }
                            @if let Some(i) = infos.iter().find(|i| i.id == v.invariant) {
                                p.statement { (i.statement) }
                            }
                            p.message { (v.message) }
                        }
                    }
                    @if wasted > 0 {
                        p.wasted { "wasted sleep: " (wasted) " jiffies (" (wasted * 1000 / mmmodel::kernel::HZ) " ms at HZ=" (mmmodel::kernel::HZ) ")" }
                    }
                    @if f.cycle_from.is_some() {
                        p.lasso { "A lasso: the rows under the yellow band repeat for ever." }
                    }
                }
                p #scroll-note hidden { }
                div.layout {
                    div.diagram tabindex="0" { div.heads aria-hidden="true" { (PreEscaped(heads)) } (PreEscaped(drawing)) }
                    aside #panel {
                        h2 { "State " span #step-label { } }
                        p #step-event { }
                        table #state { }
                        p.keys { kbd { "\u{2190}" } kbd { "\u{2192}" } " or " kbd { "\u{2191}" } kbd { "\u{2193}" } " step, "
                            kbd { "Home" } " initial state, " kbd { "End" } " last step, " kbd { "V" } " the violation; or click a row" }
                        @if crate::html::state_legend(model) { p.legend { "pages: " (state::PAGE_LEGEND) } }
                    }
                }
                section.meta {
                    h2 { "Reproduce" }
                    @if let Some(cmd) = &replay { pre #replay { "replay: " (cmd) } }
                    table {
                        tr { th { "scenario file" } td { (show_path(&sc.file)) } }
                        tr { th { "model" } td { (model) ", variant " (sc.spec.variant()) @if let Some(m) = sc.spec.mutation() { ", seeded mutation " (m) } } }
                        tr { th { "engine" } td #engine { (run.outcome.engine) } }
                        tr { th { "bound" } td #bound { (bound_text(&run.outcome.engine)) } }
                        tr { th { "memory model" } td #memory-model { (run.outcome.engine.memory_model_name()) " (" (run.outcome.engine.memory_model()) ")" } }
                        @if let Some(st) = &run.outcome.stats {
                            tr { th { "reductions" } td #reductions { (reductions_text(st)) } }
                        }
                        tr { th { "model version" } td #model-version { code { (model_version()) } " (the hash replay tokens carry: a token replays only with this version of the code)" } }
                        tr { th { "executions" } td { (r.executions()) } }
                    }
                    details {
                        summary { "the text race diagram" }
                        pre.text-diagram { (text_diagram) }
                    }
                }
                script type="application/json" #steps { (PreEscaped(script_json(&steps))) }
                script { (PreEscaped(JS)) }
            }
        }
    };
    Some(markup.into_string())
}

/// Whether the model's panel shows a page map (and so its legend).
fn state_legend(model: &str) -> bool {
    model == <mmmodel::compaction::Compaction as mmmodel::model::Model>::NAME
}

/// The coverage counts of a report, `name=count` in the model's order.
fn coverage_text(r: &Report) -> String {
    let cov = r.coverage();
    r.scenario
        .model()
        .coverage_names()
        .iter()
        .map(|n| format!("{n}={}", cov.get(n).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn verdict_class(v: &Verdict) -> &'static str {
    match v {
        Verdict::Pass => "good",
        Verdict::Violation(_) => "bad",
        _ => "warn",
    }
}

/// `DIR/index.html`: every scenario with its verdict, engine, bound and memory model, each
/// violation linking its page (`pages[i]`: the page file of report `i`), a pass with its
/// coverage; and the matrices, each cell linking its evidence.
pub fn index(title: &str, reports: &[Report], pages: &[Option<String>], matrices: &[Matrix]) -> String {
    let anchor = |i: usize| format!("s{i}");
    let by_name = |name: &str| reports.iter().position(|r| r.scenario.name == name);
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body.index {
                h1 { (title) }
                p { (reports.len()) " scenario(s), " (reports.iter().filter(|r| r.matched).count()) " as expected, "
                    (reports.iter().filter(|r| !r.matched).count()) " not. Model version " code { (model_version()) } "." }
                @for m in matrices {
                    h2 { (m.model) " model: invariants \u{d7} variants" }
                    p.note { "A cell is decided over every configuration of its variant that checks the invariant: violated (executions until the first violation) if any configuration violates it, holds (every configuration an exhaustive engine explored completely passed, one reaching the invariant's situation; +N unproven: configurations that passed without such a proof, or stopped at another invariant's violation), or unexercised (the same, none reaching it); with the engine and its memory model (c11: loom's C11 subset, sc: sequentially consistent, lkmm: the kernel's memory model, stateful, no load buffering). A cell links the evidence that decides it; hovering lists every configuration it was decided over." }
                    table.matrix data-model=(m.model) {
                        tr { th { "invariant" } @for v in &m.variants { th { (v) } } }
                        @for inv in &m.invariants {
                            tr {
                                th { (inv) }
                                @for v in &m.variants {
                                    @match m.cell(inv, v) {
                                        Some(c) => {
                                            @let i = by_name(&c.scenario);
                                            @let href = match i { Some(i) => match pages.get(i).and_then(|p| p.as_ref()) { Some(p) if c.verdict == "violated" => p.clone(), _ => format!("#{}", anchor(i)) }, None => String::new() };
                                            td class=(c.verdict) {
                                                a href=(href) title=(c.scenarios.join(", ")) {
                                                    (if c.verdict == "violated" { "VIOLATED" } else { c.verdict })
                                                    " " (c.executions) " " (c.engine.short()) " " (c.memory_model)
                                                }
                                            }
                                        }
                                        None => { td.empty { "-" } }
                                    }
                                }
                            }
                        }
                    }
                }
                h2 { "Scenarios" }
                table.scenarios {
                    tr { th { "scenario" } th { "file" } th { "model" } th { "variant" } th { "verdict" } th { "expected" } th { "ok?" }
                         th { "engine" } th { "bound" } th { "memory model" } th { "executions" } th { "states" } th { "coverage / detail" } }
                    @for (i, r) in reports.iter().enumerate() {
                        tr id=(anchor(i)) data-verdict=(r.verdict.kind()) {
                            td { @match pages.get(i).and_then(|p| p.as_ref()) {
                                Some(p) => { a href=(p) { (r.scenario.name) } }
                                None => { (r.scenario.name) }
                            } }
                            td { code { (show_path(&r.scenario.file)) } }
                            td { (r.scenario.model().name()) }
                            td { (r.scenario.spec.variant()) @if let Some(m) = r.scenario.spec.mutation() { "+" (m) } }
                            td { span class={ "badge " (verdict_class(&r.verdict)) } { (r.verdict.label()) } }
                            td { (r.expected_label()) }
                            td { (if r.matched { "ok" } else { "MISMATCH" }) }
                            td { (r.engine_names()) }
                            td { (r.runs.iter().map(|x| bound_text(&x.outcome.engine)).collect::<Vec<_>>().join("; ")) }
                            td { (r.runs.iter().map(|x| x.outcome.engine.memory_model()).collect::<Vec<_>>().join("+")) }
                            td.num { (r.executions()) }
                            td.num { (r.stateful().map_or("-".to_string(), |s| s.states.to_string())) }
                            td.small {
                                @match &r.verdict {
                                    Verdict::Pass => { (coverage_text(r)) }
                                    Verdict::Vacuous(m) => { "never reached: " (m.join(", ")) }
                                    Verdict::Disagreement(d) | Verdict::Error(d) => { (d) }
                                    _ => { (r.note.clone().unwrap_or_default()) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    markup.into_string()
}

/// A file name for report `r`'s page, unique among `taken`: the scenario file's stem, with
/// characters other than `[A-Za-z0-9._-]` as `_`.
fn page_name(r: &Report, taken: &mut Vec<String>) -> String {
    let stem = r.scenario.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut base: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    if base.is_empty() || base.starts_with('.') || base == "index" {
        base.insert_str(0, "scenario-");
    }
    let mut name = format!("{base}.html");
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}.html");
        n += 1;
    }
    taken.push(name.clone());
    name
}

/// Every file of `--html DIR`: the pages of the violations and `index.html`, as (file name,
/// contents).
pub fn site(dir: &Path, title: &str, reports: &[Report], matrices: &[Matrix], verbose: bool) -> Vec<(String, String)> {
    let mut taken = vec!["index.html".to_string()];
    let mut files = Vec::new();
    let mut pages = Vec::new();
    for r in reports {
        let docs = docs_href(dir, &r.scenario.file);
        match page(r, verbose, docs.as_deref()) {
            Some(text) => {
                let name = page_name(r, &mut taken);
                files.push((name.clone(), text));
                pages.push(Some(name));
            }
            None => pages.push(None),
        }
    }
    files.push(("index.html".to_string(), index(title, reports, &pages, matrices)));
    files
}

/// The temporary name a file is written under before it is renamed into place.
pub fn temp_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.mmcheck-tmp"))
}

/// Check before any work that `dir` can take the pages: a folder (made if missing) in which
/// a file can be written. The error names the path.
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--html {}: not a folder (it is a file); name a folder for the pages", show_path(dir)));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("--html {}: cannot create the folder: {e}", show_path(dir)))?;
    let probe = dir.join(".mmcheck-probe");
    std::fs::write(&probe, b"").map_err(|e| format!("--html {}: cannot write in the folder: {e}", show_path(dir)))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Check before any work that `file` can be written: not a folder, not a special file, its
/// folder exists and takes a file.
pub fn prepare_file(flag: &str, file: &Path) -> Result<(), String> {
    if let Ok(m) = std::fs::metadata(file) {
        if !m.is_file() {
            return Err(format!("{flag} {}: not a regular file; name a file to write", show_path(file)));
        }
    }
    // (Not the temporary name itself, which is only ever written with the whole file.)
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let probe = file.with_file_name(format!(".{name}.mmcheck-probe"));
    std::fs::write(&probe, b"").map_err(|e| format!("{flag} {}: cannot write: {e}", show_path(file)))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Write `files` into `dir`: each under its temporary name first, and only when every one
/// is written, each renamed into place. On any error the temporary files are removed, and
/// the error names the path.
pub fn write_all(flag: &str, dir: &Path, files: &[(String, String)]) -> Result<(), String> {
    let mut written: Vec<PathBuf> = Vec::new();
    let fail = |written: &[PathBuf], msg: String| {
        for t in written {
            let _ = std::fs::remove_file(t);
        }
        Err(msg)
    };
    for (name, text) in files {
        let path = dir.join(name);
        let tmp = temp_name(&path);
        if let Err(e) = write_synced(&tmp, text.as_bytes()) {
            let _ = std::fs::remove_file(&tmp);
            return fail(&written, format!("{flag} {}: cannot write {}: {e}", show_path(dir), show_path(&path)));
        }
        written.push(tmp);
    }
    for ((name, _), tmp) in files.iter().zip(&written) {
        let path = dir.join(name);
        if let Err(e) = std::fs::rename(tmp, &path) {
            return fail(&written, format!("{flag} {}: cannot rename into {}: {e}", show_path(dir), show_path(&path)));
        }
    }
    Ok(())
}

/// Write `file` (`--svg`) through its temporary name.
pub fn write_one(flag: &str, file: &Path, text: &str) -> Result<(), String> {
    let tmp = temp_name(file);
    if let Err(e) = write_synced(&tmp, text.as_bytes()).and_then(|()| std::fs::rename(&tmp, file)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("{flag} {}: cannot write: {e}", show_path(file)));
    }
    Ok(())
}

/// Write and flush to the disk, so that a full disk shows here and not after the rename.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.flush()?;
    f.sync_all().or_else(|e| if e.kind() == std::io::ErrorKind::InvalidInput { Ok(()) } else { Err(e) })
}

/// Why persistent sets did not run when nobody asked for them (not worth a line of its own).
const NOT_ASKED: &str = "not asked for (reduce without \"persistent\", or --no-reduce)";

/// What the stateful search reduced, and why a reduction did not apply.
fn reductions_text(st: &crate::engine::StateStats) -> String {
    let mut t = st.reductions.to_string();
    if st.symmetry_group > 1 {
        t += &format!(" (a symmetry group of {})", st.symmetry_group);
    }
    if st.persistent {
        t += &format!("; persistent sets ({} states explored by one transition)", st.persistent_states);
    }
    if st.live_locals {
        t += "; live locals";
    }
    if st.projection {
        t += "; the monitor projection";
    }
    for (what, why) in [
        ("symmetry", st.symmetry_not_applied),
        ("partial-order reduction", st.por_not_applied),
        (
            "persistent sets",
            if st.persistent_not_applied == Some(NOT_ASKED) { None } else { st.persistent_not_applied },
        ),
        ("snapshots", st.snapshot_not_applied),
    ] {
        if let Some(why) = why {
            t += &format!("; {what} not applied: {why}");
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_invariant_has_a_section_to_link() {
        for m in crate::registry::Registry::default().models() {
            for i in m.invariants() {
                let a = invariant_anchor(m.name(), i.id);
                assert!(a.is_some(), "{}: {} has no section in docs/invariants.md", m.name(), i.id);
            }
        }
        assert_eq!(invariant_anchor("kswapd-stall", "progress").as_deref(), Some("progress-kswapd-stall"));
        assert_eq!(slug("lock-released (compaction)"), "lock-released-compaction");
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("/a/b/out"), Path::new("/a/b/docs/x.md")), PathBuf::from("../docs/x.md"));
        assert_eq!(relative(Path::new("/a"), Path::new("/a/docs/x.md")), PathBuf::from("docs/x.md"));
    }

    #[test]
    fn xml_escape_leaves_no_markup() {
        assert_eq!(svg::xml_escape("<script>&\"'\u{1}"), "&lt;script&gt;&amp;&quot;&#39;\\x01");
    }
}
