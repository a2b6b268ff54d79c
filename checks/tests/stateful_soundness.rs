//! The stateful engine's loop summaries are sound: on every shipped scenario, the search with
//! the models' loop summaries reaches the same verdict and the same coverage events as the
//! search that keeps every task's whole history in the state, wherever the latter ends. And the
//! stateful engine agrees with the verdict every file expects from its own engine (loom or
//! shuttle), but for the ordering bugs only loom's weak-memory model shows.
//!
//! A summary replaces a task's history at a loop head (docs/model.md, "Loop summaries, and
//! why they are sound"). If one left out a value the loop carries across iterations, two loop
//! heads with different futures would be merged, and the summarised search could miss a state
//! the history-only search reaches: a violation, or a coverage event. The history-only search
//! does not end where a loop can run for ever (that is what the summaries are for), so it runs
//! with a state budget and is compared only where it completes.

use std::collections::BTreeSet;

use std::path::Path;

use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario::{self, ExpectVerdict};
use proptest::prelude::*;

mod common;

/// What a search concluded: the invariants violated and the coverage events reached.
fn summary(o: &Outcome) -> (BTreeSet<&'static str>, BTreeSet<&'static str>) {
    let violated = o.violated.keys().copied().collect();
    let reached = o.coverage.iter().filter(|(_, &n)| n > 0).map(|(k, _)| *k).collect();
    (violated, reached)
}

#[test]
fn loop_summaries_merge_no_states_with_different_futures() {
    // A file with `variants` is one scenario per variant.
    let files = common::shipped();
    // Each file's two searches are independent of every other file's: on every core.
    let compared_or_skipped = common::par_map(&files, |(rel, sc)| -> Result<(), String> {
        if sc.spec.tasks() > 6 {
            // The large randomised configurations: too many states for a whole-history search.
            return Err(sc.name.clone());
        }
        // A pass scenario's searches explore everything; a violation scenario's stop at the
        // first violation of the invariant it expects.
        let engine = Engine::Stateful { max_states: Some(150_000), memory: Memory::Sc };
        let history = sc.spec.explore(engine, &Options { history_only: true, ..Options::default() });
        if !history.complete && history.found.is_none() {
            return Err(sc.name.clone());
        }
        let summarised = sc.spec.explore(engine, &Options::default());
        let (hv, hr) = summary(&history);
        let (sv, sr) = summary(&summarised);
        // A stopped search has seen a part: what it saw must be seen by the other too.
        if history.complete && summarised.complete {
            assert_eq!(hv, sv, "{rel}: invariants violated");
            assert_eq!(hr, sr, "{rel}: coverage events reached");
        } else {
            assert_eq!(history.found.is_some(), summarised.found.is_some(), "{rel}: violation found");
        }
        // The stateful engine agrees with every other engine's verdict on the file (its
        // expectation), but where only a weak-memory outcome shows the violation.
        let weak_memory_only = sc.spec.mutation().is_some_and(|m| m.starts_with("no-barrier"));
        match sc.expect.verdict {
            ExpectVerdict::Pass => {
                assert!(summarised.complete && summarised.found.is_none(), "{rel}: expected a pass: {:?}", sv);
                for r in &sc.expect.reaches {
                    assert!(sr.contains(r), "{rel}: the stateful search never reached {r}");
                }
            }
            ExpectVerdict::Violation if weak_memory_only => {
                assert!(summarised.found.is_none(), "{rel}: an ordering bug cannot show under sequential consistency")
            }
            ExpectVerdict::Violation => {
                let want = sc.expect.invariant.expect("a violation names its invariant");
                let f = summarised.found.as_ref().unwrap_or_else(|| panic!("{rel}: expected a violation of {want}"));
                assert!(f.violations.iter().any(|v| v.invariant == want), "{rel}: {:?}", f.violations);
            }
        }
        // (The summaries may also store more states than the histories: a summary may hash a
        // value that is shared state, such as the compactor's own fatal-signal flag, which only
        // refines the state.)
        Ok(())
    });
    let compared = compared_or_skipped.iter().filter(|r| r.is_ok()).count();
    let skipped: Vec<&String> = compared_or_skipped.iter().filter_map(|r| r.as_ref().err()).collect();
    eprintln!("compared {compared} scenarios; not compared (history-only search too large): {skipped:?}");
    assert!(compared >= 40, "only {compared} scenarios compared");
}

/// The helper the soundness suites run their comparisons with: results in the items' order,
/// and a failed comparison on any thread fails the test (it is not lost with its thread).
#[test]
fn par_map_keeps_the_order_and_fails_with_a_failed_item() {
    let items: Vec<u64> = (0..200).collect();
    assert_eq!(common::par_map(&items, |&i| i * i), items.iter().map(|i| i * i).collect::<Vec<_>>());
    let failed = std::panic::catch_unwind(|| {
        common::par_map(&items, |&i| assert!(i != 137, "item {i} failed"));
    });
    assert!(failed.is_err(), "a panic in one item was lost");
}

/// The search with the reduction `live-locals` against the same search without it: the same
/// completeness, invariants, coverage events and (where a violation stops both) first
/// violation, a counterexample no longer, and never more states. `None` if they agree.
fn live_locals_differ(on: &Outcome, off: &Outcome) -> Option<String> {
    if on.error.is_some() || off.error.is_some() {
        return Some(format!("errors: {:?} / {:?}", on.error, off.error));
    }
    if off.complete && !on.complete {
        return Some("complete without live locals only".into());
    }
    if !off.complete && off.found.is_none() {
        return None;
    }
    if on.found.is_some() != off.found.is_some() {
        return Some(format!("violation found: {} / {}", on.found.is_some(), off.found.is_some()));
    }
    if common::found_invariants(on) != common::found_invariants(off) {
        return Some(format!("invariants: {:?} / {:?}", common::found_invariants(on), common::found_invariants(off)));
    }
    if let (Some(a), Some(b)) = (&on.found, &off.found) {
        // The length of a counterexample is its schedule's, the scheduling steps the
        // breadth-first pass minimises. (Its rows are events: a step that runs a loop until the
        // checker stops it emits as many as the iterations it took the loop summaries to
        // repeat, and the summaries reached through a declaration can repeat one iteration
        // later: `stall-until-free` with 2 kswapds, writer and allocator gives 27 steps and 623
        // rows with live locals, 32 steps and 622 rows without.)
        let steps = |f: &mmcheck::engine::Found| match &f.replay {
            mmcheck::engine::Replay::Schedule { choices, .. } => choices.len(),
            mmcheck::engine::Replay::Execution(_) => unreachable!("the stateful engine replays schedules"),
        };
        if steps(a) > steps(b) {
            return Some(format!("counterexample of {} steps, longer than {}", steps(a), steps(b)));
        }
    }
    if on.complete && off.complete {
        if common::reached(on) != common::reached(off) {
            return Some(format!("coverage: {:?} / {:?}", common::reached(on), common::reached(off)));
        }
        let (a, b) = (on.stats.expect("stateful stats").states, off.stats.expect("stateful stats").states);
        if on.found.is_none() && a > b {
            return Some(format!("{a} states with live locals, {b} without"));
        }
    }
    None
}

fn with_live_locals(live_locals: bool, defect: Option<ReductionDefect>) -> Options {
    Options { reduce: Reduce { live_locals, defect, ..Reduce::default() }, ..Options::default() }
}

const LIVE_ENGINE: Engine = Engine::Stateful { max_states: Some(400_000), memory: Memory::Sc };

/// `live-locals` (docs/model.md, "Live locals") changes no outcome of a shipped scenario of a
/// model that declares live locals, and stores fewer states on most of them. (Each is also
/// compared with the history-only search by `loop_summaries_merge_no_states_with_different_futures`,
/// which runs the default reductions.)
#[test]
fn live_locals_change_no_outcome_of_a_shipped_scenario() {
    let files: Vec<_> =
        common::shipped_small(6).into_iter().filter(|(_, sc)| sc.spec.model().name() == "kswapd-stall").collect();
    let results = common::par_map(&files, |(rel, sc)| {
        let on = sc.spec.explore(LIVE_ENGINE, &with_live_locals(true, None));
        let off = sc.spec.explore(LIVE_ENGINE, &with_live_locals(false, None));
        assert!(on.stats.expect("stateful stats").live_locals, "{rel}: live locals not reported");
        assert!(!off.stats.expect("stateful stats").live_locals, "{rel}: live locals reported when off");
        if let Some(why) = live_locals_differ(&on, &off) {
            panic!("{rel}: live locals changed the outcome: {why}");
        }
        let (a, b) = (on.stats.expect("stateful stats").states, off.stats.expect("stateful stats").states);
        on.complete && off.complete && a < b
    });
    let fewer = results.iter().filter(|&&f| f).count();
    eprintln!("compared {} kswapd-stall scenarios, {fewer} with fewer states", files.len());
    assert!(files.len() >= 20 && fewer >= 10, "compared {}, fewer states on {fewer}", files.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
    /// The same on generated kswapd-stall configurations (asymmetric batches, an allocator, a
    /// direct reclaimer, seeded mutants, both timer models).
    #[test]
    fn live_locals_agree_with_the_search_without_them_on_generated_configurations(text in common::generated_kswapd_config(&["stall-twice", "release-without-wake", "store-not-cmpxchg", "exclusive-keeps-lock", "stall-until-free"])) {
        let Some(sc) = common::parse_generated(&text) else { return Ok(()) };
        let on = sc.spec.explore(LIVE_ENGINE, &with_live_locals(true, None));
        let off = sc.spec.explore(LIVE_ENGINE, &with_live_locals(false, None));
        prop_assert!(live_locals_differ(&on, &off).is_none(), "{}\n{:?}", text, live_locals_differ(&on, &off));
    }
}

/// The exact oracle of `live-locals`, on `sc` with `defect` seeded or not: the search that does
/// not apply the declarations, with the fingerprint each state would have if they were applied
/// (`Options::live_census`), against the search that applies them (both without symmetry and
/// partial-order reduction). Sound declarations merge only states with the same future, so the
/// second stores exactly one state per distinct fingerprint of the first. Returns (states with
/// live locals, distinct census fingerprints, states of the census search), or `None` where a
/// search did not complete or stopped at a violation.
fn live_oracle(sc: &scenario::Scenario, defect: Option<ReductionDefect>) -> Option<(u64, u64, u64)> {
    live_oracle_under(sc, defect, Memory::Sc)
}

/// [`live_oracle`] under memory model `memory`.
fn live_oracle_under(
    sc: &scenario::Scenario,
    defect: Option<ReductionDefect>,
    memory: Memory,
) -> Option<(u64, u64, u64)> {
    let engine = Engine::Stateful { max_states: Some(400_000), memory };
    let reduce =
        Reduce { symmetry: false, por: false, persistent: false, live_locals: true, defect, ..Reduce::default() };
    let census = sc.spec.explore(engine, &Options { live_census: true, reduce, ..Options::default() });
    let live = sc.spec.explore(engine, &Options { reduce, ..Options::default() });
    assert!(census.error.is_none() && live.error.is_none(), "{:?} / {:?}", census.error, live.error);
    if !census.complete || !live.complete || census.found.is_some() || live.found.is_some() {
        return None;
    }
    let (cs, ls) = (census.stats.expect("stateful stats"), live.stats.expect("stateful stats"));
    Some((ls.states, cs.live_census.expect("a census"), cs.states))
}

/// The exact oracle holds on every shipped kswapd-stall scenario that passes, and the
/// declarations merge states on most of them.
#[test]
fn live_locals_store_exactly_one_state_per_distinct_live_state() {
    let files: Vec<_> =
        common::shipped_small(6).into_iter().filter(|(_, sc)| sc.spec.model().name() == "kswapd-stall").collect();
    let results = common::par_map(&files, |(rel, sc)| {
        let r = live_oracle(sc, None);
        if let Some((live, distinct, all)) = r {
            assert_eq!(
                live, distinct,
                "{rel}: {live} states with live locals, {distinct} distinct live states of {all}"
            );
        }
        r.map(|(live, _, all)| (rel.clone(), live, all))
    });
    let checked: Vec<_> = results.into_iter().flatten().collect();
    let merged = checked.iter().filter(|(_, live, all)| live < all).count();
    eprintln!("exact oracle of live-locals: {checked:?}");
    assert!(checked.len() >= 10 && merged >= 8, "checked {}, merged on {merged}", checked.len());
}

/// The mutant self-test of the exact oracle: `ReductionDefect::LiveLocalsForgetContext` (a
/// declaration that leaves out what the task did before the enclosing function: for a kswapd,
/// which batch it is in). No shipped verdict or coverage changes with it, nor the oracle on a
/// shipped scenario: there the shared state tells the batches apart. With two kswapds of two
/// batches, timer any-time, it merges a state in which kswapd A holds tree_lock in its first
/// batch and B waits in its second with the state where the two are the other way round, and
/// the oracle sees the states the merge loses.
#[test]
fn the_live_locals_oracle_catches_a_declaration_that_forgets_the_context() {
    let cases: Vec<(String, scenario::Scenario)> = [None, Some(0)]
        .into_iter()
        .map(|allocator| {
            let text = common::kswapd_config(&[(2, true), (2, true)], allocator, None, "recheck", None, true);
            let sc = scenario::parse(Path::new("generated.toml"), &text).expect("a generated configuration");
            (format!("2 kswapds of 2 batches, any-time, allocator {allocator:?}"), sc)
        })
        .collect();
    let results = common::par_map(&cases, |(what, sc)| {
        let sound = live_oracle(sc, None).expect("the search completes");
        assert_eq!(sound.0, sound.1, "{what}: {sound:?}");
        let (live, distinct, _) = live_oracle(sc, Some(ReductionDefect::LiveLocalsForgetContext)).expect("completes");
        eprintln!(
            "{what}: without the defect {} states for {} live states; with it {live} for {distinct}",
            sound.0, sound.1
        );
        live != distinct
    });
    assert!(results.iter().all(|&caught| caught), "the exact oracle missed the seeded defect: {results:?}");
}

/// Under the kernel's memory model (`--memory lkmm`) the declarations reset the same local
/// hashes, and the memory's stores and views are in the fingerprint on their own: on the
/// kswapd-stall files written for `lkmm` and the smallest `sc` ones, run under `lkmm`, the
/// searches with and without live locals agree (the barrier mutants' violations included), and
/// where they pass, the exact oracle holds.
#[test]
fn under_lkmm_live_locals_change_no_outcome_and_the_oracle_holds() {
    let files: Vec<_> = common::shipped_small(6)
        .into_iter()
        .filter(|(rel, sc)| {
            sc.spec.model().name() == "kswapd-stall"
                && (rel.contains("-lkmm") || rel.ends_with("recheck-2kswapd-writer-stateful.toml"))
        })
        .collect();
    let engine = Engine::Stateful { max_states: Some(100_000), memory: Memory::Lkmm };
    let results = common::par_map(&files, |(rel, sc)| {
        let on = sc.spec.explore(engine, &with_live_locals(true, None));
        let off = sc.spec.explore(engine, &with_live_locals(false, None));
        if let Some(why) = live_locals_differ(&on, &off) {
            panic!("{rel} under lkmm: live locals changed the outcome: {why}");
        }
        let decided = (on.complete || on.found.is_some()) && (off.complete || off.found.is_some());
        let oracle = live_oracle_under(sc, None, Memory::Lkmm);
        if let Some((live, distinct, all)) = oracle {
            assert_eq!(
                live, distinct,
                "{rel} under lkmm: {live} states with live locals, {distinct} live states of {all}"
            );
        }
        (rel.clone(), decided, on.found.is_some(), oracle)
    });
    let decided = results.iter().filter(|r| r.1).count();
    let violations = results.iter().filter(|r| r.1 && r.2).count();
    let oracles = results.iter().filter(|r| r.3.is_some()).count();
    eprintln!("under lkmm: {decided} decided ({violations} violations), the oracle on {oracles}: {results:?}");
    assert!(
        decided >= 3 && violations >= 2 && oracles >= 2,
        "decided {decided}, violations {violations}, oracle {oracles}"
    );
}
