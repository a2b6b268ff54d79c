//! The operations, called by the platform's object types (`StAtomic`, `StSpinLock`, the task
//! handles): each is a yield point followed by its effect on the tables, with what it
//! returned folded into the task's local hash; and the ghost's entries (`reset_local`,
//! `observe`, ..).

use super::group::{Family, Kind, ObjMeta};
use super::hash::{lock_term, mix, obj_term, TAG_RESET};
use super::point::{enter, enter_obj, fold, kind_of, stale_object, yield_point};
use super::run::new_task;
use super::symmetry::{sym_reset, sym_save_context, sym_spawned};
use super::types::{LockId, ObjId, Op, TaskId, MAX_TASKS, NO_OWNER, NO_TASK};
use crate::kernel::sched::Summary;
use crate::platform::stateful::arena;
use crate::platform::SymTag;

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
        (i as ObjId, r.epoch)
    }
}

#[inline]
pub(crate) fn obj_load(o: ObjId, epoch: u32) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: live runtime; borrows end before every switch.
    unsafe {
        yield_point(rt, t, Op::Load(o));
        let v = (&mut *rt).objs[o as usize];
        fold(rt, t, v, kind_of(rt, o));
        v
    }
}

#[inline]
pub(crate) fn obj_store(o: ObjId, epoch: u32, v: u64) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Store(o));
        (&mut *rt).set_obj(o as usize, v);
    }
}

/// A read-modify-write: stores `f(old)`, returns `old`.
#[inline]
pub(crate) fn obj_rmw(o: ObjId, epoch: u32, f: impl FnOnce(u64) -> u64) -> u64 {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let old = (&mut *rt).objs[o as usize];
        (&mut *rt).set_obj(o as usize, f(old));
        fold(rt, t, old, kind_of(rt, o));
        old
    }
}

#[inline]
pub(crate) fn obj_cas(o: ObjId, epoch: u32, current: u64, new: u64) -> Result<u64, u64> {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Rmw(o));
        let old = (&mut *rt).objs[o as usize];
        let ok = old == current;
        if ok {
            (&mut *rt).set_obj(o as usize, new);
        }
        fold(rt, t, old, kind_of(rt, o));
        fold(rt, t, ok as u64, Kind::Plain);
        if ok {
            Ok(old)
        } else {
            Err(old)
        }
    }
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
    }
}

#[inline]
pub(crate) fn lock_try(l: LockId, epoch: u32) -> bool {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::TryLock(l));
        let r = &mut *rt;
        let free = r.locks[l as usize] == NO_OWNER;
        if free {
            r.locks[l as usize] = t as u8;
            r.shared ^= lock_term(l as usize, t);
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
    }
}

pub(crate) fn park() {
    let (rt, t) = enter();
    // SAFETY: as in `obj_load`.
    unsafe {
        yield_point(rt, t, Op::Park);
        (&mut *rt).tasks[t].token = false;
    }
}

pub(crate) fn unpark(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len(), "stateful runtime: unpark of unknown task {u}");
        yield_point(rt, t, Op::Unpark(u));
        (&mut *rt).tasks[u].token = true;
    }
}

pub(crate) fn join(u: TaskId, epoch: u32) {
    let (rt, t) = enter_obj(epoch);
    // SAFETY: as in `obj_load`.
    unsafe {
        assert!(u < (&mut *rt).tasks.len() && u != t, "stateful runtime: join of task {u} by task {t}");
        yield_point(rt, t, Op::Join(u));
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
            for &(u, epoch) in tasks {
                join(u, epoch);
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
        sym_spawned(rt, id);
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
        (&*rt).tasks[t].local
    }
}

/// Folds `v` into the current task's local hash (a value the ghost hands to model code).
pub fn observe(v: u64) {
    let (rt, t) = enter();
    // SAFETY: live runtime.
    unsafe { fold(rt, t, v, Kind::Plain) }
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
        }
        saved
    };
    let r = f();
    // SAFETY: as above.
    unsafe { ((&mut *rt).sym.family, (&mut *rt).sym.kind) = saved };
    r
}
