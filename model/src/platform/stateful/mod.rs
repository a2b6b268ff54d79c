//! The stateful platform: a deterministic, single-OS-thread, coroutine-based executor whose
//! every scheduling decision is made by a caller-supplied [`Chooser`]. It is the substrate of
//! a stateful (state-caching) exhaustive search: at every scheduling point the chooser sees
//! each task's pending operation, which tasks are enabled, the values of all shared objects,
//! and a 64-bit fingerprint of the whole runtime state.
//!
//! # Tasks and scheduling points
//!
//! An execution is one call of [`run`]. Its body is task 0; [`Platform::spawn`] creates the
//! next task (ids are dense, in creation order, at most [`MAX_TASKS`]). Spawning is not a
//! scheduling point: the new task is runnable with pending op [`Op::Start`]. Each task is a
//! corosensei coroutine on a stack taken from the [`StackPool`]; stacks are mapped once and
//! reused by every later execution (a finished task returns its stack at once).
//!
//! A task runs until its next *yield point*: every operation on a shared object, lock, park
//! token or task ([`Op`]). There it records the operation as its *pending op* and, *before*
//! performing it, the chooser picks which enabled task performs its pending op next. If it
//! picks the same task, the task goes on without a context switch (the chooser is called on
//! the task's own stack); otherwise the task suspends and the scheduler resumes the chosen
//! one. A task is *enabled* iff its pending op can proceed: `Lock(l)` iff `l` is free,
//! `Park` iff the task's unpark token is set, `Join(t)` iff `t` has finished; every other op
//! always (`TryLock` fails instead of blocking; `Unlock` never blocks). The chooser is called
//! at every scheduling point with at least one enabled task, including points with only one:
//! a stateful search needs every state. No enabled task and some unfinished is a deadlock.
//!
//! # Memory model: sequential consistency
//!
//! The runtime owns every shared object (a table of `u64` bit patterns; `bool`, `i32`, `u32`
//! and `u64` are stored widened) and performs each operation on the table in one step, in the
//! order the chooser picks: every execution is a sequentially consistent interleaving, and the
//! orderings passed to the atomics are ignored. Hence `fence` is a no-op and *not* a
//! scheduling point: under SC a fence orders nothing that is not already ordered, and
//! making it a point would only multiply equivalent interleavings. (Weak-memory outcomes are
//! loom's job; this platform is for large SC state spaces.)
//!
//! # No spurious wake-ups
//!
//! `park` blocks until the task's token is set by an `unpark` (and consumes it); it never
//! returns spuriously, and `park_timeout` is `park` (time is an explorer choice the model
//! makes: `kernel::sched::TimerModel`). The kernel model's wait loops do not need spurious
//! wake-ups to be explored: every sleeper re-checks its condition (`task->state`) after
//! `park` returns and loops, so a spurious return would only re-run a check that finds the
//! same state; and a waker makes the condition true *before* it unparks, so a sleeper is
//! never left parked while its condition holds, unless the protocol lost the wakeup, which
//! is exactly the deadlock the search must report. A token set before the `park` (the waker
//! ran between the sleeper's check and its `park`) makes the `park` return at once, as
//! `std::thread::park` does.
//!
//! # Local hashes and the fingerprint
//!
//! Each task has a *local hash*: a hash of everything it has observed and done since it
//! started. At each yield point the op (kind and operand) is folded in, and after the op the
//! value it returned (a load's value, an RMW's old value, a CAS's found value and success,
//! a trylock's result, a spawned task's id). Since task code is deterministic, the local hash
//! stands for the task's local state (its stack and registers), which the runtime cannot see.
//! [`reset_local`] lets the checker's ghost replace it at a loop head by the model's summary
//! of the loop state (so that iterations reaching the same state meet), and [`observe`] folds
//! in values the ghost hands to model code.
//!
//! [`SchedPoint::fingerprint`] hashes every object value, every lock owner, and for every
//! unfinished task its park token, its status (its pending op with operand) and its local
//! hash; a finished task adds only that it has finished. Its history cannot matter any more:
//! it never runs again, `Join` asks only whether it finished (under `lkmm` the join also takes
//! the task's views, which the memory's own hash keeps until then), and the model's non-platform
//! state that other tasks read is either the checker's ghost (hashed by the checker) or a
//! mirror of a platform object (`kernel::spinlock`'s owner mirrors the lock's owner, the
//! compaction model's ghost signal flags mirror their atomics); a task's `sleep_state` is read
//! only by the task itself. ([`SchedPoint::fingerprint_keeping_finished`] keeps them, for the
//! checker's history-only reference search.) The object and lock part is an XOR of one
//! strongly mixed term per (object, value) and (lock, owner), maintained incrementally by
//! every write (two multiplies per write); the task part is folded on demand (one multiply
//! per task) and the result goes through a finaliser. No allocation.
//!
//! For the local hashes to stand for the local states, every value model code receives from
//! outside the runtime must be a function of the task's history or be [`observe`]d: in
//! particular every answer of the ghost that model code branches on (`loop_head`'s verdict,
//! `untimed_sleep`, `aborted`, `task_exit`) must be folded in by the ghost.
//!
//! What the fingerprint does **not** cover, and the checker must add to its state key: the
//! ghost's state (events recorded, monitors' automata, loop-bound counters, the owner and
//! sleeper bookkeeping of `kernel::spinlock`/`kernel::sched`), and any non-platform state the
//! model or the scenario keeps outside the runtime (std atomics used as ghost bookkeeping,
//! `OnceLock`s) unless what it holds is already determined by the local hashes.
//!
//! # Ending an execution, memory
//!
//! [`run`] returns [`RunEnd::AllFinished`], [`RunEnd::Deadlock`] (no task enabled, some
//! unfinished) or [`RunEnd::Panicked`] (a task's panic is caught inside its coroutine). A
//! finished task's stack goes back to the pool at once. The tasks left suspended by a
//! deadlock or a panic are unwound (their coroutines are force-unwound, which drops what their
//! stacks own; yield points reached while unwinding perform their op without scheduling and
//! never block) and their stacks reused too: no execution leaks a stack, whatever its end,
//! and memory stays flat over millions of executions (tested). The unwinding costs a few
//! microseconds per task, so a search should fast-forward pruned executions to their end
//! (a cheap fixed policy) rather than abandon them; `run` has no way to abandon one anyway.
//!
//! A panic of the chooser (or a choice of a task that is not enabled) propagates out of
//! `run` after the same teardown. The chooser is called on the stack of the task that reached
//! the yield point (that is what makes same-task steps cheap), so its stack use counts against
//! the task stack ([`StackPool::with_stack_size`]; a stack overflow hits the guard page and
//! kills the process, as with shuttle).
//!
//! # Threads
//!
//! Everything happens on the OS thread that calls [`run`]: the runtime state is reached
//! through a thread-local pointer set for the duration of `run`, so using an object from any
//! other thread panics; objects and task handles carry their execution's number (process-wide),
//! so using one in a later execution, or in another thread's, panics too. The object types
//! are plain ids, hence `Send + Sync` without any `unsafe impl`. Nested `run` panics. Since
//! all tasks share one OS thread, model code must not hold a `std` lock across a yield point
//! (another task taking it would block the thread); shuttle has the same rule.

pub mod arena;
pub mod lkmm;
mod rt;

use core::marker::PhantomData;
use core::sync::atomic::Ordering;
use core::time::Duration;

pub use rt::{
    current_task, in_execution, last_read_stale, lkmm_token_set, local, observe, observe_pids, reset_local,
    reset_local_summary, reset_shadow_summary, run, run_snapshots, Chooser, Decision, LockId, Memory, ObjId, Op,
    RunEnd, SchedPoint, SnapChooser, Snapshot, StackPool, SymImage, TaskId, MAX_TASKS,
};

use super::{Atomic, AtomicInt, Join, KernelFence, Platform, RawSpinLock, SymTag};
use crate::ghost::Ghost;

/// The stateful runtime, with the checker's ghost `G`.
pub struct Stateful<G: Ghost>(PhantomData<fn() -> G>);

/// A shared object of the running execution (its id in the object table).
pub struct StAtomic<T> {
    id: ObjId,
    epoch: u32,
    _t: PhantomData<fn() -> T>,
}

impl<T> StAtomic<T> {
    /// The object's id (what [`Op`]s and [`SchedPoint::value`] refer to).
    pub fn id(&self) -> ObjId {
        self.id
    }
}

/// Conversion to and from the table's `u64` bit patterns.
trait Word: Copy {
    fn to_word(self) -> u64;
    fn from_word(w: u64) -> Self;
}

impl Word for bool {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        w != 0
    }
}

macro_rules! word_int {
    ($t:ty, $u:ty) => {
        impl Word for $t {
            #[inline(always)]
            fn to_word(self) -> u64 {
                self as $u as u64
            }
            #[inline(always)]
            fn from_word(w: u64) -> Self {
                w as $u as $t
            }
        }
    };
}
word_int!(i32, u32);
word_int!(u32, u32);
word_int!(u64, u64);

macro_rules! st_atomic {
    ($t:ty) => {
        impl Atomic<$t> for StAtomic<$t> {
            #[inline]
            fn new(v: $t) -> Self {
                let (id, epoch) = rt::obj_new(v.to_word());
                StAtomic { id, epoch, _t: PhantomData }
            }
            #[inline]
            fn load(&self, order: Ordering) -> $t {
                <$t>::from_word(rt::obj_load(self.id, self.epoch, order))
            }
            #[inline]
            fn store(&self, v: $t, order: Ordering) {
                rt::obj_store(self.id, self.epoch, v.to_word(), order)
            }
            #[inline]
            fn swap(&self, v: $t, order: Ordering) -> $t {
                let w = v.to_word();
                <$t>::from_word(rt::obj_rmw(self.id, self.epoch, order, move |_| w))
            }
            #[inline]
            fn compare_exchange(&self, current: $t, new: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                rt::obj_cas(self.id, self.epoch, current.to_word(), new.to_word(), s, f)
                    .map(<$t>::from_word)
                    .map_err(<$t>::from_word)
            }
        }
    };
}

macro_rules! st_atomic_int {
    ($t:ty) => {
        st_atomic!($t);
        impl AtomicInt<$t> for StAtomic<$t> {
            #[inline]
            fn fetch_add(&self, v: $t, order: Ordering) -> $t {
                self.rmw(order, |x| x.wrapping_add(v))
            }
            #[inline]
            fn fetch_sub(&self, v: $t, order: Ordering) -> $t {
                self.rmw(order, |x| x.wrapping_sub(v))
            }
            #[inline]
            fn fetch_or(&self, v: $t, order: Ordering) -> $t {
                self.rmw(order, |x| x | v)
            }
            #[inline]
            fn fetch_and(&self, v: $t, order: Ordering) -> $t {
                self.rmw(order, |x| x & v)
            }
            #[inline]
            fn fetch_xor(&self, v: $t, order: Ordering) -> $t {
                self.rmw(order, |x| x ^ v)
            }
            #[inline]
            fn fetch_apply(&self, order: Ordering, f: impl Fn($t) -> $t) -> $t {
                self.rmw(order, f)
            }
        }
        impl StAtomic<$t> {
            #[inline(always)]
            fn rmw(&self, order: Ordering, f: impl Fn($t) -> $t) -> $t {
                <$t>::from_word(rt::obj_rmw(self.id, self.epoch, order, |w| f(<$t>::from_word(w)).to_word()))
            }
        }
    };
}

st_atomic!(bool);
st_atomic_int!(i32);
st_atomic_int!(u32);
st_atomic_int!(u64);

/// A spinlock of the running execution: its owner is in the runtime's lock table.
pub struct StSpinLock {
    id: LockId,
    epoch: u32,
}

impl StSpinLock {
    /// The lock's id (what [`Op`]s and [`SchedPoint::lock_owner`] refer to).
    pub fn id(&self) -> LockId {
        self.id
    }
}

impl RawSpinLock for StSpinLock {
    fn new(_trylock: bool) -> Self {
        let (id, epoch) = rt::lock_new();
        StSpinLock { id, epoch }
    }
    #[inline]
    fn try_lock(&self) -> bool {
        rt::lock_try(self.id, self.epoch)
    }
    #[inline]
    fn lock(&self) {
        rt::lock_lock(self.id, self.epoch)
    }
    #[inline]
    fn unlock(&self) {
        rt::lock_unlock(self.id, self.epoch, || {})
    }
    /// `released` runs in the unlock's step (after its scheduling point, just before the lock
    /// is freed), so no other task can see the lock held after `released`.
    #[inline]
    fn unlock_with(&self, released: impl FnOnce()) {
        rt::lock_unlock(self.id, self.epoch, released)
    }
}

/// A task handle for `unpark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StThread {
    task: TaskId,
    epoch: u32,
}

impl StThread {
    pub fn task(&self) -> TaskId {
        self.task
    }
}

/// A spawned task's handle.
#[derive(Debug)]
pub struct StJoinHandle {
    task: TaskId,
    epoch: u32,
}

impl StJoinHandle {
    pub fn task(&self) -> TaskId {
        self.task
    }
}

impl Join for StJoinHandle {
    fn join(self) {
        rt::join(self.task, self.epoch)
    }
}

impl<G: Ghost> Platform for Stateful<G> {
    const NAME: &'static str = "stateful";
    type Ghost = G;
    type AtomicBool = StAtomic<bool>;
    type AtomicI32 = StAtomic<i32>;
    type AtomicU32 = StAtomic<u32>;
    type AtomicU64 = StAtomic<u64>;
    type SpinLock = StSpinLock;
    type Thread = StThread;
    type JoinHandle = StJoinHandle;

    /// Under `memory = "sc"` a no-op, and not a scheduling point: every operation is
    /// sequentially consistent. Under `lkmm` the kernel fence it stands for
    /// (`SeqCst`: `smp_mb()`), a step of its own.
    #[inline(always)]
    fn fence(order: Ordering) {
        rt::kernel_fence(rt::kernel_fence_of(order))
    }
    #[inline(always)]
    fn kernel_fence(f: KernelFence) {
        rt::kernel_fence(f)
    }
    /// Under `lkmm`: every kernel barrier is a step ([`rt::kernel_fence`]).
    fn fences_are_steps() -> bool {
        rt::lkmm_on()
    }
    /// Under `lkmm`: whether the task's last load read a superseded store.
    fn last_read_stale() -> bool {
        rt::lkmm_on() && rt::last_read_stale()
    }
    fn spawn<F: FnOnce() + Send + 'static>(_name: String, f: F) -> Self::JoinHandle {
        let (task, epoch) = rt::spawn(f);
        StJoinHandle { task, epoch }
    }
    fn current() -> Self::Thread {
        let (task, epoch) = rt::current();
        StThread { task, epoch }
    }
    fn park() {
        rt::park()
    }
    /// `park`: time is an explorer choice the model makes (`TimerModel`).
    fn park_timeout(_timeout: Duration) {
        rt::park()
    }
    fn unpark(thread: &Self::Thread) {
        rt::unpark(thread.task, thread.epoch)
    }
    fn yield_now() {
        rt::yield_now()
    }
    fn tagged<R>(tag: SymTag, f: impl FnOnce() -> R) -> R {
        rt::tagged(tag, f)
    }
    /// Under symmetry, one scheduling point that waits for all of them (see `rt::join_all`).
    fn join_all(handles: Vec<Self::JoinHandle>) {
        let tasks: Vec<(TaskId, u32)> = handles.iter().map(|h| (h.task, h.epoch)).collect();
        rt::join_all(&tasks)
    }
}
