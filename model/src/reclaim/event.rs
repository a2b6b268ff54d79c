//! The kswapd-stall model's events (the kernel primitives' are
//! [`crate::event::KernelEvent`]), and the coverage events derived from a trace.

use core::fmt;

use crate::event::{Event as Ev, KernelEvent, Wq, NUMA_NO_NODE};
use crate::model::ProtoEvent;

/// `kswapd_contended_wait` (patch 3/4), the global queue losers of the cmpxchg sleep on.
pub const KSWAPD_CONTENDED_WAIT: Wq = Wq("kswapd_contended_wait");
/// `congestion_wqh[BLK_RW_ASYNC]` (mm/backing-dev.c), slept on by `wait_iff_congested`.
pub const CONGESTION_WQH: Wq = Wq("congestion_wqh");
/// `mapping->tree_lock` of the single heavily written file.
pub const TREE_LOCK: crate::event::LockName = crate::event::LockName::Lock("tree_lock");

/// One event of the kswapd-stall protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The variant's re-check after `prepare_to_wait`; `sleeps` is its decision. On
    /// `kswapd_contended_wait`, `exclusive` is the `kswapd_exclusive` it read (a sleep after it
    /// waits for that node's release); `None` on `congestion_wqh`, which re-reads the flags.
    Recheck { wq: Wq, sleeps: bool, exclusive: Option<i32> },
    /// kswapd of `node` saw `kswapd_exclusive == node` (plain load) and took tree_lock
    /// with a blocking `spin_lock`.
    ExclusiveFastPath { node: i32 },
    /// `cmpxchg(kswapd_exclusive, NUMA_NO_NODE, node)` succeeded (`prev` is what it replaced:
    /// always NUMA_NO_NODE for a real cmpxchg; a seeded bug may report otherwise).
    CmpxchgWon { node: i32, prev: i32 },
    /// The cmpxchg failed: `owner` is the exclusive node it saw.
    CmpxchgLost { node: i32, owner: i32 },
    /// `set_bit(PGDAT_CONGESTED, node)` (patch 4/4, or 4.8's own tagging by direct reclaim).
    CongestedSet { node: i32 },
    /// `zone_balanced()` for `node` cleared PGDAT_CONGESTED (and, in `recheck`, issued the
    /// barrier after it).
    CongestedCleared { node: i32 },
    /// Where `zone_balanced()`'s `clear_bit(PGDAT_CONGESTED)` took effect, reported only where
    /// a barrier is a step of its own (the stateful engine under `lkmm`,
    /// `Platform::fences_are_steps`): in `recheck` the `smp_mb__after_atomic()` comes between the
    /// clear and [`Event::CongestedCleared`], and another task's `set_bit()` in that gap comes
    /// after the clear in the flag's coherence order.
    CongestedClearStored { node: i32 },
    /// `zone_balanced()` for `node` returned true (the balanced path ran).
    ZoneBalanced { node: i32, by_kswapd: bool },
    /// `cmpxchg(kswapd_exclusive, node, NUMA_NO_NODE)` by `node`'s balanced path; `prev` is
    /// the value it found (the reset happened only if `prev == node`).
    Released { node: i32, prev: i32 },
    /// `__remove_mapping()` of `pages` pages under tree_lock.
    RemovedPages { pages: u32 },
    /// A writer added a page to the mapping under tree_lock.
    AddedPage,
    /// `wait_iff_congested()` decided: `congested` is `nr_wb_congested && PGDAT_CONGESTED`.
    CongestionCheck { node: i32, congested: bool },
    /// A direct reclaimer commits to a congestion stall on `node` (calls io_schedule_timeout).
    DirectStall { node: i32 },
    /// `set_wb_congested()` made a backing device congested.
    WbCongested,
    /// `clear_wb_congested()` made a backing device uncongested (`nr_wb_congested` dropped).
    WbUncongested,
    /// kswapd of `node` goes to sleep (it is on `pgdat->kswapd_wait`).
    KswapdSleep { node: i32 },
    /// `wakeup_kswapd(node)` by an allocating task.
    WakeupKswapd { node: i32, kswapd_asleep: bool },
}

impl ProtoEvent for Event {}

crate::named! {
    /// The kswapd-stall model's coverage events: what `reaches` in a scenario file names and
    /// what the coverage line counts.
    pub enum Coverage {
        /// A kswapd's `spin_trylock(tree_lock)` failed.
        TrylockFailed = "trylock-failed",
        CmpxchgWon = "cmpxchg-won",
        CmpxchgLost = "cmpxchg-lost",
        /// A task queued itself on a wait queue.
        Enqueued = "enqueued",
        Woken = "woken",
        TimedOut = "timed-out",
        /// A sleeper slept although what it waits for had already happened (derived by the
        /// checker from the trace).
        SleptAfterRelease = "slept-after-release",
        /// `recheck`: a loser's re-check after `prepare_to_wait()` found a node exclusive
        /// after the node it lost to had released (it lost to that node again, or another
        /// won since), so it waits for that node's release (derived by the checker).
        RecheckAfterRelease = "recheck-after-release",
        /// `kswapd_exclusive` was reset by its owner's balanced path.
        Released = "released",
        /// A wake-up found its queue empty (or `waitqueue_active()` false).
        WakeEmptyQueue = "wake-empty-queue",
        CongestedSet = "congested-set",
        CongestedCleared = "congested-cleared",
        DirectStall = "direct-stall",
    }
}

impl Coverage {
    /// The coverage event `ev` counts as (derived ones are the checker's).
    pub fn of(ev: &Ev<Event>) -> Option<Coverage> {
        Some(match ev {
            Ev::Kernel(k) => match k {
                KernelEvent::TrylockFailed { lock } if *lock == TREE_LOCK => Coverage::TrylockFailed,
                KernelEvent::Enqueued { .. } => Coverage::Enqueued,
                KernelEvent::Woken => Coverage::Woken,
                KernelEvent::TimedOut { .. } => Coverage::TimedOut,
                KernelEvent::WakeUp { queued: 0, .. } | KernelEvent::WakeSkipped { .. } => Coverage::WakeEmptyQueue,
                _ => return None,
            },
            Ev::Proto(p) => match *p {
                Event::CmpxchgWon { .. } => Coverage::CmpxchgWon,
                Event::CmpxchgLost { .. } => Coverage::CmpxchgLost,
                Event::Released { node, prev } if node == prev => Coverage::Released,
                Event::CongestedSet { .. } => Coverage::CongestedSet,
                Event::CongestedCleared { .. } => Coverage::CongestedCleared,
                Event::DirectStall { .. } => Coverage::DirectStall,
                _ => return None,
            },
        })
    }
}

fn node(n: i32) -> String {
    if n == NUMA_NO_NODE {
        "NUMA_NO_NODE".to_string()
    } else {
        format!("node {n}")
    }
}

impl fmt::Display for Event {
    /// The event in kernel terms, one race-diagram cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Event::Recheck { sleeps: true, .. } => write!(f, "re-check: still wait"),
            Event::Recheck { sleeps: false, .. } => write!(f, "re-check: skip the sleep"),
            Event::ExclusiveFastPath { node: n } => write!(f, "kswapd_exclusive == {n}: spin_lock"),
            Event::CmpxchgWon { node: n, prev } => {
                if prev == NUMA_NO_NODE {
                    write!(f, "cmpxchg(kswapd_exclusive, -1, {n}) WINS")
                } else {
                    write!(f, "claims kswapd_exclusive = {n} over {}", node(prev))
                }
            }
            Event::CmpxchgLost { node: n, owner } => {
                write!(f, "cmpxchg(kswapd_exclusive, -1, {n}) loses: {}", node(owner))
            }
            Event::CongestedSet { node: n } => write!(f, "set_bit(PGDAT_CONGESTED, node {n})"),
            Event::CongestedCleared { node: n } => write!(f, "clear_bit(PGDAT_CONGESTED, node {n})"),
            Event::CongestedClearStored { node: n } => {
                write!(f, "clear_bit(PGDAT_CONGESTED, node {n}); its barrier next")
            }
            Event::ZoneBalanced { node: n, by_kswapd } => {
                let who = if by_kswapd { "kswapd" } else { "wakeup_kswapd" };
                write!(f, "zone_balanced(node {n}) [{who}]")
            }
            Event::Released { node: n, prev } => {
                if n == prev {
                    write!(f, "cmpxchg(kswapd_exclusive, {n}, -1): RELEASED")
                } else {
                    write!(f, "cmpxchg(kswapd_exclusive, {n}, -1) finds {}", node(prev))
                }
            }
            Event::RemovedPages { pages } => write!(f, "__remove_mapping() x{pages}"),
            Event::AddedPage => write!(f, "add_to_page_cache (under tree_lock)"),
            Event::CongestionCheck { node: n, congested } => {
                write!(f, "wait_iff_congested(node {n}): {}", if congested { "congested" } else { "not congested" })
            }
            Event::DirectStall { node: n } => write!(f, "congestion stall for node {n}"),
            Event::WbCongested => write!(f, "set_wb_congested()"),
            Event::WbUncongested => write!(f, "clear_wb_congested(): nr_wb_congested--"),
            Event::KswapdSleep { node: n } => write!(f, "kswapd{n} goes to sleep"),
            Event::WakeupKswapd { node: n, kswapd_asleep } => {
                write!(f, "wakeup_kswapd(node {n}): kswapd {}", if kswapd_asleep { "asleep" } else { "awake: return" })
            }
        }
    }
}
