//! Counterexamples for people: the race diagram (one column per thread, one protocol event
//! per row, in interleaving order) and replay tokens.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use mmmodel::event::Event;
use mmmodel::ghost::Pid;
use mmmodel::model::ProtoEvent;

use crate::engine::{stateful, Engine, EngineName, Replay};
use crate::monitor::Violation;
use crate::spec::AnySpec;

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
        let Some(c) = cycle_from else { return text };
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

/// Widest a column may be before its cells are cut.
const MAX_COL: usize = 54;

/// Render `events` as a race diagram. Rows are numbered by their index in the full trace
/// (the `#n` in violation messages); `verbose` also shows detail events (wait-queue locks).
pub fn race_diagram<E: ProtoEvent>(
    comms: &[String],
    events: &[(Pid, Event<E>)],
    violations: &[Violation],
    verbose: bool,
) -> String {
    let marks: Vec<usize> = violations.iter().filter_map(|v| v.at).collect();
    let rows: Vec<(usize, Pid, String)> = events
        .iter()
        .enumerate()
        .filter(|(i, (_, e))| verbose || !e.is_detail() || marks.contains(i))
        .map(|(i, (p, e))| (i, *p, e.to_string()))
        .collect();
    let mut width: Vec<usize> = comms.iter().enumerate().map(|(p, c)| format!("T{p} {c}").chars().count()).collect();
    for (_, p, s) in &rows {
        width[*p] = width[*p].max(s.chars().count().min(MAX_COL));
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
    for (i, p, s) in rows {
        let mark = if marks.contains(&i) { ">" } else { " " };
        let mut line = format!("{mark} {i:>num_w$}  ");
        for (q, w) in width.iter().enumerate() {
            let cell = if q == p { cut(&s, *w) } else { String::new() };
            line.push_str(&pad(&cell, *w));
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

fn cut(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A replay token: which engine, what to replay (an execution number, or for the stateful
/// engine the schedule itself), and a fingerprint of the scenario it belongs to (a token
/// applied to a different scenario is refused, not misread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayToken {
    pub engine_tag: String,
    pub replay: Replay,
    pub fingerprint: u32,
}

impl ReplayToken {
    pub fn new(spec: &dyn AnySpec, engine: Engine, replay: Replay) -> Self {
        ReplayToken { engine_tag: engine_tag(engine), replay, fingerprint: fingerprint(spec, engine) }
    }

    pub fn parse(s: &str) -> Option<Self> {
        let mut it = s.trim().rsplitn(3, '-');
        let fp = it.next()?;
        if fp.len() != 8 {
            return None;
        }
        let fp = u32::from_str_radix(fp, 16).ok()?;
        let payload = it.next()?;
        let engine_tag = it.next()?.to_string();
        if engine_tag.is_empty() || !engine_tag.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let replay = if engine_tag == "stateful" {
            let (choices, cycle) = stateful::parse_schedule(payload)?;
            Replay::Schedule { choices, cycle }
        } else {
            Replay::Execution(payload.parse().ok()?)
        };
        Some(ReplayToken { engine_tag, replay, fingerprint: fp })
    }

    /// The engine that made it.
    pub fn engine_name(&self) -> Option<EngineName> {
        Some(match self.engine_tag.as_str() {
            t if t.starts_with("loom") => EngineName::Loom,
            "pct" => EngineName::ShuttlePct,
            "random" => EngineName::ShuttleRandom,
            "dfs" => EngineName::ShuttleDfs,
            "stateful" => EngineName::Stateful,
            _ => return None,
        })
    }

    /// What it replays, in words: `execution 12`, `the schedule 0120…`.
    pub fn replay_label(&self) -> String {
        match &self.replay {
            Replay::Execution(i) => format!("execution {i}"),
            Replay::Schedule { choices, cycle } => format!("the schedule {}", stateful::schedule_text(choices, *cycle)),
        }
    }

    /// Does this token belong to `spec` explored by `engine`?
    pub fn fits(&self, spec: &dyn AnySpec, engine: Engine) -> bool {
        self.engine_tag == engine_tag(engine) && self.fingerprint == fingerprint(spec, engine)
    }
}

impl std::fmt::Display for ReplayToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.replay {
            Replay::Execution(i) => write!(f, "{}-{i}-{:08x}", self.engine_tag, self.fingerprint),
            Replay::Schedule { choices, cycle } => {
                write!(f, "{}-{}-{:08x}", self.engine_tag, stateful::schedule_text(choices, *cycle), self.fingerprint)
            }
        }
    }
}

fn engine_tag(e: Engine) -> String {
    match e {
        Engine::Loom { preemption_bound: None } => "loom".into(),
        Engine::Loom { preemption_bound: Some(b) } => format!("loompb{b}"),
        Engine::ShuttlePct { .. } => "pct".into(),
        Engine::ShuttleRandom { .. } => "random".into(),
        Engine::ShuttleDfs { .. } => "dfs".into(),
        Engine::Stateful { .. } => "stateful".into(),
    }
}

/// FNV-1a of everything that decides the exploration order and the monitors, code included.
fn fingerprint(spec: &dyn AnySpec, engine: Engine) -> u32 {
    // The code hash (checks/build.rs) ties a token to the model, monitors and engines that made it.
    let text = format!("mmcheck-replay-v2|{}|{}|{:?}", env!("MMCHECK_CODE_HASH"), spec.replay_text(), engine);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::ReplayToken;
    use crate::engine::Replay;

    #[test]
    fn tokens_round_trip_and_reject_garbage() {
        let t = ReplayToken { engine_tag: "loompb3".into(), replay: Replay::Execution(4711), fingerprint: 0xdead_beef };
        assert_eq!(t.to_string(), "loompb3-4711-deadbeef");
        assert_eq!(ReplayToken::parse(&t.to_string()), Some(t));
        for bad in [
            "",
            "loom",
            "loom-1",
            "loom-x-deadbeef",
            "lo om-1-deadbeef",
            "-1-deadbeef",
            "loom-1-nothex",
            "stateful-0w1-deadbeef",
        ] {
            assert_eq!(ReplayToken::parse(bad), None, "{bad}");
        }
        let s = ReplayToken {
            engine_tag: "stateful".into(),
            replay: Replay::Schedule { choices: vec![0, 2, 1, 1], cycle: Some(2) },
            fingerprint: 7,
        };
        assert_eq!(s.to_string(), "stateful-02.11-00000007");
        assert_eq!(ReplayToken::parse(&s.to_string()), Some(s));
    }
}
