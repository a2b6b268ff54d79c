//! `--workers N` (docs/model.md, "Many workers"): the stateful engine's search on several
//! threads sharing one visited table changes no verdict of a shipped file (every file of the
//! stateful engine whole, and the smaller ones of the other engines) and, where the search
//! completes, stores exactly the states one worker stores (the set of reachable states, or under symmetry of
//! their orbits, does not depend on who explores what; partial-order reduction visits every
//! state too). `progress` is decided by a fair-cycle pass over the graph the workers record.
//!
//! The workers search their jobs by snapshots (a job replays its schedule once); a restore that
//! forgets the online monitors (`ReductionDefect::SnapshotForgetsGhost`) is caught here too.
//! Two seeded defects in the parallel search show these tests can fail: a job market that
//! loses a transition it hands over (`ReductionDefect::WorkersLoseGivenTransition`: states
//! are missed), and workers that record only the transitions into new states
//! (`ReductionDefect::WorkersRecordTreeEdgesOnly`: the graph has no cycle, so a livelock
//! passes). A third, in a worker's cache of states it found stored lately: a cache that does
//! not compare fingerprints (`ReductionDefect::WorkersRecentIgnoresKey`) takes new states for
//! stored ones, and fewer states are stored. Under `lkmm` the comparison holds too
//! (`under_lkmm_workers_store_the_states_one_worker_stores`). States closed on the fly (on no
//! cycle, so their transitions are not recorded) keep every cycle, and a close that skips the
//! transitions back up a worker's path (`ReductionDefect::WorkersCloseSkipsEarlierStates`) is
//! caught, and so is one that closes a state two workers shared
//! (`ReductionDefect::WorkersCloseSplitStates`).

use std::collections::BTreeSet;

use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario::{self, Scenario};

mod common;

/// The budget of the sweep over the shipped scenarios that name another engine (the files that
/// name the stateful engine are searched whole).
const ENGINE: Engine = Engine::Stateful { max_states: Some(5_000), memory: Memory::Sc };

fn explore(sc: &Scenario, workers: usize, defect: Option<ReductionDefect>) -> Outcome {
    explore_with(ENGINE, sc, workers, defect)
}

fn explore_with(engine: Engine, sc: &Scenario, workers: usize, defect: Option<ReductionDefect>) -> Outcome {
    let reduce = Reduce { defect, ..sc.reduce.unwrap_or_default() };
    sc.spec.explore(engine, &Options { workers, reduce, ..Options::default() })
}

fn reached(o: &Outcome) -> BTreeSet<&'static str> {
    o.coverage.iter().filter(|(_, &n)| n > 0).map(|(k, _)| *k).collect()
}

/// Why the outcome with several workers is not the one with one, if it is not.
fn differ(many: &Outcome, one: &Outcome) -> Option<String> {
    if many.error.is_some() || one.error.is_some() {
        return Some(format!("errors: {:?} / {:?}", many.error, one.error));
    }
    if many.found.is_some() != one.found.is_some() {
        return Some(format!("violation found: {} / {}", many.found.is_some(), one.found.is_some()));
    }
    if common::found_invariants(many) != common::found_invariants(one) {
        return Some(format!("invariants: {:?} / {:?}", common::found_invariants(many), common::found_invariants(one)));
    }
    if many.complete != one.complete {
        return Some(format!("complete: {} / {}", many.complete, one.complete));
    }
    let (m, o) = (many.stats.expect("stats"), one.stats.expect("stats"));
    if many.complete && (m.states != o.states || reached(many) != reached(one)) {
        return Some(format!("states {} / {}, coverage {:?} / {:?}", m.states, o.states, reached(many), reached(one)));
    }
    None
}

/// Every shipped file that names the stateful engine, searched whole, and every other shipped
/// scenario of at most 6 threads whose one-worker search ends within [`ENGINE`]'s budget, with
/// that outcome.
fn cases() -> Vec<(String, Scenario, Outcome)> {
    // The one-worker searches, on every core.
    let files = common::shipped_small(32);
    let ones = common::par_map(&files, |(_, sc)| {
        let engine = sc.engines.iter().copied().find(|e| matches!(e, Engine::Stateful { .. }));
        match engine {
            Some(engine) => Some(explore_with(engine, sc, 1, None)),
            None if sc.spec.tasks() <= 6 => Some(explore(sc, 1, None)),
            None => None,
        }
    });
    files
        .into_iter()
        .zip(ones)
        .filter_map(|((rel, sc), one)| one.filter(|o| o.complete || o.found.is_some()).map(|one| (rel, sc, one)))
        .collect()
}

#[test]
fn several_workers_change_no_verdict_and_store_the_same_states() {
    let (mut compared, mut complete, mut progress, mut shared) = (0, 0, 0, 0);
    let (mut stateful, mut states, mut snapshotted, mut closed) = (0, 0, 0, 0);
    for (rel, sc, one) in cases() {
        let engine = sc.engines.iter().copied().find(|e| matches!(e, Engine::Stateful { .. }));
        stateful += usize::from(engine.is_some());
        states += one.stats.map_or(0, |s| s.states);
        // Three workers on the smaller ones (the market is busier with more of them).
        let three = one.stats.is_some_and(|s| s.states < 10_000);
        for workers in if three { vec![2, 3] } else { vec![2] } {
            let many = explore_with(engine.unwrap_or(ENGINE), &sc, workers, None);
            if let Some(why) = differ(&many, &one) {
                panic!("{rel}: {workers} workers: {why}");
            }
            let st = many.stats.expect("stats");
            assert_eq!(st.workers, workers, "{rel}");
            // States closed on the fly are on no cycle: the pass, where it ran (a safety
            // violation stops the search before it), trims them.
            if st.cycle_pass_seconds > 0.0 {
                assert!(st.closed_on_the_fly <= st.cycle_pass_trimmed, "{rel}");
            }
            closed += st.closed_on_the_fly;
            if many.complete && st.worker_states_min > 0 {
                shared += 1;
                // The workers searched their jobs by snapshots (docs/model.md, "Snapshots").
                snapshotted += usize::from(st.reductions.contains("snapshot") && st.restores > 0);
            }
        }
        compared += 1;
        complete += usize::from(one.complete);
        progress += usize::from(sc.spec.invariants().contains(&"progress"));
    }
    eprintln!(
        "{compared} scenarios ({stateful} of the stateful engine, {complete} complete, {progress} checking progress, \
         {states} states); {shared} runs where every worker stored states, {snapshotted} of them by snapshots; \
         {closed} states closed on the fly"
    );
    assert!(closed > 0, "no state was closed on the fly");
    assert!(snapshotted >= 20, "only {snapshotted} shared searches took snapshots");
    assert!(compared >= 40 && complete >= 20 && progress >= 20, "{compared} {complete} {progress}");
    // One per configuration: a file with `variants` counts once per variant.
    assert_eq!(stateful, 88, "every shipped configuration of the stateful engine is compared");
    assert!(shared > 0, "no search was ever shared between workers");
}

/// The state budget stops the parallel search as it stops one worker: `incomplete`, never a
/// pass.
#[test]
fn a_state_budget_stops_every_worker() {
    let sc = scenario::load(&common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml"))
        .unwrap();
    let o = sc.spec.explore(
        Engine::Stateful { max_states: Some(5_000), memory: Memory::Sc },
        &Options { workers: 2, ..Options::default() },
    );
    assert!(!o.complete && o.found.is_none() && o.error.is_none(), "{:?}", o.error);
    let st = o.stats.expect("stats");
    assert_eq!(st.stopped_by, Some("state budget (max_states)"));
    assert!(st.states >= 5_000 && st.states < 5_100, "{}", st.states);
}

/// A job market that loses work misses states: the comparison above catches it.
#[test]
fn a_market_that_loses_a_given_transition_is_caught() {
    let sc =
        scenario::load(&common::scenarios_dir().join("kswapd-stall/recheck-direct-reclaim-bdi-stateful.toml")).unwrap();
    let engine = Engine::Stateful { max_states: Some(250_000), memory: Memory::Sc };
    let one = explore_with(engine, &sc, 1, None);
    assert!(one.complete);
    let bad = explore_with(engine, &sc, 2, Some(ReductionDefect::WorkersLoseGivenTransition));
    let why = differ(&bad, &one).expect("the seeded defect went unnoticed");
    assert!(why.contains("states"), "{why}");
}

/// Workers whose restores forget the online monitors' state (`SnapshotForgetsGhost`, the
/// snapshot self-test's defect) store other states than one worker: the comparison catches it,
/// so the workers' snapshots are under test too.
#[test]
fn workers_whose_restores_forget_the_ghost_are_caught() {
    let sc =
        scenario::load(&common::scenarios_dir().join("kswapd-stall/recheck-direct-reclaim-bdi-stateful.toml")).unwrap();
    let engine = Engine::Stateful { max_states: Some(250_000), memory: Memory::Sc };
    let one = explore_with(engine, &sc, 1, None);
    assert!(one.complete);
    let good = explore_with(engine, &sc, 2, None);
    assert_eq!(differ(&good, &one), None);
    let bad = explore_with(engine, &sc, 2, Some(ReductionDefect::SnapshotForgetsGhost));
    assert!(bad.stats.expect("stats").restores > 0, "the workers took no snapshot");
    differ(&bad, &one).expect("the seeded defect went unnoticed");
}

/// Workers that record only the edges into new states see no cycle: the livelock of a shipped
/// scenario is missed, and the comparison catches it.
#[test]
fn a_graph_without_its_back_edges_is_caught() {
    let mut caught = Vec::new();
    for rel in ["compaction/finishcontend-v3-fatal-loop.toml", "mutants/kswapd-stall/kswapd-infinite-loop.toml"] {
        let path = common::scenarios_dir().join(rel);
        let sc = scenario::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let one = explore(&sc, 1, None);
        assert!(common::found_invariants(&one).contains("progress"), "{rel}: {:?}", common::found_invariants(&one));
        let good = explore(&sc, 2, None);
        assert_eq!(differ(&good, &one), None, "{rel}");
        // The pass's trim leaves the cycle and what it reaches.
        let st = good.stats.expect("stats");
        assert!(st.cycle_pass_trimmed < st.states, "{rel}: {} of {} trimmed", st.cycle_pass_trimmed, st.states);
        let bad = explore(&sc, 2, Some(ReductionDefect::WorkersRecordTreeEdgesOnly));
        if let Some(why) = differ(&bad, &one) {
            caught.push(format!("{rel}: {why}"));
        }
        // A graph of the transitions into new states only is a tree: trimmed whole.
        let st = bad.stats.expect("stats");
        assert_eq!(st.cycle_pass_trimmed, st.states, "{rel}");
    }
    assert_eq!(caught.len(), 2, "{caught:?}");
}

/// Closing states on the fly (docs/model.md, "Many workers"): a worker that leaves a state
/// whose every transition leads to a closed state closes it, and the pass never sees its
/// transitions. On two files with a livelock, the workers close most states and still find the
/// cycle one worker finds. The seeded defect `ReductionDefect::WorkersCloseSkipsEarlierStates`
/// takes a transition back to a state the same worker stored earlier for one into a closed
/// state: the states of a cycle one worker explored are closed, and the livelock is missed.
#[test]
fn states_closed_on_the_fly_keep_every_cycle_and_a_close_that_skips_back_edges_is_caught() {
    let (mut caught, mut closed) = (Vec::new(), 0);
    for rel in ["compaction/finishcontend-v3-fatal-loop.toml", "mutants/kswapd-stall/kswapd-infinite-loop.toml"] {
        let path = common::scenarios_dir().join(rel);
        let sc = scenario::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let one = explore(&sc, 1, None);
        assert!(common::found_invariants(&one).contains("progress"), "{rel}");
        assert_eq!(one.stats.expect("stats").closed_on_the_fly, 0, "{rel}: one worker closes nothing");
        let good = explore(&sc, 2, None);
        assert_eq!(differ(&good, &one), None, "{rel}");
        // A closed state is on no cycle: the pass trims it. (The kswapd file's every state
        // reaches its cycle: none closes there.)
        let st = good.stats.expect("stats");
        eprintln!(
            "{rel}: {} closed on the fly, {} trimmed, {} states",
            st.closed_on_the_fly, st.cycle_pass_trimmed, st.states
        );
        assert!(st.closed_on_the_fly <= st.cycle_pass_trimmed, "{rel}");
        closed += st.closed_on_the_fly;
        // Who explores what depends on timing: a cycle whose states two workers stored has no
        // transition back to a state of the same worker's, and the defect does not apply to it.
        // Ten tries (one catches it on a quiet machine).
        let why =
            (0..10).find_map(|_| differ(&explore(&sc, 2, Some(ReductionDefect::WorkersCloseSkipsEarlierStates)), &one));
        if let Some(why) = why {
            caught.push(format!("{rel}: {why}"));
        }
    }
    assert_eq!(caught.len(), 2, "{caught:?}");
    assert!(closed > 0, "no state was closed on the fly");
}

/// The seeded defect `ReductionDefect::WorkersCloseSplitStates` closes a state whose
/// transitions two workers shared (one gave the other a job there) on the transitions one of
/// them took: the other's are lost with its row, and the livelock's counterexample (or the
/// livelock) with them. Whether a job is given where it matters depends on timing: two and
/// three workers, up to fifty tries each (a few milliseconds a try).
#[test]
fn a_state_closed_on_the_transitions_one_worker_took_of_a_shared_state_is_caught() {
    let rel = "compaction/finishcontend-v3-fatal-loop.toml";
    let sc = scenario::load(&common::scenarios_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let one = explore(&sc, 1, None);
    let mut tries = 0;
    let caught = [2, 3].iter().find_map(|&workers| {
        (0..50).find_map(|_| {
            tries += 1;
            differ(&explore(&sc, workers, Some(ReductionDefect::WorkersCloseSplitStates)), &one)
        })
    });
    eprintln!("{rel}: caught after {tries} tries: {caught:?}");
    assert!(caught.is_some(), "{rel}: the seeded defect changed nothing in {tries} tries");
}

/// A worker's cache of the states it found stored lately answers for the shared table without
/// its lock; one that does not compare fingerprints takes new states for known ones, and the
/// comparison with one worker catches it (fewer states, or a fair cycle through merged states
/// whose counterexample does not replay: an error, where the runtime once panicked). Without
/// the defect the cache is hit and the states are one worker's. (The file checks every
/// invariant, `progress` among them, so the workers record the graph and number its states.)
#[test]
fn a_recent_cache_that_ignores_its_key_is_caught() {
    let sc = scenario::load(&common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml"))
        .unwrap();
    let engine = Engine::Stateful { max_states: None, memory: Memory::Sc };
    let one = explore_with(engine, &sc, 1, None);
    assert!(one.complete);
    let good = explore_with(engine, &sc, 2, None);
    assert_eq!(differ(&good, &one), None);
    let bad = explore_with(engine, &sc, 2, Some(ReductionDefect::WorkersRecentIgnoresKey));
    let why = differ(&bad, &one).expect("the seeded defect went unnoticed");
    let replay = why.contains("counterexample does not replay");
    assert!(replay || why.contains("states") || why.contains("invariants") || why.contains("violation"), "{why}");
    eprintln!("caught: {why}");
}

/// Under the kernel's memory model too, several workers store exactly the states one worker
/// stores (and so does a second run of them), on the files written for `lkmm` and on a
/// 2-kswapd file run under it. This failed while the memory's hash left out a finished task's
/// views, which the task that joins it takes: two states with different futures shared a
/// fingerprint, and the states a search stored depended on which path reached them first
/// (one worker stored 390,049 states of `waitqueue-v1-untagged-no-stall-stateful`, two
/// workers 390,089 to 390,167, a different count each run; docs/model.md, "What `lkmm` leaves
/// out").
#[test]
fn under_lkmm_workers_store_the_states_one_worker_stores() {
    let engine = Engine::Stateful { max_states: Some(2_000_000), memory: Memory::Lkmm };
    let files = [
        "kswapd-stall/recheck-congestion-tagged-lkmm.toml",
        "kswapd-stall/waitqueue-v1-untagged-no-stall-stateful.toml",
        "mutants/kswapd-stall/no-barrier-after-clear-congested-tagged-lkmm.toml",
        "reclaim-throttle/isolated-wake-lkmm.toml",
        "kswapd-stall/recheck-2kswapd-writer-stateful.toml",
    ];
    for rel in files {
        let sc = scenario::load(&common::scenarios_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let one = explore_with(engine, &sc, 1, None);
        assert!(one.complete || one.found.is_some(), "{rel}: undecided");
        for round in 0..2 {
            let two = explore_with(engine, &sc, 2, None);
            assert_eq!(differ(&two, &one), None, "{rel}, two workers, round {round}");
        }
    }
}

/// One search with Tarjan's algorithm keeps a cache of the states it visited lately too
/// (`table::Recent`, with their indices); one that does not compare fingerprints
/// (`ReductionDefect::RecentIgnoresKey`) makes one worker store fewer states than two, and the
/// comparison catches it.
#[test]
fn a_one_search_cache_that_ignores_its_key_is_caught() {
    let sc = scenario::load(&common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml"))
        .unwrap();
    let engine = Engine::Stateful { max_states: None, memory: Memory::Sc };
    let two = explore_with(engine, &sc, 2, None);
    assert!(two.complete);
    assert_eq!(differ(&two, &explore_with(engine, &sc, 1, None)), None);
    let bad = explore_with(engine, &sc, 1, Some(ReductionDefect::RecentIgnoresKey));
    let why = differ(&two, &bad).expect("the seeded defect went unnoticed");
    assert!(why.contains("states") || why.contains("invariants") || why.contains("violation"), "{why}");
}
