//! The kswapd-stall model's vocabulary, below every other file of the model: its variants,
//! invariants, roles and configuration (with the seeded bug it names, [`Mutation`], whose
//! targets and sites are `mutation.rs`'s), the model type [`KswapdStall`] (its `Model` impl is
//! the parent module's), and the kernel state of one run ([`Kernel`]; its methods, which run
//! the roles, are the parent module's too).

use crate::kernel::sched::{Sched, TimerModel};
use crate::kernel::spinlock::SpinLock;
use crate::kernel::wait::WaitQueueHead;
use crate::platform::Platform;

crate::named! {
    /// The posted versions of the series, and our correction.
    pub enum Variant {
        /// Patch 3/4 as posted ("mm, vmscan: Stall kswapd if contending on tree_lock").
        WaitqueueV1 = "waitqueue-v1",
        /// Patches 3/4 + 4/4 as posted (4/4: "Potentially stall direct reclaimers on tree_lock
        /// contention": the loser also sets PGDAT_CONGESTED).
        DirectcongestV1 = "directcongest-v1",
        /// Our correction of 3/4 + 4/4: re-check `kswapd_exclusive` after `prepare_to_wait()`,
        /// and the congestion condition after the enqueue in `wait_iff_congested()`; and a full
        /// barrier after `zone_balanced()` clears PGDAT_CONGESTED, pairing with that re-check.
        Recheck = "recheck",
    }
}

impl crate::model::Variant for Variant {
    fn description(self) -> &'static str {
        match self {
            Variant::WaitqueueV1 => "patch 3/4 as posted: losers of the cmpxchg stall once on kswapd_contended_wait",
            Variant::DirectcongestV1 => {
                "patches 3/4 + 4/4 as posted: losers also set PGDAT_CONGESTED for wait_iff_congested"
            }
            Variant::Recheck => "3/4 + 4/4 with re-checks after prepare_to_wait (our correction)",
        }
    }
}

impl Variant {
    /// Patch 4/4: the loser sets PGDAT_CONGESTED before it stalls.
    pub fn sets_pgdat_congested(self) -> bool {
        matches!(self, Variant::DirectcongestV1 | Variant::Recheck)
    }
    /// Our correction: re-check the condition after enqueueing, with the barrier after the
    /// clear of PGDAT_CONGESTED that pairs with it.
    pub fn rechecks(self) -> bool {
        matches!(self, Variant::Recheck)
    }
}

crate::named! {
    /// The kswapd-stall model's invariants (their monitors are the checker's; docs/invariants.md
    /// states each one with its kernel source).
    pub enum Invariant {
        SingleExclusive = "single-exclusive",
        ExclusiveNeverWaits = "exclusive-never-waits",
        StallOnce = "stall-once",
        NoLostWakeup = "no-lost-wakeup",
        ExclusiveReleased = "exclusive-released",
        Progress = "progress",
        CongestedCleared = "congested-cleared",
        LockReleased = "lock-released",
    }
}

/// A thread of a kswapd-stall scenario.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// `kswapd` of `node`: reclaims `batches` batches of `pages` pages of the file (one
    /// `remove_mapping_list()` each), then goes to sleep; if `balances`, its
    /// `prepare_kswapd_sleep()` finds the node balanced (`zone_balanced()` runs the release).
    Kswapd { node: i32, batches: u32, pages: u32, balances: bool },
    /// A heavy writer of the file: takes `tree_lock` `holds` times to add a page. `spins`
    /// lengthens each hold by that many spin-loop hints (the runtime mode's stand-in for the
    /// radix-tree work; 0, and unexplored, under the checkers).
    Writer { holds: u32, spins: u32 },
    /// An allocating task: calls `wakeup_kswapd(node)` `attempts` times; when that node's
    /// kswapd is asleep, `zone_balanced()` runs in this task.
    Allocator { node: i32, attempts: u32 },
    /// A direct reclaimer on `node`: `batches` times, `remove_mapping_list()` of `pages` pages
    /// (blocking `spin_lock`), then `wait_iff_congested()`.
    ///
    /// With `tags_congested`, its `shrink_inactive_list()` finds every dirty page it isolated
    /// on a congested backing device (`nr_dirty == nr_congested`) and tags the node
    /// PGDAT_CONGESTED itself before `wait_iff_congested()`: 4.8 behaviour, independent of
    /// the series, and the only way a node gets tagged without a kswapd losing the cmpxchg.
    DirectReclaim { node: i32, batches: u32, pages: u32, tags_congested: bool },
    /// A backing device: congested at start (or made congested by this task), then
    /// `clear_wb_congested()`.
    Bdi { congested_at_start: bool },
}

impl Role {
    pub fn node(&self) -> Option<i32> {
        match *self {
            Role::Kswapd { node, .. } | Role::Allocator { node, .. } | Role::DirectReclaim { node, .. } => Some(node),
            _ => None,
        }
    }
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub mutation: Option<Mutation>,
    pub roles: Vec<Role>,
    pub timer: TimerModel,
}

/// Nodes a scenario may name: `0..=MAX_NODE`.
pub const MAX_NODE: i32 = 7;

impl Config {
    /// Number of nodes: one more than the highest node any role names.
    pub fn nr_nodes(&self) -> usize {
        self.roles.iter().filter_map(Role::node).max().map_or(1, |n| n as usize + 1)
    }
}

/// `pgdat->flags` bits.
pub const PGDAT_CONGESTED: u32 = 0;
/// `bdi_writeback->state` bits.
pub const WB_ASYNC_CONGESTED: u32 = 0;

/// The model's `pglist_data` (one NUMA node).
pub struct Pgdat<P: Platform> {
    pub node_id: i32,
    /// `pgdat->flags`.
    pub flags: P::AtomicU32,
    /// `waitqueue_active(&pgdat->kswapd_wait)`: the node's kswapd has gone to sleep.
    pub kswapd_asleep: P::AtomicBool,
}

/// The one heavily written file's `address_space`.
pub struct AddressSpace<P: Platform> {
    /// `mapping->tree_lock`.
    pub tree_lock: SpinLock<P>,
    /// `mapping->nrpages`: the work done under tree_lock (the explored step inside the
    /// critical section, without which loom would never see the lock contended).
    pub nrpages: P::AtomicU64,
}

/// A backing device's writeback state.
pub struct BackingDev<P: Platform> {
    /// `wb->state` (WB_async_congested).
    pub state: P::AtomicU32,
}

/// The kernel state of one run.
pub struct Kernel<P: Platform> {
    pub sched: Sched<P>,
    pub cfg: Config,
    /// `static unsigned long kswapd_exclusive = NUMA_NO_NODE;` (mm/vmscan.c, 3/4).
    pub kswapd_exclusive: P::AtomicI32,
    /// `static DECLARE_WAIT_QUEUE_HEAD(kswapd_contended_wait);` (one global queue).
    pub kswapd_contended_wait: WaitQueueHead<P>,
    pub pgdat: Vec<Pgdat<P>>,
    pub mapping: AddressSpace<P>,
    /// One backing device per `bdi` thread.
    pub bdi: Vec<BackingDev<P>>,
    /// `nr_wb_congested[BLK_RW_ASYNC]` (mm/backing-dev.c).
    pub nr_wb_congested: P::AtomicI32,
    /// `congestion_wqh[BLK_RW_ASYNC]`.
    pub congestion_wqh: WaitQueueHead<P>,
}

/// The kswapd-stall model.
pub struct KswapdStall;

crate::named! {
    /// A seeded bug of the kswapd-stall model.
    pub enum Mutation {
        StoreNotCmpxchg = "store-not-cmpxchg",
        ExclusiveTrylocks = "exclusive-trylocks",
        StallTwice = "stall-twice",
        WakeBeforeReset = "wake-before-reset",
        ReleaseWithoutWake = "release-without-wake",
        RecheckBeforeEnqueue = "recheck-before-enqueue",
        NoBarrierClearWbCongested = "no-barrier-clear-wb-congested",
        BalancedKeepsExclusive = "balanced-keeps-exclusive",
        NoBarrierAfterClearCongested = "no-barrier-after-clear-congested",
        StallUntilFree = "stall-until-free",
        KswapdInfiniteLoop = "kswapd-infinite-loop",
        BalancedKeepsCongested = "balanced-keeps-congested",
        ExclusiveKeepsLock = "exclusive-keeps-lock",
    }
}
