//! `mmcheck matrix`: for each model, invariants x variants, built by checking scenarios.

use std::path::PathBuf;

use mmcheck::check::{check, Report, RunOptions};
use mmcheck::registry::{AnyModel, Registry};
use mmcheck::scenario::Scenario;
use mmcheck::term::escape_control;

use super::inputs::{default_scenario_paths, load_all, memory_flag};
use super::output::{emit, emit_json, progress_bar, warn, CliError, Done, HtmlOut};

pub fn cmd_matrix(
    reg: &Registry,
    model: Option<String>,
    paths: Vec<PathBuf>,
    (json, wide): (bool, bool),
    memory: Option<String>,
    out: &HtmlOut,
) -> Done {
    let memory = memory_flag(memory.as_deref())?;
    out.prepare(0)?;
    let mut models: Vec<&'static dyn AnyModel> = match &model {
        None => reg.models().to_vec(),
        Some(m) => vec![reg.find(m).ok_or_else(|| {
            CliError::Usage(format!("--model: unknown model \"{}\" ({})", escape_control(m), reg.names().join(", ")))
        })?],
    };
    let paths = if paths.is_empty() {
        default_scenario_paths()?.into_iter().filter(|p| p.file_name().is_some_and(|n| n != "mutants")).collect()
    } else {
        paths
    };
    let scenarios = load_all(reg, &paths)?;
    let chosen: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| models.iter().any(|m| m.name() == s.model().name()) && s.spec.mutation().is_none())
        .collect();
    if chosen.is_empty() {
        let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
        return Err(CliError::Usage(format!(
            "matrix: nothing to decide: no {} scenario without a mutation among the {} file(s) given (mutants are \
             left out of the matrix); name scenario files or folders of that model",
            names.join(" or "),
            scenarios.len()
        )));
    }
    // Without --model, only the models the files are about.
    if model.is_none() {
        models.retain(|m| chosen.iter().any(|s| s.model().name() == m.name()));
    }
    let (bar, progress) = progress_bar(json);
    let opts = RunOptions { progress, memory, ..RunOptions::default() };
    let reports: Vec<Report> = chosen.iter().map(|s| check(s, &opts)).collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let matrices: Vec<mmcheck::matrix::Matrix> = models.iter().map(|m| mmcheck::matrix::build(*m, &reports)).collect();
    if matrices.iter().all(|mx| mx.cells.is_empty()) {
        return Err(CliError::Usage(format!(
            "matrix: nothing to decide: every cell is empty ({} scenario(s) checked; a cell needs a violation, or an \
             exhaustive exploration (loom, shuttle-dfs or stateful) that completes); add such scenarios",
            reports.len()
        )));
    }
    out.write(&reports, &matrices, json)?;
    for mx in &matrices {
        if json {
            emit_json(mx)?;
        } else {
            emit(if wide { mmcheck::matrix::render_wide(mx) } else { mmcheck::matrix::render(mx) })?;
        }
    }
    let all = reports.iter().all(|r| r.matched);
    if !all {
        warn("some scenarios did not get their expected verdict (run mmcheck check for details)");
    }
    Ok(all)
}
