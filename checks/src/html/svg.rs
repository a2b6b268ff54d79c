//! The swimlane drawing of a counterexample: one lane per task with its kernel name, one row
//! per row of the text race diagram (same order, same words), arrows for the causal
//! hand-offs, the violating rows marked, a lasso's cycle bracketed. Plain SVG with
//! presentation attributes only, so the same text is a standalone file (`--svg`) and the
//! picture inside the HTML page; `class` and `data-` attributes are for the page's script.

use std::fmt::Write;

use mmmodel::event::{KernelEvent, LockName};
use mmmodel::ghost::Pid;

use crate::trace::{wrap, DiagramRow};

/// What the drawing needs of a counterexample.
pub struct Drawing<'a> {
    /// Lines of the title (the first is bold).
    pub title: Vec<String>,
    pub comms: &'a [String],
    pub rows: &'a [DiagramRow],
    /// Every event of the trace: its task, and the event when it is a kernel primitive's
    /// (for the hand-offs).
    pub kernel: &'a [(Pid, Option<KernelEvent>)],
    /// The protocol's signals: (event index, target task) of each `kill()` / resched.
    pub signals: &'a [(usize, Pid)],
    /// A lasso: the events from this index on repeat for ever.
    pub cycle_from: Option<usize>,
}

/// A causal hand-off between two rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrow {
    /// Row positions (into `rows`), from the cause to its effect.
    pub from: usize,
    pub to: usize,
    /// `wake`, `lock` or `signal`.
    pub kind: &'static str,
    pub label: String,
}

/// The hand-offs among the shown rows: a wake-up to each task it woke (that task's next shown
/// row), a lock released to the next task that takes it, a signal to its target's next
/// shown row that sees it.
pub fn arrows(d: &Drawing) -> Vec<Arrow> {
    let row_of = |event: usize| d.rows.iter().position(|r| r.index == event);
    // The first shown row of task `p` after event `after` that `want` accepts.
    let next_of = |p: Pid, after: usize, want: &dyn Fn(&Option<KernelEvent>) -> bool| {
        d.rows.iter().position(|r| r.index > after && r.pid == p && want(&d.kernel[r.index].1))
    };
    let mut out = Vec::new();
    for (from, r) in d.rows.iter().enumerate() {
        match &d.kernel[r.index].1 {
            Some(KernelEvent::WakeUp { wq, woken, .. }) => {
                for p in (0..d.comms.len()).filter(|p| woken & (1 << p) != 0) {
                    if let Some(to) = next_of(p, r.index, &|k| matches!(k, Some(KernelEvent::Woken))) {
                        out.push(Arrow { from, to, kind: "wake", label: format!("wake-up on {wq}") });
                    }
                }
            }
            Some(KernelEvent::LockReleased { lock }) => {
                let lock = *lock;
                // The next acquisition of the lock by anybody; an arrow when it is another task.
                let next = d
                    .kernel
                    .iter()
                    .enumerate()
                    .skip(r.index + 1)
                    .find(|(_, (_, k))| matches!(k, Some(KernelEvent::LockAcquired { lock: l, .. }) if *l == lock));
                if let Some((i, (p, _))) = next {
                    if *p != r.pid && !matches!(lock, LockName::WaitQueue(_)) {
                        if let Some(to) = row_of(i) {
                            out.push(Arrow { from, to, kind: "lock", label: format!("{lock} handed over") });
                        }
                    }
                }
            }
            _ => {}
        }
        for &(at, target) in d.signals.iter().filter(|(at, _)| *at == r.index) {
            if let Some(to) = d.rows.iter().position(|q| q.index > at && q.pid == target) {
                out.push(Arrow { from, to, kind: "signal", label: "signal to its target".into() });
            }
        }
    }
    out
}

/// Lane colours (fill of the cells, stroke of the heads).
const LANES: [(&str, &str); 6] = [
    ("#e8f0fe", "#1a56b0"),
    ("#e6f4ea", "#18794e"),
    ("#fef3e0", "#a15c00"),
    ("#f3e8fd", "#7b3fb8"),
    ("#e0f7fa", "#00727f"),
    ("#fce8f1", "#a8246a"),
];

fn arrow_colour(kind: &str) -> &'static str {
    match kind {
        "wake" => "#18794e",
        "lock" => "#1a56b0",
        _ => "#c2410c",
    }
}

pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Characters XML 1.0 cannot carry at all: shown as a visible escape.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {
                let _ = write!(o, "\\x{:02x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// Widest a cell's line is, in characters, before it wraps (as the text diagram wraps).
const CELL_COLS: usize = 46;
const CHAR_W: f64 = 7.3;
const LINE_H: f64 = 16.0;
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";

/// The drawing as SVG text.
pub fn render(d: &Drawing) -> String {
    draw(d, false)
}

/// The lane heads alone, at the drawing's widths: the page keeps them in view above the
/// drawing while it scrolls.
pub fn render_heads(d: &Drawing) -> String {
    draw(d, true)
}

fn draw(d: &Drawing, heads_only: bool) -> String {
    let tasks = d.comms.len();
    let heads: Vec<String> = d.comms.iter().enumerate().map(|(p, c)| format!("T{p} {c}")).collect();
    let cells: Vec<Vec<String>> = d.rows.iter().map(|r| wrap(&r.text, CELL_COLS)).collect();
    let mut cols = heads.iter().map(|h| h.chars().count()).collect::<Vec<_>>();
    for (r, lines) in d.rows.iter().zip(&cells) {
        for l in lines {
            if let Some(c) = cols.get_mut(r.pid) {
                *c = (*c).max(l.chars().count());
            }
        }
    }
    let gutter = 64.0;
    let pad = 10.0;
    let lane_w: Vec<f64> = cols.iter().map(|c| *c as f64 * CHAR_W + 2.0 * pad + 8.0).collect();
    let mut lane_x = Vec::with_capacity(tasks);
    let mut x = gutter;
    for w in &lane_w {
        lane_x.push(x);
        x += w + 12.0;
    }
    let width = (x + 24.0).max(720.0);
    // Title lines wrapped to the drawing's width (about 6.5 px a character of 12 px sans).
    let title_cols = ((width - 24.0) / 6.6) as usize;
    let title: Vec<String> = d
        .title
        .iter()
        .enumerate()
        .flat_map(|(i, t)| if i == 0 { vec![t.clone()] } else { wrap(t, title_cols) })
        .collect();
    let title_h = 22.0 + 17.0 * title.len().saturating_sub(1) as f64 + 14.0;
    let head_y = title_h;
    let head_h = 30.0;
    let cycle_row = d.cycle_from.and_then(|c| d.rows.iter().position(|r| r.index >= c));
    // Row tops.
    let mut ys = Vec::with_capacity(d.rows.len());
    let mut y = head_y + head_h + 10.0;
    for (n, lines) in cells.iter().enumerate() {
        if Some(n) == cycle_row {
            y += 26.0; // the band that says the rest repeats
        }
        ys.push(y);
        y += lines.len() as f64 * LINE_H + 12.0;
    }
    let body_end = y;
    let harness = d.rows.iter().any(|r| r.harness);
    let arrows = arrows(d);
    let legend_lines = 1 + harness as usize;
    let height = body_end + 16.0 + legend_lines as f64 * 18.0 + 8.0;

    if heads_only {
        let mut o = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"lane-heads\" width=\"{width:.0}\" height=\"{:.0}\" \
             viewBox=\"0 {:.0} {width:.0} {:.0}\" font-family=\"{FONT}\" font-size=\"12\">",
            head_h + 8.0,
            head_y - 4.0,
            head_h + 8.0
        );
        for p in 0..tasks {
            let stroke = LANES[p % LANES.len()].1;
            let (lx, lw) = (lane_x[p], lane_w[p]);
            let _ = write!(
                o,
                "<rect x=\"{lx:.1}\" y=\"{head_y:.1}\" width=\"{lw:.1}\" height=\"{head_h:.1}\" rx=\"6\" fill=\"{stroke}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"13\" fill=\"#ffffff\">{}</text>",
                lx + lw / 2.0,
                head_y + 20.0,
                xml_escape(&heads[p])
            );
        }
        o.push_str("</svg>\n");
        return o;
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"swimlanes\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"{FONT}\" font-size=\"12\">"
    );
    o.push_str(
        "<defs>\
         <marker id=\"ah-wake\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#18794e\"/></marker>\
         <marker id=\"ah-lock\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#1a56b0\"/></marker>\
         <marker id=\"ah-signal\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c2410c\"/></marker>\
         </defs>\n",
    );
    let _ = writeln!(o, "<rect width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>");
    for (i, t) in title.iter().enumerate() {
        let (size, weight) = if i == 0 { (16, "bold") } else { (12, "normal") };
        let _ = writeln!(
            o,
            "<text x=\"12\" y=\"{}\" font-family=\"sans-serif\" font-size=\"{size}\" font-weight=\"{weight}\" fill=\"#111\" xml:space=\"preserve\">{}</text>",
            20 + if i == 0 { 0 } else { 22 + 17 * (i - 1) },
            xml_escape(t)
        );
    }
    // Lanes: a head and a line down the body.
    for p in 0..tasks {
        let stroke = LANES[p % LANES.len()].1;
        let (lx, lw) = (lane_x[p], lane_w[p]);
        let _ = writeln!(
            o,
            "<g class=\"lane\" data-pid=\"{p}\"><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{body_end:.1}\" stroke=\"{stroke}\" stroke-opacity=\"0.35\" stroke-dasharray=\"4 4\"/>\
             <rect x=\"{lx:.1}\" y=\"{head_y:.1}\" width=\"{lw:.1}\" height=\"{head_h:.1}\" rx=\"6\" fill=\"{stroke}\"/>\
             <text class=\"lane-name\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"13\" fill=\"#ffffff\">{}</text></g>",
            lx + lw / 2.0,
            lx + lw / 2.0,
            head_y + head_h,
            lx + lw / 2.0,
            head_y + 20.0,
            xml_escape(&heads[p]),
        );
    }
    if let Some(c) = cycle_row {
        let top = ys[c] - 24.0;
        let _ = writeln!(
            o,
            "<g class=\"cycle\"><rect x=\"4\" y=\"{top:.1}\" width=\"{:.1}\" height=\"20\" fill=\"#fff4d6\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-weight=\"bold\" fill=\"#8a5a00\">\
             from here on the steps repeat for ever (a lasso: the cycle below is fair and never ends)</text>\
             <path d=\"M 22 {:.1} h -10 V {:.1} h 10\" fill=\"none\" stroke=\"#b7791f\" stroke-width=\"3\"/>\
             <text x=\"9\" y=\"{:.1}\" transform=\"rotate(-90 9 {:.1})\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#8a5a00\">cycle</text></g>",
            width - 8.0,
            width / 2.0,
            top + 14.0,
            ys[c],
            body_end - 6.0,
            (ys[c] + body_end) / 2.0,
            (ys[c] + body_end) / 2.0,
        );
    }
    // Rows.
    for (n, (r, lines)) in d.rows.iter().zip(&cells).enumerate() {
        let y0 = ys[n];
        let h = lines.len() as f64 * LINE_H + 6.0;
        let p = r.pid.min(tasks.saturating_sub(1));
        let (fill, stroke) = LANES[p % LANES.len()];
        let class = match (r.marked, r.harness) {
            (true, _) => "row violating",
            (false, true) => "row harness",
            _ => "row",
        };
        let _ = write!(
            o,
            "<g class=\"{class}\" data-step=\"{}\" data-event=\"{}\" data-pid=\"{}\">",
            n + 1,
            r.index,
            r.pid
        );
        let (bg, bs) = if r.marked { ("#fde2e2", "#c81e1e") } else { ("none", "none") };
        let _ = write!(
            o,
            "<rect class=\"rowbg\" x=\"4\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\" fill=\"{bg}\" stroke=\"{bs}\" stroke-width=\"2\"/>",
            y0 - 3.0,
            width - 8.0,
            h + 6.0
        );
        let mark = if r.marked { "&#9654; " } else { "" };
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{}\" font-weight=\"{}\">{mark}#{}</text>",
            gutter - 8.0,
            y0 + 12.0,
            if r.marked { "#c81e1e" } else { "#666" },
            if r.marked { "bold" } else { "normal" },
            r.index
        );
        let (cfill, cstroke, tfill, style) = if r.harness {
            ("#f1f1f1", "#aaaaaa", "#666666", " font-style=\"italic\"")
        } else {
            (fill, stroke, "#111111", "")
        };
        let cw = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_W + 2.0 * pad;
        let cx = lane_x[p] + 4.0;
        let _ = write!(
            o,
            "<rect class=\"cell\" x=\"{cx:.1}\" y=\"{y0:.1}\" width=\"{cw:.1}\" height=\"{h:.1}\" rx=\"4\" fill=\"{cfill}\" stroke=\"{cstroke}\" stroke-width=\"{}\"/>",
            if r.marked { "2" } else { "1" }
        );
        let _ = write!(
            o,
            "<text class=\"cell-text\" x=\"{:.1}\" y=\"{:.1}\" fill=\"{tfill}\"{style}>",
            cx + pad,
            y0 + 13.0
        );
        for (k, l) in lines.iter().enumerate() {
            let _ = write!(
                o,
                "<tspan x=\"{:.1}\" dy=\"{}\" xml:space=\"preserve\">{}</tspan>",
                cx + pad,
                if k == 0 { 0.0 } else { LINE_H },
                xml_escape(l)
            );
        }
        o.push_str("</text></g>\n");
    }
    // Arrows, over the rows: from the cause's cell edge to the effect's.
    for a in &arrows {
        let (f, t) = (&d.rows[a.from], &d.rows[a.to]);
        let (fp, tp) = (f.pid.min(tasks - 1), t.pid.min(tasks - 1));
        let fy = ys[a.from] + 8.0;
        let ty = ys[a.to] + 8.0;
        let cell_w =
            |n: usize| cells[n].iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_W + 2.0 * pad;
        let (fx, tx) = if lane_x[tp] > lane_x[fp] {
            (lane_x[fp] + 4.0 + cell_w(a.from), lane_x[tp] + 2.0)
        } else {
            (lane_x[fp] + 4.0, lane_x[tp] + 6.0 + cell_w(a.to))
        };
        let colour = arrow_colour(a.kind);
        let midx = (fx + tx) / 2.0;
        let _ = writeln!(
            o,
            "<path class=\"arrow {}\" data-from=\"{}\" data-to=\"{}\" d=\"M {fx:.1} {fy:.1} C {midx:.1} {fy:.1}, {midx:.1} {ty:.1}, {tx:.1} {ty:.1}\" \
             fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.8\" stroke-opacity=\"0.85\" marker-end=\"url(#ah-{})\"><title>{}</title></path>",
            a.kind,
            d.rows[a.from].index,
            d.rows[a.to].index,
            a.kind,
            xml_escape(&a.label)
        );
    }
    // Legend.
    let ly = body_end + 20.0;
    let mut lx = 12.0;
    for (kind, text) in [
        ("wake", "wake-up to the task it wakes"),
        ("lock", "lock released to the task that takes it next"),
        ("signal", "signal to its target"),
    ] {
        let c = arrow_colour(kind);
        let _ = write!(
            o,
            "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"2\" marker-end=\"url(#ah-{kind})\"/>\
             <text x=\"{:.1}\" y=\"{ly:.1}\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">{text}</text>",
            lx + 24.0,
            ly - 4.0,
            ly - 4.0,
            lx + 30.0
        );
        lx += 30.0 + text.len() as f64 * 6.2 + 24.0;
    }
    let _ = write!(
        o,
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#c81e1e\">&#9654; the violation shows at this row</text>"
    );
    o.push('\n');
    if harness {
        let _ = writeln!(
            o,
            "<text x=\"12\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"11\" font-style=\"italic\" fill=\"#555\">{}</text>",
            ly + 18.0,
            xml_escape(crate::trace::HARNESS_LEGEND)
        );
    }
    o.push_str("</svg>\n");
    o
}
