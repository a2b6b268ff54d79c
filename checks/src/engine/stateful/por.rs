//! Partial-order reduction: the independence relation of two steps, and when the reduction
//! applies at all. The search strategy that uses it (sleep sets with state caching) is
//! `dfs/sleep.rs`.

use super::findings::{lasso_checked, Findings};
use super::ghost::{StatefulGhost, StepEvents, TOUCH_SLEEPERS};
use super::space::Op;
use crate::engine::types::{Memory, Options, ReductionDefect};
use crate::monitor::online::Online;
use crate::monitor::Checked;
use crate::spec::Spec;

/// A step's footprint changes what every other step sees (it started a task, or made
/// an object or a lock): dependent on everything.
pub(super) const TOUCH_GLOBAL: u8 = 4;

/// The step ended its task. An exit is no more dependent than any other step: what it does to
/// the other tasks goes through its operation (a join of the task is never enabled while the
/// task runs, so never beside its steps), its events, and the ghost's exit bookkeeping
/// (`task_exit`, [`TOUCH_SLEEPERS`]); the fingerprint leaves out a finished task's locals in
/// either order. Kept for the seeded defect [`ReductionDefect::PorExitsIndependent`].
pub(super) const TOUCH_EXIT: u8 = 8;

/// A transition as the partial-order reduction sees it: the task, the op it performs (its
/// pending op at the state it leaves), the events it emitted and the ghost bookkeeping it
/// touched. A transition asleep in a state is the same step as when it was taken (every step
/// since was independent of it), so this footprint, taken when it ran, stays its footprint.
pub(super) struct Step<M: Checked> {
    pub task: u8,
    pub op: Option<Op>,
    pub events: StepEvents<M>,
    /// Every one of `events` is inert on the monitors ([`Online::inert`]; none counts too).
    pub inert: bool,
    pub touch: u8,
}

/// Whether a step with `events` is inert on the monitors: each of its events is
/// ([`Online::inert`]). The seeded defect `ReductionDefect::PorInertAnyEvent` takes one inert
/// event as enough.
pub(super) fn inert_step<M: Checked>(events: &StepEvents<M>, defect: Option<ReductionDefect>) -> bool {
    let inert = |(_, ev): &(_, _)| M::Online::inert(ev);
    if defect == Some(ReductionDefect::PorInertAnyEvent) {
        events.iter().any(inert)
    } else {
        events.iter().all(inert)
    }
}

/// Whether two ops of different tasks commute and neither enables or disables the other:
/// not the same object with a write, not the same lock, not a park and its unpark.
pub(super) fn ops_independent(ta: u8, a: Option<Op>, tb: u8, b: Option<Op>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return false };
    if let (Some(x), Some(y)) = (a.object(), b.object()) {
        if x == y && (a.is_write() || b.is_write()) {
            return false;
        }
    }
    if a.lock().is_some() && a.lock() == b.lock() {
        return false;
    }
    match (a, b) {
        // The body's wait for every task: enabled once they have all finished, and their
        // finishing steps are dependent on everything anyway.
        (Op::JoinAll(_), _) | (_, Op::JoinAll(_)) => false,
        (Op::Park, Op::Unpark(u)) => u as u8 != ta,
        (Op::Unpark(u), Op::Park) => u as u8 != tb,
        (Op::Unpark(u), Op::Unpark(v)) => u != v,
        (Op::Join(u), _) => u as u8 != tb,
        (_, Op::Join(u)) => u as u8 != ta,
        _ => true,
    }
}

/// Whether the sleeping step `a` and the step `b` just taken, both from a state whose online
/// monitors were `from`, are independent there. A step of inert events commutes with every
/// step on the monitors, so their two orders are not run, unless `check_inert`: then they
/// are, and `found` counts where the two answers differ (the full check's answer is used).
pub(super) fn independent<M: Checked>(
    (a, b): (&Step<M>, &Step<M>),
    from: &M::Online,
    g: &StatefulGhost<M>,
    (defect, check_inert): (Option<ReductionDefect>, bool),
    found: &mut Findings,
) -> bool {
    if (a.touch | b.touch) & TOUCH_GLOBAL != 0 {
        return false;
    }
    let (ta, tb) = (a.touch, b.touch);
    if defect == Some(ReductionDefect::PorExitsIndependent) && (ta | tb) & TOUCH_EXIT != 0 {
        return true;
    }
    let (ta, tb) = (ta & !TOUCH_EXIT, tb & !TOUCH_EXIT);
    if (ta & TOUCH_SLEEPERS != 0 && tb != 0) || (tb & TOUCH_SLEEPERS != 0 && ta != 0) {
        return false;
    }
    if defect != Some(ReductionDefect::PorIgnoresObjects) && !ops_independent(a.task, a.op, b.task, b.op) {
        return false;
    }
    if defect == Some(ReductionDefect::PorIgnoresGhost) || a.events.is_empty() || b.events.is_empty() {
        return true;
    }
    let inert = a.inert || b.inert;
    found.inert += u64::from(inert);
    if inert && !check_inert {
        return true;
    }
    let commute = g.commute(from, &a.events, &b.events);
    if inert && !commute {
        found.inert_disagreements += 1;
    }
    commute
}

/// Why a search under `opts` must explore every transition, if it must: the reference search,
/// a replay and the censuses of the tests (no partial-order reduction, no persistent set).
pub(super) fn every_transition(opts: &Options) -> Result<(), &'static str> {
    if opts.history_only {
        return Err("the history-only reference search explores every transition");
    }
    if opts.replay.is_some() {
        return Err("a replay follows one schedule");
    }
    if opts.orbit_census {
        return Err("an orbit census stores every state of the unreduced search");
    }
    if opts.live_census {
        return Err("a live-locals census stores every state of the search without them");
    }
    Ok(())
}

/// Whether the partial-order reduction applies to `spec` under `opts`, or why not.
pub(super) fn applies<M: Checked>(spec: &Spec<M>, opts: &Options, memory: Memory) -> Result<(), &'static str> {
    if !opts.reduce.por {
        return Err("not asked for (reduce without \"por\", or --no-reduce)");
    }
    if memory == Memory::Lkmm {
        return Err("memory = \"lkmm\": the independence relation is sequential consistency's (two loads of one location by different tasks do not commute when they may read different stores)");
    }
    every_transition(opts)?;
    if opts.cluster.is_some() {
        return Err("a cluster search does not carry sleep sets between processes");
    }
    M::partial_order(&spec.cfg)?;
    if spec.invariants.contains(&M::PROGRESS) {
        return Err(
            "progress is checked: its fair cycles are decided on the whole state graph, every transition explored",
        );
    }
    if lasso_checked(spec) {
        return Err("a lasso invariant is checked: its fair cycles are decided on the whole state graph");
    }
    Ok(())
}
