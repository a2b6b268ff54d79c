//! Snapshots change nothing but the cost of a transition (docs/model.md, "Snapshots").
//!
//! * Every shipped scenario with at most 6 threads and 150,000 states, searched by the stateful engine with
//!   snapshots and without (the same other reductions): the same completeness, states,
//!   transitions, executions, coverage counts, violations counted and first violations, and
//!   the same counterexample. The depth-first search is the same search either way; only how
//!   it goes back to a state differs, so every figure must be equal, not just the verdict.
//!   The files that check a lasso invariant (`no-soft-lockup`) are among them: their search
//!   records the state graph (the search of one worker) and snapshots too.
//! * The same with a snapshot budget of one byte, on the files with up to 50,000 states: the
//!   search keeps only its first snapshot and goes back to every other state by restoring that
//!   one and replaying the path from it.
//! * The mutant self-tests: `ReductionDefect::SnapshotForgetsGhost` (a restore leaves the online
//!   monitors as the last execution left them) and `SnapshotForgetsObjects` (a restore leaves
//!   the shared objects' values) each change the outcome of shipped scenarios, and the
//!   comparison above catches them; the first also on the files that check a lasso invariant.
//!   `SnapshotForgetsImageLocals` (under symmetry, a restore leaves each task's local hash
//!   under each image of the group) changes the outcome of symmetric files.

use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario;

mod common;

const ENGINE: Engine = Engine::Stateful { max_states: Some(150_000), memory: Memory::Sc };

/// Why the two outcomes differ, if they do.
fn differ(snap: &Outcome, replay: &Outcome) -> Option<String> {
    let (s, r) = (snap.stats.expect("stateful stats"), replay.stats.expect("stateful stats"));
    let key = |o: &Outcome, st: &mmcheck::engine::StateStats| {
        format!(
            "error {:?}, complete {}, states {}, transitions {}, executions {}, found {:?}, violated {:?}, first {:?}, coverage {:?}",
            o.error,
            o.complete,
            st.states,
            st.transitions,
            o.executions,
            o.found.as_ref().map(|f| (f.trace.len(), format!("{:?}", f.replay))),
            o.violated,
            o.first_violation,
            o.coverage,
        )
    };
    let (a, b) = (key(snap, &s), key(replay, &r));
    (a != b).then(|| format!("snapshots: {a}\nreplays:   {b}"))
}

fn explore(sc: &scenario::Scenario, reduce: Reduce, cap: Option<usize>) -> Outcome {
    sc.spec.explore(ENGINE, &Options { reduce, snapshot_cap: cap, ..Options::default() })
}

#[test]
fn snapshots_change_no_figure_of_a_shipped_scenario() {
    // Each file's searches are independent of every other file's: on every core. Per file:
    // whether it was compared, checks a lasso invariant, and was compared with a tight budget.
    let files = common::shipped_small(6);
    let results = common::par_map(&files, |(rel, sc)| -> Option<(bool, bool)> {
        // Whether snapshots apply is known before the search.
        let probe = sc.spec.explore(Engine::Stateful { max_states: Some(1), memory: Memory::Sc }, &Options::default());
        if probe.stats.expect("stateful stats").snapshot_not_applied.is_some() {
            return None;
        }
        let on = explore(sc, Reduce::default(), None);
        let st = on.stats.expect("stateful stats");
        if st.snapshot_not_applied.is_some() {
            return None;
        }
        assert!(st.reductions.contains("snapshot"), "{rel}: {}", st.reductions);
        if !on.complete && on.found.is_none() {
            // Larger than the budget: the replaying search of the same part would take minutes.
            return None;
        }
        assert_eq!(st.replayed_steps, 0, "{rel}: a search with every snapshot replays nothing");
        let off = explore(sc, Reduce { snapshot: false, ..Reduce::default() }, None);
        if let Some(why) = differ(&on, &off) {
            panic!("{rel}: snapshots changed the search:\n{why}");
        }
        // A lasso invariant's search records the graph (the one-worker search) and snapshots.
        let lasso = sc.spec.invariants().contains(&"no-soft-lockup");
        if st.states <= 50_000 {
            let tight = explore(sc, Reduce::default(), Some(1));
            let tst = tight.stats.expect("stateful stats");
            assert!(
                tst.restores == 0 || tst.replayed_steps > 0,
                "{rel}: with a one-byte budget, going back replays from the first snapshot"
            );
            if let Some(why) = differ(&tight, &off) {
                panic!("{rel}: snapshots with a one-byte budget changed the search:\n{why}");
            }
        }
        Some((lasso, st.states <= 50_000))
    });
    let compared = results.iter().flatten().count();
    let lasso = results.iter().flatten().filter(|(l, _)| *l).count();
    let capped = results.iter().flatten().filter(|(_, c)| *c).count();
    eprintln!(
        "compared {compared} scenarios ({lasso} checking a lasso invariant), {capped} of them with a one-byte snapshot budget too"
    );
    assert!(compared >= 40 && capped >= 30 && lasso >= 10, "compared {compared}, capped {capped}, lasso {lasso}");
}

/// The seeded defect changes the outcome of at least `want` shipped scenarios (it is caught by
/// the comparison above), and breaks nothing else.
fn defect_is_caught(defect: ReductionDefect, want: usize) {
    defect_is_caught_on(defect, want, false)
}

/// [`defect_is_caught`] on the files that check a lasso invariant only (when `lasso_only`): the
/// one-worker search that records the graph for them snapshots too.
fn defect_is_caught_on(defect: ReductionDefect, want: usize, lasso_only: bool) {
    let mut caught = Vec::new();
    for (rel, sc) in common::shipped_small(6) {
        if lasso_only && !sc.spec.invariants().contains(&"no-soft-lockup") {
            continue;
        }
        let probe = sc.spec.explore(Engine::Stateful { max_states: Some(1), memory: Memory::Sc }, &Options::default());
        if probe.stats.expect("stateful stats").snapshot_not_applied.is_some() {
            continue;
        }
        let seeded = explore(&sc, Reduce { defect: Some(defect), ..Reduce::default() }, None);
        if seeded.stats.expect("stateful stats").snapshot_not_applied.is_some()
            || (!seeded.complete && seeded.found.is_none())
        {
            continue;
        }
        let off = explore(&sc, Reduce { snapshot: false, ..Reduce::default() }, None);
        if differ(&seeded, &off).is_some() {
            caught.push(rel);
        }
        if caught.len() >= want {
            break;
        }
    }
    eprintln!("{defect:?} changed: {caught:?}");
    assert!(caught.len() >= want, "{defect:?} changed only {caught:?}");
}

/// Under symmetry a snapshot holds each task's local hash under each image of the group; a
/// restore that leaves them as the last execution left them changes the search of symmetric
/// files (the comparison above runs them with symmetry on both sides).
#[test]
fn a_restore_that_forgets_the_image_hashes_is_caught() {
    defect_is_caught(ReductionDefect::SnapshotForgetsImageLocals, 3);
}

#[test]
fn a_restore_that_forgets_the_ghost_is_caught() {
    defect_is_caught(ReductionDefect::SnapshotForgetsGhost, 5);
}

#[test]
fn a_restore_that_forgets_the_objects_is_caught() {
    defect_is_caught(ReductionDefect::SnapshotForgetsObjects, 5);
}

// (`SnapshotForgetsObjects` on these files leaves the CPU's run queue and the tasks' states
// inconsistent, and the runtime stops on an impossible choice: a panic, not a figure to compare.)
#[test]
fn a_restore_that_forgets_the_ghost_is_caught_where_a_lasso_is_checked() {
    defect_is_caught_on(ReductionDefect::SnapshotForgetsGhost, 3, true);
}
