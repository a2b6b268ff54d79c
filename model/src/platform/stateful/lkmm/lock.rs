//! Locks in the memory model: a lock word whose stores are its acquisitions and releases
//! (linux-kernel.cat's lock.cat, and explanation.txt's LOCKING).

use super::{Loc, Memory, Msg};

impl Memory {
    /// A lock word: a location whose stores are its acquisitions (value 1) and releases (0).
    pub fn new_lock(&mut self) -> Loc {
        self.new_loc(0)
    }

    /// `spin_lock()` (or a `spin_trylock()` that succeeds) by `t`, the lock being free: an
    /// acquire RMW on the last release, which also orders what the releasing task stored
    /// before its release before what `t` stores after (`po-unlock-lock-po`), and, if `t`
    /// itself released a lock before, everything it did before that release.
    pub fn lock(&mut self, t: usize, l: Loc) {
        let rank = self.last_rank(l);
        debug_assert_eq!(self.locs[l][rank as usize].val, 0, "spin_lock of a held lock");
        self.read_at(t, l, rank, true, false);
        let released_own = self.locs[l][rank as usize].own.clone();
        let k = &mut self.tasks[t];
        if let Some(o) = released_own {
            k.carry.join(&o);
        }
        if let Some((own, full)) = k.last_unlock.clone() {
            k.rd.join(&full);
            k.wr.join(&full);
            k.carry.join(&own);
        }
        let view = k.carry.joined(&self.locs[l][rank as usize].view);
        self.locs[l][rank as usize].glued = true;
        self.place(t, l, rank + 1, Msg { val: 1, view, glued: false, own: None });
        let snap = self.tasks[t].reached();
        self.tasks[t].last_lock = Some(snap);
    }

    /// The acquisitions a failing `spin_trylock()` of `t` may read (newest first): any at or
    /// after its bound, stale ones too (a failed trylock is ordered with nothing).
    pub fn trylock_fails(&self, t: usize, l: Loc) -> Vec<u32> {
        let lb = self.tasks[t].lb_read(l);
        let msgs = &self.locs[l];
        (lb..msgs.len() as u32).rev().filter(|&r| msgs[r as usize].val != 0).collect()
    }

    /// A failing `spin_trylock()` of `t` reads acquisition `rank`.
    pub fn trylock_fail(&mut self, t: usize, l: Loc, rank: u32) {
        self.read_at(t, l, rank, false, false);
    }

    /// Whether lock `l` is free now.
    pub fn lock_free(&self, l: Loc) -> bool {
        self.latest(l) == 0
    }

    /// `spin_unlock()` by `t`: a release store after its acquisition, which also records what
    /// `t` stored before it.
    pub fn unlock(&mut self, t: usize, l: Loc) {
        let k = &self.tasks[t];
        let reached = k.reached();
        let view = k.carry.joined(&reached);
        let own = k.own.clone();
        let end = self.locs[l].len() as u32;
        self.place(t, l, end, Msg { val: 0, view, glued: false, own: Some(own.clone()) });
        let k = &mut self.tasks[t];
        k.last_unlock = Some((own, k.reached()));
    }
}
