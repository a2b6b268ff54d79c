//! "mm, compaction: finish pageblock scanning on contention" (Mel Gorman, v3 13/22, upstream
//! cb2dcaf023, 5.1) and the versions around it, as a model.
//!
//! * [`compaction`]: mm/compaction.c as the variants have it: `compact_zone()`,
//!   `__compact_finished()`, `isolate_migratepages()`, `isolate_migratepages_block()`,
//!   `isolate_freepages()`, `isolate_freepages_block()`, `compaction_alloc()`,
//!   `migrate_pages()` (as far as compaction sees it), the lock helpers
//!   `compact_trylock_irqsave()` / `compact_lock_irqsave()`, `compact_unlock_should_abort()`,
//!   `compact_should_abort()` / `compact_check_resched()`, and the roles that race with them.
//!
//! Kernel reference: `../shared/docs/kernel-reference.md` Part B. What the model leaves out,
//! and why that does not change the verdicts, is said where it is left out.
//!
//! # What is shared and what is private
//!
//! Only what other tasks touch is explored memory: the two locks (`pgdat->lru_lock`, taken by
//! the migration scanner, and `zone->lock`, taken by the free scanner), the work each lock
//! protects (the LRU list and the buddy free lists, reduced to one counter each: without an
//! explored step inside a critical section loom never sees the lock held), and each task's
//! `fatal_signal_pending()` and `need_resched()` flags. The compactor's `compact_control` and
//! its view of the zone's pages are plain Rust state of the compactor's thread, as
//! `compact_control` is in the kernel (it lives on the compacting task's stack).

#[allow(clippy::module_inception)]
pub mod compaction;

use std::sync::atomic::AtomicBool as GhostBool;
use std::sync::Arc;

use core::sync::atomic::Ordering::Relaxed;

use crate::event::{Event, LockName};
use crate::ghost::{Ghost, MAX_TASKS};
use crate::kernel::sched::{Current, Sched, TimerModel};
use crate::kernel::spinlock::{spin_is_held, SpinLock};
use crate::mutation::{ModelKind, Mutation};
use crate::platform::{Atomic, Platform};

/// The versions of the series the model knows, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The series state before cb2dcaf023 ("norescan-v3r16", after 12/22): an async trylock
    /// failure sets `cc->contended` and the block scanner breaks out at once;
    /// `isolate_migratepages()` returns ISOLATE_ABORT on `!low_pfn || cc->contended`;
    /// `__compact_finished()` tests `contended || fatal_signal_pending()` on its first line;
    /// `need_resched()` in async mode sets `contended` and aborts.
    NorescanV3,
    /// cb2dcaf023 applied ("finishcontend-v3r16", 13/22): `compact_lock_irqsave()` always
    /// takes the lock and only records contention; the 32-page stop is lifted while contended;
    /// ISOLATE_ABORT only on `!low_pfn`; the contended/fatal test moves to the end of
    /// `__compact_finished()`, after the pageblock-alignment check. `need_resched()` in async
    /// mode still sets `contended` but no longer aborts.
    FinishcontendV3,
    /// cf66f0700c8f on top ("do not consider a need to reschedule as contention"):
    /// `need_resched()` only reschedules; `contended` is set by an async trylock failure or a
    /// fatal signal.
    ReschedNotContention,
    /// 670105a25608 on top ("avoid 100% CPU usage during compaction when a task is killed"):
    /// when `compact_unlock_should_abort()` aborts the migration block scanner (a fatal
    /// signal), the block returns `low_pfn = 0`, which `isolate_migratepages()` turns into
    /// ISOLATE_ABORT and `compact_zone()` into COMPACT_CONTENDED.
    FatalFix,
}

impl Variant {
    pub const ALL: [Variant; 4] =
        [Variant::NorescanV3, Variant::FinishcontendV3, Variant::ReschedNotContention, Variant::FatalFix];
    pub fn name(self) -> &'static str {
        match self {
            Variant::NorescanV3 => "norescan-v3",
            Variant::FinishcontendV3 => "finishcontend-v3",
            Variant::ReschedNotContention => "resched-not-contention",
            Variant::FatalFix => "fatal-fix",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == s)
    }
    pub fn description(self) -> &'static str {
        match self {
            Variant::NorescanV3 => "the series before cb2dcaf023: async trylock failure sets contended and aborts at once",
            Variant::FinishcontendV3 => "cb2dcaf023: record contention, finish the pageblock, abort at the aligned compact_finished check",
            Variant::ReschedNotContention => "cf66f0700c8f on top: need_resched no longer sets contended",
            Variant::FatalFix => "670105a25608 on top: a fatal signal makes the migration block scanner return 0 (ISOLATE_ABORT)",
        }
    }
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

/// `enum migrate_mode` of a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// MIGRATE_ASYNC: direct compaction at COMPACT_PRIO_ASYNC; the only mode that trylocks.
    Async,
    /// MIGRATE_SYNC_LIGHT: direct compaction at sync priority, kcompactd; always spins.
    SyncLight,
    /// MIGRATE_SYNC: direct compaction at COMPACT_PRIO_SYNC_FULL; always spins.
    Sync,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Async, Mode::SyncLight, Mode::Sync];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Async => "async",
            Mode::SyncLight => "sync-light",
            Mode::Sync => "sync",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Which lock a lock-holder takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeldLock {
    /// `pgdat->lru_lock` (`zone_lru_lock(zone)`): a task adding pages to the LRU
    /// (`__pagevec_lru_add`).
    LruLock,
    /// `zone->lock`: a task freeing pages to the buddy lists (`free_one_page`).
    ZoneLock,
}

impl HeldLock {
    pub const ALL: [HeldLock; 2] = [HeldLock::LruLock, HeldLock::ZoneLock];
    /// The name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            HeldLock::LruLock => "lru_lock",
            HeldLock::ZoneLock => "zone_lock",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            // "lru" and "zone" are the spellings of the scenario format's first draft (issue 4).
            "lru_lock" | "lru" => Some(HeldLock::LruLock),
            "zone_lock" | "zone->lock" | "zone" => Some(HeldLock::ZoneLock),
            _ => None,
        }
    }
    pub fn lock_name(self) -> LockName {
        match self {
            HeldLock::LruLock => LockName::LruLock,
            HeldLock::ZoneLock => LockName::ZoneLock,
        }
    }
}

/// A thread of a compaction scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// A task in direct compaction: one `compact_zone()` of the zone at `mode`, for an
    /// allocation of pageblock order (a THP fault).
    Compactor { mode: Mode },
    /// A task that takes `lock` `holds` times and does that lock's work under it.
    LockHolder { lock: HeldLock, holds: u32 },
    /// Sends SIGKILL to task `target` (a compactor) at a point the explorer chooses.
    Killer { target: usize },
    /// Sets `need_resched` on task `target` (a compactor) at a point the explorer chooses
    /// (the scheduler tick, or a wake-up of a higher-priority task).
    Resched { target: usize },
}

impl Role {
    pub fn kind(&self) -> &'static str {
        match self {
            Role::Compactor { .. } => "compactor",
            Role::LockHolder { .. } => "lock-holder",
            Role::Killer { .. } => "killer",
            Role::Resched { .. } => "resched",
        }
    }
    /// The thread's name in traces.
    pub fn comm(&self) -> String {
        match self {
            Role::Compactor { mode } => format!("compactor({})", mode.name()),
            Role::LockHolder { lock: HeldLock::LruLock, .. } => "lru-holder".into(),
            Role::LockHolder { lock: HeldLock::ZoneLock, .. } => "zone-holder".into(),
            Role::Killer { target } => format!("killer(T{target})"),
            Role::Resched { target } => format!("resched(T{target})"),
        }
    }
    pub fn mode(&self) -> Option<Mode> {
        match *self {
            Role::Compactor { mode } => Some(mode),
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
}

impl Config {
    pub const DEFAULT_PAGEBLOCKS: u32 = 2;
    pub const DEFAULT_PAGES_PER_BLOCK: u32 = 2;
    pub const DEFAULT_SWAP_CLUSTER_MAX: u32 = 1;
    pub const DEFAULT_COMPACT_CLUSTER_MAX: u32 = 1;

    /// Checks that the configuration is one the kernel (scaled down) could have.
    pub fn validate(&self) -> Result<(), String> {
        if !self.roles.iter().any(|r| matches!(r, Role::Compactor { .. })) {
            return Err("a compaction scenario needs at least one compactor".into());
        }
        if self.roles.len() > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} threads"));
        }
        if !(2..=8).contains(&self.pageblocks) {
            return Err(format!("pageblocks = {} is out of range 2..=8", self.pageblocks));
        }
        let ppb = self.pages_per_block;
        if !(2..=16).contains(&ppb) || !ppb.is_power_of_two() {
            return Err(format!("pages_per_block = {ppb} must be a power of two in 2..=16 (pageblock_nr_pages is 1 << pageblock_order)"));
        }
        let scm = self.swap_cluster_max;
        if scm == 0 || !scm.is_power_of_two() || scm > ppb {
            return Err(format!(
                "swap_cluster_max = {scm} must be a power of two no larger than pages_per_block = {ppb} (SWAP_CLUSTER_MAX divides pageblock_nr_pages)"
            ));
        }
        if self.compact_cluster_max == 0 || self.compact_cluster_max > ppb * self.pageblocks {
            return Err(format!("compact_cluster_max = {} is out of range 1..={}", self.compact_cluster_max, ppb * self.pageblocks));
        }
        for (pid, r) in self.roles.iter().enumerate() {
            if let Role::Killer { target } | Role::Resched { target } = *r {
                match self.roles.get(target) {
                    Some(Role::Compactor { .. }) => {}
                    _ => {
                        return Err(format!(
                            "thread {pid} ({}) targets T{target}, which is not a compactor",
                            r.kind()
                        ))
                    }
                }
            }
            if let Role::LockHolder { holds, .. } = *r {
                if holds == 0 {
                    return Err(format!("thread {pid}: a lock-holder takes its lock at least once"));
                }
            }
        }
        if let Some(m) = self.mutation {
            if m.model() != ModelKind::Compaction {
                return Err(format!("mutation {} belongs to the {} model", m.name(), m.model().name()));
            }
        }
        Ok(())
    }

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
    /// one.
    pub fn source_blocks(&self) -> u32 {
        (self.pageblocks / 2).max(1)
    }
    /// The initial state of the page at `pfn` (in the zone).
    pub fn initial_page(&self, pfn: u32) -> PageState {
        let off = pfn - self.zone_start_pfn();
        let block = off / self.pages_per_block;
        let in_block = off % self.pages_per_block;
        if block < self.source_blocks() || in_block % 2 == 1 {
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
}

/// The kernel state of one run.
pub struct Compaction<P: Platform> {
    pub sched: Sched<P>,
    pub cfg: Config,
    pub zone: Zone<P>,
    /// Per pid.
    pub flags: Vec<TaskFlags<P>>,
}

/// What the state looks like when every thread has finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalState {
    /// `lru_lock` still held (a ghost observation).
    pub lru_lock_held: bool,
    /// `zone->lock` still held (a ghost observation).
    pub zone_lock_held: bool,
}

/// Large enough that the counters never underflow.
const INITIAL_COUNT: u64 = 1 << 20;

impl<P: Platform> Compaction<P> {
    pub fn new(cfg: Config, ghost: Arc<P::Ghost>) -> Self {
        let comms = cfg.roles.iter().map(Role::comm).collect();
        // Compaction has no timers; the timer model is never consulted.
        let sched = Sched::new(comms, TimerModel::Never, ghost);
        let flags = cfg
            .roles
            .iter()
            .map(|_| TaskFlags {
                sigkill: P::AtomicBool::new(false),
                need_resched: P::AtomicBool::new(false),
                ghost_sigkill: GhostBool::new(false),
                ghost_need_resched: GhostBool::new(false),
            })
            .collect();
        Compaction {
            sched,
            zone: Zone {
                lru_lock: SpinLock::new(LockName::LruLock),
                nr_lru_pages: P::AtomicU64::new(INITIAL_COUNT),
                lock: SpinLock::new(LockName::ZoneLock),
                nr_free_pages: P::AtomicU64::new(INITIAL_COUNT),
            },
            flags,
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
        match self.cfg.roles[pid] {
            Role::Compactor { mode } => {
                compaction::compact_zone(self, &cur, mode);
            }
            Role::LockHolder { lock, holds } => compaction::lock_holder(self, &cur, lock, holds),
            Role::Killer { target } => send_sigkill(self, &cur, target),
            Role::Resched { target } => set_tsk_need_resched(self, &cur, target),
        }
        // do_exit(): no lock may be held any more.
        for lock in [&self.zone.lru_lock, &self.zone.lock] {
            lock.release_if_leaked(&cur);
        }
        cur.exit();
    }

    /// Read the final state (call after every thread has been joined).
    pub fn final_state(&self) -> FinalState {
        FinalState { lru_lock_held: spin_is_held(&self.zone.lru_lock), zone_lock_held: spin_is_held(&self.zone.lock) }
    }
}

/// The killer: `kill(target, SIGKILL)`. Signal delivery (`siglock`, `signal_wake_up()`) is
/// reduced to setting the flag `fatal_signal_pending()` reads.
pub fn send_sigkill<P: Platform>(k: &Compaction<P>, cur: &Current<P>, target: usize) {
    let f = &k.flags[target];
    f.sigkill.store(true, Relaxed);
    if P::Ghost::ENABLED {
        f.ghost_sigkill.store(true, Relaxed);
    }
    cur.emit(Event::SignalSent { target });
}

/// The scheduler: `set_tsk_need_resched(target)`.
pub fn set_tsk_need_resched<P: Platform>(k: &Compaction<P>, cur: &Current<P>, target: usize) {
    let f = &k.flags[target];
    f.need_resched.store(true, Relaxed);
    if P::Ghost::ENABLED {
        f.ghost_need_resched.store(true, Relaxed);
    }
    cur.emit(Event::ReschedSet { target });
}

/// Run one execution of `cfg` on platform `P`: spawn every role, join them, return the
/// final state. This is the same function under loom, shuttle and real threads.
pub fn run<P: Platform>(cfg: &Config, ghost: Arc<P::Ghost>) -> FinalState {
    let k = Arc::new(Compaction::<P>::new(cfg.clone(), ghost));
    let names = cfg.roles.iter().map(Role::comm).collect();
    let kk = Arc::clone(&k);
    crate::kernel::sched::run_tasks::<P, _>(names, Arc::new(move |pid| kk.run_task(pid)));
    k.final_state()
}
