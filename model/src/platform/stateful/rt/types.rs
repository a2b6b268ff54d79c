//! The runtime's vocabulary: ids, the pending operation ([`Op`]) and how an execution ended
//! ([`RunEnd`]). No dependency on the rest of the runtime.

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
    ///
    /// [`join_all`]: super::ops::join_all
    JoinAll(u32),
    /// `yield_now`: always enabled, does nothing.
    Yield,
    /// Under `memory = "lkmm"` only: a fence (its [`crate::platform::KernelFence`] as a number).
    /// Always enabled.
    Fence(u8),
    /// Under `memory = "lkmm"` only: the task is in the middle of a memory operation that has
    /// this many alternatives (which store a load reads, where a store goes): the next choice
    /// is one of them, not a task ([`crate::platform::stateful::SchedPoint::choosing`]).
    Choose(u32),
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
    pub(super) fn code(self) -> u64 {
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
            Op::Fence(f) => 13 | (f as u64) << 8,
            Op::Choose(k) => 14 | (k as u64) << 8,
        }
    }
}

/// The status word of a finished task in the fingerprint (no op has kind 15).
pub(super) const FINISHED_CODE: u64 = 15;
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

pub(super) const NO_TASK: usize = usize::MAX;
pub(super) const NO_OWNER: u8 = u8::MAX;
