//! The reclaim-throttle model's events (the kernel primitives' are
//! [`crate::event::KernelEvent`]; the CPU layer's are [`CpuEvent`]), and the coverage events
//! derived from a trace.

use core::fmt;

use crate::event::{Event as Ev, KernelEvent, Wq};
use crate::kernel::cpu::{CpuEvent, YieldWhy};
use crate::model::ProtoEvent;

crate::named! {
    /// `enum vmscan_throttle_state`.
    pub enum Reason {
        Writeback = "WRITEBACK",
        Isolated = "ISOLATED",
        Noprogress = "NOPROGRESS",
        Congested = "CONGESTED",
    }
}

/// `pgdat->reclaim_wait[]`, one queue per reason.
pub const WQ_WRITEBACK: Wq = Wq("reclaim_wait[WRITEBACK]");
pub const WQ_ISOLATED: Wq = Wq("reclaim_wait[ISOLATED]");
pub const WQ_NOPROGRESS: Wq = Wq("reclaim_wait[NOPROGRESS]");
pub const WQ_CONGESTED: Wq = Wq("reclaim_wait[CONGESTED]");

/// Which `too_many_isolated()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Site {
    /// mm/vmscan.c, from `shrink_inactive_list()`.
    Vmscan,
    /// mm/compaction.c, from `isolate_migratepages_block()`.
    Compaction,
}

/// Why `reclaim_throttle()` returned without sleeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipWhy {
    /// A kthread other than kswapd (PF_KTHREAD): never throttled.
    Kthread,
    /// `skip_throttle_noprogress()`: few pages under writeback (CONGESTED, NOPROGRESS; from
    /// 1b4e3f26f9f7).
    FewWritePending,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Cpu(CpuEvent),
    /// A `too_many_isolated()` read the counters: `isolated` against `limit` (the LRU size,
    /// scaled as the site and GFP flags scale it).
    TooManyIsolated {
        site: Site,
        isolated: u32,
        limit: u32,
        too_many: bool,
    },
    /// `shrink_inactive_list()` found too many isolated a second time and returns 0.
    ShrinkGivesUp,
    /// An async compactor found too many isolated: it aborts (-EAGAIN).
    AsyncAborts,
    /// `reclaim_throttle()` returned at once.
    ThrottleSkipped {
        reason: Reason,
        why: SkipWhy,
    },
    /// `atomic_inc_return(&nr_writeback_throttled)` gave `now`.
    WritebackThrottledInc {
        now: u32,
    },
    /// ... and it was the first throttled: `nr_reclaim_start = NR_THROTTLED_WRITTEN`.
    ReclaimStart {
        written: u32,
    },
    /// `reclaim_throttle(reason)` is going to sleep for at most `timeout` jiffies.
    Throttle {
        reason: Reason,
        timeout: u64,
    },
    /// `atomic_dec(&nr_writeback_throttled)` left `now`.
    WritebackThrottledDec {
        now: u32,
    },
    /// `reclaim_throttle(reason)` returns after sleeping `slept` of its `timeout` jiffies.
    ThrottleEnd {
        reason: Reason,
        timeout: u64,
        slept: u64,
    },
    /// Pages taken off the LRU: `isolated` pages are isolated now.
    Isolate {
        pages: u32,
        isolated: u32,
    },
    /// Pages put back on the LRU (`putback_lru_page`, `putback_movable_pages`).
    Putback {
        pages: u32,
        isolated: u32,
    },
    /// `end_page_writeback()` of one page: `acct_reclaim_writeback()` read
    /// `nr_writeback_throttled == throttled`; with a waiter, `NR_THROTTLED_WRITTEN` became
    /// `written`, and `written - nr_reclaim_start` was compared with
    /// `SWAP_CLUSTER_MAX * throttled` (`crossed`: greater, so it wakes the queue).
    WritebackDone {
        throttled: u32,
        written: u32,
        start: u32,
        crossed: bool,
    },
    /// `consider_reclaim_throttle()`: reclaim made progress (wakes NOPROGRESS) or none.
    ConsiderThrottle {
        progress: bool,
    },
    /// `__drain_all_pages()` queued the drain work on `cpu`'s kworker.
    QueueWork {
        cpu: u8,
    },
    /// `flush_work()`: `wait_for_completion()` sleeps until `cpu`'s drain is done.
    FlushWaits {
        cpu: u8,
    },
    /// `flush_work()` of `cpu` returned.
    Flushed {
        cpu: u8,
    },
    /// The kworker of `cpu` sleeps waiting for work.
    WorkerIdle,
    /// `drain_local_pages()` on `cpu`, then the work completes.
    Drained {
        cpu: u8,
    },
    /// From 443c2accd1b6 on: `__drain_all_pages()` drains `cpu`'s per-cpu lists itself, from
    /// the calling CPU under the lists' spinlock, and queues no work.
    DrainedRemotely {
        cpu: u8,
    },
    /// `lock_buffer()` found the buffer locked: the task sleeps on it.
    BufferWait,
    /// `lock_buffer()` took the buffer lock.
    BufferLocked,
    /// `unlock_buffer()`.
    BufferUnlocked,
    /// `migrate_pages()` of `pages` pages.
    Migrated {
        pages: u32,
    },
}

impl From<CpuEvent> for Event {
    fn from(e: CpuEvent) -> Self {
        Event::Cpu(e)
    }
}

impl ProtoEvent for Event {
    fn is_detail(&self) -> bool {
        match self {
            Event::Cpu(c) => c.is_detail(),
            Event::WritebackThrottledInc { .. } | Event::WritebackThrottledDec { .. } => true,
            _ => false,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Event::Cpu(c) => c.fmt(f),
            Event::TooManyIsolated { site, isolated, limit, too_many } => {
                let w = match site {
                    Site::Vmscan => "vmscan",
                    Site::Compaction => "compaction",
                };
                let cmp = match (site, too_many) {
                    (Site::Vmscan, true) => format!("{isolated} > {limit}"),
                    (Site::Vmscan, false) => format!("{isolated} <= {limit}"),
                    (Site::Compaction, true) => format!("{isolated} > {limit}/2"),
                    (Site::Compaction, false) => format!("{isolated} <= {limit}/2"),
                };
                write!(f, "too_many_isolated[{w}]: isolated {cmp}: {}", if too_many { "TOO MANY" } else { "ok" })
            }
            Event::ShrinkGivesUp => write!(f, "shrink_inactive_list: still too many, return 0"),
            Event::AsyncAborts => write!(f, "async: too many isolated, abort"),
            Event::ThrottleSkipped { reason, why: SkipWhy::Kthread } => {
                write!(f, "reclaim_throttle({reason}): kthread, return at once")
            }
            Event::ThrottleSkipped { reason, why: SkipWhy::FewWritePending } => {
                write!(f, "reclaim_throttle({reason}): skip_throttle_noprogress, return")
            }
            Event::WritebackThrottledInc { now } => write!(f, "nr_writeback_throttled = {now}"),
            Event::ReclaimStart { written } => write!(f, "nr_reclaim_start = {written}"),
            Event::Throttle { reason, timeout } => write!(f, "reclaim_throttle({reason}), timeout {timeout}"),
            Event::WritebackThrottledDec { now } => write!(f, "nr_writeback_throttled = {now}"),
            Event::ThrottleEnd { reason, timeout, slept } => {
                write!(f, "reclaim_throttle({reason}) returns after {slept}/{timeout} jiffies")
            }
            Event::Isolate { pages, isolated } => write!(f, "isolate {pages} (NR_ISOLATED = {isolated})"),
            Event::Putback { pages, isolated } => write!(f, "putback {pages} (NR_ISOLATED = {isolated})"),
            Event::WritebackDone { throttled: 0, .. } => {
                write!(f, "end_page_writeback: nr_writeback_throttled 0, no accounting")
            }
            Event::WritebackDone { throttled, written, start, crossed } => write!(
                f,
                "end_page_writeback: written {} {} {}*SWAP_CLUSTER_MAX{}",
                written.wrapping_sub(start),
                if crossed { ">" } else { "<=" },
                throttled,
                if crossed { ": wake" } else { "" }
            ),
            Event::ConsiderThrottle { progress: true } => write!(f, "consider_reclaim_throttle: progress, wake"),
            Event::ConsiderThrottle { progress: false } => write!(f, "consider_reclaim_throttle: no progress"),
            Event::QueueWork { cpu } => write!(f, "__drain_all_pages: queue_work_on(cpu{cpu})"),
            Event::FlushWaits { cpu } => write!(f, "flush_work(cpu{cpu}): wait_for_completion sleeps"),
            Event::Flushed { cpu } => write!(f, "flush_work(cpu{cpu}) done"),
            Event::WorkerIdle => write!(f, "worker_thread: no work, sleeps"),
            Event::Drained { cpu } => write!(f, "drain_local_pages(cpu{cpu}), complete"),
            Event::DrainedRemotely { cpu } => write!(f, "__drain_all_pages: drain_pages(cpu{cpu}) from here"),
            Event::BufferWait => write!(f, "lock_buffer: locked, sleeps"),
            Event::BufferLocked => write!(f, "lock_buffer"),
            Event::BufferUnlocked => write!(f, "unlock_buffer"),
            Event::Migrated { pages } => write!(f, "migrate_pages({pages})"),
        }
    }
}

crate::named! {
    /// Coverage events: what an exploration reached.
    pub enum Coverage {
        ThrottledWriteback = "throttled-writeback",
        ThrottledIsolated = "throttled-isolated",
        ThrottledNoprogress = "throttled-noprogress",
        ThrottledCongested = "throttled-congested",
        KthreadNotThrottled = "kthread-not-throttled",
        NoprogressSkipped = "noprogress-skipped",
        TooManyIsolated = "too-many-isolated",
        WritebackWake = "writeback-wake",
        IsolatedWake = "isolated-wake",
        ProgressWake = "progress-wake",
        /// A throttled task's sleep cut short by a waker.
        ThrottleWoken = "throttle-woken",
        /// A throttled task slept its full timeout.
        ThrottleTimedOut = "throttle-timed-out",
        /// Derived: a throttled task slept its full timeout although its condition cleared
        /// while it slept (a missed or late wake-up, bounded by the timeout; docs/findings.md,
        /// T4).
        SleptFullTimeout = "slept-full-timeout",
        /// Derived: a task became runnable on a CPU that another task was running on.
        CpuContended = "cpu-contended",
        /// `cond_resched()` handed the CPU to another task.
        CpuHandover = "cpu-handover",
        DrainFlushed = "drain-flushed",
        /// 443c2accd1b6: a CPU's per-cpu lists drained from another CPU.
        DrainRemote = "drain-remote",
        BufferContended = "buffer-contended",
    }
}

impl Coverage {
    pub fn of(ev: &Ev<Event>) -> Option<Coverage> {
        Some(match ev {
            Ev::Proto(Event::Throttle { reason, .. }) => match reason {
                Reason::Writeback => Coverage::ThrottledWriteback,
                Reason::Isolated => Coverage::ThrottledIsolated,
                Reason::Noprogress => Coverage::ThrottledNoprogress,
                Reason::Congested => Coverage::ThrottledCongested,
            },
            Ev::Proto(Event::ThrottleSkipped { why: SkipWhy::Kthread, .. }) => Coverage::KthreadNotThrottled,
            Ev::Proto(Event::ThrottleSkipped { why: SkipWhy::FewWritePending, .. }) => Coverage::NoprogressSkipped,
            Ev::Proto(Event::TooManyIsolated { too_many: true, .. }) => Coverage::TooManyIsolated,
            Ev::Proto(Event::WritebackDone { crossed: true, .. }) => Coverage::WritebackWake,
            Ev::Proto(Event::ConsiderThrottle { progress: true }) => Coverage::ProgressWake,
            Ev::Proto(Event::ThrottleEnd { timeout, slept, .. }) if slept < timeout => Coverage::ThrottleWoken,
            Ev::Proto(Event::ThrottleEnd { .. }) => Coverage::ThrottleTimedOut,
            Ev::Proto(Event::Cpu(CpuEvent::Yield { why: YieldWhy::Resched, .. })) => Coverage::CpuHandover,
            Ev::Proto(Event::Flushed { .. }) => Coverage::DrainFlushed,
            Ev::Proto(Event::DrainedRemotely { .. }) => Coverage::DrainRemote,
            Ev::Proto(Event::BufferWait) => Coverage::BufferContended,
            Ev::Kernel(KernelEvent::WakeUp { wq, woken, .. }) if *wq == WQ_ISOLATED && *woken != 0 => {
                Coverage::IsolatedWake
            }
            _ => return None,
        })
    }
}
