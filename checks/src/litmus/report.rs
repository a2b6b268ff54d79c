//! `mmcheck litmus PATH...`: one row per test (its outcome under the chosen memory model, the
//! file's `Result:` if it has one, whether they agree, states and seconds), `--json` lines, and
//! for every `Sometimes` or `Always` a witness (one execution that satisfies the condition).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ast::{Expect, Litmus};
use super::parse::{parse_file, LitmusError};
use super::run::{explore, holds, needs_load_buffering, Final, Model, Outcome};
use crate::term::escape_control;

/// How many states a test may have before the search gives up (a litmus test has hundreds).
pub const MAX_STATES: u64 = 2_000_000;

/// What became of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
    /// The outcome is the file's `Result:`.
    Ok,
    /// It is not.
    Mismatch,
    /// The file records no `Result:`.
    NoResult,
    /// The model has no load buffering and the condition needs it (a cycle of reads-from and
    /// program order): the outcome says nothing (docs/model.md lists these tests).
    Gap,
    /// A valid test outside the fragment.
    Unsupported,
    /// The search failed (too many states, a deadlock).
    Error,
}

/// One row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub file: String,
    pub name: String,
    pub memory: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    pub agree: Agreement,
    /// What the row is about when there is no result: the construct and where, or the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub states: u64,
    pub executions: u64,
    pub seconds: f64,
    /// Distinct final states, and how many satisfy the condition.
    pub finals: usize,
    pub satisfying: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<WitnessRow>,
}

/// A witness as `--json` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct WitnessRow {
    pub steps: Vec<(usize, String)>,
    #[serde(rename = "final")]
    pub last: String,
}

/// The `.litmus` files of `paths` (folders searched recursively), sorted, or an error naming
/// the path.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", escape_control(&p.display().to_string())))?;
        if meta.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(d) = stack.pop() {
                let rd = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                for e in rd.flatten() {
                    let q = e.path();
                    if q.is_dir() {
                        stack.push(q);
                    } else if q.extension().is_some_and(|x| x == "litmus") {
                        out.push(q);
                    }
                }
            }
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn final_text(t: &Litmus, f: &Final) -> String {
    let mut parts = Vec::new();
    for (i, regs) in f.regs.iter().enumerate() {
        for (r, v) in regs {
            parts.push(format!("{i}:{r}={v}"));
        }
    }
    for l in &t.locations {
        if let Some(v) = f.locs.get(l) {
            parts.push(format!("{l}={v}"));
        }
    }
    parts.join("; ")
}

/// Run one parsed test.
pub fn judge(path: &Path, t: &Litmus, model: Model) -> Row {
    let base = |agree, detail: Option<String>| Row {
        file: path.display().to_string(),
        name: t.name.clone(),
        memory: model.name(),
        result: None,
        expected: t.result.map(|r| r.to_string()),
        agree,
        detail,
        states: 0,
        executions: 0,
        seconds: 0.0,
        finals: 0,
        satisfying: 0,
        witness: None,
    };
    let o: Outcome = match explore(t, model, MAX_STATES) {
        Ok(o) => o,
        Err(e) => return base(Agreement::Error, Some(e)),
    };
    let satisfying = o.finals.iter().filter(|f| holds(&t.cond.prop, f)).count();
    let agree = match t.result {
        None => Agreement::NoResult,
        Some(r) if r == o.result => Agreement::Ok,
        Some(Expect::Sometimes | Expect::Always) if o.result == Expect::Never && needs_load_buffering(t) => {
            Agreement::Gap
        }
        Some(_) => Agreement::Mismatch,
    };
    let detail = (agree == Agreement::Gap).then(|| {
        "no load buffering: the condition needs a cycle of reads-from and program order, which this model never runs"
            .to_string()
    });
    Row {
        result: Some(o.result.to_string()),
        agree,
        detail,
        states: o.states,
        executions: o.executions,
        seconds: o.seconds,
        finals: o.finals.len(),
        satisfying,
        witness: o.witness.as_ref().map(|w| WitnessRow { steps: w.rows.clone(), last: final_text(t, &w.last) }),
        ..base(agree, None)
    }
}

/// The row of a test that does not parse: unsupported (a row of its own) or an error.
fn refused(path: &Path, e: &LitmusError, model: Model) -> (Row, bool) {
    let (agree, error) = match e {
        LitmusError::Unsupported { .. } => (Agreement::Unsupported, false),
        _ => (Agreement::Error, true),
    };
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let row = Row {
        file: path.display().to_string(),
        name,
        memory: model.name(),
        result: None,
        expected: None,
        agree,
        detail: Some(e.to_string()),
        states: 0,
        executions: 0,
        seconds: 0.0,
        finals: 0,
        satisfying: 0,
        witness: None,
    };
    (row, error)
}

/// The witness as rows of a diagram, one column per thread.
pub fn witness_text(row: &Row) -> String {
    let Some(w) = &row.witness else { return String::new() };
    let threads = w.steps.iter().map(|(t, _)| t + 1).max().unwrap_or(0);
    let width = w.steps.iter().map(|(_, s)| s.len()).max().unwrap_or(0).clamp(12, 60) + 2;
    let mut s = String::from("    #  ");
    for t in 0..threads {
        s.push_str(&format!("{:<width$}", format!("P{t}")));
    }
    s.push('\n');
    for (i, (t, text)) in w.steps.iter().enumerate() {
        s.push_str(&format!("  {i:>3}  {}{}\n", " ".repeat(width * t), escape_control(text)));
    }
    s.push_str(&format!("  final: {}\n", w.last));
    s
}

/// Check every test of `paths` and print; the exit status (0: every test agrees or is outside
/// the fragment, 1: a mismatch, 2: an error).
pub fn run(paths: &[PathBuf], model: Model, json: bool, out: &mut dyn Write) -> i32 {
    let files = match collect(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if files.is_empty() {
        eprintln!(
            "error: no .litmus files under {}",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        return 2;
    }
    let mut status = 0;
    let mut rows = Vec::new();
    for f in &files {
        let (row, error) = match parse_file(f) {
            Ok(t) => (judge(f, &t, model), false),
            Err(e) => refused(f, &e, model),
        };
        if error || row.agree == Agreement::Error {
            eprintln!("error: {}", escape_control(row.detail.as_deref().unwrap_or("")));
            status = 2;
        } else if row.agree == Agreement::Mismatch && status == 0 {
            status = 1;
        }
        if json {
            let _ = writeln!(out, "{}", serde_json::to_string(&row).expect("a row serialises"));
        }
        rows.push(row);
    }
    if !json {
        let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(4).clamp(4, 56);
        let _ = writeln!(
            out,
            "{:<w$}  {:<9}  {:<9}  {:<11}  {:>7}  {:>7}",
            "test", "result", "expected", "agree", "states", "seconds"
        );
        for r in &rows {
            let agree = match r.agree {
                Agreement::Ok => "ok",
                Agreement::Mismatch => "MISMATCH",
                Agreement::NoResult => "no Result:",
                Agreement::Gap => "gap",
                Agreement::Unsupported => "unsupported",
                Agreement::Error => "ERROR",
            };
            match r.agree {
                Agreement::Unsupported | Agreement::Error if r.result.is_none() => {
                    let _ = writeln!(
                        out,
                        "{:<w$}  {}",
                        escape_control(&r.name),
                        escape_control(r.detail.as_deref().unwrap_or(""))
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "{:<w$}  {:<9}  {:<9}  {:<11}  {:>7}  {:>7.2}",
                        escape_control(&r.name),
                        r.result.as_deref().unwrap_or("-"),
                        r.expected.as_deref().unwrap_or("-"),
                        agree,
                        r.states,
                        r.seconds
                    );
                    if let Some(d) = &r.detail {
                        let _ = writeln!(out, "    {d}");
                    }
                }
            }
        }
        let count = |a: Agreement| rows.iter().filter(|r| r.agree == a).count();
        let _ = writeln!(
            out,
            "{} tests under {}: {} agree, {} mismatch, {} gap (no load buffering), {} without Result:, {} unsupported, {} errors",
            rows.len(),
            match model {
                Model::Lkmm => "lkmm (no load buffering)",
                Model::Sc => "sc",
            },
            count(Agreement::Ok),
            count(Agreement::Mismatch),
            count(Agreement::Gap),
            count(Agreement::NoResult),
            count(Agreement::Unsupported),
            count(Agreement::Error)
        );
        for r in rows.iter().filter(|r| {
            r.witness.is_some() && matches!(r.agree, Agreement::Ok | Agreement::Mismatch | Agreement::NoResult)
        }) {
            let _ = writeln!(
                out,
                "\nwitness of {} ({}):\n{}",
                escape_control(&r.name),
                r.result.as_deref().unwrap_or(""),
                witness_text(r)
            );
        }
    }
    status
}
