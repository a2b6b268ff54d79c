//! The loom platform: loom's atomics, mutex and threads, so every interleaving (and the
//! weak-memory outcomes loom models) is explored.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use core::time::Duration;

use super::{Join, Platform, RawSpinLock};
use crate::ghost::Ghost;

super::atomics_for!(loom::sync::atomic);

/// Loom, with the checker's ghost `G`.
pub struct Loom<G: Ghost>(PhantomData<fn() -> G>);

/// A kernel spinlock as a loom `Mutex` (`lock` blocks), with a shadow `held` flag for
/// `spin_trylock`.
///
/// Why the flag: loom blocks a thread whose *pending* operation is on a mutex as soon as
/// another thread acquires that mutex, and runs it again only after the release, so a
/// `Mutex::try_lock` that is already pending can never fail; two kswapds both failing their
/// trylock while a writer holds tree_lock was never explored (measured: 0 of 22,847
/// executions of a three-thread probe). `spin_trylock` therefore reads the flag first, with
/// a read-modify-write (`fetch_or(false)`), which always reads the latest value (as the
/// kernel's atomic trylock does; a plain load could read a stale `true` and fail on a free
/// lock) and which loom's DPOR races against the holder's stores like any other access.
/// A trylock that reads `false` takes the mutex (blocking at most for a holder that is between
/// its mutex and its flag), which is a trylock that succeeded at that point.
///
/// Kernel locking is not scoped, so the guard is parked inside the lock between `lock` and
/// `unlock`. The mutex is boxed so its address is stable; the guard borrows it for as long as
/// the lock is held and is dropped (field order) before the mutex.
pub struct LoomSpinLock {
    guard: UnsafeCell<Option<loom::sync::MutexGuard<'static, ()>>>,
    mutex: Box<loom::sync::Mutex<()>>,
    /// `Some` for locks that are ever trylocked.
    held: Option<loom::sync::atomic::AtomicBool>,
}

// SAFETY: `guard` is only touched by the holder of `mutex` (between a successful lock and the
// matching unlock), so accesses to it are serialised by the mutex itself.
unsafe impl Send for LoomSpinLock {}
unsafe impl Sync for LoomSpinLock {}

impl LoomSpinLock {
    fn hold(&self, g: loom::sync::MutexGuard<'_, ()>) {
        // SAFETY: the guard borrows `*self.mutex`, a heap allocation that lives as long as
        // `self`; the guard is dropped in `unlock` or, at the latest, before the mutex (field
        // order). See the Send/Sync note for exclusivity.
        unsafe {
            let g: loom::sync::MutexGuard<'static, ()> = core::mem::transmute(g);
            *self.guard.get() = Some(g);
        }
    }
}

impl RawSpinLock for LoomSpinLock {
    fn new(trylock: bool) -> Self {
        LoomSpinLock {
            guard: UnsafeCell::new(None),
            mutex: Box::new(loom::sync::Mutex::new(())),
            held: trylock.then(|| loom::sync::atomic::AtomicBool::new(false)),
        }
    }
    fn try_lock(&self) -> bool {
        let held = self.held.as_ref().expect("spin_trylock on a lock created without trylock support");
        if held.fetch_or(false, Ordering::Acquire) {
            return false;
        }
        // The flag said free: the lock is free, or a holder is between its mutex and its flag
        // (just acquiring, or just releasing). Either way the trylock takes the lock as soon as
        // the mutex is free, which is a trylock that happened at that later point.
        self.lock();
        true
    }
    fn lock(&self) {
        let g = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        self.hold(g);
        if let Some(h) = &self.held {
            h.store(true, Ordering::Relaxed);
        }
    }
    fn unlock(&self) {
        self.unlock_with(|| {})
    }
    fn unlock_with(&self, released: impl FnOnce()) {
        if let Some(h) = &self.held {
            h.store(false, Ordering::Release);
        }
        released();
        // SAFETY: called by the holder (see above).
        let g = unsafe { (*self.guard.get()).take() };
        drop(g);
    }
}

impl Join for loom::thread::JoinHandle<()> {
    fn join(self) {
        if let Err(e) = loom::thread::JoinHandle::join(self) {
            std::panic::resume_unwind(e)
        }
    }
}

impl<G: Ghost> Platform for Loom<G> {
    const NAME: &'static str = "loom";
    type Ghost = G;
    type AtomicBool = loom::sync::atomic::AtomicBool;
    type AtomicI32 = loom::sync::atomic::AtomicI32;
    type AtomicU32 = loom::sync::atomic::AtomicU32;
    type AtomicU64 = loom::sync::atomic::AtomicU64;
    type SpinLock = LoomSpinLock;
    type Thread = loom::thread::Thread;
    type JoinHandle = loom::thread::JoinHandle<()>;

    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }
    fn spawn<F: FnOnce() + Send + 'static>(_name: String, f: F) -> Self::JoinHandle {
        loom::thread::spawn(f)
    }
    fn current() -> Self::Thread {
        loom::thread::current()
    }
    fn park() {
        loom::thread::park()
    }
    fn park_timeout(_timeout: Duration) {
        // Loom has no time. The timer models never ask for a real timeout under loom.
        loom::thread::park()
    }
    fn unpark(thread: &Self::Thread) {
        thread.unpark()
    }
    fn yield_now() {
        loom::thread::yield_now()
    }
}
