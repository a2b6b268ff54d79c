//! The runtime mode's chart: every counter's per-iteration distribution per column, as SVG.

use super::counters::counter_names;
use super::runner::splitmix;
use super::types::RunResult;

/// Quantile `q` of sorted `v` (linear interpolation).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let x = q * (v.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A number for an axis label: short, no trailing zeros.
fn tick_label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// An SVG chart of the per-iteration distributions: one panel per counter (the counters of
/// [`counter_names`]), one strip per run in each panel, every iteration a dot (jittered
/// sideways), with a box from the first to the third quartile, the median as a line, the mean
/// as a diamond and whiskers to min and max. `title` may have several lines (the first is
/// bold). Hand-written SVG, no dependencies.
pub fn svg_chart(runs: &[RunResult], title: &str) -> String {
    const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    let names = counter_names(runs);
    let cols = 3usize;
    let (pw, ph) = (380.0f64, 220.0f64);
    let (ml, mr, mt, mb) = (52.0, 12.0, 26.0, 22.0);
    let title_lines: Vec<&str> = title.lines().collect();
    let head = 16.0 * title_lines.len().max(1) as f64 + 20.0;
    let legend_h = 22.0 * runs.len() as f64 + 10.0;
    let rows = names.len().div_ceil(cols);
    let width = pw * cols as f64;
    let height = head + legend_h + ph * rows as f64;
    let mut o = String::new();
    o.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    ));
    o.push_str(&format!("<rect width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>\n"));
    for (i, line) in title_lines.iter().enumerate() {
        let (size, weight) = if i == 0 { (15, "bold") } else { (12, "normal") };
        o.push_str(&format!(
            "<text x=\"10\" y=\"{}\" font-size=\"{size}\" font-weight=\"{weight}\">{}</text>\n",
            22 + 16 * i,
            xml_escape(line)
        ));
    }
    for (i, r) in runs.iter().enumerate() {
        let y = head + 4.0 + 22.0 * i as f64;
        o.push_str(&format!(
            "<rect x=\"12\" y=\"{:.0}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n",
            y,
            COLORS[i % COLORS.len()]
        ));
        o.push_str(&format!(
            "<text x=\"32\" y=\"{:.0}\">{} ({}: {} iterations)</text>\n",
            y + 12.0,
            xml_escape(&r.label),
            xml_escape(&r.name),
            r.samples.len()
        ));
    }
    let top = head + legend_h;
    for (n, name) in names.iter().enumerate() {
        let (px, py) = ((n % cols) as f64 * pw, top + (n / cols) as f64 * ph);
        let (x0, x1, y0, y1) = (px + ml, px + pw - mr, py + mt, py + ph - mb);
        let series: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| {
                let mut v: Vec<f64> = r.samples.iter().map(|s| s.get(name).copied().unwrap_or(0.0)).collect();
                v.sort_by(|a, b| a.total_cmp(b));
                v
            })
            .collect();
        let lo = series.iter().filter_map(|v| v.first()).copied().fold(f64::INFINITY, f64::min).min(0.0);
        let mut hi = series.iter().filter_map(|v| v.last()).copied().fold(f64::NEG_INFINITY, f64::max);
        if !hi.is_finite() || hi <= lo {
            hi = lo + 1.0;
        }
        // Four grid steps of a round size (1, 2, 2.5 or 5 times a power of ten).
        let raw = (hi - lo) / 4.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(raw);
        hi = lo + 4.0 * step;
        let y = |v: f64| y1 - (v - lo) / (hi - lo) * (y1 - y0);
        o.push_str(&format!("<g><title>{}</title>\n", xml_escape(name)));
        o.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{}</text>\n",
            x0,
            py + 16.0,
            xml_escape(name)
        ));
        o.push_str(&format!(
            "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>\n",
            x1 - x0,
            y1 - y0
        ));
        for k in 0..=4 {
            let v = lo + (hi - lo) * k as f64 / 4.0;
            let yy = y(v);
            o.push_str(&format!(
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#eee\"/>\n"
            ));
            o.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
                x0 - 4.0,
                yy + 4.0,
                tick_label(v)
            ));
        }
        let slot = (x1 - x0) / runs.len().max(1) as f64;
        for (i, v) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let cx = x0 + slot * (i as f64 + 0.5);
            let half = (slot * 0.3).min(40.0);
            // The dots: at most 400 per strip (evenly spaced through the sorted values).
            let step = (v.len() / 400).max(1);
            let mut jit = 0x2545_f491_4f6c_dd1du64 ^ (i as u64 + 1);
            for val in v.iter().step_by(step) {
                let j = (splitmix(&mut jit) % 1000) as f64 / 1000.0 * 2.0 - 1.0;
                o.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.6\" fill=\"{color}\" fill-opacity=\"0.35\"/>\n",
                    cx + j * half * 0.9,
                    y(*val)
                ));
            }
            if v.is_empty() {
                continue;
            }
            let (q1, med, q3) = (quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75));
            let (mn, mx) = (v[0], v[v.len() - 1]);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            o.push_str(&format!(
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n",
                y(mn),
                y(q1)
            ));
            o.push_str(&format!(
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n",
                y(q3),
                y(mx)
            ));
            for w in [mn, mx] {
                o.push_str(&format!(
                    "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n",
                    cx - half * 0.4,
                    cx + half * 0.4,
                    y(w),
                    y(w)
                ));
            }
            o.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" fill-opacity=\"0.15\" stroke=\"{color}\"/>\n",
                cx - half,
                y(q3),
                2.0 * half,
                (y(q1) - y(q3)).max(0.5)
            ));
            o.push_str(&format!(
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2.5\"/>\n",
                cx - half,
                cx + half,
                y(med),
                y(med)
            ));
            let (my, d) = (y(mean), 4.0);
            o.push_str(&format!(
                "<polygon points=\"{:.1},{my:.1} {cx:.1},{:.1} {:.1},{my:.1} {cx:.1},{:.1}\" fill=\"white\" stroke=\"black\"/>\n",
                cx - d,
                my - d,
                cx + d,
                my + d
            ));
            let label: String = runs[i].label.chars().take(((slot / 6.0) as usize).max(4)).collect();
            o.push_str(&format!(
                "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{color}\">{}</text>\n",
                y1 + 14.0,
                xml_escape(&label)
            ));
        }
        o.push_str("</g>\n");
    }
    o.push_str("</svg>\n");
    o
}
