//! Wait queues (kernel/sched/wait.c, include/linux/wait.h).
//!
//! A `wait_queue_head` is a spinlock and a list; here the list is a mask of pids, changed
//! only under the lock and read without it by `waitqueue_active()`. Entries are
//! `DEFINE_WAIT` entries: `autoremove_wake_function` removes an entry when it wakes its task.

use core::sync::atomic::Ordering::Relaxed;

use super::sched::{
    __set_current_state, set_current_state, try_to_wake_up, Current, TASK_INTERRUPTIBLE, TASK_NORMAL, TASK_RUNNING,
};
use super::spinlock::{spin_lock, spin_unlock, SpinLock};
use crate::event::{KernelEvent, LockName, Wq};
use crate::ghost::Ghost;
use crate::platform::{Atomic, AtomicInt, Platform, SymTag};

pub struct WaitQueueHead<P: Platform> {
    pub lock: SpinLock<P>,
    /// The list: bit `pid` set while task `pid`'s entry is queued.
    pub entries: P::AtomicU32,
    pub name: Wq,
}

impl<P: Platform> WaitQueueHead<P> {
    /// `DECLARE_WAIT_QUEUE_HEAD(name)`.
    pub fn new(name: Wq) -> Self {
        WaitQueueHead {
            lock: SpinLock::new(LockName::WaitQueue(name)),
            entries: P::tagged(SymTag::PidMask, || P::AtomicU32::new(0)),
            name,
        }
    }

    /// The same, its lock queued ([`SpinLock::new_queued`]): a waiter for it is served in turn.
    pub fn new_queued(name: Wq) -> Self {
        WaitQueueHead { lock: SpinLock::new_queued(LockName::WaitQueue(name)), ..WaitQueueHead::new(name) }
    }
}

/// `prepare_to_wait(wq, &wait, state)`: under the queue lock, queue the entry (if it is not
/// already queued) and `set_current_state(state)`.
pub fn prepare_to_wait<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>, state: u32) {
    spin_lock(cur, &wq.lock);
    wq.entries.fetch_or(1 << cur.pid(), Relaxed);
    set_current_state(cur, state);
    // After the full barrier of set_current_state: from here on a waker that takes the queue
    // lock sees the entry, and this task's later loads see every store ordered before it.
    cur.emit(KernelEvent::Enqueued { wq: wq.name });
    spin_unlock(cur, &wq.lock);
}

/// `finish_wait(wq, &wait)`: back to `TASK_RUNNING`; if a waker has not already removed the
/// entry (`list_empty_careful`), remove it under the lock.
///
/// Checker builds assert what the kernel's `list_del_init()` guarantees: the entry is off the
/// list when `finish_wait()` returns (a stale entry would let a later wake-up on this queue
/// end an unrelated sleep). Only the task itself queues its entry, so a load that found it
/// gone stays true; the check reads no atomic of its own, so no exploration changes.
pub fn finish_wait<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>) {
    __set_current_state(cur, TASK_RUNNING);
    let bit = 1 << cur.pid();
    let mut left = wq.entries.load(Relaxed);
    if left & bit != 0 {
        spin_lock(cur, &wq.lock);
        left = wq.entries.fetch_and(!bit, Relaxed) & !bit;
        spin_unlock(cur, &wq.lock);
    }
    if P::Ghost::ENABLED {
        assert!(left & (1u32 << cur.pid()) == 0, "finish_wait() left task {}'s entry on {}", cur.pid(), wq.name.0);
    }
    cur.emit(KernelEvent::FinishWait { wq: wq.name });
}

/// `__wake_up(wq, mode, 0, NULL)` for non-exclusive waiters: under the queue lock, try to
/// wake every queued task whose state is in `mode`, removing each one woken (autoremove).
/// Returns the mask of tasks woken.
pub fn __wake_up<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>, mode: u32) -> u32 {
    spin_lock(cur, &wq.lock);
    let queued = wq.entries.load(Relaxed);
    let mut woken = 0;
    for t in &cur.sched.tasks {
        let bit = 1 << t.pid;
        if queued & bit != 0 && try_to_wake_up(cur.sched, t, mode) {
            wq.entries.fetch_and(!bit, Relaxed);
            woken |= bit;
        }
    }
    // Checker builds: a wake-up wakes only tasks it found queued (a task sleeping on another
    // queue, or with no entry, is not its to wake).
    if P::Ghost::ENABLED {
        assert!(
            woken & !queued == 0,
            "__wake_up() on {} woke {woken:#x}, not all of it queued ({queued:#x})",
            wq.name.0
        );
    }
    cur.emit(KernelEvent::WakeUp { wq: wq.name, queued, woken, interruptible: mode == TASK_INTERRUPTIBLE });
    spin_unlock(cur, &wq.lock);
    woken
}

/// `wake_up(wq)`: wakes `TASK_NORMAL` sleepers.
pub fn wake_up<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>) -> u32 {
    __wake_up(cur, wq, TASK_NORMAL)
}

/// `wake_up_interruptible(wq)`: wakes `TASK_INTERRUPTIBLE` sleepers only.
pub fn wake_up_interruptible<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>) -> u32 {
    __wake_up(cur, wq, TASK_INTERRUPTIBLE)
}

/// `waitqueue_active(wq)`: a lockless peek at the list. Only safe with a full barrier
/// between the waker's condition store and this load (see include/linux/wait.h).
pub fn waitqueue_active<P: Platform>(wq: &WaitQueueHead<P>) -> bool {
    wq.entries.load(Relaxed) != 0
}
