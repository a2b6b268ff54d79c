//! Which scenario files a command reads: the default set under `scenarios/`, and every file
//! parsed before anything runs.

use std::path::{Path, PathBuf};

use mmcheck::registry::Registry;
use mmcheck::scenario::{self, Scenario, ScenarioError};

use super::output::CliError;

/// `scenarios/` in the current directory, or the repository's when run from elsewhere.
pub fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
    }
}

/// The default scenario set: everything under scenarios/ except the opt-in heavy runs and the
/// litmus tests (`*.litmus`, read by `mmcheck litmus`: a folder of them has no `*.toml` to check).
pub fn default_scenario_paths() -> Vec<PathBuf> {
    let root = scenarios_root();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n != "heavy" && n != "litmus"))
                // Only folders and *.toml files, as inside folders (a README is not a scenario).
                .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_else(|_| vec![root.clone()]);
    v.sort();
    v
}

/// Parse every scenario file `paths` stand for (each file once; a file with `variants` is one
/// scenario per variant); on any error, all of them.
pub fn load_all(reg: &Registry, paths: &[PathBuf]) -> Result<Vec<Scenario>, CliError> {
    let files = mmcheck::files::collect(paths).map_err(|e| CliError::Scenarios(vec![e.into()]))?;
    let mut errors: Vec<ScenarioError> = Vec::new();
    let mut out = Vec::new();
    for f in files {
        match scenario::load_each_with(reg, &f) {
            Ok(s) => out.extend(s),
            Err(es) => errors.extend(es),
        }
    }
    if !errors.is_empty() {
        return Err(CliError::Scenarios(errors));
    }
    Ok(out)
}
