//! The runtime state: the execution's tables ([`Rt`]), the task slots, the [`StackPool`] that
//! owns them between executions, the thread-local pointer through which the running execution
//! is reached, and the two types the chooser sees ([`Chooser`], the [`SchedPoint`] it is
//! handed; the point's methods are in `point.rs`).

use core::any::Any;
use core::cell::Cell;
use core::ptr::{self, NonNull};
use core::sync::atomic::AtomicU32;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, Yielder};

use super::group::Sym;
use super::lkstate::Lk;
use super::types::{Op, TaskId, MAX_TASKS, NO_TASK};

/// Makes every scheduling decision of an execution.
pub trait Chooser {
    /// Pick one of `point.enabled()`. Called at every scheduling point where at least one task
    /// is enabled, including points where only one is. Returning a task that is not enabled
    /// makes [`run`] panic. The chooser must not call into the runtime (atomics, spawn …).
    ///
    /// [`run`]: crate::platform::stateful::run
    fn choose(&mut self, point: &SchedPoint<'_>) -> TaskId;
}

impl<F: FnMut(&SchedPoint<'_>) -> TaskId> Chooser for F {
    fn choose(&mut self, point: &SchedPoint<'_>) -> TaskId {
        self(point)
    }
}

/// Stacks (and the runtime's tables) kept from one execution to the next. One per thread
/// that calls [`run`]; its stacks are mapped once and reused, never unmapped per execution.
///
/// [`run`]: crate::platform::stateful::run
pub struct StackPool {
    pub(super) rt: Option<NonNull<Rt>>,
    pub(super) stack_size: usize,
}

impl StackPool {
    /// The default stack size of a task (virtual memory; only touched pages are resident).
    pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;

    pub fn new() -> Self {
        Self::with_stack_size(Self::DEFAULT_STACK_SIZE)
    }
    pub fn with_stack_size(bytes: usize) -> Self {
        StackPool { rt: None, stack_size: bytes }
    }
    /// How many stacks the pool holds (one per task that ran at the same time, at most).
    pub fn stacks(&self) -> usize {
        // SAFETY: the pool owns the block; nothing else references it between runs.
        self.rt.map_or(0, |rt| unsafe { rt.as_ref().stacks.len() })
    }
}

// SAFETY: between executions the pool owns only mapped stacks (plain memory) and empty
// tables: no task slot, no yielder, no chooser pointer survives `run`. It is not `Sync`, and
// `run` borrows it mutably, so it is never used by two threads at once.
unsafe impl Send for StackPool {}

impl Default for StackPool {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            // SAFETY: allocated by `Box::into_raw` in `run`, returned to the pool after it.
            drop(unsafe { Box::from_raw(rt.as_ptr()) });
        }
    }
}

pub(super) type Co = Coroutine<(), (), Exit, DefaultStack>;

pub(super) enum Exit {
    Done,
    Panicked(Box<dyn Any + Send>),
}

/// A task's slot starts a cache line, with its coroutine handle first: a snapshot's restore
/// writes the handle (48 bytes) into every live task's slot, and a write that straddles two
/// pages costs a page-split store. The slots of a worker thread's runtime came from that
/// thread's malloc arena, where one slot's handle straddled a page: 17 % of the snapshot
/// driver's samples on that store in a two-worker search, against 0.4 % on the main thread
/// (docs/performance.md, "A task's slot on one cache line").
#[repr(C, align(64))]
pub(super) struct TaskSlot {
    /// `None` while the task runs (moved out by the scheduler) and once it has finished.
    pub(super) co: Option<Co>,
    pub(super) op: Op,
    pub(super) token: bool,
    pub(super) local: u64,
    /// Set by the task when it starts; lives on the task's stack.
    pub(super) yielder: *const Yielder<(), ()>,
    /// Snapshots ([`run_snapshots`]): the top of the task's stack, the lowest address its
    /// suspended state can occupy now, the version of its stack's contents (new each time it
    /// runs), and the stack of a finished task (kept: a restore may bring the task back).
    pub(super) top: usize,
    pub(super) low: usize,
    pub(super) version: u64,
    pub(super) retired: Option<DefaultStack>,
}

impl TaskSlot {
    pub(super) fn new(co: Co, top: usize, low: usize, local: u64, version: u64) -> Self {
        TaskSlot {
            op: Op::Start,
            token: false,
            local,
            co: Some(co),
            yielder: ptr::null(),
            top,
            low,
            version,
            retired: None,
        }
    }
}

/// The state of one execution.
pub(crate) struct Rt {
    pub(super) objs: Vec<u64>,
    pub(super) locks: Vec<u8>,
    pub(super) tasks: Vec<TaskSlot>,
    pub(super) finished: u32,
    /// XOR of one term per object (index, value) and per held lock (index, owner): the shared
    /// part of the fingerprint, kept up to date by every write.
    pub(super) shared: u64,
    /// The task whose code runs now (`NO_TASK` in the scheduler and in the chooser).
    pub(super) cur: usize,
    /// The task that ran last, and the operation it ran (the op it was suspended in front
    /// of when it was resumed): a partial-order reduction's step ([`SchedPoint::last_op`]).
    pub(super) last: usize,
    pub(super) last_op: Op,
    pub(super) steps: u64,
    pub(super) epoch: u32,
    /// The choice a yield point made for the scheduler loop to carry out.
    pub(super) next: Option<TaskId>,
    pub(super) teardown: bool,
    pub(super) chooser: Option<NonNull<dyn Chooser>>,
    pub(super) chooser_panic: Option<Box<dyn Any + Send>>,
    pub(super) stacks: Vec<DefaultStack>,
    pub(super) stack_size: usize,
    /// The symmetry group's tables and the per-image local hashes (empty without symmetry).
    pub(super) sym: Sym,
    /// Snapshot mode ([`run_snapshots`]): every yield point returns to the scheduler.
    pub(super) snap: bool,
    /// The last stack version handed out.
    pub(super) vclock: u64,
    /// A seeded defect (tests only): a restore leaves the shared objects as they are.
    pub(super) restore_keeps_objects: bool,
    /// A seeded defect (tests only): a restore leaves each task's local hash under each image
    /// of the symmetry group as it is.
    pub(super) restore_keeps_image_locals: bool,
    /// The memory model: the kernel's (`lk` holds it) or sequential consistency.
    pub(super) lkmm: bool,
    pub(super) lk: Lk,
    /// The live-locals census's shadow hashes (tests only; `shadow.rs`).
    pub(super) shadow: Shadow,
}

/// The shadow hashes of one execution (their methods are in `shadow.rs`).
#[derive(Default)]
pub(crate) struct Shadow {
    /// The census runs (set by [`StackPool::set_live_census`]).
    pub(super) on: bool,
    /// Each task's shadow hash.
    pub(super) locals: Vec<u64>,
    /// The contexts handed out: (task, the local hash `local()` returned, the shadow then).
    pub(super) ctx: Vec<(TaskId, u64, u64)>,
}

impl Shadow {
    pub(super) fn clear_execution(&mut self) {
        self.locals.clear();
        self.ctx.clear();
    }
}

thread_local! {
    pub(super) static RT: Cell<*mut Rt> = const { Cell::new(ptr::null_mut()) };
}

/// Numbers executions (process-wide, so that an object smuggled to another thread's
/// execution is refused too).
pub(super) static EPOCH: AtomicU32 = AtomicU32::new(0);

#[inline(always)]
pub(super) fn rt_ptr() -> *mut Rt {
    RT.with(|c| c.get())
}

/// Whether the calling thread is inside [`run`] (in a task or in the chooser).
///
/// [`run`]: crate::platform::stateful::run
pub fn in_execution() -> bool {
    !rt_ptr().is_null()
}

/// The task whose code is running, if called from a task of a running execution.
pub fn current_task() -> Option<TaskId> {
    let rt = rt_ptr();
    // SAFETY: a non-null pointer is the live runtime of this thread's execution.
    (!rt.is_null()).then(|| unsafe { (*rt).cur }).filter(|&t| t != NO_TASK)
}

/// Bytes below a suspended task's last frame that its suspension may have used (the context
/// switch's saved registers): a snapshot copies them too. Measured on x86-64 (the saved stack
/// pointer in corosensei's handle, against the address of `yield_point`'s marker, on every
/// shipped stateful scenario): 40 bytes. The margin is over twelve times that; it was 2,048
/// bytes, two thirds of every stack copy (docs/performance.md, "Snapshots").
pub(super) const SUSPEND_MARGIN: usize = 512;
/// What the chooser sees at a scheduling point: every task's pending op, which are enabled,
/// the shared objects, and the state fingerprint.
pub struct SchedPoint<'a> {
    pub(super) rt: &'a Rt,
    pub(super) enabled: u32,
}

impl Rt {
    /// Task `t` runs now: it is the current task and the last to run, and the operation it
    /// was suspended in front of is the step's ([`SchedPoint::last_op`]). Every way the
    /// runtime resumes a task (or lets the task go on from its yield point) goes through here.
    #[inline(always)]
    pub(super) fn runs(&mut self, t: TaskId) {
        self.cur = t;
        self.last = t;
        self.last_op = self.tasks[t].op;
    }

    pub(super) fn new(stack_size: usize) -> Self {
        Rt {
            objs: Vec::with_capacity(64),
            locks: Vec::with_capacity(16),
            tasks: Vec::with_capacity(MAX_TASKS),
            finished: 0,
            shared: 0,
            cur: NO_TASK,
            last: 0,
            last_op: Op::Start,
            steps: 0,
            epoch: 0,
            next: None,
            teardown: false,
            chooser: None,
            chooser_panic: None,
            stacks: Vec::new(),
            stack_size,
            sym: Sym::default(),
            snap: false,
            vclock: 0,
            restore_keeps_objects: false,
            restore_keeps_image_locals: false,
            lkmm: false,
            lk: Lk::default(),
            shadow: Shadow::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coroutine handle of a task's slot never straddles a cache line, so never a page.
    #[test]
    fn a_task_slots_coroutine_handle_sits_in_one_cache_line() {
        assert_eq!(std::mem::align_of::<TaskSlot>(), 64);
        assert_eq!(std::mem::offset_of!(TaskSlot, co), 0);
        assert!(std::mem::size_of::<Option<Co>>() <= 64, "{} bytes", std::mem::size_of::<Option<Co>>());
    }
}
