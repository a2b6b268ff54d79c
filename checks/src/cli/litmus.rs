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
    // A seeded defect of the memory model, for the tests that show the judge can fail
    // (checks/tests/litmus.rs); not a user option.
    if let Ok(name) = std::env::var("MMCHECK_LKMM_DEFECT") {
        let Some(d) = mmmodel::platform::stateful::lkmm::Defect::named(&name) else {
            return Err(CliError::Usage(format!(
                "MMCHECK_LKMM_DEFECT: unknown defect \"{}\"; expected {}",
                escape_control(&name),
                mmmodel::platform::stateful::lkmm::Defect::NAMES
            )));
        };
        mmmodel::platform::stateful::lkmm::Defect::seed(Some(d));
    }
    let mut out = std::io::stdout().lock();
    match mmcheck::litmus::report::run(&paths, model, json, &mut out) {
        0 => Ok(true),
        1 => Ok(false),
        _ => Err(CliError::Reported),
    }
}
