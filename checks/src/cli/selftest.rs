//! `mmcheck selftest`: run every seeded mutant and show which check catches it.

use std::path::PathBuf;

use mmcheck::check::RunOptions;
use mmcheck::registry::Registry;
use mmcheck::term::show_path;

use super::inputs::{load_all, scenarios_root};
use super::output::{emit, emit_json, progress_bar, CliError, Done};

pub fn cmd_selftest(reg: &Registry, list: bool, dir: Option<PathBuf>, json: bool) -> Done {
    if list {
        // Columns sized to their contents; the description folded to fit 120 columns, its
        // continuation lines under its first.
        let all: Vec<_> = reg.models().iter().flat_map(|model| model.mutations()).collect();
        let w = |f: &dyn Fn(&mmcheck::spec::MutationInfo) -> usize, head: &str| {
            all.iter().map(f).max().unwrap_or(0).max(head.len())
        };
        let (nw, mw, tw) =
            (w(&|m| m.name.len(), "mutant"), w(&|m| m.model.len(), "model"), w(&|m| m.targets.len(), "caught by"));
        if !json {
            emit(format_args!("{:<nw$} {:<mw$} {:<tw$} what it changes", "mutant", "model", "caught by"))?;
        }
        let indent = " ".repeat(nw + mw + tw + 3);
        for m in &all {
            if json {
                emit_json(&serde_json::json!({
                    "name": m.name, "model": m.model, "targets": m.targets, "description": m.description,
                }))?;
            } else {
                let line = format!("{:<nw$} {:<mw$} {:<tw$} {}", m.name, m.model, m.targets, m.description);
                emit(super::check::fold(&line, super::check::TABLE_COLS, &indent))?;
            }
        }
        return Ok(true);
    }
    let dir = match dir {
        Some(d) => d,
        None => scenarios_root()?.join("mutants"),
    };
    let scenarios = load_all(reg, std::slice::from_ref(&dir))?;
    if !scenarios.iter().any(|s| s.spec.mutation().is_some()) {
        return Err(CliError::Usage(format!(
            "{}: nothing to decide: no mutant scenario among its {} file(s) (a mutant scenario names a seeded bug: \
             mutation = \"NAME\", see mmcheck selftest --list); name the folder of the mutant scenarios with --dir",
            show_path(&dir),
            scenarios.len()
        )));
    }
    let (bar, progress) = progress_bar(json);
    let opts = RunOptions { progress, ..RunOptions::default() };
    let results = mmcheck::selftest::run(reg, &scenarios, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if json {
        for r in &results {
            emit_json(&serde_json::json!({
                "mutant": r.mutation.name, "model": r.mutation.model, "targets": r.mutation.targets,
                "caught_by": r.caught_by, "executions_to_catch": r.executions_to_catch, "engine": r.engine,
                "scenario": r.scenario, "mutation_ran": r.mutation_ran, "unmutated_violates": r.unmutated_violates,
                "killed": r.killed,
            }))?;
        }
    } else {
        emit(format_args!(
            "{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {:<4} {:<9} status",
            "mutant", "model", "targets", "caught by", "execs", "engine", "ran", "unmutated"
        ))?;
        for r in &results {
            emit(format_args!(
                "{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {:<4} {:<9} {}",
                r.mutation.name,
                r.mutation.model,
                r.mutation.targets,
                r.caught_by.unwrap_or("-"),
                r.executions_to_catch.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                r.engine.as_deref().map(|e| e.split('(').next().unwrap_or(e)).unwrap_or("-"),
                if r.mutation_ran { "yes" } else { "no" },
                match r.unmutated_violates {
                    Some(true) => "violates",
                    Some(false) => "holds",
                    None => "-",
                },
                r.status()
            ))?;
        }
        let alive = results.iter().filter(|r| !r.killed).count();
        emit(format_args!("\n{} mutant(s), {} killed, {} survived", results.len(), results.len() - alive, alive))?;
    }
    Ok(results.iter().all(|r| r.killed))
}
