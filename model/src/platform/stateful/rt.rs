//! The runtime of the stateful platform: tasks as coroutines on pooled stacks, the object,
//! lock and park-token tables, scheduling points, local hashes and the state fingerprint.
//! The design is described in the parent module's docs.
//!
//! # Memory discipline
//!
//! The runtime state ([`Rt`]) is a heap block owned by the [`StackPool`] and reached, for the
//! duration of [`run`], through a thread-local raw pointer. The scheduler loop and the task
//! code (running on coroutine stacks, but on the same OS thread) both access it through that
//! pointer, only ever in short borrows that never span a context switch or a call into the
//! chooser that could re-enter the runtime. A task's coroutine is moved out of its slot while
//! it runs, so a task that spawns (pushes a slot) never aliases the coroutine being resumed.

use core::any::Any;
use core::cell::Cell;
use core::ptr::{self, NonNull};
use core::sync::atomic::AtomicU32;
use core::sync::atomic::Ordering::Relaxed;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use std::rc::Rc;

use super::arena;
use crate::kernel::sched::Summary;
use crate::platform::SymTag;

/// A task's index: the execution body is task 0, spawned tasks follow in creation order.
pub type TaskId = usize;
/// A shared object's index in the execution's object table (creation order).
pub type ObjId = u32;
/// A spinlock's index in the execution's lock table (creation order).
pub type LockId = u32;

/// Tasks are tracked in `u32` masks.
pub const MAX_TASKS: usize = 32;

/// What a task will do when it is next resumed: the operation it suspended in front of.
///
/// Every read-modify-write (swap, `fetch_*`, and `compare_exchange` whether or not it will
/// succeed: that is only known after) is an [`Op::Rmw`], to be treated as a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Not started yet.
    Start,
    Load(ObjId),
    Store(ObjId),
    Rmw(ObjId),
    /// Enabled iff the lock is free.
    Lock(LockId),
    /// Always enabled; returns `false` if the lock is held.
    TryLock(LockId),
    /// Never blocks (the task must hold the lock).
    Unlock(LockId),
    /// Enabled iff the task's unpark token is set (there are no spurious wake-ups).
    Park,
    /// Sets the token of the task.
    Unpark(TaskId),
    /// Enabled iff the task has finished.
    Join(TaskId),
    /// Enabled iff every task of the mask has finished (only under symmetry: see
    /// [`join_all`]).
    JoinAll(u32),
    /// `yield_now`: always enabled, does nothing.
    Yield,
}

impl Op {
    /// The shared object the op accesses, if any.
    pub fn object(self) -> Option<ObjId> {
        match self {
            Op::Load(o) | Op::Store(o) | Op::Rmw(o) => Some(o),
            _ => None,
        }
    }
    /// The lock the op acts on, if any.
    pub fn lock(self) -> Option<LockId> {
        match self {
            Op::Lock(l) | Op::TryLock(l) | Op::Unlock(l) => Some(l),
            _ => None,
        }
    }
    /// Whether the op may change a shared object (stores and every read-modify-write).
    pub fn is_write(self) -> bool {
        matches!(self, Op::Store(_) | Op::Rmw(_))
    }
    /// The op as one word: kind in bits 0..4, operand from bit 8 (bit 4 is the fingerprint's
    /// token bit).
    #[inline(always)]
    fn code(self) -> u64 {
        match self {
            Op::Start => 1,
            Op::Load(o) => 2 | (o as u64) << 8,
            Op::Store(o) => 3 | (o as u64) << 8,
            Op::Rmw(o) => 4 | (o as u64) << 8,
            Op::Lock(l) => 5 | (l as u64) << 8,
            Op::TryLock(l) => 6 | (l as u64) << 8,
            Op::Unlock(l) => 7 | (l as u64) << 8,
            Op::Park => 8,
            Op::Unpark(t) => 9 | (t as u64) << 8,
            Op::Join(t) => 10 | (t as u64) << 8,
            Op::Yield => 11,
            Op::JoinAll(m) => 12 | (m as u64) << 8,
        }
    }
}

/// The status word of a finished task in the fingerprint (no op has kind 15).
const FINISHED_CODE: u64 = 15;

/// Makes every scheduling decision of an execution.
pub trait Chooser {
    /// Pick one of `point.enabled()`. Called at every scheduling point where at least one task
    /// is enabled, including points where only one is. Returning a task that is not enabled
    /// makes [`run`] panic. The chooser must not call into the runtime (atomics, spawn …).
    fn choose(&mut self, point: &SchedPoint<'_>) -> TaskId;
}

impl<F: FnMut(&SchedPoint<'_>) -> TaskId> Chooser for F {
    fn choose(&mut self, point: &SchedPoint<'_>) -> TaskId {
        self(point)
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    AllFinished,
    /// No task is enabled and `blocked` (a mask) have not finished.
    Deadlock {
        blocked: u32,
    },
    /// `task` panicked with `message`; the other tasks were unwound.
    Panicked {
        task: TaskId,
        message: String,
    },
}

/// Stacks (and the runtime's tables) kept from one execution to the next. One per thread
/// that calls [`run`]; its stacks are mapped once and reused, never unmapped per execution.
pub struct StackPool {
    rt: Option<NonNull<Rt>>,
    stack_size: usize,
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

type Co = Coroutine<(), (), Exit, DefaultStack>;

enum Exit {
    Done,
    Panicked(Box<dyn Any + Send>),
}

const NO_TASK: usize = usize::MAX;
const NO_OWNER: u8 = u8::MAX;

struct TaskSlot {
    op: Op,
    token: bool,
    local: u64,
    /// `None` while the task runs (moved out by the scheduler) and once it has finished.
    co: Option<Co>,
    /// Set by the task when it starts; lives on the task's stack.
    yielder: *const Yielder<(), ()>,
    /// Snapshots ([`run_snapshots`]): the top of the task's stack, the lowest address its
    /// suspended state can occupy now, the version of its stack's contents (new each time it
    /// runs), and the stack of a finished task (kept: a restore may bring the task back).
    top: usize,
    low: usize,
    version: u64,
    retired: Option<DefaultStack>,
}

impl TaskSlot {
    fn new(co: Co, top: usize, low: usize, local: u64, version: u64) -> Self {
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
    objs: Vec<u64>,
    locks: Vec<u8>,
    tasks: Vec<TaskSlot>,
    finished: u32,
    /// XOR of one term per object (index, value) and per held lock (index, owner): the shared
    /// part of the fingerprint, kept up to date by every write.
    shared: u64,
    /// The task whose code runs now (`NO_TASK` in the scheduler and in the chooser).
    cur: usize,
    /// The task that ran last.
    last: usize,
    steps: u64,
    epoch: u32,
    /// The choice a yield point made for the scheduler loop to carry out.
    next: Option<TaskId>,
    teardown: bool,
    chooser: Option<NonNull<dyn Chooser>>,
    chooser_panic: Option<Box<dyn Any + Send>>,
    stacks: Vec<DefaultStack>,
    stack_size: usize,
    /// The symmetry group's tables and the per-image local hashes (empty without symmetry).
    sym: Sym,
    /// Snapshot mode ([`run_snapshots`]): every yield point returns to the scheduler.
    snap: bool,
    /// The last stack version handed out.
    vclock: u64,
    /// A seeded defect (tests only): a restore leaves the shared objects as they are.
    restore_keeps_objects: bool,
}

thread_local! {
    static RT: Cell<*mut Rt> = const { Cell::new(ptr::null_mut()) };
}

/// Numbers executions (process-wide, so that an object smuggled to another thread's
/// execution is refused too).
static EPOCH: AtomicU32 = AtomicU32::new(0);

#[inline(always)]
fn rt_ptr() -> *mut Rt {
    RT.with(|c| c.get())
}

/// Whether the calling thread is inside [`run`] (in a task or in the chooser).
pub fn in_execution() -> bool {
    !rt_ptr().is_null()
}

/// The task whose code is running, if called from a task of a running execution.
pub fn current_task() -> Option<TaskId> {
    let rt = rt_ptr();
    // SAFETY: a non-null pointer is the live runtime of this thread's execution.
    (!rt.is_null()).then(|| unsafe { (*rt).cur }).filter(|&t| t != NO_TASK)
}

// ---- hashing --------------------------------------------------------------------------------

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;
const TAG_INIT: u64 = 0x1d8e_4e27_c47d_124f;
const TAG_RESET: u64 = 0x9e37_79b9_7f4a_7c15;

/// The folded 64x64->128 multiply (wyhash's `mum`).
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let r = (a as u128) * (b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Mixes two words into one (wyhash's `wymix`): one multiply.
#[inline(always)]
fn mix(a: u64, b: u64) -> u64 {
    mum(a ^ P0, b ^ P1)
}

/// The murmur3 finaliser: a bijective avalanche.
#[inline(always)]
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[inline(always)]
fn obj_term(i: usize, v: u64) -> u64 {
    mix(v, (i as u64 + 1).wrapping_mul(P2))
}

#[inline(always)]
fn lock_term(l: usize, owner: usize) -> u64 {
    mix(owner as u64, (l as u64 + 1).wrapping_mul(P3))
}

// ---- the scheduling-point view ------------------------------------------------------------------

/// What the chooser sees at a scheduling point: every task's pending op, which are enabled,
/// the shared objects, and the state fingerprint.
pub struct SchedPoint<'a> {
    rt: &'a Rt,
    enabled: u32,
}

impl SchedPoint<'_> {
    /// The enabled tasks (bit `t` for task `t`); never 0.
    #[inline]
    pub fn enabled(&self) -> u32 {
        self.enabled
    }
    /// The finished tasks.
    #[inline]
    pub fn finished(&self) -> u32 {
        self.rt.finished
    }
    /// Tasks created so far (ids `0..num_tasks()`).
    #[inline]
    pub fn num_tasks(&self) -> usize {
        self.rt.tasks.len()
    }
    /// Task `t`'s pending op, `None` once it has finished.
    #[inline]
    pub fn pending(&self, t: TaskId) -> Option<Op> {
        (self.rt.finished & (1 << t) == 0).then(|| self.rt.tasks[t].op)
    }
    /// The task that ran last (0 at the first point).
    #[inline]
    pub fn current(&self) -> TaskId {
        self.rt.last
    }
    /// Scheduling decisions made so far in this execution.
    #[inline]
    pub fn steps(&self) -> u64 {
        self.rt.steps
    }
    /// Objects created so far (ids `0..num_objects()`).
    pub fn num_objects(&self) -> usize {
        self.rt.objs.len()
    }
    /// An object's value, as the bit pattern of its type widened to `u64`.
    pub fn value(&self, o: ObjId) -> u64 {
        self.rt.objs[o as usize]
    }
    /// Locks created so far.
    pub fn num_locks(&self) -> usize {
        self.rt.locks.len()
    }
    pub fn lock_owner(&self, l: LockId) -> Option<TaskId> {
        let o = self.rt.locks[l as usize];
        (o != NO_OWNER).then_some(o as usize)
    }
    /// Task `t`'s unpark token.
    pub fn token(&self, t: TaskId) -> bool {
        self.rt.tasks[t].token
    }
    /// Task `t`'s local hash (see the module docs).
    pub fn local_hash(&self, t: TaskId) -> u64 {
        self.rt.tasks[t].local
    }
    /// A 64-bit hash of the runtime state: every object value, every lock owner, every task's
    /// token, status (finished, or its pending op with its operand) and local hash. Costs
    /// one multiply per task plus a finaliser: the object and lock part is maintained
    /// incrementally by every write.
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        self.rt.fingerprint_with(self.rt.shared)
    }
    /// The fingerprint keeping the local hash and token of finished tasks too: the strict
    /// reference that [`SchedPoint::fingerprint`]'s dropping of them is tested against.
    #[inline]
    pub fn fingerprint_keeping_finished(&self) -> u64 {
        self.rt.fingerprint_full(self.rt.shared, true)
    }
    /// The fingerprint with its object and lock part recomputed from scratch (for tests of
    /// the incremental part).
    #[doc(hidden)]
    pub fn fingerprint_recomputed(&self) -> u64 {
        let rt = self.rt;
        let mut shared = 0;
        for (i, &v) in rt.objs.iter().enumerate() {
            shared ^= obj_term(i, v);
        }
        for (l, &o) in rt.locks.iter().enumerate() {
            if o != NO_OWNER {
                shared ^= lock_term(l, o as usize);
            }
        }
        rt.fingerprint_with(shared)
    }
}

impl Rt {
    fn new(stack_size: usize) -> Self {
        Rt {
            objs: Vec::with_capacity(64),
            locks: Vec::with_capacity(16),
            tasks: Vec::with_capacity(MAX_TASKS),
            finished: 0,
            shared: 0,
            cur: NO_TASK,
            last: 0,
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
        }
    }

    #[inline]
    fn fingerprint_with(&self, shared: u64) -> u64 {
        self.fingerprint_full(shared, false)
    }

    #[inline]
    fn fingerprint_full(&self, shared: u64, keep_finished: bool) -> u64 {
        let mut h = shared ^ (self.tasks.len() as u64).wrapping_mul(P2);
        for (t, s) in self.tasks.iter().enumerate() {
            // A finished task has no future: its history and token cannot matter (see the
            // module docs for why no other task can depend on them either).
            let (status, local) = if self.finished & (1 << t) != 0 {
                if keep_finished {
                    (FINISHED_CODE ^ (s.token as u64) << 4, s.local)
                } else {
                    (FINISHED_CODE, 0)
                }
            } else {
                (s.op.code() ^ (s.token as u64) << 4, s.local)
            };
            h = mix(h ^ status, local);
        }
        fmix64(h)
    }

    #[inline]
    fn enabled_mask(&self) -> u32 {
        let mut m = 0;
        for (t, s) in self.tasks.iter().enumerate() {
            let ok = match s.op {
                Op::Lock(l) => self.locks[l as usize] == NO_OWNER,
                Op::Park => s.token,
                Op::Join(u) => self.finished & (1 << u) != 0,
                Op::JoinAll(m) => self.finished & m == m,
                _ => true,
            };
            m |= (ok as u32) << t;
        }
        m & !self.finished
    }

    #[inline(always)]
    fn set_obj(&mut self, i: usize, v: u64) {
        let old = self.objs[i];
        if old != v {
            self.shared ^= obj_term(i, old) ^ obj_term(i, v);
            self.objs[i] = v;
        }
    }
}

/// Asks the chooser at a scheduling point. `None`: no task is enabled.
///
/// # Safety
/// `rt` is the live runtime; no borrow of it is held by the caller.
unsafe fn decide(rt: *mut Rt) -> Option<TaskId> {
    let enabled = (*rt).enabled_mask();
    if enabled == 0 {
        return None;
    }
    let t = {
        let r = &*rt;
        let mut ch = r.chooser.expect("stateful runtime: no chooser");
        ch.as_mut().choose(&SchedPoint { rt: r, enabled })
    };
    if t >= MAX_TASKS || enabled & (1 << t) == 0 {
        bad_choice(t, enabled);
    }
    (*rt).steps += 1;
    Some(t)
}

#[cold]
#[inline(never)]
fn bad_choice(t: TaskId, enabled: u32) -> ! {
    panic!("stateful runtime: the chooser picked task {t}, which is not enabled (enabled mask {enabled:#b})")
}

#[cold]
#[inline(never)]
fn not_in_task() -> ! {
    if in_execution() {
        panic!("stateful runtime: called from the chooser or the scheduler, not from a task")
    }
    panic!("stateful runtime: used outside a running execution (create and use Stateful objects only inside stateful::run, on its thread)")
}

#[cold]
#[inline(never)]
fn stale_object() -> ! {
    panic!("stateful runtime: an object or task handle of another execution was used (they live for one execution)")
}

/// The live runtime and the current task; panics outside a task.
#[inline(always)]
fn enter() -> (*mut Rt, TaskId) {
    let rt = rt_ptr();
    if rt.is_null() {
        not_in_task();
    }
    // SAFETY: non-null means live (see the module docs).
    let t = unsafe { (*rt).cur };
    if t == NO_TASK {
        not_in_task();
    }
    (rt, t)
}

#[inline(always)]
fn enter_obj(epoch: u32) -> (*mut Rt, TaskId) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    if unsafe { (*rt).epoch } != epoch {
        stale_object();
    }
    (rt, t)
}

/// A yield point: records `op` as task `t`'s pending op, then lets the chooser decide. If it
/// picks `t`, returns at once (no context switch); otherwise suspends the task until the
/// scheduler resumes it, which it does only when `op` is enabled. Returns `false` (without a
/// scheduling point) while the runtime tears an execution down or the task is unwinding
/// from a panic: the op is then performed without scheduling and must not block.
///
/// # Safety
/// `rt` is the live runtime and `t` the running task; no borrow of `rt` is held.
#[inline]
unsafe fn yield_point(rt: *mut Rt, t: TaskId, op: Op) -> bool {
    {
        let s = &mut (&mut *rt).tasks[t];
        s.op = op;
        s.local = mix(s.local, op.code());
        if !(*rt).sym.images.is_empty() {
            sym_fold_op(rt, t, op);
        }
    }
    if (*rt).teardown || std::thread::panicking() {
        return false;
    }
    if (*rt).snap {
        // Every scheduling point is the scheduler's, with every task suspended, so that the
        // chooser may snapshot or restore the execution there. The suspended state lies above
        // this frame, but for the few words the switch pushes below it.
        let mark = 0u8;
        let sp = core::hint::black_box(&mark) as *const u8 as usize;
        (&mut *rt).tasks[t].low = sp.saturating_sub(SUSPEND_MARGIN);
        (*rt).cur = NO_TASK;
        (*rt).next = None;
        let y = (&mut *rt).tasks[t].yielder;
        (*y).suspend(());
        return true;
    }
    if (*rt).sym.solo == t && (*rt).enabled_mask() & (1 << t) != 0 {
        // Under symmetry, the task that joined all the others is alone: nothing can
        // interleave with what it does, and it is not a scheduling point (see `join_all`).
        return true;
    }
    (*rt).cur = NO_TASK;
    match catch_unwind(AssertUnwindSafe(|| decide(rt))) {
        Ok(Some(c)) if c == t => {
            (*rt).cur = t;
            (*rt).last = t;
            return true;
        }
        Ok(c) => (*rt).next = c,
        Err(p) => {
            (*rt).chooser_panic = Some(p);
            (*rt).next = None;
        }
    }
    let y = (&mut *rt).tasks[t].yielder;
    (*y).suspend(());
    // The scheduler has set `cur` and `last`.
    true
}

/// Folds `v`, a value of kind `kind`, into task `t`'s local hash (and, with symmetry, its
/// image under each permutation into that image's local hash).
#[inline(always)]
unsafe fn fold(rt: *mut Rt, t: TaskId, v: u64, kind: Kind) {
    let s = &mut (&mut *rt).tasks[t];
    s.local = mix(s.local, v);
    if !(*rt).sym.images.is_empty() {
        sym_fold(rt, t, v, kind);
    }
}

/// The kind of object `o`'s values.
#[inline(always)]
unsafe fn kind_of(rt: *mut Rt, o: ObjId) -> Kind {
    let r = &*rt;
    if r.sym.images.is_empty() {
        Kind::Plain
    } else {
        r.sym.meta[o as usize].kind
    }
}

// ---- operations (called by the platform's object types) ----------------------------------------

pub(crate) fn obj_new(v: u64) -> (ObjId, u32) {
    let (rt, _) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrow.
    unsafe {
        let r = &mut *rt;
        let i = r.objs.len();
        r.objs.push(v);
        r.shared ^= obj_term(i, v);
        r.sym.meta.push(ObjMeta { family: r.sym.family, kind: r.sym.kind });
        (i as ObjId, r.epoch)
    }
}

#[inline]
pub(crate) fn obj_load(o: ObjId, epoch: u32) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: live runtime; borrows end before every switch.
    unsafe {
        yield_point(rt, t, Op::Load(o));
        let v = (&mut *rt).objs[o as usize];
        fold(rt, t, v, kind_of(rt, o));
        v
    }
}

#[inline]
pub(crate) fn obj_store(o: ObjId, epoch: u32, v: u64) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Store(o));
        (&mut *rt).set_obj(o as usize, v);
    }
}

/// A read-modify-write: stores `f(old)`, returns `old`.
#[inline]
pub(crate) fn obj_rmw(o: ObjId, epoch: u32, f: impl FnOnce(u64) -> u64) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let old = (&mut *rt).objs[o as usize];
        (&mut *rt).set_obj(o as usize, f(old));
        fold(rt, t, old, kind_of(rt, o));
        old
    }
}

#[inline]
pub(crate) fn obj_cas(o: ObjId, epoch: u32, current: u64, new: u64) -> Result<u64, u64> {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let old = (&mut *rt).objs[o as usize];
        let ok = old == current;
        if ok {
            (&mut *rt).set_obj(o as usize, new);
        }
        fold(rt, t, old, kind_of(rt, o));
        fold(rt, t, ok as u64, Kind::Plain);
        if ok {
            Ok(old)
        } else {
            Err(old)
        }
    }
}

pub(crate) fn lock_new() -> (LockId, u32) {
    let (rt, _) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrow.
    unsafe {
        let r = &mut *rt;
        r.locks.push(NO_OWNER);
        if r.sym.family != Family::Global {
            r.sym.family_locks = true;
        }
        ((r.locks.len() - 1) as LockId, r.epoch)
    }
}

#[inline]
pub(crate) fn lock_lock(l: LockId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        let live = yield_point(rt, t, Op::Lock(l));
        let r = &mut *rt;
        let o = &mut r.locks[l as usize];
        if *o != NO_OWNER {
            // Only when unwinding: the lock was not enabled.
            debug_assert!(!live, "stateful runtime: resumed a blocked lock");
            return;
        }
        *o = t as u8;
        r.shared ^= lock_term(l as usize, t);
    }
}

#[inline]
pub(crate) fn lock_try(l: LockId, epoch: u32) -> bool {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::TryLock(l));
        let r = &mut *rt;
        let free = r.locks[l as usize] == NO_OWNER;
        if free {
            r.locks[l as usize] = t as u8;
            r.shared ^= lock_term(l as usize, t);
        }
        fold(rt, t, free as u64, Kind::Plain);
        free
    }
}

/// `unlock`, calling `released` in the same step, just before the lock is freed.
#[inline]
pub(crate) fn lock_unlock(l: LockId, epoch: u32, released: impl FnOnce()) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        let live = yield_point(rt, t, Op::Unlock(l));
        if (&mut *rt).locks[l as usize] != t as u8 {
            if live {
                panic!("stateful runtime: task {t} unlocked lock {l}, which it does not hold");
            }
            return;
        }
        released();
        let r = &mut *rt;
        r.locks[l as usize] = NO_OWNER;
        r.shared ^= lock_term(l as usize, t);
    }
}

pub(crate) fn park() {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Park);
        (&mut *rt).tasks[t].token = false;
    }
}

pub(crate) fn unpark(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len(), "stateful runtime: unpark of unknown task {u}");
        yield_point(rt, t, Op::Unpark(u));
        (&mut *rt).tasks[u].token = true;
    }
}

pub(crate) fn join(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len() && u != t, "stateful runtime: join of task {u} by task {t}");
        yield_point(rt, t, Op::Join(u));
    }
}

/// Joins every task of `tasks` (never the caller). Without symmetry: one join after another,
/// in the given order. Under symmetry the order would break it (a body that joins task 1
/// before task 2 has no image that joins task 2 first), so the caller waits for all of them
/// at one scheduling point ([`Op::JoinAll`], whose mask the images rename); once every other
/// task has finished, the caller is alone and what it still does (reading the final state)
/// is no scheduling point either, since its order (node 0's objects first) would break the
/// symmetry too.
pub(crate) fn join_all(tasks: &[(TaskId, u32)]) {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        if (*rt).sym.images.is_empty() || (*rt).sym.join_in_order {
            for &(u, epoch) in tasks {
                join(u, epoch);
            }
            return;
        }
        let mut mask = 0u32;
        for &(u, epoch) in tasks {
            if (*rt).epoch != epoch {
                stale_object();
            }
            assert!(u < (&*rt).tasks.len() && u != t, "stateful runtime: join of task {u} by task {t}");
            mask |= 1 << u;
        }
        yield_point(rt, t, Op::JoinAll(mask));
        let r = &mut *rt;
        let all = if r.tasks.len() == 32 { u32::MAX } else { (1u32 << r.tasks.len()) - 1 };
        if r.finished | 1 << t == all {
            r.sym.solo = t;
        }
    }
}

pub(crate) fn yield_now() {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Yield);
    }
}

/// Creates a task (not a scheduling point): it is runnable with pending op [`Op::Start`].
/// Its id is folded into the spawner's local hash.
pub(crate) fn spawn<F: FnOnce() + 'static>(f: F) -> (TaskId, u32) {
    let (rt, t) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrows; the new slot is pushed while the running task's
    // coroutine is out of the table.
    unsafe {
        let id = (&mut *rt).tasks.len();
        assert!(id < MAX_TASKS, "stateful runtime: more than {MAX_TASKS} tasks");
        let slot = new_task(rt, id, f);
        (&mut *rt).tasks.push(slot);
        sym_spawned(rt, id);
        (&mut *rt).sym.solo = NO_TASK;
        // Plain under symmetry too: only the spawner uses the id, to join (docs/model.md,
        // "Symmetry", says why that is sound).
        fold(rt, t, id as u64, Kind::Plain);
        (id, (*rt).epoch)
    }
}

/// The current task's id and the execution's epoch (for `Platform::current`).
pub(crate) fn current() -> (TaskId, u32) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    (t, unsafe { (*rt).epoch })
}

/// Sets the current task's local hash to a mix of a fixed tag and `summary`: a loop head
/// whose state the model summarises forgets the history that led to it.
pub fn reset_local(summary: u64) {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrow.
    unsafe {
        assert!((*rt).sym.images.is_empty(), "stateful runtime: reset_local under symmetry (use reset_local_summary)");
        (&mut *rt).tasks[t].local = mix(TAG_RESET, summary)
    }
}

/// [`reset_local`] with the model's summary in its parts: under symmetry, each image's local
/// hash is reset to the summary rebuilt over that image of the context (the context must be a
/// value [`local`] returned to this task).
pub fn reset_local_summary(summary: Summary) {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrows.
    unsafe {
        (&mut *rt).tasks[t].local = mix(TAG_RESET, summary.hash());
        if !(*rt).sym.images.is_empty() {
            sym_reset(rt, t, summary);
        }
    }
}

/// The current task's local hash: everything it has observed and done so far (or, since its
/// last loop head, the model's summary of that loop's state and what followed it).
pub fn local() -> u64 {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrow.
    unsafe {
        if !(*rt).sym.images.is_empty() {
            sym_save_context(rt, t);
        }
        (&*rt).tasks[t].local
    }
}

/// Folds `v` into the current task's local hash (a value the ghost hands to model code).
pub fn observe(v: u64) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { fold(rt, t, v, Kind::Plain) }
}

/// [`observe`] of a mask of pids (a ghost's answer that names tasks).
pub fn observe_pids(mask: u32) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { fold(rt, t, mask as u64, Kind::PidMask) }
}

/// Runs `f`; the objects it creates carry `tag` (see [`crate::platform::SymTag`]).
pub fn tagged<R>(tag: SymTag, f: impl FnOnce() -> R) -> R {
    let (rt, _) = enter();
    // SAFETY: live runtime, short borrows that end before and after `f`.
    let saved = unsafe {
        let s = &mut (&mut *rt).sym;
        let saved = (s.family, s.kind);
        match tag {
            SymTag::Node(n) => s.family = Family::Node(n),
            SymTag::Pid(p) => s.family = Family::Pid(p),
            SymTag::NodeValue => s.kind = Kind::NodeValue,
            SymTag::PidMask => s.kind = Kind::PidMask,
        }
        saved
    };
    let r = f();
    // SAFETY: as above.
    unsafe { ((&mut *rt).sym.family, (&mut *rt).sym.kind) = saved };
    r
}

/// Bytes below a suspended task's last frame that its suspension may have used (the context
/// switch's saved registers): a snapshot copies them too. Measured on x86-64 (the saved stack
/// pointer in corosensei's handle, against the address of `yield_point`'s marker, on every
/// shipped stateful scenario): 40 bytes. The margin is over twelve times that; it was 2,048
/// bytes, two thirds of every stack copy (docs/performance.md, "Snapshots").
const SUSPEND_MARGIN: usize = 512;

/// A task's slot, with its coroutine on a pooled stack.
///
/// # Safety
/// `rt` is the live runtime.
unsafe fn new_task<F: FnOnce() + 'static>(rt: *mut Rt, id: TaskId, f: F) -> TaskSlot {
    use corosensei::stack::Stack;
    let stack = match (&mut *rt).stacks.pop() {
        Some(s) => s,
        None => DefaultStack::new((&mut *rt).stack_size).expect("stateful runtime: cannot map a task stack"),
    };
    let top = stack.base().get();
    // The coroutine's first frame holds `f` and a few words of its entry.
    let low = top.saturating_sub(core::mem::size_of::<F>() + SUSPEND_MARGIN);
    (*rt).vclock += 1;
    let version = (*rt).vclock;
    let co = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
        let rt = rt_ptr();
        // SAFETY: a task only runs inside its execution; the yielder lives on this stack for
        // as long as the coroutine.
        unsafe { (&mut *rt).tasks[id].yielder = y };
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => Exit::Done,
            // SAFETY: as above.
            Err(p) if unsafe { (*rt_ptr()).teardown } => resume_unwind(p),
            Err(p) => Exit::Panicked(p),
        }
    });
    TaskSlot::new(co, top, low, mix(TAG_INIT, id as u64), version)
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// Ends an execution however [`run`] is left: unwinds the coroutines of unfinished tasks,
/// returns every stack to the pool, clears the tables and the thread-local pointer.
struct Teardown<'p> {
    rt: *mut Rt,
    pool: &'p mut StackPool,
}

impl Drop for Teardown<'_> {
    fn drop(&mut self) {
        let rt = self.rt;
        // SAFETY: `rt` is the live runtime, and no borrow of it is held (we are either after
        // the scheduler loop or unwinding out of it).
        unsafe {
            (*rt).teardown = true;
            for t in 0..(&mut *rt).tasks.len() {
                if let Some(mut co) = (&mut *rt).tasks[t].co.take() {
                    (*rt).cur = t;
                    co.force_unwind();
                    (&mut *rt).stacks.push(co.into_stack());
                }
                if let Some(s) = (&mut *rt).tasks[t].retired.take() {
                    (&mut *rt).stacks.push(s);
                }
            }
            if (*rt).snap {
                // Nothing outside the execution points into its heap any more.
                arena::reset(0);
                (*rt).snap = false;
            }
            let r = &mut *rt;
            r.cur = NO_TASK;
            r.tasks.clear();
            r.objs.clear();
            r.locks.clear();
            r.sym.clear_execution();
            r.chooser = None;
            r.chooser_panic = None;
            r.next = None;
            RT.with(|c| c.set(ptr::null_mut()));
            self.pool.rt = Some(NonNull::new_unchecked(rt));
        }
    }
}

/// Runs one execution: `body` is task 0; every scheduling decision is `chooser`'s.
///
/// Runs until every task has finished, no task is enabled (deadlock), or a task panics. Not
/// reentrant: a `run` inside a task panics. Everything happens on the calling thread.
pub fn run<F: FnOnce() + 'static>(pool: &mut StackPool, body: F, chooser: &mut dyn Chooser) -> RunEnd {
    // SAFETY: the chooser outlives this call, and the runtime drops its pointer before
    // returning (Teardown), so erasing its lifetime is sound.
    let chooser: NonNull<dyn Chooser + '_> = NonNull::from(chooser);
    let chooser: NonNull<dyn Chooser + 'static> = unsafe { core::mem::transmute(chooser) };
    let rt = begin(pool, Some(chooser), false);
    let guard = Teardown { rt, pool };
    // SAFETY: the runtime is live (thread-local set) and unborrowed.
    let end = unsafe {
        let slot = new_task(rt, 0, body);
        (&mut *rt).tasks.push(slot);
        sym_spawned(rt, 0);
        schedule(rt)
    };
    drop(guard);
    end
}

/// Starts an execution on `pool`'s runtime: a new epoch, empty tables, the thread-local
/// pointer set. The caller's Teardown gives the runtime back.
fn begin(pool: &mut StackPool, chooser: Option<NonNull<dyn Chooser>>, snap: bool) -> *mut Rt {
    assert!(!in_execution(), "stateful runtime: nested run (an execution is already running on this thread)");
    let rt: *mut Rt = match pool.rt.take() {
        Some(p) => p.as_ptr(),
        None => Box::into_raw(Box::new(Rt::new(pool.stack_size))),
    };
    let epoch = EPOCH.fetch_add(1, Relaxed).wrapping_add(1);
    // SAFETY: `rt` is exclusively ours until Teardown gives it back to the pool.
    unsafe {
        let r = &mut *rt;
        assert!(!snap || r.sym.images.is_empty(), "stateful runtime: snapshots under symmetry");
        r.finished = 0;
        r.shared = 0;
        r.cur = NO_TASK;
        r.last = 0;
        r.steps = 0;
        r.epoch = epoch;
        r.next = None;
        r.teardown = false;
        r.chooser = chooser;
        r.snap = snap;
    }
    if snap {
        arena::reset(0);
    }
    RT.with(|c| c.set(rt));
    rt
}

/// The scheduler loop.
///
/// # Safety
/// `rt` is the live runtime and unborrowed.
unsafe fn schedule(rt: *mut Rt) -> RunEnd {
    loop {
        let t = match (&mut *rt).next.take() {
            Some(t) => t,
            None => {
                if let Some(p) = (&mut *rt).chooser_panic.take() {
                    resume_unwind(p);
                }
                match decide(rt) {
                    Some(t) => t,
                    None => {
                        let r = &*rt;
                        let all = if r.tasks.len() == 32 { u32::MAX } else { (1u32 << r.tasks.len()) - 1 };
                        return if r.finished == all {
                            RunEnd::AllFinished
                        } else {
                            RunEnd::Deadlock { blocked: all & !r.finished }
                        };
                    }
                }
            }
        };
        (*rt).cur = t;
        (*rt).last = t;
        let mut co = (&mut *rt).tasks[t].co.take().expect("stateful runtime: resumed a finished task");
        let res = co.resume(());
        (*rt).cur = NO_TASK;
        match res {
            CoroutineResult::Yield(()) => (&mut *rt).tasks[t].co = Some(co),
            CoroutineResult::Return(exit) => {
                (&mut *rt).stacks.push(co.into_stack());
                (*rt).finished |= 1 << t;
                if let Exit::Panicked(p) = exit {
                    return RunEnd::Panicked { task: t, message: panic_message(&*p) };
                }
            }
        }
    }
}

// ---- snapshots ----------------------------------------------------------------------------------

/// A copy of one task's suspended stack: the bytes from `low` to the stack's top, as they were
/// at `version`. Snapshots share it while the task has not run since.
struct StackCopy {
    version: u64,
    low: usize,
    bytes: Vec<u8>,
}

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
                    let copy = shared.unwrap_or_else(|| {
                        // SAFETY: the task is suspended, and its stack is mapped from below
                        // `low` to `top`; nothing writes it while we read.
                        let bytes = unsafe { core::slice::from_raw_parts(slot.low as *const u8, slot.top - slot.low) };
                        match old {
                            Some(mut rc) if Rc::strong_count(&rc) == 1 => {
                                let c = Rc::get_mut(&mut rc).expect("held alone (no weak handles)");
                                c.version = slot.version;
                                c.low = slot.low;
                                c.bytes.clear();
                                c.bytes.extend_from_slice(bytes);
                                rc
                            }
                            _ => Rc::new(StackCopy { version: slot.version, low: slot.low, bytes: bytes.to_vec() }),
                        }
                    });
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
/// otherwise). No symmetry.
///
/// Returns how the execution ended when the chooser stopped it (`Deadlock { blocked: 0 }` if
/// it stopped where tasks could still run: see [`RunEnd`]).
pub fn run_snapshots<F: FnOnce() + 'static>(pool: &mut StackPool, body: F, chooser: &mut dyn SnapChooser) -> RunEnd {
    let rt = begin(pool, None, true);
    let guard = Teardown { rt, pool };
    // SAFETY: the runtime is live (thread-local set) and unborrowed.
    let end = unsafe {
        let slot = new_task(rt, 0, body);
        (&mut *rt).tasks.push(slot);
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
        (*rt).cur = t;
        (*rt).last = t;
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
                if let Exit::Panicked(p) = exit {
                    return RunEnd::Panicked { task: t, message: panic_message(&*p) };
                }
            }
        }
    }
}

// ---- symmetry ---------------------------------------------------------------------------------

/// One element of a symmetry group, as the checker gives it ([`StackPool::set_symmetry`]): where
/// it maps each node, each pid and each task of the runtime (ids past a map's end map to
/// themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymImage {
    pub node: Vec<u8>,
    pub pid: Vec<u8>,
    pub task: Vec<u8>,
}

/// Which ids an object belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Family {
    #[default]
    Global,
    Node(u8),
    Pid(u8),
}

/// What an object's values are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    #[default]
    Plain,
    NodeValue,
    PidMask,
}

#[derive(Debug, Clone, Copy)]
struct ObjMeta {
    family: Family,
    kind: Kind,
}

/// An element of the group in the runtime's terms.
struct Image {
    node: [u8; 32],
    pid: [u8; 32],
    task: [u8; MAX_TASKS],
    /// The task whose image is the task at each index.
    task_inv: [u8; MAX_TASKS],
    /// Each object's image (valid for the first `Sym::mapped` objects).
    obj: Vec<u32>,
}

/// The symmetry state of the runtime: the group (kept from one execution to the next) and, for
/// the running execution, the objects' tags, the images' object maps, each task's local hash
/// under each image, and the contexts [`local`] handed out.
pub(crate) struct Sym {
    images: Vec<Image>,
    family: Family,
    kind: Kind,
    meta: Vec<ObjMeta>,
    family_locks: bool,
    mapped: usize,
    /// `locals[t * images.len() + k]`: task `t`'s local hash under image `k`.
    locals: Vec<u64>,
    /// Saved contexts, `2 + images.len()` words each: task, context, its image under each element.
    ctx: Vec<u64>,
    /// A seeded defect (tests only): node objects are left where they are by every image.
    forget_node_objects: bool,
    /// The task that has joined every other, which has finished ([`join_all`]): it runs to
    /// its end with no scheduling point (`NO_TASK`: none).
    solo: usize,
    /// A seeded defect (tests only): [`join_all`] joins one task after another, as without
    /// symmetry.
    join_in_order: bool,
}

impl Default for Sym {
    fn default() -> Self {
        Sym {
            images: Vec::new(),
            family: Family::Global,
            kind: Kind::Plain,
            meta: Vec::new(),
            family_locks: false,
            mapped: 0,
            locals: Vec::new(),
            ctx: Vec::new(),
            forget_node_objects: false,
            solo: NO_TASK,
            join_in_order: false,
        }
    }
}

impl Sym {
    fn clear_execution(&mut self) {
        self.family = Family::Global;
        self.kind = Kind::Plain;
        self.meta.clear();
        self.family_locks = false;
        self.mapped = 0;
        self.locals.clear();
        self.ctx.clear();
        self.solo = NO_TASK;
    }

    /// Builds the images' object maps for every object created so far.
    #[cold]
    fn map_objects(&mut self) {
        assert!(
            !self.family_locks,
            "stateful runtime: symmetry: a lock was created inside a node's or a task's family (locks are not permuted)"
        );
        let n = self.meta.len();
        // The members of each family, in creation order, and each object's rank in its family.
        let mut members: Vec<(Family, Vec<u32>)> = Vec::new();
        let mut rank = vec![0usize; n];
        for (i, m) in self.meta.iter().enumerate() {
            if m.family == Family::Global {
                continue;
            }
            let pos = match members.iter().position(|(f, _)| *f == m.family) {
                Some(p) => p,
                None => {
                    members.push((m.family, Vec::new()));
                    members.len() - 1
                }
            };
            rank[i] = members[pos].1.len();
            members[pos].1.push(i as u32);
        }
        for img in &mut self.images {
            img.obj.clear();
            for (i, m) in self.meta.iter().enumerate() {
                let target = match m.family {
                    Family::Node(_) if self.forget_node_objects => {
                        img.obj.push(i as u32);
                        continue;
                    }
                    Family::Global => {
                        img.obj.push(i as u32);
                        continue;
                    }
                    Family::Node(x) => Family::Node(img.node[x as usize]),
                    Family::Pid(x) => Family::Pid(img.pid[x as usize]),
                };
                let image = members.iter().find(|(f, _)| *f == target).and_then(|(_, v)| v.get(rank[i]).copied());
                match image {
                    Some(o) => img.obj.push(o),
                    None => panic!(
                        "stateful runtime: symmetry: object {i} of {:?} has no image in {target:?} (the families differ)",
                        m.family
                    ),
                }
            }
        }
        self.mapped = n;
    }

    #[inline]
    fn value(img: &Image, kind: Kind, v: u64) -> u64 {
        match kind {
            Kind::Plain => v,
            Kind::NodeValue => {
                let x = v as u32 as i32;
                if (0..32).contains(&x) {
                    img.node[x as usize] as u32 as u64
                } else {
                    v
                }
            }
            Kind::PidMask => {
                let (mut m, mut out) = (v as u32, 0u32);
                while m != 0 {
                    let p = m.trailing_zeros();
                    m &= m - 1;
                    out |= 1 << img.pid[p as usize];
                }
                (v & !0xffff_ffff) | out as u64
            }
        }
    }

    #[inline]
    fn op(img: &Image, op: Op) -> Op {
        match op {
            Op::Load(o) => Op::Load(img.obj[o as usize]),
            Op::Store(o) => Op::Store(img.obj[o as usize]),
            Op::Rmw(o) => Op::Rmw(img.obj[o as usize]),
            Op::Unpark(t) => Op::Unpark(img.task[t] as TaskId),
            Op::Join(t) => Op::Join(img.task[t] as TaskId),
            Op::JoinAll(m) => {
                let (mut m, mut out) = (m, 0u32);
                while m != 0 {
                    let t = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out |= 1 << img.task[t];
                }
                Op::JoinAll(out)
            }
            other => other,
        }
    }
}

impl StackPool {
    /// The symmetry group the next executions canonicalise over: its elements other than the
    /// identity (none: no symmetry, the default).
    pub fn set_symmetry(&mut self, images: &[SymImage]) {
        let rt = self.rt.get_or_insert_with(|| {
            // SAFETY: a fresh allocation, owned by the pool from here on.
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        let ident = |v: &[u8], i: usize| v.get(i).copied().unwrap_or(i as u8);
        let images = images
            .iter()
            .map(|s| {
                let mut img = Image {
                    node: core::array::from_fn(|i| ident(&s.node, i)),
                    pid: core::array::from_fn(|i| ident(&s.pid, i)),
                    task: core::array::from_fn(|i| ident(&s.task, i)),
                    task_inv: [0; MAX_TASKS],
                    obj: Vec::new(),
                };
                for (t, &u) in img.task.iter().enumerate() {
                    img.task_inv[u as usize] = t as u8;
                }
                img
            })
            .collect();
        // SAFETY: the pool owns the block; no execution is running (`run` borrows the pool).
        unsafe { rt.as_mut().sym.images = images };
    }

    /// Seeds a defect in the symmetry reduction, for the test that shows the soundness tests
    /// catch one: every image leaves the nodes' objects (`pgdat[n]`) where they are.
    #[doc(hidden)]
    pub fn seed_symmetry_defect_forget_node_objects(&mut self) {
        self.set_symmetry(&[]);
        // SAFETY: as in `set_symmetry`.
        unsafe { self.rt.expect("set_symmetry allocates the runtime").as_mut().sym.forget_node_objects = true };
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

    /// Seeds a defect in the symmetry reduction, for the test that shows the exact oracle
    /// catches it: under symmetry the body joins the other tasks one after another, in a fixed
    /// order no renaming keeps (what the runtime did before `join_all`).
    #[doc(hidden)]
    pub fn seed_symmetry_defect_join_in_order(&mut self) {
        self.set_symmetry(&[]);
        // SAFETY: as in `set_symmetry`.
        unsafe { self.rt.expect("set_symmetry allocates the runtime").as_mut().sym.join_in_order = true };
    }
}

impl SchedPoint<'_> {
    /// Elements of the symmetry group besides the identity (0: no symmetry).
    pub fn symmetry_images(&self) -> usize {
        self.rt.sym.images.len()
    }
    /// The fingerprint of this state's image under element `k` of the symmetry group (with
    /// [`SchedPoint::fingerprint`]'s rules: finished tasks' histories left out).
    pub fn fingerprint_image(&self, k: usize) -> u64 {
        let r = self.rt;
        let sym = &r.sym;
        let img = &sym.images[k];
        assert!(sym.mapped == r.objs.len(), "stateful runtime: symmetry: objects created after the last yield point");
        let mut shared = 0;
        for (i, &v) in r.objs.iter().enumerate() {
            shared ^= obj_term(img.obj[i] as usize, Sym::value(img, sym.meta[i].kind, v));
        }
        for (l, &o) in r.locks.iter().enumerate() {
            if o != NO_OWNER {
                shared ^= lock_term(l, img.task[o as usize] as usize);
            }
        }
        let g = sym.images.len();
        let n = r.tasks.len();
        let mut h = shared ^ (n as u64).wrapping_mul(P2);
        for pos in 0..n {
            let t = img.task_inv[pos] as usize;
            let s = &r.tasks[t];
            let (status, local) = if r.finished & (1 << t) != 0 {
                (FINISHED_CODE, 0)
            } else {
                (Sym::op(img, s.op).code() ^ (s.token as u64) << 4, sym.locals[t * g + k])
            };
            h = mix(h ^ status, local);
        }
        fmix64(h)
    }
}

#[inline]
unsafe fn sym_ready(rt: *mut Rt) -> &'static mut Sym {
    let r = &mut *rt;
    if r.sym.mapped != r.objs.len() {
        r.sym.map_objects();
    }
    // SAFETY (of the lifetime): the caller's borrow ends before any switch.
    &mut *(&mut r.sym as *mut Sym)
}

#[inline(never)]
unsafe fn sym_fold_op(rt: *mut Rt, t: TaskId, op: Op) {
    let sym = sym_ready(rt);
    let g = sym.images.len();
    for k in 0..g {
        let code = Sym::op(&sym.images[k], op).code();
        let l = &mut sym.locals[t * g + k];
        *l = mix(*l, code);
    }
}

#[inline(never)]
unsafe fn sym_fold(rt: *mut Rt, t: TaskId, v: u64, kind: Kind) {
    let sym = sym_ready(rt);
    let g = sym.images.len();
    for k in 0..g {
        let w = Sym::value(&sym.images[k], kind, v);
        let l = &mut sym.locals[t * g + k];
        *l = mix(*l, w);
    }
}

/// Task `id` was created: its local hash under each image starts as the image task's would.
unsafe fn sym_spawned(rt: *mut Rt, id: TaskId) {
    let sym = &mut (&mut *rt).sym;
    let g = sym.images.len();
    if g == 0 {
        return;
    }
    debug_assert_eq!(sym.locals.len(), id * g);
    for k in 0..g {
        let image = sym.images[k].task[id] as u64;
        sym.locals.push(mix(TAG_INIT, image));
    }
}

unsafe fn sym_save_context(rt: *mut Rt, t: TaskId) {
    let r = &mut *rt;
    let g = r.sym.images.len();
    let local = r.tasks[t].local;
    r.sym.ctx.push(t as u64);
    r.sym.ctx.push(local);
    let (ctx, locals) = (&mut r.sym.ctx, &r.sym.locals);
    ctx.extend_from_slice(&locals[t * g..t * g + g]);
}

unsafe fn sym_reset(rt: *mut Rt, t: TaskId, summary: Summary) {
    let sym = &mut (&mut *rt).sym;
    let g = sym.images.len();
    let w = 2 + g;
    let at = sym.ctx.chunks_exact(w).rposition(|e| e[0] == t as u64 && e[1] == summary.context).unwrap_or_else(|| {
        panic!("stateful runtime: symmetry: a summary's context was not taken by loop_context in this task")
    });
    for k in 0..g {
        let ctx = sym.ctx[at * w + 2 + k];
        sym.locals[t * g + k] = mix(TAG_RESET, summary.hash_with(ctx));
    }
}
