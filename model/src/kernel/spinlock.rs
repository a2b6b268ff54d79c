//! `spinlock_t`: `spin_lock`, `spin_trylock`, `spin_unlock` (and their `_irqsave` forms,
//! which are the same here: interrupts are not modelled).
//!
//! Under the checkers every lock also carries its holder as ghost state, so a task that ends
//! holding a lock (`lock-released`) or takes a lock it already holds is reported instead of
//! deadlocking the explorer.

use core::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::AtomicUsize;

use super::sched::Current;
use crate::event::{KernelEvent, LockName};
use crate::ghost::Ghost;
use crate::platform::{Platform, RawSpinLock};

const NO_OWNER: usize = usize::MAX;

pub struct SpinLock<P: Platform> {
    raw: P::SpinLock,
    pub name: LockName,
    /// Ghost: the pid holding the lock (checker builds only).
    owner: AtomicUsize,
}

impl<P: Platform> SpinLock<P> {
    pub fn new(name: LockName) -> Self {
        // Wait-queue locks are never trylocked (the loom platform keeps no trylock flag for
        // them); their events are recorded as detail (`mmcheck check --verbose` shows them).
        let trylock = !name.is_wait_queue();
        SpinLock { raw: P::SpinLock::new(trylock), name, owner: AtomicUsize::new(NO_OWNER) }
    }

    /// Ghost: does `pid` hold this lock?
    pub fn held_by(&self, pid: usize) -> bool {
        P::Ghost::ENABLED && self.owner.load(Relaxed) == pid
    }

    #[inline(always)]
    fn acquired(&self, cur: &Current<P>, trylock: bool) {
        if P::Ghost::ENABLED {
            self.owner.store(cur.pid(), Relaxed);
            cur.emit(KernelEvent::LockAcquired { lock: self.name, trylock });
        }
    }

    /// `do_exit` for locks: if `cur` still holds this lock, report it and release it so the
    /// other tasks can go on.
    pub fn release_if_leaked(&self, cur: &Current<P>) {
        if self.held_by(cur.pid()) {
            cur.emit(KernelEvent::LockLeaked { lock: self.name });
            self.owner.store(NO_OWNER, Relaxed);
            self.raw.unlock();
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
    lock.raw.lock();
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
        lock.owner.store(NO_OWNER, Relaxed);
        lock.raw.unlock_with(|| cur.emit(KernelEvent::LockReleased { lock: lock.name }));
        return;
    }
    lock.raw.unlock();
}
