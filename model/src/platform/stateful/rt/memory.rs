//! The memory model of an execution: sequentially consistent (every object a single value, the
//! tables of `state.rs`), or the kernel's (`memory = "lkmm"`: [`crate::platform::stateful::lkmm`]
//! holds every store, the tables keep the latest value). Under `lkmm` a memory operation with
//! more than one outcome (which store a load reads, where a store goes in coherence order,
//! which store an RMW reads, whether a trylock fails on a stale acquisition) stops at a *choice
//! point* after the task was chosen: the next choice is one of the alternatives, numbered
//! from the newest (alternative 0 is what a sequentially consistent execution does), and the
//! task goes on with it. Fences are scheduling points of their own. Under `sc` none of this
//! runs: no choice point, no fence step, the same states as ever.

use core::ptr::NonNull;
use core::sync::atomic::Ordering;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::lkstate::{Lk, Memory, HINT_FULL, HINT_VOID};
use super::point::{decide, yield_point};
use super::state::{Rt, StackPool, SUSPEND_MARGIN};
use super::types::{Op, TaskId, NO_TASK};
use crate::platform::stateful::arena;
use crate::platform::stateful::lkmm::{Fence, Rmw, MAX_ALTS};
use crate::platform::KernelFence;

impl StackPool {
    /// The memory model of the executions this pool runs from now on.
    pub fn set_memory(&mut self, m: Memory) {
        let rt = *self.rt.get_or_insert_with(|| {
            // SAFETY: a fresh block the pool owns (as in `set_symmetry`).
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        // SAFETY: the pool owns the block between runs.
        unsafe { (*rt.as_ptr()).lkmm = m == Memory::Lkmm };
    }
}

/// The lkmm fence of a kernel fence, or `None` for a hint.
fn fence_of(f: KernelFence) -> Option<Fence> {
    Some(match f {
        KernelFence::Mb => Fence::Mb,
        KernelFence::Rmb => Fence::Rmb,
        KernelFence::Wmb => Fence::Wmb,
        KernelFence::BeforeAtomic => Fence::BeforeAtomic,
        KernelFence::AfterAtomic => Fence::AfterAtomic,
        KernelFence::AfterSpinlock => Fence::AfterSpinlock,
        KernelFence::AfterUnlockLock => Fence::AfterUnlockLock,
        KernelFence::FullRmwBegin | KernelFence::FullRmwEnd | KernelFence::VoidRmw => return None,
    })
}

/// The kernel fence of a C11 fence the model code wrote itself.
pub(crate) fn kernel_fence_of(o: Ordering) -> KernelFence {
    match o {
        Ordering::Acquire => KernelFence::Rmb,
        Ordering::Release => KernelFence::Wmb,
        _ => KernelFence::Mb,
    }
}

/// `t` runs kernel fence `f` (nothing at all under `sc`).
///
/// # Safety
/// `rt` is the live runtime and `t` the running task; no borrow of `rt` is held.
pub(super) unsafe fn fence(rt: *mut Rt, t: TaskId, f: KernelFence) {
    if !(*rt).lkmm {
        return;
    }
    match (fence_of(f), f) {
        (Some(kind), _) => {
            yield_point(rt, t, Op::Fence(f as u8));
            let _off = arena::off();
            let lk = &mut (&mut *rt).lk;
            lk.stale = false;
            lk.mem.fence(t, kind);
            lk.mem.collect();
        }
        (None, KernelFence::FullRmwBegin) => (&mut *rt).lk.hints[t] |= HINT_FULL,
        (None, KernelFence::VoidRmw) => (&mut *rt).lk.hints[t] |= HINT_VOID,
        (None, _) => {}
    }
}

/// How `t`'s next RMW is ordered: its hints (taken), else the C11 orders it was written with.
pub(super) fn rmw_kind(lk: &mut Lk, t: TaskId, success: Ordering, failure: Option<Ordering>) -> Rmw {
    let hints = std::mem::take(&mut lk.hints[t]);
    if hints & HINT_FULL != 0 {
        return Rmw { mb: true, ..Rmw::default() };
    }
    let (acquire, release, mb) = match success {
        Ordering::SeqCst => (false, false, true),
        Ordering::AcqRel => (true, true, false),
        Ordering::Acquire => (true, false, false),
        Ordering::Release => (false, true, false),
        _ => (false, false, false),
    };
    Rmw {
        mb,
        acquire,
        release,
        void: hints & HINT_VOID != 0,
        fail_acquire: matches!(failure, Some(Ordering::Acquire | Ordering::SeqCst)),
    }
}

/// A choice point of task `t` with `alts` alternatives: the one the chooser takes (0 when there
/// is one, or while the execution is torn down).
///
/// # Safety
/// `rt` is the live runtime and `t` the running task; no borrow of `rt` is held.
pub(super) unsafe fn choose(rt: *mut Rt, t: TaskId, alts: usize) -> usize {
    if alts <= 1 || (*rt).teardown || std::thread::panicking() {
        return 0;
    }
    assert!(
        alts <= MAX_ALTS,
        "stateful runtime: a memory operation with {alts} alternatives, more than the {MAX_ALTS} one choice can name"
    );
    {
        let s = &mut (&mut *rt).tasks[t];
        s.op = Op::Choose(alts as u32);
    }
    (*rt).lk.choosing = Some((t, alts as u32));
    if (*rt).snap {
        // As at every scheduling point of a snapshotting run: back to the scheduler, which
        // hands the chooser's alternative to this task when it resumes it.
        let mark = 0u8;
        let sp = core::hint::black_box(&mark) as *const u8 as usize;
        (&mut *rt).tasks[t].low = sp.saturating_sub(SUSPEND_MARGIN);
        (*rt).cur = NO_TASK;
        (*rt).next = None;
        let y = (&mut *rt).tasks[t].yielder;
        (*y).suspend(());
        return (*rt).lk.alt as usize;
    }
    (*rt).cur = NO_TASK;
    match catch_unwind(AssertUnwindSafe(|| decide(rt))) {
        Ok(a) => {
            (&mut *rt).runs(t);
            (*rt).lk.choosing = None;
            a.expect("a choice point has an alternative")
        }
        Err(p) => {
            // As in `yield_point`: the scheduler re-raises the chooser's panic; this task is
            // unwound by the teardown.
            (*rt).chooser_panic = Some(p);
            (*rt).next = None;
            let y = (&mut *rt).tasks[t].yielder;
            (*y).suspend(());
            unreachable!("stateful runtime: a task resumed after its chooser panicked")
        }
    }
}
