//! Typed protocol events: what a task did, in kernel terms.
//!
//! Every event is emitted by the task that performed it, immediately after the explored
//! operation it describes (or, for a release-type event, immediately before it), so the order
//! of events in an execution's trace is the order of those operations in the interleaving.
//! Monitors (`checks/src/monitor`) are functions of this trace; the race diagram prints it.

use core::fmt;

/// The locks of both models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockName {
    /// `mapping->tree_lock` of the single heavily written file.
    TreeLock,
    /// The spinlock inside a wait-queue head.
    WaitQueue(Wq),
    /// `zone_lru_lock(zone)` (migration scanner side of compaction).
    LruLock,
    /// `zone->lock` (free scanner side of compaction).
    ZoneLock,
}

/// The wait queues of the reclaim model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wq {
    /// `kswapd_contended_wait` (patch 3/4), the global queue losers of the cmpxchg sleep on.
    KswapdContended,
    /// `congestion_wqh[BLK_RW_ASYNC]` (mm/backing-dev.c), slept on by `wait_iff_congested`.
    Congestion,
}

/// Why compaction stopped (the model's subset of `enum compact_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactResult {
    /// `COMPACT_CONTINUE` (the loop goes on).
    Continue,
    /// `COMPACT_COMPLETE`: the scanners met after a whole-zone pass.
    Complete,
    /// `COMPACT_PARTIAL_SKIPPED`: the scanners met after a partial pass.
    PartialSkipped,
    /// `COMPACT_SUCCESS`: a free page of the requested order exists.
    Success,
    /// `COMPACT_CONTENDED`: lock contention, `need_resched` or a fatal signal.
    Contended,
    /// `COMPACT_NO_SUITABLE_PAGE`: `__compact_finished()` found nothing to stop for;
    /// `compact_finished()` maps it to `COMPACT_CONTINUE`.
    NoSuitablePage,
}

impl CompactResult {
    pub fn kernel_name(self) -> &'static str {
        match self {
            CompactResult::Continue => "COMPACT_CONTINUE",
            CompactResult::Complete => "COMPACT_COMPLETE",
            CompactResult::PartialSkipped => "COMPACT_PARTIAL_SKIPPED",
            CompactResult::Success => "COMPACT_SUCCESS",
            CompactResult::Contended => "COMPACT_CONTENDED",
            CompactResult::NoSuitablePage => "COMPACT_NO_SUITABLE_PAGE",
        }
    }
}

/// Why a compaction pass aborted (for the `finish-pageblock` exceptions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbortReason {
    /// `compact_finished()` returned `COMPACT_CONTENDED`.
    Contended,
    /// `isolate_migratepages()` returned `ISOLATE_ABORT`.
    IsolateAbort,
    /// `migrate_pages()` failed with `-ENOMEM` and the scanners had not met.
    NoMemory,
    /// The scanners met.
    ScannersMet,
    /// A page of the requested order is free.
    Success,
}

impl AbortReason {
    /// Where the decision was taken, in kernel terms.
    pub fn describe(self) -> &'static str {
        match self {
            AbortReason::Contended => "compact_finished",
            AbortReason::IsolateAbort => "ISOLATE_ABORT",
            AbortReason::NoMemory => "-ENOMEM, not met",
            AbortReason::ScannersMet => "scanners met",
            AbortReason::Success => "page free",
        }
    }
}

/// One protocol event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    // ---- locks (both models) ----
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
    /// The variant's re-check after `prepare_to_wait`; `sleeps` is its decision.
    Recheck { wq: Wq, sleeps: bool },
    /// `io_schedule_timeout(timeout)` entered with the task not running.
    Schedule { timeout: u64 },
    /// `io_schedule_timeout` returned because a waker made the task runnable.
    Woken,
    /// `io_schedule_timeout` returned because the timer expired (timer model `any-time`
    /// chooses when); `jiffies` were slept.
    TimedOut { jiffies: u64 },
    /// Timer model `never`: the task sleeps and nobody is left who could wake it.
    SleptForever,
    /// `finish_wait(wq)`.
    FinishWait { wq: Wq },
    /// `wake_up(wq)` / `wake_up_interruptible(wq)` scanned the queue: `queued` tasks were on it
    /// (a pid mask) and `woken` of them were made runnable.
    WakeUp { wq: Wq, queued: u32, woken: u32 },
    /// `waitqueue_active(wq)` was false, so the waker did not call `wake_up`.
    WakeSkipped { wq: Wq },

    // ---- reclaim: remove_mapping_list, zone_balanced, wait_iff_congested ----
    /// kswapd of `node` saw `kswapd_exclusive == node` (plain load) and took tree_lock
    /// with a blocking `spin_lock`.
    ExclusiveFastPath { node: i32 },
    /// `cmpxchg(kswapd_exclusive, NUMA_NO_NODE, node)` succeeded (`prev` is what it replaced:
    /// always NUMA_NO_NODE for a real cmpxchg; a seeded bug may report otherwise).
    CmpxchgWon { node: i32, prev: i32 },
    /// The cmpxchg failed: `owner` is the exclusive node it saw.
    CmpxchgLost { node: i32, owner: i32 },
    /// `set_bit(PGDAT_CONGESTED, node)` (patch 4/4).
    CongestedSet { node: i32 },
    /// `zone_balanced()` for `node` cleared PGDAT_CONGESTED (and, in `recheck`, issued the
    /// barrier after it).
    CongestedCleared { node: i32 },
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

    // ---- compaction ----
    /// `compact_zone()` starts, in migration mode `mode` ("async", "sync-light", "sync").
    CompactStart { mode: &'static str },
    /// An async `compact_lock_irqsave` (or, before cb2dcaf023, `compact_trylock_irqsave`)
    /// found the lock contended and recorded it.
    LockContended { lock: LockName },
    /// `cc->contended` became true; `why` is "lock", "need_resched" or "fatal signal".
    ContendedSet { why: &'static str },
    /// `cc->contended` became false again (only a seeded bug does this).
    ContendedCleared,
    /// The migration scanner finished pageblock `block` (scanned to its end).
    BlockFinished { block: u32 },
    /// The migration block scanner aborted inside pageblock `block`, at `pfn`, leaving the
    /// rest of the block unscanned (a stop at COMPACT_CLUSTER_MAX is not an abort).
    BlockAbandoned { block: u32, pfn: u32 },
    /// The migration scanner isolated COMPACT_CLUSTER_MAX pages and stops, to resume at `pfn`.
    ClusterMaxStop { pfn: u32 },
    /// `migrate_pages()` migrated `pages` pages; `enomem`: it then failed with `-ENOMEM`
    /// (`compaction_alloc()` found no free page) and the rest are put back.
    Migrated { pages: u32, enomem: bool },
    /// A lock-holder's work under `lock` (adding a page to the LRU, freeing a page).
    HeldWork { lock: LockName },
    /// `compact_zone` ended with `result` at `migrate_pfn` (aligned or not) for `reason`.
    CompactEnd { result: CompactResult, reason: Option<AbortReason>, migrate_pfn: u32, free_pfn: u32 },
    /// `fatal_signal_pending()` observed true.
    FatalSeen,
    /// `need_resched()` observed true.
    ReschedSeen,
    /// The migration and free scanners met.
    ScannersMet,
    /// One iteration of the `compact_zone` loop that changed nothing.
    NoProgressIteration { migrate_pfn: u32 },
    /// A compaction scanner position moved.
    ScannerAt { migrate_pfn: u32, free_pfn: u32 },
    /// Pages isolated by a scanner (`free` = free scanner).
    Isolated { free: bool, pfn: u32, pages: u32 },
    /// `isolate_migratepages()` returned.
    IsolateMigrate { result: &'static str, low_pfn: u32 },
    /// `__compact_finished()` returned `result`.
    CompactFinished { result: CompactResult, migrate_pfn: u32 },
    /// A killer role sent SIGKILL to `target`.
    SignalSent { target: usize },
    /// A resched role set `need_resched` on `target`.
    ReschedSet { target: usize },

    // ---- checker verdict events (emitted by the ghost, not by kernel code) ----
    /// The task's loop came back to a state it had already been in with nobody else left to
    /// change anything: it will repeat forever.
    Livelock { period: usize },
    /// The task exceeded the scenario's step bound.
    StepBound { steps: u64 },
}

impl Event {
    /// The stable coverage name of this event (used by `reaches` in scenario files and by
    /// `mmcheck check --json`), or `None` for trace-only events.
    pub fn coverage_name(&self) -> Option<&'static str> {
        Some(match self {
            Event::TrylockFailed { lock: LockName::TreeLock } => "trylock-failed",
            Event::CmpxchgWon { .. } => "cmpxchg-won",
            Event::CmpxchgLost { .. } => "cmpxchg-lost",
            Event::Enqueued { .. } => "enqueued",
            Event::Woken => "woken",
            Event::TimedOut { .. } => "timed-out",
            Event::Released { node, prev } if node == prev => "released",
            Event::WakeUp { queued: 0, .. } | Event::WakeSkipped { .. } => "wake-empty-queue",
            Event::CongestedSet { .. } => "congested-set",
            Event::CongestedCleared { .. } => "congested-cleared",
            Event::DirectStall { .. } => "direct-stall",
            Event::LockContended { .. } => "lock-contended",
            Event::ContendedSet { .. } => "contended-set",
            Event::BlockFinished { .. } => "block-finished",
            Event::BlockAbandoned { .. } => "block-abandoned",
            Event::FatalSeen => "fatal-seen",
            Event::ReschedSeen => "resched-seen",
            Event::ScannersMet => "scanners-met",
            Event::NoProgressIteration { .. } => "no-progress-iteration",
            _ => return None,
        })
    }

    /// Events that only matter for reading a trace, not for its structure; the race diagram
    /// can omit them (`--verbose` shows them).
    pub fn is_detail(&self) -> bool {
        matches!(
            self,
            Event::LockAcquired { lock: LockName::WaitQueue(_), .. }
                | Event::LockReleased { lock: LockName::WaitQueue(_) }
                | Event::ScannerAt { .. }
        )
    }
}

/// `NUMA_NO_NODE` (-1): no kswapd is exclusive.
pub const NUMA_NO_NODE: i32 = -1;

fn node(n: i32) -> String {
    if n == NUMA_NO_NODE {
        "NUMA_NO_NODE".to_string()
    } else {
        format!("node {n}")
    }
}

fn lock(l: LockName) -> &'static str {
    match l {
        LockName::TreeLock => "tree_lock",
        LockName::WaitQueue(Wq::KswapdContended) => "kswapd_contended_wait.lock",
        LockName::WaitQueue(Wq::Congestion) => "congestion_wqh.lock",
        LockName::LruLock => "lru_lock",
        LockName::ZoneLock => "zone->lock",
    }
}

fn wq(w: Wq) -> &'static str {
    match w {
        Wq::KswapdContended => "kswapd_contended_wait",
        Wq::Congestion => "congestion_wqh",
    }
}

fn pids(mask: u32) -> String {
    if mask == 0 {
        return "nobody".to_string();
    }
    let v: Vec<String> = (0..32).filter(|i| mask & (1 << i) != 0).map(|i| format!("T{i}")).collect();
    v.join(",")
}

impl fmt::Display for Event {
    /// The event in kernel terms, one race-diagram cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Event::LockAcquired { lock: l, trylock: true } => write!(f, "spin_trylock({}) ok", lock(l)),
            Event::LockAcquired { lock: l, trylock: false } => write!(f, "spin_lock({})", lock(l)),
            Event::TrylockFailed { lock: l } => write!(f, "spin_trylock({}) FAILS", lock(l)),
            Event::LockReleased { lock: l } => write!(f, "spin_unlock({})", lock(l)),
            Event::LockRecursion { lock: l } => write!(f, "spin_lock({}) while holding it!", lock(l)),
            Event::LockLeaked { lock: l } => write!(f, "exits holding {}!", lock(l)),
            Event::Enqueued { wq: w } => write!(f, "prepare_to_wait({})", wq(w)),
            Event::Recheck { wq: _, sleeps: true } => write!(f, "re-check: still wait"),
            Event::Recheck { wq: _, sleeps: false } => write!(f, "re-check: skip the sleep"),
            Event::Schedule { timeout } => write!(f, "io_schedule_timeout({timeout}) sleeps"),
            Event::Woken => write!(f, "woken"),
            Event::TimedOut { jiffies } => write!(f, "timer expires ({jiffies} jiffies slept)"),
            Event::SleptForever => write!(f, "sleeps forever: nobody left to wake it"),
            Event::FinishWait { wq: w } => write!(f, "finish_wait({})", wq(w)),
            Event::WakeUp { wq: w, queued, woken } => {
                let what = if w == Wq::KswapdContended { "wake_up_interruptible" } else { "wake_up" };
                if queued == 0 {
                    write!(f, "{what}({}): queue EMPTY", wq(w))
                } else {
                    write!(f, "{what}({}) wakes {}", wq(w), pids(woken))
                }
            }
            Event::WakeSkipped { wq: w } => write!(f, "waitqueue_active({}) false: no wake", wq(w)),
            Event::ExclusiveFastPath { node: n } => write!(f, "kswapd_exclusive == {}: spin_lock", n),
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
            Event::CompactStart { mode } => write!(f, "compact_zone() starts ({mode})"),
            Event::LockContended { lock: l } => write!(f, "{} contended", lock(l)),
            Event::ContendedSet { why } => write!(f, "cc->contended = true ({why})"),
            Event::ContendedCleared => write!(f, "cc->contended = false!"),
            Event::BlockFinished { block } => write!(f, "pageblock {block} finished"),
            Event::BlockAbandoned { block, pfn } => write!(f, "pageblock {block} ABANDONED at pfn {pfn}"),
            Event::ClusterMaxStop { pfn } => write!(f, "COMPACT_CLUSTER_MAX isolated: stop at pfn {pfn}"),
            Event::Migrated { pages, enomem: false } => write!(f, "migrate_pages: {pages} migrated"),
            Event::Migrated { pages, enomem: true } => write!(f, "migrate_pages: {pages} migrated, then -ENOMEM"),
            Event::HeldWork { lock: l } => match l {
                LockName::ZoneLock => write!(f, "free_one_page (under zone->lock)"),
                _ => write!(f, "lru_add (under {})", lock(l)),
            },
            Event::CompactEnd { result, reason, migrate_pfn, free_pfn: _ } => {
                write!(f, "returns {} at pfn {migrate_pfn}", result.kernel_name())?;
                if let Some(r) = reason {
                    write!(f, " ({})", r.describe())?;
                }
                Ok(())
            }
            Event::FatalSeen => write!(f, "fatal_signal_pending() true"),
            Event::ReschedSeen => write!(f, "need_resched() true"),
            Event::ScannersMet => write!(f, "scanners met"),
            Event::NoProgressIteration { migrate_pfn } => {
                write!(f, "compact_zone iteration: no progress (migrate_pfn {migrate_pfn})")
            }
            Event::ScannerAt { migrate_pfn, free_pfn } => write!(f, "migrate_pfn {migrate_pfn}, free_pfn {free_pfn}"),
            Event::Isolated { free, pfn, pages } => {
                write!(f, "isolate {} {pages} page(s) at pfn {pfn}", if free { "free" } else { "migrate" })
            }
            Event::IsolateMigrate { result, low_pfn } => write!(f, "isolate_migratepages: {result} (low_pfn {low_pfn})"),
            Event::CompactFinished { result, migrate_pfn } => {
                write!(f, "__compact_finished: {} (migrate_pfn {migrate_pfn})", result.kernel_name())
            }
            Event::SignalSent { target } => write!(f, "kill(T{target}, SIGKILL)"),
            Event::ReschedSet { target } => write!(f, "set_tsk_need_resched(T{target})"),
            Event::Livelock { period } => write!(f, "LOOPS FOREVER: state repeats every {period} iteration(s)"),
            Event::StepBound { steps } => write!(f, "STEP BOUND exceeded ({steps} steps)"),
        }
    }
}
