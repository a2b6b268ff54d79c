//! The seam itself: the traits protocol code is written against ([`Platform`], [`Atomic`],
//! [`AtomicInt`], [`RawSpinLock`], [`Join`]), the object tags of symmetry ([`SymTag`]), and the
//! macros that forward a platform's atomics to its own types. Below every implementation
//! (the parent module re-exports all of it at `crate::platform`).

use core::sync::atomic::Ordering;
use core::time::Duration;

use crate::ghost::Ghost;

/// An atomic cell of `T` with explicit orderings (the subset of `core::sync::atomic` the
/// protocols use).
pub trait Atomic<T: Copy>: Send + Sync + 'static {
    fn new(v: T) -> Self;
    fn load(&self, order: Ordering) -> T;
    fn store(&self, v: T, order: Ordering);
    fn swap(&self, v: T, order: Ordering) -> T;
    fn compare_exchange(&self, current: T, new: T, success: Ordering, failure: Ordering) -> Result<T, T>;
}

/// Integer atomics: arithmetic and bit operations (the kernel's `atomic_inc`, `set_bit` …).
pub trait AtomicInt<T: Copy>: Atomic<T> {
    fn fetch_add(&self, v: T, order: Ordering) -> T;
    fn fetch_sub(&self, v: T, order: Ordering) -> T;
    fn fetch_or(&self, v: T, order: Ordering) -> T;
    fn fetch_and(&self, v: T, order: Ordering) -> T;
    fn fetch_xor(&self, v: T, order: Ordering) -> T;
    /// One read-modify-write that stores `f(old)` and returns `old` (`fetch_update` that always
    /// stores): what a list changed under its lock needs, as one step of every checker.
    fn fetch_apply(&self, order: Ordering, f: impl Fn(T) -> T) -> T;
}

/// The ordering of the load half of a read-modify-write of ordering `order`.
#[inline(always)]
pub const fn load_half(order: Ordering) -> Ordering {
    match order {
        Ordering::Release => Ordering::Relaxed,
        Ordering::AcqRel => Ordering::Acquire,
        o => o,
    }
}

/// A kernel spinlock as the platform provides it: `spin_trylock`, `spin_lock`,
/// `spin_unlock`. Under loom and shuttle `lock` blocks (see the module docs).
/// `unlock` must be called by the holder.
pub trait RawSpinLock: Send + Sync + 'static {
    /// `trylock`: whether `try_lock` will ever be called on this lock (the loom platform keeps
    /// extra state for those).
    fn new(trylock: bool) -> Self;
    fn try_lock(&self) -> bool;
    fn lock(&self);
    fn unlock(&self);
    /// `unlock`, calling `released` at the point where the lock is free for a trylock
    /// (so that a trace never shows a trylock failing after the unlock).
    fn unlock_with(&self, released: impl FnOnce()) {
        released();
        self.unlock();
    }
}

/// A fence or ordering the kernel names and C11 does not (Documentation/memory-barriers.txt,
/// Documentation/atomic_t.txt, include/linux/spinlock.h). The platform that models the
/// kernel's own memory model (the stateful one under `memory = "lkmm"`) sees the kernel's
/// name; every other platform runs [`KernelFence::c11`], the C11 fence the models have always
/// lowered it to (or nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelFence {
    /// `smp_mb()`.
    Mb,
    /// `smp_rmb()`.
    Rmb,
    /// `smp_wmb()`.
    Wmb,
    /// `smp_mb__before_atomic()`.
    BeforeAtomic,
    /// `smp_mb__after_atomic()`.
    AfterAtomic,
    /// `smp_mb__after_spinlock()`.
    AfterSpinlock,
    /// `smp_mb__after_unlock_lock()`.
    AfterUnlockLock,
    /// The leading half of a value-returning read-modify-write (`cmpxchg()`,
    /// `test_and_set_bit()`): fully ordered when it succeeds, unordered when a conditional one
    /// fails. C11 has no such RMW; the models write it as a full fence, the RMW, and a full
    /// fence ([`KernelFence::FullRmwEnd`]).
    FullRmwBegin,
    /// The trailing half of it.
    FullRmwEnd,
    /// The next read-modify-write returns no value (`atomic_inc()`, `set_bit()`): `smp_rmb()`
    /// does not order its read. No fence at all in C11.
    VoidRmw,
}

impl KernelFence {
    /// The C11 fence a platform without the kernel's memory model runs instead, if any.
    #[inline(always)]
    pub const fn c11(self) -> Option<Ordering> {
        match self {
            KernelFence::Rmb => Some(Ordering::Acquire),
            KernelFence::Wmb => Some(Ordering::Release),
            KernelFence::VoidRmw => None,
            _ => Some(Ordering::SeqCst),
        }
    }
}

/// A spawned thread's handle.
pub trait Join: Send + 'static {
    fn join(self);
}

/// The machine the protocol runs on.
/// How a shared object relates to the ids that a symmetry reduction permutes (docs/model.md,
/// "Symmetry"). Protocol code wraps the creation of its objects in [`Platform::tagged`]; only
/// the stateful platform reads the tags, every other platform compiles them away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymTag {
    /// The objects created inside belong to node `n` (the fields of `pgdat[n]`): a permutation
    /// of the nodes maps the k-th object of node `n` to the k-th object of its image.
    Node(u8),
    /// The objects created inside belong to task `pid` (its `task_struct`).
    Pid(u8),
    /// The value of the objects created inside is a node id or `NUMA_NO_NODE`
    /// (`kswapd_exclusive`).
    NodeValue,
    /// The value of the objects created inside is a mask of pids.
    PidMask,
    /// The value of the objects created inside is a list of pids in order (a wait queue's
    /// entries, [`crate::kernel::wait::WaitList`]): a permutation renames each entry in place.
    PidList,
}

pub trait Platform: Sized + Send + Sync + 'static {
    /// Short name for reports: `std`, `loom`, `shuttle`.
    const NAME: &'static str;
    /// Runs on real threads (no explorer): roles start together behind a barrier, since
    /// nothing else would make them overlap.
    const REAL_THREADS: bool = false;
    /// A load may return a value that a later store has superseded, for as long as the
    /// explorer likes (loom's C11 model). A machine makes every store visible to every CPU in
    /// finite time, so a loop that repeats only by reading stale values is no livelock: on such
    /// a platform, once every other task has finished, a looping task's loads read the newest
    /// stores ([`Self::fresh_reads`], switched on by `Current::loop_head`).
    const STALE_READS: bool = false;
    /// The checker hooks of this platform instance.
    type Ghost: Ghost;

    type AtomicBool: Atomic<bool>;
    type AtomicI32: AtomicInt<i32>;
    type AtomicU32: AtomicInt<u32>;
    type AtomicU64: AtomicInt<u64>;
    type SpinLock: RawSpinLock;
    /// A handle that can unpark a parked thread.
    type Thread: Clone + Send + Sync + 'static;
    type JoinHandle: Join;

    /// A memory fence; `fence(SeqCst)` is the kernel's `smp_mb()`.
    fn fence(order: Ordering);
    /// A fence by its kernel name ([`KernelFence`]): [`Self::fence`] of its C11 lowering on
    /// every platform but the stateful one.
    #[inline(always)]
    fn kernel_fence(f: KernelFence) {
        if let Some(o) = f.c11() {
            Self::fence(o)
        }
    }
    fn spawn<F: FnOnce() + Send + 'static>(name: String, f: F) -> Self::JoinHandle;
    fn current() -> Self::Thread;
    /// Block until unparked (may return spuriously; callers loop on their condition).
    fn park();
    /// Block until unparked or `timeout` elapses. Only the `std` platform has time; under
    /// loom and shuttle time is an explorer choice made by the protocol's timer model
    /// (`crate::kernel::sched::TimerModel`), and this is `park`.
    fn park_timeout(timeout: Duration);
    fn unpark(thread: &Self::Thread);
    /// `cond_resched()` / a spin-loop hint: lets the explorer run someone else.
    fn yield_now();
    /// From now on (`true`) the calling task's loads read the newest store of their location,
    /// as a read-modify-write does; `false` at the start of every task. Only platforms with
    /// [`Self::STALE_READS`] act on it.
    #[inline(always)]
    fn fresh_reads(_on: bool) {}
    /// A kernel barrier is a scheduling point of its own here (the stateful engine under
    /// `memory = "lkmm"`), so another task may run between a store and the barrier after it.
    /// Protocol code that reports a store only once its barrier is done then also reports
    /// where the store itself took effect, so that a monitor orders it against other tasks'
    /// stores to the same location. Everywhere else a barrier is no step (sequential
    /// consistency, loom, shuttle) and this is `false`.
    #[inline(always)]
    fn fences_are_steps() -> bool {
        false
    }
    /// The calling task's last load read a store that a later store to its location had
    /// already replaced (a weak-memory outcome: the newer store had not reached this CPU).
    /// Only the stateful engine under `memory = "lkmm"` tells; everywhere else `false`.
    #[inline(always)]
    fn last_read_stale() -> bool {
        false
    }
    /// The calling thread's time on a CPU so far, in nanoseconds, where the platform runs on
    /// real threads and can tell (`None` under the explorers).
    fn thread_cpu_ns() -> Option<u64> {
        None
    }
    /// Runs `f`, whose objects carry `tag` (see [`SymTag`]); `f()` on every platform but the
    /// stateful one.
    #[inline(always)]
    fn tagged<R>(_tag: SymTag, f: impl FnOnce() -> R) -> R {
        f()
    }
    /// Joins every one of `handles`: one after another, in their order, on every platform but
    /// the stateful one, which under symmetry waits for all of them at once (the order of the
    /// joins is the joiner's own and would break the symmetry between the joined tasks).
    fn join_all(handles: Vec<Self::JoinHandle>) {
        for h in handles {
            h.join();
        }
    }
}

macro_rules! forward_atomic {
    ($wrapper:ty, $inner:ty, $t:ty) => {
        impl $crate::platform::Atomic<$t> for $wrapper {
            #[inline(always)]
            fn new(v: $t) -> Self {
                <$inner>::new(v)
            }
            #[inline(always)]
            fn load(&self, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::load(self, order)
            }
            #[inline(always)]
            fn store(&self, v: $t, order: core::sync::atomic::Ordering) {
                <$inner>::store(self, v, order)
            }
            #[inline(always)]
            fn swap(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::swap(self, v, order)
            }
            #[inline(always)]
            fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: core::sync::atomic::Ordering,
                failure: core::sync::atomic::Ordering,
            ) -> Result<$t, $t> {
                <$inner>::compare_exchange(self, current, new, success, failure)
            }
        }
    };
}

macro_rules! forward_atomic_int {
    ($inner:ty, $t:ty) => {
        $crate::platform::forward_atomic!($inner, $inner, $t);
        impl $crate::platform::AtomicInt<$t> for $inner {
            #[inline(always)]
            fn fetch_add(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::fetch_add(self, v, order)
            }
            #[inline(always)]
            fn fetch_sub(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::fetch_sub(self, v, order)
            }
            #[inline(always)]
            fn fetch_or(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::fetch_or(self, v, order)
            }
            #[inline(always)]
            fn fetch_and(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::fetch_and(self, v, order)
            }
            #[inline(always)]
            fn fetch_xor(&self, v: $t, order: core::sync::atomic::Ordering) -> $t {
                <$inner>::fetch_xor(self, v, order)
            }
            $crate::platform::fetch_apply_by_update!($inner, $t);
        }
    };
}

/// `AtomicInt::fetch_apply` by the atomic's own `fetch_update` (std, loom and shuttle): a load,
/// then a compare-exchange that stores `f(old)`, again if another store came between (never
/// under the lock that guards a wait queue's list).
macro_rules! fetch_apply_by_update {
    ($inner:ty, $t:ty) => {
        #[inline(always)]
        fn fetch_apply(&self, order: core::sync::atomic::Ordering, f: impl Fn($t) -> $t) -> $t {
            match <$inner>::fetch_update(self, order, $crate::platform::load_half(order), |x| Some(f(x))) {
                Ok(x) | Err(x) => x,
            }
        }
    };
}

/// Implements the atomic traits for one family of atomics (`std`, `loom` or `shuttle`).
macro_rules! atomics_for {
    ($m:path) => {
        const _: () = {
            use $m as a;
            $crate::platform::forward_atomic!(a::AtomicBool, a::AtomicBool, bool);
            $crate::platform::forward_atomic_int!(a::AtomicI32, i32);
            $crate::platform::forward_atomic_int!(a::AtomicU32, u32);
            $crate::platform::forward_atomic_int!(a::AtomicU64, u64);
        };
    };
}
pub(crate) use {atomics_for, fetch_apply_by_update, forward_atomic, forward_atomic_int};
