//! The scheduling-point view: what the chooser sees ([`SchedPoint`]'s methods), the
//! fingerprint and the enabled set, and the yield point every operation goes through (entering
//! the runtime from a task, asking the chooser, suspending), with the folding of observed
//! values into the local hashes.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::group::Kind;
use super::hash::{fmix64, lock_term, mix, obj_term, P2};
use super::shadow::shadow_fold;
use super::state::{in_execution, rt_ptr, Rt, SchedPoint, SUSPEND_MARGIN};
use super::symmetry::{sym_fold, sym_fold_op};
use super::types::{LockId, ObjId, Op, TaskId, FINISHED_CODE, MAX_TASKS, NO_OWNER, NO_TASK};

impl SchedPoint<'_> {
    /// What the chooser may pick (never 0): the enabled tasks (bit `t` for task `t`), or at a
    /// choice point ([`Self::choosing`]) the alternatives (bit `a` for alternative `a`).
    #[inline]
    pub fn enabled(&self) -> u32 {
        self.enabled
    }
    /// Under `memory = "lkmm"`, at a choice point: the task in the middle of a memory operation
    /// whose alternative the next choice picks (see `memory.rs`). `None` everywhere else.
    #[inline]
    pub fn choosing(&self) -> Option<TaskId> {
        self.rt.lk.choosing.map(|(t, _)| t)
    }
    /// The tasks that can move here, choice point or not (at a choice point, the task choosing
    /// and every task enabled besides it): what weak fairness asks of a cycle.
    #[inline]
    pub fn runnable(&self) -> u32 {
        if self.rt.lk.choosing.is_some() {
            self.rt.tasks_enabled()
        } else {
            self.enabled
        }
    }
    /// Under `memory = "lkmm"`: whether the transition that led here read a store that a later
    /// store had superseded (a stale read).
    #[inline]
    pub fn stale(&self) -> bool {
        self.rt.lk.stale
    }
    /// Under `memory = "lkmm"`: stores the memory holds over every location (for the figures).
    pub fn messages(&self) -> usize {
        if self.rt.lkmm {
            self.rt.lk.mem.messages()
        } else {
            self.rt.objs.len() + self.rt.locks.len()
        }
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
    /// The operation the task that ran last ran: its pending op ([`SchedPoint::pending`]) at
    /// the scheduling point before this one (`Op::Start` at the first point). Kept by the
    /// runtime at each step, so that a search need not copy every task's pending op at every
    /// state to know, at the next, what the step between them did.
    #[inline]
    pub fn last_op(&self) -> Op {
        self.rt.last_op
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
    #[inline]
    pub(super) fn fingerprint_with(&self, shared: u64) -> u64 {
        self.fingerprint_full(shared, false)
    }

    #[inline]
    pub(super) fn fingerprint_full(&self, shared: u64, keep_finished: bool) -> u64 {
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
        if self.lkmm {
            h = mix(h, self.lk.mem.hash());
        }
        fmix64(h)
    }

    /// What the chooser may pick: the enabled tasks, or at a choice point its alternatives.
    #[inline]
    pub(super) fn enabled_mask(&self) -> u32 {
        match self.lk.choosing {
            Some((_, k)) if k >= 32 => u32::MAX,
            Some((_, k)) => (1u32 << k) - 1,
            None => self.tasks_enabled(),
        }
    }

    /// The tasks that can move (a task at a choice point counts as one).
    #[inline]
    pub(super) fn tasks_enabled(&self) -> u32 {
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
    pub(super) fn set_obj(&mut self, i: usize, v: u64) {
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
pub(super) unsafe fn decide(rt: *mut Rt) -> Option<TaskId> {
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
    (*rt).lk.stale = false;
    Some(t)
}

#[cold]
#[inline(never)]
pub(super) fn bad_choice(t: TaskId, enabled: u32) -> ! {
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
pub(super) fn stale_object() -> ! {
    panic!("stateful runtime: an object or task handle of another execution was used (they live for one execution)")
}

/// The live runtime and the current task; panics outside a task.
#[inline(always)]
pub(super) fn enter() -> (*mut Rt, TaskId) {
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
pub(super) fn enter_obj(epoch: u32) -> (*mut Rt, TaskId) {
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
pub(super) unsafe fn yield_point(rt: *mut Rt, t: TaskId, op: Op) -> bool {
    {
        let s = &mut (&mut *rt).tasks[t];
        s.op = op;
        s.local = mix(s.local, op.code());
        if !(*rt).sym.images.is_empty() {
            sym_fold_op(rt, t, op);
        }
        shadow_fold(rt, t, op.code());
    }
    if (*rt).teardown || std::thread::panicking() {
        return false;
    }
    if (*rt).sym.solo == t && (*rt).enabled_mask() & (1 << t) != 0 {
        // Under symmetry, the task that joined all the others is alone: nothing can
        // interleave with what it does, and it is not a scheduling point (see `join_all`).
        return true;
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
    (*rt).cur = NO_TASK;
    match catch_unwind(AssertUnwindSafe(|| decide(rt))) {
        Ok(Some(c)) if c == t => {
            (&mut *rt).runs(t);
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
pub(super) unsafe fn fold(rt: *mut Rt, t: TaskId, v: u64, kind: Kind) {
    let s = &mut (&mut *rt).tasks[t];
    s.local = mix(s.local, v);
    if !(*rt).sym.images.is_empty() {
        sym_fold(rt, t, v, kind);
    }
    shadow_fold(rt, t, v);
}

/// The kind of object `o`'s values.
#[inline(always)]
pub(super) unsafe fn kind_of(rt: *mut Rt, o: ObjId) -> Kind {
    let r = &*rt;
    if r.sym.images.is_empty() {
        Kind::Plain
    } else {
        r.sym.meta[o as usize].kind
    }
}
