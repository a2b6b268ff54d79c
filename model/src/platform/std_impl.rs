//! The runtime platform: real threads, real atomics, a real spinlock, real time.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use super::{Join, Platform, RawSpinLock};
use crate::ghost::Ghost;

super::atomics_for!(core::sync::atomic);

/// Real OS threads and `std` atomics. `G` is the ghost: [`crate::ghost::NoGhost`] for the
/// plain runtime build, or the checker's recorder for `mmcheck run`.
pub struct Std<G: Ghost>(PhantomData<fn() -> G>);

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
            && self.locked.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
    #[inline]
    fn lock(&self) {
        if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
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
                if spins.is_multiple_of(128) {
                    std::thread::yield_now();
                } else {
                    core::hint::spin_loop();
                }
            }
            if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
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
    fn thread_cpu_ns() -> Option<u64> {
        thread_cpu_ns()
    }
}

/// The calling thread's time on a CPU so far, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), or `None` where that is not available.
/// (`/proc/thread-self/schedstat` would need no `unsafe`, but for a running thread it lags by
/// up to a scheduler tick, far longer than an iteration.)
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_ns() -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one `struct timespec` (two 64-bit fields on 64-bit Linux)
    // to the pointer it is given, which points to a live, writable `Timespec`.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_ns() -> Option<u64> {
    None
}
