//! The stateful engine's partial-order reduction (sleep sets with state caching, docs/model.md,
//! "Partial-order reduction") changes no verdict, and visits every state.
//!
//! Sleep sets save transitions, never states: a search with them must store exactly the states
//! the full search stores. That is an exact oracle, and these tests hold the reduction to it:
//!
//! * every shipped scenario with at most 6 threads, with `progress` left out of its invariants
//!   (the reduction applies only to safety checks): with the reduction and without, the same
//!   verdict, the same invariants violated, the same coverage events reached and, where both
//!   searches complete, the same number of states;
//! * generated kswapd-stall configurations (proptest), symmetric and not, with mutants and both
//!   timer models: the same, and every answer given for inert events checked;
//! * three seeded defects in the reduction (`ReductionDefect::PorIgnoresObjects`: two steps on
//!   one object, lock or park token taken as independent; `ReductionDefect::PorIgnoresGhost`:
//!   steps with events taken as independent without asking the online monitors;
//!   `ReductionDefect::PorExitsIndependent`: a step that ends its task taken as independent of
//!   every step) each make that oracle fail on a shipped scenario: the tests can fail;
//! * inert events (a step whose events the monitors ignore commutes with every step there,
//!   without running both orders): on every case each such answer is checked by running both
//!   orders anyway, and a seeded defect (`ReductionDefect::PorInertAnyEvent`: one inert event
//!   taken as enough) is contradicted by that check and caught by the oracle.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario;
use mmcheck::spec::AnySpec;
use proptest::prelude::*;

mod common;

const ENGINE: Engine = Engine::Stateful { max_states: Some(250_000), memory: Memory::Sc };
const POR: Reduce = Reduce { por: true, ..Reduce::NONE };
const PERSISTENT: Reduce = Reduce { por: true, persistent: true, ..Reduce::NONE };

fn explore(spec: &Arc<dyn AnySpec>, reduce: Reduce) -> Outcome {
    spec.explore(ENGINE, &Options { reduce, ..Options::default() })
}

/// The scenario `text` with `[check] invariants` set to what it checks now, less `progress`.
fn safety_only(text: &str, spec: &Arc<dyn AnySpec>) -> String {
    let mut doc: toml_edit::DocumentMut = text.parse().expect("a shipped scenario is TOML");
    let mut inv = toml_edit::Array::new();
    for i in spec.invariants().into_iter().filter(|i| *i != "progress") {
        inv.push(i);
    }
    let mut check = toml_edit::Table::new();
    check.insert("invariants", toml_edit::value(inv));
    doc.insert("check", toml_edit::Item::Table(check));
    // A file that expects a progress violation has nothing left to expect but a pass or
    // another invariant's violation: let the comparison decide, not the file's expectation.
    if let Some(expect) = doc.get_mut("expect").and_then(|e| e.as_table_mut()) {
        if expect.get("invariant").and_then(|i| i.as_str()) == Some("progress") {
            expect.insert("verdict", toml_edit::value("pass"));
            expect.remove("invariant");
        }
        // The same for each variant of a file with `variants`.
        if let Some(by) = expect.get_mut("by_variant").and_then(|b| b.as_table_like_mut()) {
            let keys: Vec<String> = by.iter().map(|(k, _)| k.to_string()).collect();
            for k in keys {
                if by.get(&k).and_then(|v| v.as_str()) == Some("violation(progress)") {
                    by.insert(&k, toml_edit::value("pass"));
                }
            }
        }
        expect.remove("reaches");
    }
    if let Some(ex) = doc.get_mut("explore").and_then(|e| e.as_table_mut()) {
        ex.remove("reduce");
    }
    doc.to_string()
}

/// Why the reduced outcome is not the full one's, if it is not (the exact oracle: where both
/// complete, the same states).
fn differ(reduced: &Outcome, full: &Outcome) -> Option<String> {
    differ_states(reduced, full, |r, f| r == f)
}

/// The same for a reduction that stores fewer states (persistent sets): where both complete,
/// at most the full search's states.
fn differ_fewer(reduced: &Outcome, full: &Outcome) -> Option<String> {
    differ_states(reduced, full, |r, f| r <= f)
}

fn differ_states(reduced: &Outcome, full: &Outcome, states_ok: impl Fn(u64, u64) -> bool) -> Option<String> {
    if reduced.error.is_some() || full.error.is_some() {
        return Some(format!("errors: {:?} / {:?}", reduced.error, full.error));
    }
    if reduced.found.is_some() != full.found.is_some() {
        return Some(format!("violation found: {} / {}", reduced.found.is_some(), full.found.is_some()));
    }
    if common::found_invariants(reduced) != common::found_invariants(full) {
        return Some(format!(
            "invariants: {:?} / {:?}",
            common::found_invariants(reduced),
            common::found_invariants(full)
        ));
    }
    if let (Some(r), Some(f)) = (&reduced.found, &full.found) {
        if r.trace.len() > f.trace.len() {
            return Some(format!("counterexample of {} rows, longer than {}", r.trace.len(), f.trace.len()));
        }
    }
    if reduced.complete != full.complete {
        return Some(format!("complete: {} / {}", reduced.complete, full.complete));
    }
    if reduced.complete {
        let (r, f) = (reduced.stats.expect("stateful stats"), full.stats.expect("stateful stats"));
        if !states_ok(r.states, f.states) {
            return Some(format!("states: {} / {}", r.states, f.states));
        }
        if common::reached(reduced) != common::reached(full) {
            return Some(format!("coverage: {:?} / {:?}", common::reached(reduced), common::reached(full)));
        }
    }
    None
}

/// A shipped scenario the reduction applies to, safety-only, with its full search.
struct Case {
    rel: String,
    spec: Arc<dyn AnySpec>,
    full: Outcome,
}

/// The shipped kswapd-stall scenarios of at most 6 threads (not heavy/), safety-only, whose full
/// search ends within [`ENGINE`]'s budget, smallest first; searched once for all the tests.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let files: Vec<_> = scenario::collect_files(&common::scenarios_dir())
            .unwrap()
            .into_iter()
            .filter(|f| !f.components().any(|c| c.as_os_str() == "heavy"))
            .collect();
        // The full searches, on every core.
        // A file with `variants` is one scenario per variant.
        let each: Vec<(std::path::PathBuf, String)> = files
            .iter()
            .flat_map(|f| {
                scenario::load_each(f)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .into_iter()
                    .map(|sc| (f.clone(), sc.spec.variant().to_string()))
            })
            .collect();
        let mut out: Vec<Case> = common::par_map(&each, |(f, variant)| {
            let of_variant = |v: Vec<scenario::Scenario>| v.into_iter().find(|s| s.spec.variant() == variant);
            let sc = of_variant(scenario::load_each(f).unwrap_or_else(|e| panic!("{e}"))).expect("listed");
            if sc.spec.tasks() > 6 || sc.spec.model().name() != "kswapd-stall" {
                return None;
            }
            let text = std::fs::read_to_string(f).unwrap();
            let rel = f.strip_prefix(common::scenarios_dir()).unwrap_or(Path::new("?")).display().to_string();
            let safe = safety_only(&text, &sc.spec);
            let spec = of_variant(
                scenario::parse_each(f, &safe).unwrap_or_else(|e| panic!("{rel} without progress: {e}\n{safe}")),
            )
            .expect("the same variants")
            .spec;
            let full = explore(&spec, Reduce::NONE);
            (full.complete || full.found.is_some()).then_some(Case { rel, spec, full })
        })
        .into_iter()
        .flatten()
        .collect();
        out.sort_by_key(|c| c.full.stats.expect("stats").states);
        out
    })
}

#[test]
fn por_visits_every_state_and_changes_no_verdict_of_a_shipped_scenario() {
    let mut compared = 0;
    let (mut slept, mut transitions_full, mut transitions_por) = (0u64, 0u64, 0u64);
    let (mut steps_full, mut steps_por) = (0u64, 0u64);
    for c in cases() {
        let reduced = explore(&c.spec, POR);
        let st = reduced.stats.expect("stateful stats");
        assert_eq!(st.reductions, "por", "{}: {:?}", c.rel, st.por_not_applied);
        if let Some(why) = differ(&reduced, &c.full) {
            panic!("{}: partial-order reduction changed the outcome: {why}", c.rel);
        }
        if reduced.complete {
            let full = c.full.stats.expect("stats");
            transitions_full += full.transitions;
            transitions_por += st.transitions;
            steps_full += full.steps;
            steps_por += st.steps;
            // What the steps went to: replays, tails, and the transitions explored (each
            // step that is neither is one, and leads to a state or an end that counts it).
            for (s, what) in [(&full, "full"), (&st, "reduced")] {
                assert!(s.replayed_steps + s.tail_steps < s.steps, "{}: {what}: {s:?}", c.rel);
                let new = s.steps - s.replayed_steps - s.tail_steps;
                assert!(new <= s.transitions, "{}: {what}: {new} new steps, {s:?}", c.rel);
            }
        }
        slept += st.slept;
        compared += 1;
    }
    eprintln!(
        "compared {compared} scenarios; {slept} transitions left asleep; transitions {transitions_por} reduced against \
         {transitions_full}; steps {steps_por} against {steps_full}"
    );
    assert!(compared >= 25, "compared {compared}");
    assert!(slept > 0 && transitions_por < transitions_full, "the reduction saved nothing");
    assert!(steps_por < steps_full, "the reduction saved no step: {steps_por} against {steps_full}");
}

/// Where the reduction cannot apply, it is reported as not applied, and the search is the full
/// one: a model that does not declare its dependencies visible (compaction), and a check of
/// `progress`.
#[test]
fn por_is_reported_not_applied_where_it_cannot_apply() {
    let dir = common::scenarios_dir();
    let sc = scenario::load(&dir.join("compaction/norescan-v3-aborts-mid-pageblock.toml")).unwrap();
    let o = sc.spec.explore(Engine::Stateful { max_states: Some(1_000), memory: Memory::Sc }, &Options::default());
    let st = o.stats.expect("stats");
    assert!(!st.reductions.contains("por"), "{}", st.reductions);
    assert!(st.por_not_applied.is_some_and(|w| w.contains("ghost copies")), "{:?}", st.por_not_applied);
    let sc = scenario::load(&dir.join("kswapd-stall/recheck-2kswapd-writer-stateful.toml")).unwrap();
    assert!(sc.spec.invariants().contains(&"progress"));
    let o = sc.spec.explore(ENGINE, &Options::default());
    let st = o.stats.expect("stats");
    assert!(!st.reductions.contains("por"), "{}", st.reductions);
    assert!(st.por_not_applied.is_some_and(|w| w.contains("progress")), "{:?}", st.por_not_applied);
    assert_eq!(st.slept, 0);
}

/// Symmetry and sleep sets together: the verdicts of symmetry alone.
#[test]
fn por_with_symmetry_changes_no_verdict_of_a_shipped_scenario() {
    let mut compared = 0;
    for c in cases() {
        let both = explore(&c.spec, Reduce::default());
        let r = both.stats.expect("stats").reductions;
        if !(r.contains("symmetry") && r.contains("por")) {
            continue;
        }
        let sym = explore(&c.spec, Reduce { por: false, ..Reduce::default() });
        assert_eq!(both.found.is_some(), sym.found.is_some(), "{}", c.rel);
        assert_eq!(common::found_invariants(&both), common::found_invariants(&sym), "{}", c.rel);
        assert_eq!(both.found.is_some(), c.full.found.is_some(), "{}", c.rel);
        if both.complete && sym.complete {
            assert_eq!(common::reached(&both), common::reached(&sym), "{}", c.rel);
        }
        compared += 1;
    }
    assert!(compared >= 5, "compared {compared}");
}

/// A seeded defect, on the scenarios smallest first: the oracle must tell it from the full
/// search on one (the kill counts: the reduction ran with the defect, and the outcome changed).
fn defect_is_caught(defect: ReductionDefect) -> Option<String> {
    for c in cases() {
        let seeded = explore(&c.spec, Reduce { defect: Some(defect), ..POR });
        assert_eq!(seeded.stats.expect("stats").reductions, "por");
        if let Some(why) = differ(&seeded, &c.full) {
            return Some(format!("{}: {why}", c.rel));
        }
    }
    None
}

#[test]
fn a_por_that_ignores_object_conflicts_is_caught() {
    let caught = defect_is_caught(ReductionDefect::PorIgnoresObjects);
    eprintln!("{caught:?}");
    assert!(caught.is_some(), "no scenario told the defect from the reduction");
}

#[test]
fn a_por_that_ignores_the_monitors_is_caught() {
    let caught = defect_is_caught(ReductionDefect::PorIgnoresGhost);
    eprintln!("{caught:?}");
    assert!(caught.is_some(), "no scenario told the defect from the reduction");
}

/// Inert events (docs/model.md, "Inert events"): the reduction takes a step whose events
/// are all inert on the monitors as commuting with every step there, without running both
/// orders. On every case, with `Options::check_inert`, both orders are run anyway for each
/// such answer: none differs, the outcome is the full search's (states included), and some
/// steps were inert.
#[test]
fn inert_events_commute_on_every_shipped_scenario() {
    let (mut inert, mut compared) = (0u64, 0);
    for c in cases() {
        let checked = c.spec.explore(ENGINE, &Options { reduce: POR, check_inert: true, ..Options::default() });
        let st = checked.stats.expect("stateful stats");
        assert_eq!(st.inert_disagreements, 0, "{}: a step of events declared inert did not commute", c.rel);
        if let Some(why) = differ(&checked, &c.full) {
            panic!("{}: {why}", c.rel);
        }
        inert += st.inert_shortcuts;
        compared += 1;
    }
    eprintln!("{compared} scenarios, {inert} checks answered by inert events, each checked");
    assert!(compared >= 20 && inert > 0, "compared {compared}, inert {inert}");
}

/// The check of the declarations can fail, and so can the reduction's oracle: a step taken as
/// inert for one inert event among others (`ReductionDefect::PorInertAnyEvent`) is
/// contradicted by running both orders on some case, and changes the outcome on some case.
#[test]
fn a_step_taken_as_inert_for_one_inert_event_is_caught() {
    let defect = Reduce { defect: Some(ReductionDefect::PorInertAnyEvent), ..POR };
    let contradicted = cases().iter().find_map(|c| {
        let o = c.spec.explore(ENGINE, &Options { reduce: defect, check_inert: true, ..Options::default() });
        let n = o.stats.expect("stateful stats").inert_disagreements;
        (n > 0).then(|| format!("{}: {n} answers contradicted", c.rel))
    });
    eprintln!("{contradicted:?}");
    assert!(contradicted.is_some(), "no case contradicted a step of one inert event taken as inert");
    let caught = defect_is_caught(ReductionDefect::PorInertAnyEvent);
    eprintln!("{caught:?}");
    assert!(caught.is_some(), "no scenario told the defect from the reduction");
}

/// A step that ends its task is independent under the same rules as any other step, not of
/// everything (docs/model.md, "Partial-order reduction"): one taken as independent of
/// everything is caught.
#[test]
fn a_por_that_takes_exits_as_independent_of_everything_is_caught() {
    let caught = defect_is_caught(ReductionDefect::PorExitsIndependent);
    eprintln!("{caught:?}");
    assert!(caught.is_some(), "no scenario told the defect from the reduction");
}

/// Persistent sets of one transition (a local start, or a yield with the cycle proviso) store
/// fewer states: the oracle is the full search's verdict, invariants, coverage and
/// counterexample length, with at most its states. They store fewer on some scenario, and the
/// search explored some state by one transition.
#[test]
fn persistent_sets_change_no_verdict_of_a_shipped_scenario() {
    let (mut compared, mut fewer, mut by_one) = (0, 0, 0u64);
    let (mut states_full, mut states_reduced) = (0u64, 0u64);
    for c in cases() {
        let reduced = explore(&c.spec, PERSISTENT);
        let st = reduced.stats.expect("stateful stats");
        assert!(st.persistent && st.reductions == "por", "{}: {st:?}", c.rel);
        if let Some(why) = differ_fewer(&reduced, &c.full) {
            panic!("{}: persistent sets changed the outcome: {why}", c.rel);
        }
        if reduced.complete {
            let full = c.full.stats.expect("stats").states;
            fewer += usize::from(st.states < full);
            states_full += full;
            states_reduced += st.states;
        }
        by_one += st.persistent_states;
        compared += 1;
    }
    eprintln!(
        "compared {compared} scenarios; {fewer} stored fewer states; {states_reduced} states against {states_full}; \
         {by_one} explored by one transition"
    );
    assert!(compared >= 25, "compared {compared}");
    assert!(fewer >= 10 && by_one > 0, "persistent sets saved nothing: {fewer} {by_one}");
}

/// The persistent set of a task's start does not depend on the search order (a start lies on
/// no cycle, so it needs no proviso that does): several workers store the states one stores.
#[test]
fn persistent_sets_of_starts_store_the_same_states_on_several_workers() {
    let mut compared = 0;
    for c in cases().iter().filter(|c| c.full.complete).rev().take(12) {
        let one = explore(&c.spec, PERSISTENT);
        let two = c.spec.explore(ENGINE, &Options { reduce: PERSISTENT, workers: 2, ..Options::default() });
        assert!(differ(&two, &one).is_none(), "{}: {:?}", c.rel, differ(&two, &one));
        compared += usize::from(one.complete);
    }
    assert!(compared >= 10, "compared {compared}");
}

/// Persistent sets of starts in every explorer, `progress` too: every shipped configuration of
/// the stateful engine (its own invariants, its own reductions) with them and without gives the
/// same verdict, invariants, coverage and counterexample length, with at most the states. A
/// fair cycle never goes through a state where a task has not started (the task is enabled
/// there and never moves), so no livelock is lost (docs/model.md, "Persistent sets").
#[test]
fn persistent_sets_change_no_verdict_of_a_shipped_stateful_configuration_progress_too() {
    let engine_of = |sc: &scenario::Scenario| sc.engines.iter().copied().find(|e| matches!(e, Engine::Stateful { .. }));
    let files: Vec<_> = common::shipped_small(32).into_iter().filter(|(_, sc)| engine_of(sc).is_some()).collect();
    let outs = common::par_map(&files, |(rel, sc)| {
        let engine = engine_of(sc).expect("stateful");
        let with = sc.reduce.unwrap_or_default();
        let on =
            sc.spec.explore(engine, &Options { reduce: Reduce { persistent: true, ..with }, ..Options::default() });
        let off =
            sc.spec.explore(engine, &Options { reduce: Reduce { persistent: false, ..with }, ..Options::default() });
        (rel.clone(), sc.spec.invariants().contains(&"progress"), on, off)
    });
    let (mut compared, mut progress, mut fewer, mut livelocks) = (0, 0, 0, 0);
    for (rel, checks_progress, on, off) in &outs {
        if let Some(why) = differ_fewer(on, off) {
            panic!("{rel}: persistent sets changed the outcome: {why}");
        }
        let (s_on, s_off) = (on.stats.expect("stats"), off.stats.expect("stats"));
        if on.complete && s_on.states < s_off.states {
            fewer += 1;
            assert!(s_on.persistent && s_on.persistent_states > 0, "{rel}: {s_on:?}");
        }
        compared += 1;
        progress += usize::from(*checks_progress);
        livelocks += usize::from(common::found_invariants(on).contains("progress"));
    }
    eprintln!("compared {compared} configurations ({progress} checking progress, {livelocks} livelocks found); {fewer} stored fewer states");
    assert!(compared >= 80 && progress >= 20 && livelocks >= 5, "{compared} {progress} {livelocks}");
    assert!(fewer >= 5, "persistent sets saved states on only {fewer}");
}

/// A persistent set that forgets to ask whether the task is still at its start (the task runs
/// alone from then on) is caught by the comparison above, `progress` included: on the
/// shipped configurations smallest first, one gives another outcome than the search without
/// persistent sets (the kill counts: the defect ran, and the outcome changed).
#[test]
fn a_persistent_set_that_takes_a_started_task_alone_is_caught() {
    let engine_of = |sc: &scenario::Scenario| sc.engines.iter().copied().find(|e| matches!(e, Engine::Stateful { .. }));
    let mut caught = None;
    for (rel, sc) in common::shipped_small(32) {
        let Some(engine) = engine_of(&sc) else { continue };
        let with = sc.reduce.unwrap_or_default();
        let off =
            sc.spec.explore(engine, &Options { reduce: Reduce { persistent: false, ..with }, ..Options::default() });
        let defect = Some(ReductionDefect::PersistentStartsForever);
        let seeded = sc
            .spec
            .explore(engine, &Options { reduce: Reduce { persistent: true, defect, ..with }, ..Options::default() });
        if !seeded.stats.is_some_and(|s| s.persistent) {
            continue;
        }
        if let Some(why) = differ_fewer(&seeded, &off) {
            caught = Some(format!("{rel}: {why}"));
            break;
        }
    }
    eprintln!("{caught:?}");
    assert!(caught.is_some(), "no configuration told the defect from the search without persistent sets");
}

/// A kswapd whose reclaim loop never ends (the liveness mutant: it yields for ever, the one
/// place the models yield) beside a direct reclaimer and the flusher, whose lost wake-up does
/// not need kswapd: the full search finds it, safety-only.
const YIELDING: &str = r#"
model = "kswapd-stall"
variant = "directcongest-v1"
mutation = "kswapd-infinite-loop"

[[thread]]
role = "kswapd"
node = 0

[[thread]]
role = "direct-reclaim"
node = 0
tags_congested = true

[[thread]]
role = "bdi"

[params]
timeout = "any-time"

[explore]
engine = "stateful"

[check]
invariants = ["no-lost-wakeup"]

[expect]
verdict = "violation"
invariant = "no-lost-wakeup"
"#;

/// Without the cycle proviso, the yielding kswapd's persistent set goes back to the state it
/// left, and hides the other tasks' transitions from every state of its loop (the ignoring
/// problem): the lost wake-up is missed. With the proviso (the yield goes back to a stored
/// state, so the state is explored in full) it is found. The kill counts: the defect ran, and
/// the outcome changed.
#[test]
fn a_persistent_set_without_the_cycle_proviso_is_caught() {
    let spec = scenario::parse(Path::new("yielding.toml"), YIELDING).expect("the yielding scenario parses").spec;
    let full = explore(&spec, Reduce::NONE);
    assert!(full.complete || full.found.is_some());
    assert!(common::found_invariants(&full).contains("no-lost-wakeup"));
    let reduced = explore(&spec, PERSISTENT);
    assert!(differ_fewer(&reduced, &full).is_none(), "{:?}", differ_fewer(&reduced, &full));
    let seeded = explore(&spec, Reduce { defect: Some(ReductionDefect::PersistentWithoutProviso), ..PERSISTENT });
    let st = seeded.stats.expect("stats");
    assert!(st.persistent && st.persistent_states > 0, "{st:?}");
    let why = differ_fewer(&seeded, &full);
    eprintln!("{why:?}");
    assert!(why.is_some(), "the search without the proviso found what the full search finds");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn por_agrees_with_the_full_search_on_generated_configurations(text in common::generated_kswapd_config(&["stall-twice", "release-without-wake", "store-not-cmpxchg", "balanced-keeps-exclusive", "wake-before-reset"])) {
        let Some(sc) = common::parse_generated(&text) else { return Ok(()) };
        let safe = safety_only(&text, &sc.spec);
        let spec = scenario::parse(Path::new("generated.toml"), &safe).expect("safety-only parses").spec;
        let full = explore(&spec, Reduce::NONE);
        let reduced = explore(&spec, POR);
        prop_assert_eq!(reduced.stats.expect("stats").reductions, "por");
        prop_assert!(differ(&reduced, &full).is_none(), "{}\n{:?}", safe, differ(&reduced, &full));
        let persistent = explore(&spec, PERSISTENT);
        prop_assert!(differ_fewer(&persistent, &full).is_none(), "{}\n{:?}", safe, differ_fewer(&persistent, &full));
        // Every answer given for inert events, checked by running both orders.
        let checked = spec.explore(ENGINE, &Options { reduce: POR, check_inert: true, ..Options::default() });
        prop_assert_eq!(checked.stats.expect("stats").inert_disagreements, 0, "{}", safe);
    }
}

/// A reduction never turns an `incomplete` into a pass: a state budget that stops the full
/// search stops the reduced one too (it stores the same states), and neither completes.
#[test]
fn a_state_budget_stops_the_reduced_search_as_it_stops_the_full_one() {
    let c = cases().iter().rev().find(|c| c.full.found.is_none()).expect("a passing case");
    let budget = c.full.stats.expect("stats").states / 2;
    let engine = Engine::Stateful { max_states: Some(budget), memory: Memory::Sc };
    for reduce in [Reduce::NONE, POR, Reduce::default()] {
        let o = c.spec.explore(engine, &Options { reduce, ..Options::default() });
        let st = o.stats.expect("stats");
        assert!(!o.complete && o.found.is_none(), "{}: {reduce:?} completed under a budget of {budget}", c.rel);
        assert_eq!(st.stopped_by, Some("state budget (max_states)"), "{}: {reduce:?}", c.rel);
    }
}
