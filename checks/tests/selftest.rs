//! `mmcheck selftest` in the default test run: every seeded mutant must be killed by the
//! check of the invariant it targets. A mutant with no scenario counts as a survivor.

mod common;

use mmcheck::check::RunOptions;
use mmcheck::registry::{Registry, SHIPPED};
use mmcheck::selftest;

#[test]
fn every_mutant_is_killed() {
    let dir = common::scenarios_dir().join("mutants");
    let reg = Registry::default();
    let scenarios = selftest::load_mutant_scenarios(&reg, &dir).unwrap_or_else(|e| panic!("{e}"));
    let results = selftest::run(&reg, &scenarios, &RunOptions::default());
    let mut survivors = Vec::new();
    for r in &results {
        println!(
            "{:<32} targets {:<22} caught by {:<22} after {:>8} executions  {}",
            r.mutation.name,
            r.mutation.targets,
            r.caught_by.unwrap_or("-"),
            r.executions_to_catch.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            r.status()
        );
        if !r.killed {
            survivors.push(r.mutation.name);
        }
    }
    assert!(survivors.is_empty(), "mutants survived: {survivors:?}");
}

#[test]
fn every_invariant_has_a_mutant() {
    for model in SHIPPED {
        for inv in model.invariants() {
            assert!(
                model.mutations().iter().any(|m| m.targets == inv.id),
                "invariant {} ({}) has no seeded mutant that targets it",
                inv.id,
                model.name()
            );
        }
    }
}
