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
mod types;

use std::collections::BTreeMap;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::model::{Model, Named};

pub use self::types::{Checked, Exec, Invariant, Violation};

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
