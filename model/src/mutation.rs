//! Seeded bugs ("mutants"): small, named changes to the protocol code that break exactly one
//! invariant. Each exists to show that the check for that invariant can fail
//! (`mmcheck selftest`). They are compiled out of the runtime build: protocol code tests for
//! a mutation only when `Ghost::ENABLED`.

/// Which model a mutation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    KswapdStall,
    Compaction,
}

impl ModelKind {
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::KswapdStall => "kswapd-stall",
            ModelKind::Compaction => "compaction",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "kswapd-stall" => Some(ModelKind::KswapdStall),
            "compaction" => Some(ModelKind::Compaction),
            _ => None,
        }
    }
    pub const ALL: [ModelKind; 2] = [ModelKind::KswapdStall, ModelKind::Compaction];
}

macro_rules! mutations {
    ($( $v:ident = $name:literal, $model:ident, $inv:literal, $desc:literal; )*) => {
        /// A seeded bug, selectable by name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Mutation { $( #[doc = $desc] $v, )* }

        impl Mutation {
            pub const ALL: &'static [Mutation] = &[ $( Mutation::$v, )* ];
            /// The stable name used in scenario files and `mmcheck selftest --list`.
            pub fn name(self) -> &'static str { match self { $( Mutation::$v => $name, )* } }
            pub fn model(self) -> ModelKind { match self { $( Mutation::$v => ModelKind::$model, )* } }
            /// The invariant whose check must catch this mutant.
            pub fn targets(self) -> &'static str { match self { $( Mutation::$v => $inv, )* } }
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $( $name => Some(Mutation::$v), )* _ => None }
            }
            /// One line saying what the mutant changes.
            pub fn description(self) -> &'static str {
                match self { $( Mutation::$v => $desc, )* }
            }
        }
    };
}

mutations! {
    // ---- kswapd-stall ----
    StoreNotCmpxchg = "store-not-cmpxchg", KswapdStall, "single-exclusive",
        "Claim kswapd_exclusive with a plain store instead of cmpxchg from NUMA_NO_NODE.";
    ExclusiveTrylocks = "exclusive-trylocks", KswapdStall, "exclusive-never-waits",
        "The exclusive kswapd forgets it is exclusive: it trylocks, and on failure backs off like a loser.";
    StallTwice = "stall-twice", KswapdStall, "stall-once",
        "A loser stalls twice (prepare_to_wait, io_schedule_timeout, finish_wait, again) before taking tree_lock.";
    WakeBeforeReset = "wake-before-reset", KswapdStall, "no-lost-wakeup",
        "zone_balanced() wakes kswapd_contended_wait before it resets kswapd_exclusive.";
    ReleaseWithoutWake = "release-without-wake", KswapdStall, "no-lost-wakeup",
        "zone_balanced() resets kswapd_exclusive and never calls wake_up_interruptible().";
    RecheckBeforeEnqueue = "recheck-before-enqueue", KswapdStall, "no-lost-wakeup",
        "The re-check of kswapd_exclusive is done before prepare_to_wait() instead of after it.";
    NoBarrierClearWbCongested = "no-barrier-clear-wb-congested", KswapdStall, "no-lost-wakeup",
        "clear_wb_congested() without smp_mb__after_atomic() before its lockless waitqueue_active().";
    BalancedKeepsExclusive = "balanced-keeps-exclusive", KswapdStall, "exclusive-released",
        "zone_balanced() clears PGDAT_CONGESTED but never resets kswapd_exclusive (nor wakes the queue).";
    NoBarrierAfterClearCongested = "no-barrier-after-clear-congested", KswapdStall, "congested-cleared",
        "recheck without the smp_mb__after_atomic() after zone_balanced() clears PGDAT_CONGESTED.";
    StallUntilFree = "stall-until-free", KswapdStall, "progress",
        "A loser keeps stalling until kswapd_exclusive is free, however long that takes.";
    KswapdInfiniteLoop = "kswapd-infinite-loop", KswapdStall, "progress",
        "kswapd's reclaim loop never ends (the liveness self-test: an injected infinite loop).";
    BalancedKeepsCongested = "balanced-keeps-congested", KswapdStall, "congested-cleared",
        "zone_balanced() does not clear PGDAT_CONGESTED.";
    ExclusiveKeepsLock = "exclusive-keeps-lock", KswapdStall, "lock-released",
        "The kswapd that wins the cmpxchg returns without spin_unlock(tree_lock).";
    // ---- compaction ----
    CompactorInfiniteLoop = "compactor-infinite-loop", Compaction, "progress",
        "compact_zone()'s loop never ends (the liveness self-test: an injected infinite loop).";
    ContendedSkipsAlignment = "contended-skips-alignment", Compaction, "finish-pageblock",
        "__compact_finished() returns COMPACT_CONTENDED for a contended cc before the pageblock-alignment check.";
    AbortKeepsLock = "abort-keeps-lock", Compaction, "lock-released",
        "compact_unlock_should_abort() returns for a fatal signal before dropping the lock (the fix's goto fatal_pending then skips the unlock).";
    RescanClearsContended = "rescan-clears-contended", Compaction, "contended-monotonic",
        "compact_zone() resets cc->contended along with cc->rescan at every iteration.";
    SyncSetsContended = "sync-sets-contended", Compaction, "sync-not-contended",
        "The lock helper trylocks in every mode, so sync compaction records lock contention too.";
    FreeScannerCrosses = "free-scanner-crosses", Compaction, "scanners-ordered",
        "isolate_freepages() scans down to the zone start instead of stopping above the migration scanner's pageblock.";
}
