//! Which scenario files a command reads: the default set under `scenarios/`, and every file
//! parsed before anything runs.

use std::path::{Path, PathBuf};

use mmcheck::engine::Memory;
use mmcheck::registry::Registry;
use mmcheck::scenario::{self, Scenario, ScenarioError};

use mmcheck::term::{escape_control, show_path};

use super::output::{warn, CliError};

/// `scenarios/` in the current directory; else the repository's the binary was built from, if
/// it is still there, with a note on standard error that names it (issue 37, row 12: a binary
/// copied elsewhere said nothing about which files it checked); else an error that names the
/// folder it looked for.
/// `--memory NAME` of `check` and `matrix`: the stateful engine's memory model, or a usage
/// error naming the ones there are.
pub fn memory_flag(memory: Option<&str>) -> Result<Option<Memory>, CliError> {
    memory
        .map(|m| {
            Memory::from_name(m).ok_or_else(|| {
                CliError::Usage(format!(
                    "--memory: unknown memory model \"{}\"; expected one of: sc, lkmm",
                    escape_control(m)
                ))
            })
        })
        .transpose()
}

pub fn scenarios_root() -> Result<PathBuf, CliError> {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        return Ok(here);
    }
    let cwd = std::env::current_dir().map(|d| show_path(&d)).unwrap_or_else(|_| ".".into());
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    if built.is_dir() {
        let built = built.canonicalize().unwrap_or(built);
        warn(format_args!(
            "no scenarios/ folder in the current folder ({cwd}): reading the one of the tree this binary was built \
             from, {}",
            show_path(&built)
        ));
        return Ok(built);
    }
    Err(CliError::Usage(format!(
        "no scenario file or folder named, and no scenarios/ folder in the current folder ({cwd}): name the files or \
         folders to check, or run from the repository's root"
    )))
}

/// The default scenario set: everything under scenarios/ except the opt-in heavy runs and the
/// litmus tests.
pub fn default_scenario_paths() -> Result<Vec<PathBuf>, CliError> {
    let root = scenarios_root()?;
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                // heavy/ is opt-in; litmus/ holds litmus tests (`mmcheck litmus`), not scenarios.
                .filter(|p| p.file_name().is_some_and(|n| n != "heavy" && n != "litmus"))
                // Only folders and *.toml files, as inside folders (a README is not a scenario).
                .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_else(|_| vec![root.clone()]);
    v.sort();
    Ok(v)
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
