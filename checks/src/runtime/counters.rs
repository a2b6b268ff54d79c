//! Statistics over a run's per-iteration counters.

use super::types::{RunResult, Sample};

/// Amean, min and max of one counter over a run's samples.
pub fn stats(samples: &[Sample], key: &str) -> (f64, f64, f64) {
    let v: Vec<f64> = samples.iter().map(|s| s.get(key).copied().unwrap_or(0.0)).collect();
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

/// Every counter to show for these runs: each model's reported counters (even when zero),
/// then any other counter that is not zero in some sample.
pub fn counter_names(runs: &[RunResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for n in r.model.counters() {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    let fixed = names.len();
    for r in runs {
        for s in &r.samples {
            for k in s.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
    }
    let mut i = 0;
    names.retain(|n| {
        i += 1;
        i <= fixed || runs.iter().any(|r| r.samples.iter().any(|s| s.get(n).is_some_and(|v| *v != 0.0)))
    });
    names
}

/// The ratio of two counters' totals over `samples` (`None` when the denominator is 0).
pub fn ratio(samples: &[Sample], num: &str, den: &str) -> Option<f64> {
    let total = |k: &str| samples.iter().map(|s| s.get(k).copied().unwrap_or(0.0)).sum::<f64>();
    let d = total(den);
    (d != 0.0).then(|| total(num) / d)
}
