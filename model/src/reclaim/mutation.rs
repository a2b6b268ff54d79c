//! The kswapd-stall model's seeded bugs ("mutants"): small, named changes to the protocol
//! code that each break one invariant, to show that the check for that invariant can fail
//! (`mmcheck selftest`). The mutated code sits next to the code it breaks, behind
//! `Kernel::mutated()`, which is always false in the runtime build. The list itself is
//! `types.rs`'s (the configuration names it); what each one targets, says and needs is here.

pub use super::types::Mutation;
use super::types::{Config, Invariant, KswapdStall, Role, Variant};
use crate::model::Seeded;

/// Where a mutation's code runs.
#[derive(Debug, Clone, Copy)]
enum Site {
    /// A kswapd that fails its trylock: needs a kswapd and another user of tree_lock.
    ContendedKswapd,
    /// Any kswapd's reclaim.
    Kswapd,
    /// A node's balanced path: a kswapd that balances, or an allocator.
    Balanced,
    /// `clear_wb_congested()`: a backing device.
    Bdi,
}

impl Mutation {
    fn site(self) -> (Site, Option<Variant>) {
        use Mutation::*;
        match self {
            StoreNotCmpxchg | StallTwice | StallUntilFree | ExclusiveKeepsLock => (Site::ContendedKswapd, None),
            ExclusiveTrylocks | KswapdInfiniteLoop => (Site::Kswapd, None),
            RecheckBeforeEnqueue => (Site::ContendedKswapd, Some(Variant::Recheck)),
            WakeBeforeReset | ReleaseWithoutWake | BalancedKeepsExclusive | BalancedKeepsCongested => {
                (Site::Balanced, None)
            }
            NoBarrierAfterClearCongested => (Site::Balanced, Some(Variant::Recheck)),
            NoBarrierClearWbCongested => (Site::Bdi, None),
        }
    }
}

impl Seeded<KswapdStall> for Mutation {
    fn targets(self) -> Invariant {
        use Mutation::*;
        match self {
            StoreNotCmpxchg => Invariant::SingleExclusive,
            ExclusiveTrylocks => Invariant::ExclusiveNeverWaits,
            StallTwice => Invariant::StallOnce,
            WakeBeforeReset | ReleaseWithoutWake | RecheckBeforeEnqueue | NoBarrierClearWbCongested => {
                Invariant::NoLostWakeup
            }
            BalancedKeepsExclusive => Invariant::ExclusiveReleased,
            NoBarrierAfterClearCongested | BalancedKeepsCongested => Invariant::CongestedCleared,
            StallUntilFree | KswapdInfiniteLoop => Invariant::Progress,
            ExclusiveKeepsLock => Invariant::LockReleased,
        }
    }

    fn description(self) -> &'static str {
        use Mutation::*;
        match self {
            StoreNotCmpxchg => "Claim kswapd_exclusive with a plain store instead of cmpxchg from NUMA_NO_NODE.",
            ExclusiveTrylocks => "The exclusive kswapd forgets it is exclusive: it trylocks, and on failure backs off like a loser.",
            StallTwice => "A loser stalls twice (prepare_to_wait, io_schedule_timeout, finish_wait, again) before taking tree_lock.",
            WakeBeforeReset => "zone_balanced() wakes kswapd_contended_wait before it resets kswapd_exclusive.",
            ReleaseWithoutWake => "zone_balanced() resets kswapd_exclusive and never calls wake_up_interruptible().",
            RecheckBeforeEnqueue => "The re-check of kswapd_exclusive is done before prepare_to_wait() instead of after it.",
            NoBarrierClearWbCongested => "clear_wb_congested() without smp_mb__after_atomic() before its lockless waitqueue_active().",
            BalancedKeepsExclusive => "zone_balanced() clears PGDAT_CONGESTED but never resets kswapd_exclusive (nor wakes the queue).",
            NoBarrierAfterClearCongested => "recheck without the smp_mb__after_atomic() after zone_balanced() clears PGDAT_CONGESTED.",
            StallUntilFree => "A loser keeps stalling until kswapd_exclusive is free, however long that takes.",
            KswapdInfiniteLoop => "kswapd's reclaim loop never ends (the liveness self-test: an injected infinite loop).",
            BalancedKeepsCongested => "zone_balanced() does not clear PGDAT_CONGESTED.",
            ExclusiveKeepsLock => "The kswapd that wins the cmpxchg returns without spin_unlock(tree_lock).",
        }
    }

    fn applies(self, cfg: &Config) -> Result<(), String> {
        let (site, variant) = self.site();
        if let Some(v) = variant {
            if cfg.variant != v {
                return Err(format!(
                    "it changes code that only variant {v} has (this file's variant is {})",
                    cfg.variant
                ));
            }
        }
        let kswapds = cfg.roles.iter().filter(|r| matches!(r, Role::Kswapd { .. })).count();
        let tree_lock_users = cfg
            .roles
            .iter()
            .filter(|r| matches!(r, Role::Kswapd { .. } | Role::Writer { .. } | Role::DirectReclaim { .. }))
            .count();
        let ok = match site {
            Site::Kswapd => kswapds > 0,
            Site::ContendedKswapd => kswapds > 0 && tree_lock_users > 1,
            Site::Balanced => {
                cfg.roles.iter().any(|r| matches!(r, Role::Kswapd { balances: true, .. } | Role::Allocator { .. }))
            }
            Site::Bdi => cfg.roles.iter().any(|r| matches!(r, Role::Bdi { .. })),
        };
        if ok {
            return Ok(());
        }
        Err(match site {
            Site::Kswapd => "it changes kswapd's reclaim, and this file has no kswapd".into(),
            Site::ContendedKswapd => {
                "it changes the contended path of a kswapd, which needs a kswapd and another thread that takes tree_lock".into()
            }
            Site::Balanced => {
                "it changes zone_balanced()'s balanced path, which needs a kswapd with balances = true or an allocator".into()
            }
            Site::Bdi => "it changes clear_wb_congested(), which needs a bdi thread".into(),
        })
    }
}
