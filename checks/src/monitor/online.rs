//! Online monitors: every invariant of a model as a small hashable state that steps on each
//! event, with a check at the end of an execution. The trace monitors (a function of a whole
//! execution's events) stay the reference; the online form is what a stateful search needs,
//! since its state must be part of the state fingerprint: two executions that reach the same
//! program state with different monitor states have different futures.
//!
//! Keep the state small (flags, small counters, node ids; no event indices, no histories):
//! every distinct monitor state multiplies the states the stateful engine stores.
//!
//! [`agree`] runs both forms over one execution and says where they differ; the loom scenario
//! tests call it on every execution they explore.
//!
//! The [`Online`] trait itself, with [`Found`] and [`CycleKey`], is in `types.rs` beside
//! [`Checked`], which names it, and is re-exported here.

use std::collections::BTreeMap;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::model::{Model, Named};

use super::types::{Checked, Exec};
pub use super::types::{CycleKey, Found, Online};

/// Run the online form over a whole execution: the invariants of `ids` it says are violated,
/// and the derived coverage it counts.
pub fn run<M: Checked>(exec: &Exec<M>, ids: &[M::Invariant]) -> (Vec<&'static str>, BTreeMap<&'static str, u64>) {
    let mut s = M::Online::default();
    let mut found = Found::<M>::default();
    for (pid, ev) in exec.events {
        s.step(exec.cfg, *pid, ev, &mut found);
    }
    s.end(exec.cfg, exec.fin, &mut found);
    let mut violated: Vec<&'static str> = found.violated.iter().filter(|i| ids.contains(i)).map(|i| i.name()).collect();
    violated.sort_unstable();
    violated.dedup();
    let mut derived = BTreeMap::new();
    for c in found.derived {
        *derived.entry(c.name()).or_insert(0) += 1;
    }
    (violated, derived)
}

/// Whether the online and trace forms agree on one execution: the same invariants violated
/// (as sets) and the same derived coverage counts. `Err` says how they differ.
pub fn agree<M: Checked>(exec: &Exec<M>, ids: &[M::Invariant]) -> Result<(), String> {
    let (online, online_derived) = run(exec, ids);
    let mut trace: Vec<&'static str> = super::check(exec, ids).iter().map(|v| v.invariant).collect();
    trace.sort_unstable();
    trace.dedup();
    let mut trace_derived = BTreeMap::new();
    M::derived_coverage(exec, &mut trace_derived);
    if online != trace || online_derived != trace_derived {
        return Err(format!(
            "online monitors say {online:?} (derived coverage {online_derived:?}), trace monitors say {trace:?} \
             (derived coverage {trace_derived:?})"
        ));
    }
    Ok(())
}

/// The online form of the invariants every model has, `progress` and `lock-released`
/// ([`super::progress`], [`super::lock_released`]): both are verdicts of single events (the
/// ghost's `Livelock` and `StepBound`, the lock layer's `LockLeaked` and `LockRecursion`), so
/// they need no state. `None` for a model without the invariant.
pub fn step_common<M: Model>(
    ev: &Event<M::Event>,
    progress: Option<M::Invariant>,
    lock_released: Option<M::Invariant>,
    found: &mut Found<M>,
) {
    let inv = match ev {
        Event::Kernel(KernelEvent::Livelock { .. } | KernelEvent::StepBound { .. }) => progress,
        Event::Kernel(KernelEvent::LockLeaked { .. } | KernelEvent::LockRecursion { .. }) => lock_released,
        _ => None,
    };
    found.violated.extend(inv);
}

/// A monitor's [`Online::projection`] from what reads each of its parts: `reads` pairs an
/// invariant with the parts (a mask) it reads. Every part some invariant reads is left out
/// unless an invariant of `checked` reads it.
pub fn projection<I: PartialEq>(checked: &[I], reads: &[(I, u32)]) -> u32 {
    let parts = |only_checked: bool| {
        reads.iter().filter(|(i, _)| !only_checked || checked.contains(i)).fold(0, |m, (_, p)| m | p)
    };
    parts(false) & !parts(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_projection_leaves_out_the_parts_only_unchecked_invariants_read() {
        let reads = [("a", 1), ("b", 2 | 4), ("c", 4)];
        assert_eq!(super::projection(&["a"], &reads), 2 | 4);
        assert_eq!(super::projection(&["b"], &reads), 1);
        assert_eq!(super::projection(&["c"], &reads), 1 | 2);
        assert_eq!(super::projection(&["a", "b", "c"], &reads), 0);
        assert_eq!(super::projection::<&str>(&[], &reads), 1 | 2 | 4);
    }
}
