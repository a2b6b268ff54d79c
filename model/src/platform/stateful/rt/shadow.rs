//! The live-locals census (tests only): beside each task's local hash, the hash it would have
//! if the model's declarations of live locals were applied (`crate::ghost::Ghost::live_locals`).
//! The search that runs it applies none (every task keeps its history up to its checkpoints
//! and loop heads, as without the reduction) and stores every state; the fingerprint of each
//! state over these *shadow* hashes is the state the reduced search would store for it. If
//! the declarations are sound, states merged by them have the same futures, so the reduced
//! search stores exactly as many states as there are distinct shadow fingerprints; a
//! declaration that forgets a live value makes the two counts differ.
//!
//! Every fold into a task's local hash goes into its shadow too; a checkpoint or a loop head
//! resets both (the shadow over the shadow of the summary's context, which is why a context
//! must be a value [`super::ops::local`] returned to the task); a live-locals declaration
//! resets the shadow only ([`reset_shadow_summary`]).

use core::ptr::NonNull;

use super::hash::{fmix64, mix, P2, TAG_INIT, TAG_RESET};
use super::state::{rt_ptr, Rt, SchedPoint, Shadow, StackPool};
use super::types::{TaskId, FINISHED_CODE, NO_TASK};
use crate::kernel::sched::Summary;

impl StackPool {
    /// Runs the live-locals census in the next executions (see the module docs): no
    /// symmetry, no snapshots.
    #[doc(hidden)]
    pub fn set_live_census(&mut self, on: bool) {
        let rt = self.rt.get_or_insert_with(|| {
            // SAFETY: a fresh allocation, owned by the pool from here on.
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        // SAFETY: the pool owns the block; no execution is running (`run` borrows the pool).
        unsafe { rt.as_mut().shadow.on = on };
    }
}

/// Task `id` was created: its shadow starts as its local hash does.
#[inline(always)]
pub(super) unsafe fn shadow_spawned(rt: *mut Rt, id: TaskId) {
    let s = &mut (&mut *rt).shadow;
    if s.on {
        debug_assert_eq!(s.locals.len(), id);
        s.locals.push(mix(TAG_INIT, id as u64));
    }
}

/// `v` folded into task `t`'s local hash goes into its shadow too.
#[inline(always)]
pub(super) unsafe fn shadow_fold(rt: *mut Rt, t: TaskId, v: u64) {
    let s = &mut (&mut *rt).shadow;
    if s.on {
        s.locals[t] = mix(s.locals[t], v);
    }
}

/// Task `t` took its local hash as a context: note the shadow that goes with it.
#[inline(always)]
pub(super) unsafe fn shadow_save_context(rt: *mut Rt, t: TaskId) {
    let r = &mut *rt;
    if r.shadow.on {
        let (local, shadow) = (r.tasks[t].local, r.shadow.locals[t]);
        r.shadow.ctx.push((t, local, shadow));
    }
}

/// A checkpoint or loop head of task `t`: its shadow becomes the summary over the shadow of
/// the summary's context.
#[inline(always)]
pub(super) unsafe fn shadow_reset(rt: *mut Rt, t: TaskId, summary: Summary) {
    let s = &mut (&mut *rt).shadow;
    if s.on {
        let ctx = shadow_context(s, t, summary.context);
        s.locals[t] = mix(TAG_RESET, summary.hash_with(ctx));
    }
}

fn shadow_context(s: &Shadow, t: TaskId, context: u64) -> u64 {
    s.ctx.iter().rev().find(|&&(u, l, _)| u == t && l == context).map(|&(_, _, c)| c).unwrap_or_else(|| {
        panic!("stateful runtime: live-locals census: a summary's context was not taken by loop_context in this task")
    })
}

/// A declaration of the current task's live locals, under the census: its shadow becomes the
/// summary (over the shadow of its context, or with `raw` over the summary's context as it is:
/// for a seeded defect whose context was not taken from the task); its local hash keeps its
/// history. Does nothing when the census is off.
pub fn reset_shadow_summary(summary: Summary, raw: bool) {
    let rt = rt_ptr();
    assert!(!rt.is_null(), "stateful runtime: reset_shadow_summary outside an execution");
    // SAFETY: a non-null pointer is the live runtime of this thread's execution; short borrows.
    unsafe {
        let t = (*rt).cur;
        assert!(t != NO_TASK, "stateful runtime: reset_shadow_summary outside a task");
        if raw {
            let s = &mut (&mut *rt).shadow;
            if s.on {
                s.locals[t] = mix(TAG_RESET, summary.hash());
            }
        } else {
            shadow_reset(rt, t, summary);
        }
    }
}

impl SchedPoint<'_> {
    /// The fingerprint over the tasks' shadow hashes (as [`SchedPoint::fingerprint`] over
    /// their local hashes); the fingerprint itself when the census is off.
    pub fn fingerprint_shadow(&self) -> u64 {
        let rt = self.rt;
        if !rt.shadow.on {
            return self.fingerprint();
        }
        let mut h = rt.shared ^ (rt.tasks.len() as u64).wrapping_mul(P2);
        for (t, s) in rt.tasks.iter().enumerate() {
            let (status, local) = if rt.finished & (1 << t) != 0 {
                (FINISHED_CODE, 0)
            } else {
                (s.op.code() ^ (s.token as u64) << 4, rt.shadow.locals[t])
            };
            h = mix(h ^ status, local);
        }
        if rt.lkmm {
            h = mix(h, rt.lk.mem.hash());
        }
        fmix64(h)
    }
}
