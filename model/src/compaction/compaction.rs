//! mm/compaction.c around cb2dcaf023 ("mm, compaction: finish pageblock scanning on
//! contention"), for the four [`Variant`]s.
//!
//! Kernel sources: docs/kernel-source.md (the lock helpers before and after cb2dcaf023, the
//! consumers of `cc->contended`, `compact_zone()` and `__compact_finished()` after it, and the
//! 670105a25608 fix). Function names are the kernel's.
//!
//! # `too_many_isolated()`
//!
//! Modelled with more than one compactor ([`Kernel::node_counts`]): the node's LRU and isolated
//! counts are platform atomics (`Zone::nr_lru_pages`, `Zone::nr_isolated`) every compactor
//! updates where it isolates, migrates and puts back pages, and `isolate_migratepages_block()`
//! tests `too_many_isolated()` at its entry: async compaction returns 0, the other modes sleep
//! in `congestion_wait(BLK_RW_ASYNC, HZ/10)` (its timer always expires, at a point the explorer
//! chooses: nothing in the model wakes the congestion queue), return 0 on a fatal signal, and
//! test again. Each compactor isolates from its own view of the zone, so the node holds one
//! copy of the zone's LRU pages per compactor ([`super::Config::node_lru_pages`]). With one
//! compactor the test is never true (the node's isolated count is 0 at every block entry:
//! nobody else isolates, and each `compact_zone()` iteration migrates or puts back what it
//! isolated before the next), so neither the counts nor the test are made, and every
//! one-compactor exploration is what it was. Left out of it: `node_page_state()`'s per-cpu
//! drift, and the pagevec that delays the LRU add of a page put back or migrated
//! (docs/model.md, "What the compaction model leaves out", the `too_many_isolated()` row).
//!
//! # What the model leaves out, and why the verdicts do not depend on it
//!
//! * Pageblock skip hints (`isolation_suitable()`, `test_and_set_skip()`,
//!   `update_pageblock_skip()`), cached scanner positions, `fast_find_migrateblock()`: every
//!   `compact_zone()` here starts at the zone's ends, and a single compactor never finds a
//!   skip bit it did not set itself on an aligned pfn it has already passed.
//! * Pageblock migratetypes (`suitable_migration_source/target()`, fallbacks): every block is
//!   MIGRATE_MOVABLE and the allocation is movable, so every block is suitable and a free
//!   pageblock is a success.
//! * Compound pages, high-order buddies, non-LRU movable pages, dirty/writeback pages and
//!   migration failures other than `-ENOMEM`: every page is an order-0 LRU page or an order-0
//!   free page, so `isolate_fail`/`skip_on_failure` and the `-EAGAIN` paths are never taken.
//!   That is also why MIGRATE_SYNC_LIGHT and MIGRATE_SYNC behave alike here: they differ in
//!   how dirty and writeback pages are migrated.
//! * Compaction for an order other than pageblock order and -1: a compactor is either a direct
//!   compactor for a pageblock-order allocation (a THP fault) or, with
//!   [`Order::CompactMemory`], a write to `/proc/sys/vm/compact_memory` (`compact_node()`:
//!   order -1, MIGRATE_SYNC, whole zone, skip hints ignored, not a direct compactor).
//! * The locks that migration itself takes (page lock, `mapping->i_pages`), pagevecs and
//!   per-cpu page lists: `migrate_pages()` is the compactor's own bookkeeping; a migrated
//!   source page is free at once (the kernel drains the per-cpu lists at `check_drain` when the
//!   scanner leaves the pageblock, before the aligned `__compact_finished()` that could see it).
//!   `putback_movable_pages()` and `release_freepages()` go through pagevecs and per-cpu lists
//!   too, so they take no lock here.
//! * `compaction_suitable()` and the watermark checks before the loop: the zone is taken to
//!   be worth compacting (free pages exist, but no free pageblock).
//! * `last_migrated_pfn` is tracked as 5.1 does (a local of `compact_zone()`, set to the
//!   iteration's start pfn on ISOLATE_SUCCESS) in every variant; the earlier
//!   `cc->last_migrated_pfn` (the first pfn isolated) lies in the same pageblock, so
//!   `cc->rescan`, which compares pageblocks, gets the same values.

use core::sync::atomic::Ordering::Relaxed;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::{
    AbortReason, CompactResult, ContendedWhy, Event, HeldLock, IsolateMigrate, Kernel, Mode, Mutation, Order,
    PageState, Variant,
};
use crate::ghost::Ghost;
use crate::kernel::sched::{
    io_schedule_timeout, loop_summary, set_current_state, Current, Summary, TASK_UNINTERRUPTIBLE,
};
use crate::kernel::spinlock::{spin_lock, spin_trylock, spin_unlock, SpinLock};
use crate::kernel::HZ;
use crate::model::PlatformFor;
use crate::platform::{Atomic, AtomicInt};

/// `struct compact_control`: private to the compacting task (it lives on its stack), so plain
/// state, never explored memory. The zone's pages as this compactor sees them are kept here
/// too (see the module docs of [`super`]).
#[derive(Debug, Clone)]
pub struct CompactControl {
    pub mode: Mode,
    /// `cc->order`: pageblock order, or -1 for `/proc/sys/vm/compact_memory`.
    pub order: Order,
    /// `cc->migrate_pfn`: where the migration scanner resumes.
    pub migrate_pfn: u32,
    /// `cc->free_pfn`: where the free scanner resumes.
    pub free_pfn: u32,
    /// `cc->contended`.
    contended: bool,
    /// `cc->rescan` (renamed `finish_pageblock` in 6.3).
    pub rescan: bool,
    /// `cc->nr_migratepages` / `cc->migratepages` (pfns; `list_add` at the head).
    pub nr_migratepages: u32,
    pub migratepages: Vec<u32>,
    /// `cc->nr_freepages` / `cc->freepages` (pfns; `list_add_tail`, taken from the head).
    pub nr_freepages: u32,
    pub freepages: Vec<u32>,
    /// The zone's pages, index `pfn - zone_start_pfn`.
    pub pages: Vec<PageState>,
    /// Scanner positions last reported in a `ScannerAt` event.
    shown: Option<(u32, u32)>,
    /// The checker stopped the `too_many_isolated()` loop (a `progress` violation it has
    /// recorded): the block scanner returned 0 and `compact_zone()` ends at once.
    stopped: bool,
}

impl CompactControl {
    /// A `compact_control` in `mode` and `order` with its scanners at `migrate_pfn` and
    /// `free_pfn`, nothing isolated, and the compactor's view of the zone as it starts.
    fn new(cfg: &super::Config, mode: Mode, order: Order, migrate_pfn: u32, free_pfn: u32) -> Self {
        CompactControl {
            mode,
            order,
            migrate_pfn,
            free_pfn,
            contended: false,
            rescan: false,
            nr_migratepages: 0,
            migratepages: Vec::new(),
            nr_freepages: 0,
            freepages: Vec::new(),
            pages: (cfg.zone_start_pfn()..cfg.zone_end_pfn()).map(|pfn| cfg.initial_page(pfn)).collect(),
            shown: None,
            stopped: false,
        }
    }
    /// `cc->contended = true`, reporting the transition.
    fn set_contended<P: PlatformFor<Event>>(&mut self, cur: &Current<P>, why: ContendedWhy) {
        if !self.contended {
            self.contended = true;
            cur.emit(Event::ContendedSet { why });
        }
    }
    /// `cc->contended = false` (only a seeded bug does this).
    fn clear_contended<P: PlatformFor<Event>>(&mut self, cur: &Current<P>) {
        if self.contended {
            self.contended = false;
            cur.emit(Event::ContendedCleared);
        }
    }
    /// Report the scanner positions if they moved.
    fn note_scanners<P: PlatformFor<Event>>(&mut self, cur: &Current<P>) {
        let now = (self.migrate_pfn, self.free_pfn);
        if self.shown != Some(now) {
            self.shown = Some(now);
            cur.emit(Event::ScannerAt { migrate_pfn: now.0, free_pfn: now.1 });
        }
    }
}

/// Everything a `compact_zone()` iteration can change: if an iteration ends where it started,
/// it made no progress; if a loop head sees the same key (and the same flags) twice with every
/// other task finished, the loop runs forever.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LoopState {
    migrate_pfn: u32,
    free_pfn: u32,
    contended: bool,
    nr_migratepages: u32,
    migratepages: Vec<u32>,
    nr_freepages: u32,
    freepages: Vec<u32>,
    last_migrated_pfn: u32,
    pages: Vec<PageState>,
}

impl LoopState {
    fn of(cc: &CompactControl, last_migrated_pfn: u32) -> Self {
        LoopState {
            migrate_pfn: cc.migrate_pfn,
            free_pfn: cc.free_pfn,
            contended: cc.contended,
            nr_migratepages: cc.nr_migratepages,
            migratepages: cc.migratepages.clone(),
            nr_freepages: cc.nr_freepages,
            freepages: cc.freepages.clone(),
            last_migrated_pfn,
            pages: cc.pages.clone(),
        }
    }
}

// ---------------------------------------------------------------- pfn arithmetic

impl<P: PlatformFor<Event>> Kernel<P> {
    fn ppb(&self) -> u32 {
        self.cfg.pages_per_block
    }
    /// `pageblock_start_pfn(pfn)`.
    fn pageblock_start_pfn(&self, pfn: u32) -> u32 {
        pfn & !(self.ppb() - 1)
    }
    /// `pageblock_end_pfn(pfn)`; with `cc->order == pageblock_order` this is also
    /// `block_end_pfn(pfn, cc->order)`.
    fn pageblock_end_pfn(&self, pfn: u32) -> u32 {
        self.pageblock_start_pfn(pfn) + self.ppb()
    }
    fn page_index(&self, pfn: u32) -> usize {
        (pfn - self.cfg.zone_start_pfn()) as usize
    }
    /// `compact_scanners_met()`: `(free_pfn >> pageblock_order) <= (migrate_pfn >> pageblock_order)`.
    fn compact_scanners_met(&self, cc: &CompactControl) -> bool {
        cc.free_pfn / self.ppb() <= cc.migrate_pfn / self.ppb()
    }
    fn variant(&self) -> Variant {
        self.cfg.variant
    }
}

// ---------------------------------------------------------------- signals and rescheduling

/// Read a flag with a read-modify-write (`compare_exchange(true, true)`: it fails, a pure
/// read, while the flag is clear), which always sees the latest value. A plain relaxed load
/// would let loom also return a stale value after the killer's (or the scheduler's) store,
/// which for these flags is the same execution as the store landing later, an interleaving
/// loom explores anyway.
fn read_flag<P: PlatformFor<Event>>(flag: &P::AtomicBool) -> bool {
    flag.compare_exchange(true, true, Relaxed, Relaxed).is_ok()
}

/// `fatal_signal_pending(current)`.
fn fatal_signal_pending<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>) -> bool {
    let pending = read_flag::<P>(&k.flags[cur.pid()].sigkill);
    if pending {
        cur.emit(Event::FatalSeen);
    }
    pending
}

/// `need_resched()`.
fn need_resched<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>) -> bool {
    let set = read_flag::<P>(&k.flags[cur.pid()].need_resched);
    if set {
        cur.emit(Event::ReschedSeen);
    }
    set
}

/// `cond_resched()`: the task schedules, which clears TIF_NEED_RESCHED.
fn cond_resched<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>) {
    let f = &k.flags[cur.pid()];
    f.need_resched.store(false, Relaxed);
    if P::Ghost::ENABLED {
        f.ghost_need_resched.store(false, Relaxed);
    }
}

/// `compact_should_abort()` (norescan-v3, finishcontend-v3) / `compact_check_resched()`
/// (later): the periodic `need_resched()` check where no lock is held. Returns true when
/// async compaction must abort (norescan-v3 only).
fn compact_should_abort<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) -> bool {
    if need_resched(k, cur) {
        if k.variant().resched_sets_contended() && cc.mode == Mode::Async {
            cc.set_contended(cur, ContendedWhy::NeedResched);
            if !k.variant().finishes_pageblock() {
                return true;
            }
        }
        cond_resched(k, cur);
    }
    false
}

// ---------------------------------------------------------------- lock helpers

/// `compact_trylock_irqsave()` (before cb2dcaf023): async compaction trylocks and, if the lock
/// is contended, records it and returns false (the caller breaks out of its block); the other
/// modes spin.
fn compact_trylock_irqsave<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    lock: &SpinLock<P>,
    cc: &mut CompactControl,
) -> bool {
    if cc.mode == Mode::Async || k.mutated(cur, Mutation::SyncSetsContended) {
        if !spin_trylock(cur, lock) {
            cur.emit(Event::LockContended { lock: lock.name });
            cc.set_contended(cur, ContendedWhy::Lock);
            return false;
        }
    } else {
        spin_lock(cur, lock);
    }
    true
}

/// `compact_lock_irqsave()` (cb2dcaf023): "Always returns true". Async compaction that has not
/// yet seen contention trylocks and, if that fails, records the contention; then everybody
/// spins, so after the first contention async compaction never trylocks again.
fn compact_lock_irqsave<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    lock: &SpinLock<P>,
    cc: &mut CompactControl,
) -> bool {
    let trylocks = cc.mode == Mode::Async || k.mutated(cur, Mutation::SyncSetsContended);
    if trylocks && !cc.contended {
        if spin_trylock(cur, lock) {
            return true;
        }
        cur.emit(Event::LockContended { lock: lock.name });
        cc.set_contended(cur, ContendedWhy::Lock);
    }
    spin_lock(cur, lock);
    true
}

/// The variant's lock helper; true when the lock is held.
fn compact_take_lock<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    lock: &SpinLock<P>,
    cc: &mut CompactControl,
) -> bool {
    if k.variant().finishes_pageblock() {
        compact_lock_irqsave(k, cur, lock, cc)
    } else {
        compact_trylock_irqsave(k, cur, lock, cc)
    }
}

/// `compact_unlock_should_abort(lock, flags, &locked, cc)`, called by both block scanners at
/// every pfn that is a multiple of SWAP_CLUSTER_MAX: drop the lock if held; abort on a fatal
/// signal (recording it as contention); then the variant's `need_resched()` handling.
fn compact_unlock_should_abort<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    lock: &SpinLock<P>,
    locked: &mut bool,
    cc: &mut CompactControl,
) -> bool {
    let keeps_lock = k.mutated(cur, Mutation::AbortKeepsLock);
    if *locked && !keeps_lock {
        spin_unlock(cur, lock);
        *locked = false;
    }
    if fatal_signal_pending(k, cur) {
        cc.set_contended(cur, ContendedWhy::FatalSignal);
        return true;
    }
    if *locked {
        spin_unlock(cur, lock);
        *locked = false;
    }
    let resched = need_resched(k, cur);
    match k.variant() {
        Variant::NorescanV3 => {
            if resched {
                if cc.mode == Mode::Async {
                    cc.set_contended(cur, ContendedWhy::NeedResched);
                    return true;
                }
                cond_resched(k, cur);
            }
        }
        Variant::FinishcontendV3 => {
            if resched {
                if cc.mode == Mode::Async {
                    cc.set_contended(cur, ContendedWhy::NeedResched);
                }
                cond_resched(k, cur);
            }
        }
        Variant::ReschedNotContention | Variant::FatalFix => {
            if resched {
                cond_resched(k, cur);
            }
        }
    }
    false
}

// ---------------------------------------------------------------- the node's counts

/// `node_page_state()`: a read of a node counter with a read-modify-write (`fetch_add(0)`),
/// which always sees the latest value, as [`read_flag`] does for the flags. A relaxed load
/// could also return a value from before another compactor's update, which is the same
/// execution as that update landing later, an interleaving loom explores anyway; and loom
/// would let a relaxed load keep returning it after the updater has finished, a staleness
/// the kernel's sleep (a full barrier) and its counters do not have for ever.
fn read_count<P: PlatformFor<Event>>(count: &P::AtomicU64) -> u64 {
    count.fetch_add(0, Relaxed)
}

/// `node_page_state(pgdat, NR_INACTIVE_*) + node_page_state(pgdat, NR_ACTIVE_*)`: the node's
/// LRU pages (`nr_lru_pages` is the LRU lists' length, moved from its
/// [`super::INITIAL_COUNT`] origin to the node's count).
fn node_lru_pages<P: PlatformFor<Event>>(k: &Kernel<P>) -> u64 {
    let moved = read_count::<P>(&k.zone.nr_lru_pages).wrapping_sub(super::INITIAL_COUNT);
    k.node_lru_base.wrapping_add(moved)
}

/// `too_many_isolated(pgdat)` (mm/compaction.c, 5.1; compaction's own version of reclaim's
/// test): the node's isolated pages (anon + file) against half
/// of its inactive + active ones, `isolated > (inactive + active) / 2`, two reads with no
/// lock (another task's update can land between them), the LRU first as the kernel reads it.
fn too_many_isolated<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>) -> bool {
    let lru = node_lru_pages(k);
    let isolated = read_count::<P>(&k.zone.nr_isolated);
    let too_many = isolated > lru / 2;
    if too_many {
        cur.emit(Event::TooManyIsolated { isolated, lru });
    }
    too_many
}

/// `congestion_wait(BLK_RW_ASYNC, HZ/10)` (mm/backing-dev.c, 5.1): sleep uninterruptibly on
/// the async congestion queue for up to HZ/10. Only a backing device leaving congestion
/// (`clear_wb_congested()`) wakes that queue, and no task of the compaction model writes
/// back, so the queue is left out: the sleep always ends by its timer, whose expiry is one
/// step the explorer places (timer model `any-time`), while the other tasks run.
fn congestion_wait<P: PlatformFor<Event>>(cur: &Current<P>) {
    set_current_state(cur, TASK_UNINTERRUPTIBLE);
    io_schedule_timeout(cur, HZ / 10);
}

/// `inc_node_page_state(page, NR_ISOLATED_ANON + page_is_file_cache(page))`, right after
/// `del_page_from_lru_list()` in `isolate_migratepages_block()`.
fn account_isolated<P: PlatformFor<Event>>(k: &Kernel<P>) {
    if k.node_counts {
        k.zone.nr_isolated.fetch_add(1, Relaxed);
    }
}

/// A page isolated for migration goes back to the LRU: `putback_lru_page()` then the
/// `NR_ISOLATED_*` decrement, as `putback_movable_pages()` does for an LRU page; and for a
/// migrated page, `putback_lru_page(newpage)` then `unmap_and_move()`'s decrement for the old
/// one. (The LRU add goes through a per-cpu pagevec in the kernel; the model adds at once.)
fn account_back_on_lru<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>) {
    if k.node_counts && !k.mutated(cur, Mutation::IsolatedCountLeaks) {
        k.zone.nr_lru_pages.fetch_add(1, Relaxed);
        k.zone.nr_isolated.fetch_sub(1, Relaxed);
    }
}

/// The fingerprint of the `too_many_isolated()` loop's head: the loop carries no local from
/// one iteration to the next (what it reads is shared: the node's counts, and the signal
/// flag, whose ghost copy is hashed as for `compact_zone()`'s loop).
fn throttle_fingerprint<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, context: u64) -> Summary {
    let mut h = DefaultHasher::new();
    if P::Ghost::ENABLED {
        k.flags[cur.pid()].ghost_sigkill.load(Relaxed).hash(&mut h);
    }
    loop_summary(context, 2, h.finish())
}

// ---------------------------------------------------------------- the migration scanner

/// `isolate_migratepages_block(cc, low_pfn, end_pfn, isolate_mode)`: isolate LRU pages of one
/// pageblock from `low_pfn`. Returns the pfn where scanning stopped, or 0 to abort.
fn isolate_migratepages_block<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    cc: &mut CompactControl,
    start_pfn: u32,
    end_pfn: u32,
) -> u32 {
    let cfg = &k.cfg;
    let lru_lock = &k.zone.lru_lock;
    let block = start_pfn / cfg.pages_per_block;
    // While parallel reclaimers and compactors hold too many of the node's LRU pages
    // isolated, wait for them to put some back (only with more than one compactor:
    // Kernel::node_counts).
    if k.node_counts && too_many_isolated(k, cur) {
        let context = cur.loop_context();
        loop {
            // Async compaction gives up at once.
            if cc.mode == Mode::Async {
                return 0;
            }
            congestion_wait(cur);
            if fatal_signal_pending(k, cur) {
                return 0;
            }
            if !cur.loop_head(throttle_fingerprint(k, cur, context)) {
                // The checker found that this loop cannot end and stopped it.
                cc.stopped = true;
                return 0;
            }
            if !too_many_isolated(k, cur) {
                break;
            }
        }
    }
    if compact_should_abort(k, cur, cc) {
        return 0;
    }
    let mut low_pfn = start_pfn;
    let mut locked = false;
    let mut aborted = false;
    // Pages isolated by this call.
    let mut nr_isolated = 0u32;
    // "if (cc->direct_compaction && (cc->mode == MIGRATE_ASYNC))": every pageblock-order
    // compactor is a direct compactor; with cc->order == pageblock_order, next_skip_pfn is the
    // end of this pageblock, so the check at the loop head never fires inside it.
    let skip_on_failure = cc.mode == Mode::Async && cc.order == Order::Pageblock;
    while low_pfn < end_pfn {
        // "Periodically drop the lock (if held) regardless of its contention, to give chance
        // to IRQs. Abort async compaction if contended." (after 670105a25608: "Abort
        // completely if a fatal signal is pending.")
        if low_pfn.is_multiple_of(cfg.swap_cluster_max)
            && compact_unlock_should_abort(k, cur, lru_lock, &mut locked, cc)
        {
            if k.variant().fatal_returns_zero() {
                if !low_pfn.is_multiple_of(cfg.pages_per_block) {
                    cur.emit(Event::BlockAbandoned { block, pfn: low_pfn });
                }
                // low_pfn = 0; goto fatal_pending (past isolate_abort's unlock: the lock
                // was dropped by compact_unlock_should_abort()).
                return 0;
            }
            aborted = true;
            break;
        }
        let i = k.page_index(low_pfn);
        if cc.pages[i] == PageState::Unmovable && skip_on_failure {
            // !PageLRU() and not movable: isolate_fail. Async direct compaction
            // (skip_on_failure) gives up the rest of the cc->order block: "We have isolated
            // some pages, but then failed. Release them instead of migrating, as we cannot
            // form the cc->order buddy page anyway." Then low_pfn = next_skip_pfn - 1, and the
            // loop's increment takes it to the end of the pageblock.
            let put_back = nr_isolated;
            if nr_isolated > 0 {
                if locked {
                    spin_unlock(cur, lru_lock);
                    locked = false;
                }
                putback_movable_pages(k, cur, cc);
                cc.nr_migratepages = 0;
                nr_isolated = 0;
            }
            cur.emit(Event::SkipOnFailure { pfn: low_pfn, put_back });
            low_pfn = end_pfn;
            continue;
        }
        if cc.pages[i] != PageState::Lru {
            // PageBuddy(): skip the free page (order 0). An unmovable page in any other mode:
            // isolate_fail without skip_on_failure, skip it. Nothing else can be found here.
            low_pfn += 1;
            continue;
        }
        // "If we already hold the lock, we can skip some rechecking"
        if !locked {
            locked = compact_take_lock(k, cur, lru_lock, cc);
            if !locked {
                // norescan-v3: "Allow future scanning if the lock is contended":
                // clear_pageblock_skip(page); break. (Skip hints are not modelled.)
                aborted = true;
                break;
            }
        }
        // __isolate_lru_page() and del_page_from_lru_list(): the work done under lru_lock.
        k.zone.nr_lru_pages.fetch_sub(1, Relaxed);
        account_isolated(k);
        cc.pages[i] = PageState::IsolatedMigrate;
        cc.migratepages.insert(0, low_pfn);
        cc.nr_migratepages += 1;
        nr_isolated += 1;
        cur.emit(Event::Isolated { free: false, pfn: low_pfn, pages: 1 });
        // "Avoid isolating too much unless this block is being rescanned (e.g. dirty/writeback
        // pages, parallel allocation) or a lock is contended." (the contended part: cb2dcaf023)
        let contended_lifts_cap = k.variant().finishes_pageblock() && cc.contended;
        if cc.nr_migratepages == cfg.compact_cluster_max && !cc.rescan && !contended_lifts_cap {
            low_pfn += 1;
            cur.emit(Event::ClusterMaxStop { pfn: low_pfn });
            break;
        }
        low_pfn += 1;
    }
    // isolate_abort:
    if locked {
        spin_unlock(cur, lru_lock);
    }
    if low_pfn == end_pfn {
        cur.emit(Event::BlockFinished { block });
    } else if aborted && !low_pfn.is_multiple_of(cfg.pages_per_block) {
        cur.emit(Event::BlockAbandoned { block, pfn: low_pfn });
    }
    low_pfn
}

/// `isolate_migratepages(zone, cc)`: isolate from the pageblock `cc->migrate_pfn` is in, if
/// it lies below the free scanner, and record where the scanner stopped.
fn isolate_migratepages<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    cc: &mut CompactControl,
) -> IsolateMigrate {
    let cfg = &k.cfg;
    let mut low_pfn = cc.migrate_pfn;
    let block_end_pfn = k.pageblock_end_pfn(low_pfn);
    // "Iterate over whole pageblocks until we find the first suitable. Do not cross the free
    // scanner." Every pageblock is suitable here, so the loop ends after its first block.
    if block_end_pfn <= cc.free_pfn {
        // "This can potentially iterate a massively long zone with many pageblocks
        // unsuitable, so periodically check if we need to schedule, or even abort async
        // compaction."
        let abort =
            low_pfn.is_multiple_of(cfg.swap_cluster_max * cfg.pages_per_block) && compact_should_abort(k, cur, cc);
        if !abort {
            low_pfn = isolate_migratepages_block(k, cur, cc, low_pfn, block_end_pfn);
            if cc.stopped {
                return IsolateMigrate::Abort;
            }
            let contended_aborts = !k.variant().finishes_pageblock() && cc.contended;
            if low_pfn == 0 || contended_aborts {
                cur.emit(Event::IsolateMigrate { result: IsolateMigrate::Abort, low_pfn });
                return IsolateMigrate::Abort;
            }
        }
    }
    // "Record where migration scanner will be restarted."
    cc.migrate_pfn = low_pfn;
    cc.note_scanners(cur);
    // Checker builds: cc->nr_migratepages and cc->nr_freepages count their lists (every path
    // that empties a list zeroes its count). Local state only: no exploration changes.
    if P::Ghost::ENABLED {
        assert!(
            cc.nr_migratepages as usize == cc.migratepages.len() && cc.nr_freepages as usize == cc.freepages.len(),
            "cc->nr_migratepages {} for {} page(s) listed, cc->nr_freepages {} for {}",
            cc.nr_migratepages,
            cc.migratepages.len(),
            cc.nr_freepages,
            cc.freepages.len()
        );
    }
    let r = if cc.nr_migratepages > 0 { IsolateMigrate::Success } else { IsolateMigrate::None };
    cur.emit(Event::IsolateMigrate { result: r, low_pfn });
    r
}

// ---------------------------------------------------------------- the free scanner

/// `isolate_freepages_block(cc, &start_pfn, end_pfn, freelist, strict = false)`: isolate free
/// pages of one pageblock until there are as many as pages to migrate. Returns the number
/// isolated; `*start_pfn` is where scanning stopped.
fn isolate_freepages_block<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    cc: &mut CompactControl,
    start_pfn: &mut u32,
    end_pfn: u32,
) -> u32 {
    let cfg = &k.cfg;
    let zone_lock = &k.zone.lock;
    let mut blockpfn = *start_pfn;
    let mut locked = false;
    let mut total_isolated = 0;
    while blockpfn < end_pfn {
        // "Periodically drop the lock (if held) regardless of its contention, to give chance
        // to IRQs. Abort if fatal signal pending or async compaction detects need_resched()"
        if blockpfn.is_multiple_of(cfg.swap_cluster_max)
            && compact_unlock_should_abort(k, cur, zone_lock, &mut locked, cc)
        {
            break;
        }
        let i = k.page_index(blockpfn);
        if cc.pages[i] != PageState::Buddy {
            // isolate_fail: not a free page (in use, isolated or unmovable).
            blockpfn += 1;
            continue;
        }
        if !locked {
            locked = compact_take_lock(k, cur, zone_lock, cc);
            if !locked {
                break;
            }
            // "Recheck this is a buddy page under lock": nobody else changes this zone's pages.
        }
        // __isolate_free_page(): the work done under zone->lock.
        k.zone.nr_free_pages.fetch_sub(1, Relaxed);
        cc.pages[i] = PageState::IsolatedFree;
        cc.freepages.push(blockpfn);
        cc.nr_freepages += 1;
        total_isolated += 1;
        cur.emit(Event::Isolated { free: true, pfn: blockpfn, pages: 1 });
        if cc.nr_migratepages <= cc.nr_freepages {
            blockpfn += 1;
            break;
        }
        blockpfn += 1;
    }
    if locked {
        spin_unlock(cur, zone_lock);
    }
    // "Record how far we have got within the block"
    *start_pfn = blockpfn;
    total_isolated
}

/// `isolate_freepages(cc)`: scan pageblocks downwards from `cc->free_pfn`, not below the end of
/// the migration scanner's pageblock, until enough free pages are isolated.
fn isolate_freepages<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) {
    let cfg = &k.cfg;
    let ppb = cfg.pages_per_block;
    let mut isolate_start_pfn = cc.free_pfn;
    let mut block_start_pfn = k.pageblock_start_pfn(cc.free_pfn);
    let mut block_end_pfn = (block_start_pfn + ppb).min(cfg.zone_end_pfn());
    // "The low boundary is the end of the pageblock the migration scanner is using."
    let low_pfn = if k.mutated(cur, Mutation::FreeScannerCrosses) {
        cfg.zone_start_pfn()
    } else {
        k.pageblock_end_pfn(cc.migrate_pfn)
    };
    while block_start_pfn >= low_pfn {
        // "This can iterate a massively long zone without finding any suitable migration
        // targets, so periodically check if we need to schedule, or even abort async
        // compaction."
        if block_start_pfn.is_multiple_of(cfg.swap_cluster_max * ppb) && compact_should_abort(k, cur, cc) {
            break;
        }
        // suitable_migration_target(), isolation_suitable(): every block qualifies.
        isolate_freepages_block(k, cur, cc, &mut isolate_start_pfn, block_end_pfn);
        // "If we isolated enough freepages, or aborted due to lock contention, terminate."
        // (cb2dcaf023: "Are enough freepages isolated?")
        let contended_stops = !k.variant().finishes_pageblock() && cc.contended;
        if cc.nr_freepages >= cc.nr_migratepages || contended_stops {
            if isolate_start_pfn >= block_end_pfn {
                // "Restart at previous pageblock if more freepages can be isolated next time."
                isolate_start_pfn = block_start_pfn - ppb;
            }
            break;
        } else if isolate_start_pfn < block_end_pfn {
            // "If isolation failed early, do not continue needlessly."
            break;
        }
        // Next pageblock down (block_start_pfn >= low_pfn >= zone start >= ppb: no underflow).
        block_end_pfn = block_start_pfn;
        block_start_pfn -= ppb;
        isolate_start_pfn = block_start_pfn;
    }
    // "Record where the free scanner will restart next time."
    cc.free_pfn = isolate_start_pfn;
    cc.note_scanners(cur);
}

/// `compaction_alloc()`: the migration target allocator `migrate_pages()` is given.
fn compaction_alloc<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) -> Option<u32> {
    if cc.freepages.is_empty() {
        // Before cb2dcaf023: "Isolate free pages if necessary, and if we are not aborting due
        // to contention."
        if k.variant().finishes_pageblock() || !cc.contended {
            isolate_freepages(k, cur, cc);
        }
        if cc.freepages.is_empty() {
            return None;
        }
    }
    let page = cc.freepages.remove(0);
    cc.nr_freepages -= 1;
    Some(page)
}

/// `migrate_pages(&cc->migratepages, compaction_alloc, compaction_free, cc, mode,
/// MR_COMPACTION)`, as compaction sees it: each isolated page gets a target from
/// `compaction_alloc()`; the source page is freed, the target is in use. Returns `Err` for
/// `-ENOMEM` (no target), leaving the pages not migrated on `cc->migratepages`.
fn migrate_pages<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) -> Result<(), ()> {
    let pages = std::mem::take(&mut cc.migratepages);
    let mut migrated = 0;
    for (n, &src) in pages.iter().enumerate() {
        match compaction_alloc(k, cur, cc) {
            None => {
                cc.migratepages = pages[n..].to_vec();
                cur.emit(Event::Migrated { pages: migrated, enomem: true });
                return Err(());
            }
            Some(dst) => {
                let (s, d) = (k.page_index(src), k.page_index(dst));
                cc.pages[s] = PageState::Buddy;
                cc.pages[d] = PageState::Lru;
                account_back_on_lru(k, cur);
                migrated += 1;
            }
        }
    }
    cur.emit(Event::Migrated { pages: migrated, enomem: false });
    Ok(())
}

/// `putback_movable_pages(&cc->migratepages)`: back to the LRU (through a pagevec; the model
/// does not follow it to the LRU lock), each page leaving the node's isolated count.
fn putback_movable_pages<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) {
    for pfn in std::mem::take(&mut cc.migratepages) {
        cc.pages[k.page_index(pfn)] = PageState::Lru;
        account_back_on_lru(k, cur);
    }
}

/// `release_freepages(&cc->freepages)`: unused targets go back to the buddy lists.
fn release_freepages(k_page_index: impl Fn(u32) -> usize, cc: &mut CompactControl) {
    for pfn in std::mem::take(&mut cc.freepages) {
        cc.pages[k_page_index(pfn)] = PageState::Buddy;
    }
    cc.nr_freepages = 0;
}

// ---------------------------------------------------------------- compact_finished, compact_zone

/// Is a page of order >= cc->order free? With `cc->order == pageblock_order` and a movable
/// allocation: is a whole pageblock free in the buddy lists?
fn suitable_page_free<P: PlatformFor<Event>>(k: &Kernel<P>, cc: &CompactControl) -> bool {
    cc.pages.chunks(k.ppb() as usize).any(|b| b.iter().all(|p| *p == PageState::Buddy))
}

/// `__compact_finished(cc)`, in the variant's check order (B.4).
#[allow(non_snake_case)]
fn __compact_finished<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    cc: &mut CompactControl,
) -> CompactResult {
    let finishes = k.variant().finishes_pageblock();
    // Before cb2dcaf023, the first line.
    if !finishes && (cc.contended || fatal_signal_pending(k, cur)) {
        return CompactResult::Contended;
    }
    // "Compaction run completes if the migrate and free scanner meet" (every compaction here
    // starts at the zone's ends: whole_zone, so COMPLETE rather than PARTIAL_SKIPPED).
    if k.compact_scanners_met(cc) {
        cur.emit(Event::ScannersMet);
        return CompactResult::Complete;
    }
    // "Compaction run completes if the migrate and free scanner meet" is all that ends a
    // compaction for /proc/sys/vm/compact_memory: is_via_compact_memory(cc->order).
    if cc.order == Order::CompactMemory {
        return CompactResult::Continue;
    }
    if k.mutated(cur, Mutation::ContendedSkipsAlignment) && cc.contended {
        return CompactResult::Contended;
    }
    // 07/22: "Always finish scanning a pageblock to reduce the possibility of fallbacks in the
    // future."
    if !cc.migrate_pfn.is_multiple_of(k.ppb()) {
        return CompactResult::Continue;
    }
    // "Direct compactor: Is a suitable page free?"
    if suitable_page_free(k, cc) {
        return CompactResult::Success;
    }
    let mut ret = CompactResult::NoSuitablePage;
    // cb2dcaf023: the contended test moves here, after the alignment check.
    if finishes && !k.mutated(cur, Mutation::BoundaryIgnoresContended) && (cc.contended || fatal_signal_pending(k, cur))
    {
        ret = CompactResult::Contended;
    }
    ret
}

/// `compact_finished(cc)`: `__compact_finished()` with COMPACT_NO_SUITABLE_PAGE mapped to
/// COMPACT_CONTINUE.
fn compact_finished<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, cc: &mut CompactControl) -> CompactResult {
    let mut ret = __compact_finished(k, cur, cc);
    if ret == CompactResult::NoSuitablePage {
        ret = CompactResult::Continue;
    }
    cur.emit(Event::CompactFinished { result: ret, migrate_pfn: cc.migrate_pfn });
    ret
}

/// The fingerprint of a `compact_zone()` loop head: the loop's context, its state (everything
/// an iteration carries to the next: `compact_control`, the compactor's view of the zone and
/// `last_migrated_pfn`; `cc->rescan` is recomputed at the top of every iteration, and the
/// scanner positions last reported always equal `migrate_pfn` and `free_pfn` here), and the
/// values of the task's own `fatal_signal_pending` and `need_resched` flags that its next reads
/// will see (their ghost copies; those reads are read-modify-writes, which see the latest
/// value).
fn loop_fingerprint<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    context: u64,
    state: &LoopState,
) -> Summary {
    let mut h = DefaultHasher::new();
    state.hash(&mut h);
    if P::Ghost::ENABLED {
        let f = &k.flags[cur.pid()];
        f.ghost_sigkill.load(Relaxed).hash(&mut h);
        f.ghost_need_resched.load(Relaxed).hash(&mut h);
    }
    loop_summary(context, 1, h.finish())
}

/// `compact_zone(cc, capc)` of the whole zone in `mode`: a direct compactor allocating at
/// pageblock order, or (`Order::CompactMemory`) `compact_node()`'s compaction for
/// `/proc/sys/vm/compact_memory`. Returns its result, or `None` when the checker stopped a
/// loop that could not end (it has recorded the `progress` violation).
pub fn compact_zone<P: PlatformFor<Event>>(
    k: &Kernel<P>,
    cur: &Current<P>,
    mode: Mode,
    order: Order,
) -> Option<CompactResult> {
    let cfg = &k.cfg;
    let idx = |pfn: u32| k.page_index(pfn);
    let mut cc =
        CompactControl::new(cfg, mode, order, cfg.zone_start_pfn(), k.pageblock_start_pfn(cfg.zone_end_pfn() - 1));
    cur.emit(Event::CompactStart { mode, order });
    cc.note_scanners(cur);
    let mut last_migrated_pfn = 0u32;
    let context = cur.loop_context();
    let (ret, reason) = loop {
        let before = LoopState::of(&cc, last_migrated_pfn);
        if !cur.loop_head(loop_fingerprint(k, cur, context, &before)) {
            // The checker found that this loop cannot end and stopped it.
            return None;
        }
        let ret = compact_finished(k, cur, &mut cc);
        if ret != CompactResult::Continue {
            let reason = match ret {
                CompactResult::Complete => AbortReason::ScannersMet,
                CompactResult::Success => AbortReason::Success,
                _ => AbortReason::Contended,
            };
            break (ret, reason);
        }
        let start_pfn = cc.migrate_pfn;
        // 12/22: "Avoid multiple rescans which can happen if a page cannot be isolated
        // (dirty/writeback in async mode) or if the migrated pages are being allocated before
        // the pageblock is cleared."
        cc.rescan = k.pageblock_start_pfn(last_migrated_pfn) == k.pageblock_start_pfn(start_pfn);
        if k.mutated(cur, Mutation::RescanClearsContended) {
            cc.clear_contended(cur);
        }
        match isolate_migratepages(k, cur, &mut cc) {
            IsolateMigrate::Abort => {
                putback_movable_pages(k, cur, &mut cc);
                cc.nr_migratepages = 0;
                if cc.stopped {
                    return None;
                }
                break (CompactResult::Contended, AbortReason::IsolateAbort);
            }
            IsolateMigrate::None => {
                // "We haven't isolated and migrated anything, but there might still be
                // unflushed migrations from previous cc->order aligned block." (check_drain)
            }
            IsolateMigrate::Success => {
                last_migrated_pfn = start_pfn;
                let err = migrate_pages(k, cur, &mut cc);
                // "All pages were either migrated or will be released"
                cc.nr_migratepages = 0;
                if err.is_err() {
                    putback_movable_pages(k, cur, &mut cc);
                    // "migrate_pages() may return -ENOMEM when scanners meet and we want
                    // compact_finished() to detect it"
                    if !k.compact_scanners_met(&cc) {
                        break (CompactResult::Contended, AbortReason::NoMemory);
                    }
                    // "We failed to migrate at least one page in the current order-aligned
                    // block, so skip the rest of it." (cc->direct_compaction: every compactor
                    // here is a direct compactor.)
                    if mode == Mode::Async {
                        cc.migrate_pfn = k.pageblock_end_pfn(cc.migrate_pfn - 1);
                        cc.note_scanners(cur);
                        last_migrated_pfn = 0;
                    }
                }
            }
        }
        // check_drain: "Has the migration scanner moved away from the previous cc->order
        // aligned block where we migrated from?" (lru_add_drain_cpu(), drain_local_pages():
        // the model frees migrated pages at once, see the module docs.) Only for cc->order > 0:
        // compact_memory's order -1 never drains, and never forgets last_migrated_pfn here.
        if order == Order::Pageblock
            && last_migrated_pfn != 0
            && last_migrated_pfn < k.pageblock_start_pfn(cc.migrate_pfn)
        {
            last_migrated_pfn = 0;
        }
        if LoopState::of(&cc, last_migrated_pfn) == before {
            cur.emit(Event::NoProgressIteration { migrate_pfn: cc.migrate_pfn });
        }
    };
    // out: "Release free pages and update where the free scanner should restart" (cached
    // positions are not modelled).
    release_freepages(idx, &mut cc);
    cur.emit(Event::CompactEnd {
        result: ret,
        reason: Some(reason),
        migrate_pfn: cc.migrate_pfn,
        free_pfn: cc.free_pfn,
    });
    Some(ret)
}

// ---------------------------------------------------------------- the other roles

/// A task that takes `lock` `holds` times and does that lock's work under it: for
/// `lru_lock`, adding a page to the LRU (`__pagevec_lru_add_fn`); for `zone->lock`, freeing a
/// page to the buddy lists (`free_one_page`).
pub fn lock_holder<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, lock: HeldLock, holds: u32) {
    let (l, work) = match lock {
        HeldLock::LruLock => (&k.zone.lru_lock, &k.zone.nr_lru_pages),
        HeldLock::ZoneLock => (&k.zone.lock, &k.zone.nr_free_pages),
    };
    for _ in 0..holds {
        spin_lock(cur, l);
        work.fetch_add(1, Relaxed);
        cur.emit(Event::HeldWork { lock: l.name });
        spin_unlock(cur, l);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::compaction::{Config, Role};
    use crate::ghost::NoGhost;
    use crate::model::Named;
    use crate::platform::Std;

    type K = Kernel<Std<NoGhost<Event>>>;

    /// `congestion_wait(BLK_RW_ASYNC, HZ/10)` sleeps its HZ/10 on the real timer, with nobody
    /// to wake it (no verdict depends on the length: the explorers' timer expires at any
    /// point). Wide bounds, so that a loaded machine cannot fail the right length.
    #[test]
    fn congestion_wait_sleeps_a_tenth_of_a_second_of_jiffies() {
        use crate::kernel::sched::{Sched, TimerModel};
        use std::time::{Duration, Instant};
        const JIFFY: Duration = Duration::from_micros(200);
        let sched =
            Sched::<Std<NoGhost<Event>>>::new(1, TimerModel::Real { jiffy: JIFFY }, Arc::new(NoGhost::default()));
        let t = Instant::now();
        congestion_wait(&sched.enter(0));
        let (slept, timeout) = (t.elapsed(), JIFFY * (HZ / 10) as u32);
        assert!(slept >= timeout && slept < timeout * 50, "slept {slept:?} for a timeout of {timeout:?}");
    }

    fn cfg(roles: Vec<Role>, unmovable_per_block: u32) -> Config {
        Config {
            variant: Variant::FatalFix,
            mutation: None,
            roles,
            pageblocks: 2,
            pages_per_block: 4,
            swap_cluster_max: 2,
            compact_cluster_max: 3,
            unmovable_per_block,
        }
    }

    /// One call of the free scanner, `isolate_freepages()`, on a zone of 4 pageblocks of 4
    /// pages (pfns 4 to 19; the blocks at 4 and 8 migration sources, every page on the LRU; at
    /// 12 and 16 targets, free, LRU, free, LRU), with `wanted` pages to migrate, `edit` applied
    /// to the pages first. Returns the free pages it isolated and where it will restart.
    fn free_scan(
        variant: Variant,
        free_pfn: u32,
        wanted: u32,
        contended: bool,
        (fatal, resched): (bool, bool),
        edit: &dyn Fn(&mut [PageState]),
    ) -> (Vec<u32>, u32) {
        let c = Config { variant, pageblocks: 4, ..cfg(vec![Role::compactor(Mode::Async)], 0) };
        let k = K::new(c.clone(), Arc::new(NoGhost::default()));
        let cur = k.sched.enter(0);
        k.flags[0].sigkill.store(fatal, Relaxed);
        k.flags[0].need_resched.store(resched, Relaxed);
        let mut cc = CompactControl::new(&c, Mode::Async, Order::Pageblock, 4, free_pfn);
        cc.contended = contended;
        cc.nr_migratepages = wanted;
        edit(&mut cc.pages);
        isolate_freepages(&k, &cur, &mut cc);
        assert_eq!(cc.nr_freepages as usize, cc.freepages.len());
        (cc.freepages, cc.free_pfn)
    }

    /// The free scanner as 5.1's `isolate_freepages()` and `isolate_freepages_block()` run it
    /// (mm/compaction.c at cb2dcaf023): it isolates downwards from `cc->free_pfn`, block by
    /// block, not below the migration scanner's pageblock; stops on the page that makes enough;
    /// restarts next time after that page, or at the previous pageblock if it used up the block;
    /// stops early if a block's scan stopped early; and stops on `cc->contended` only before
    /// cb2dcaf023. No shipped scenario's verdict depends on where it restarts (campaign
    /// survivors: docs/mutants.md, seventh run).
    #[test]
    fn the_free_scanner_isolates_downwards_and_records_where_to_restart() {
        let none = &|_: &mut [PageState]| {};
        let (fix, old) = (Variant::FatalFix, Variant::NorescanV3);
        // Enough in the first block: restart after the page that made enough.
        assert_eq!(free_scan(fix, 16, 1, false, (false, false), none), (vec![16], 17));
        assert_eq!(free_scan(fix, 16, 2, false, (false, false), none), (vec![16, 18], 19));
        // It never scans below where it started in the block (pfn 15, free here, is not its).
        let free_below = &|p: &mut [PageState]| p[11] = PageState::Buddy;
        assert_eq!(free_scan(fix, 16, 2, false, (false, false), free_below), (vec![16, 18], 19));
        // Not enough in the block: on to the next block down.
        assert_eq!(free_scan(fix, 16, 3, false, (false, false), none), (vec![16, 18, 12], 13));
        assert_eq!(free_scan(old, 16, 3, false, (false, false), none), (vec![16, 18, 12], 13));
        // cc->contended stops the scan after the block only before cb2dcaf023.
        assert_eq!(free_scan(fix, 16, 3, true, (false, false), none), (vec![16, 18, 12], 13));
        assert_eq!(free_scan(old, 16, 3, true, (false, false), none), (vec![16, 18], 12));
        // The page that makes enough is the block's last: restart at the previous pageblock.
        let last_free = &|p: &mut [PageState]| {
            p[12..16].copy_from_slice(&[PageState::Lru, PageState::Lru, PageState::Lru, PageState::Buddy])
        };
        assert_eq!(free_scan(fix, 16, 1, false, (false, false), last_free), (vec![19], 12));
        // need_resched() at a checked pageblock (compact_should_abort(), before cf66f0700c8f):
        // async compaction records contention; before cb2dcaf023 it also stops at once, after
        // it scans on.
        let (v3, resched) = (Variant::FinishcontendV3, (false, true));
        assert_eq!(free_scan(old, 16, 1, false, resched, none), (vec![], 16));
        assert_eq!(free_scan(v3, 16, 1, false, resched, none), (vec![16], 17));
        // A block's scan that stopped early (a fatal signal at the first pfn) ends the scan.
        assert_eq!(free_scan(fix, 12, 1, false, (true, false), none), (vec![], 12));
        // From a block that is not the zone's last, the scan of that block ends at its end.
        let no_free_at_12 = &|p: &mut [PageState]| p[8..12].fill(PageState::Lru);
        assert_eq!(free_scan(fix, 12, 1, false, (false, false), no_free_at_12), (vec![], 4));
    }

    /// `isolate_migratepages()` reports ISOLATE_SUCCESS only if it isolated a page
    /// (`cc->nr_migratepages ? ISOLATE_SUCCESS : ISOLATE_NONE`, 5.1): a pageblock with no page on
    /// the LRU gives ISOLATE_NONE.
    #[test]
    fn isolate_migratepages_succeeds_only_with_pages_isolated() {
        let c = Config { pageblocks: 2, ..cfg(vec![Role::compactor(Mode::Async)], 0) };
        let k = K::new(c.clone(), Arc::new(NoGhost::default()));
        let cur = k.sched.enter(0);
        let cc = || CompactControl::new(&c, Mode::Async, Order::Pageblock, 4, 8);
        let mut full = cc();
        assert_eq!(isolate_migratepages(&k, &cur, &mut full), IsolateMigrate::Success);
        let mut empty = cc();
        empty.pages[0..4].fill(PageState::Unmovable);
        assert_eq!(isolate_migratepages(&k, &cur, &mut empty), IsolateMigrate::None);
    }

    /// A ghost that keeps the compaction events, for the test below (ENABLED: the checker
    /// builds' paths run, with no mutation configured).
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<Event>>);

    impl crate::ghost::Ghost for Recorder {
        const ENABLED: bool = true;
        type Proto = Event;
        fn emit(&self, _pid: crate::ghost::Pid, ev: crate::event::Event<Event>) {
            if let crate::event::Event::Proto(e) = ev {
                self.0.lock().unwrap().push(e);
            }
        }
        fn loop_head(&self, _pid: crate::ghost::Pid, _summary: crate::ghost::Summary) -> crate::ghost::LoopVerdict {
            crate::ghost::LoopVerdict::Continue
        }
        fn untimed_sleep(&self, _pid: crate::ghost::Pid) -> crate::ghost::SleepDecision {
            crate::ghost::SleepDecision::Park
        }
        fn woken(&self, _pid: crate::ghost::Pid) {}
        fn task_exit(&self, _pid: crate::ghost::Pid) -> u32 {
            0
        }
        fn aborted(&self) -> bool {
            false
        }
        fn mutation_reached(&self, _pid: crate::ghost::Pid) {}
    }

    /// The compaction events of one `compact_zone()` in `mode` on 4 pageblocks of 4 pages,
    /// with COMPACT_CLUSTER_MAX `cluster_max` and `unmovable` pages at the end of each
    /// pageblock.
    fn recorded_run(mode: Mode, unmovable: u32, cluster_max: u32) -> Vec<Event> {
        let c = Config {
            compact_cluster_max: cluster_max,
            pages_per_block: 4,
            pageblocks: 4,
            ..cfg(vec![Role::compactor(mode)], unmovable)
        };
        let ghost = Arc::new(Recorder::default());
        let k = Kernel::<Std<Recorder>>::new(c, Arc::clone(&ghost));
        let cur = k.sched.enter(0);
        compact_zone(&k, &cur, mode, Order::Pageblock);
        let events = ghost.0.lock().unwrap().clone();
        events
    }

    /// `cc->rescan` (12/22 of the 4.19 series, kept by cb2dcaf023): once the migration scanner
    /// has migrated from a pageblock and is still in it, the next isolation is not capped at
    /// COMPACT_CLUSTER_MAX; check_drain forgets `last_migrated_pfn` only once the scanner has
    /// left that pageblock. With a cap of 1 and a source pageblock of 4 movable pages, the
    /// first batch is 1 page and the second the other 3. Every iteration of such a run makes
    /// progress, and the end names its reason: a pageblock emptied (COMPACT_SUCCESS), or, with
    /// an unmovable page in every pageblock, the scanners met (COMPACT_COMPLETE). (No shipped
    /// scenario's verdict depends on these: campaign survivors, docs/mutants.md, seventh run.)
    #[test]
    fn a_rescan_of_the_pageblock_migrated_from_lifts_the_cluster_cap() {
        for (unmovable, end) in [(0, AbortReason::Success), (1, AbortReason::ScannersMet)] {
            let events = recorded_run(Mode::SyncLight, unmovable, 1);
            let mut batches = Vec::new();
            let mut n = 0;
            for e in &events {
                match e {
                    Event::Isolated { free: false, .. } => n += 1,
                    Event::IsolateMigrate { .. } => {
                        batches.push(n);
                        n = 0;
                    }
                    _ => {}
                }
            }
            if unmovable == 0 {
                assert_eq!(batches.get(..2), Some(&[1, 3][..]), "pages per isolate_migratepages(): {batches:?}");
            }
            assert!(!events.iter().any(|e| matches!(e, Event::NoProgressIteration { .. })), "{events:?}");
            let last = events.iter().rev().find_map(|e| match e {
                Event::CompactEnd { reason, .. } => Some(*reason),
                _ => None,
            });
            assert_eq!(last, Some(Some(end)), "unmovable {unmovable}");
        }
    }

    /// 670105a25608 (fatal-fix): the migration block scanner that sees a fatal signal
    /// returns 0 at once; the model reports the pageblock abandoned (BlockAbandoned) only when
    /// that happens inside it, not at its first pfn.
    #[test]
    fn a_fatal_signal_abandons_a_pageblock_only_inside_it() {
        for (migrate_pfn, inside) in [(6, true), (4, false)] {
            let c = Config { pageblocks: 2, ..cfg(vec![Role::compactor(Mode::Async)], 0) };
            let ghost = Arc::new(Recorder::default());
            let k = Kernel::<Std<Recorder>>::new(c.clone(), Arc::clone(&ghost));
            let cur = k.sched.enter(0);
            k.flags[0].sigkill.store(true, Relaxed);
            let mut cc = CompactControl::new(&c, Mode::Async, Order::Pageblock, migrate_pfn, 8);
            assert_eq!(isolate_migratepages(&k, &cur, &mut cc), IsolateMigrate::Abort);
            let events = ghost.0.lock().unwrap().clone();
            let abandoned = events.iter().any(|e| matches!(e, Event::BlockAbandoned { .. }));
            assert_eq!(abandoned, inside, "from pfn {migrate_pfn}: {events:?}");
        }
    }

    /// Async direct compaction at pageblock order skips a pageblock on the first page it
    /// cannot isolate, putting back what it isolated there (`skip_on_failure`, 5.1's
    /// `isolate_migratepages_block()`): with an unmovable page at the end of every pageblock
    /// and a COMPACT_CLUSTER_MAX of 4 (no batch ends before it) it migrates nothing, and puts
    /// back the 3 pages before it in each source pageblock. Sync-light compaction skips only the
    /// unmovable page and migrates.
    #[test]
    fn async_compaction_gives_up_a_pageblock_at_its_first_unmovable_page() {
        let migrated = |events: &[Event]| {
            events.iter().map(|e| if let Event::Migrated { pages, .. } = e { *pages } else { 0 }).sum::<u32>()
        };
        let events = recorded_run(Mode::Async, 1, 4);
        assert_eq!(migrated(&events), 0, "{events:?}");
        let put_back: Vec<u32> = events
            .iter()
            .filter_map(|e| if let Event::SkipOnFailure { put_back, .. } = e { Some(*put_back) } else { None })
            .collect();
        // The two source blocks' 3 movable pages each (then a target block's 1, until the
        // scanners meet).
        assert_eq!(put_back.get(..2), Some(&[3, 3][..]), "{put_back:?}");
        assert!(migrated(&recorded_run(Mode::SyncLight, 1, 4)) > 0);
    }

    #[test]
    fn the_node_counts_are_kept_with_two_compactors_and_hold_one_copy_of_the_zone_per_compactor() {
        let one = cfg(vec![Role::compactor(Mode::Async), Role::Killer { target: 0 }], 1);
        assert!(!one.node_counts());
        let two = cfg(vec![Role::compactor(Mode::SyncLight), Role::compactor(Mode::Async)], 1);
        assert!(two.node_counts());
        // Pageblock 1: L L L U; pageblock 2: B L B U.
        assert_eq!((two.zone_lru_pages(), two.node_lru_pages()), (4, 8));
        let k = K::new(two, Arc::new(NoGhost::default()));
        let cur = k.sched.enter(0);
        assert_eq!(node_lru_pages(&k), 8);
        assert!(!too_many_isolated(&k, &cur));
        // One compactor holds the three movable pages of pageblock 1: 3 > (8 - 3) / 2.
        for _ in 0..3 {
            k.zone.nr_lru_pages.fetch_sub(1, Relaxed);
            account_isolated(&k);
        }
        assert_eq!((node_lru_pages(&k), k.zone.nr_isolated.load(Relaxed)), (5, 3));
        assert!(too_many_isolated(&k, &cur));
        // Two of them back on the LRU (migrated or put back): 1 > 7 / 2 is false.
        account_back_on_lru(&k, &cur);
        account_back_on_lru(&k, &cur);
        assert!(!too_many_isolated(&k, &cur));
    }

    /// With one compactor `too_many_isolated()` is never true, so the model leaves the counts
    /// out (`Config::node_counts`). Kept anyway, they end balanced and change no result: the
    /// compactor's own isolations are all migrated or put back before its next block entry.
    #[test]
    fn one_compactor_with_the_counts_kept_anyway_ends_with_nothing_isolated_and_the_same_result() {
        for v in Variant::ALL {
            for mode in [Mode::Async, Mode::SyncLight] {
                for unmovable in [0, 1] {
                    // Killed only where a kill ends the run (C3 loops for ever in the others).
                    let kills: &[bool] =
                        if matches!(v, Variant::NorescanV3 | Variant::FatalFix) { &[false, true] } else { &[false] };
                    for &killed in kills {
                        let c = Config { variant: *v, ..cfg(vec![Role::compactor(mode)], unmovable) };
                        let run = |counts: bool| {
                            let c = c.clone();
                            crate::within_seconds(30, move || {
                                let mut k = K::new(c.clone(), Arc::new(NoGhost::default()));
                                k.node_counts = counts;
                                k.node_lru_base = c.zone_lru_pages();
                                k.flags[0].sigkill.store(killed, Relaxed);
                                let cur = k.sched.enter(0);
                                let r = compact_zone(&k, &cur, mode, Order::Pageblock);
                                (r, k.zone.nr_isolated.load(Relaxed), node_lru_pages(&k))
                            })
                        };
                        let (plain, _, _) = run(false);
                        let (counted, isolated, lru) = run(true);
                        let what = format!("{v} {mode} unmovable {unmovable} killed {killed}");
                        assert_eq!(plain, counted, "{what}");
                        assert_eq!((isolated, lru), (0, c.zone_lru_pages()), "{what}");
                    }
                }
            }
        }
    }
}
