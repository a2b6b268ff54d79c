//! The compaction model's events (the kernel primitives' are
//! [`crate::event::KernelEvent`]), and the coverage events derived from a trace.

use core::fmt;

use crate::event::{Event as Ev, LockName};
use crate::model::ProtoEvent;

crate::named! {
    /// `enum migrate_mode` of a compaction.
    pub enum Mode {
        /// MIGRATE_ASYNC: direct compaction at COMPACT_PRIO_ASYNC; the only mode that trylocks.
        Async = "async",
        /// MIGRATE_SYNC_LIGHT: direct compaction at sync priority, kcompactd; always spins.
        SyncLight = "sync-light",
        /// MIGRATE_SYNC: direct compaction at COMPACT_PRIO_SYNC_FULL; always spins.
        Sync = "sync",
    }
}

crate::named! {
    /// The allocation order a compactor compacts for (`cc->order`).
    pub enum Order {
        /// `pageblock_order`: a direct compactor for a huge page (a THP fault), the default.
        Pageblock = "pageblock",
        /// Order -1 (`is_via_compact_memory()`): a write to `/proc/sys/vm/compact_memory`,
        /// `compact_node()` compacting the whole zone in MIGRATE_SYNC, never for an allocation.
        CompactMemory = "compact-memory",
    }
}

/// `pgdat->lru_lock` (`zone_lru_lock(zone)`), taken by the migration scanner.
pub const LRU_LOCK: LockName = LockName::Lock("lru_lock");
/// `zone->lock`, taken by the free scanner.
pub const ZONE_LOCK: LockName = LockName::Lock("zone->lock");

/// Why compaction stopped (the model's subset of `enum compact_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactResult {
    /// `COMPACT_CONTINUE` (the loop goes on).
    Continue,
    /// `COMPACT_COMPLETE`: the scanners met after a whole-zone pass.
    Complete,
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

/// Why `cc->contended` was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContendedWhy {
    /// An async trylock failed.
    Lock,
    /// `need_resched()` in async mode (before cf66f0700c8f).
    NeedResched,
    /// `fatal_signal_pending()`.
    FatalSignal,
}

impl fmt::Display for ContendedWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ContendedWhy::Lock => "lock",
            ContendedWhy::NeedResched => "need_resched",
            ContendedWhy::FatalSignal => "fatal signal",
        })
    }
}

/// `isolate_migrate_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsolateMigrate {
    Abort,
    None,
    Success,
}

impl IsolateMigrate {
    pub fn kernel_name(self) -> &'static str {
        match self {
            IsolateMigrate::Abort => "ISOLATE_ABORT",
            IsolateMigrate::None => "ISOLATE_NONE",
            IsolateMigrate::Success => "ISOLATE_SUCCESS",
        }
    }
}

/// One event of the compaction protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `compact_zone()` starts, in migration mode `mode`, for `order`.
    CompactStart { mode: Mode, order: Order },
    /// An async `compact_lock_irqsave` (or, before cb2dcaf023, `compact_trylock_irqsave`)
    /// found the lock contended and recorded it.
    LockContended { lock: LockName },
    /// `cc->contended` became true.
    ContendedSet { why: ContendedWhy },
    /// `cc->contended` became false again (only a seeded bug does this).
    ContendedCleared,
    /// The migration scanner finished pageblock `block` (scanned to its end).
    BlockFinished { block: u32 },
    /// The migration block scanner aborted inside pageblock `block`, at `pfn`, leaving the
    /// rest of the block unscanned (a stop at COMPACT_CLUSTER_MAX is not an abort).
    BlockAbandoned { block: u32, pfn: u32 },
    /// Async direct compaction met a page it cannot isolate (an unmovable page) at `pfn`:
    /// `isolate_fail` with `skip_on_failure` puts back the `put_back` pages this call isolated
    /// and skips the rest of the pageblock.
    SkipOnFailure { pfn: u32, put_back: u32 },
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
    IsolateMigrate { result: IsolateMigrate, low_pfn: u32 },
    /// `__compact_finished()` returned `result`.
    CompactFinished { result: CompactResult, migrate_pfn: u32 },
    /// A killer role sent SIGKILL to `target`.
    SignalSent { target: usize },
    /// A resched role set `need_resched` on `target`.
    ReschedSet { target: usize },
    /// `too_many_isolated()` at the entry of the migration block scanner found more of the
    /// node's LRU pages isolated than half of those on its LRU: `isolated > lru / 2`.
    TooManyIsolated { isolated: u64, lru: u64 },
}

impl ProtoEvent for Event {
    fn is_detail(&self) -> bool {
        matches!(self, Event::ScannerAt { .. })
    }
}

crate::named! {
    /// The compaction model's coverage events: what `reaches` in a scenario file names and
    /// what the coverage line counts.
    pub enum Coverage {
        LockContended = "lock-contended",
        ContendedSet = "contended-set",
        BlockFinished = "block-finished",
        BlockAbandoned = "block-abandoned",
        /// `compact_zone()` returned COMPACT_CONTENDED from `compact_finished()` at a
        /// pageblock-aligned `migrate_pfn` (derived by the checker from the trace).
        AbortAtBoundary = "abort-at-boundary",
        FatalSeen = "fatal-seen",
        ReschedSeen = "resched-seen",
        ScannersMet = "scanners-met",
        NoProgressIteration = "no-progress-iteration",
        /// `too_many_isolated()` returned true at the entry of the migration block scanner
        /// (possible only with more than one compactor).
        TooManyIsolated = "too-many-isolated",
    }
}

impl Coverage {
    /// The coverage event `ev` counts as (derived ones are the checker's).
    pub fn of(ev: &Ev<Event>) -> Option<Coverage> {
        let Ev::Proto(e) = ev else { return None };
        Some(match e {
            Event::LockContended { .. } => Coverage::LockContended,
            Event::ContendedSet { .. } => Coverage::ContendedSet,
            Event::BlockFinished { .. } => Coverage::BlockFinished,
            Event::BlockAbandoned { .. } => Coverage::BlockAbandoned,
            Event::FatalSeen => Coverage::FatalSeen,
            Event::ReschedSeen => Coverage::ReschedSeen,
            Event::ScannersMet => Coverage::ScannersMet,
            Event::NoProgressIteration { .. } => Coverage::NoProgressIteration,
            Event::TooManyIsolated { .. } => Coverage::TooManyIsolated,
            _ => return None,
        })
    }
}

impl fmt::Display for Event {
    /// The event in kernel terms, one race-diagram cell.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Event::CompactStart { mode, order: Order::Pageblock } => write!(f, "compact_zone() starts ({mode})"),
            Event::CompactStart { mode, order: Order::CompactMemory } => {
                write!(f, "compact_zone() starts ({mode}, order -1: compact_memory)")
            }
            Event::LockContended { lock } => write!(f, "{lock} contended"),
            Event::ContendedSet { why } => write!(f, "cc->contended = true ({why})"),
            Event::ContendedCleared => write!(f, "cc->contended = false!"),
            Event::BlockFinished { block } => write!(f, "pageblock {block} finished"),
            Event::BlockAbandoned { block, pfn } => write!(f, "pageblock {block} ABANDONED at pfn {pfn}"),
            Event::SkipOnFailure { pfn, put_back } => {
                write!(f, "isolate_fail at pfn {pfn}: put back {put_back}, skip to pageblock end")
            }
            Event::ClusterMaxStop { pfn } => write!(f, "COMPACT_CLUSTER_MAX isolated: stop at pfn {pfn}"),
            Event::Migrated { pages, enomem: false } => write!(f, "migrate_pages: {pages} migrated"),
            Event::Migrated { pages, enomem: true } => write!(f, "migrate_pages: {pages} migrated, then -ENOMEM"),
            Event::HeldWork { lock } if lock == ZONE_LOCK => write!(f, "free_one_page (under zone->lock)"),
            Event::HeldWork { lock } => write!(f, "lru_add (under {lock})"),
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
            Event::IsolateMigrate { result, low_pfn } => {
                write!(f, "isolate_migratepages: {} (low_pfn {low_pfn})", result.kernel_name())
            }
            Event::CompactFinished { result, migrate_pfn } => {
                write!(f, "__compact_finished: {} (migrate_pfn {migrate_pfn})", result.kernel_name())
            }
            Event::SignalSent { target } => write!(f, "kill(T{target}, SIGKILL)"),
            Event::ReschedSet { target } => write!(f, "set_tsk_need_resched(T{target})"),
            Event::TooManyIsolated { isolated, lru } => {
                write!(f, "too_many_isolated(): {isolated} isolated > {lru} on the LRU / 2")
            }
        }
    }
}
