//! Counterexamples for people: the race diagram (one column per thread, one protocol event
//! per row, in interleaving order) and replay tokens.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::ghost::Pid;
use mmmodel::model::ProtoEvent;

use crate::monitor::Violation;

/// One execution's events, of whichever model: what a report keeps of a counterexample.
#[derive(Clone)]
pub struct Trace(Arc<dyn AnyTrace>);

/// The operations a report needs on a trace whose event type it does not know.
trait AnyTrace: Send + Sync {
    fn len(&self) -> usize;
    fn render(&self, comms: &[String], violations: &[Violation], verbose: bool) -> String;
    fn as_any(&self) -> &dyn Any;
    fn same(&self, other: &dyn AnyTrace) -> bool;
    fn lines(&self) -> Vec<(Pid, String)>;
    fn rows(&self, tasks: usize, violations: &[Violation], verbose: bool) -> Vec<DiagramRow>;
    fn kernel_events(&self) -> Vec<(Pid, Option<KernelEvent>)>;
}

impl<E: ProtoEvent> AnyTrace for Vec<(Pid, Event<E>)> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn render(&self, comms: &[String], violations: &[Violation], verbose: bool) -> String {
        race_diagram(comms, self, violations, verbose)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn same(&self, other: &dyn AnyTrace) -> bool {
        other.as_any().downcast_ref::<Self>() == Some(self)
    }
    fn lines(&self) -> Vec<(Pid, String)> {
        self.iter().map(|(p, e)| (*p, e.to_string())).collect()
    }
    fn rows(&self, tasks: usize, violations: &[Violation], verbose: bool) -> Vec<DiagramRow> {
        diagram_rows(tasks, self, violations, verbose)
    }
    fn kernel_events(&self) -> Vec<(Pid, Option<KernelEvent>)> {
        self.iter().map(|(p, e)| (*p, e.kernel().cloned())).collect()
    }
}

impl Trace {
    pub fn new<E: ProtoEvent>(events: Vec<(Pid, Event<E>)>) -> Self {
        Trace(Arc::new(events))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
    /// The race diagram (see [`race_diagram`]).
    pub fn render(&self, comms: &[String], violations: &[Violation], verbose: bool) -> String {
        self.0.render(comms, violations, verbose)
    }
    /// The race diagram of a lasso: the rows from event `cycle_from` on are marked `~` (the
    /// part that repeats for ever), under a line that says so.
    pub fn render_lasso(
        &self,
        comms: &[String],
        violations: &[Violation],
        verbose: bool,
        cycle_from: Option<usize>,
    ) -> String {
        let text = self.render(comms, violations, verbose);
        let Some(c) = cycle_from else {
            let by_step_bound = violations.iter().any(|v| v.invariant == "progress");
            return fold_repeats(&text, by_step_bound);
        };
        let mut out = String::with_capacity(text.len() + 80);
        let mut marked = false;
        for (n, line) in text.lines().enumerate() {
            // Rows are `M NN  cells`: a mark, the event's index, its cells (two header lines).
            let index = line.get(1..).and_then(|r| r.split_whitespace().next()).and_then(|t| t.parse::<usize>().ok());
            match index {
                Some(i) if n >= 2 && i >= c => {
                    if !marked {
                        out.push_str("  ~~ from here on the steps repeat for ever ~~\n");
                        marked = true;
                    }
                    let mark = if line.starts_with('>') { ">" } else { "~" };
                    out.push_str(mark);
                    out.push_str(&line[1..]);
                }
                // A wrapped cell's continuation row belongs to the row above it.
                None if marked && n >= 2 && line.starts_with(' ') && !line.trim().is_empty() => {
                    out.push('~');
                    out.push_str(&line[1..]);
                }
                _ => out.push_str(line),
            }
            out.push('\n');
        }
        out
    }

    /// Each event as (task, kernel-terms text).
    pub fn lines(&self) -> Vec<(Pid, String)> {
        self.0.lines()
    }
    /// The rows of the race diagram (see [`diagram_rows`]), for a drawing of it.
    pub fn rows(&self, tasks: usize, violations: &[Violation], verbose: bool) -> Vec<DiagramRow> {
        self.0.rows(tasks, violations, verbose)
    }
    /// Each event's task, and the event when it is one of the kernel primitives'.
    pub fn kernel_events(&self) -> Vec<(Pid, Option<KernelEvent>)> {
        self.0.kernel_events()
    }
    /// The events of model `E`, if that is what this trace holds.
    pub fn events<E: ProtoEvent>(&self) -> Option<&[(Pid, Event<E>)]> {
        self.0.as_any().downcast_ref::<Vec<(Pid, Event<E>)>>().map(|v| v.as_slice())
    }
}

impl PartialEq for Trace {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_ref())
    }
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.lines().iter().map(|(p, l)| format!("T{p}: {l}"))).finish()
    }
}

/// The fewest rows a repeating suffix must cover, and the fewest copies of it, to be folded.
const FOLD_MIN_ROWS: usize = 12;
const FOLD_MIN_REPEATS: usize = 3;
/// The most rows after the last repeats for them to be what the step bound ended.
const FOLD_MAX_TAIL: usize = 4;
/// The longest block of rows looked for.
const FOLD_MAX_PERIOD: usize = 64;

/// A diagram with each run of one block of rows repeated again and again (a bounded engine's
/// lasso: loom and shuttle run a livelock until the step bound) folded: the block printed
/// once, marked `~`, and a line that says how many times it repeated, which rows were left
/// out, and (with `by_step_bound`, for the last run) that the step bound ended it. Rows compare by their cells, not their
/// indexes; a wrapped cell's continuation lines belong to its row. Anything else comes back
/// as it is.
pub fn fold_repeats(text: &str, by_step_bound: bool) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 2 + FOLD_MIN_ROWS {
        return text.to_string();
    }
    let row_index =
        |l: &str| l.get(1..).and_then(|r| r.split_whitespace().next()).and_then(|t| t.parse::<usize>().ok());
    // Rows from line 2 on (two header lines): (first line, line count, cells).
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut end = 2;
    for (n, l) in lines.iter().enumerate().skip(2) {
        if row_index(l).is_some() {
            rows.push((n, 1));
            end = n + 1;
        } else if l.starts_with(' ') && !l.trim().is_empty() && !rows.is_empty() && end == n {
            rows.last_mut().expect("a row").1 += 1;
            end = n + 1;
        } else {
            break;
        }
    }
    let cells = |&(first, count): &(usize, usize)| -> String {
        let mut c = String::new();
        for (k, l) in lines[first..first + count].iter().enumerate() {
            let l = l.get(1..).unwrap_or("");
            let rest = if k == 0 { l.trim_start().split_once(' ').map_or("", |(_, r)| r) } else { l };
            c.push_str(rest);
            c.push('\n');
        }
        c
    };
    let keys: Vec<String> = rows.iter().map(cells).collect();
    let n = keys.len();
    // From each row on, the run of copies of a block of `p` rows covering the most rows.
    let run_at = |i: usize| -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for p in 1..=FOLD_MAX_PERIOD.min((n - i) / FOLD_MIN_REPEATS) {
            let mut k = 1;
            while i + (k + 1) * p <= n && (0..p).all(|j| keys[i + k * p + j] == keys[i + j]) {
                k += 1;
            }
            if k >= FOLD_MIN_REPEATS && k * p >= FOLD_MIN_ROWS && best.is_none_or(|(bp, bk)| k * p > bp * bk) {
                best = Some((p, k));
            }
        }
        best
    };
    let first_row = |r: usize| row_index(lines[rows[r].0]).unwrap_or(0);
    let push_row = |out: &mut String, r: usize, mark: Option<char>| {
        let (first, count) = rows[r];
        for l in &lines[first..first + count] {
            match mark {
                Some(m) => {
                    out.push(m);
                    out.push_str(l.get(1..).unwrap_or(""));
                }
                None => out.push_str(l),
            }
            out.push('\n');
        }
    };
    let mut out = String::with_capacity(text.len());
    for l in &lines[..2] {
        out.push_str(l);
        out.push('\n');
    }
    let mut folded = false;
    let mut i = 0;
    while i < n {
        let Some((p, k)) = run_at(i) else {
            push_row(&mut out, i, None);
            i += 1;
            continue;
        };
        folded = true;
        let last = i + k * p - 1;
        out.push_str(&format!(
            "  ~~ from #{} on, these {p} rows repeat {k} times in all, to #{} ~~\n",
            first_row(i),
            first_row(last)
        ));
        for r in i..i + p {
            push_row(&mut out, r, Some(if lines[rows[r].0].starts_with('>') { '>' } else { '~' }));
        }
        let ended = if by_step_bound && n - 1 - last <= FOLD_MAX_TAIL {
            ", until the step bound ended the execution"
        } else {
            ""
        };
        out.push_str(&format!(
            "  ~~ ... {} more times (#{} to #{} left out){ended} ~~\n",
            k - 1,
            first_row(i + p),
            first_row(last)
        ));
        // A row at which a violation shows is printed anyway.
        for r in i + p..=last {
            if lines[rows[r].0].starts_with('>') {
                push_row(&mut out, r, None);
            }
        }
        i = last + 1;
    }
    if !folded {
        return text.to_string();
    }
    for l in &lines[end..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Widest a column may be: a longer cell is wrapped onto continuation rows (at a space, the
/// continuation indented by two), never cut, so no part of an event is lost.
const MAX_COL: usize = 64;

/// The prefix of the cells of a task after it "sleeps forever: nobody left to wake it".
/// In the kernel that task would stay asleep; the checker lets it go on so that the
/// execution can end, and what it does then is the harness's, not the kernel's.
pub const HARNESS: &str = "(harness) ";

/// The line under a diagram that has [`HARNESS`] cells.
pub(crate) const HARNESS_LEGEND: &str =
    "(harness): after \"sleeps forever\" the kernel task stays asleep; the rows so marked are \
                              the checker letting it finish so that the execution can end";

/// Render `events` as a race diagram. Rows are numbered by their index in the full trace
/// (the `#n` in violation messages); `verbose` also shows detail events (wait-queue locks).
/// A task's events after its `SleptForever` are marked [`HARNESS`], and a legend says so.
pub fn race_diagram<E: ProtoEvent>(
    comms: &[String],
    events: &[(Pid, Event<E>)],
    violations: &[Violation],
    verbose: bool,
) -> String {
    let marks: Vec<usize> = violations.iter().filter_map(|v| v.at).collect();
    let all = diagram_rows(comms.len(), events, violations, verbose);
    let harness_rows = all.iter().any(|r| r.harness);
    let rows: Vec<(usize, Pid, Vec<String>)> =
        all.into_iter().map(|r| (r.index, r.pid, wrap(&r.text, MAX_COL))).collect();
    let mut width: Vec<usize> = comms.iter().enumerate().map(|(p, c)| format!("T{p} {c}").chars().count()).collect();
    for (_, p, lines) in &rows {
        for l in lines {
            width[*p] = width[*p].max(l.chars().count());
        }
    }
    let mut out = String::new();
    let num_w = events.len().to_string().len().max(2);
    let mut header = format!("  {:>num_w$}  ", "#");
    for (p, c) in comms.iter().enumerate() {
        header.push_str(&pad(&format!("T{p} {c}"), width[p]));
        header.push_str("  ");
    }
    out.push_str(header.trim_end());
    out.push('\n');
    let mut rule = format!("  {}  ", "-".repeat(num_w));
    for w in &width {
        rule.push_str(&"-".repeat(*w));
        rule.push_str("  ");
    }
    out.push_str(rule.trim_end());
    out.push('\n');
    for (i, p, lines) in rows {
        for (n, cell) in lines.iter().enumerate() {
            let mut line = if n == 0 {
                let mark = if marks.contains(&i) { ">" } else { " " };
                format!("{mark} {i:>num_w$}  ")
            } else {
                format!("  {:>num_w$}  ", "")
            };
            for (q, w) in width.iter().enumerate() {
                line.push_str(&pad(if q == p { cell } else { "" }, *w));
                line.push_str("  ");
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    if harness_rows {
        out.push_str(HARNESS_LEGEND);
        out.push('\n');
    }
    out
}

/// One row of a race diagram: the event at `index` of the trace, by task `pid`, in the
/// diagram's words (`text`, with the [`HARNESS`] prefix where it has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagramRow {
    pub index: usize,
    pub pid: Pid,
    pub text: String,
    /// After this task's "sleeps forever": the harness's, not the kernel's.
    pub harness: bool,
    /// A violation shows at this event (the `>` of the text diagram).
    pub marked: bool,
}

/// The rows [`race_diagram`] prints, in its order: every event but the detail ones (unless
/// `verbose`, or a violation shows at it), a task's events after its `SleptForever` marked
/// [`HARNESS`]. `tasks` is the number of tasks.
pub fn diagram_rows<E: ProtoEvent>(
    tasks: usize,
    events: &[(Pid, Event<E>)],
    violations: &[Violation],
    verbose: bool,
) -> Vec<DiagramRow> {
    let marks: Vec<usize> = violations.iter().filter_map(|v| v.at).collect();
    // Which tasks are past their "sleeps forever", event by event (over every event, shown or
    // not).
    let mut asleep = vec![false; tasks];
    let mut rows = Vec::new();
    for (i, (p, e)) in events.iter().enumerate() {
        let harness = asleep.get(*p).copied().unwrap_or(false);
        if matches!(e, Event::Kernel(KernelEvent::SleptForever)) {
            if let Some(a) = asleep.get_mut(*p) {
                *a = true;
            }
        }
        if !(verbose || !e.is_detail() || marks.contains(&i)) {
            continue;
        }
        let text = if harness { format!("{HARNESS}{e}") } else { e.to_string() };
        rows.push(DiagramRow { index: i, pid: *p, text, harness, marked: marks.contains(&i) });
    }
    rows
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// `s` in lines of at most `w` characters, broken at spaces where possible (a word longer
/// than a line is split); continuation lines are indented by two spaces.
pub(crate) fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(8);
    let mut out = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    let mut indent = "";
    loop {
        let room = w - indent.len();
        if rest.len() <= room {
            out.push(format!("{indent}{}", rest.iter().collect::<String>()));
            return out;
        }
        // The last space that keeps the line within `room` (not at the start).
        let cut = (1..=room).rev().find(|&k| rest[k] == ' ');
        let (line, next) = match cut {
            Some(k) => (rest[..k].iter().collect::<String>(), k + 1),
            None => (rest[..room].iter().collect::<String>(), room),
        };
        out.push(format!("{indent}{line}"));
        rest = rest[next..].to_vec();
        indent = "  ";
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_repeated_block_of_rows_is_printed_once_with_its_count() {
        let mut text = String::from("    #  T0 a\n  ---  ----\n");
        text.push_str("    0  start\n");
        for i in 0..40 {
            text.push_str(&format!("{:>5}  {}\n", 1 + i, ["check", "abandon", "retry"][i % 3]));
        }
        text.push_str(">  41  LOOPS FOREVER\n");
        let folded = super::fold_repeats(&text, true);
        assert!(folded.contains("from #1 on, these 3 rows repeat 13 times in all, to #39"), "{folded}");
        assert!(
            folded.contains("12 more times (#4 to #39 left out), until the step bound ended the execution"),
            "{folded}"
        );
        assert_eq!(folded.lines().filter(|l| l.starts_with('~')).count(), 3, "{folded}");
        assert!(folded.contains("   40  check\n") && folded.contains(">  41  LOOPS FOREVER"), "{folded}");
        // Nothing repeated: unchanged.
        let plain = "    #  T0 a\n  ---  ----\n    0  start\n    1  end\n";
        assert_eq!(super::fold_repeats(plain, true), plain);
    }
    use mmmodel::event::{Event, KernelEvent as K, LockName, Wq};
    use mmmodel::model::ProtoEvent;

    use super::{race_diagram, wrap, HARNESS, MAX_COL};
    use crate::monitor::Violation;

    /// A protocol with one event, its text as given.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct Say(&'static str);
    impl std::fmt::Display for Say {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl ProtoEvent for Say {}

    #[test]
    fn a_long_cell_is_wrapped_not_cut() {
        assert_eq!(wrap("short", 64), vec!["short"]);
        let long = "wake_up_interruptible(kswapd_contended_wait): queue EMPTY and a few more words to wrap";
        let lines = wrap(long, 50);
        assert!(lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= 50), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")), "{lines:?}");
        let joined: Vec<&str> = lines.iter().map(|l| l.trim()).collect();
        assert_eq!(joined.join(" "), long, "nothing lost");
        // A word longer than the line is split, not lost.
        let word = "x".repeat(100);
        assert_eq!(wrap(&word, 40).iter().map(|l| l.trim()).collect::<String>(), word);
        let comms = vec!["a".to_string()];
        let text = "wake_up_interruptible(kswapd_contended_wait): queue EMPTY, then a long tail of words";
        let leaked: &'static str = Box::leak(text.to_string().into_boxed_str());
        let d = race_diagram(&comms, &[(0, Event::Proto(Say(leaked)))], &[], false);
        assert!(!d.contains('…'), "{d}");
        assert!(d.lines().all(|l| l.chars().count() <= MAX_COL + 8), "{d}");
        assert!(d.contains("queue EMPTY,"), "{d}");
    }

    #[test]
    fn after_sleeps_forever_the_sleepers_rows_are_the_harnesss() {
        let comms = vec!["kswapd0".to_string(), "kswapd1".to_string()];
        let lock = LockName::Lock("tree_lock");
        let events: Vec<(usize, Event<Say>)> = vec![
            (1, Event::Kernel(K::Schedule { timeout: 10 })),
            (0, Event::Proto(Say("kswapd0 goes to sleep"))),
            (1, Event::Kernel(K::SleptForever)),
            (1, Event::Kernel(K::FinishWait { wq: Wq("kswapd_contended_wait") })),
            (1, Event::Kernel(K::LockAcquired { lock, trylock: false })),
            (0, Event::Proto(Say("after"))),
        ];
        let v = Violation::new(mmmodel::reclaim::Invariant::NoLostWakeup, Some(2), "lost".into());
        let d = race_diagram(&comms, &events, &[v], false);
        let row = |n: usize| {
            d.lines().find(|l| l.trim_start_matches('>').trim_start().starts_with(&format!("{n} "))).unwrap()
        };
        assert!(!row(2).contains(HARNESS), "the sleep itself is the kernel's: {d}");
        assert!(row(3).contains(&format!("{HARNESS}finish_wait(kswapd_contended_wait)")), "{d}");
        assert!(row(4).contains(&format!("{HARNESS}spin_lock(tree_lock)")), "{d}");
        // Only the sleeper's column.
        assert!(!row(1).contains(HARNESS) && !row(5).contains(HARNESS), "{d}");
        assert!(d.trim_end().lines().last().unwrap().starts_with("(harness): "), "{d}");
        // No sleeper, no legend.
        let d = race_diagram(&comms, &events[..2], &[], false);
        assert!(!d.contains("(harness)"), "{d}");
    }
}
