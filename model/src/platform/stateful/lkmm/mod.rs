//! The Linux-kernel memory model (LKMM), operationally, for an explicit-state search: the
//! memory of an execution under `memory = "lkmm"` (docs/model.md, "The kernel's memory model").
//!
//! The LKMM (tools/memory-model in the kernel tree: linux-kernel.cat, .bell, .def, and
//! Documentation/explanation.txt) is axiomatic: herd7 enumerates candidate executions and
//! filters them. A stored-state search needs states instead, so this is a view-based
//! operational reading in the family of the promising semantics without promises (Kang, Hur,
//! Lahav, Vafeiadis, Dreyer, POPL 2017), with per-location views (the LKMM is not
//! multicopy-atomic, so Promising-ARM's single timeline, Pulte et al. PLDI 2019, is too strong):
//!
//! * **Memory** is, per location, its stores in coherence order (the messages), each with the
//!   value, the *view* it carries (for each location, the rank of the latest store that
//!   reached every CPU before this one did) and whether the next message is the write of an
//!   RMW that read it (`glued`: nothing may ever be placed between the two). A store may be
//!   placed anywhere after the storing task's lower bound, not only at the end (the S, R and
//!   2+2W shapes need it).
//! * **Each task** carries views: `coh` (coherence: what it last read or wrote at each
//!   location), `rd` and `wr` (lower bounds for later reads, and for where later stores may be
//!   placed), `rv` (what its ordinary reads brought in, for `smp_rmb()`), `seen` (everything
//!   that has reached it: read messages with their views, and its own stores), `own` (its own
//!   stores with what they carried, for `smp_wmb()` and unlock+lock), `carry` (what its next
//!   plain stores must carry).
//! * **A global view** `g` for strong fences: `smp_mb()` publishes what has reached the task
//!   and takes what every earlier strong fence published (the order in which the search runs
//!   the fences is the strong-fence order).
//!
//! The rules, primitive by primitive, with the litmus test that shows each one, are in
//! docs/model.md ("The kernel's memory model"). No load buffering: a read reads a store that
//! already exists, so every outcome that needs a cycle of reads-from and program order
//! (LB+poonceonces) is missing; every verdict under `lkmm` says so.
//!
//! **Finite states.** Ranks are indices into each location's list; a message that no live task
//! can read any more, or place a store before, is dropped, and every view entry below the first
//! kept message is rounded up to it ([`Memory::collect`]). The hash covers the messages, their
//! views, `g` and every task's views ([`Memory::hash`]): a finished task's too, in the canonical
//! form of [`Memory::finish`], since the task that joins it takes them.

mod collect;
mod lock;
mod view;

pub use view::{Loc, View};

/// One store of a location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Msg {
    pub(super) val: u64,
    pub(super) view: View,
    /// The next message is the write of an RMW that read this one.
    pub(super) glued: bool,
    /// A lock's release: the releasing task's own stores (for `po-unlock-lock-po`).
    pub(super) own: Option<View>,
}

/// What one task's accesses have done to its views.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Task {
    pub(super) coh: View,
    pub(super) rd: View,
    pub(super) wr: View,
    pub(super) rv: View,
    pub(super) seen: View,
    pub(super) own: View,
    pub(super) carry: View,
    /// `smp_mb__before_atomic()`: what reached the task before it, for its next RMW.
    pub(super) before: Option<View>,
    /// Right after the task's last RMW, and after its last lock acquisition (for
    /// `smp_mb__after_atomic()` and `smp_mb__after_spinlock()`).
    pub(super) last_rmw: Option<View>,
    pub(super) last_lock: Option<View>,
    /// At its last unlock: its own stores, and everything that had reached it.
    pub(super) last_unlock: Option<(View, View)>,
    /// What an unpark of this task released (taken by its next park).
    pub(super) token: View,
    pub(super) live: bool,
    /// Waiting to join other tasks (left out of message collection until it has).
    pub(super) joining: bool,
}

impl Task {
    /// The least rank of `x` a read may read.
    #[inline]
    pub(super) fn lb_read(&self, x: Loc) -> u32 {
        self.coh.get(x).max(self.rd.get(x))
    }
    /// The least rank a store to `x` may be placed after.
    #[inline]
    fn lb_write(&self, x: Loc) -> u32 {
        self.coh.get(x).max(self.wr.get(x))
    }
    /// Everything that has reached the task (its coherence view and what it has seen).
    pub(super) fn reached(&self) -> View {
        self.coh.joined(&self.seen)
    }
}

/// How a load is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// `READ_ONCE()`, `atomic_read()`, `test_bit()`.
    Once,
    /// `smp_load_acquire()`.
    Acquire,
}

/// How a store is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// `WRITE_ONCE()`, `atomic_set()`.
    Once,
    /// `smp_store_release()`.
    Release,
}

/// How a read-modify-write is ordered (Documentation/atomic_t.txt, ORDERING).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Rmw {
    /// Fully ordered (a value-returning RMW: `xchg`, `cmpxchg`, `atomic_*_return`,
    /// `test_and_set_bit`): like an `smp_mb()` before and after, when it succeeds.
    pub mb: bool,
    /// `_acquire` and `_release` forms.
    pub acquire: bool,
    pub release: bool,
    /// A non-value-returning RMW (`atomic_inc`, `set_bit`): `smp_rmb()` does not order its
    /// read.
    pub void: bool,
    /// A failed conditional RMW's read is an acquire (a C11 `compare_exchange` failure order).
    pub fail_acquire: bool,
}

/// A fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fence {
    /// `smp_mb()`: a strong fence.
    Mb,
    /// `smp_rmb()`.
    Rmb,
    /// `smp_wmb()`.
    Wmb,
    /// `smp_mb__before_atomic()`: a strong fence from what came before to the task's next RMW.
    BeforeAtomic,
    /// `smp_mb__after_atomic()`: a strong fence from the task's last RMW on.
    AfterAtomic,
    /// `smp_mb__after_spinlock()`: a strong fence from the task's last lock acquisition on.
    AfterSpinlock,
    /// `smp_mb__after_unlock_lock()`: a strong fence from the task's last unlock on.
    AfterUnlockLock,
}

/// What a read-modify-write read: the message's rank, and whether it succeeded (it stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmwRead {
    pub rank: u32,
    pub ok: bool,
}

/// A defect seeded into the memory model, to show that its tests can fail (docs/model.md, "The
/// kernel's memory model in the stateful engine"): `mmcheck litmus` with
/// `MMCHECK_LKMM_DEFECT=NAME` runs under it, and checks/tests/litmus.rs shows each caught.
/// Process-wide, off (0) unless set; read only by the stateful platform's memory model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Defect {
    /// `smp_mb()` orders only the task's own later accesses after its earlier ones and joins
    /// no global view: store buffering with a full barrier on both sides becomes possible.
    MbIsLocal = 1,
    /// A release store carries only the writer's earlier stores' ordering of `smp_wmb()`,
    /// not the writer's whole view: message passing through release/acquire breaks.
    ReleaseCarriesNothing = 2,
    /// Message collection keeps only what the *most* advanced live task can read: a message
    /// that a slower task could still read is dropped, so stale reads that the LKMM allows
    /// (store buffering without barriers) disappear.
    CollectDropsReadable = 3,
}

static DEFECT: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(0);

impl Defect {
    /// Every defect's name.
    pub const NAMES: &'static str = "mb-is-local, release-carries-nothing or collect-drops-readable";
    /// The defect of a name (`mb-is-local`, `release-carries-nothing`,
    /// `collect-drops-readable`).
    pub fn named(name: &str) -> Option<Defect> {
        match name {
            "mb-is-local" => Some(Defect::MbIsLocal),
            "release-carries-nothing" => Some(Defect::ReleaseCarriesNothing),
            "collect-drops-readable" => Some(Defect::CollectDropsReadable),
            _ => None,
        }
    }
    /// Seed `d` (or none) for the whole process.
    pub fn seed(d: Option<Defect>) {
        DEFECT.store(d.map_or(0, |d| d as u8), core::sync::atomic::Ordering::Relaxed);
    }
    fn on(self) -> bool {
        DEFECT.load(core::sync::atomic::Ordering::Relaxed) == self as u8
    }
}

/// The memory of one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    locs: Vec<Vec<Msg>>,
    g: View,
    tasks: Vec<Task>,
}

/// More alternatives than one scheduling choice can name (docs/model.md says why it cannot
/// happen in the shipped models: the garbage collection keeps every location short).
pub const MAX_ALTS: usize = 32;

impl Memory {
    /// A new location holding `val` (its initial store, which carries nothing).
    pub fn new_loc(&mut self, val: u64) -> Loc {
        self.locs.push(vec![Msg { val, view: View::default(), glued: false, own: None }]);
        self.locs.len() - 1
    }

    /// The latest value of `x` (its last store in coherence order).
    pub fn latest(&self, x: Loc) -> u64 {
        self.locs[x].last().expect("a location has a store").val
    }

    /// Stores `x` holds.
    pub fn len(&self, x: Loc) -> usize {
        self.locs[x].len()
    }

    pub(super) fn last_rank(&self, x: Loc) -> u32 {
        (self.locs[x].len() - 1) as u32
    }

    /// A new task: the body (no parent) or one its parent spawned, which starts having seen
    /// everything that had reached its parent.
    pub fn spawn(&mut self, parent: Option<usize>) -> usize {
        let mut t = Task { live: true, ..Task::default() };
        if let Some(p) = parent {
            let r = self.tasks[p].reached();
            t.coh = r.clone();
            t.rd = r.clone();
            t.wr = r.clone();
            t.rv = r.clone();
            t.seen = r;
        }
        self.tasks.push(t);
        self.tasks.len() - 1
    }

    /// Task `t` finished: it reads nothing any more. What a later [`Self::join`] of it takes
    /// is all that is left of its views, in one canonical form (everything that reached it
    /// with its own stores in `seen`, its bounds joined with its coherence view in `rd` and
    /// `wr`): two finished tasks that a join cannot tell apart are the same state.
    pub fn finish(&mut self, t: usize) {
        let k = &self.tasks[t];
        let left = Task {
            seen: k.reached().joined(&k.own),
            rd: k.rd.joined(&k.coh),
            wr: k.wr.joined(&k.coh),
            ..Task::default()
        };
        self.tasks[t] = left;
    }

    /// `t` waits to join every other task (it reads and writes nothing until it has joined
    /// them all): message collection leaves it out, as it leaves out a finished task. Not for a
    /// task that waits for some of them only: a message that only its own bounds kept could be
    /// dropped while it waits, though a task it never joins holds the bounds that dropped it.
    pub fn join_begin(&mut self, t: usize) {
        self.tasks[t].joining = true;
    }

    /// `t` has joined the tasks it waited for: it takes part in message collection again.
    pub fn join_end(&mut self, t: usize) {
        self.tasks[t].joining = false;
    }

    /// `t` joined the finished task `u`: everything that reached `u` has reached `t`, and
    /// `t`'s later reads and stores are bounded as `u`'s were. (The second part is what makes
    /// leaving a joining task out of message collection sound: every message collection
    /// dropped while `t` waited was below some live task's bounds, and `t` has joined every
    /// task it waited for; see [`Self::collect`].)
    /// A task is joined once (its handle is consumed), so `u`'s views are then dropped: they
    /// can matter to nobody.
    pub fn join(&mut self, t: usize, u: usize) {
        let v = self.tasks[u].reached().joined(&self.tasks[u].own);
        let (rd, wr) = (self.tasks[u].rd.joined(&self.tasks[u].coh), self.tasks[u].wr.joined(&self.tasks[u].coh));
        if !self.tasks[u].live {
            self.tasks[u] = Task::default();
        }
        self.acquire(t, &v);
        let k = &mut self.tasks[t];
        k.rd.join(&rd);
        k.wr.join(&wr);
    }

    /// `t` unparks `u`: the wake-up releases what has reached `t` (the scheduler's
    /// release/acquire between a waker and the task it wakes).
    pub fn unpark(&mut self, t: usize, u: usize) {
        // A finished task takes nothing any more (and its views stay canonical).
        if self.tasks[u].live {
            let v = self.tasks[t].reached();
            self.tasks[u].token.join(&v);
        }
    }

    /// `t` returns from a park: it acquires what its wakers released.
    pub fn park(&mut self, t: usize) {
        let v = std::mem::take(&mut self.tasks[t].token);
        self.acquire(t, &v);
    }

    fn acquire(&mut self, t: usize, v: &View) {
        let k = &mut self.tasks[t];
        k.rd.join(v);
        k.wr.join(v);
        k.rv.join(v);
        k.seen.join(v);
    }

    // ------------------------------------------------------------------ loads

    /// How many messages of `x` task `t` may read: alternative `a` reads the `a`-th newest.
    pub fn load_alts(&self, t: usize, x: Loc) -> usize {
        (self.last_rank(x) - self.tasks[t].lb_read(x)) as usize + 1
    }

    /// `t` reads `x` (alternative `alt` of [`Self::load_alts`]): the value, and whether a
    /// later store had superseded it (a stale read).
    pub fn load(&mut self, t: usize, x: Loc, alt: usize, how: Load) -> (u64, bool) {
        let rank = self.last_rank(x) - alt as u32;
        debug_assert!(rank >= self.tasks[t].lb_read(x), "a read below the task's bound");
        self.read_at(t, x, rank, how == Load::Acquire, false);
        (self.locs[x][rank as usize].val, alt != 0)
    }

    /// The read of message `rank` of `x`: coherence, and what it brings in.
    pub(super) fn read_at(&mut self, t: usize, x: Loc, rank: u32, acquire: bool, void: bool) {
        let mut v = self.locs[x][rank as usize].view.clone();
        v.raise(x, rank);
        let k = &mut self.tasks[t];
        k.coh.raise(x, rank);
        if !void {
            k.rv.join(&v);
        }
        k.seen.join(&v);
        if acquire {
            k.rd.join(&v);
            k.wr.join(&v);
        }
    }

    // ------------------------------------------------------------------ stores

    /// Where task `t` may place a store to `x` (a release after everything before it): the
    /// ranks the new message may take, newest first.
    pub fn store_slots(&self, t: usize, x: Loc, how: Store) -> Vec<u32> {
        let k = &self.tasks[t];
        let mut lb = k.lb_write(x);
        if how == Store::Release {
            lb = lb.max(k.seen.get(x));
        }
        let msgs = &self.locs[x];
        (lb + 1..=msgs.len() as u32).rev().filter(|&p| !msgs[p as usize - 1].glued).collect()
    }

    /// `t` stores `val` to `x` at rank `slot` (one of [`Self::store_slots`]).
    pub fn store(&mut self, t: usize, x: Loc, slot: u32, val: u64, how: Store) {
        let k = &self.tasks[t];
        let view = match how {
            Store::Once => k.carry.clone(),
            Store::Release if Defect::ReleaseCarriesNothing.on() => k.carry.clone(),
            Store::Release => k.carry.joined(&k.reached()),
        };
        self.place(t, x, slot, Msg { val, view, glued: false, own: None });
    }

    /// Place `m` at rank `p` of `x`, as task `t`'s store.
    pub(super) fn place(&mut self, t: usize, x: Loc, p: u32, m: Msg) {
        self.shift_all(x, p);
        let mut v = m.view.clone();
        v.raise(x, p);
        self.locs[x].insert(p as usize, m);
        let k = &mut self.tasks[t];
        k.coh.raise(x, p);
        k.own.join(&v);
        k.seen.join(&v);
    }

    /// Every view's entry for `x` at or above `p` moves up one (a message goes in at `p`).
    fn shift_all(&mut self, x: Loc, p: u32) {
        for msgs in &mut self.locs {
            for m in msgs.iter_mut() {
                m.view.shift(x, p);
                if let Some(o) = &mut m.own {
                    o.shift(x, p);
                }
            }
        }
        self.g.shift(x, p);
        for k in &mut self.tasks {
            k.for_each_view(|v| v.shift(x, p));
        }
    }

    // ------------------------------------------------------------------ fences

    /// The strong fence of `smp_mb()` and its anchored forms: what reached the task (`from`)
    /// joined with every earlier strong fence's becomes every later fence's, and bounds the
    /// task's later reads, stores and what its stores carry.
    fn strong(&mut self, t: usize, from: &View) {
        let f = from.joined(&self.g);
        self.g = f.clone();
        let k = &mut self.tasks[t];
        k.rd.join(&f);
        k.wr.join(&f);
        k.carry.join(&f);
    }

    /// `t` runs the fence `f`.
    pub fn fence(&mut self, t: usize, f: Fence) {
        let k = &self.tasks[t];
        match f {
            Fence::Mb => {
                let r = k.reached();
                if Defect::MbIsLocal.on() {
                    // (Seeded defect: no global view, so no store-to-load order.)
                    let k = &mut self.tasks[t];
                    k.wr.join(&r);
                    k.carry.join(&r);
                    return;
                }
                self.strong(t, &r);
            }
            Fence::Rmb => {
                let rv = k.rv.clone();
                self.tasks[t].rd.join(&rv);
            }
            Fence::Wmb => {
                let own = k.own.clone();
                self.tasks[t].carry.join(&own);
            }
            Fence::BeforeAtomic => {
                let r = k.reached();
                match &mut self.tasks[t].before {
                    Some(b) => b.join(&r),
                    b @ None => *b = Some(r),
                }
            }
            Fence::AfterAtomic => {
                if let Some(s) = k.last_rmw.clone() {
                    self.strong(t, &s);
                }
            }
            Fence::AfterSpinlock => {
                if let Some(s) = k.last_lock.clone() {
                    self.strong(t, &s);
                }
            }
            Fence::AfterUnlockLock => {
                if let Some((_, full)) = k.last_unlock.clone() {
                    self.strong(t, &full);
                }
            }
        }
    }

    // ------------------------------------------------------------------ read-modify-writes

    /// The reads an RMW of `t` on `x` may make, newest first: a message it may read and
    /// succeed on (`ok`: it then stores right after it, so the message must have no RMW glued
    /// to it already), or one it reads and fails on. `succeeds` says, from the value read,
    /// whether the RMW stores (always, but for a compare-and-exchange).
    pub fn rmw_reads(&self, t: usize, x: Loc, how: Rmw, succeeds: impl Fn(u64) -> bool) -> Vec<RmwRead> {
        let k = &self.tasks[t];
        // A pending `smp_mb__before_atomic()` and a fully ordered RMW's own leading fence
        // raise the bounds of a read that succeeds.
        // (Both fences also take `g`; what they add at `x` is all that bounds this read.)
        let before_x = k.before.as_ref().map_or(0, |b| b.joined(&self.g).get(x));
        let mb_x = if how.mb { k.reached().joined(&self.g).get(x) } else { 0 };
        let release_x = if how.release { k.seen.get(x) } else { 0 };
        let lb_ok = k.lb_read(x).max(k.lb_write(x)).max(before_x).max(mb_x).max(release_x);
        let lb_fail = k.lb_read(x).max(before_x);
        let msgs = &self.locs[x];
        let mut out = Vec::new();
        for rank in (0..msgs.len() as u32).rev() {
            let m = &msgs[rank as usize];
            if succeeds(m.val) {
                if rank >= lb_ok && !m.glued {
                    out.push(RmwRead { rank, ok: true });
                }
            } else if rank >= lb_fail {
                out.push(RmwRead { rank, ok: false });
            }
        }
        out
    }

    /// `t`'s RMW on `x` reads `r` (one of [`Self::rmw_reads`]) and, if it succeeds, stores
    /// `new(value read)` right after it. The value read.
    pub fn rmw(&mut self, t: usize, x: Loc, r: RmwRead, how: Rmw, new: impl FnOnce(u64) -> u64) -> u64 {
        if let Some(b) = self.tasks[t].before.take() {
            // `smp_mb__before_atomic()`: a strong fence from what came before it.
            self.strong(t, &b);
        }
        if r.ok && how.mb {
            let from = self.tasks[t].reached();
            self.strong(t, &from);
        }
        let acquire = if r.ok { how.acquire } else { how.fail_acquire };
        self.read_at(t, x, r.rank, acquire, how.void);
        let old = self.locs[x][r.rank as usize].val;
        if r.ok {
            let k = &self.tasks[t];
            let read = &self.locs[x][r.rank as usize].view;
            // The write inherits the view of the message it read (rmw-sequence), and a release
            // or fully ordered RMW carries everything that reached the task.
            let mut view = k.carry.joined(read);
            if how.release || how.mb {
                view.join(&k.reached());
            }
            self.locs[x][r.rank as usize].glued = true;
            self.place(t, x, r.rank + 1, Msg { val: new(old), view, glued: false, own: None });
            if how.mb {
                let from = self.tasks[t].reached();
                self.strong(t, &from);
            }
        }
        let snap = self.tasks[t].reached();
        self.tasks[t].last_rmw = Some(snap);
        old
    }

    /// Messages held, over every location (for the figures).
    pub fn messages(&self) -> usize {
        self.locs.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tasks (1 and 2) spawned by a body (0) that made `n` locations holding 0.
    fn two(n: usize) -> (Memory, Vec<Loc>) {
        let mut m = Memory::default();
        m.spawn(None);
        let locs = (0..n).map(|_| m.new_loc(0)).collect();
        m.spawn(Some(0));
        m.spawn(Some(0));
        m.finish(0);
        (m, locs)
    }

    fn append(m: &mut Memory, t: usize, x: Loc, v: u64, how: Store) {
        let s = m.store_slots(t, x, how)[0];
        m.store(t, x, s, v, how);
    }

    /// Store buffering: without fences both reads may miss the other task's store; with
    /// `smp_mb()` on both sides the second fence sees the first one's store.
    #[test]
    fn sb_needs_both_fences() {
        let (mut m, l) = two(2);
        append(&mut m, 1, l[0], 1, Store::Once);
        append(&mut m, 2, l[1], 1, Store::Once);
        assert_eq!(m.load_alts(1, l[1]), 2, "the initial value is still readable");
        assert_eq!(m.load_alts(2, l[0]), 2);
        m.fence(1, Fence::Mb);
        m.fence(2, Fence::Mb);
        assert_eq!(m.load_alts(1, l[1]), 2, "the first fence publishes, it does not receive");
        assert_eq!(m.load_alts(2, l[0]), 1, "the second fence took the first one's store");
    }

    /// Message passing: the reader's `smp_rmb()` joins what the flag's message carried, which
    /// the writer's `smp_wmb()` put there.
    #[test]
    fn mp_needs_wmb_and_rmb() {
        for (wmb, rmb, forbidden) in
            [(false, false, false), (true, false, false), (false, true, false), (true, true, true)]
        {
            let (mut m, l) = two(2);
            append(&mut m, 1, l[0], 1, Store::Once);
            if wmb {
                m.fence(1, Fence::Wmb);
            }
            append(&mut m, 1, l[1], 1, Store::Once);
            assert_eq!(m.load(2, l[1], 0, Load::Once), (1, false));
            if rmb {
                m.fence(2, Fence::Rmb);
            }
            assert_eq!(m.load_alts(2, l[0]) == 1, forbidden, "wmb {wmb} rmb {rmb}");
        }
    }

    /// A store may go before a store that is already there (the S shape needs it), but not
    /// between an RMW and the message it read, and not before what the task has seen.
    #[test]
    fn stores_go_anywhere_after_the_bound_but_never_inside_an_rmw() {
        let (mut m, l) = two(1);
        append(&mut m, 1, l[0], 2, Store::Once);
        assert_eq!(m.store_slots(2, l[0], Store::Once), vec![2, 1]);
        let r = m.rmw_reads(2, l[0], Rmw::default(), |_| true);
        assert_eq!(r, vec![RmwRead { rank: 1, ok: true }, RmwRead { rank: 0, ok: true }]);
        m.rmw(2, l[0], r[1], Rmw::default(), |v| v + 10);
        // The RMW read the initial 0 and sits right after it: 0, 10, 2.
        assert_eq!(m.latest(l[0]), 2);
        assert_eq!(m.store_slots(1, l[0], Store::Once), vec![3], "task 1 wrote the last one");
        assert_eq!(m.store_slots(2, l[0], Store::Once), vec![3, 2], "not between 0 and the RMW");
    }

    /// A failed compare-and-exchange is ordered with nothing; a successful fully ordered one
    /// is a strong fence on both sides.
    #[test]
    fn cmpxchg_orders_only_when_it_succeeds() {
        let full = Rmw { mb: true, ..Rmw::default() };
        for ok in [false, true] {
            let (mut m, l) = two(2);
            append(&mut m, 2, l[1], 1, Store::Once);
            m.fence(2, Fence::Mb);
            let want = if ok { 0 } else { 5 };
            let reads = m.rmw_reads(1, l[0], full, |v| v == want);
            assert_eq!(reads.len(), 1);
            m.rmw(1, l[0], reads[0], full, |_| 1);
            assert_eq!(m.load_alts(1, l[1]) == 1, ok, "cmpxchg succeeded: {ok}");
        }
    }

    /// Messages nobody can read any more are dropped, and the states they left merge.
    #[test]
    fn collection_keeps_the_state_finite() {
        let (mut m, l) = two(1);
        for v in 1..=5 {
            append(&mut m, 1, l[0], v, Store::Once);
            assert_eq!(m.load(2, l[0], 0, Load::Once), (v, false));
            m.collect();
        }
        assert_eq!(m.messages(), 1);
        let (mut a, la) = two(1);
        append(&mut a, 1, la[0], 5, Store::Once);
        a.load(2, la[0], 0, Load::Once);
        a.collect();
        assert_eq!(a.hash(), m.hash());
        assert_eq!(a, m);
    }

    /// Three tasks (1 to 3) spawned by a body (0) that made one location holding 0 and now
    /// waits to join them all.
    fn three_and_a_waiting_body() -> (Memory, Loc) {
        let mut m = Memory::default();
        m.spawn(None);
        let x = m.new_loc(0);
        for _ in 1..=3 {
            m.spawn(Some(0));
        }
        m.join_begin(0);
        (m, x)
    }

    /// A finished task's views are in the hash until it is joined: the task that joins it
    /// takes them, so two states that differ only there have different futures. Finished
    /// tasks that no join can tell apart, and joined ones, hash the same.
    #[test]
    fn a_finished_tasks_views_count_until_it_is_joined() {
        // The body (0) waits to join; task 2 stores x = 1; task 3 has not read x, so x = 0
        // stays readable; task 1 reads x (the new store, or the old one) and finishes.
        let run = |fresh: bool| {
            let (mut m, x) = three_and_a_waiting_body();
            append(&mut m, 2, x, 1, Store::Once);
            m.load(1, x, if fresh { 0 } else { 1 }, Load::Once);
            m.finish(1);
            m.collect();
            (m, x)
        };
        let ((mut a, x), (mut b, _)) = (run(true), run(false));
        assert_eq!(a.locs, b.locs, "the same stores");
        assert_ne!(a.hash(), b.hash(), "task 1's views differ");
        a.join(0, 1);
        b.join(0, 1);
        assert_eq!((a.load_alts(0, x), b.load_alts(0, x)), (1, 2), "and so do the joiner's reads");
        assert_eq!(a.tasks[1], Task::default(), "a joined task keeps no views");

        // A task that reads the newest store with an acquire, and one that reads it plainly:
        // their bounds differ while they run, but not what a join of them would take.
        let fin = |how: Load, done: bool| {
            let (mut m, l) = two(1);
            append(&mut m, 1, l[0], 1, Store::Once);
            m.load(2, l[0], 0, how);
            if done {
                m.finish(2);
            }
            m
        };
        assert_ne!(fin(Load::Acquire, false).hash(), fin(Load::Once, false).hash());
        assert_eq!(fin(Load::Acquire, true), fin(Load::Once, true));
    }

    /// A task that waits for one task only stays in message collection: once it has joined
    /// it, it may read every message its own bounds and the joined task's allow. Left out (as
    /// a task that waits for every other one is), it would lose a message that a third task's
    /// bounds let collection drop.
    #[test]
    fn a_task_that_joins_one_task_keeps_what_it_may_read() {
        // Task 1 joins task 2 only; task 3 stores x = 1; the body (0) waits for everyone.
        let run = |left_out: bool| {
            let (mut m, x) = three_and_a_waiting_body();
            if left_out {
                m.join_begin(1);
            }
            append(&mut m, 3, x, 1, Store::Once);
            m.finish(2);
            m.collect();
            m.join(1, 2);
            m.join_end(1);
            m.load_alts(1, x)
        };
        assert_eq!(run(false), 2, "x = 0 and x = 1 are both readable by task 1");
        assert_eq!(run(true), 1, "left out, task 1 would have lost x = 0");
    }

    /// Lock hand-over: the next holder's stores come after the previous holder's own stores.
    #[test]
    fn unlock_lock_orders_own_stores() {
        let (mut m, l) = two(2);
        let lock = m.new_lock();
        m.lock(1, lock);
        append(&mut m, 1, l[0], 1, Store::Once);
        m.unlock(1, lock);
        m.lock(2, lock);
        assert_eq!(m.load_alts(2, l[0]), 1, "the acquire sees the holder's store");
        append(&mut m, 2, l[1], 1, Store::Once);
        let carried = &m.locs[l[1]][1].view;
        assert_eq!(carried.get(l[0]), 1, "the plain store carries the previous holder's own store");
        assert_eq!(m.trylock_fails(1, lock), vec![3], "coherence: not its own acquisition, before its release");
    }
}
