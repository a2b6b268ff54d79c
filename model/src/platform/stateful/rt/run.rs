//! The run loop: a task's coroutine on a pooled stack, the start of an execution, the
//! scheduler loop of [`run`], and the teardown that ends every execution however it is left.

use core::any::Any;
use core::ptr::{self, NonNull};
use core::sync::atomic::Ordering::Relaxed;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::hash::{mix, TAG_INIT};
use super::point::decide;
use super::shadow::shadow_spawned;
use super::state::{in_execution, rt_ptr, Chooser, Exit, Rt, StackPool, TaskSlot, EPOCH, RT, SUSPEND_MARGIN};
use super::symmetry::sym_spawned;
use super::types::{Op, RunEnd, TaskId, NO_TASK};

use crate::platform::stateful::arena;

/// A task's slot, with its coroutine on a pooled stack.
///
/// # Safety
/// `rt` is the live runtime.
#[inline]
pub(super) unsafe fn new_task<F: FnOnce() + 'static>(rt: *mut Rt, id: TaskId, f: F) -> TaskSlot {
    use corosensei::stack::Stack;
    let stack = match (&mut *rt).stacks.pop() {
        Some(s) => s,
        None => DefaultStack::new((&mut *rt).stack_size).expect("stateful runtime: cannot map a task stack"),
    };
    let top = stack.base().get();
    // The coroutine's first frame holds `f` and a few words of its entry.
    let low = top.saturating_sub(core::mem::size_of::<F>() + SUSPEND_MARGIN);
    (*rt).vclock += 1;
    let version = (*rt).vclock;
    let co = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
        let rt = rt_ptr();
        // SAFETY: a task only runs inside its execution; the yielder lives on this stack for
        // as long as the coroutine.
        unsafe { (&mut *rt).tasks[id].yielder = y };
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => Exit::Done,
            // SAFETY: as above.
            Err(p) if unsafe { (*rt_ptr()).teardown } => resume_unwind(p),
            Err(p) => Exit::Panicked(p),
        }
    });
    TaskSlot::new(co, top, low, mix(TAG_INIT, id as u64), version)
}

pub(super) fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// Ends an execution however [`run`] is left: unwinds the coroutines of unfinished tasks,
/// returns every stack to the pool, clears the tables and the thread-local pointer.
pub(super) struct Teardown<'p> {
    pub(super) rt: *mut Rt,
    pub(super) pool: &'p mut StackPool,
}

impl Drop for Teardown<'_> {
    fn drop(&mut self) {
        let rt = self.rt;
        // SAFETY: `rt` is the live runtime, and no borrow of it is held (we are either after
        // the scheduler loop or unwinding out of it).
        unsafe {
            (*rt).teardown = true;
            for t in 0..(&mut *rt).tasks.len() {
                if let Some(mut co) = (&mut *rt).tasks[t].co.take() {
                    (*rt).cur = t;
                    co.force_unwind();
                    (&mut *rt).stacks.push(co.into_stack());
                }
                if let Some(s) = (&mut *rt).tasks[t].retired.take() {
                    (&mut *rt).stacks.push(s);
                }
            }
            if (*rt).snap {
                // Nothing outside the execution points into its heap any more.
                arena::reset(0);
                (*rt).snap = false;
            }
            let r = &mut *rt;
            r.cur = NO_TASK;
            r.tasks.clear();
            r.objs.clear();
            r.locks.clear();
            r.sym.clear_execution();
            r.shadow.clear_execution();
            r.lk.clear();
            r.chooser = None;
            r.chooser_panic = None;
            r.next = None;
            RT.with(|c| c.set(ptr::null_mut()));
            self.pool.rt = Some(NonNull::new_unchecked(rt));
        }
    }
}

/// Task `t` has finished: under `lkmm` it reads nothing any more.
///
/// # Safety
/// `rt` is the live runtime, unborrowed.
pub(super) unsafe fn finished(rt: *mut Rt, t: TaskId) {
    if (*rt).lkmm {
        let _off = arena::off();
        let lk = &mut (&mut *rt).lk;
        lk.mem.finish(t);
        lk.mem.collect();
    }
}

/// Runs one execution: `body` is task 0; every scheduling decision is `chooser`'s.
///
/// Runs until every task has finished, no task is enabled (deadlock), or a task panics. Not
/// reentrant: a `run` inside a task panics. Everything happens on the calling thread.
pub fn run<F: FnOnce() + 'static>(pool: &mut StackPool, body: F, chooser: &mut dyn Chooser) -> RunEnd {
    // SAFETY: the chooser outlives this call, and the runtime drops its pointer before
    // returning (Teardown), so erasing its lifetime is sound.
    let chooser: NonNull<dyn Chooser + '_> = NonNull::from(chooser);
    let chooser: NonNull<dyn Chooser + 'static> = unsafe { core::mem::transmute(chooser) };
    let rt = begin(pool, Some(chooser), false);
    let guard = Teardown { rt, pool };
    // SAFETY: the runtime is live (thread-local set) and unborrowed.
    let end = unsafe {
        let slot = new_task(rt, 0, body);
        (&mut *rt).tasks.push(slot);
        sym_spawned(rt, 0);
        shadow_spawned(rt, 0);
        schedule(rt)
    };
    drop(guard);
    end
}

/// Starts an execution on `pool`'s runtime: a new epoch, empty tables, the thread-local
/// pointer set. The caller's Teardown gives the runtime back.
pub(super) fn begin(pool: &mut StackPool, chooser: Option<NonNull<dyn Chooser>>, snap: bool) -> *mut Rt {
    assert!(!in_execution(), "stateful runtime: nested run (an execution is already running on this thread)");
    let rt: *mut Rt = match pool.rt.take() {
        Some(p) => p.as_ptr(),
        None => Box::into_raw(Box::new(Rt::new(pool.stack_size))),
    };
    let epoch = EPOCH.fetch_add(1, Relaxed).wrapping_add(1);
    // SAFETY: `rt` is exclusively ours until Teardown gives it back to the pool.
    unsafe {
        let r = &mut *rt;
        assert!(!snap || !r.shadow.on, "stateful runtime: snapshots under the live-locals census");
        r.finished = 0;
        r.shared = 0;
        r.cur = NO_TASK;
        r.last = 0;
        r.last_op = Op::Start;
        r.steps = 0;
        r.epoch = epoch;
        r.next = None;
        r.teardown = false;
        r.chooser = chooser;
        r.snap = snap;
        if r.lkmm {
            let _off = arena::off();
            r.lk.clear();
            r.lk.mem.spawn(None);
            r.lk.hints.push(0);
        }
    }
    if snap {
        arena::reset(0);
    }
    RT.with(|c| c.set(rt));
    rt
}

/// The scheduler loop.
///
/// # Safety
/// `rt` is the live runtime and unborrowed.
unsafe fn schedule(rt: *mut Rt) -> RunEnd {
    loop {
        let t = match (&mut *rt).next.take() {
            Some(t) => t,
            None => {
                if let Some(p) = (&mut *rt).chooser_panic.take() {
                    resume_unwind(p);
                }
                match decide(rt) {
                    Some(t) => t,
                    None => {
                        let r = &*rt;
                        let all = if r.tasks.len() == 32 { u32::MAX } else { (1u32 << r.tasks.len()) - 1 };
                        return if r.finished == all {
                            RunEnd::AllFinished
                        } else {
                            RunEnd::Deadlock { blocked: all & !r.finished }
                        };
                    }
                }
            }
        };
        (&mut *rt).runs(t);
        let mut co = (&mut *rt).tasks[t].co.take().expect("stateful runtime: resumed a finished task");
        let res = co.resume(());
        (*rt).cur = NO_TASK;
        match res {
            CoroutineResult::Yield(()) => (&mut *rt).tasks[t].co = Some(co),
            CoroutineResult::Return(exit) => {
                (&mut *rt).stacks.push(co.into_stack());
                (*rt).finished |= 1 << t;
                finished(rt, t);
                if let Exit::Panicked(p) = exit {
                    return RunEnd::Panicked { task: t, message: panic_message(&*p) };
                }
            }
        }
    }
}
