//! Typed events: what a task did, in kernel terms.
//!
//! A trace is a sequence of `(pid, Event<E>)`: either a [`KernelEvent`] of the kernel
//! primitives every protocol shares (locks, wait queues, the scheduler, the checker's own
//! verdict events), or an event `E` of the protocol itself (`reclaim::Event`,
//! `compaction::Event`).
//!
//! Every event is emitted by the task that performed it, immediately after the explored
//! operation it describes (or, for a release-type event, immediately before it), so the order
//! of events in an execution's trace is the order of those operations in the interleaving.
//! Monitors (`checks/src/monitor`) are functions of this trace; the race diagram prints it.

use core::fmt;

/// A wait queue head, by its kernel name (`kswapd_contended_wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wq(pub &'static str);

impl fmt::Display for Wq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A spinlock, by its kernel name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockName {
    /// A lock of the protocol (`tree_lock`, `lru_lock`, `zone->lock`).
    Lock(&'static str),
    /// The spinlock inside a wait-queue head.
    WaitQueue(Wq),
}

impl LockName {
    pub fn is_wait_queue(self) -> bool {
        matches!(self, LockName::WaitQueue(_))
    }
}

impl fmt::Display for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockName::Lock(n) => f.write_str(n),
            LockName::WaitQueue(w) => write!(f, "{w}.lock"),
        }
    }
}

/// An event of the kernel primitives (and of the checker's ghost).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelEvent {
    // ---- locks ----
    /// `spin_lock` / `spin_trylock` took `lock`.
    LockAcquired { lock: LockName, trylock: bool },
    /// `spin_trylock(lock)` failed: somebody holds it.
    TrylockFailed { lock: LockName },
    /// `spin_unlock(lock)`.
    LockReleased { lock: LockName },
    /// The task tried to take a lock it already holds (a self-deadlock in the kernel).
    LockRecursion { lock: LockName },
    /// The task ended while holding `lock`; the checker released it so the others can go on.
    LockLeaked { lock: LockName },

    // ---- scheduler and wait queues ----
    /// `prepare_to_wait(wq)`: the task is on the queue and its state is set (after the full
    /// barrier of `set_current_state`).
    Enqueued { wq: Wq },
    /// `io_schedule_timeout(timeout)` entered with the task not running.
    Schedule { timeout: u64 },
    /// `io_schedule_timeout` returned because a waker made the task runnable.
    Woken,
    /// `io_schedule_timeout` returned because the timer expired (timer model `any-time`
    /// chooses when); `jiffies` were slept.
    TimedOut { jiffies: u64 },
    /// Timer model `never`: the task sleeps and nobody is left who could wake it. The kernel
    /// task would sleep for ever; the checker lets it run on so the execution can end (what
    /// follows in its column is the harness's, not the kernel's).
    SleptForever,
    /// `finish_wait(wq)`.
    FinishWait { wq: Wq },
    /// `wake_up(wq)` / `wake_up_interruptible(wq)` scanned the queue: `queued` tasks were on it
    /// (a pid mask) and `woken` of them were made runnable; `interruptible` for
    /// `wake_up_interruptible`.
    WakeUp { wq: Wq, queued: u32, woken: u32, interruptible: bool },
    /// `waitqueue_active(wq)` was false, so the waker did not call `wake_up`.
    WakeSkipped { wq: Wq },
    /// The same, where `waitqueue_active()`'s lockless read was stale: a task had queued itself
    /// (a later store to the list) and that store had not reached the waker (only under
    /// `memory = "lkmm"`, and only where protocol code asks: `wake_throttle_isolated()`).
    WakeSkippedStale { wq: Wq },

    // ---- checker events (emitted by the ghost, not by kernel code) ----
    /// The task's loop came back to a state it had already been in with nobody else left to
    /// change anything: it will repeat forever.
    Livelock { period: usize },
    /// The task exceeded the scenario's step bound.
    StepBound { steps: u64 },
}

impl KernelEvent {
    /// Only for reading a trace (`--verbose` shows it).
    pub fn is_detail(&self) -> bool {
        matches!(
            self,
            KernelEvent::LockAcquired { lock: LockName::WaitQueue(_), .. }
                | KernelEvent::LockReleased { lock: LockName::WaitQueue(_) }
        )
    }
}

/// One event of a trace of protocol `E`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<E> {
    Kernel(KernelEvent),
    Proto(E),
}

impl<E> From<KernelEvent> for Event<E> {
    fn from(k: KernelEvent) -> Self {
        Event::Kernel(k)
    }
}

impl<E: ProtoEvent> From<E> for Event<E> {
    fn from(e: E) -> Self {
        Event::Proto(e)
    }
}

impl<E: ProtoEvent> Event<E> {
    pub fn kernel(&self) -> Option<&KernelEvent> {
        match self {
            Event::Kernel(k) => Some(k),
            Event::Proto(_) => None,
        }
    }
    pub fn proto(&self) -> Option<&E> {
        match self {
            Event::Proto(e) => Some(e),
            Event::Kernel(_) => None,
        }
    }
    /// Only for reading a trace, not for its structure.
    pub fn is_detail(&self) -> bool {
        match self {
            Event::Kernel(k) => k.is_detail(),
            Event::Proto(e) => e.is_detail(),
        }
    }
}

/// `NUMA_NO_NODE` (-1): no node.
pub const NUMA_NO_NODE: i32 = -1;

/// Task ids of a pid mask: `T0,T2`, or `nobody`.
pub fn pids(mask: u32) -> String {
    if mask == 0 {
        return "nobody".to_string();
    }
    let v: Vec<String> = (0..32).filter(|i| mask & (1 << i) != 0).map(|i| format!("T{i}")).collect();
    v.join(",")
}

impl fmt::Display for KernelEvent {
    /// The event in kernel terms, one race-diagram cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KernelEvent::LockAcquired { lock, trylock: true } => write!(f, "spin_trylock({lock}) ok"),
            KernelEvent::LockAcquired { lock, trylock: false } => write!(f, "spin_lock({lock})"),
            KernelEvent::TrylockFailed { lock } => write!(f, "spin_trylock({lock}) FAILS"),
            KernelEvent::LockReleased { lock } => write!(f, "spin_unlock({lock})"),
            KernelEvent::LockRecursion { lock } => write!(f, "spin_lock({lock}) while holding it!"),
            KernelEvent::LockLeaked { lock } => write!(f, "exits holding {lock}!"),
            KernelEvent::Enqueued { wq } => write!(f, "prepare_to_wait({wq})"),
            KernelEvent::Schedule { timeout } => write!(f, "io_schedule_timeout({timeout}) sleeps"),
            KernelEvent::Woken => write!(f, "woken"),
            KernelEvent::TimedOut { jiffies } => write!(f, "timer expires ({jiffies} jiffies slept)"),
            KernelEvent::SleptForever => write!(f, "sleeps forever: nobody left to wake it"),
            KernelEvent::FinishWait { wq } => write!(f, "finish_wait({wq})"),
            KernelEvent::WakeUp { wq, queued, woken, interruptible } => {
                let what = if interruptible { "wake_up_interruptible" } else { "wake_up" };
                if queued == 0 {
                    write!(f, "{what}({wq}): queue EMPTY")
                } else {
                    write!(f, "{what}({wq}) wakes {}", pids(woken))
                }
            }
            KernelEvent::WakeSkipped { wq } => write!(f, "waitqueue_active({wq}) false: no wake"),
            KernelEvent::WakeSkippedStale { wq } => {
                write!(f, "waitqueue_active({wq}) false (a stale read: the queueing not yet visible): no wake")
            }
            KernelEvent::Livelock { period } => write!(f, "LOOPS FOREVER: state repeats every {period} iteration(s)"),
            KernelEvent::StepBound { steps } => write!(f, "STEP BOUND exceeded ({steps} steps)"),
        }
    }
}

impl<E: fmt::Display> fmt::Display for Event<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Kernel(k) => k.fmt(f),
            Event::Proto(e) => e.fmt(f),
        }
    }
}

/// A protocol's own events (the kernel primitives' are [`KernelEvent`]).
pub trait ProtoEvent: Clone + fmt::Debug + Eq + fmt::Display + Send + Sync + 'static {
    /// Only for reading a trace, not for its structure (`--verbose` shows it).
    fn is_detail(&self) -> bool {
        false
    }
}
