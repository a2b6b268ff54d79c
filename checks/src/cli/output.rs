//! What a command ends with and what it writes: [`CliError`] and [`Done`] (the exit status),
//! standard output through [`emit`] (never `println!`), warnings on standard error, the
//! progress line on a terminal, and the `--html`/`--svg` pictures ([`HtmlOut`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use mmcheck::check::Report;
use mmcheck::runtime::RunError;
use mmcheck::scenario::ScenarioError;
use mmcheck::term::show_path;

/// Why a command could not do what it was asked. Every kind is exit status 2 but a run on
/// real threads that hung (1: the check found something, as a violation would).
#[derive(Debug)]
pub enum CliError {
    /// Flags or arguments that cannot work together, or a bad value.
    Usage(String),
    /// Several bad flags: one message each, one line each.
    Flags(Vec<String>),
    /// Scenario files that cannot be read or parsed: every error, one per line.
    Scenarios(Vec<ScenarioError>),
    /// A run on real threads stopped.
    Run(RunError),
    /// An output could not be written.
    Output(String),
    /// The command already said what went wrong (on stderr, naming the file and line).
    Reported,
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Run(RunError::Hung(_)) => ExitCode::from(1),
            _ => ExitCode::from(2),
        }
    }
    pub fn report(&self) {
        match self {
            CliError::Usage(m) | CliError::Output(m) => warn(m),
            CliError::Flags(ms) => ms.iter().for_each(warn),
            CliError::Scenarios(es) => es.iter().for_each(warn),
            CliError::Run(e) => warn(e),
            CliError::Reported => {}
        }
    }
}

/// `mmcheck: MESSAGE` on standard error. A failed write is ignored: there is nowhere left to
/// report it (`eprintln!` would panic).
pub fn warn(message: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "mmcheck: {message}");
}

/// What a command concluded: everything as expected (exit 0) or not (exit 1).
pub type Done = Result<bool, CliError>;

/// Write `text` to standard output and flush it. Every write to stdout goes through here (or
/// [`emit`]): `println!` panics when the write fails (a full disk, a closed pipe with SIGPIPE
/// ignored), this returns [`CliError::Output`].
pub fn emit_raw(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Output(format!("cannot write to standard output: {e}")))
}

/// One line (or several) of standard output, as `println!` would print it.
pub fn emit(text: impl std::fmt::Display) -> Result<(), CliError> {
    emit_raw(&format!("{text}\n"))
}

/// `value` as one line of JSON.
pub fn emit_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    emit(serde_json::to_string(value).map_err(|e| CliError::Output(format!("cannot serialise JSON: {e}")))?)
}

pub fn progress_bar(enabled: bool) -> (Option<indicatif::ProgressBar>, Option<mmcheck::check::Progress>) {
    if !enabled {
        return (None, None);
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
    let pb2 = pb.clone();
    let f: mmcheck::check::Progress = Arc::new(move |label: &str, p: &mmcheck::engine::Progress| {
        let t = p.seconds;
        let per_s = |n: u64| if t > 0.0 { n as f64 / t } else { 0.0 };
        let msg = match (p.states, p.depth) {
            (Some(states), Some(depth)) => format!(
                "{label}: {states} states ({:.0}/s), depth {depth}, {} executions, {t:.1} s",
                per_s(states),
                p.executions
            ),
            _ => format!("{label}: {} executions, {t:.1} s, {:.0}/s", p.executions, per_s(p.executions)),
        };
        pb2.set_message(msg);
        pb2.tick();
    });
    (Some(pb), Some(f))
}

/// `--html DIR` and `--svg FILE`: where the pictures go (mmcheck::html makes them).
pub struct HtmlOut {
    pub html: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    pub verbose: bool,
}

impl HtmlOut {
    /// Refuse, before any exploration, an output that cannot be written.
    pub fn prepare(&self, scenarios: usize) -> Result<(), CliError> {
        if self.svg.is_some() && scenarios != 1 {
            return Err(CliError::Usage(format!(
                "--svg draws one counterexample: name exactly one scenario file ({scenarios} scenarios given; a file \
                 with variants is one a variant, and --replay picks one)"
            )));
        }
        if let Some(dir) = &self.html {
            mmcheck::html::prepare_dir(dir).map_err(CliError::Output)?;
        }
        if let Some(f) = &self.svg {
            mmcheck::html::prepare_file("--svg", f).map_err(CliError::Output)?;
        }
        Ok(())
    }

    pub fn write(&self, reports: &[Report], matrices: &[mmcheck::matrix::Matrix], json: bool) -> Result<(), CliError> {
        if let Some(dir) = &self.html {
            let title = if matrices.is_empty() { "mmcheck check" } else { "mmcheck matrix" };
            let files = mmcheck::html::site(dir, title, reports, matrices, self.verbose);
            mmcheck::html::write_all("--html", dir, &files).map_err(CliError::Output)?;
            if !json {
                emit(format_args!("html: {}", show_path(&dir.join("index.html"))))?;
            }
        }
        if let Some(f) = &self.svg {
            let r = &reports[0];
            let text = mmcheck::html::svg(r, self.verbose).ok_or_else(|| {
                CliError::Usage(format!(
                    "--svg {}: {} has no counterexample to draw (verdict {})",
                    show_path(f),
                    show_path(&r.scenario.file),
                    r.verdict.label()
                ))
            })?;
            mmcheck::html::write_one("--svg", f, &text).map_err(CliError::Output)?;
            if !json {
                emit(format_args!("svg: {}", show_path(f)))?;
            }
        }
        Ok(())
    }
}
