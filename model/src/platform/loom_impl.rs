//! The loom platform: loom's atomics, mutex and threads, so every interleaving (and the
//! weak-memory outcomes loom models) is explored.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use core::time::Duration;

use super::{Join, Platform, RawSpinLock};
use crate::ghost::Ghost;

loom_atomics!();

loom::thread_local! {
    /// This loom thread's loads read the newest store ([`Platform::fresh_reads`]).
    static FRESH: core::cell::Cell<bool> = core::cell::Cell::new(false);
}

/// Whether the calling loom thread reads fresh (see [`Platform::fresh_reads`]).
#[inline]
fn fresh() -> bool {
    FRESH.with(|f| f.get())
}

/// The atomic traits for loom's atomics, as [`super::atomics_for`] does for the others, but
/// for the load: once the thread reads fresh, a load is a read-modify-write that changes
/// nothing (`fetch_or` of zero, with the load's ordering), which under C11 reads the newest
/// store in modification order.
macro_rules! loom_atomics {
    () => {
        loom_atomic!(loom::sync::atomic::AtomicBool, bool, false);
        loom_atomic_int!(loom::sync::atomic::AtomicI32, i32);
        loom_atomic_int!(loom::sync::atomic::AtomicU32, u32);
        loom_atomic_int!(loom::sync::atomic::AtomicU64, u64);
    };
}
use loom_atomics;

macro_rules! loom_atomic {
    ($inner:ty, $t:ty, $zero:expr) => {
        impl super::Atomic<$t> for $inner {
            fn new(v: $t) -> Self {
                <$inner>::new(v)
            }
            fn load(&self, order: Ordering) -> $t {
                if fresh() {
                    <$inner>::fetch_or(self, $zero, order)
                } else {
                    <$inner>::load(self, order)
                }
            }
            fn store(&self, v: $t, order: Ordering) {
                <$inner>::store(self, v, order)
            }
            fn swap(&self, v: $t, order: Ordering) -> $t {
                <$inner>::swap(self, v, order)
            }
            fn compare_exchange(&self, current: $t, new: $t, success: Ordering, failure: Ordering) -> Result<$t, $t> {
                <$inner>::compare_exchange(self, current, new, success, failure)
            }
        }
    };
}
use loom_atomic;

macro_rules! loom_atomic_int {
    ($inner:ty, $t:ty) => {
        loom_atomic!($inner, $t, 0);
        impl super::AtomicInt<$t> for $inner {
            fn fetch_add(&self, v: $t, order: Ordering) -> $t {
                <$inner>::fetch_add(self, v, order)
            }
            fn fetch_sub(&self, v: $t, order: Ordering) -> $t {
                <$inner>::fetch_sub(self, v, order)
            }
            fn fetch_or(&self, v: $t, order: Ordering) -> $t {
                <$inner>::fetch_or(self, v, order)
            }
            fn fetch_and(&self, v: $t, order: Ordering) -> $t {
                <$inner>::fetch_and(self, v, order)
            }
            fn fetch_xor(&self, v: $t, order: Ordering) -> $t {
                <$inner>::fetch_xor(self, v, order)
            }
            $crate::platform::fetch_apply_by_update!($inner, $t);
        }
    };
}
use loom_atomic_int;

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
    const STALE_READS: bool = true;
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
    fn fresh_reads(on: bool) {
        FRESH.with(|f| f.set(on))
    }
}
