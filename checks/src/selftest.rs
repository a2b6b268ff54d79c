//! The checker's self-test: every seeded mutant must be caught by the check of the invariant
//! it targets. A check that no mutant trips proves nothing, so a mutant that survives (or has
//! no scenario exercising it) fails the self-test.
//!
//! The mutant scenarios are ordinary scenario files (`scenarios/mutants/<model>/<name>.toml`),
//! so each one can also be run, read and replayed on its own.

use std::path::Path;

use mmmodel::mutation::Mutation;

use crate::check::{check, Report, RunOptions, Verdict};
use crate::scenario::{self, Scenario, ScenarioError};

/// One mutant's fate.
#[derive(Debug, Clone)]
pub struct MutantResult {
    pub mutation: Mutation,
    /// The scenario that exercised it (None: no scenario names this mutation).
    pub scenario: Option<String>,
    /// The invariant the checker reported, if any.
    pub caught_by: Option<&'static str>,
    /// Executions explored until the target invariant was first violated.
    pub executions_to_catch: Option<u64>,
    pub engine: Option<String>,
    pub killed: bool,
}

/// Load the mutant scenarios under `dir`.
pub fn load_mutant_scenarios(dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut out = Vec::new();
    for f in scenario::collect_files(dir)? {
        out.push(scenario::load(&f)?);
    }
    Ok(out)
}

fn judge(m: Mutation, sc: &Scenario, r: &Report) -> MutantResult {
    let target = m.targets();
    let caught_by = match r.verdict {
        Verdict::Violation(i) => Some(i),
        _ => None,
    };
    let executions_to_catch = r.runs.iter().filter_map(|run| run.outcome.first_violation.get(target).copied()).min();
    MutantResult {
        mutation: m,
        scenario: Some(sc.file.display().to_string()),
        caught_by,
        executions_to_catch,
        engine: Some(r.engine_label()),
        killed: r.matched && executions_to_catch.is_some(),
    }
}

/// Run every mutation's scenarios; a mutation is killed when one of its scenarios reports a
/// violation of the invariant it targets.
pub fn run(scenarios: &[Scenario], opts: &RunOptions) -> Vec<MutantResult> {
    let mut results = Vec::new();
    for &m in Mutation::ALL {
        let mine: Vec<&Scenario> = scenarios.iter().filter(|s| s.spec.model.mutation() == Some(m)).collect();
        let mut best: Option<MutantResult> = None;
        for sc in mine {
            let r = check(sc, opts);
            let res = judge(m, sc, &r);
            let done = res.killed;
            if best.as_ref().is_none_or(|b| !b.killed) {
                best = Some(res);
            }
            if done {
                break;
            }
        }
        results.push(best.unwrap_or(MutantResult {
            mutation: m,
            scenario: None,
            caught_by: None,
            executions_to_catch: None,
            engine: None,
            killed: false,
        }));
    }
    results
}
