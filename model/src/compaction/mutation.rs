//! The compaction model's seeded bugs ("mutants"): small, named changes to the protocol code
//! that each break one invariant, to show that the check for that invariant can fail
//! (`mmcheck selftest`). The mutated code sits next to the code it breaks, behind
//! `Kernel::mutated()`, which is always false in the runtime build. The list itself is
//! `types.rs`'s (the configuration names it); what each one targets, says and needs is here.

pub use super::types::Mutation;
use super::types::{Compaction, Config, Invariant, Role};
use super::Mode;
use crate::model::Seeded;

impl Seeded<Compaction> for Mutation {
    fn targets(self) -> Invariant {
        match self {
            Mutation::CompactorInfiniteLoop => Invariant::Progress,
            Mutation::ContendedSkipsAlignment => Invariant::FinishPageblock,
            Mutation::AbortKeepsLock => Invariant::LockReleased,
            Mutation::RescanClearsContended => Invariant::ContendedMonotonic,
            Mutation::SyncSetsContended => Invariant::SyncNotContended,
            Mutation::FreeScannerCrosses => Invariant::ScannersOrdered,
            Mutation::BoundaryIgnoresContended => Invariant::AbortAfterPageblock,
            Mutation::IsolatedCountLeaks => Invariant::Progress,
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mutation::CompactorInfiniteLoop => {
                "compact_zone()'s loop never ends (the liveness self-test: an injected infinite loop)."
            }
            Mutation::ContendedSkipsAlignment => {
                "__compact_finished() returns COMPACT_CONTENDED for a contended cc before the pageblock-alignment check."
            }
            Mutation::AbortKeepsLock => {
                "compact_unlock_should_abort() returns for a fatal signal before dropping the lock (the fix's goto fatal_pending then skips the unlock)."
            }
            Mutation::RescanClearsContended => "compact_zone() resets cc->contended along with cc->rescan at every iteration.",
            Mutation::SyncSetsContended => "The lock helper trylocks in every mode, so sync compaction records lock contention too.",
            Mutation::FreeScannerCrosses => {
                "isolate_freepages() scans down to the zone start instead of stopping above the migration scanner's pageblock."
            }
            Mutation::BoundaryIgnoresContended => {
                "__compact_finished() skips its final cc->contended || fatal_signal_pending() test, so a contended async compactor goes on into the next pageblock."
            }
            Mutation::IsolatedCountLeaks => {
                "A page put back or migrated never leaves the node's isolated count (nor goes back on its LRU count), so too_many_isolated() stays true once it is and a sync compactor waits in its loop for ever."
            }
        }
    }

    fn applies(self, cfg: &Config) -> Result<(), String> {
        let modes: Vec<Mode> = cfg.roles.iter().filter_map(Role::mode).collect();
        let has = |r: fn(&Role) -> bool| cfg.roles.iter().any(r);
        match self {
            Mutation::ContendedSkipsAlignment | Mutation::BoundaryIgnoresContended
                if !cfg.variant.finishes_pageblock() =>
            {
                Err(format!(
                    "it changes the contended test of cb2dcaf023's __compact_finished(), which variant {} does not have",
                    cfg.variant
                ))
            }
            Mutation::ContendedSkipsAlignment | Mutation::RescanClearsContended | Mutation::BoundaryIgnoresContended
                if !modes.contains(&Mode::Async) =>
            {
                Err("it changes what async compaction does with cc->contended, and this file has no async compactor"
                    .into())
            }
            Mutation::SyncSetsContended if !modes.iter().any(|m| *m != Mode::Async) => {
                Err("it makes sync compaction trylock, and this file has no sync or sync-light compactor".into())
            }
            Mutation::IsolatedCountLeaks if !cfg.node_counts() => {
                Err("it changes the node's isolated count, which the model keeps only with more than one compactor".into())
            }
            Mutation::IsolatedCountLeaks if !modes.iter().any(|m| *m != Mode::Async) => {
                Err("it makes too_many_isolated() stay true, and this file has no sync or sync-light compactor to wait for it"
                    .into())
            }
            Mutation::AbortKeepsLock if !has(|r| matches!(r, Role::Killer { .. })) => {
                Err("it changes the fatal-signal abort of the block scanners, and this file has no killer".into())
            }
            _ if modes.is_empty() => Err("it changes compact_zone(), and this file has no compactor".into()),
            _ => Ok(()),
        }
    }
}
