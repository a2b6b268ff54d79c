//! Snapshots: copies of an execution at a scheduling point (tables, stacks, coroutine handles,
//! the execution arena), [`run_snapshots`] and its scheduler loop, and the restore.

use core::ptr::{self, NonNull};
use std::rc::Rc;

use corosensei::{CoroutineResult, Yielder};

use super::group::SymSave;
use super::lkstate::Lk;
use super::point::bad_choice;
use super::run::{begin, finished, new_task, panic_message, Teardown};
use super::state::{Co, Exit, Rt, SchedPoint, StackPool};
use super::symmetry::sym_spawned;
use super::types::{Op, RunEnd, TaskId, MAX_TASKS, NO_TASK};
use crate::platform::stateful::arena;

/// A copy of one task's suspended stack: the bytes from `low` to the stack's top, as they were
/// at `version`. Snapshots share it while the task has not run since.
struct StackCopy {
    version: u64,
    low: usize,
    bytes: Vec<u8>,
}

std::thread_local! {
    /// Stack copies no snapshot holds any more, kept for their room: a snapshot that shares a
    /// task's copy with the one before it lets its own go, and the next that needs a fresh
    /// copy takes it (a `malloc` and a `free` a snapshot were 2.5 % of the safety proof's
    /// time, `perf`).
    static SPARE_COPIES: core::cell::RefCell<Vec<Rc<StackCopy>>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// At most this many spare stack copies are kept.
const SPARE_COPIES_MAX: usize = 64;

/// One task as a snapshot keeps it.
struct TaskSave {
    op: Op,
    token: bool,
    local: u64,
    yielder: *const Yielder<(), ()>,
    top: usize,
    low: usize,
    /// The coroutine's handle, bit for bit (never dropped: the handle in the task's slot owns
    /// the stack); `None`: the task had finished.
    co: Option<core::mem::MaybeUninit<Co>>,
    stack: Option<Rc<StackCopy>>,
}

/// An execution at a scheduling point, every task suspended: the runtime's tables, each live
/// task's stack (from its last frame to its top) and coroutine handle, and the execution
/// arena's heap ([`super::arena`]). [`SchedPoint::snapshot`] takes one, a [`Decision::Restore`]
/// puts it back. It is valid only inside the [`run_snapshots`] that took it, and only while
/// the execution has not gone back past the point where it was taken (the search restores only
/// the states on its path, each of which is an ancestor of the current one).
///
/// [`super::arena`]: crate::platform::stateful::arena
#[derive(Default)]
pub struct Snapshot {
    objs: Vec<u64>,
    locks: Vec<u8>,
    finished: u32,
    shared: u64,
    last: usize,
    steps: u64,
    epoch: u32,
    tasks: Vec<TaskSave>,
    heap: Vec<u8>,
    /// Under `lkmm`: the memory (every store, every view).
    lk: Option<Box<Lk>>,
    /// Under symmetry: what the execution's symmetry state holds ([`SymSave`]).
    sym: SymSave,
}

impl Snapshot {
    /// The bytes this snapshot holds that `prev` (the snapshot it shared stacks with) does not.
    pub fn bytes_beyond(&self, prev: Option<&Snapshot>) -> usize {
        let shared = |i: usize, c: &Rc<StackCopy>| {
            prev.and_then(|p| p.tasks.get(i)).and_then(|t| t.stack.as_ref()).is_some_and(|d| Rc::ptr_eq(c, d))
        };
        let stacks: usize = self
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.stack.as_ref().filter(|c| !shared(i, c)).map(|c| c.bytes.len()))
            .sum();
        core::mem::size_of::<Self>()
            + self.heap.len()
            + self.objs.len() * 8
            + self.locks.len()
            + self.tasks.len() * core::mem::size_of::<TaskSave>()
            + stacks
            + self.lk.as_ref().map_or(0, |l| l.bytes())
            + self.sym.bytes()
    }
}

impl SchedPoint<'_> {
    /// A snapshot of the execution here. Stacks of tasks that have not run since `prev` was
    /// taken are shared with it, not copied.
    pub fn snapshot(&self, prev: Option<&Snapshot>) -> Snapshot {
        let mut s = Snapshot::default();
        self.snapshot_into(prev, &mut s);
        s
    }

    /// [`SchedPoint::snapshot`] into `into`, an earlier snapshot no longer wanted: its vectors
    /// keep their room, and a stack copy it alone held is reused (the search takes one
    /// snapshot a new state, and allocating them was a tenth of its time).
    pub fn snapshot_into(&self, prev: Option<&Snapshot>, into: &mut Snapshot) {
        let r = self.rt;
        assert!(r.snap, "stateful runtime: snapshots are taken only inside run_snapshots");
        into.tasks.truncate(r.tasks.len());
        for (i, slot) in r.tasks.iter().enumerate() {
            let old = into.tasks.get_mut(i).and_then(|t| t.stack.take());
            let (co, stack) = match &slot.co {
                None => (None, None),
                Some(co) => {
                    // SAFETY: a bitwise copy of the handle, kept as `MaybeUninit` and so never
                    // dropped; the slot's handle keeps owning the stack.
                    let bits = core::mem::MaybeUninit::new(unsafe { ptr::read(co) });
                    let shared = prev
                        .and_then(|p| p.tasks.get(i))
                        .and_then(|t| t.stack.as_ref())
                        .filter(|c| c.version == slot.version && c.low == slot.low)
                        .cloned();
                    let copy = match shared {
                        Some(c) => {
                            if let Some(rc) = old.filter(|rc| Rc::strong_count(rc) == 1) {
                                SPARE_COPIES.with_borrow_mut(|v| {
                                    if v.len() < SPARE_COPIES_MAX {
                                        v.push(rc);
                                    }
                                });
                            }
                            c
                        }
                        None => {
                            // SAFETY: the task is suspended, and its stack is mapped from below
                            // `low` to `top`; nothing writes it while we read.
                            let bytes =
                                unsafe { core::slice::from_raw_parts(slot.low as *const u8, slot.top - slot.low) };
                            let reuse = old
                                .filter(|rc| Rc::strong_count(rc) == 1)
                                .or_else(|| SPARE_COPIES.with_borrow_mut(Vec::pop));
                            match reuse {
                                Some(mut rc) => {
                                    let c = Rc::get_mut(&mut rc).expect("held alone (no weak handles)");
                                    c.version = slot.version;
                                    c.low = slot.low;
                                    c.bytes.clear();
                                    c.bytes.extend_from_slice(bytes);
                                    rc
                                }
                                None => {
                                    Rc::new(StackCopy { version: slot.version, low: slot.low, bytes: bytes.to_vec() })
                                }
                            }
                        }
                    };
                    (Some(bits), Some(copy))
                }
            };
            let save = TaskSave {
                op: slot.op,
                token: slot.token,
                local: slot.local,
                yielder: slot.yielder,
                top: slot.top,
                low: slot.low,
                co,
                stack,
            };
            match into.tasks.get_mut(i) {
                Some(t) => *t = save,
                None => into.tasks.push(save),
            }
        }
        let (base, len) = arena::used();
        into.heap.clear();
        if len != 0 {
            // SAFETY: the arena's used bytes (no task runs while we read them).
            into.heap.extend_from_slice(unsafe { core::slice::from_raw_parts(base as *const u8, len) });
        }
        if r.lkmm {
            match &mut into.lk {
                Some(b) => (**b).clone_from(&r.lk),
                None => into.lk = Some(Box::new(r.lk.clone())),
            }
        }
        r.sym.save_into(&mut into.sym);
        into.objs.clone_from(&r.objs);
        into.locks.clone_from(&r.locks);
        into.finished = r.finished;
        into.shared = r.shared;
        into.last = r.last;
        into.steps = r.steps;
        into.epoch = r.epoch;
    }
}

/// What a [`SnapChooser`] does at a scheduling point.
pub enum Decision<'s> {
    /// Run this enabled task's next step.
    Run(TaskId),
    /// Put the execution back as it was when the snapshot was taken, then run this task
    /// (enabled there).
    Restore(&'s Snapshot, TaskId),
    /// End the execution here.
    Stop,
}

/// The chooser of [`run_snapshots`]: it decides every scheduling point (every task suspended,
/// on the scheduler's stack) and, where no task is enabled, how the execution ended.
pub trait SnapChooser {
    fn choose<'s>(&'s mut self, point: &SchedPoint<'_>) -> Decision<'s>;
    fn ended<'s>(&'s mut self, point: &SchedPoint<'_>, end: &RunEnd) -> Decision<'s>;
}

/// Puts the execution back as `s` holds it.
///
/// # Safety
/// `rt` is the live runtime of the execution that took `s`, in the scheduler (every task
/// suspended), and `s` was taken at an ancestor of the current state (every task it knows is
/// a task now, on the same stack).
unsafe fn restore(rt: *mut Rt, s: &Snapshot) {
    let r = &mut *rt;
    assert!(r.epoch == s.epoch && s.tasks.len() <= r.tasks.len(), "stateful runtime: a snapshot of another execution");
    // Tasks spawned since: their stacks go back to the pool, without unwinding (what they own
    // is in the arena, which the restore rolls back, or counted by the chooser).
    while r.tasks.len() > s.tasks.len() {
        let slot = r.tasks.pop().expect("a task");
        if let Some(mut co) = slot.co {
            co.force_reset();
            r.stacks.push(co.into_stack());
        }
        if let Some(st) = slot.retired {
            r.stacks.push(st);
        }
    }
    for (slot, save) in r.tasks.iter_mut().zip(&s.tasks) {
        if let Some(bits) = &save.co {
            // The saved handle takes over the stack from whoever holds it now.
            if let Some(co) = slot.co.take() {
                core::mem::forget(co);
            } else if let Some(st) = slot.retired.take() {
                core::mem::forget(st);
            }
            slot.co = Some(ptr::read(bits.as_ptr()));
            let copy = save.stack.as_ref().expect("a live task's stack copy");
            if slot.version != copy.version {
                ptr::copy_nonoverlapping(copy.bytes.as_ptr(), copy.low as *mut u8, copy.bytes.len());
                slot.version = copy.version;
            }
        }
        slot.op = save.op;
        slot.token = save.token;
        slot.local = save.local;
        slot.yielder = save.yielder;
        slot.top = save.top;
        slot.low = save.low;
    }
    if !r.restore_keeps_objects || r.objs.len() != s.objs.len() {
        r.objs.clone_from(&s.objs);
        r.shared = s.shared;
    }
    r.locks.clone_from(&s.locks);
    let objects = r.objs.len();
    r.sym.restore_from(&s.sym, objects, r.restore_keeps_image_locals);
    if r.lkmm {
        let _off = arena::off();
        r.lk.clone_from(s.lk.as_ref().expect("a snapshot under lkmm holds the memory"));
    }
    r.finished = s.finished;
    r.last = s.last;
    r.steps = s.steps;
    r.next = None;
    r.cur = NO_TASK;
    let (base, _) = arena::used();
    if !s.heap.is_empty() {
        ptr::copy_nonoverlapping(s.heap.as_ptr(), base as *mut u8, s.heap.len());
    }
    arena::reset(s.heap.len());
}

/// [`run`] for a search that snapshots executions instead of replaying them: every scheduling
/// point is the scheduler's (all tasks suspended), where `chooser` may take a snapshot
/// ([`SchedPoint::snapshot`]) or go back to one ([`Decision::Restore`]), and an execution's end
/// is the chooser's to continue from ([`SnapChooser::ended`]). The tasks' code allocates in
/// the execution arena, so the process must use [`super::arena::ArenaAlloc`] (it panics
/// otherwise). Under symmetry a snapshot holds the per-image local hashes too.
///
/// Returns how the execution ended when the chooser stopped it (`Deadlock { blocked: 0 }` if
/// it stopped where tasks could still run: see [`RunEnd`]).
///
/// [`run`]: crate::platform::stateful::run
/// [`super::arena::ArenaAlloc`]: crate::platform::stateful::arena::ArenaAlloc
pub fn run_snapshots<F: FnOnce() + 'static>(pool: &mut StackPool, body: F, chooser: &mut dyn SnapChooser) -> RunEnd {
    let rt = begin(pool, None, true);
    let guard = Teardown { rt, pool };
    // SAFETY: the runtime is live (thread-local set) and unborrowed.
    let end = unsafe {
        let slot = new_task(rt, 0, body);
        (&mut *rt).tasks.push(slot);
        sym_spawned(rt, 0);
        schedule_snapshots(rt, chooser)
    };
    drop(guard);
    end
}

/// How the execution stands where no task is enabled.
fn end_here(r: &Rt) -> RunEnd {
    let all = if r.tasks.len() == 32 { u32::MAX } else { (1u32 << r.tasks.len()) - 1 };
    if r.finished == all {
        RunEnd::AllFinished
    } else {
        RunEnd::Deadlock { blocked: all & !r.finished }
    }
}

/// The scheduler loop of [`run_snapshots`].
///
/// # Safety
/// `rt` is the live runtime and unborrowed.
unsafe fn schedule_snapshots(rt: *mut Rt, chooser: &mut dyn SnapChooser) -> RunEnd {
    loop {
        let enabled = (*rt).enabled_mask();
        let (t, restored) = {
            let p = SchedPoint { rt: &*rt, enabled };
            let end = (enabled == 0).then(|| end_here(&*rt));
            let d = match &end {
                Some(e) => chooser.ended(&p, e),
                None => chooser.choose(&p),
            };
            match d {
                Decision::Stop => return end.unwrap_or(RunEnd::Deadlock { blocked: 0 }),
                Decision::Run(t) => (t, false),
                Decision::Restore(s, t) => {
                    restore(rt, s);
                    (t, true)
                }
            }
        };
        let enabled = if restored { (*rt).enabled_mask() } else { enabled };
        if t >= MAX_TASKS || enabled & (1 << t) == 0 {
            bad_choice(t, enabled);
        }
        (*rt).steps += 1;
        (*rt).lk.stale = false;
        // At a choice point the choice is an alternative for the task in the middle of its
        // operation, which goes on with it.
        let t = match (*rt).lk.choosing.take() {
            Some((task, _)) => {
                (*rt).lk.alt = t as u32;
                task
            }
            None => t,
        };
        (&mut *rt).runs(t);
        (*rt).vclock += 1;
        (&mut *rt).tasks[t].version = (*rt).vclock;
        let mut co = (&mut *rt).tasks[t].co.take().expect("stateful runtime: resumed a finished task");
        let res = {
            let _heap = arena::ArenaOn::new();
            co.resume(())
        };
        (*rt).cur = NO_TASK;
        match res {
            CoroutineResult::Yield(()) => (&mut *rt).tasks[t].co = Some(co),
            CoroutineResult::Return(exit) => {
                (&mut *rt).tasks[t].retired = Some(co.into_stack());
                (*rt).finished |= 1 << t;
                finished(rt, t);
                if let Exit::Panicked(p) = exit {
                    return RunEnd::Panicked { task: t, message: panic_message(&*p) };
                }
            }
        }
    }
}

impl StackPool {
    /// Seeds a defect in snapshots, for the test that shows the soundness tests catch one: a
    /// restore leaves the shared objects' values as they are.
    #[doc(hidden)]
    pub fn seed_snapshot_defect_keep_objects(&mut self) {
        let rt = *self.rt.get_or_insert_with(|| {
            // SAFETY: as in `set_symmetry`.
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        // SAFETY: the pool owns the block between runs.
        unsafe { (*rt.as_ptr()).restore_keeps_objects = true };
    }

    /// Seeds a defect in snapshots under symmetry, for the test that shows the soundness tests
    /// catch one: a restore leaves the per-image local hashes as they are.
    #[doc(hidden)]
    pub fn seed_snapshot_defect_keep_image_locals(&mut self) {
        let rt = *self.rt.get_or_insert_with(|| {
            // SAFETY: as in `set_symmetry`.
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        // SAFETY: the pool owns the block between runs.
        unsafe { (*rt.as_ptr()).restore_keeps_image_locals = true };
    }
}
