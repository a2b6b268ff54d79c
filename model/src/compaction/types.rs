//! The compaction model's vocabulary, below every other file of the model but `event.rs`:
//! its variants, invariants, roles and configuration (with the seeded bug it names,
//! [`Mutation`], whose targets are `mutation.rs`'s), the model type [`Compaction`] (its `Model`
//! impl is the parent module's), and the kernel state of one run ([`Kernel`]; its methods,
//! which run the roles, are the parent module's too).

use std::sync::atomic::AtomicBool as GhostBool;

use super::event::{Mode, Order, LRU_LOCK, ZONE_LOCK};
use crate::event::LockName;
use crate::kernel::sched::Sched;
use crate::kernel::spinlock::SpinLock;
use crate::platform::Platform;

crate::named! {
    /// The versions of the series the model knows, by name.
    pub enum Variant {
        /// The series state before cb2dcaf023 ("norescan-v3r16", after 12/22): an async trylock
        /// failure sets `cc->contended` and the block scanner breaks out at once;
        /// `isolate_migratepages()` returns ISOLATE_ABORT on `!low_pfn || cc->contended`;
        /// `__compact_finished()` tests `contended || fatal_signal_pending()` on its first line;
        /// `need_resched()` in async mode sets `contended` and aborts.
        NorescanV3 = "norescan-v3",
        /// cb2dcaf023 applied ("finishcontend-v3r16", 13/22): `compact_lock_irqsave()` always
        /// takes the lock and only records contention; the 32-page stop is lifted while
        /// contended; ISOLATE_ABORT only on `!low_pfn`; the contended/fatal test moves to the end
        /// of `__compact_finished()`, after the pageblock-alignment check. `need_resched()` in
        /// async mode still sets `contended` but no longer aborts.
        FinishcontendV3 = "finishcontend-v3",
        /// cf66f0700c8f on top ("do not consider a need to reschedule as contention"):
        /// `need_resched()` only reschedules; `contended` is set by an async trylock failure or
        /// a fatal signal.
        ReschedNotContention = "resched-not-contention",
        /// 670105a25608 on top ("avoid 100% CPU usage during compaction when a task is killed"):
        /// when `compact_unlock_should_abort()` aborts the migration block scanner (a fatal
        /// signal), the block returns `low_pfn = 0`, which `isolate_migratepages()` turns into
        /// ISOLATE_ABORT and `compact_zone()` into COMPACT_CONTENDED.
        FatalFix = "fatal-fix",
    }
}

impl crate::model::Variant for Variant {
    fn description(self) -> &'static str {
        match self {
            Variant::NorescanV3 => {
                "the series before cb2dcaf023: async trylock failure sets contended and aborts at once"
            }
            Variant::FinishcontendV3 => {
                "cb2dcaf023: record contention, finish the pageblock, abort at the aligned compact_finished check"
            }
            Variant::ReschedNotContention => "cf66f0700c8f on top: need_resched no longer sets contended",
            Variant::FatalFix => {
                "670105a25608 on top: a fatal signal makes the migration block scanner return 0 (ISOLATE_ABORT)"
            }
        }
    }
}

impl Variant {
    /// cb2dcaf023: the lock is always taken, contention only recorded, the block finished.
    pub fn finishes_pageblock(self) -> bool {
        !matches!(self, Variant::NorescanV3)
    }
    /// Before cf66f0700c8f, `need_resched()` in async mode sets `cc->contended`.
    pub fn resched_sets_contended(self) -> bool {
        matches!(self, Variant::NorescanV3 | Variant::FinishcontendV3)
    }
    /// 670105a25608: the fatal-signal abort of the migration block scanner returns 0.
    pub fn fatal_returns_zero(self) -> bool {
        matches!(self, Variant::FatalFix)
    }
}

crate::named! {
    /// Which lock a lock-holder takes.
    pub enum HeldLock {
        /// `pgdat->lru_lock` (`zone_lru_lock(zone)`): a task adding pages to the LRU
        /// (`__pagevec_lru_add`).
        LruLock = "lru_lock",
        /// `zone->lock`: a task freeing pages to the buddy lists (`free_one_page`).
        ZoneLock = "zone_lock",
    }
}

impl HeldLock {
    pub fn lock_name(self) -> LockName {
        match self {
            HeldLock::LruLock => LRU_LOCK,
            HeldLock::ZoneLock => ZONE_LOCK,
        }
    }
}

crate::named! {
    /// The compaction model's invariants (their monitors are the checker's; docs/invariants.md
    /// states each one with its kernel source).
    pub enum Invariant {
        Progress = "progress",
        FinishPageblock = "finish-pageblock",
        AbortAfterPageblock = "abort-after-pageblock",
        LockReleased = "lock-released",
        ContendedMonotonic = "contended-monotonic",
        SyncNotContended = "sync-not-contended",
        ScannersOrdered = "scanners-ordered",
    }
}

/// A thread of a compaction scenario.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// A task in compaction: one `compact_zone()` of the whole zone at `mode`. With
    /// [`Order::Pageblock`], a direct compactor for an allocation of pageblock order (a THP
    /// fault); with [`Order::CompactMemory`], a task writing to `/proc/sys/vm/compact_memory`
    /// (`compact_node()`: order -1, always [`Mode::Sync`]).
    Compactor { mode: Mode, order: Order },
    /// A task that takes `lock` `holds` times and does that lock's work under it.
    LockHolder { lock: HeldLock, holds: u32 },
    /// Sends SIGKILL to task `target` (a compactor) at a point the explorer chooses.
    Killer { target: usize },
    /// Sets `need_resched` on task `target` (a compactor) at a point the explorer chooses
    /// (the scheduler tick, or a wake-up of a higher-priority task).
    Resched { target: usize },
}

impl Role {
    pub fn mode(&self) -> Option<Mode> {
        match *self {
            Role::Compactor { mode, .. } => Some(mode),
            _ => None,
        }
    }
    /// A direct compactor at pageblock order in `mode` (the default order).
    pub fn compactor(mode: Mode) -> Role {
        Role::Compactor { mode, order: Order::Pageblock }
    }
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub mutation: Option<Mutation>,
    pub roles: Vec<Role>,
    /// Pageblocks in the zone.
    pub pageblocks: u32,
    /// `pageblock_nr_pages` (512 for 4K pages; a power of two).
    pub pages_per_block: u32,
    /// `SWAP_CLUSTER_MAX` (32): the block scanners drop their lock and check for a fatal
    /// signal (and need_resched) at every pfn that is a multiple of it.
    pub swap_cluster_max: u32,
    /// `COMPACT_CLUSTER_MAX` (32): the migration scanner stops after isolating this many pages
    /// unless it is rescanning (or, after cb2dcaf023, contended).
    pub compact_cluster_max: u32,
    /// Pages per pageblock that are neither on the LRU nor free (unmovable kernel
    /// allocations): both scanners skip them and migration cannot move them, so a pageblock
    /// with one never becomes free. The last `unmovable_per_block` pages of every pageblock.
    pub unmovable_per_block: u32,
}

impl Config {
    pub const DEFAULT_PAGEBLOCKS: u32 = 2;
    pub const DEFAULT_PAGES_PER_BLOCK: u32 = 2;
    pub const DEFAULT_SWAP_CLUSTER_MAX: u32 = 1;
    pub const DEFAULT_COMPACT_CLUSTER_MAX: u32 = 1;
    pub const DEFAULT_UNMOVABLE_PER_BLOCK: u32 = 0;

    /// `zone->zone_start_pfn`: the zone starts at pageblock 1, so no pfn of the zone is 0
    /// (0 is the block scanner's "abort" return value, as in the kernel, where no zone starts
    /// at pfn 0 in practice).
    pub fn zone_start_pfn(&self) -> u32 {
        self.pages_per_block
    }
    /// `zone_end_pfn(zone)`.
    pub fn zone_end_pfn(&self) -> u32 {
        self.zone_start_pfn() + self.pageblocks * self.pages_per_block
    }
    /// Pageblocks the migration scanner starts in (the lower half of the zone, at least one):
    /// every page in them is movable and on the LRU. The other blocks are migration targets
    /// in which every other page, starting with the first, is free. No pageblock starts
    /// entirely free, so `__compact_finished()` cannot succeed before compaction has emptied
    /// one. With `unmovable_per_block = N`, the last N pages of every pageblock (source or
    /// target) are unmovable instead, so no pageblock can ever become free.
    pub fn source_blocks(&self) -> u32 {
        (self.pageblocks / 2).max(1)
    }
    /// Compactors in the scenario.
    pub fn compactors(&self) -> usize {
        self.roles.iter().filter(|r| matches!(r, Role::Compactor { .. })).count()
    }
    /// Whether the node's isolated and LRU counts are kept and `too_many_isolated()` tested:
    /// with more than one compactor. With one, the node's isolated count is 0 whenever its
    /// block scanner is entered: nobody else isolates pages (a lock-holder only adds pages to
    /// the LRU), and every `compact_zone()` iteration migrates or puts back what it isolated
    /// before the next `isolate_migratepages()`; so `0 > lru / 2` is false, and the test
    /// would add explored reads and no behaviour.
    pub fn node_counts(&self) -> bool {
        self.compactors() > 1
    }
    /// The LRU pages of the zone's layout (every `PageState::Lru` page of
    /// [`Config::initial_page`]).
    pub fn zone_lru_pages(&self) -> u64 {
        (self.zone_start_pfn()..self.zone_end_pfn()).filter(|&pfn| self.initial_page(pfn) == PageState::Lru).count()
            as u64
    }
    /// The node's LRU pages at boot: one copy of the zone's LRU pages per compactor. Each
    /// compactor isolates from its own view of the zone (`CompactControl::pages`, docs/model.md,
    /// "Other compactors' isolations"), so the node the counts describe holds every
    /// compactor's pages: no page is counted isolated twice and no count goes below zero.
    pub fn node_lru_pages(&self) -> u64 {
        self.compactors() as u64 * self.zone_lru_pages()
    }
    /// The initial state of the page at `pfn` (in the zone).
    pub fn initial_page(&self, pfn: u32) -> PageState {
        let off = pfn - self.zone_start_pfn();
        let block = off / self.pages_per_block;
        let in_block = off % self.pages_per_block;
        if in_block >= self.pages_per_block - self.unmovable_per_block {
            PageState::Unmovable
        } else if block < self.source_blocks() || in_block % 2 == 1 {
            PageState::Lru
        } else {
            PageState::Buddy
        }
    }
}

/// A page of the zone, as compaction sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageState {
    /// In use, movable, on the LRU (`PageLRU`): a migration source.
    Lru,
    /// Free, in the buddy allocator (`PageBuddy`, order 0).
    Buddy,
    /// Isolated by the migration scanner (on `cc->migratepages`).
    IsolatedMigrate,
    /// Isolated by the free scanner (on `cc->freepages`).
    IsolatedFree,
    /// In use and not movable (neither `PageLRU` nor `PageBuddy`, say a slab page): the
    /// migration scanner and the free scanner both skip it, and it never moves
    /// (`[params] unmovable_per_block`).
    Unmovable,
}

/// Per task: the flags other tasks set on it.
pub struct TaskFlags<P: Platform> {
    /// A SIGKILL is pending (`fatal_signal_pending()`: TIF_SIGPENDING with SIGKILL in
    /// `task->pending`, one flag here). Set once by a killer, never cleared.
    pub sigkill: P::AtomicBool,
    /// TIF_NEED_RESCHED (`need_resched()`): set by the scheduler (a resched role), cleared when
    /// the task schedules (`cond_resched()`). (The kernel keeps both in `thread_info->flags`;
    /// separate cells here keep loom from treating a read of one as racing with a store to the
    /// other, which changes no outcome.)
    pub need_resched: P::AtomicBool,
    /// Ghost copies of the two flags (checker builds only), updated next to each explored
    /// store, so that a loop fingerprint can include the values the task's next reads will
    /// see without adding explored reads.
    pub ghost_sigkill: GhostBool,
    pub ghost_need_resched: GhostBool,
}

/// The zone (and its node's LRU lock).
pub struct Zone<P: Platform> {
    /// `pgdat->lru_lock` (`zone_lru_lock(zone)`).
    pub lru_lock: SpinLock<P>,
    /// The LRU lists, reduced to their length: the work done under `lru_lock`.
    pub nr_lru_pages: P::AtomicU64,
    /// `zone->lock`.
    pub lock: SpinLock<P>,
    /// The buddy free lists, reduced to their page count: the work done under `zone->lock`.
    pub nr_free_pages: P::AtomicU64,
    /// The node's isolated LRU pages, `NR_ISOLATED_ANON + NR_ISOLATED_FILE`
    /// (`node_page_state()`), which `too_many_isolated()` compares with half of the node's LRU
    /// pages (`nr_lru_pages`). Counted only when the node's counts can matter
    /// ([`Kernel::node_counts`]).
    pub nr_isolated: P::AtomicU64,
}

/// The kernel state of one run.
pub struct Kernel<P: Platform> {
    pub sched: Sched<P>,
    pub cfg: Config,
    pub zone: Zone<P>,
    /// Per pid.
    pub flags: Vec<TaskFlags<P>>,
    /// Whether the node's LRU and isolated counts are kept and `too_many_isolated()` is
    /// tested at the entry of the migration block scanner: with more than one compactor
    /// ([`Config::node_counts`]). With one it is never true (see there), and leaving it out
    /// keeps every one-compactor exploration step for step what it was.
    pub node_counts: bool,
    /// The node's LRU pages at boot (`NR_INACTIVE_* + NR_ACTIVE_*`): one copy of the zone's LRU
    /// pages per compactor ([`Config::node_lru_pages`]). `nr_lru_pages` starts at
    /// [`INITIAL_COUNT`] and moves with the node's count, so the count is
    /// `node_lru_base + nr_lru_pages - INITIAL_COUNT`.
    pub node_lru_base: u64,
}

/// Large enough that the counters never underflow.
pub const INITIAL_COUNT: u64 = 1 << 20;

/// The compaction model.
pub struct Compaction;

crate::named! {
    /// A seeded bug of the compaction model.
    pub enum Mutation {
        CompactorInfiniteLoop = "compactor-infinite-loop",
        ContendedSkipsAlignment = "contended-skips-alignment",
        AbortKeepsLock = "abort-keeps-lock",
        RescanClearsContended = "rescan-clears-contended",
        SyncSetsContended = "sync-sets-contended",
        FreeScannerCrosses = "free-scanner-crosses",
        BoundaryIgnoresContended = "boundary-ignores-contended",
        IsolatedCountLeaks = "isolated-count-leaks",
    }
}
