//! The exact oracle of the stateful engine's symmetry reduction (docs/model.md, "Symmetry"),
//! shared by the reduction soundness suite (checks/tests/reduction_soundness.rs) and by the
//! test cargo-mutants runs (checks/tests/mutants.rs: a model's `symmetry()` declaration is
//! protocol-side code that no verdict depends on).

use std::path::Path;

use mmcheck::engine::{Engine, Explore, Memory, Options, Reduce};
use mmcheck::scenario;

pub const ENGINE: Engine = Engine::Stateful { max_states: Some(400_000), memory: Memory::Sc };

pub fn opts(reduce: Reduce) -> Options {
    Options { reduce, ..Options::default() }
}

pub const ORACLE_ENGINE: Engine = Engine::Stateful { max_states: Some(2_000_000), memory: Memory::Sc };

/// The exact oracle of the symmetry reduction on `sc` under `reduce`: the unreduced search's
/// states, canonicalised under the group (a census), map onto each other (every image of a
/// reachable state is reachable: the group is made of automorphisms of the state graph), and
/// the reduced search stores exactly one state per orbit the census counts. Returns the
/// reduced search's states and the census's orbits and states, or why the oracle fails;
/// `None` where no symmetry applies or a search did not complete.
pub fn exact_oracle(sc: &scenario::Scenario, reduce: Reduce) -> Option<Result<(u64, u64, u64), String>> {
    // Persistent sets store fewer states than the orbits of the whole graph (por_soundness.rs
    // compares them on their own): the oracle holds symmetry alone to its count.
    let reduce = Reduce { persistent: false, ..reduce };
    let census = sc.spec.explore(ORACLE_ENGINE, &Options { orbit_census: true, ..opts(reduce) });
    let reduced = sc.spec.explore(ORACLE_ENGINE, &opts(reduce));
    let (cs, rs) = (census.stats?, reduced.stats?);
    let c = cs.orbit_census.expect("a census");
    if c.group < 2 || !census.complete || !reduced.complete || rs.symmetry_not_applied.is_some() {
        return None;
    }
    if c.images_unreached > 0 {
        return Some(Err(format!(
            "{} of the {} images of the {} reachable states are not reachable (the group is not one of automorphisms)",
            c.images_unreached,
            cs.states * (c.group as u64 - 1),
            cs.states
        )));
    }
    if rs.states != c.orbits {
        return Some(Err(format!("the reduced search stores {} states for {} reachable orbits", rs.states, c.orbits)));
    }
    Some(Ok((rs.states, c.orbits, cs.states)))
}

/// Symmetric configurations the exact oracle is checked on: a shipped scenario and generated
/// ones (both timer models, one and two batches).
pub fn symmetric_cases() -> Vec<(String, scenario::Scenario)> {
    let f = super::scenarios_dir().join("kswapd-stall/recheck-2kswapd-writer-stateful.toml");
    let mut cases =
        vec![("recheck-2kswapd-writer-stateful".to_string(), scenario::load(&f).unwrap_or_else(|e| panic!("{e}")))];
    let generated = [
        (
            "2 kswapds of 2 batches, recheck, any-time",
            super::kswapd_config(&[(2, true); 2], None, None, "recheck", None, true),
        ),
        (
            "2 kswapds of 2 batches, recheck, never",
            super::kswapd_config(&[(2, true); 2], None, None, "recheck", None, false),
        ),
        ("2 kswapds, recheck, any-time", super::kswapd_config(&[(1, true); 2], None, None, "recheck", None, true)),
        // Three kswapds: two losers can sleep on kswapd_contended_wait together, and the
        // wake-up walks the list in its order, which the images rename entry by entry.
        ("3 kswapds, recheck, never", super::kswapd_config(&[(1, true); 3], None, None, "recheck", None, false)),
    ];
    for (name, text) in generated {
        cases.push((
            name.to_string(),
            scenario::parse(Path::new("generated.toml"), &text).unwrap_or_else(|e| panic!("{e}")),
        ));
    }
    cases
}

/// On every symmetric case the oracle holds: symmetry applies, and it is exact.
pub fn symmetry_stores_exactly_one_state_per_reachable_orbit() {
    for (name, sc) in symmetric_cases() {
        match exact_oracle(&sc, Reduce::default()) {
            Some(Ok((reduced, orbits, states))) => {
                eprintln!("{name}: {reduced} states reduced, {orbits} orbits of {states} states")
            }
            Some(Err(why)) => panic!("{name}: {why}"),
            None => panic!("{name}: no symmetry applied, or a search did not complete"),
        }
    }
}

/// With three kswapds (two of them can sleep on `kswapd_contended_wait` together) the model
/// declares the group of the three, and the exact oracle holds on the shipped file.
pub fn three_kswapds_are_interchangeable() {
    let f = super::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml");
    let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
    let st = sc.spec.explore(ENGINE, &opts(Reduce::default())).stats.expect("stats");
    assert_eq!(st.symmetry_group, 6, "{st:?}");
    match exact_oracle(&sc, Reduce::default()) {
        Some(Ok((reduced, orbits, states))) => {
            eprintln!(
                "recheck-3kswapd-writer-anytime-stateful: {reduced} states reduced, {orbits} orbits of {states} states"
            )
        }
        other => panic!("recheck-3kswapd-writer-anytime-stateful: {other:?}"),
    }
}

/// A kswapd on the last thread (the body task, which also boots the kernel and joins the
/// others) is in no orbit: with two kswapds and nothing else, the model declares no symmetry.
pub fn no_symmetry_for_a_kswapd_on_the_body_task() {
    let text = "model = \"kswapd-stall\"\nvariant = \"recheck\"\n\n[[thread]]\nrole = \"kswapd\"\nnode = 0\n\n\
                [[thread]]\nrole = \"kswapd\"\nnode = 1\n\n[explore]\nengine = \"stateful\"\n\n[expect]\nverdict = \"pass\"\n";
    let sc = scenario::parse(Path::new("generated.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    let st = sc.spec.explore(ENGINE, &opts(Reduce::default())).stats.expect("stats");
    assert_eq!(st.symmetry_group, 1);
    assert!(st.symmetry_not_applied.is_some_and(|w| w.contains("not the last thread")), "{st:?}");
}
