//! `mmcheck selftest` in the default test run: every seeded mutant must be killed by the
//! check of the invariant it targets. A mutant with no scenario counts as a survivor.

mod common;

use std::io::Write;

use mmcheck::check::RunOptions;
use mmcheck::registry::{Registry, SHIPPED};
use mmcheck::selftest;

#[test]
fn every_mutant_is_killed() {
    let dir = common::scenarios_dir().join("mutants");
    let reg = Registry::default();
    let scenarios = selftest::load_mutant_scenarios(&reg, &dir).unwrap_or_else(|e| panic!("{e}"));
    // Every execution of every mutant (and of its control run) is also checked by the online
    // monitors: a disagreement is an `error` verdict, and the mutant then counts as a survivor.
    let opts = RunOptions { check_online: common::check_online(), ..RunOptions::default() };
    let results = selftest::run(&reg, &scenarios, &opts);
    let mut survivors = Vec::new();
    let mut errors = Vec::new();
    for r in &results {
        println!(
            "{:<32} targets {:<22} caught by {:<22} after {:>8} executions  {}",
            r.mutation.name,
            r.mutation.targets,
            r.caught_by.unwrap_or("-"),
            r.executions_to_catch.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            r.status()
        );
        if let Some(e) = &r.error {
            errors.push(format!("{}: {e}", r.mutation.name));
        } else if !r.killed {
            survivors.push(r.mutation.name);
        }
    }
    let checked: u64 = results.iter().map(|r| r.online_checked).sum();
    // Past libtest's capture, like the scenario tests' lines.
    let _ = writeln!(std::io::stderr().lock(), "    selftest: {checked} executions cross-checked online");
    assert!(errors.is_empty(), "errors: {errors:#?}");
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
