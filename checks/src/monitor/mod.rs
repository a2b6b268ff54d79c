//! Invariant monitors: for each model, one function per invariant, each a function of one
//! execution's events (in interleaving order) and final state. Nothing here knows which engine
//! or platform produced the execution.
//!
//! A model's monitors live in one file (`reclaim.rs`, `compaction.rs`), which implements
//! [`Checked`] for the model: its [`Invariant`]s (id, statement, what exercises it, the
//! monitor), and the coverage only the whole trace can tell.

pub mod compaction;
pub mod online;
pub mod reclaim;
pub mod throttle;

use std::collections::BTreeMap;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::ghost::Pid;
use mmmodel::model::{Model, Named};

/// One invariant violated in one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The invariant's id.
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
    pub fn new(invariant: impl Named, at: Option<usize>, message: String) -> Self {
        Violation { invariant: invariant.name(), message, at, wasted_jiffies: 0, weak_memory: false }
    }
}

/// One execution of model `M` as the monitors see it.
pub struct Exec<'a, M: Model> {
    pub cfg: &'a M::Config,
    pub events: &'a [(Pid, Event<M::Event>)],
    pub fin: &'a M::Final,
}

impl<M: Model> Exec<'_, M> {
    pub fn tasks(&self) -> usize {
        M::roles(self.cfg).len()
    }
    /// `T2 (kswapd1)`.
    pub fn pid_name(&self, pid: Pid) -> String {
        match M::roles(self.cfg).get(pid) {
            Some(r) => format!("T{pid} ({})", M::comm(r)),
            None => format!("T{pid}"),
        }
    }
}

/// An invariant of model `M`: its id, a one-line statement, the coverage events an
/// exploration must reach for its pass to say anything about it, and its monitor.
pub struct Invariant<M: Model> {
    pub id: M::Invariant,
    pub statement: &'static str,
    /// The situation the invariant constrains, as coverage events: a pass that never reached
    /// all of them is `unexercised` in the matrix, not `holds`.
    pub exercised_by: &'static [M::Coverage],
    pub check: fn(&Exec<M>) -> Vec<Violation>,
}

/// A model with its monitors: what the checker needs beyond [`Model`].
pub trait Checked: Model {
    /// Every invariant, in documentation order.
    const INVARIANTS: &'static [Invariant<Self>];
    /// The invariant an execution that does not end violates.
    const PROGRESS: Self::Invariant;
    /// The online form of every invariant (and of the derived coverage): a small hashable
    /// state stepped on each event, part of the stateful engine's state fingerprint. It must
    /// agree with the trace monitors on every execution (`online::agree`).
    type Online: online::Online<Self>;

    /// Coverage that only the whole trace can tell (added to the per-event counts).
    fn derived_coverage(_exec: &Exec<Self>, _cov: &mut BTreeMap<&'static str, u64>) {}

    /// Whether an exploration of `cfg` that reached `coverage` exercised `inv`. By default:
    /// it reached every event of [`Invariant::exercised_by`].
    fn exercised(inv: &Invariant<Self>, _cfg: &Self::Config, coverage: &BTreeMap<&'static str, u64>) -> bool {
        inv.exercised_by.iter().all(|e| coverage.get(e.name()).is_some_and(|&n| n > 0))
    }

    /// Invariants decided only on lassos: classes of fair cycles. Their online form is
    /// [`online::Online::cycle_keys`], which the stateful engine reads at every state it stores
    /// and decides on the whole state graph (a fair cycle that keeps one stuck situation for
    /// ever); their trace form is [`Checked::lasso`]. A search cannot aim at them as at a
    /// safety invariant, so the registry makes none of them a search target.
    const LASSO: &'static [Self::Invariant] = &[];

    /// The trace form of the lasso invariants: the violations of a lasso (an infinite
    /// execution: the events before `cycle_from` lead into a cycle that repeats for ever),
    /// besides `progress`, which every fair cycle violates. The stateful engine checks that
    /// each cycle it classed under a lasso invariant is one by this form too, and a replayed
    /// lasso is judged by it. None by default.
    fn lasso(_cfg: &Self::Config, _events: &[(Pid, Event<Self::Event>)], _cycle_from: usize) -> Vec<Violation> {
        Vec::new()
    }

    /// Runtime mode: counters made from one iteration's violations (none by default).
    fn violation_counters(_violations: &[Violation], _out: &mut mmmodel::model::Counters) {}

    fn invariant(id: Self::Invariant) -> &'static Invariant<Self> {
        Self::INVARIANTS.iter().find(|i| i.id == id).expect("every invariant id has a monitor")
    }
}

/// Run the monitors of `ids` over one execution.
pub fn check<M: Checked>(exec: &Exec<M>, ids: &[M::Invariant]) -> Vec<Violation> {
    let mut out = Vec::new();
    for inv in M::INVARIANTS {
        if ids.contains(&inv.id) {
            out.extend((inv.check)(exec));
        }
    }
    out
}

/// Counts of coverage events in one execution, with the ones derived from the whole trace.
pub fn coverage<M: Checked>(exec: &Exec<M>) -> BTreeMap<&'static str, u64> {
    let mut m = BTreeMap::new();
    for (_, e) in exec.events {
        if let Some(c) = M::coverage(e) {
            *m.entry(c.name()).or_insert(0) += 1;
        }
    }
    M::derived_coverage(exec, &mut m);
    m
}

/// `progress` (every model): the ghost's livelock and step-bound reports.
pub fn progress<M: Model>(exec: &Exec<M>, id: M::Invariant) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match *e {
            Event::Kernel(KernelEvent::Livelock { period }) => out.push(Violation::new(
                id,
                Some(i),
                format!(
                    "{} loops forever: with every other thread finished its loop returns to the same state every \
                     {period} iteration(s)",
                    exec.pid_name(*pid)
                ),
            )),
            Event::Kernel(KernelEvent::StepBound { steps }) => out.push(Violation::new(
                id,
                Some(i),
                format!("{} passed {steps} loop iterations without finishing (the step bound)", exec.pid_name(*pid)),
            )),
            _ => {}
        }
    }
    out
}

/// `lock-released` (every model): no thread ends holding a lock or re-takes one it holds.
pub fn lock_released<M: Model>(exec: &Exec<M>, id: M::Invariant) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match *e {
            Event::Kernel(KernelEvent::LockLeaked { lock }) => {
                out.push(Violation::new(id, Some(i), format!("{} ends holding {lock}", exec.pid_name(*pid))))
            }
            Event::Kernel(KernelEvent::LockRecursion { lock }) => out.push(Violation::new(
                id,
                Some(i),
                format!("{} takes {lock} while already holding it (a self-deadlock)", exec.pid_name(*pid)),
            )),
            _ => {}
        }
    }
    out
}
