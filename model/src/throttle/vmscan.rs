//! The protocol: mm/vmscan.c's `reclaim_throttle()`, `too_many_isolated()`,
//! `shrink_inactive_list()` (as far as throttling sees it), `consider_reclaim_throttle()`,
//! `skip_throttle_noprogress()`; mm/internal.h's `acct_reclaim_writeback()` and
//! `wake_throttle_isolated()`; mm/compaction.c's `too_many_isolated()` and the loop of
//! `isolate_migratepages_block()` around it; mm/page_alloc.c's `__drain_all_pages()` with
//! `flush_work()`; and the roles. Kernel sources: docs/kernel-source.md, Part 3; the mapping:
//! docs/model.md, Part 4.

use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

use super::event::{Event, Site, SkipWhy, WQ_CONGESTED, WQ_ISOLATED, WQ_NOPROGRESS, WQ_WRITEBACK};
use super::{Buffer, Gfp, Kernel, Mode, Mutation, Reason, Role, Variant};
use crate::event::KernelEvent;
use crate::ghost::Ghost;
use crate::kernel::cpu::{cond_resched, cpu_give_up, cpu_run, YieldWhy};
use crate::kernel::sched::{
    io_schedule_timeout, loop_summary, schedule, try_to_wake_up, Current, TASK_NORMAL, TASK_UNINTERRUPTIBLE,
};
use crate::kernel::spinlock::{spin_lock, spin_unlock};
use crate::kernel::wait::{finish_wait, prepare_to_wait, waitqueue_active, wake_up, WaitQueueHead};
use crate::kernel::HZ;
use crate::model::PlatformFor;
use crate::platform::{Atomic, AtomicInt, RawSpinLock};

/// Loop locations (loop summaries).
const LOOP_COMPACT_TMI: u64 = 0x7417_0001;
const LOOP_WORKER: u64 = 0x7417_0002;
const LOOP_FLUSH: u64 = 0x7417_0003;
/// Checkpoint locations: the end of a function whose reads leave nothing in its caller's
/// locals but its return value (a checkpoint's summary: the caller's history when it was
/// called, this location, the return value).
const DONE_THROTTLE: u64 = 0x7417_0101;
const DONE_TMI: u64 = 0x7417_0102;
const DONE_ISOLATE: u64 = 0x7417_0103;
const DONE_PUTBACK: u64 = 0x7417_0104;
const DONE_LOCK_BUFFER: u64 = 0x7417_0105;

impl Reason {
    /// The reason's queue.
    pub fn wq<P: PlatformFor<Event>>(self, k: &Kernel<P>) -> &WaitQueueHead<P> {
        &k.reclaim_wait[self as usize]
    }
    pub fn wq_name(self) -> crate::event::Wq {
        match self {
            Reason::Writeback => WQ_WRITEBACK,
            Reason::Isolated => WQ_ISOLATED,
            Reason::Noprogress => WQ_NOPROGRESS,
            Reason::Congested => WQ_CONGESTED,
        }
    }
}

/// `reclaim_throttle()`'s timeout for `reason` on `variant`, in jiffies (docs/kernel-source.md,
/// Part 3, "reclaim_throttle()").
pub fn throttle_timeout(variant: Variant, reason: Reason) -> u64 {
    match reason {
        Reason::Writeback => HZ / 10,
        Reason::Isolated => HZ / 50,
        // 1b4e3f26f9f7: one jiffy for CONGESTED (new there) and NOPROGRESS.
        Reason::Congested | Reason::Noprogress if variant.skip_noprogress() => 1,
        // a19594ca4a8b (5.16-rc1): a failure to make progress waits up to HZ/2.
        Reason::Noprogress => HZ / 2,
        Reason::Congested => unreachable!("VMSCAN_THROTTLE_CONGESTED exists from 1b4e3f26f9f7 on"),
    }
}

impl<P: PlatformFor<Event>> Kernel<P> {
    fn cpu(&self, cur: &Current<P>) -> u8 {
        self.cfg.cpu_of(cur.pid())
    }

    /// Sleep (the CPU given up) until woken or `timeout` jiffies pass; the jiffies left.
    fn sleep_timeout(&self, cur: &Current<P>, timeout: u64) -> u64 {
        let cpu = self.cpu(cur);
        cpu_give_up::<P, Event>(cur, &self.cpus, cpu, YieldWhy::Sleep);
        let left = io_schedule_timeout(cur, timeout);
        cpu_run::<P, Event>(cur, &self.cpus, cpu);
        left
    }

    /// `schedule()` with no timer (the CPU given up).
    fn sleep(&self, cur: &Current<P>) {
        let cpu = self.cpu(cur);
        cpu_give_up::<P, Event>(cur, &self.cpus, cpu, YieldWhy::Sleep);
        schedule(cur);
        cpu_run::<P, Event>(cur, &self.cpus, cpu);
    }

    fn cond_resched(&self, cur: &Current<P>) {
        cond_resched::<P, Event>(cur, &self.cpus, self.cpu(cur));
    }

    /// `reclaim_throttle(pgdat, reason)`. Nothing it reads is left in the caller's locals: a
    /// checkpoint at its end gives the task back the history it had when it was called (so
    /// that how the sleep went is not carried on in the state).
    pub fn reclaim_throttle(&self, cur: &Current<P>, reason: Reason) {
        let context = cur.loop_context();
        self.reclaim_throttle_body(cur, reason);
        cur.checkpoint(loop_summary(context, DONE_THROTTLE, reason as u64));
    }

    fn reclaim_throttle_body(&self, cur: &Current<P>, reason: Reason) {
        let role = &self.cfg.roles[cur.pid()];
        // Do not throttle kthreads other than kswapd (PF_KTHREAD): they may be needed for
        // reclaim to make progress.
        if role.is_kthread() && !matches!(role, Role::Kswapd { .. }) {
            cur.emit(Event::ThrottleSkipped { reason, why: SkipWhy::Kthread });
            // b485c6f1f9f5: cond_resched() before returning.
            if self.cfg.variant.kthread_resched() {
                self.cond_resched(cur);
            }
            return;
        }
        let timeout = throttle_timeout(self.cfg.variant, reason);
        match reason {
            Reason::Writeback => {
                let now = self.nr_writeback_throttled.fetch_add(1, AcqRel) + 1;
                cur.emit(Event::WritebackThrottledInc { now });
                if now == 1 {
                    let written = self.nr_throttled_written.load(Acquire);
                    self.nr_reclaim_start.store(written, Relaxed);
                    cur.emit(Event::ReclaimStart { written });
                }
            }
            Reason::Congested | Reason::Noprogress
                if self.cfg.variant.skip_noprogress() && self.skip_throttle_noprogress() =>
            {
                cur.emit(Event::ThrottleSkipped { reason, why: SkipWhy::FewWritePending });
                self.cond_resched(cur);
                return;
            }
            _ => {}
        }
        cur.emit(Event::Throttle { reason, timeout });
        let wq = reason.wq(self);
        prepare_to_wait(cur, wq, TASK_UNINTERRUPTIBLE);
        let mut dec_early = false;
        if reason == Reason::Writeback && self.mutated(cur, Mutation::DecBeforeSleep) {
            self.writeback_throttled_dec(cur);
            dec_early = true;
        }
        let mut left = self.sleep_timeout(cur, timeout);
        if left == 0 && self.mutated(cur, Mutation::ThrottleUntilWoken) {
            // Seeded bug: a timed-out waiter sleeps again, as if the throttle waited for its
            // condition rather than for a timeout.
            prepare_to_wait(cur, wq, TASK_UNINTERRUPTIBLE);
            left = self.sleep_timeout(cur, timeout);
        }
        finish_wait(cur, wq);
        if reason == Reason::Writeback && !dec_early {
            self.writeback_throttled_dec(cur);
        }
        cur.emit(Event::ThrottleEnd { reason, timeout, slept: timeout - left.min(timeout) });
    }

    fn writeback_throttled_dec(&self, cur: &Current<P>) {
        let now = self.nr_writeback_throttled.fetch_sub(1, AcqRel) - 1;
        cur.emit(Event::WritebackThrottledDec { now });
    }

    /// `skip_throttle_noprogress()`: skip if at most half the reclaimable pages are waiting
    /// for writeback (the kswapd-hopeless test is left out: kswapd never gives up here).
    fn skip_throttle_noprogress(&self) -> bool {
        let reclaimable = self.lru.load(Acquire);
        let write_pending = self.write_pending.load(Acquire);
        2 * write_pending <= reclaimable
    }

    /// `wake_throttle_isolated()`: wake the ISOLATED queue if anybody is on it.
    fn wake_throttle_isolated(&self, cur: &Current<P>) {
        if self.mutated(cur, Mutation::IsolatedWakesNobody) {
            // Seeded bug: nobody on the ISOLATED queue is ever woken (as if d818fca1cac3 had
            // left the wake out): each sleeper there sleeps its full HZ/50.
            return;
        }
        let wq = Reason::Isolated.wq(self);
        if waitqueue_active(wq) {
            wake_up(cur, wq);
        } else if P::last_read_stale() {
            // Nothing orders the sleeper's prepare_to_wait() before this lockless read (the
            // sleeper does not re-check NR_ISOLATED after it): as if the read came first.
            cur.emit(KernelEvent::WakeSkippedStale { wq: WQ_ISOLATED });
        } else {
            cur.emit(KernelEvent::WakeSkipped { wq: WQ_ISOLATED });
        }
    }

    /// mm/vmscan.c `too_many_isolated()` (kswapd never gets here: it is exempt).
    fn too_many_isolated_vmscan(&self, cur: &Current<P>, gfp: Gfp) -> bool {
        let context = cur.loop_context();
        let too_many = self.too_many_isolated_vmscan_body(cur, gfp);
        cur.checkpoint(loop_summary(context, DONE_TMI, too_many as u64));
        too_many
    }

    fn too_many_isolated_vmscan_body(&self, cur: &Current<P>, gfp: Gfp) -> bool {
        let mut inactive = self.lru.load(Acquire);
        let isolated = self.isolated.load(Acquire);
        // GFP_KERNEL (__GFP_IO | __GFP_FS) gets an eighth: GFP_NOIO and GFP_NOFS callers
        // may isolate more, so that they do not wait for reclaimers they may block.
        if gfp == Gfp::Kernel {
            inactive >>= 3;
        }
        let too_many = isolated > inactive;
        cur.emit(Event::TooManyIsolated { site: Site::Vmscan, isolated, limit: inactive, too_many });
        if !too_many {
            self.wake_throttle_isolated(cur);
        }
        too_many
    }

    /// mm/compaction.c `too_many_isolated()`.
    fn too_many_isolated_compaction(&self, cur: &Current<P>, gfp: Gfp) -> bool {
        let context = cur.loop_context();
        let too_many = self.too_many_isolated_compaction_body(cur, gfp);
        cur.checkpoint(loop_summary(context, DONE_TMI, too_many as u64));
        too_many
    }

    fn too_many_isolated_compaction_body(&self, cur: &Current<P>, gfp: Gfp) -> bool {
        let mut lru = self.lru.load(Acquire);
        let isolated = self.isolated.load(Acquire);
        // 4fbbb3fde3c6: __GFP_FS compactors get an eighth, GFP_NOFS keeps the whole.
        if self.cfg.variant.nofs_headroom() && gfp == Gfp::Kernel {
            lru >>= 3;
        }
        let too_many = isolated > lru / 2;
        cur.emit(Event::TooManyIsolated { site: Site::Compaction, isolated, limit: lru, too_many });
        if !too_many {
            self.wake_throttle_isolated(cur);
        }
        too_many
    }

    /// Ghost: counter `which` (0: `lru`, 1: `isolated`) is `now` after this task's operation on
    /// it (see `Kernel::ghost_pages`).
    #[inline(always)]
    fn ghost_pages(&self, which: usize, now: u32) {
        if P::Ghost::ENABLED {
            self.ghost_pages[which].store(now, Relaxed);
        }
    }

    fn isolate(&self, cur: &Current<P>, pages: u32) {
        let context = cur.loop_context();
        let lru = self.lru.fetch_sub(pages, AcqRel).wrapping_sub(pages);
        self.ghost_pages(0, lru);
        let isolated = self.isolated.fetch_add(pages, AcqRel) + pages;
        self.ghost_pages(1, isolated);
        cur.emit(Event::Isolate { pages, isolated });
        cur.checkpoint(loop_summary(context, DONE_ISOLATE, 0));
    }

    fn putback(&self, cur: &Current<P>, pages: u32) {
        if self.mutated(cur, Mutation::NoPutback) {
            return;
        }
        let context = cur.loop_context();
        let isolated = self.isolated.fetch_sub(pages, AcqRel) - pages;
        self.ghost_pages(1, isolated);
        if !self.mutated(cur, Mutation::PutbackForgetsLru) {
            let lru = self.lru.fetch_add(pages, AcqRel).wrapping_add(pages);
            self.ghost_pages(0, lru);
        }
        cur.emit(Event::Putback { pages, isolated });
        cur.checkpoint(loop_summary(context, DONE_PUTBACK, 0));
    }

    /// `shrink_inactive_list()` of a direct reclaimer: wait once for too many isolated, then
    /// isolate `batch` pages and put them back (whether they are reclaimed does not matter
    /// to throttling, only `progress` does, below).
    fn shrink_inactive_list(&self, cur: &Current<P>, gfp: Gfp, batch: u32) {
        let mut stalled = false;
        while self.too_many_isolated_vmscan(cur, gfp) {
            if stalled {
                cur.emit(Event::ShrinkGivesUp);
                return;
            }
            stalled = true;
            self.reclaim_throttle(cur, Reason::Isolated);
        }
        self.isolate(cur, batch);
        self.putback(cur, batch);
    }

    /// `consider_reclaim_throttle()` at the end of a direct reclaimer's `shrink_zones()`.
    fn consider_reclaim_throttle(&self, cur: &Current<P>, progress: bool) {
        cur.emit(Event::ConsiderThrottle { progress });
        if progress {
            let wq = Reason::Noprogress.wq(self);
            if waitqueue_active(wq) {
                wake_up(cur, wq);
            } else {
                cur.emit(KernelEvent::WakeSkipped { wq: WQ_NOPROGRESS });
            }
            return;
        }
        self.reclaim_throttle(cur, Reason::Noprogress);
    }

    /// `acct_reclaim_writeback()` for one page whose writeback ended.
    fn acct_reclaim_writeback(&self, cur: &Current<P>) {
        self.write_pending.fetch_sub(1, AcqRel);
        let throttled = self.nr_writeback_throttled.load(Acquire);
        if throttled == 0 {
            cur.emit(Event::WritebackDone { throttled, written: 0, start: 0, crossed: false });
            return;
        }
        let written = self.nr_throttled_written.fetch_add(1, AcqRel) + 1;
        let start = self.nr_reclaim_start.load(Acquire);
        let crossed = written.wrapping_sub(start) > self.cfg.swap_cluster_max * throttled;
        cur.emit(Event::WritebackDone { throttled, written, start, crossed });
        if crossed {
            let wq = Reason::Writeback.wq(self);
            if self.mutated(cur, Mutation::WakeOneWriteback) {
                self.wake_one(cur, wq);
            } else {
                wake_up(cur, wq);
            }
        }
    }

    /// Seeded bug: wake only the first waiter (`wake_up_nr(wq, 1)` on non-exclusive entries).
    fn wake_one(&self, cur: &Current<P>, wq: &WaitQueueHead<P>) {
        spin_lock(cur, &wq.lock);
        let list = wq.list();
        let queued = list.mask();
        let mut woken = 0;
        for pid in list.iter() {
            if woken == 0 && try_to_wake_up(cur.sched, &cur.sched.tasks[pid as usize], TASK_NORMAL) {
                wq.remove(pid);
                woken |= 1 << pid;
            }
        }
        cur.emit(KernelEvent::WakeUp { wq: wq.name, queued, woken, interruptible: false });
        spin_unlock(cur, &wq.lock);
    }

    /// The `isolate_migratepages_block()` entry loop and one block of compaction: wait while
    /// too many pages are isolated, isolate `batch`, migrate (taking the buffer lock first if
    /// the pages need it), put back.
    fn compact(&self, cur: &Current<P>, gfp: Gfp, mode: Mode, batch: u32, buffer: Buffer) {
        let context = cur.loop_context();
        loop {
            if !cur.loop_head(loop_summary(context, LOOP_COMPACT_TMI, 0)) {
                return;
            }
            if !self.too_many_isolated_compaction(cur, gfp) {
                break;
            }
            // cc->nr_migratepages is 0 at the block's start; no fatal signal in this model.
            if mode == Mode::Async {
                cur.emit(Event::AsyncAborts);
                return;
            }
            self.reclaim_throttle(cur, Reason::Isolated);
        }
        self.isolate(cur, batch);
        if buffer == Buffer::Needs {
            self.lock_buffer(cur);
        }
        cur.emit(Event::Migrated { pages: batch });
        if buffer == Buffer::Needs {
            self.unlock_buffer(cur);
        }
        self.putback(cur, batch);
    }

    /// `lock_buffer()`: take the lock if free, else sleep on it (the CPU given up).
    fn lock_buffer(&self, cur: &Current<P>) {
        let context = cur.loop_context();
        self.lock_buffer_body(cur);
        cur.checkpoint(loop_summary(context, DONE_LOCK_BUFFER, 0));
    }

    fn lock_buffer_body(&self, cur: &Current<P>) {
        if !self.buffer.try_lock() {
            cur.emit(Event::BufferWait);
            let cpu = self.cpu(cur);
            cpu_give_up::<P, Event>(cur, &self.cpus, cpu, YieldWhy::Sleep);
            self.buffer.lock();
            cpu_run::<P, Event>(cur, &self.cpus, cpu);
        }
        cur.emit(Event::BufferLocked);
    }

    fn unlock_buffer(&self, cur: &Current<P>) {
        self.buffer.unlock_with(|| cur.emit(Event::BufferUnlocked));
    }

    /// `__drain_all_pages()` and `flush_work()` on every CPU with a kworker.
    fn drain_all_pages(&self, cur: &Current<P>) {
        let cpus: Vec<u8> = self.cfg.kworker_cpus();
        if self.cfg.variant.remote_drain() {
            // 443c2accd1b6 (6.0): each CPU's lists are drained from here, under the lists'
            // spinlock, which no task of the model holds across a step; no work is queued.
            for &cpu in &cpus {
                cur.emit(Event::DrainedRemotely { cpu });
            }
            return;
        }
        for &cpu in &cpus {
            let w = &self.work[cpu as usize];
            w.pending.store(true, Relaxed);
            cur.emit(Event::QueueWork { cpu });
            wake_up(cur, &w.wq);
        }
        for &cpu in &cpus {
            let w = &self.work[cpu as usize];
            let context = cur.loop_context();
            loop {
                if !cur.loop_head(loop_summary(context, LOOP_FLUSH, cpu as u64)) {
                    return;
                }
                prepare_to_wait(cur, &w.done_wq, TASK_UNINTERRUPTIBLE);
                if w.done.load(Acquire) {
                    break;
                }
                cur.emit(Event::FlushWaits { cpu });
                self.sleep(cur);
            }
            finish_wait(cur, &w.done_wq);
            cur.emit(Event::Flushed { cpu });
        }
    }

    pub fn run_role(&self, cur: &Current<P>) {
        let pid = cur.pid();
        match self.cfg.roles[pid] {
            Role::Kswapd { batch, immediate, .. } => {
                // kswapd is exempt from too_many_isolated(); the pages it finds under writeback
                // and marked for immediate reclaim make shrink_node() throttle it.
                if batch > 0 {
                    self.isolate(cur, batch);
                    self.putback(cur, batch);
                }
                if immediate {
                    self.reclaim_throttle(cur, Reason::Writeback);
                }
            }
            Role::DirectReclaimer { gfp, batch, congested, progress, .. } => {
                if batch > 0 {
                    self.shrink_inactive_list(cur, gfp, batch);
                }
                if congested {
                    self.reclaim_throttle(cur, self.cfg.variant.congested_reason());
                }
                self.consider_reclaim_throttle(cur, progress);
            }
            Role::Kcompactd { batch, .. } => self.compact(cur, Gfp::Kernel, Mode::SyncLight, batch, Buffer::None),
            Role::Compactor { gfp, mode, batch, buffer, .. } => {
                if buffer == Buffer::Holds {
                    self.lock_buffer(cur);
                }
                let needs = if buffer == Buffer::Needs { Buffer::Needs } else { Buffer::None };
                self.compact(cur, gfp, mode, batch, needs);
                if buffer == Buffer::Holds {
                    self.unlock_buffer(cur);
                }
            }
            Role::Writeback { pages, .. } => {
                for _ in 0..pages {
                    self.acct_reclaim_writeback(cur);
                }
            }
            Role::Isolator { pages, .. } => {
                // alloc_migration_target() -> __alloc_pages_slowpath() -> __drain_all_pages().
                self.drain_all_pages(cur);
                self.putback(cur, pages);
            }
            Role::Kworker { .. } if self.cfg.variant.remote_drain() => {
                // 443c2accd1b6: nothing queues drain work any more. The kworker stays idle,
                // which the model writes as a worker that looks once and ends (an idle kworker
                // asleep for ever is not a hang).
                cur.emit(Event::WorkerIdle);
            }
            Role::Kworker { cpu } => {
                let w = &self.work[cpu as usize];
                let context = cur.loop_context();
                loop {
                    if !cur.loop_head(loop_summary(context, LOOP_WORKER, 0)) {
                        return;
                    }
                    prepare_to_wait(cur, &w.wq, TASK_UNINTERRUPTIBLE);
                    if w.pending.load(Acquire) {
                        break;
                    }
                    cur.emit(Event::WorkerIdle);
                    self.sleep(cur);
                }
                finish_wait(cur, &w.wq);
                cur.emit(Event::Drained { cpu });
                w.done.store(true, Relaxed);
                wake_up(cur, &w.done_wq);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::ghost::NoGhost;
    use crate::kernel::cpu::Preempt;
    use crate::platform::Std;
    use crate::throttle::Config;

    type K = Kernel<Std<NoGhost<Event>>>;

    /// A one-CPU kernel of `variant` whose only task is an isolator (the tests set the counts).
    fn kernel(variant: Variant) -> K {
        let cfg = Config {
            variant,
            mutation: None,
            roles: vec![crate::throttle::Role::Isolator { cpu: None, pages: 1 }],
            preempt: Preempt::Full,
            cpus: 1,
            lru: 0,
            write_pending: 0,
            swap_cluster_max: 32,
            queued_locks: false,
        };
        K::new(cfg, Arc::new(NoGhost::default()))
    }

    /// Both `too_many_isolated()`s at their edges (docs/kernel-source.md, Part 3): mm/vmscan.c's
    /// "isolated > inactive", an eighth of the LRU for GFP_KERNEL and all of it for GFP_NOFS;
    /// mm/compaction.c's "isolated > lru / 2", GFP_NOFS keeping the whole LRU from
    /// nofs-headroom on (4fbbb3fde3c6) and GFP_KERNEL an eighth of it there.
    #[test]
    fn too_many_isolated_at_its_edges() {
        let k = kernel;
        let set = |k: &K, lru, isolated| {
            k.lru.store(lru, Relaxed);
            k.isolated.store(isolated, Relaxed);
        };
        let v = k(Variant::V516Rc1);
        let cur = v.sched.enter(0);
        for (lru, isolated, gfp, too_many) in
            [(16, 2, Gfp::Kernel, false), (16, 3, Gfp::Kernel, true), (4, 4, Gfp::Nofs, false), (4, 5, Gfp::Nofs, true)]
        {
            set(&v, lru, isolated);
            assert_eq!(v.too_many_isolated_vmscan(&cur, gfp), too_many, "vmscan: {isolated} of {lru}, {gfp}");
        }
        for (variant, lru, isolated, gfp, too_many) in [
            (Variant::V516Rc1, 8, 4, Gfp::Kernel, false),
            (Variant::V516Rc1, 8, 5, Gfp::Kernel, true),
            (Variant::NofsHeadroom, 8, 4, Gfp::Nofs, false),
            (Variant::NofsHeadroom, 8, 5, Gfp::Nofs, true),
            (Variant::NofsHeadroom, 16, 1, Gfp::Kernel, false),
            (Variant::NofsHeadroom, 16, 2, Gfp::Kernel, true),
        ] {
            let k = k(variant);
            let cur = k.sched.enter(0);
            set(&k, lru, isolated);
            assert_eq!(
                k.too_many_isolated_compaction(&cur, gfp),
                too_many,
                "compaction, {variant:?}: {isolated} of {lru}, {gfp}"
            );
        }
    }

    /// `skip_throttle_noprogress()` (1b4e3f26f9f7): skip while at most half the reclaimable
    /// pages are under writeback, `2 * write_pending <= reclaimable`, at its edges.
    #[test]
    fn skip_throttle_noprogress_skips_while_at_most_half_is_under_writeback() {
        let k = kernel(Variant::NoprogressFix);
        for (lru, pending, skips) in
            [(2, 1, true), (3, 2, false), (4, 2, true), (4, 3, false), (6, 3, true), (0, 0, true)]
        {
            k.lru.store(lru, Relaxed);
            k.write_pending.store(pending, Relaxed);
            assert_eq!(k.skip_throttle_noprogress(), skips, "{pending} of {lru} under writeback");
        }
    }
}
