//! The 2016 "Reduce tree_lock contention during swap and reclaim of a single file" series
//! (Mel Gorman, RFC v1, 9 Sep 2016), patches 3/4 and 4/4, as a model.
//!
//! * [`vmscan`]: `remove_mapping_list()`'s contended path (trylock, the cmpxchg on
//!   `kswapd_exclusive`, the one bounded stall on `kswapd_contended_wait`), `zone_balanced()`'s
//!   release, `wakeup_kswapd()`, and the roles that drive them.
//! * [`backing_dev`]: `wait_iff_congested()`, `set_wb_congested()`, `clear_wb_congested()`.
//!
//! The state below is the kernel's: file-scope statics of mm/vmscan.c, the nodes' `pglist_data`,
//! the one heavily written `address_space`, and the backing devices.

pub mod backing_dev;
pub mod vmscan;

use std::sync::Arc;

use core::sync::atomic::Ordering::Relaxed;

use crate::event::{LockName, Wq, NUMA_NO_NODE};
use crate::ghost::{Ghost, MAX_TASKS};
use crate::kernel::sched::{Sched, TimerModel};
use crate::kernel::spinlock::SpinLock;
use crate::kernel::wait::WaitQueueHead;
use crate::mutation::Mutation;
use crate::platform::{Atomic, Platform};

/// The posted versions of the series, and our correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Patch 3/4 as posted ("mm, vmscan: Stall kswapd if contending on tree_lock").
    WaitqueueV1,
    /// Patches 3/4 + 4/4 as posted (4/4: "Potentially stall direct reclaimers on tree_lock
    /// contention": the loser also sets PGDAT_CONGESTED).
    DirectcongestV1,
    /// Our correction of 3/4 + 4/4: re-check `kswapd_exclusive` after `prepare_to_wait()`, and
    /// the congestion condition after the enqueue in `wait_iff_congested()`; and a full barrier
    /// after `zone_balanced()` clears PGDAT_CONGESTED, pairing with that re-check.
    Recheck,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::WaitqueueV1, Variant::DirectcongestV1, Variant::Recheck];
    pub fn name(self) -> &'static str {
        match self {
            Variant::WaitqueueV1 => "waitqueue-v1",
            Variant::DirectcongestV1 => "directcongest-v1",
            Variant::Recheck => "recheck",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }
    pub fn description(self) -> &'static str {
        match self {
            Variant::WaitqueueV1 => "patch 3/4 as posted: losers of the cmpxchg stall once on kswapd_contended_wait",
            Variant::DirectcongestV1 => "patches 3/4 + 4/4 as posted: losers also set PGDAT_CONGESTED for wait_iff_congested",
            Variant::Recheck => "3/4 + 4/4 with re-checks after prepare_to_wait (our correction)",
        }
    }
    /// Patch 4/4: the loser sets PGDAT_CONGESTED before it stalls.
    pub fn sets_pgdat_congested(self) -> bool {
        matches!(self, Variant::DirectcongestV1 | Variant::Recheck)
    }
    /// Our correction: re-check the condition after enqueueing.
    pub fn rechecks(self) -> bool {
        matches!(self, Variant::Recheck)
    }
}

/// A thread of a kswapd-stall scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub fn kind(&self) -> &'static str {
        match self {
            Role::Kswapd { .. } => "kswapd",
            Role::Writer { .. } => "writer",
            Role::Allocator { .. } => "allocator",
            Role::DirectReclaim { .. } => "direct-reclaim",
            Role::Bdi { .. } => "bdi",
        }
    }
    /// The thread's name in traces.
    pub fn comm(&self) -> String {
        match self {
            Role::Kswapd { node, .. } => format!("kswapd{node}"),
            Role::Writer { .. } => "writer".into(),
            Role::Allocator { node, .. } => format!("alloc(n{node})"),
            Role::DirectReclaim { node, .. } => format!("direct(n{node})"),
            Role::Bdi { .. } => "bdi".into(),
        }
    }
    pub fn node(&self) -> Option<i32> {
        match *self {
            Role::Kswapd { node, .. } | Role::Allocator { node, .. } | Role::DirectReclaim { node, .. } => Some(node),
            _ => None,
        }
    }
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub variant: Variant,
    pub mutation: Option<Mutation>,
    pub roles: Vec<Role>,
    pub timer: TimerModel,
}

impl Config {
    /// Number of nodes: one more than the highest node any role names.
    pub fn nr_nodes(&self) -> usize {
        self.roles.iter().filter_map(Role::node).max().map_or(1, |n| n as usize + 1)
    }
    /// Checks that the kernel would allow this configuration (one kswapd per node, …).
    pub fn validate(&self) -> Result<(), String> {
        if self.roles.is_empty() {
            return Err("a scenario needs at least one thread".into());
        }
        if self.roles.len() > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} threads"));
        }
        let mut kswapd_nodes = Vec::new();
        for r in &self.roles {
            if let Some(n) = r.node() {
                if !(0..8).contains(&n) {
                    return Err(format!("node {n} out of range 0..=7"));
                }
            }
            if let Role::Kswapd { node, .. } = r {
                if kswapd_nodes.contains(node) {
                    return Err(format!("two kswapd threads for node {node}: the kernel runs one kswapd per node"));
                }
                kswapd_nodes.push(*node);
            }
        }
        if let Some(m) = self.mutation {
            if m.model() != crate::mutation::ModelKind::KswapdStall {
                return Err(format!("mutation {} belongs to the {} model", m.name(), m.model().name()));
            }
        }
        Ok(())
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
pub struct Reclaim<P: Platform> {
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

/// What the state looks like when every thread has finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalState {
    pub kswapd_exclusive: i32,
    /// PGDAT_CONGESTED per node.
    pub congested: Vec<bool>,
    pub nr_wb_congested: i32,
    /// tree_lock still held (a ghost observation).
    pub tree_lock_held: bool,
}

/// Initial page count of the file (large enough that removals never underflow).
const INITIAL_NRPAGES: u64 = 1 << 20;

impl<P: Platform> Reclaim<P> {
    pub fn new(cfg: Config, ghost: Arc<P::Ghost>) -> Self {
        let comms = cfg.roles.iter().map(Role::comm).collect();
        let sched = Sched::new(comms, cfg.timer, ghost);
        let pgdat = (0..cfg.nr_nodes() as i32)
            .map(|node_id| Pgdat { node_id, flags: P::AtomicU32::new(0), kswapd_asleep: P::AtomicBool::new(false) })
            .collect();
        let mut congested = 0;
        let bdi = cfg
            .roles
            .iter()
            .filter_map(|r| match r {
                Role::Bdi { congested_at_start } => {
                    congested += *congested_at_start as i32;
                    Some(BackingDev { state: P::AtomicU32::new((*congested_at_start as u32) << WB_ASYNC_CONGESTED) })
                }
                _ => None,
            })
            .collect();
        Reclaim {
            sched,
            kswapd_exclusive: P::AtomicI32::new(NUMA_NO_NODE),
            kswapd_contended_wait: WaitQueueHead::new(Wq::KswapdContended),
            pgdat,
            mapping: AddressSpace { tree_lock: SpinLock::new(LockName::TreeLock), nrpages: P::AtomicU64::new(INITIAL_NRPAGES) },
            bdi,
            nr_wb_congested: P::AtomicI32::new(congested),
            congestion_wqh: WaitQueueHead::new(Wq::Congestion),
            cfg,
        }
    }

    /// Is seeded bug `m` active? Always false in the runtime build.
    #[inline(always)]
    pub fn mutated(&self, m: Mutation) -> bool {
        P::Ghost::ENABLED && self.cfg.mutation == Some(m)
    }

    /// Run task `pid`'s role to completion on the calling thread.
    pub fn run_task(&self, pid: usize) {
        let cur = self.sched.enter(pid);
        let mut bdi_index = 0;
        for r in &self.cfg.roles[..pid] {
            bdi_index += matches!(r, Role::Bdi { .. }) as usize;
        }
        match self.cfg.roles[pid] {
            Role::Kswapd { node, batches, pages, balances } => vmscan::kswapd(self, &cur, node, batches, pages, balances),
            Role::Writer { holds, spins } => vmscan::writer(self, &cur, holds, spins),
            Role::Allocator { node, attempts } => {
                for _ in 0..attempts {
                    vmscan::wakeup_kswapd(self, &cur, node);
                }
            }
            Role::DirectReclaim { node, batches, pages, tags_congested } => {
                vmscan::direct_reclaim(self, &cur, node, batches, pages, tags_congested)
            }
            Role::Bdi { congested_at_start } => backing_dev::bdi(self, &cur, bdi_index, congested_at_start),
        }
        // do_exit(): no lock may be held any more.
        for lock in [&self.mapping.tree_lock, &self.kswapd_contended_wait.lock, &self.congestion_wqh.lock] {
            lock.release_if_leaked(&cur);
        }
        cur.exit();
    }

    /// Read the final state (call after every thread has been joined).
    pub fn final_state(&self) -> FinalState {
        FinalState {
            kswapd_exclusive: self.kswapd_exclusive.load(Relaxed),
            congested: self.pgdat.iter().map(|p| p.flags.load(Relaxed) & (1 << PGDAT_CONGESTED) != 0).collect(),
            nr_wb_congested: self.nr_wb_congested.load(Relaxed),
            tree_lock_held: crate::kernel::spinlock::spin_is_held(&self.mapping.tree_lock),
        }
    }
}

/// Run one execution of `cfg` on platform `P`: spawn every role, join them, return the
/// final state. This is the same function under loom, shuttle and real threads. The last role
/// runs on the calling thread (see [`crate::kernel::sched::run_tasks`]).
pub fn run<P: Platform>(cfg: &Config, ghost: Arc<P::Ghost>) -> FinalState {
    let k = Arc::new(Reclaim::<P>::new(cfg.clone(), ghost));
    let names = cfg.roles.iter().map(Role::comm).collect();
    let kk = Arc::clone(&k);
    crate::kernel::sched::run_tasks::<P, _>(names, Arc::new(move |pid| kk.run_task(pid)));
    k.final_state()
}
