//! The checker's hooks into an execution ("ghost" state, in the model-checking sense).
//!
//! Protocol code reports what it does through a [`Ghost`]: typed [`Event`]s, loop heads (for
//! the progress check), and the sleep/exit bookkeeping that lets the checker tell a lost
//! wakeup from a deadlock without ever letting loom or shuttle block forever. Ghost state
//! lives outside the explored memory, so it adds no interleavings; every hook is called
//! right next to the explored operation it describes and is therefore atomic with it.
//!
//! The runtime build uses [`NoGhost`]: `ENABLED` is `false` and every hook is an empty
//! `#[inline(always)]` function, so protocol code pays nothing for being checkable
//! (`checks/benches/fast_path.rs` measures this).

use core::marker::PhantomData;

use crate::event::Event;

/// A task's index in its scenario's thread list (at most [`MAX_TASKS`]).
pub type Pid = usize;

/// Tasks are tracked in `u32` bit masks.
pub const MAX_TASKS: usize = 32;

/// What a task about to sleep with no timer should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SleepDecision {
    /// Someone may still wake it: park.
    Park,
    /// Nobody is left who could wake it (every other task has finished or is asleep with no
    /// timer). The checker has recorded the lost wakeup and ended the execution: unpark the
    /// tasks in the mask (the other sleepers) and return.
    Abort { unpark: u32 },
}

/// What a loop should do at its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopVerdict {
    Continue,
    /// Go on, but yield first: the loop has run long while other tasks are unfinished, and
    /// the explorer should let them run (an explorer is not fair on its own; without this a
    /// livelock is reported only on schedules that starve everyone else).
    Yield,
    Stop,
}

pub trait Ghost: Send + Sync + 'static {
    /// `false` only for [`NoGhost`]; lets protocol code compile checker-only paths (seeded
    /// mutants, lock-owner tracking) out of the runtime build.
    const ENABLED: bool;

    /// The protocol's own event type (`reclaim::Event`, `compaction::Event`).
    type Proto: Send + 'static;

    /// Record an event of task `pid`.
    fn emit(&self, pid: Pid, ev: Event<Self::Proto>);

    /// Called at the head of every loop in protocol code, with a fingerprint of the state
    /// the iteration starts from. [`LoopVerdict::Stop`] means the checker has decided the
    /// loop cannot make progress (it recorded a `progress` violation); the loop must then exit.
    ///
    /// The fingerprint is the model's *summary* of the loop state: a stateful search replaces
    /// the task's history by it, so it must determine the task's whole future. A loop builds
    /// it from [`Ghost::loop_context`] taken just before the loop (which stands for everything
    /// the task did before: the enclosing loops, the caller's locals), the loop's location,
    /// and every local the loop carries from one iteration to the next (see
    /// [`crate::kernel::sched::loop_summary`]).
    fn loop_head(&self, pid: Pid, summary: Summary) -> LoopVerdict;

    /// What task `pid`'s future depends on so far, as far as the checker tracks it: under the
    /// stateful engine its history hash, elsewhere 0. Taken by a loop just before it starts.
    fn loop_context(&self, _pid: Pid) -> u64 {
        0
    }

    /// A checkpoint in code that is not a loop of unknown length (the head of one iteration of
    /// a bounded `for`, the end of a role): `summary` is the model's summary of everything
    /// task `pid`'s future depends on besides the shared objects, built like a loop summary
    /// ([`crate::kernel::sched::loop_summary`]: the context taken when the enclosing function
    /// started, a location constant, the live locals). A stateful search replaces the task's
    /// history by it, so that two paths to the same point with the same locals are one state.
    /// Unlike [`Ghost::loop_head`] it never stops or yields: every other ghost ignores it.
    #[inline(always)]
    fn checkpoint(&self, _pid: Pid, _summary: Summary) {}

    /// A declaration of the live locals at a point of task `pid`'s code (SPIN's dead-variable
    /// reduction, made by hand): `summary` is built like a checkpoint's, from the context taken
    /// where the enclosing function started, a location constant, and the locals that are live
    /// here, and it must determine the task's whole future but for the shared objects. What the
    /// task saw since the context was taken and will not use again (a value it has branched on,
    /// whether a sleep timed out) is dead, and a stateful search that applies the reduction
    /// (`live-locals`) replaces the task's history by the summary, so that paths that leave the
    /// same live state meet. Unlike [`Ghost::checkpoint`] it is a reduction the search may
    /// leave off; every other ghost ignores it.
    #[inline(always)]
    fn live_locals(&self, _pid: Pid, _summary: Summary) {}

    /// Every task but `pid` has finished (the case in which a repeating loop of `pid` is a
    /// livelock). Read by platforms whose loads may return a superseded value
    /// ([`crate::platform::Platform::STALE_READS`]) before every loop head.
    fn others_finished(&self, _pid: Pid) -> bool {
        false
    }

    /// `pid` is about to sleep with no timer (timer model `never`).
    fn untimed_sleep(&self, pid: Pid) -> SleepDecision;

    /// A waker made `pid` runnable (`try_to_wake_up` succeeded).
    fn woken(&self, pid: Pid);

    /// `pid` has finished. Returns the sleepers to unpark because the checker ended the
    /// execution (they can never be woken now), as for [`SleepDecision::Abort`].
    fn task_exit(&self, pid: Pid) -> u32;

    /// The checker has ended this execution (a lost wakeup was found).
    fn aborted(&self) -> bool;

    /// The code of the configuration's seeded mutation is running (`pid` is at the mutation
    /// site): the evidence a kill needs that the mutation, not something else, made the
    /// difference.
    fn mutation_reached(&self, pid: Pid);
}

/// The runtime ghost of a protocol with events `E`: no checking at all.
pub struct NoGhost<E>(PhantomData<fn() -> E>);

impl<E> Default for NoGhost<E> {
    fn default() -> Self {
        NoGhost(PhantomData)
    }
}

impl<E: Send + 'static> Ghost for NoGhost<E> {
    const ENABLED: bool = false;
    type Proto = E;
    #[inline(always)]
    fn emit(&self, _pid: Pid, _ev: Event<E>) {}
    #[inline(always)]
    fn loop_head(&self, _pid: Pid, _summary: Summary) -> LoopVerdict {
        LoopVerdict::Continue
    }
    #[inline(always)]
    fn untimed_sleep(&self, _pid: Pid) -> SleepDecision {
        SleepDecision::Park
    }
    #[inline(always)]
    fn woken(&self, _pid: Pid) {}
    #[inline(always)]
    fn task_exit(&self, _pid: Pid) -> u32 {
        0
    }
    #[inline(always)]
    fn aborted(&self) -> bool {
        false
    }
    #[inline(always)]
    fn mutation_reached(&self, _pid: Pid) {}
}

/// A loop head's or checkpoint's summary (see [`Ghost::loop_head`]): the loop's context (taken
/// just before the loop), its location (a constant per loop of the model) and the hash of the
/// locals it carries from one iteration to the next. Kept as its three parts, so that a
/// stateful search with symmetry reduction can rebuild it over each permuted image of the
/// context (`locals` must then not name a node or a task: see docs/model.md, "Symmetry").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub context: u64,
    pub location: u64,
    pub locals: u64,
}

impl Summary {
    /// The summary as one fingerprint, with `context` in place of its own.
    ///
    /// Two rounds of a 64-bit mixer (MurmurHash3's finaliser): cheap enough to call on every
    /// iteration, and every input bit reaches every output bit, as a fingerprint needs.
    #[inline]
    pub fn hash_with(self, context: u64) -> u64 {
        #[inline(always)]
        fn fmix64(mut k: u64) -> u64 {
            k ^= k >> 33;
            k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
            k ^= k >> 33;
            k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            k ^ (k >> 33)
        }
        let a = fmix64(context ^ self.location.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        fmix64(a.rotate_left(29) ^ self.locals.wrapping_add(0x2545_f491_4f6c_dd1d))
    }
    /// The summary as one fingerprint.
    #[inline]
    pub fn hash(self) -> u64 {
        self.hash_with(self.context)
    }
}
