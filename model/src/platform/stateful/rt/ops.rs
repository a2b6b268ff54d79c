//! The operations, called by the platform's object types (`StAtomic`, `StSpinLock`, the task
//! handles): each is a yield point followed by its effect on the tables, with what it
//! returned folded into the task's local hash; and the ghost's entries (`reset_local`,
//! `observe`, ..).

use super::group::{Family, Kind, ObjMeta};
use super::hash::{lock_term, mix, obj_term, TAG_RESET};
use core::sync::atomic::Ordering;

use super::memory::{choose, rmw_kind};
use super::point::{enter, enter_obj, fold, kind_of, stale_object, yield_point};
use super::run::new_task;
use super::shadow::{shadow_reset, shadow_save_context, shadow_spawned};
use super::state::Rt;
use super::symmetry::{sym_reset, sym_save_context, sym_spawned};
use super::types::{LockId, ObjId, Op, TaskId, MAX_TASKS, NO_OWNER, NO_TASK};
use crate::kernel::sched::Summary;
use crate::platform::stateful::arena;
use crate::platform::stateful::lkmm::{Load, Store};
use crate::platform::{KernelFence, SymTag};

/// `t` runs the kernel fence `f` (a step of its own under `lkmm`; nothing under `sc`).
#[inline]
pub(crate) fn kernel_fence(f: KernelFence) {
    let (rt, t) = enter();
    // SAFETY: live runtime; no borrow held.
    unsafe { super::memory::fence(rt, t, f) }
}

pub(crate) fn obj_new(v: u64) -> (ObjId, u32) {
    let (rt, _) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrow.
    unsafe {
        let r = &mut *rt;
        let i = r.objs.len();
        r.objs.push(v);
        r.shared ^= obj_term(i, v);
        r.sym.meta.push(ObjMeta { family: r.sym.family, kind: r.sym.kind });
        if r.lkmm {
            let x = r.lk.mem.new_loc(v);
            r.lk.obj_loc.push(x);
        }
        (i as ObjId, r.epoch)
    }
}

#[inline]
pub(crate) fn obj_load(o: ObjId, epoch: u32, order: Ordering) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: live runtime; borrows end before every switch.
    unsafe {
        yield_point(rt, t, Op::Load(o));
        let v = if (*rt).lkmm { lk_load(rt, t, o, order) } else { (&mut *rt).objs[o as usize] };
        fold(rt, t, v, kind_of(rt, o));
        v
    }
}

#[inline]
pub(crate) fn obj_store(o: ObjId, epoch: u32, v: u64, order: Ordering) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Store(o));
        if (*rt).lkmm {
            lk_store(rt, t, o, v, order);
        } else {
            (&mut *rt).set_obj(o as usize, v);
        }
    }
}

/// A read-modify-write: stores `f(old)`, returns `old`.
#[inline]
pub(crate) fn obj_rmw(o: ObjId, epoch: u32, order: Ordering, f: impl Fn(u64) -> u64) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let old = if (*rt).lkmm {
            lk_rmw(rt, t, o, order, None, &|_| true, &f).0
        } else {
            let old = (&mut *rt).objs[o as usize];
            (&mut *rt).set_obj(o as usize, f(old));
            old
        };
        fold(rt, t, old, kind_of(rt, o));
        old
    }
}

#[inline]
pub(crate) fn obj_cas(
    o: ObjId,
    epoch: u32,
    current: u64,
    new: u64,
    success: Ordering,
    failure: Ordering,
) -> Result<u64, u64> {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let (old, ok) = if (*rt).lkmm {
            lk_rmw(rt, t, o, success, Some(failure), &|v| v == current, &|_| new)
        } else {
            let old = (&mut *rt).objs[o as usize];
            let ok = old == current;
            if ok {
                (&mut *rt).set_obj(o as usize, new);
            }
            (old, ok)
        };
        fold(rt, t, old, kind_of(rt, o));
        fold(rt, t, ok as u64, Kind::Plain);
        if ok {
            Ok(old)
        } else {
            Err(old)
        }
    }
}

/// A load under `lkmm`: the chooser picks the store it reads among those the task may.
///
/// # Safety
/// `rt` is the live runtime and `t` the running task, past its yield point.
unsafe fn lk_load(rt: *mut Rt, t: TaskId, o: ObjId, order: Ordering) -> u64 {
    let x = (&*rt).lk.obj_loc[o as usize];
    let alts = (&*rt).lk.mem.load_alts(t, x);
    let a = choose(rt, t, alts);
    let _off = arena::off();
    let how = if matches!(order, Ordering::Relaxed) { Load::Once } else { Load::Acquire };
    let lk = &mut (&mut *rt).lk;
    let (v, stale) = lk.mem.load(t, x, a, how);
    lk.stale = stale;
    lk.mem.collect();
    v
}

/// A store under `lkmm`: the chooser picks where it goes in coherence order.
///
/// # Safety
/// As [`lk_load`].
unsafe fn lk_store(rt: *mut Rt, t: TaskId, o: ObjId, v: u64, order: Ordering) {
    let x = (&*rt).lk.obj_loc[o as usize];
    let how = if matches!(order, Ordering::Relaxed) { Store::Once } else { Store::Release };
    // Only a count crosses the choice point: a snapshot restores the stack but not the heap
    // outside the execution's arena, so the list is made again after it (the memory is as it
    // was).
    let alts = {
        let _off = arena::off();
        (&*rt).lk.mem.store_slots(t, x, how).len()
    };
    let a = choose(rt, t, alts);
    let _off = arena::off();
    let r = &mut *rt;
    let slot = r.lk.mem.store_slots(t, x, how)[a];
    r.lk.mem.store(t, x, slot, v, how);
    r.lk.mem.collect();
    let latest = r.lk.mem.latest(x);
    r.set_obj(o as usize, latest);
}

/// A read-modify-write under `lkmm`: the chooser picks the store it reads (and so whether a
/// conditional one succeeds). The value read, and whether it stored `new(value)`.
///
/// # Safety
/// As [`lk_load`].
unsafe fn lk_rmw(
    rt: *mut Rt,
    t: TaskId,
    o: ObjId,
    success: Ordering,
    failure: Option<Ordering>,
    succeeds: &dyn Fn(u64) -> bool,
    new: &dyn Fn(u64) -> u64,
) -> (u64, bool) {
    let x = (&*rt).lk.obj_loc[o as usize];
    // As in `lk_store`, only counts cross the choice point.
    let (how, alts) = {
        let _off = arena::off();
        let lk = &mut (&mut *rt).lk;
        let how = rmw_kind(lk, t, success, failure);
        (how, lk.mem.rmw_reads(t, x, how, succeeds).len())
    };
    let a = choose(rt, t, alts);
    let _off = arena::off();
    let r = &mut *rt;
    let read = r.lk.mem.rmw_reads(t, x, how, succeeds)[a];
    let stale = read.rank as usize + 1 != r.lk.mem.len(x);
    let old = r.lk.mem.rmw(t, x, read, how, new);
    r.lk.stale = stale;
    r.lk.mem.collect();
    let latest = r.lk.mem.latest(x);
    r.set_obj(o as usize, latest);
    (old, read.ok)
}

pub(crate) fn lock_new() -> (LockId, u32) {
    let (rt, _) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrow.
    unsafe {
        let r = &mut *rt;
        r.locks.push(NO_OWNER);
        if r.sym.family != Family::Global {
            r.sym.family_locks = true;
        }
        if r.lkmm {
            let x = r.lk.mem.new_lock();
            r.lk.lock_loc.push(x);
        }
        ((r.locks.len() - 1) as LockId, r.epoch)
    }
}

#[inline]
pub(crate) fn lock_lock(l: LockId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        let live = yield_point(rt, t, Op::Lock(l));
        let r = &mut *rt;
        let o = &mut r.locks[l as usize];
        if *o != NO_OWNER {
            // Only when unwinding: the lock was not enabled.
            debug_assert!(!live, "stateful runtime: resumed a blocked lock");
            return;
        }
        *o = t as u8;
        r.shared ^= lock_term(l as usize, t);
        if r.lkmm {
            let _off = arena::off();
            let x = r.lk.lock_loc[l as usize];
            r.lk.mem.lock(t, x);
            r.lk.mem.collect();
        }
    }
}

#[inline]
pub(crate) fn lock_try(l: LockId, epoch: u32) -> bool {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::TryLock(l));
        let mut free = (&*rt).locks[l as usize] == NO_OWNER;
        if (*rt).lkmm {
            // Under lkmm a trylock may also fail on an acquisition that a release has already
            // superseded (a failed trylock is ordered with nothing): alternative 0 is the
            // success if the lock is free, the others the acquisitions it may read.
            let x = (&*rt).lk.lock_loc[l as usize];
            // As in `lk_store`, only counts cross the choice point.
            let alts = {
                let _off = arena::off();
                (&*rt).lk.mem.trylock_fails(t, x).len() + usize::from(free)
            };
            let a = choose(rt, t, alts);
            if !(free && a == 0) {
                let _off = arena::off();
                let rank = (&*rt).lk.mem.trylock_fails(t, x)[a - usize::from(free)];
                let lk = &mut (&mut *rt).lk;
                lk.stale = rank as usize + 1 != lk.mem.len(x);
                lk.mem.trylock_fail(t, x, rank);
                lk.mem.collect();
                free = false;
            }
        }
        let r = &mut *rt;
        if free {
            r.locks[l as usize] = t as u8;
            r.shared ^= lock_term(l as usize, t);
            if r.lkmm {
                let _off = arena::off();
                let x = r.lk.lock_loc[l as usize];
                r.lk.mem.lock(t, x);
                r.lk.mem.collect();
            }
        }
        fold(rt, t, free as u64, Kind::Plain);
        free
    }
}

/// `unlock`, calling `released` in the same step, just before the lock is freed.
#[inline]
pub(crate) fn lock_unlock(l: LockId, epoch: u32, released: impl FnOnce()) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        let live = yield_point(rt, t, Op::Unlock(l));
        if (&mut *rt).locks[l as usize] != t as u8 {
            if live {
                panic!("stateful runtime: task {t} unlocked lock {l}, which it does not hold");
            }
            return;
        }
        released();
        let r = &mut *rt;
        r.locks[l as usize] = NO_OWNER;
        r.shared ^= lock_term(l as usize, t);
        if r.lkmm {
            let _off = arena::off();
            let x = r.lk.lock_loc[l as usize];
            r.lk.mem.unlock(t, x);
            r.lk.mem.collect();
        }
    }
}

pub(crate) fn park() {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Park);
        (&mut *rt).tasks[t].token = false;
        if (*rt).lkmm {
            let _off = arena::off();
            (&mut *rt).lk.mem.park(t);
        }
    }
}

pub(crate) fn unpark(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len(), "stateful runtime: unpark of unknown task {u}");
        yield_point(rt, t, Op::Unpark(u));
        (&mut *rt).tasks[u].token = true;
        if (*rt).lkmm {
            let _off = arena::off();
            (&mut *rt).lk.mem.unpark(t, u);
        }
    }
}

pub(crate) fn join(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len() && u != t, "stateful runtime: join of task {u} by task {t}");
        // Only a task that waits for every other task (inside `join_all`) is left out of
        // message collection: one that waits for `u` alone could, once joined, read a message
        // that only its own bounds kept (`lkmm::Memory::join_begin`).
        yield_point(rt, t, Op::Join(u));
        if (*rt).lkmm {
            let _off = arena::off();
            (&mut *rt).lk.mem.join(t, u);
        }
    }
}

/// Joins every task of `tasks` (never the caller). Without symmetry: one join after another,
/// in the given order. Under symmetry the order would break it (a body that joins task 1
/// before task 2 has no image that joins task 2 first), so the caller waits for all of them
/// at one scheduling point ([`Op::JoinAll`], whose mask the images rename); once every other
/// task has finished, the caller is alone and what it still does (reading the final state)
/// is no scheduling point either, since its order (node 0's objects first) would break the
/// symmetry too.
pub(crate) fn join_all(tasks: &[(TaskId, u32)]) {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        if (*rt).sym.images.is_empty() || (*rt).sym.join_in_order {
            // Under `lkmm` the caller waits for all of them as one join (message collection
            // leaves it out until the last one).
            let lkmm = (*rt).lkmm;
            if lkmm {
                (&mut *rt).lk.mem.join_begin(t);
            }
            for &(u, epoch) in tasks {
                join(u, epoch);
            }
            if lkmm {
                (&mut *rt).lk.mem.join_end(t);
            }
            return;
        }
        let mut mask = 0u32;
        for &(u, epoch) in tasks {
            if (*rt).epoch != epoch {
                stale_object();
            }
            assert!(u < (&*rt).tasks.len() && u != t, "stateful runtime: join of task {u} by task {t}");
            mask |= 1 << u;
        }
        yield_point(rt, t, Op::JoinAll(mask));
        let r = &mut *rt;
        if r.lkmm {
            let _off = arena::off();
            for &(u, _) in tasks {
                r.lk.mem.join(t, u);
            }
        }
        let all = if r.tasks.len() == 32 { u32::MAX } else { (1u32 << r.tasks.len()) - 1 };
        if r.finished | 1 << t == all {
            r.sym.solo = t;
        }
    }
}

pub(crate) fn yield_now() {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Yield);
    }
}

/// Creates a task (not a scheduling point): it is runnable with pending op [`Op::Start`].
/// Its id is folded into the spawner's local hash.
pub(crate) fn spawn<F: FnOnce() + 'static>(f: F) -> (TaskId, u32) {
    let (rt, t) = enter();
    let _off = arena::off();
    // SAFETY: live runtime, short borrows; the new slot is pushed while the running task's
    // coroutine is out of the table.
    unsafe {
        let id = (&mut *rt).tasks.len();
        assert!(id < MAX_TASKS, "stateful runtime: more than {MAX_TASKS} tasks");
        let slot = new_task(rt, id, f);
        (&mut *rt).tasks.push(slot);
        if (*rt).lkmm {
            let lk = &mut (&mut *rt).lk;
            let u = lk.mem.spawn(Some(t));
            debug_assert_eq!(u, id, "the memory's tasks are the runtime's");
            lk.hints.push(0);
        }
        sym_spawned(rt, id);
        shadow_spawned(rt, id);
        (&mut *rt).sym.solo = NO_TASK;
        // Plain under symmetry too: only the spawner uses the id, to join (docs/model.md,
        // "Symmetry", says why that is sound).
        fold(rt, t, id as u64, Kind::Plain);
        (id, (*rt).epoch)
    }
}

/// The current task's id and the execution's epoch (for `Platform::current`).
pub(crate) fn current() -> (TaskId, u32) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    (t, unsafe { (*rt).epoch })
}

/// Sets the current task's local hash to a mix of a fixed tag and `summary`: a loop head
/// whose state the model summarises forgets the history that led to it.
pub fn reset_local(summary: u64) {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrow.
    unsafe {
        assert!((*rt).sym.images.is_empty(), "stateful runtime: reset_local under symmetry (use reset_local_summary)");
        assert!(
            !(*rt).shadow.on,
            "stateful runtime: reset_local under the live-locals census (use reset_local_summary)"
        );
        (&mut *rt).tasks[t].local = mix(TAG_RESET, summary)
    }
}

/// [`reset_local`] with the model's summary in its parts: under symmetry, each image's local
/// hash is reset to the summary rebuilt over that image of the context (the context must be a
/// value [`local`] returned to this task).
pub fn reset_local_summary(summary: Summary) {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrows.
    unsafe {
        (&mut *rt).tasks[t].local = mix(TAG_RESET, summary.hash());
        if !(*rt).sym.images.is_empty() {
            sym_reset(rt, t, summary);
        }
        shadow_reset(rt, t, summary);
    }
}

/// The current task's local hash: everything it has observed and done so far (or, since its
/// last loop head, the model's summary of that loop's state and what followed it).
pub fn local() -> u64 {
    let (rt, t) = enter();
    // SAFETY: live runtime, short borrow.
    unsafe {
        if !(*rt).sym.images.is_empty() {
            sym_save_context(rt, t);
        }
        shadow_save_context(rt, t);
        (&*rt).tasks[t].local
    }
}

/// Folds `v` into the current task's local hash (a value the ghost hands to model code).
pub fn observe(v: u64) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { fold(rt, t, v, Kind::Plain) }
}

/// Under `memory = "lkmm"`, whether the calling task's park token is set (its next park returns
/// at once); `false` under `sc`, where a task that reads its own state as not woken has never
/// been unparked.
pub fn lkmm_token_set() -> bool {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { (*rt).lkmm && (&*rt).tasks[t].token }
}

/// Whether this execution runs under `memory = "lkmm"`.
pub fn lkmm_on() -> bool {
    let (rt, _) = enter();
    // SAFETY: live runtime.
    unsafe { (*rt).lkmm }
}

/// Under `memory = "lkmm"`: whether the calling task's last memory operation read a store that
/// a later store had superseded (for reports; not part of any state).
pub fn last_read_stale() -> bool {
    let (rt, _) = enter();
    // SAFETY: live runtime.
    unsafe { (*rt).lk.stale }
}

/// [`observe`] of a mask of pids (a ghost's answer that names tasks).
pub fn observe_pids(mask: u32) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { fold(rt, t, mask as u64, Kind::PidMask) }
}

/// Runs `f`; the objects it creates carry `tag` (see [`crate::platform::SymTag`]).
pub fn tagged<R>(tag: SymTag, f: impl FnOnce() -> R) -> R {
    let (rt, _) = enter();
    // SAFETY: live runtime, short borrows that end before and after `f`.
    let saved = unsafe {
        let s = &mut (&mut *rt).sym;
        let saved = (s.family, s.kind);
        match tag {
            SymTag::Node(n) => s.family = Family::Node(n),
            SymTag::Pid(p) => s.family = Family::Pid(p),
            SymTag::NodeValue => s.kind = Kind::NodeValue,
            SymTag::PidMask => s.kind = Kind::PidMask,
            SymTag::PidList => s.kind = Kind::PidList,
        }
        saved
    };
    let r = f();
    // SAFETY: as above.
    unsafe { ((&mut *rt).sym.family, (&mut *rt).sym.kind) = saved };
    r
}
