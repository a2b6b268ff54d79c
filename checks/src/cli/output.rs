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

/// How far an exploration has got, as one line: states (stateful engine) or executions, the
/// rate, the depth, the time and, where the system says, the memory the process holds.
fn progress_message(label: &str, p: &mmcheck::engine::Progress) -> String {
    let t = p.seconds;
    let per_s = |n: u64| if t > 0.0 { n as f64 / t } else { 0.0 };
    let memory =
        resident_bytes().map(|b| format!(", {:.1} MiB resident", b as f64 / (1024.0 * 1024.0))).unwrap_or_default();
    match (p.states, p.depth) {
        (Some(states), Some(depth)) => format!(
            "{label}: {states} states ({:.0}/s), depth {depth}, {} executions, {t:.1} s{memory}",
            per_s(states),
            p.executions
        ),
        _ => format!("{label}: {} executions, {t:.1} s, {:.0}/s{memory}", p.executions, per_s(p.executions)),
    }
}

/// The process's resident memory (`VmRSS` of /proc/self/status), where there is one.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// When an exploration that is not drawn on a terminal first says how far it has got, and how
/// often after that, in seconds: `MMCHECK_PROGRESS=SECONDS` (both), `MMCHECK_PROGRESS=off`
/// (never); by default after 5 s, then every 10 s.
fn progress_schedule() -> Option<(f64, f64)> {
    match std::env::var("MMCHECK_PROGRESS") {
        Ok(v) if v == "off" => None,
        Ok(v) => match v.parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => Some((s, s)),
            _ => {
                warn(format_args!("MMCHECK_PROGRESS={v}: not a number of seconds or off; using 5 then 10"));
                Some((5.0, 10.0))
            }
        },
        Err(_) => Some((5.0, 10.0)),
    }
}

/// What a command shows while it explores, on standard error only (standard output holds the
/// results, and nothing else under `--json`). On a terminal, without `--json`: a spinner line
/// that is redrawn. Otherwise (a pipe, a file, a batch job, or `--json`): a line
/// `mmcheck: progress: ...` once an exploration has run 5 s, then every 10 s
/// ([`progress_schedule`]).
pub fn progress_bar(json: bool) -> (Option<indicatif::ProgressBar>, Option<mmcheck::check::Progress>) {
    use std::io::IsTerminal;
    if !json && std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        let pb2 = pb.clone();
        let f: mmcheck::check::Progress = Arc::new(move |label: &str, p: &mmcheck::engine::Progress| {
            pb2.set_message(progress_message(label, p));
            pb2.tick();
        });
        return (Some(pb), Some(f));
    }
    let Some((first, every)) = progress_schedule() else { return (None, None) };
    // When each exploration (by its label) last printed, in its own seconds.
    let last: std::sync::Mutex<std::collections::HashMap<String, f64>> = Default::default();
    let f: mmcheck::check::Progress = Arc::new(move |label: &str, p: &mmcheck::engine::Progress| {
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        let due = match last.get(label) {
            None => p.seconds >= first,
            Some(&at) => p.seconds >= at + every,
        };
        if due {
            last.insert(label.to_string(), p.seconds);
            warn(format_args!("progress: {}", progress_message(label, p)));
        }
    });
    (None, Some(f))
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

    /// Refuse `--svg` for a report with no counterexample before anything of it is printed:
    /// a refused command prints nothing on standard output (issue 37, row 11).
    pub fn check_svg(&self, r: &Report) -> Result<(), CliError> {
        match &self.svg {
            Some(f) if mmcheck::html::svg(r, self.verbose).is_none() => Err(CliError::Usage(format!(
                "--svg {}: {} has no counterexample to draw (verdict {})",
                show_path(f),
                show_path(&r.scenario.file),
                r.verdict.label()
            ))),
            _ => Ok(()),
        }
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
