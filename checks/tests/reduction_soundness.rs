//! The stateful engine's reductions change no verdict, and symmetry is exact (docs/model.md,
//! "Symmetry").
//!
//! * Every shipped scenario with at most 6 threads, searched by the stateful engine with its
//!   default reductions and with none: the same completeness, the same invariants violated (or
//!   the same first violation's invariant, where a violation stops the search), the same
//!   coverage events reached, and a counterexample no longer than the unreduced one.
//! * Generated kswapd-stall configurations (proptest), symmetric and asymmetric (different
//!   batches per kswapd, an allocator on one node, a direct reclaimer, seeded mutants, both
//!   timer models): reduced against unreduced, the same verdict on every case.
//! * The exact oracle, on a shipped scenario and three generated ones: the unreduced search's
//!   states, each canonicalised under the group (`Options::orbit_census`), fall into as many
//!   orbits as the reduced search stores states, and every image of a reachable state is
//!   reachable (683 states for 683 orbits of 1,333 states on
//!   recheck-2kswapd-writer-stateful.toml; `cargo test --release -p mmcheck --test
//!   reduction_soundness -- exact --nocapture` prints every case).
//! * The mutant self-tests: the seeded defect `ReductionDefect::SymmetryForgetsNodeObjects`
//!   (every image leaves `pgdat[n]` in place) changes no verdict, but it changes the reduced
//!   search (737 states against 683 there) and the exact oracle fails on every case (1,171 of
//!   1,333 images unreached there); so does `SymmetryJoinsInOrder` (the body's joins one after
//!   another, as before the fix: 1,111 states stored, 925 of 1,411 images unreached).
//!   `SymmetrySortsWaitLists` (a wait queue's list renamed into pid order) is caught on three
//!   kswapds, where the model declares the group of the three (the lists keep list order, which
//!   the images rename entry by entry).
//! * The sorted canonical form (docs/model.md, "Symmetry") against the least over every element
//!   of the group: the same states and transitions on every symmetric configuration; the seeded
//!   defects `SymmetrySignatureOwnLocal` and `SymmetrySignatureRawOp` (a signature whose local
//!   hash, or whose pending operation, a renaming changes) make the exact oracle find more
//!   states stored than orbits.
//! * The monitor projection (docs/model.md, "Monitor projection"): every shipped scenario of up
//!   to 6 threads with each invariant it checks alone and with its whole list, with and without
//!   the projection, under sequential consistency and (the files written for it) `lkmm`: the
//!   same outcome, never more states (1,673 cases, 225 of them with fewer states); the seeded
//!   defect `ProjectionDropsReadParts` makes the same comparison fail.

use std::path::Path;

use mmcheck::engine::{Engine, Explore, Memory, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario;
use proptest::prelude::*;

mod common;

use common::oracle::{self, exact_oracle, opts, symmetric_cases, ENGINE};

/// The search these reductions are compared with: none of them, but with the models'
/// live-locals declarations, which stateful_soundness.rs compares on their own (with them a
/// counterexample's schedule is never longer, but its printed rows can be: so each reduction is
/// held to its own comparison).
const UNREDUCED: Reduce = Reduce { live_locals: true, ..Reduce::NONE };

/// Why the reduced outcome is not the unreduced one's, if it is not.
fn differ(reduced: &Outcome, full: &Outcome) -> Option<String> {
    if reduced.error.is_some() || full.error.is_some() {
        return Some(format!("errors: {:?} / {:?}", reduced.error, full.error));
    }
    // A reduced search may complete where the full one ran out of its state budget (that is
    // what a reduction is for); never the other way round.
    if full.complete && !reduced.complete {
        return Some(format!("complete: {} / {}", reduced.complete, full.complete));
    }
    if !full.complete && full.found.is_none() {
        return None;
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
    if reduced.complete && common::reached(reduced) != common::reached(full) {
        return Some(format!("coverage: {:?} / {:?}", common::reached(reduced), common::reached(full)));
    }
    None
}

#[test]
fn symmetry_changes_no_verdict_of_a_shipped_scenario() {
    let (mut compared, mut reduced_ones) = (0, 0);
    for (rel, sc) in common::shipped_small(6) {
        compared += 1;
        // Whether any reduction applies is known before the search: where none does, the
        // reduced search is the unreduced one and there is nothing to compare.
        // (Snapshots are compared in snapshot_soundness.rs.)
        let probe =
            sc.spec.explore(Engine::Stateful { max_states: Some(1), memory: Memory::Sc }, &opts(Reduce::default()));
        if !probe.stats.expect("stateful stats").reductions.contains("symmetry")
            && !probe.stats.expect("stateful stats").reductions.contains("por")
        {
            continue;
        }
        let reduced = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        let st = reduced.stats.expect("stateful stats");
        if st.reductions == "none" {
            // No reduction applied after all (symmetry refuted for a component): the search
            // was the unreduced one.
            continue;
        }
        let full = sc.spec.explore(ENGINE, &opts(UNREDUCED));
        if let Some(why) = differ(&reduced, &full) {
            panic!("{rel}: symmetry changed the outcome: {why}");
        }
        if st.symmetry_group > 1 {
            reduced_ones += 1;
            let fs = full.stats.expect("stateful stats");
            if reduced.complete {
                assert!(st.states <= fs.states, "{rel}: {} states reduced, {} not", st.states, fs.states);
            }
        }
    }
    eprintln!("compared {compared} scenarios, {reduced_ones} of them reduced by symmetry");
    assert!(compared >= 40 && reduced_ones >= 5, "compared {compared}, reduced {reduced_ones}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn symmetry_agrees_with_the_full_search_on_generated_configurations(text in common::generated_kswapd_config(&["stall-twice", "release-without-wake", "store-not-cmpxchg", "balanced-keeps-exclusive"])) {
        let Some(sc) = common::parse_generated(&text) else { return Ok(()) };
        let reduced = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        if reduced.stats.expect("stateful stats").reductions == "none" {
            // No reduction applied (no two kswapds interchangeable): the search was the
            // unreduced one.
            return Ok(());
        }
        let full = sc.spec.explore(ENGINE, &opts(UNREDUCED));
        prop_assert!(differ(&reduced, &full).is_none(), "{}\n{:?}", text, differ(&reduced, &full));
    }
}

#[test]
fn symmetry_stores_exactly_one_state_per_reachable_orbit() {
    oracle::symmetry_stores_exactly_one_state_per_reachable_orbit();
}

/// The mutant self-test of the exact oracle: with `defect` seeded, on every symmetric case,
/// the reduced search stores a different number of states than without it (the defect ran and
/// changed the search), the oracle fails, and without the defect it holds. Neither seeded
/// defect changes a verdict (the comparisons above do not see them): this is what catches them.
fn assert_the_exact_oracle_catches(defect: ReductionDefect) {
    assert_the_exact_oracle_catches_on(defect, |_| true);
}

/// The same on the symmetric cases `on` names.
fn assert_the_exact_oracle_catches_on(defect: ReductionDefect, on: impl Fn(&str) -> bool) {
    let seeded_reduce = Reduce { defect: Some(defect), ..Reduce::default() };
    let (mut killed, mut cases) = (0, 0);
    for (name, sc) in symmetric_cases().into_iter().filter(|(n, _)| on(n)) {
        let clean = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        let seeded = sc.spec.explore(ENGINE, &opts(seeded_reduce));
        let (c, s) = (clean.stats.expect("stats").states, seeded.stats.expect("stats").states);
        assert_ne!(c, s, "{name}: {defect:?} changed nothing ({c} states either way)");
        assert!(
            exact_oracle(&sc, Reduce::default()).is_some_and(|r| r.is_ok()),
            "{name}: the oracle fails without the defect"
        );
        match exact_oracle(&sc, seeded_reduce) {
            Some(Err(why)) => {
                eprintln!("{name}: {defect:?} ({s} states against {c}) is caught: {why}");
                killed += 1;
            }
            other => panic!("{name}: {defect:?} was not caught: {other:?}"),
        }
        cases += 1;
    }
    assert!(cases > 0, "no case for {defect:?}");
    assert_eq!(killed, cases);
}

/// Every image leaves `pgdat[n]` in place while it moves node `n`'s kswapd: the reduction
/// merges fewer states (weaker, not unsound), and many images are unreachable.
#[test]
fn the_exact_oracle_catches_the_seeded_symmetry_defect() {
    assert_the_exact_oracle_catches(ReductionDefect::SymmetryForgetsNodeObjects);
}

/// The body joins the others one after another and its final reads are scheduling points, as
/// before `Platform::join_all`: the defect the oracle first found (docs/model.md, "Symmetry").
#[test]
fn the_exact_oracle_catches_joins_in_a_fixed_order() {
    assert_the_exact_oracle_catches(ReductionDefect::SymmetryJoinsInOrder);
}

/// A wait queue's list renamed into pid order (the wake order the model had before its lists
/// kept list order, which no renaming of the kswapds preserved: the census of
/// `recheck-3kswapd-writer-anytime-stateful.toml` then found 223,560 unreached images of its
/// 533,109 states, so the model declared no symmetry with more than two kswapds).
#[test]
fn the_exact_oracle_catches_wait_lists_renamed_into_pid_order() {
    assert_the_exact_oracle_catches_on(ReductionDefect::SymmetrySortsWaitLists, |name| name.starts_with("3 kswapds"));
}

/// The sorted canonical form (docs/model.md, "The sorted canonical form") is the same
/// reduction as the least fingerprint over every element of the group: on every shipped
/// scenario of up to 6 threads that symmetry reduces, and on the generated symmetric cases,
/// the two store the same number of states, take the same transitions and reach the same
/// outcome. (The exact oracle, above, runs with the sorted form: it stores one state per
/// orbit.)
#[test]
fn the_sorted_canonical_form_stores_what_every_image_stores() {
    let every_image = Reduce { sorted_symmetry: false, ..Reduce::default() };
    let mut compared = 0;
    for (name, sc) in common::shipped_small(6).into_iter().chain(symmetric_cases()) {
        let sorted = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        let st = sorted.stats.expect("stateful stats");
        if st.symmetry_group < 2 {
            continue;
        }
        let all = sc.spec.explore(ENGINE, &opts(every_image));
        let at = all.stats.expect("stateful stats");
        assert_eq!(
            (st.states, st.transitions, sorted.complete),
            (at.states, at.transitions, all.complete),
            "{name}: the sorted canonical form against every image"
        );
        if let Some(why) = differ(&sorted, &all) {
            panic!("{name}: the sorted canonical form changed the outcome: {why}");
        }
        compared += 1;
    }
    eprintln!("compared the two canonical forms on {compared} symmetric configurations");
    assert!(compared >= 8, "compared {compared}");
}

/// The mutant self-test of the sorted canonical form: a task's signature taken from its own
/// local hash (which a renaming of what it read changes) sorts two states of one orbit
/// differently, and the exact oracle finds more states stored than orbits.
#[test]
fn the_exact_oracle_catches_a_signature_that_a_renaming_changes() {
    assert_the_exact_oracle_catches_on(ReductionDefect::SymmetrySignatureOwnLocal, |_| true);
}

/// The same for the other half of a task's signature: its pending operation's own code (an
/// unpark of a renamed task, an access to a renamed node's object) instead of the least code
/// over the group.
#[test]
fn the_exact_oracle_catches_an_operation_code_that_a_renaming_changes() {
    assert_the_exact_oracle_catches_on(ReductionDefect::SymmetrySignatureRawOp, |_| true);
}

/// With three kswapds the model declares the group of the three, and it is exact.
#[test]
fn three_kswapds_are_interchangeable() {
    oracle::three_kswapds_are_interchangeable();
}

#[test]
fn no_symmetry_for_a_kswapd_on_the_body_task() {
    oracle::no_symmetry_for_a_kswapd_on_the_body_task();
}

/// Under the kernel's memory model a cycle in which kcompactd keeps reading a stale
/// `NR_ISOLATED` is not a livelock (docs/model.md, "The kernel's memory model in the stateful
/// engine", Liveness): the fair-cycle pass leaves transitions that read a stale store out of
/// the components it searches. The seeded defect `FairnessIgnoresStaleReads` keeps them in, and
/// the same file then reports `progress` (the false livelock loom reports on weak memory).
#[test]
fn under_lkmm_a_cycle_of_stale_reads_is_no_livelock_and_the_seeded_defect_reports_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/reclaim-throttle/kthread-resched-kcompactd-drain-none.toml");
    let sc = scenario::load(&path).expect("shipped file");
    let engine = Engine::Stateful { max_states: Some(2_000_000), memory: Memory::Lkmm };
    let clean = sc.spec.explore(engine, &opts(Reduce::default()));
    assert!(clean.error.is_none(), "{:?}", clean.error);
    assert!(clean.complete && clean.found.is_none(), "clean lkmm search: {:?}", clean.violated);
    let seeded_reduce = Reduce { defect: Some(ReductionDefect::FairnessIgnoresStaleReads), ..Reduce::default() };
    let seeded = sc.spec.explore(engine, &opts(seeded_reduce));
    assert!(
        seeded.violated.contains_key("progress"),
        "FairnessIgnoresStaleReads was not caught: {:?}",
        seeded.violated
    );
}

// ---------------------------------------------------------------- the monitor projection

/// The cases of the monitor projection's comparison: every shipped scenario of at most 6
/// threads with each invariant it checks alone, and with its whole list, under sequential
/// consistency; and the files written for `lkmm` again under it.
type Case = (String, std::sync::Arc<dyn mmcheck::spec::AnySpec>, Engine);

fn projection_cases() -> Vec<Case> {
    let lkmm = Engine::Stateful { max_states: Some(100_000), memory: Memory::Lkmm };
    let mut out = Vec::new();
    for (rel, sc) in common::shipped_small(6) {
        let all = sc.spec.invariants();
        let mut engines = vec![(PROJECTION_ENGINE, "")];
        if sc.engines.iter().any(|e| matches!(e, Engine::Stateful { memory: Memory::Lkmm, .. })) {
            engines.push((lkmm, " lkmm"));
        }
        for (engine, tag) in engines {
            for inv in &all {
                let spec = sc.spec.with_invariants(&[inv]).expect("its own invariant");
                out.push((format!("{rel} [{inv}]{tag}"), spec, engine));
            }
            out.push((format!("{rel} [all {}]{tag}", all.len()), sc.spec.clone(), engine));
        }
    }
    out
}

/// The comparison's state budget: the 1,600-odd searches of each test below fit in a minute
/// or two on two cores (a search that stops at it without a violation is not compared).
const PROJECTION_ENGINE: Engine = Engine::Stateful { max_states: Some(100_000), memory: Memory::Sc };

/// One case with the projection (under `defect`, if any) and without it: the outcomes' first
/// difference (`differ`), the states each stored (0 where a search did not complete), and
/// whether the projection left anything out.
fn projection_compared(
    spec: &std::sync::Arc<dyn mmcheck::spec::AnySpec>,
    engine: Engine,
    defect: Option<ReductionDefect>,
) -> (Option<String>, u64, u64, bool) {
    let on = spec.explore(engine, &opts(Reduce { defect, ..Reduce::default() }));
    let off = spec.explore(engine, &opts(Reduce { projection: false, ..Reduce::default() }));
    let states = |o: &Outcome| if o.complete { o.stats.expect("stateful stats").states } else { 0 };
    (differ(&on, &off), states(&on), states(&off), on.stats.expect("stateful stats").projection)
}

/// The monitor projection (docs/model.md, "Monitor projection") against the same search
/// without it, on every shipped scenario of up to six threads with each invariant it checks
/// alone and with its whole list: the same completeness, invariants violated, coverage, and a
/// counterexample no longer; never more states. `cargo test --release -p mmcheck --test
/// reduction_soundness -- projection --nocapture` prints the cases it reduced.
#[test]
fn the_monitor_projection_changes_no_verdict_with_any_invariant_alone() {
    let cases = projection_cases();
    let results = common::par_map(&cases, |(_, spec, engine)| projection_compared(spec, *engine, None));
    let (mut applied, mut fewer) = (0, 0);
    for ((name, ..), (why, on, off, projected)) in cases.iter().zip(&results) {
        if let Some(why) = why {
            panic!("{name}: the monitor projection changed the outcome: {why}");
        }
        assert!(on <= off || *off == 0, "{name}: {on} states projected, {off} not");
        applied += *projected as usize;
        if on < off {
            fewer += 1;
            eprintln!("{name}: {on} states projected, {off} not");
        }
    }
    let lkmm = cases.iter().filter(|(_, _, e)| matches!(e, Engine::Stateful { memory: Memory::Lkmm, .. })).count();
    eprintln!(
        "{} cases ({lkmm} under lkmm), the projection left something out in {applied}, fewer states in {fewer}",
        cases.len()
    );
    assert!(
        cases.len() >= 200 && lkmm >= 20 && applied >= 100 && fewer >= 20,
        "{} cases ({lkmm} under lkmm), {applied} applied, {fewer} fewer",
        cases.len()
    );
}

/// The seeded defect `ProjectionDropsReadParts` clears every part of the monitors that an
/// invariant reads, checked or not: the same comparison then fails, on the cases where a
/// cleared part decides a violation.
#[test]
fn the_monitor_projection_comparison_catches_a_projection_that_drops_a_part_a_monitor_reads() {
    let cases = projection_cases();
    let results = common::par_map(&cases, |(_, spec, engine)| {
        projection_compared(spec, *engine, Some(ReductionDefect::ProjectionDropsReadParts))
    });
    let caught: Vec<String> = cases
        .iter()
        .zip(&results)
        .filter_map(|((name, ..), (why, ..))| why.as_ref().map(|w| format!("{name}: {w}")))
        .collect();
    for c in &caught {
        eprintln!("caught: {c}");
    }
    assert!(caught.len() >= 5, "the seeded projection defect was caught on {} cases only", caught.len());
}
