//! `mmcheck litmus`: the command line of [`mmcheck::litmus::report`].

use std::path::PathBuf;

use mmcheck::litmus::run::Model;
use mmcheck::term::escape_control;

use super::output::{CliError, Done};

/// `mmcheck litmus PATH... [--json] [--memory MODEL]`.
pub fn cmd_litmus(paths: Vec<PathBuf>, json: bool, memory: &str) -> Done {
    let model = match memory {
        "lkmm" => Model::Lkmm,
        "sc" => Model::Sc,
        m => {
            return Err(CliError::Usage(format!(
                "--memory: unknown memory model \"{}\"; expected one of: sc, lkmm",
                escape_control(m)
            )))
        }
    };
    let mut out = std::io::stdout().lock();
    match mmcheck::litmus::report::run(&paths, model, json, &mut out) {
        0 => Ok(true),
        1 => Ok(false),
        _ => Err(CliError::Reported),
    }
}
