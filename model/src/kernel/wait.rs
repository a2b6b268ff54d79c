//! Wait queues (kernel/sched/wait.c, include/linux/wait.h).
//!
//! A `wait_queue_head` is a spinlock and a list; here the list is a [`WaitList`] of pids in
//! list order, changed only under the lock and read without it by `waitqueue_active()`.
//! Entries are `DEFINE_WAIT` entries: `autoremove_wake_function` removes an entry when it
//! wakes its task. `prepare_to_wait()` adds an entry at the head of the list
//! (`__add_wait_queue()`), and `__wake_up()` walks the list from the head, so the task queued
//! last is woken first.

use core::sync::atomic::Ordering::Relaxed;

use super::sched::{
    __set_current_state, set_current_state, try_to_wake_up, Current, TASK_INTERRUPTIBLE, TASK_NORMAL, TASK_RUNNING,
};
use super::spinlock::{spin_lock, spin_unlock, SpinLock};
use crate::event::{KernelEvent, LockName, Wq};
use crate::ghost::Ghost;
use crate::platform::{Atomic, AtomicInt, Platform, SymTag};

/// A wait queue's list of pids, head first, in one word: entry `i` (0 is the head) in bits
/// `5i..5i+5`, the length in the top four bits. It holds [`WaitList::CAPACITY`] entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitList(pub u64);

impl WaitList {
    /// Most entries a list holds (a model refuses a configuration in which more tasks could
    /// sleep on one queue at once).
    pub const CAPACITY: usize = 12;
    const BITS: u32 = 5;
    const LEN_SHIFT: u32 = 60;

    pub fn len(self) -> usize {
        (self.0 >> Self::LEN_SHIFT) as usize
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Entry `i`, head first.
    pub fn get(self, i: usize) -> u32 {
        ((self.0 >> (Self::BITS * i as u32)) & 0x1f) as u32
    }
    pub fn iter(self) -> impl Iterator<Item = u32> {
        (0..self.len()).map(move |i| self.get(i))
    }
    pub fn contains(self, pid: u32) -> bool {
        self.iter().any(|p| p == pid)
    }
    /// The mask of the pids on the list.
    pub fn mask(self) -> u32 {
        self.iter().fold(0, |m, p| m | 1 << p)
    }
    /// `pid` added at the head (`list_add()`), if it is not on the list already.
    pub fn push_head(self, pid: u32) -> WaitList {
        if self.contains(pid) {
            return self;
        }
        let n = self.len();
        assert!(n < Self::CAPACITY, "wait queue list full ({} entries) adding task {pid}", Self::CAPACITY);
        let entries = self.0 & ((1 << Self::LEN_SHIFT) - 1);
        WaitList(((n as u64 + 1) << Self::LEN_SHIFT) | entries << Self::BITS | pid as u64 & 0x1f)
    }
    /// The list without `pid` (`list_del_init()`), the others in their order.
    pub fn remove(self, pid: u32) -> WaitList {
        let mut out = WaitList(0);
        for p in self.iter().filter(|&p| p != pid) {
            out = out.push_tail(p);
        }
        out
    }
    fn push_tail(self, pid: u32) -> WaitList {
        let n = self.len();
        let entries = self.0 & ((1 << Self::LEN_SHIFT) - 1);
        WaitList(((n as u64 + 1) << Self::LEN_SHIFT) | entries | (pid as u64 & 0x1f) << (Self::BITS * n as u32))
    }
    /// Every entry renamed by `f`, each in its place.
    pub fn renamed(self, f: impl Fn(u32) -> u32) -> WaitList {
        let mut out = WaitList(0);
        for p in self.iter() {
            out = out.push_tail(f(p));
        }
        out
    }
}

pub struct WaitQueueHead<P: Platform> {
    pub lock: SpinLock<P>,
    /// The list ([`WaitList`]).
    pub entries: P::AtomicU64,
    pub name: Wq,
}

impl<P: Platform> WaitQueueHead<P> {
    /// `DECLARE_WAIT_QUEUE_HEAD(name)`.
    pub fn new(name: Wq) -> Self {
        WaitQueueHead {
            lock: SpinLock::new(LockName::WaitQueue(name)),
            entries: P::tagged(SymTag::PidList, || P::AtomicU64::new(0)),
            name,
        }
    }

    /// The same, its lock queued ([`SpinLock::new_queued`]): a waiter for it is served in turn.
    pub fn new_queued(name: Wq) -> Self {
        WaitQueueHead { lock: SpinLock::new_queued(LockName::WaitQueue(name)), ..WaitQueueHead::new(name) }
    }

    /// The list, read without the lock.
    pub fn list(&self) -> WaitList {
        WaitList(self.entries.load(Relaxed))
    }

    /// Under the lock: removes `pid`'s entry; returns the list it leaves (what was there,
    /// without the entry).
    pub fn remove(&self, pid: u32) -> WaitList {
        WaitList(self.entries.fetch_apply(Relaxed, |l| WaitList(l).remove(pid).0)).remove(pid)
    }
}

/// `prepare_to_wait(wq, &wait, state)`: under the queue lock, queue the entry (if it is not
/// already queued) and `set_current_state(state)`.
pub fn prepare_to_wait<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>, state: u32) {
    spin_lock(cur, &wq.lock);
    let pid = cur.pid() as u32;
    wq.entries.fetch_apply(Relaxed, |l| WaitList(l).push_head(pid).0);
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
    let pid = cur.pid() as u32;
    let mut left = wq.list();
    if left.contains(pid) {
        spin_lock(cur, &wq.lock);
        left = wq.remove(pid);
        spin_unlock(cur, &wq.lock);
    }
    if P::Ghost::ENABLED {
        assert!(!left.contains(pid), "finish_wait() left task {}'s entry on {}", cur.pid(), wq.name.0);
    }
    cur.emit(KernelEvent::FinishWait { wq: wq.name });
}

/// `__wake_up(wq, mode, 0, NULL)` for non-exclusive waiters: under the queue lock, walk the
/// list from its head and try to wake every queued task whose state is in `mode`, removing
/// each one woken (autoremove). Returns the mask of tasks woken.
pub fn __wake_up<P: Platform>(cur: &Current<P>, wq: &WaitQueueHead<P>, mode: u32) -> u32 {
    spin_lock(cur, &wq.lock);
    let list = wq.list();
    let queued = list.mask();
    let mut woken = 0;
    for pid in list.iter() {
        let t = &cur.sched.tasks[pid as usize];
        if try_to_wake_up(cur.sched, t, mode) {
            wq.remove(pid);
            woken |= 1 << pid;
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
    !wq.list().is_empty()
}

#[cfg(test)]
mod tests {
    use super::WaitList;

    fn list(pids: &[u32]) -> WaitList {
        // Pushed at the head one after another: the last pushed is the head.
        pids.iter().fold(WaitList(0), |l, &p| l.push_head(p))
    }

    #[test]
    fn a_list_keeps_the_kernels_order() {
        let l = list(&[3, 1, 4]);
        assert_eq!(l.iter().collect::<Vec<_>>(), [4, 1, 3], "list_add(): the entry queued last is the head");
        assert_eq!(l.len(), 3);
        assert_eq!(l.mask(), 1 << 1 | 1 << 3 | 1 << 4);
        assert!(l.contains(1) && !l.contains(2));
        assert_eq!(l.push_head(1), l, "an entry already queued is not queued again");
        assert_eq!(l.remove(1).iter().collect::<Vec<_>>(), [4, 3], "the others keep their order");
        assert_eq!(l.remove(2), l);
        assert!(l.remove(1).remove(3).remove(4).is_empty());
        assert_eq!(l.renamed(|p| 9 - p).iter().collect::<Vec<_>>(), [5, 8, 6], "renamed entry by entry, in place");
    }

    #[test]
    fn a_list_holds_its_capacity_and_every_pid() {
        let pids: Vec<u32> = (20..20 + WaitList::CAPACITY as u32).collect();
        let l = list(&pids);
        assert_eq!(l.len(), WaitList::CAPACITY);
        assert_eq!(l.iter().collect::<Vec<_>>(), pids.iter().rev().copied().collect::<Vec<_>>());
        assert_eq!(list(&[31, 0]).iter().collect::<Vec<_>>(), [0, 31], "pids 0 and 31 fit");
    }

    #[test]
    #[should_panic(expected = "wait queue list full")]
    fn a_full_list_refuses_one_more() {
        list(&(0..=WaitList::CAPACITY as u32).collect::<Vec<_>>());
    }
}
