//! The matrix is decided over every configuration (issue 36): a cell says "holds" only when
//! every configuration of its variant that checks the invariant was explored completely and
//! exhaustively without a violation of it, and "violated" when any one violates it.
//!
//! [`holds_over_a_violation`] is the check: every cell that does not say "violated" while some
//! report of its variant violates its invariant. It is shown to fail on a synthetic set of
//! reports (a cell taken from one configuration), then run on the matrices of every shipped
//! scenario, which must also read as the reclaim-throttle findings say.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use mmcheck::check::{check, EngineRun, Report, RunOptions, Verdict};
use mmcheck::engine::{Engine, Memory, Outcome};
use mmcheck::matrix::{self, Matrix};
use mmcheck::registry::{AnyModel, SHIPPED};
use mmcheck::scenario;

/// Every cell that says something else than "violated" while a report of its variant violates
/// its invariant (one line each).
fn holds_over_a_violation(m: &Matrix, reports: &[Report]) -> Vec<String> {
    let mut bad = Vec::new();
    for r in reports.iter().filter(|r| r.scenario.model().name() == m.model && r.scenario.spec.mutation().is_none()) {
        let variant = r.scenario.spec.variant();
        for run in r.runs.iter().filter(|run| run.outcome.error.is_none()) {
            for inv in run.outcome.first_violation.keys() {
                match m.cell(inv, variant) {
                    Some(c) if c.verdict == "violated" => {}
                    c => bad.push(format!(
                        "{}: {inv} on {variant} says {:?} ({:?}), but {} violates it",
                        m.model,
                        c.map(|c| c.verdict),
                        c.map(|c| &c.scenario),
                        r.scenario.name
                    )),
                }
            }
        }
    }
    bad
}

fn model(name: &str) -> &'static dyn AnyModel {
    *SHIPPED.iter().find(|m| m.name() == name).expect("a shipped model")
}

// ---------------------------------------------------------------- synthetic reports

/// A reclaim-throttle scenario of variant `variant`; `lru` tells configurations apart.
fn scenario_of(name: &str, variant: &str, lru: u32) -> scenario::Scenario {
    let text = format!(
        "model = \"reclaim-throttle\"\nvariant = \"{variant}\"\n[[thread]]\nrole = \"kswapd\"\nbatch = 0\n\
         [[thread]]\nrole = \"writeback\"\n[params]\nlru = {lru}\n[explore]\nengine = \"stateful\"\n\
         [expect]\nverdict = \"pass\"\nreaches = [\"throttled-writeback\"]\n"
    );
    scenario::parse(Path::new(&format!("{name}.toml")), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// A report of one engine's outcome: `violated` (invariant, at execution) or a pass; complete or
/// not; every `throttle-bounded` situation reached.
fn report(sc: scenario::Scenario, engine: Engine, complete: bool, violated: Option<(&'static str, u64)>) -> Report {
    let coverage: BTreeMap<&'static str, u64> =
        ["throttled-writeback", "throttled-noprogress", "throttle-timed-out", "writeback-wake", "throttle-woken"]
            .into_iter()
            .map(|c| (c, 1))
            .collect();
    let outcome = Outcome {
        engine,
        executions: 100,
        seconds: 0.0,
        complete,
        found: None,
        violated: violated.map(|(i, _)| (i, 1)).into_iter().collect(),
        first_violation: violated.into_iter().collect(),
        coverage,
        error: None,
        stats: None,
        online_checked: 0,
    };
    let verdict = match violated {
        Some((i, _)) => Verdict::Violation(i),
        None if complete => Verdict::Pass,
        None => Verdict::Incomplete,
    };
    Report {
        scenario: sc,
        runs: vec![EngineRun { outcome, verdict: verdict.clone() }],
        verdict,
        matched: true,
        shown: None,
        replay: None,
        note: None,
    }
}

const STATEFUL: Engine = Engine::Stateful { max_states: None, memory: Memory::Sc };
const PCT: Engine = Engine::ShuttlePct { iterations: 100, depth: 3, seed: 1 };

/// The check fails where it should: on a cell taken from one configuration ("holds", from a
/// complete exhaustive pass) while another configuration of that variant violates the
/// invariant, which is what the matrix did before it decided a cell over every configuration.
#[test]
fn the_check_fails_on_a_cell_taken_from_one_configuration() {
    let rt = model("reclaim-throttle");
    let holds = report(scenario_of("a", "kthread-resched", 3), STATEFUL, true, None);
    let violates = report(scenario_of("b", "kthread-resched", 5), STATEFUL, false, Some(("progress", 7)));
    let both = [holds.clone(), violates.clone()];
    // One configuration's matrix, checked against both: the check names the cell.
    let one = matrix::build(rt, std::slice::from_ref(&holds));
    assert_eq!(one.cell("progress", "kthread-resched").map(|c| c.verdict), Some("holds"));
    let bad = holds_over_a_violation(&one, &both);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].contains("progress on kthread-resched says Some(\"holds\")") && bad[0].contains("b violates it"),
        "{bad:?}"
    );
    // So does a matrix whose cell was made to say "holds".
    let mut forged = matrix::build(rt, &both);
    forged.cells.get_mut("progress|kthread-resched").expect("a cell").verdict = "holds";
    assert_eq!(holds_over_a_violation(&forged, &both).len(), 1);
    // Built over both, the cell is violated, decided by b, and lists both.
    let m = matrix::build(rt, &both);
    assert!(holds_over_a_violation(&m, &both).is_empty());
    let c = m.cell("progress", "kthread-resched").expect("a cell");
    assert_eq!((c.verdict, c.scenario.as_str(), c.executions), ("violated", "b", 7));
    assert_eq!(c.scenarios, ["a", "b"]);
    // The order of the reports does not matter.
    let m2 = matrix::build(rt, &[violates, holds]);
    assert_eq!(m2.cell("progress", "kthread-resched").map(|c| c.verdict), Some("violated"));
}

/// A pass that is not a proof (a shuttle engine's, or a search a limit stopped) decides nothing:
/// beside a complete exhaustive pass the cell holds and lists it as undecided; alone, it
/// leaves the cell empty, as before.
#[test]
fn a_pass_that_is_not_exhaustive_decides_nothing() {
    let rt = model("reclaim-throttle");
    let proven = report(scenario_of("proven", "nofs-headroom", 3), STATEFUL, true, None);
    let sampled = report(scenario_of("sampled", "nofs-headroom", 5), PCT, true, None);
    let stopped = report(scenario_of("stopped", "nofs-headroom", 6), STATEFUL, false, None);
    let m = matrix::build(rt, std::slice::from_ref(&proven));
    let c = m.cell("throttle-bounded", "nofs-headroom").expect("a cell");
    assert_eq!((c.verdict, c.scenario.as_str()), ("holds", "proven"));
    assert!(c.undecided.is_empty());
    for other in [sampled, stopped] {
        let name = other.scenario.name.clone();
        let m = matrix::build(rt, &[proven.clone(), other.clone()]);
        let c = m.cell("throttle-bounded", "nofs-headroom").expect("a cell");
        assert_eq!((c.verdict, c.scenario.as_str()), ("holds", "proven"));
        assert_eq!(c.scenarios, ["proven", name.as_str()]);
        assert_eq!(c.undecided, [name.as_str()]);
        assert!(matrix::render_wide(&m).contains("holds 100 stateful sc +1 unproven"), "{}", matrix::render_wide(&m));
        assert!(matrix::build(rt, &[other]).cell("throttle-bounded", "nofs-headroom").is_none());
    }
    // Other variants' cells are not touched.
    assert!(matrix::build(rt, &[proven]).cell("throttle-bounded", "v5.16-rc1").is_none());
}

/// The default table fits 120 columns, whatever the scenario names: a cell is its verdict, and
/// its evidence goes below the table, folded onto a second line where it would be wider; the
/// wide form puts the evidence in the cells (and is wider).
#[test]
fn the_default_table_fits_120_columns_and_the_wide_one_holds_the_evidence() {
    let rt = model("reclaim-throttle");
    let long = "a-scenario-whose-name-alone-is-more-than-eighty-characters-long-as-on-other-variants-files-are";
    let mut reports = Vec::new();
    for (i, v) in rt.variants().iter().enumerate() {
        reports.push(report(scenario_of(long, v, 3), STATEFUL, true, None));
        reports.push(report(scenario_of(&format!("stopped-{i}"), v, 5), PCT, true, None));
        reports.push(report(scenario_of(&format!("violates-{i}"), v, 6), STATEFUL, false, Some(("progress", 123_456))));
    }
    let m = matrix::build(rt, &reports);
    let text = matrix::render(&m);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 120, "{widest} columns:\n{text}");
    assert!(text.contains("holds +2") && text.contains("VIOLATED"), "{text}");
    assert!(text.contains(&format!("holds 100 stateful sc +2 unproven;\n      {long} (of 3)")), "{text}");
    assert!(text.contains("VIOLATED @123456 stateful sc; violates-0 (of 3)"), "{text}");
    let wide = matrix::render_wide(&m);
    assert!(wide.lines().any(|l| l.chars().count() > 120), "{wide}");
    assert!(wide.contains("holds 100 stateful sc +2 unproven"), "{wide}");
}

// ---------------------------------------------------------------- the shipped matrices

/// Every shipped scenario (but mutants/ and heavy/), checked once; every model's matrix built
/// from them says "violated" wherever a shipped configuration violates the invariant, and the
/// reclaim-throttle matrix reads as findings T1 and T2 say, every cell by the stateful engine.
#[test]
fn no_shipped_cell_holds_where_a_shipped_configuration_violates_it() {
    let scenarios: Vec<(String, scenario::Scenario)> =
        common::shipped().into_iter().filter(|(rel, _)| !rel.starts_with("mutants/")).collect();
    let reports: Vec<Report> = scenarios
        .iter()
        .map(|(rel, sc)| {
            let _serial = sc.engines.iter().any(|e| matches!(e, Engine::Loom { .. })).then(common::loom_serial);
            let r = check(sc, &RunOptions::default());
            assert!(r.matched, "{rel}: {:?}, expected {}", r.verdict, r.expected_label());
            r
        })
        .collect();
    let mut bad = Vec::new();
    for m in SHIPPED {
        let mx = matrix::build(*m, &reports);
        bad.extend(holds_over_a_violation(&mx, &reports));
        // Every cell lists the scenarios it was decided over, the deciding one among them.
        for (k, c) in &mx.cells {
            assert!(c.scenarios.contains(&c.scenario), "{k}: {} not among {:?}", c.scenario, c.scenarios);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));

    let rt = matrix::build(model("reclaim-throttle"), &reports);
    let verdict = |inv: &str, v: &str| rt.cell(inv, v).map(|c| c.verdict).unwrap_or("-");
    for v in ["v5.16-rc1", "noprogress-fix", "kthread-resched", "remote-drain"] {
        assert_eq!(verdict("progress", v), "violated", "progress on {v} (T2)");
    }
    assert_eq!(verdict("progress", "nofs-headroom"), "holds");
    for v in ["v5.16-rc1", "noprogress-fix"] {
        assert_eq!(verdict("no-soft-lockup", v), "violated", "no-soft-lockup on {v} (T1)");
    }
    for v in ["kthread-resched", "nofs-headroom", "remote-drain"] {
        assert_eq!(verdict("no-soft-lockup", v), "holds", "no-soft-lockup on {v} (T1)");
    }
    for inv in &rt.invariants {
        for v in &rt.variants {
            let c = rt.cell(inv, v).unwrap_or_else(|| panic!("{inv} on {v}: no cell"));
            assert!(matches!(c.engine, Engine::Stateful { .. }), "{inv} on {v}: decided by {}", c.engine);
            // (remote-drain's configurations, T1's and T2's threads, throttle nobody on
            // WRITEBACK: the three WRITEBACK invariants are unexercised there.)
            let unexercised_ok = *v == "remote-drain" && *inv != "progress" && *inv != "no-soft-lockup";
            assert!(
                matches!(c.verdict, "violated" | "holds") || (unexercised_ok && c.verdict == "unexercised"),
                "{inv} on {v}: {}",
                c.verdict
            );
        }
    }
}
