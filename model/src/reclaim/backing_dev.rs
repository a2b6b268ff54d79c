//! mm/backing-dev.c (4.8): `wait_iff_congested()`, `set_wb_congested()`,
//! `clear_wb_congested()`. Kernel sources: docs/kernel-source.md.

use super::{Event, Kernel, Mutation, PGDAT_CONGESTED, WB_ASYNC_CONGESTED};
use crate::event::KernelEvent;
use crate::ghost::Ghost;
use crate::kernel::atomic::{
    atomic_dec_return_relaxed, atomic_inc, atomic_read, smp_mb__after_atomic, test_and_clear_bit, test_and_set_bit,
    test_bit,
};
use crate::kernel::sched::{io_schedule_timeout, Current, TASK_UNINTERRUPTIBLE};
use crate::kernel::wait::{finish_wait, prepare_to_wait, waitqueue_active, wake_up};
use crate::model::PlatformFor;

/// The condition `wait_iff_congested()` stalls on: some backing device is congested
/// (`atomic_read(&nr_wb_congested[sync])`, a global count) and the node is tagged
/// PGDAT_CONGESTED.
fn congested<P: PlatformFor<Event>>(k: &Kernel<P>, nid: i32) -> bool {
    atomic_read::<P>(&k.nr_wb_congested) != 0 && test_bit::<P>(PGDAT_CONGESTED, &k.pgdat[nid as usize].flags)
}

/// `wait_iff_congested(pgdat, BLK_RW_ASYNC, timeout)`: if congested, sleep on
/// `congestion_wqh` until a backing device un-congests or `timeout` passes. As in the
/// kernel, the condition is tested before `prepare_to_wait()` and never again, so an
/// un-congestion between the test and the enqueue is not seen; `recheck` tests it again
/// after the enqueue. Returns the jiffies left.
pub fn wait_iff_congested<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, nid: i32, timeout: u64) -> u64 {
    let c = congested(k, nid);
    cur.emit(Event::CongestionCheck { node: nid, congested: c });
    if !c {
        // cond_resched(): no sleep.
        return timeout;
    }
    let wq = &k.congestion_wqh;
    prepare_to_wait(cur, wq, TASK_UNINTERRUPTIBLE);
    let mut sleep = true;
    if k.cfg.variant.rechecks() {
        sleep = congested(k, nid);
        cur.emit(Event::Recheck { wq: wq.name, sleeps: sleep, exclusive: None });
    }
    let mut ret = timeout;
    if sleep {
        cur.emit(Event::DirectStall { node: nid });
        ret = io_schedule_timeout(cur, timeout);
    }
    finish_wait(cur, wq);
    ret
}

/// `set_wb_congested()`: `if (!test_and_set_bit(bit, &wb->state)) atomic_inc(nr_wb_congested)`.
pub fn set_wb_congested<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, bdi: usize) {
    if !test_and_set_bit::<P>(WB_ASYNC_CONGESTED, &k.bdi[bdi].state) {
        atomic_inc::<P>(&k.nr_wb_congested);
        cur.emit(Event::WbCongested);
    }
}

/// `clear_wb_congested()`: un-congest, then `smp_mb__after_atomic()` and wake
/// `congestion_wqh` if `waitqueue_active()`.
pub fn clear_wb_congested<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, bdi: usize) {
    let was = test_and_clear_bit::<P>(WB_ASYNC_CONGESTED, &k.bdi[bdi].state);
    if was {
        // The kernel's atomic_dec(); checker builds check that nr_wb_congested, a count of the
        // congested devices, never goes below zero (a device un-congested that was never
        // counted: set_wb_congested()'s test of its bit inverted, for one).
        let left = atomic_dec_return_relaxed::<P>(&k.nr_wb_congested);
        if P::Ghost::ENABLED {
            assert!(left >= 0, "nr_wb_congested fell to {left}: a device un-congested that was never counted");
        }
    }
    if !k.mutated(cur, Mutation::NoBarrierClearWbCongested) {
        smp_mb__after_atomic::<P>();
    }
    if was {
        cur.emit(Event::WbUncongested);
    }
    let wq = &k.congestion_wqh;
    if waitqueue_active(wq) {
        wake_up(cur, wq);
    } else {
        cur.emit(KernelEvent::WakeSkipped { wq: wq.name });
    }
}

/// A backing device's life in a scenario: congested (at start, or now), then un-congested
/// by the block layer (`blk_clear_congested()` → `clear_wb_congested()`).
pub fn bdi<P: PlatformFor<Event>>(k: &Kernel<P>, cur: &Current<P>, bdi: usize, congested_at_start: bool) {
    if !congested_at_start {
        set_wb_congested(k, cur, bdi);
    }
    clear_wb_congested(k, cur, bdi);
}
