//! Persistent sets of one transition (Godefroid, "Partial-Order Methods for the Verification of
//! Concurrent Systems", 1996, chapter 4): where a task has not started yet and its start is
//! invisible and local, that start alone is explored. docs/model.md, "Persistent sets", argues
//! it for safety and for `progress` under weak fairness; this file says where it applies and
//! which start a state takes. The yields of the sleep-set search (which need the cycle proviso)
//! are `dfs/sleep.rs`'s; what each task's start does is learnt by `space.rs`
//! ([`super::space::Runner::local_starts`]).

use super::por::every_transition;
use super::space::{lowest, Op, SchedPoint, TaskId};
use crate::engine::types::{Memory, Options, ReductionDefect};
use crate::monitor::Checked;
use crate::spec::Spec;

/// Whether persistent sets apply to `spec` under `opts`, or why not.
pub(super) fn applies<M: Checked>(spec: &Spec<M>, opts: &Options, memory: Memory) -> Result<(), &'static str> {
    if !opts.reduce.persistent {
        return Err("not asked for (reduce without \"persistent\", or --no-reduce)");
    }
    if memory == Memory::Lkmm {
        return Err("memory = \"lkmm\": a loop head reads whether the other tasks have finished (fresh reads once they all have), outside the platform's operations");
    }
    every_transition(opts)?;
    // A start is local only if everything a task reads goes through the platform or the ghost.
    M::partial_order(&spec.cfg)
}

/// The start a state is explored by alone, if any: the lowest enabled task whose next step is
/// its start, among `local` (the tasks whose start is known to be invisible and local).
///
/// Such a start reads and writes nothing another task reads or writes, no other task can
/// disable it, and it emits no event, so `{start}` is persistent and invisible. A task starts
/// once, so no cycle of the state graph goes through a start: the cycle proviso holds, and a
/// cycle through a state where a task has not started never moves that task (always enabled),
/// so it is no fair cycle either. The choice depends on the state alone: any search order, any
/// number of workers or processes, stores the same states.
///
/// The seeded defect [`ReductionDefect::PersistentStartsForever`] forgets to ask whether the
/// task is still at its start.
#[inline]
pub(super) fn start_of(
    p: &SchedPoint<'_>,
    enabled: u32,
    local: u32,
    defect: Option<ReductionDefect>,
) -> Option<TaskId> {
    let mut rest = enabled & local;
    while rest != 0 {
        let t = rest.trailing_zeros() as TaskId;
        rest &= rest - 1;
        if p.pending(t) == Some(Op::Start) || defect == Some(ReductionDefect::PersistentStartsForever) {
            return Some(t);
        }
    }
    None
}

/// How a state stored by a search without sleep sets (Tarjan's, a worker's) is explored: the
/// transition it takes first and those left, counting the state in `persistent` if a start is
/// explored alone there.
#[inline]
pub(super) fn first_and_todo(
    p: &SchedPoint<'_>,
    enabled: u32,
    local: u32,
    defect: Option<ReductionDefect>,
    persistent: &mut u64,
) -> (TaskId, u32) {
    match start_of(p, enabled, local, defect) {
        Some(t) => {
            *persistent += 1;
            (t, 0)
        }
        None => {
            let first = lowest(enabled);
            (first, enabled & !(1 << first))
        }
    }
}
