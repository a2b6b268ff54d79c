//! The checker's self-test: every seeded mutant must be caught by the check of the invariant
//! it targets, and the catch must come from the mutation. A check that no mutant trips
//! proves nothing, so a mutant that survives (or has no scenario exercising it) fails the
//! self-test.
//!
//! A mutant counts as killed only when, in one of its scenarios,
//! * the check reports a violation of the invariant the mutant targets,
//! * the mutated code ran in the reported (violating) execution, and
//! * the same scenario without the mutation, explored by the same engines, does not violate
//!   that invariant.
//!
//! The mutant scenarios are ordinary scenario files (`scenarios/mutants/<model>/<name>.toml`),
//! so each one can also be run, read and replayed on its own.

use std::path::Path;

use crate::check::{check, Report, RunOptions, Verdict};
use crate::registry::{MutationInfo, Registry};
use crate::scenario::{self, Scenario, ScenarioError};

/// One mutant's fate.
#[derive(Debug, Clone)]
pub struct MutantResult {
    pub mutation: MutationInfo,
    /// The scenario that exercised it (None: no scenario names this mutation).
    pub scenario: Option<String>,
    /// The invariant the checker reported, if any.
    pub caught_by: Option<&'static str>,
    /// Executions explored until the target invariant was first violated.
    pub executions_to_catch: Option<u64>,
    pub engine: Option<String>,
    /// The mutated code ran in the reported violating execution.
    pub mutation_ran: bool,
    /// The same scenario without the mutation violates the target invariant too (then the
    /// violation is no evidence about the mutation).
    pub unmutated_violates: Option<bool>,
    pub killed: bool,
    /// The first engine error of any run for this mutant (its scenarios and their control
    /// runs), e.g. a disagreement of the online and trace monitors under
    /// [`RunOptions::check_online`]. A mutant with an error is not killed.
    pub error: Option<String>,
    /// Executions of those runs that the online monitors were compared on.
    pub online_checked: u64,
}

impl MutantResult {
    /// Why it was not killed, in a few words.
    pub fn status(&self) -> &'static str {
        if self.error.is_some() {
            "ERROR"
        } else if self.killed {
            "killed"
        } else if self.scenario.is_none() {
            "SURVIVED (no scenario)"
        } else if self.executions_to_catch.is_none() {
            "SURVIVED"
        } else if !self.mutation_ran {
            "NOT KILLED (mutated code did not run)"
        } else if self.unmutated_violates == Some(true) {
            "NOT KILLED (violated without the mutation too)"
        } else {
            "SURVIVED"
        }
    }
}

/// Load the mutant scenarios under `dir`.
pub fn load_mutant_scenarios(reg: &Registry, dir: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let mut out = Vec::new();
    for f in scenario::collect_files(dir)? {
        out.push(scenario::load_with(reg, &f)?);
    }
    Ok(out)
}

fn judge(m: &MutationInfo, sc: &Scenario, r: &Report, opts: &RunOptions) -> MutantResult {
    let target = m.targets;
    let caught_by = match r.verdict {
        Verdict::Violation(i) => Some(i),
        _ => None,
    };
    let executions_to_catch = r.runs.iter().filter_map(|run| run.outcome.first_violation.get(target).copied()).min();
    let shown = r.shown.and_then(|i| r.runs[i].outcome.found.as_ref());
    let mutation_ran = shown.is_some_and(|f| f.mutation_reached && f.violations.iter().any(|v| v.invariant == target));
    let mut res = MutantResult {
        mutation: m.clone(),
        scenario: Some(sc.file.display().to_string()),
        caught_by,
        executions_to_catch,
        engine: Some(r.engine_names()),
        mutation_ran,
        unmutated_violates: None,
        killed: false,
        error: first_error(r),
        online_checked: online_checked(r),
    };
    if r.matched && executions_to_catch.is_some() && mutation_ran {
        // The control run: the same scenario, engines and bounds, without the mutation.
        let control = Scenario { spec: sc.spec.without_mutation(), ..sc.clone() };
        let c = check(&control, &RunOptions { engine_override: Some(sc.engines.clone()), ..opts.clone() });
        let violates = c.runs.iter().any(|run| run.outcome.violated.contains_key(target));
        res.unmutated_violates = Some(violates);
        res.killed = !violates && c.runs.iter().all(|run| run.outcome.error.is_none());
        res.error = res.error.or_else(|| first_error(&c));
        res.online_checked += online_checked(&c);
    }
    res.killed &= res.error.is_none();
    res
}

fn first_error(r: &Report) -> Option<String> {
    r.runs.iter().find_map(|run| run.outcome.error.as_ref().map(|e| format!("{}: {e}", r.scenario.file.display())))
}

fn online_checked(r: &Report) -> u64 {
    r.runs.iter().map(|run| run.outcome.online_checked).sum()
}

/// Run every mutation's scenarios; a mutation is killed as the module docs say.
pub fn run(reg: &Registry, scenarios: &[Scenario], opts: &RunOptions) -> Vec<MutantResult> {
    let mut results = Vec::new();
    for model in reg.models() {
        for m in model.mutations() {
            let mine: Vec<&Scenario> = scenarios
                .iter()
                .filter(|s| s.model().name() == model.name() && s.spec.mutation() == Some(m.name))
                .collect();
            let mut best: Option<MutantResult> = None;
            let (mut error, mut checked) = (None, 0);
            for sc in mine {
                let r = check(sc, opts);
                let res = judge(&m, sc, &r, opts);
                error = error.or_else(|| res.error.clone());
                checked += res.online_checked;
                let done = res.killed;
                if best.as_ref().is_none_or(|b| !b.killed) {
                    best = Some(res);
                }
                if done {
                    break;
                }
            }
            if let Some(b) = best.as_mut() {
                // An error in any of its scenarios is the mutant's.
                b.killed &= error.is_none();
                b.error = error;
                b.online_checked = checked;
            }
            results.push(best.unwrap_or(MutantResult {
                mutation: m,
                scenario: None,
                caught_by: None,
                executions_to_catch: None,
                engine: None,
                mutation_ran: false,
                unmutated_violates: None,
                killed: false,
                error: None,
                online_checked: 0,
            }));
        }
    }
    results
}
