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

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::ghost::Pid;
use mmmodel::model::{Model, Named, Perm};

use super::{Checked, Exec};

/// What one step (or the end) of an online monitor found.
#[derive(Debug)]
pub struct Found<M: Model> {
    /// Invariants violated (an invariant may be reported more than once).
    pub violated: Vec<M::Invariant>,
    /// Derived coverage events (the ones [`Checked::derived_coverage`] counts from a trace).
    pub derived: Vec<M::Coverage>,
}

impl<M: Model> Default for Found<M> {
    fn default() -> Self {
        Found { violated: Vec::new(), derived: Vec::new() }
    }
}

/// The online form of model `M`'s invariants.
pub trait Online<M: Model>: Clone + Eq + Hash + Debug + Default + Send + Sync + 'static {
    /// Task `pid` did `ev`.
    fn step(&mut self, cfg: &M::Config, pid: Pid, ev: &Event<M::Event>, found: &mut Found<M>);
    /// Every task has finished, in final state `fin`.
    fn end(&self, cfg: &M::Config, fin: &M::Final, found: &mut Found<M>);
    /// The state with its nodes and pids renamed by `perm` (a symmetry reduction hashes every
    /// image of a state: docs/model.md, "Symmetry"); `None` (the default): this monitor cannot,
    /// and symmetry is not applied.
    fn permuted(&self, _perm: &Perm) -> Option<Self> {
        None
    }
    /// The online form of the model's lasso invariants ([`Checked::LASSO`]): the stuck
    /// situations this state is in, each as a [`CycleKey`]. A fair cycle every state of which
    /// carries the same key, and in which the key's `must_move` tasks move, violates the key's
    /// invariant; the stateful engine looks for such cycles among the fair cycles it finds
    /// (docs/model.md, "no-soft-lockup: a class of fair cycles"). None by default.
    fn cycle_keys(&self, _out: &mut Vec<CycleKey>) {}
}

/// One stuck situation of a state, for a lasso invariant (see [`Online::cycle_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CycleKey {
    /// The invariant: an index into [`Checked::LASSO`].
    pub class: u8,
    /// Which situation (non-zero): a cycle must keep the same one in every state.
    pub key: u64,
    /// Tasks that must move in such a cycle.
    pub must_move: u32,
}

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
