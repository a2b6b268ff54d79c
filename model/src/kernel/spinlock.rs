//! `spinlock_t`: `spin_lock`, `spin_trylock`, `spin_unlock` (and their `_irqsave` forms,
//! which are the same here: interrupts are not modelled).
//!
//! Under the checkers every lock also carries its holder as ghost state, so a task that ends
//! holding a lock (`lock-released`) or takes a lock it already holds is reported instead of
//! deadlocking the explorer.

use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};
use std::sync::atomic::AtomicUsize;

use super::sched::Current;
use crate::event::{KernelEvent, LockName};
use crate::ghost::Ghost;
use crate::platform::{Atomic, AtomicInt, Platform, RawSpinLock};

const NO_OWNER: usize = usize::MAX;

pub struct SpinLock<P: Platform> {
    raw: P::SpinLock,
    pub name: LockName,
    /// Ghost: the pid holding the lock (checker builds only).
    owner: AtomicUsize,
    /// A queued lock ([`SpinLock::new_queued`]): the tasks waiting for it (bit `pid`) and its
    /// holder (pid plus one, in the bits from [`HOLDER`]; 0 when free). `None`: the platform's
    /// lock.
    queued: Option<P::AtomicU64>,
}

/// Where a queued lock's word keeps its holder.
const HOLDER: u32 = 32;

impl<P: Platform> SpinLock<P> {
    pub fn new(name: LockName) -> Self {
        // Wait-queue locks are never trylocked (the loom platform keeps no trylock flag for
        // them); their events are recorded as detail (`mmcheck check --verbose` shows them).
        let trylock = !name.is_wait_queue();
        SpinLock { raw: P::SpinLock::new(trylock), name, owner: AtomicUsize::new(NO_OWNER), queued: None }
    }

    /// A lock that serves its waiters in turn, as the kernel's queued spinlocks do: a task that
    /// waits for it announces itself, and the holder hands the lock to the next waiter after
    /// it (in pid order, round the mask) when it unlocks. Under the stateful engine's weak
    /// fairness the platform's lock may be taken by the same task again and again while
    /// another waits for it (the waiter is not enabled while it is held, so a cycle that
    /// starves it is fair); a queued lock cannot be. Never trylocked.
    pub fn new_queued(name: LockName) -> Self {
        SpinLock { queued: Some(P::AtomicU64::new(0)), ..SpinLock::new(name) }
    }

    /// Ghost: does `pid` hold this lock?
    pub fn held_by(&self, pid: usize) -> bool {
        P::Ghost::ENABLED && self.owner.load(Relaxed) == pid
    }

    #[inline(always)]
    fn acquired(&self, cur: &Current<P>, trylock: bool) {
        if P::Ghost::ENABLED {
            // Checker builds assert mutual exclusion: every unlock clears the holder before it
            // frees the lock, so a lock taken while another task is its holder is a lock that
            // let two tasks in. (A plain ghost field: no platform access, no exploration changes.)
            let prev = self.owner.swap(cur.pid(), Relaxed);
            assert!(prev == NO_OWNER, "{} taken by task {} while task {prev} holds it", self.name, cur.pid());
            cur.emit(KernelEvent::LockAcquired { lock: self.name, trylock });
        }
    }

    /// `do_exit` for locks: if `cur` still holds this lock, report it and release it so the
    /// other tasks can go on.
    pub fn release_if_leaked(&self, cur: &Current<P>) {
        if self.held_by(cur.pid()) {
            cur.emit(KernelEvent::LockLeaked { lock: self.name });
            self.owner.store(NO_OWNER, Relaxed);
            match &self.queued {
                Some(w) if P::Ghost::ENABLED => queued_unlock(cur, w),
                _ => self.raw.unlock(),
            }
        }
    }
}

/// Take a queued lock: at once if it is free with nobody waiting (one step, as the platform's
/// lock takes); else announce, then take it once it is free, or wait to be handed it.
fn queued_lock<P: Platform>(cur: &Current<P>, w: &P::AtomicU64) {
    let me = cur.pid() as u64;
    if w.compare_exchange(0, (me + 1) << HOLDER, AcqRel, Acquire).is_ok() {
        return;
    }
    w.fetch_or(1 << me, AcqRel);
    loop {
        let v = w.load(Acquire);
        let holder = v >> HOLDER;
        if holder == me + 1 {
            return;
        }
        if holder == 0 {
            if w.compare_exchange(v, (v & !(1 << me)) | (me + 1) << HOLDER, AcqRel, Acquire).is_ok() {
                return;
            }
            continue;
        }
        P::park();
    }
}

/// Release a queued lock: free it if nobody waits (one step), else hand it to the next waiter
/// after the holder.
fn queued_unlock<P: Platform>(cur: &Current<P>, w: &P::AtomicU64) {
    let me = cur.pid() as u32;
    if w.compare_exchange((me as u64 + 1) << HOLDER, 0, AcqRel, Acquire).is_ok() {
        return;
    }
    loop {
        let v = w.load(Acquire);
        let waiting = (v & 0xffff_ffff) as u32;
        // The first waiter after `me`, round the mask.
        let next = (1..=32).map(|k| (me + k) % 32).find(|&p| waiting & (1 << p) != 0);
        let new = match next {
            Some(p) => (waiting & !(1 << p)) as u64 | (p as u64 + 1) << HOLDER,
            None => 0,
        };
        if w.compare_exchange(v, new, AcqRel, Acquire).is_ok() {
            if let Some(p) = next {
                cur.sched.tasks[p as usize].unpark();
            }
            return;
        }
    }
}

/// `spin_lock(lock)`.
#[inline(always)]
pub fn spin_lock<P: Platform>(cur: &Current<P>, lock: &SpinLock<P>) {
    if P::Ghost::ENABLED && lock.held_by(cur.pid()) {
        // The kernel would spin forever here; report it and carry on as the holder.
        cur.emit(KernelEvent::LockRecursion { lock: lock.name });
        return;
    }
    // Queued locks are a checker's model of fairness: a runtime build (no ghost) takes the
    // platform's lock, and its fast path pays no test for them.
    match &lock.queued {
        Some(w) if P::Ghost::ENABLED => queued_lock(cur, w),
        _ => lock.raw.lock(),
    }
    lock.acquired(cur, false);
}

/// `spin_trylock(lock)`: take the lock if it is free.
#[inline(always)]
pub fn spin_trylock<P: Platform>(cur: &Current<P>, lock: &SpinLock<P>) -> bool {
    if lock.raw.try_lock() {
        lock.acquired(cur, true);
        true
    } else {
        if P::Ghost::ENABLED {
            cur.emit(KernelEvent::TrylockFailed { lock: lock.name });
        }
        false
    }
}

/// `spin_unlock(lock)`.
#[inline(always)]
pub fn spin_unlock<P: Platform>(cur: &Current<P>, lock: &SpinLock<P>) {
    if P::Ghost::ENABLED {
        if let Some(w) = &lock.queued {
            lock.owner.store(NO_OWNER, Relaxed);
            cur.emit(KernelEvent::LockReleased { lock: lock.name });
            queued_unlock(cur, w);
            return;
        }
        lock.owner.store(NO_OWNER, Relaxed);
        lock.raw.unlock_with(|| cur.emit(KernelEvent::LockReleased { lock: lock.name }));
        return;
    }
    lock.raw.unlock();
}
