//! The comparison table of `mmcheck run` and `mmcheck compare`.

use super::counters::{counter_names, ratio, stats};
use super::types::RunResult;

/// A table in the style of the seeds' mmtests comparisons: one column per run, `Amean`,
/// `Min` and `Max` rows per counter, and the change of each column's mean against the first
/// column, `(new - first) / first`, in percent.
pub fn compare_table(runs: &[RunResult]) -> String {
    let mut out = String::new();
    let w = runs.iter().map(|r| r.label.len()).max().unwrap_or(8).max(20);
    out.push_str(&format!("{:<38}", ""));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.label));
    }
    out.push('\n');
    for name in counter_names(runs) {
        for (row, pick) in [("Amean", 0usize), ("Min", 1), ("Max", 2)] {
            out.push_str(&format!("{:<6}{:<32}", row, name));
            let base = stats(&runs[0].samples, &name);
            for r in runs {
                let st = stats(&r.samples, &name);
                let v = [st.0, st.1, st.2][pick];
                if row == "Amean" {
                    let pct = if base.0 == 0.0 {
                        if st.0 == 0.0 {
                            0.0
                        } else {
                            f64::INFINITY
                        }
                    } else {
                        (st.0 - base.0) / base.0 * 100.0
                    };
                    let cell =
                        if pct.is_finite() { format!("{v:.2} ({pct:7.2}%)") } else { format!("{v:.2} (    new)") };
                    out.push_str(&format!(" {cell:>w$}"));
                } else {
                    out.push_str(&format!(" {:>w$}", format!("{v:.2}")));
                }
            }
            out.push('\n');
        }
    }
    let mut shown: Vec<(&str, &str)> = Vec::new();
    for r in runs {
        for &(a, b) in r.model.ratios() {
            if !shown.contains(&(a, b)) {
                shown.push((a, b));
            }
        }
    }
    for (a, b) in shown {
        out.push_str(&format!("{:<6}{:<32}", "Ratio", format!("{a}/{b}")));
        let base = ratio(&runs[0].samples, a, b);
        for r in runs {
            let cell = match (ratio(&r.samples, a, b), base) {
                (None, _) => "-".to_string(),
                (Some(v), Some(b)) if b == 0.0 && v == 0.0 => format!("{v:.2} ({:7.2}%)", 0.0),
                (Some(v), Some(b)) if b != 0.0 => format!("{v:.2} ({:7.2}%)", (v - b) / b * 100.0),
                (Some(v), _) => format!("{v:.2} (    new)"),
            };
            out.push_str(&format!(" {cell:>w$}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:<38}", "iterations"));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.samples.len()));
    }
    out.push('\n');
    out.push_str(&format!("{:<38}", "seconds"));
    for r in runs {
        out.push_str(&format!(" {:>w$.2}", r.seconds));
    }
    out.push('\n');
    out.push_str(&format!("{:<38}", "violations (iterations)"));
    for r in runs {
        let v: Vec<String> = r.violations.iter().map(|(k, n)| format!("{k}={n}")).collect();
        out.push_str(&format!(" {:>w$}", if v.is_empty() { "none".to_string() } else { v.join(",") }));
    }
    out.push('\n');
    out
}
