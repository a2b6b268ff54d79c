//! mm/vmscan.c with patches 3/4 and 4/4 of the 2016 tree_lock series.
//!
//! Kernel sources: docs/kernel-source.md (`remove_mapping_list()`, `zone_balanced()` and its
//! callers, kswapd's sleep). Where the model leaves something out, the comment says so and why
//! it does not change the verdicts.

use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use super::backing_dev::wait_iff_congested;
use super::{Event, Kernel, Mutation, PGDAT_CONGESTED};
use crate::event::NUMA_NO_NODE;
use crate::kernel::atomic::{clear_bit, cmpxchg, read_once, set_bit, smp_mb__after_atomic};
use crate::kernel::sched::{io_schedule_timeout, loop_summary, Current, TASK_INTERRUPTIBLE};
use crate::kernel::spinlock::{spin_lock, spin_trylock, spin_unlock};
use crate::kernel::wait::{finish_wait, prepare_to_wait, wake_up_interruptible};
use crate::kernel::HZ;
use crate::model::PlatformFor;
use crate::platform::{Atomic, AtomicInt};

/// The pages `shrink_page_list()` queued for one `remove_mapping_list()` call: `nr_pages`
/// locked, unmapped pages of the one file, all on node `nid` (one run of one mapping, so one
/// tree_lock hold; patch 1/4 batches the removal this way).
#[derive(Debug, Clone, Copy)]
pub struct MappingList {
    pub nid: i32,
    pub nr_pages: u32,
}

/// `remove_mapping_list()` (patch 1/4, contended path from 3/4 and 4/4) for one mapping run:
/// take tree_lock, stalling a contending kswapd once, then `__remove_mapping()` every page.
///
/// Direct reclaim and the exclusive kswapd take tree_lock with a blocking spin_lock. Any
/// other kswapd trylocks; on failure it races `cmpxchg(&kswapd_exclusive, NUMA_NO_NODE,
/// nid)`: the winner becomes exclusive and spins; a loser (4/4: sets PGDAT_CONGESTED and)
/// sleeps once on `kswapd_contended_wait` for up to HZ/100, then spins.
pub fn remove_mapping_list<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    pages: MappingList,
    is_kswapd: bool,
) {
    let nid = pages.nid;
    let tree_lock = &k.mapping.tree_lock;
    let mut won_exclusive = false;
    // What this call's future depends on besides its arguments: the caller's state.
    let context = cur.loop_context();

    let exclusive = !k.mutated(cur, Mutation::ExclusiveTrylocks) && nid == read_once::<P>(&k.kswapd_exclusive);
    if !is_kswapd || exclusive {
        if is_kswapd {
            cur.emit(Event::ExclusiveFastPath { node: nid });
        }
        spin_lock(cur, tree_lock);
    } else if !spin_trylock(cur, tree_lock) {
        won_exclusive = contended_acquire(k, cur, nid, context);
    }
    // Live locals: with tree_lock held, all that is left of how it was taken (the fast path,
    // a trylock, the contended path's race and stall) is whether this kswapd won.
    cur.live_locals(loop_summary(context, 17, won_exclusive as u64));

    // __remove_mapping() for each page: the work done under tree_lock.
    k.mapping.nrpages.fetch_sub(pages.nr_pages as u64, Relaxed);
    cur.emit(Event::RemovedPages { pages: pages.nr_pages });

    if won_exclusive && k.mutated(cur, Mutation::ExclusiveKeepsLock) {
        return;
    }
    spin_unlock(cur, tree_lock);
}

/// The contended path of a kswapd whose trylock failed: race to become the exclusive kswapd
/// ("Account for trylock contentions in kswapd"); a loser (4/4: tags its node congested and)
/// stalls once ("Stall kswapd once for 10ms on contention"); then everyone spins on
/// tree_lock. Returns whether this kswapd won. Out of line and cold, as the kernel's
/// `unlikely()` contended path would be, so the uncontended path stays small.
#[cold]
#[inline(never)]
fn contended_acquire<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32, context: u64) -> bool {
    let owner = claim_exclusive(k, cur, nid);
    let won = owner == NUMA_NO_NODE;
    if !won {
        cur.emit(Event::CmpxchgLost { node: nid, owner });
        // Live locals: the owner it lost to is dead (the re-check reads kswapd_exclusive again).
        cur.live_locals(loop_summary(context, 20, 0));
        if k.cfg.variant.sets_pgdat_congested() {
            set_bit::<P>(PGDAT_CONGESTED, &k.pgdat[nid as usize].flags);
            cur.emit(Event::CongestedSet { node: nid });
        }
        contended_stall(k, cur, nid);
        if k.mutated(cur, Mutation::StallTwice) {
            contended_stall(k, cur, nid);
        }
        if k.mutated(cur, Mutation::StallUntilFree) {
            let context = cur.loop_context();
            while read_once::<P>(&k.kswapd_exclusive) != NUMA_NO_NODE && cur.loop_head(loop_summary(context, 1, 0)) {
                contended_stall(k, cur, nid);
            }
        }
    }
    // Live locals: before the spin, what the race and the stall saw is dead (whether it slept,
    // was woken or timed out); only whether it won is live.
    cur.live_locals(loop_summary(context, 16, won as u64));
    spin_lock(cur, &k.mapping.tree_lock);
    won
}

/// `cmpxchg(&kswapd_exclusive, NUMA_NO_NODE, nid)`: returns NUMA_NO_NODE if this kswapd is
/// now exclusive, or the owner it found.
fn claim_exclusive<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) -> i32 {
    if k.mutated(cur, Mutation::StoreNotCmpxchg) {
        // Seeded bug: a plain store (a swap, so the trace can show what it overwrote).
        let prev = k.kswapd_exclusive.swap(nid, Relaxed);
        cur.emit(Event::CmpxchgWon { node: nid, prev });
        return NUMA_NO_NODE;
    }
    let owner = cmpxchg::<P>(&k.kswapd_exclusive, NUMA_NO_NODE, nid);
    if owner == NUMA_NO_NODE {
        cur.emit(Event::CmpxchgWon { node: nid, prev: owner });
    }
    owner
}

/// The loser's one bounded stall: `prepare_to_wait(&kswapd_contended_wait, &wait,
/// TASK_INTERRUPTIBLE); io_schedule_timeout(HZ/100); finish_wait(...)`. The posted patch
/// re-checks nothing; `recheck` skips the sleep unless another node is exclusive now (the one
/// it lost to, or one that won since: then it waits for that node's release).
fn contended_stall<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) {
    let wq = &k.kswapd_contended_wait;
    let recheck = |k: &Kernel<P>| {
        let owner = read_once::<P>(&k.kswapd_exclusive);
        let sleeps = owner != NUMA_NO_NODE && owner != nid;
        cur.emit(Event::Recheck { wq: wq.name, sleeps, exclusive: Some(owner) });
        sleeps
    };
    // What this stall's future depends on besides its arguments: the caller's state.
    let context = cur.loop_context();
    let rechecks = k.cfg.variant.rechecks();
    let recheck_too_early = rechecks && k.mutated(cur, Mutation::RecheckBeforeEnqueue);
    let mut sleep = true;
    if recheck_too_early {
        sleep = recheck(k);
    }
    prepare_to_wait(cur, wq, TASK_INTERRUPTIBLE);
    if rechecks && !recheck_too_early {
        sleep = recheck(k);
    }
    if sleep {
        // Live locals: once it has decided to sleep, what the re-check read is dead.
        cur.live_locals(loop_summary(context, 19, 0));
        io_schedule_timeout(cur, HZ / 100);
    }
    // Live locals: whether it slept, and how the sleep ended, are dead before finish_wait().
    cur.live_locals(loop_summary(context, 21, 0));
    finish_wait(cur, wq);
}

/// `zone_balanced()` on its balanced path (the watermark check passed), with 3/4's release:
/// clear PGDAT_CONGESTED, and if this node is the exclusive kswapd's, reset
/// `kswapd_exclusive` and `wake_up_interruptible(&kswapd_contended_wait)`. The wake happens
/// even if the cmpxchg failed; there is no `waitqueue_active()` test.
///
/// PGDAT_DIRTY is cleared here too in 4.8; no role reads it, so the model leaves it out.
pub fn zone_balanced<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32, by_kswapd: bool) -> bool {
    cur.emit(Event::ZoneBalanced { node: nid, by_kswapd });
    clear_pgdat_congested(k, cur, nid);
    if nid == read_once::<P>(&k.kswapd_exclusive) {
        release_and_wake(k, cur, nid);
    }
    true
}

/// `clear_bit(PGDAT_CONGESTED, &pgdat->flags)`; `recheck` adds `smp_mb__after_atomic()`, which
/// pairs with `set_current_state()` before `wait_iff_congested()`'s re-check.
fn clear_pgdat_congested<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) {
    if k.mutated(cur, Mutation::BalancedKeepsCongested) {
        return;
    }
    clear_bit::<P>(PGDAT_CONGESTED, &k.pgdat[nid as usize].flags);
    if k.cfg.variant.rechecks() && !k.mutated(cur, Mutation::NoBarrierAfterClearCongested) {
        if P::fences_are_steps() {
            // The barrier is a step: mark where the clear itself took effect.
            cur.emit(Event::CongestedClearStored { node: nid });
        }
        smp_mb__after_atomic::<P>();
    }
    cur.emit(Event::CongestedCleared { node: nid });
}

/// 3/4's release: reset `kswapd_exclusive`, then wake the losers on `kswapd_contended_wait`.
/// (The seeded mutants that break this order live here: no release, no wake, wake first.)
fn release_and_wake<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) {
    // What this release's future depends on besides its arguments: the caller's state.
    let context = cur.loop_context();
    if k.mutated(cur, Mutation::BalancedKeepsExclusive) {
        return;
    }
    if k.mutated(cur, Mutation::WakeBeforeReset) {
        wake_up_interruptible(cur, &k.kswapd_contended_wait);
        release_exclusive(k, cur, nid);
        return;
    }
    release_exclusive(k, cur, nid);
    // Live locals: what the release's cmpxchg found is dead before the wake-up.
    cur.live_locals(loop_summary(context, 22, 0));
    if !k.mutated(cur, Mutation::ReleaseWithoutWake) {
        wake_up_interruptible(cur, &k.kswapd_contended_wait);
    }
}

/// `cmpxchg(&kswapd_exclusive, nid, NUMA_NO_NODE)`.
fn release_exclusive<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) {
    let prev = cmpxchg::<P>(&k.kswapd_exclusive, nid, NUMA_NO_NODE);
    cur.emit(Event::Released { node: nid, prev });
}

/// `wakeup_kswapd()` by an allocating task: if the node's kswapd is asleep
/// (`waitqueue_active(&pgdat->kswapd_wait)`) and the zone is balanced, return; this runs the
/// release in a task that is not kswapd. (The final `wake_up_interruptible(&pgdat->kswapd_wait)`
/// concerns kswapd's own sleep, which the model does not follow, and is left out.)
pub fn wakeup_kswapd<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32) {
    let asleep = k.pgdat[nid as usize].kswapd_asleep.load(Acquire);
    cur.emit(Event::WakeupKswapd { node: nid, kswapd_asleep: asleep });
    if !asleep {
        return;
    }
    zone_balanced(k, cur, nid, false);
}

/// kswapd of `nid`: `batches` rounds of `shrink_page_list()` ending in `remove_mapping_list()`,
/// then `kswapd_try_to_sleep()`: `prepare_to_wait(&pgdat->kswapd_wait)` and, if
/// `balances`, `prepare_kswapd_sleep()` finding the node balanced. The indefinite sleep that
/// follows is where the model's kswapd ends.
pub fn kswapd<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    nid: i32,
    batches: u32,
    pages: u32,
    balances: bool,
) {
    // Checkpoints (no-ops but under the stateful engine): between batches kswapd's whole
    // local state is the batch number; how the last batch went is in the shared state.
    let context = cur.loop_context();
    for batch in 0..batches {
        cur.checkpoint(loop_summary(context, 10, batch as u64));
        remove_mapping_list(k, cur, MappingList { nid, nr_pages: pages }, true);
    }
    cur.checkpoint(loop_summary(context, 11, 0));
    kswapd_try_to_sleep(k, cur, nid, balances);
}

/// `kswapd_try_to_sleep()`: kswapd is on `pgdat->kswapd_wait` (what `wakeup_kswapd()`'s
/// `waitqueue_active()` sees), and if `balances`, `prepare_kswapd_sleep()` finds the node
/// balanced.
pub fn kswapd_try_to_sleep<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32, balances: bool) {
    k.pgdat[nid as usize].kswapd_asleep.store(true, Release);
    cur.emit(Event::KswapdSleep { node: nid });
    if balances {
        zone_balanced(k, cur, nid, true);
    }
}

/// A heavy writer of the file: each `add_to_page_cache` takes tree_lock (blocking).
pub fn writer<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, holds: u32, spins: u32) {
    let context = cur.loop_context();
    for hold in 0..holds {
        cur.checkpoint(loop_summary(context, 12, hold as u64));
        spin_lock(cur, &k.mapping.tree_lock);
        for _ in 0..spins {
            core::hint::spin_loop();
        }
        k.mapping.nrpages.fetch_add(1, Relaxed);
        cur.emit(Event::AddedPage);
        spin_unlock(cur, &k.mapping.tree_lock);
    }
}

/// Direct reclaim on `nid`: `shrink_page_list()` → `remove_mapping_list()` (blocking
/// spin_lock), then (with `tags_congested`) `shrink_inactive_list()`'s own PGDAT_CONGESTED
/// tagging, then its `wait_iff_congested(pgdat, BLK_RW_ASYNC, HZ/10)`.
pub fn direct_reclaim<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    nid: i32,
    batches: u32,
    pages: u32,
    tags_congested: bool,
) {
    let context = cur.loop_context();
    for batch in 0..batches {
        cur.checkpoint(loop_summary(context, 13, batch as u64));
        remove_mapping_list(k, cur, MappingList { nid, nr_pages: pages }, false);
        if tags_congested {
            // shrink_inactive_list(): "nr_dirty && nr_dirty == nr_congested" → PGDAT_CONGESTED.
            set_bit::<P>(PGDAT_CONGESTED, &k.pgdat[nid as usize].flags);
            cur.emit(Event::CongestedSet { node: nid });
        }
        wait_iff_congested(k, cur, nid, HZ / 10);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::ghost::NoGhost;
    use crate::kernel::sched::TimerModel;
    use crate::platform::Std;
    use crate::reclaim::{Config, Role, Variant};

    /// The two stalls' lengths, which no verdict depends on (the explorers' timer expires at
    /// any point): a loser stalls up to HZ/100, a direct reclaimer's `wait_iff_congested()`
    /// up to HZ/10 (docs/kernel-source.md). On the real-time timer, with nobody to wake them
    /// (posted 3/4, no re-check), each sleeps at least its timeout, and less than 50 times it:
    /// wide bounds, so that a loaded machine cannot fail the right lengths.
    #[test]
    fn the_stalls_sleep_their_kernel_timeouts() {
        const JIFFY: Duration = Duration::from_micros(200);
        let roles = vec![
            Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true },
            Role::DirectReclaim { node: 0, batches: 1, pages: 1, tags_congested: true },
            Role::Bdi { congested_at_start: true },
        ];
        let cfg =
            Config { variant: Variant::WaitqueueV1, mutation: None, roles, timer: TimerModel::Real { jiffy: JIFFY } };
        let k = Kernel::<Std<NoGhost<Event>>>::new(cfg, Arc::new(NoGhost::default()));
        let within = |what: &str, jiffies: u64, t: Instant| {
            let (slept, timeout) = (t.elapsed(), JIFFY * jiffies as u32);
            assert!(slept >= timeout && slept < timeout * 50, "{what}: slept {slept:?} for a timeout of {timeout:?}");
        };
        let t = Instant::now();
        contended_stall(&k, &k.sched.enter(0), 0);
        within("the loser's stall", 10, t);
        let t = Instant::now();
        direct_reclaim(&k, &k.sched.enter(1), 0, 1, 1, true);
        within("wait_iff_congested()", 100, t);
    }

    /// `wakeup_kswapd()` releases `kswapd_exclusive` for a node whose kswapd sleeps (what
    /// `waitqueue_active(&pgdat->kswapd_wait)` sees) and leaves it to a kswapd still running,
    /// which releases it itself when it balances. No scenario tells the two apart: where the
    /// allocators release, the right code may also find kswapd running and leave the node
    /// exclusive (recheck-sticky-owner-never's finding), so each order is checked here.
    #[test]
    fn wakeup_kswapd_releases_only_for_a_sleeping_kswapd() {
        let roles = vec![Role::Kswapd { node: 0, batches: 1, pages: 1, balances: false }];
        let cfg = Config { variant: Variant::Recheck, mutation: None, roles, timer: TimerModel::AnyTime };
        let k = Kernel::<Std<NoGhost<Event>>>::new(cfg, Arc::new(NoGhost::default()));
        let cur = k.sched.enter(0);
        k.kswapd_exclusive.store(0, Relaxed);
        wakeup_kswapd(&k, &cur, 0);
        assert_eq!(k.kswapd_exclusive.load(Relaxed), 0, "released while kswapd runs");
        k.pgdat[0].kswapd_asleep.store(true, Relaxed);
        wakeup_kswapd(&k, &cur, 0);
        assert_eq!(k.kswapd_exclusive.load(Relaxed), NUMA_NO_NODE, "kept after kswapd sleeps");
    }
}
