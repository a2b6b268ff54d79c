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

use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome};
use mmcheck::scenario::ExpectVerdict;

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
