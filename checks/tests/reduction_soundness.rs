//! The stateful engine's reductions change no verdict (docs/model.md, "Symmetry").
//!
//! * Every shipped scenario with at most 6 threads, searched by the stateful engine with its
//!   default reductions and with none: the same completeness, the same invariants violated (or
//!   the same first violation's invariant, where a violation stops the search), the same
//!   coverage events reached, and a counterexample no longer than the unreduced one.
//! * Generated kswapd-stall configurations (proptest), symmetric and asymmetric (different
//!   batches per kswapd, an allocator on one node, a direct reclaimer, seeded mutants, both
//!   timer models): reduced against unreduced, the same verdict on every case.
//! * Not yet shown: that these comparisons catch a seeded defect in the reduction. The defect
//!   (`ReductionDefect::SymmetryForgetsNodeObjects`: every image leaves `pgdat[n]` in place)
//!   changed no verdict of a shipped scenario; see docs/model.md, "Symmetry".

use std::collections::BTreeSet;
use std::path::Path;

use mmcheck::engine::{Engine, Options, Outcome, Reduce};
use mmcheck::scenario;
use proptest::prelude::*;

mod common;

fn reached(o: &Outcome) -> BTreeSet<&'static str> {
    o.coverage.iter().filter(|(_, &n)| n > 0).map(|(k, _)| *k).collect()
}

fn found_invariants(o: &Outcome) -> BTreeSet<&'static str> {
    o.found.as_ref().map(|f| f.violations.iter().map(|v| v.invariant).collect()).unwrap_or_default()
}

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
    if found_invariants(reduced) != found_invariants(full) {
        return Some(format!("invariants: {:?} / {:?}", found_invariants(reduced), found_invariants(full)));
    }
    if let (Some(r), Some(f)) = (&reduced.found, &full.found) {
        if r.trace.len() > f.trace.len() {
            return Some(format!("counterexample of {} rows, longer than {}", r.trace.len(), f.trace.len()));
        }
    }
    if reduced.complete && reached(reduced) != reached(full) {
        return Some(format!("coverage: {:?} / {:?}", reached(reduced), reached(full)));
    }
    None
}

const ENGINE: Engine = Engine::Stateful { max_states: Some(400_000) };

fn opts(reduce: Reduce) -> Options {
    Options { reduce, ..Options::default() }
}

#[test]
fn symmetry_changes_no_verdict_of_a_shipped_scenario() {
    let (mut compared, mut reduced_ones) = (0, 0);
    for f in scenario::collect_files(&common::scenarios_dir()).unwrap() {
        if f.components().any(|c| c.as_os_str() == "heavy") {
            continue;
        }
        let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
        if sc.spec.tasks() > 6 {
            continue;
        }
        let rel = f.strip_prefix(common::scenarios_dir()).unwrap_or(Path::new("?")).display().to_string();
        let full = sc.spec.explore(ENGINE, &opts(Reduce::NONE));
        let reduced = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        if let Some(why) = differ(&reduced, &full) {
            panic!("{rel}: symmetry changed the outcome: {why}");
        }
        let st = reduced.stats.expect("stateful stats");
        if st.symmetry_group > 1 {
            reduced_ones += 1;
            let fs = full.stats.expect("stateful stats");
            if reduced.complete {
                assert!(st.states <= fs.states, "{rel}: {} states reduced, {} not", st.states, fs.states);
            }
        }
        compared += 1;
    }
    eprintln!("compared {compared} scenarios, {reduced_ones} of them reduced by symmetry");
    assert!(compared >= 40 && reduced_ones >= 5, "compared {compared}, reduced {reduced_ones}");
}

/// A kswapd-stall scenario of the given kswapds (batches, balances), extras and parameters.
fn config(
    kswapds: &[(u32, bool)],
    allocator: Option<usize>,
    direct: Option<usize>,
    variant: &str,
    mutation: Option<&str>,
    anytime: bool,
) -> String {
    let mut t = format!("model = \"kswapd-stall\"\nvariant = \"{variant}\"\n");
    if let Some(m) = mutation {
        t += &format!("mutation = \"{m}\"\n");
    }
    for (n, (batches, balances)) in kswapds.iter().enumerate() {
        t += &format!("\n[[thread]]\nrole = \"kswapd\"\nnode = {n}\nbatches = {batches}\nbalances = {balances}\n");
    }
    if let Some(n) = direct {
        t += &format!("\n[[thread]]\nrole = \"direct-reclaim\"\nnode = {n}\n");
    }
    t += "\n[[thread]]\nrole = \"writer\"\n";
    if let Some(n) = allocator {
        t += &format!("\n[[thread]]\nrole = \"allocator\"\nnode = {n}\n");
    }
    t += &format!("\n[params]\ntimeout = \"{}\"\n", if anytime { "any-time" } else { "never" });
    t += "\n[explore]\nengine = \"stateful\"\n\n[expect]\nverdict = \"pass\"\n";
    t
}

fn kswapds() -> impl Strategy<Value = Vec<(u32, bool)>> {
    prop::collection::vec((1u32..=2, prop::bool::weighted(0.8)), 2..=3)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn symmetry_agrees_with_the_full_search_on_generated_configurations(
        ks in kswapds(),
        allocator in prop::option::of(0usize..3),
        direct in prop::option::weighted(0.2, 0usize..3),
        variant in prop::sample::select(vec!["waitqueue-v1", "directcongest-v1", "recheck"]),
        mutation in prop::option::weighted(0.3, prop::sample::select(vec!["stall-twice", "release-without-wake", "store-not-cmpxchg", "balanced-keeps-exclusive"])),
        anytime in any::<bool>(),
    ) {
        let allocator = allocator.filter(|&n| n < ks.len());
        let direct = direct.filter(|&n| n < ks.len());
        let text = config(&ks, allocator, direct, variant, mutation, anytime);
        let Ok(sc) = scenario::parse(Path::new("generated.toml"), &text) else {
            // A mutation that does not apply to the configuration: nothing to compare.
            return Ok(());
        };
        let full = sc.spec.explore(ENGINE, &opts(Reduce::NONE));
        let reduced = sc.spec.explore(ENGINE, &opts(Reduce::default()));
        prop_assert!(differ(&reduced, &full).is_none(), "{}\n{:?}", text, differ(&reduced, &full));
    }
}

#[test]
#[ignore]
fn orbit_census_diagnostic() {
    let f = common::scenarios_dir().join("kswapd-stall/recheck-2kswapd-writer-stateful.toml");
    let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
    let census = sc.spec.explore(ENGINE, &Options { orbit_census: true, ..opts(Reduce::default()) });
    let reduced = sc.spec.explore(ENGINE, &opts(Reduce::default()));
    let full = sc.spec.explore(ENGINE, &opts(Reduce::NONE));
    eprintln!("census {:?}", census.stats);
    eprintln!("reduced {:?}", reduced.stats);
    eprintln!("full {:?}", full.stats);
}
