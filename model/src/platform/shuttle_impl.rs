//! The shuttle platform: shuttle's atomics (all sequentially consistent), mutex and threads,
//! explored by PCT, random or DFS schedulers on configurations too large for loom.

use core::cell::UnsafeCell;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use core::time::Duration;

use super::{Join, Platform, RawSpinLock};
use crate::ghost::Ghost;

super::atomics_for!(shuttle::sync::atomic);

/// Shuttle, with the checker's ghost `G`.
pub struct Shuttle<G: Ghost>(PhantomData<fn() -> G>);

/// A kernel spinlock as a shuttle `Mutex`: `try_lock` is `spin_trylock`, `lock` blocks.
///
/// Kernel locking is not scoped, so the guard is parked inside the lock between `lock` and
/// `unlock`. The mutex is boxed so its address is stable; the guard borrows it for as long as
/// the lock is held and is dropped (field order) before the mutex.
pub struct ShuttleSpinLock {
    guard: UnsafeCell<Option<shuttle::sync::MutexGuard<'static, ()>>>,
    mutex: Box<shuttle::sync::Mutex<()>>,
}

// SAFETY: `guard` is only touched by the holder of `mutex` (between a successful lock and the
// matching unlock), so accesses to it are serialised by the mutex itself.
unsafe impl Send for ShuttleSpinLock {}
unsafe impl Sync for ShuttleSpinLock {}

impl ShuttleSpinLock {
    fn hold(&self, g: shuttle::sync::MutexGuard<'_, ()>) {
        // SAFETY: the guard borrows `*self.mutex`, a heap allocation that lives as long as
        // `self`; the guard is dropped in `unlock` or, at the latest, before the mutex (field
        // order). See the Send/Sync note for exclusivity.
        unsafe {
            let g: shuttle::sync::MutexGuard<'static, ()> = core::mem::transmute(g);
            *self.guard.get() = Some(g);
        }
    }
}

impl RawSpinLock for ShuttleSpinLock {
    fn new(_trylock: bool) -> Self {
        ShuttleSpinLock { guard: UnsafeCell::new(None), mutex: Box::new(shuttle::sync::Mutex::new(())) }
    }
    fn try_lock(&self) -> bool {
        match self.mutex.try_lock() {
            Ok(g) => {
                self.hold(g);
                true
            }
            Err(_) => false,
        }
    }
    fn lock(&self) {
        let g = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        self.hold(g);
    }
    fn unlock(&self) {
        // SAFETY: called by the holder (see above).
        let g = unsafe { (*self.guard.get()).take() };
        drop(g);
    }
}

impl Join for shuttle::thread::JoinHandle<()> {
    fn join(self) {
        if let Err(e) = shuttle::thread::JoinHandle::join(self) {
            std::panic::resume_unwind(e)
        }
    }
}

impl<G: Ghost> Platform for Shuttle<G> {
    const NAME: &'static str = "shuttle";
    type Ghost = G;
    type AtomicBool = shuttle::sync::atomic::AtomicBool;
    type AtomicI32 = shuttle::sync::atomic::AtomicI32;
    type AtomicU32 = shuttle::sync::atomic::AtomicU32;
    type AtomicU64 = shuttle::sync::atomic::AtomicU64;
    type SpinLock = ShuttleSpinLock;
    type Thread = shuttle::thread::Thread;
    type JoinHandle = shuttle::thread::JoinHandle<()>;

    fn fence(order: Ordering) {
        shuttle::sync::atomic::fence(order)
    }
    fn spawn<F: FnOnce() + Send + 'static>(_name: String, f: F) -> Self::JoinHandle {
        shuttle::thread::spawn(f)
    }
    fn current() -> Self::Thread {
        shuttle::thread::current()
    }
    fn park() {
        shuttle::thread::park()
    }
    fn park_timeout(_timeout: Duration) {
        // Shuttle has no time. The timer models never ask for a real timeout under shuttle.
        shuttle::thread::park()
    }
    fn unpark(thread: &Self::Thread) {
        thread.unpark()
    }
    fn yield_now() {
        shuttle::thread::yield_now()
    }
}
