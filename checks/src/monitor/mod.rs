//! Invariant monitors: one function per invariant id, each a function of one execution's
//! events (in interleaving order) and final state. Nothing here knows which engine or
//! platform produced the execution.

pub mod compaction;
pub mod reclaim;

use std::collections::BTreeMap;

use mmmodel::event::Event;
use mmmodel::ghost::Pid;
use mmmodel::mutation::ModelKind;

use crate::spec::{Final, ModelSpec};

/// One invariant violated in one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub invariant: &'static str,
    pub message: String,
    /// Index of the event at which the violation shows.
    pub at: Option<usize>,
    /// Jiffies slept for nothing (a bounded lost wakeup), if any.
    pub wasted_jiffies: u64,
    /// The trace only makes sense with a load that read a stale value (a weak-memory
    /// outcome). The shortest-counterexample search prefers traces without one, which read as
    /// plain interleavings.
    pub weak_memory: bool,
}

impl Violation {
    pub fn new(invariant: &'static str, at: Option<usize>, message: String) -> Self {
        Violation { invariant, message, at, wasted_jiffies: 0, weak_memory: false }
    }
}

/// One execution as the monitors see it.
pub struct Exec<'a> {
    pub model: &'a ModelSpec,
    pub events: &'a [(Pid, Event)],
    pub fin: &'a Final,
}

/// An invariant: stable id, the model it belongs to, a one-line statement, its monitor.
pub struct Invariant {
    pub id: &'static str,
    pub model: ModelKind,
    pub statement: &'static str,
    pub check: fn(&Exec) -> Vec<Violation>,
}

/// Every invariant the checker knows, both models.
pub fn all_invariants() -> Vec<&'static Invariant> {
    reclaim::INVARIANTS.iter().chain(compaction::INVARIANTS.iter()).collect()
}

/// The invariants of one model.
pub fn invariants(model: ModelKind) -> Vec<&'static Invariant> {
    all_invariants().into_iter().filter(|i| i.model == model).collect()
}

pub fn find(model: ModelKind, id: &str) -> Option<&'static Invariant> {
    all_invariants().into_iter().find(|i| i.model == model && i.id == id)
}

/// Run the monitors named in `ids` over one execution.
pub fn check(exec: &Exec, ids: &[&'static str]) -> Vec<Violation> {
    let mut out = Vec::new();
    for inv in invariants(exec.model.kind()) {
        if ids.contains(&inv.id) {
            out.extend((inv.check)(exec));
        }
    }
    out
}

/// Counts of coverage events in one execution, plus the events monitors derive (such as
/// `slept-after-release`).
pub fn coverage(exec: &Exec) -> BTreeMap<&'static str, u64> {
    let mut m = BTreeMap::new();
    for (_, e) in exec.events {
        if let Some(n) = e.coverage_name() {
            *m.entry(n).or_insert(0) += 1;
        }
    }
    match exec.model {
        ModelSpec::KswapdStall(_) => {
            let n = reclaim::slept_after_release(exec);
            if n > 0 {
                m.insert("slept-after-release", n);
            }
        }
        ModelSpec::Compaction(_) => {
            let n = compaction::aborts_at_boundary(exec);
            if n > 0 {
                m.insert("abort-at-boundary", n);
            }
        }
    }
    m
}

/// The coverage event names of a model (the vocabulary of `reaches`).
pub fn coverage_names(model: ModelKind) -> &'static [&'static str] {
    match model {
        ModelKind::KswapdStall => &[
            "trylock-failed",
            "cmpxchg-won",
            "cmpxchg-lost",
            "enqueued",
            "woken",
            "timed-out",
            "slept-after-release",
            "released",
            "wake-empty-queue",
            "congested-set",
            "congested-cleared",
            "direct-stall",
        ],
        ModelKind::Compaction => &[
            "lock-contended",
            "contended-set",
            "block-finished",
            "block-abandoned",
            "abort-at-boundary",
            "fatal-seen",
            "resched-seen",
            "scanners-met",
            "no-progress-iteration",
        ],
    }
}

/// The coverage events that mean "the contended path was explored" (a pass that reaches
/// none of them is vacuous).
pub fn contended_path_events(model: ModelKind) -> &'static [&'static str] {
    match model {
        ModelKind::KswapdStall => &["trylock-failed", "cmpxchg-lost", "direct-stall"],
        ModelKind::Compaction => &["lock-contended", "contended-set", "fatal-seen", "resched-seen"],
    }
}

/// Helpers shared by the monitors.
pub(crate) fn pid_name(exec: &Exec, pid: Pid) -> String {
    format!("T{pid} ({})", exec.model.comms()[pid])
}

/// `progress` (both models): the ghost's livelock and step-bound reports.
pub fn progress(exec: &Exec) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match *e {
            Event::Livelock { period } => out.push(Violation::new(
                "progress",
                Some(i),
                format!(
                    "{} loops forever: with every other thread finished its loop returns to the same state every \
                     {period} iteration(s)",
                    pid_name(exec, *pid)
                ),
            )),
            Event::StepBound { steps } => out.push(Violation::new(
                "progress",
                Some(i),
                format!("{} passed {steps} loop iterations without finishing (the step bound)", pid_name(exec, *pid)),
            )),
            _ => {}
        }
    }
    out
}

/// `lock-released` (both models): no thread ends holding a lock or re-takes one it holds.
pub fn lock_released(exec: &Exec) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match *e {
            Event::LockLeaked { lock } => out.push(Violation::new(
                "lock-released",
                Some(i),
                format!("{} ends holding {lock:?}", pid_name(exec, *pid)),
            )),
            Event::LockRecursion { lock } => out.push(Violation::new(
                "lock-released",
                Some(i),
                format!("{} takes {lock:?} while already holding it (a self-deadlock)", pid_name(exec, *pid)),
            )),
            _ => {}
        }
    }
    out
}
