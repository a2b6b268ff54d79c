//! The runtime platform: real threads, real atomics, a real spinlock, real time.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use super::{Join, Platform, RawSpinLock};
use crate::ghost::{Ghost, NoGhost};

super::atomics_for!(core::sync::atomic);

/// Real OS threads and `std` atomics. `G` is the ghost: [`NoGhost`] (the default) for the
/// plain runtime build, or a counting ghost for `mmcheck run`.
pub struct Std<G: Ghost = NoGhost>(PhantomData<fn() -> G>);

/// A test-and-test-and-set spinlock, as the kernel's `spin_lock` spins. After a short spin it
/// yields the CPU, because user-space threads, unlike a kernel spinlock holder, can be
/// preempted while holding it.
pub struct StdSpinLock {
    locked: AtomicBool,
}

impl RawSpinLock for StdSpinLock {
    #[inline(always)]
    fn new(_trylock: bool) -> Self {
        StdSpinLock { locked: AtomicBool::new(false) }
    }
    #[inline(always)]
    fn try_lock(&self) -> bool {
        !self.locked.load(Ordering::Relaxed)
            && self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }
    #[inline]
    fn lock(&self) {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.lock_contended();
    }
    #[inline(always)]
    fn unlock(&self) {
        self.locked.store(false, Ordering::Release);
    }
}

impl StdSpinLock {
    #[cold]
    fn lock_contended(&self) {
        let mut spins = 0u32;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins % 128 == 0 {
                    std::thread::yield_now();
                } else {
                    core::hint::spin_loop();
                }
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

impl Join for std::thread::JoinHandle<()> {
    fn join(self) {
        if let Err(e) = std::thread::JoinHandle::join(self) {
            std::panic::resume_unwind(e)
        }
    }
}

impl<G: Ghost> Platform for Std<G> {
    const NAME: &'static str = "std";
    const REAL_THREADS: bool = true;
    type Ghost = G;
    type AtomicBool = core::sync::atomic::AtomicBool;
    type AtomicI32 = core::sync::atomic::AtomicI32;
    type AtomicU32 = core::sync::atomic::AtomicU32;
    type AtomicU64 = core::sync::atomic::AtomicU64;
    type SpinLock = StdSpinLock;
    type Thread = std::thread::Thread;
    type JoinHandle = std::thread::JoinHandle<()>;

    #[inline(always)]
    fn fence(order: Ordering) {
        core::sync::atomic::fence(order)
    }
    fn spawn<F: FnOnce() + Send + 'static>(name: String, f: F) -> Self::JoinHandle {
        std::thread::Builder::new().name(name).spawn(f).expect("spawn a runtime thread")
    }
    fn current() -> Self::Thread {
        std::thread::current()
    }
    fn park() {
        std::thread::park()
    }
    fn park_timeout(timeout: Duration) {
        std::thread::park_timeout(timeout)
    }
    fn unpark(thread: &Self::Thread) {
        thread.unpark()
    }
    fn yield_now() {
        std::thread::yield_now()
    }
}
