//! The visited tables and what they may cost: the workers' sharded table ([`Sharded`]), the
//! memory this machine can give a search ([`available_memory`]), and the budget every store
//! checks before it takes one more state ([`Budget`]). One search's own table is
//! [`super::table::FpTable`].
//!
//! The workers' table is cut into [`SHARDS`] shards by the fingerprint's top bits, each an
//! [`FpTable`] behind its own lock (a worker holds one lock for one lookup-and-insert, never two;
//! with 256 shards and a handful of workers a lock is almost never contended). A state belongs
//! to the worker that inserts it, which explores it; under partial-order reduction the entry
//! is its sleep mask, and a visit with a smaller one explores the difference, whoever stored
//! it (the same rule as one worker's).

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use super::table::{prefetch_line, FpTable, Slot, BYTES_PER_ENTRY_MAX};

/// Fingerprints are already uniformly distributed: hash them by themselves.
#[derive(Default)]
pub(super) struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
}

/// A set of fingerprints.
pub(super) type FpSet = HashSet<u64, BuildHasherDefault<Identity>>;

/// Shards of the shared visited table.
pub const SHARDS: usize = 256;

/// Bytes of the visited-state table per state stored, at the table's emptiest (just after it
/// doubled): one search's table and the workers' shards are the same hash table
/// (`table.rs`: lines of five 12-byte slots, doubling at seven eighths full).
pub const BYTES_PER_STATE: u64 = BYTES_PER_ENTRY_MAX;

/// Memory this machine can give the search: 80 % of what is available now, or less if the
/// environment variable `MMCHECK_MEMORY_MIB` says so (as SPIN's `-DMEMLIM`: a limit for a
/// shared machine, and the way the tests make a search run out of memory).
pub fn available_memory() -> u64 {
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    let machine = avail.map_or(8 << 30, |kb| kb * 1024 / 5 * 4);
    let limit = std::env::var("MMCHECK_MEMORY_MIB").ok().and_then(|v| v.trim().parse::<u64>().ok());
    limit.map_or(machine, |mib| machine.min(mib.saturating_mul(1 << 20)))
}

/// How many states a search may store, and in how many bytes.
#[derive(Clone, Copy)]
pub(super) struct Budget {
    pub max_states: Option<u64>,
    pub max_memory: u64,
    /// With the workers' table and `max_states`: arrivals left before the shards' states are
    /// counted again ([`Budget::reserve_shared`]).
    uncounted: u64,
}

/// The workers count the shards' states against `max_states` again after at most this
/// fraction of the states left under it (every arrival once fewer than this many are left).
const RECOUNT_FRACTION: u64 = 1 << 16;

impl Budget {
    /// Room for one more state in one search's table (`others`: the bytes of the search's other
    /// structures, its stacks), or why not.
    pub fn reserve(&self, table: &mut FpTable, others: u64) -> Result<(), &'static str> {
        if self.max_states.is_some_and(|m| table.len() as u64 >= m) {
            return Err("state budget (max_states)");
        }
        if table.len() >= table.capacity() {
            let grow = table.capacity().max(1024);
            let after = table.bytes_after(grow);
            // While the table grows its old slots and its new ones are both resident, and the
            // new ones come out of what the machine has free now, which other processes may
            // have taken since the search started. (A 5-kswapd search that counted only the
            // new table was killed by the kernel's OOM killer when its 8 GB table doubled on a
            // 23 GB machine.)
            if after + table.bytes() + others > self.max_memory || after > available_memory() {
                return Err("memory");
            }
            table.try_reserve(grow).map_err(|_| "memory")?;
        }
        Ok(())
    }

    /// A budget of `max_states` states and `max_memory` bytes.
    pub fn new(max_states: Option<u64>, max_memory: u64) -> Self {
        Budget { max_states, max_memory, uncounted: 0 }
    }

    /// Room for one more state in the workers' table, or why not: the bytes its shards hold,
    /// room for one shard to double (for a moment it holds its old slots and its new ones),
    /// and the graphs the workers record beside it.
    ///
    /// Against `max_states` the shards' states are counted (one line of each of the 256
    /// shards, which the other workers write) again only after `(max_states - stored) /
    /// RECOUNT_FRACTION` arrivals, each of which stores at most one state: so at every arrival
    /// once fewer than [`RECOUNT_FRACTION`] states are left. Counting at every arrival made two
    /// workers with a `max_states` about 1.3 times slower (docs/performance.md, "A state
    /// budget with two workers"). A worker may store on the room its last count gave it after
    /// another's count, so the workers may store up to about `max_states / 65,536` states
    /// each past `max_states`; one worker stops at it exactly.
    pub fn reserve_shared(&mut self, table: &Sharded) -> Result<(), &'static str> {
        if let Some(m) = self.max_states {
            if self.uncounted == 0 {
                let stored = table.len();
                if stored >= m {
                    return Err("state budget (max_states)");
                }
                self.uncounted = (m - stored) / RECOUNT_FRACTION;
            } else {
                self.uncounted -= 1;
            }
        }
        let held = table.table_bytes.load(Relaxed);
        // The shards fill evenly (a fingerprint's top bits choose one): twice the average
        // shard, doubled, is the growth to leave room for.
        let growth = held / SHARDS as u64 * 4;
        if held.saturating_add(growth).saturating_add(table.graph_bytes.load(Relaxed)) > self.max_memory {
            return Err("memory");
        }
        Ok(())
    }
}

/// A shard: its table behind its lock, and the states it holds (written under the lock, on
/// the lock's own line); on cache lines of their own, so that two workers on two shards do
/// not write one line.
#[repr(align(128))]
struct Shard {
    table: Mutex<FpTable>,
    states: AtomicU64,
}

/// Where a shard's lines are, readable without its lock for a prefetch
/// ([`Sharded::prefetch`]); written only when the shard grows, so that a worker's prefetch
/// does not wait for the shard's lock line, which the other workers write at every lookup.
#[derive(Default)]
struct Hint {
    base: AtomicUsize,
    shift: AtomicU32,
}

impl Hint {
    /// The table grew (or got its first lines): say where its lines are now.
    fn moved(&self, t: &FpTable) {
        if let Some((base, shift)) = t.line_hint() {
            self.base.store(base, Relaxed);
            self.shift.store(shift, Relaxed);
        }
    }
}

/// A visit with sleep mask `asleep` of a state stored with the mask `stored`: the transitions
/// earlier visits left asleep and this one does not (to explore now); the stored mask becomes
/// the intersection. One worker's table and the workers' apply the same rule.
#[inline]
pub(super) fn revisit(stored: &mut u32, asleep: u32) -> u32 {
    let left = *stored & !asleep;
    *stored &= asleep;
    left
}

/// The visited table the workers of one search share. Its fields are read at every lookup and
/// written only when a shard grows: the states stored are counted per shard, under the
/// shard's lock (one counter that every worker incremented for every new state shared its
/// line with `shards` and made every lookup miss, `perf`).
pub(super) struct Sharded {
    shards: Box<[Shard]>,
    hints: Box<[Hint]>,
    /// The bytes of the graphs the workers record (when a cycle invariant is checked).
    pub graph_bytes: AtomicU64,
    /// The bytes of the shards' slots, counted as they grow.
    table_bytes: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for Sharded {
    fn default() -> Self {
        Sharded {
            shards: (0..SHARDS)
                .map(|_| Shard { table: Mutex::new(FpTable::default()), states: AtomicU64::new(0) })
                .collect(),
            hints: (0..SHARDS).map(|_| Hint::default()).collect(),
            graph_bytes: AtomicU64::new(0),
            table_bytes: AtomicU64::new(0),
        }
    }
}

impl Sharded {
    fn index(fp: u64) -> usize {
        (fp >> 56) as usize % SHARDS
    }

    fn shard(&self, fp: u64) -> &Shard {
        &self.shards[Self::index(fp)]
    }

    /// Ask the processor for the line of `fp`'s shard where `fp` would be, before the lookup
    /// (a hint, read without the lock: a shard that grew since costs one useless prefetch).
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        let i = Self::index(fp);
        let hint = &self.hints[i];
        let base = hint.base.load(Relaxed);
        if base != 0 {
            prefetch_line(base, hint.shift.load(Relaxed), fp);
        }
    }

    /// Insert `fp` with `value` if it is not stored: whether it was new.
    pub fn insert(&self, fp: u64, value: u32) -> bool {
        self.insert_or_get(fp, value).is_none()
    }

    /// Store `fp` (new) in its shard `sh`'s table `t`, where its probe found room (`slot`),
    /// counting the shard's growth.
    #[inline]
    fn stored(&self, fp: u64, sh: &Shard, t: &mut FpTable, slot: Slot, value: u32) {
        let bytes = t.bytes();
        t.put_at(slot, fp, value);
        if t.bytes() != bytes {
            self.table_bytes.fetch_add(t.bytes() - bytes, Relaxed);
            self.hints[Self::index(fp)].moved(t);
        }
        sh.states.store(t.len() as u64, Relaxed);
    }

    /// Insert `fp` with `value` if it is not stored: `None` if it was new, else the value it
    /// was stored with.
    pub fn insert_or_get(&self, fp: u64, value: u32) -> Option<u32> {
        let sh = self.shard(fp);
        let mut t = lock(&sh.table);
        let mut known = None;
        match t.get_update(fp, |v| known = Some(*v)) {
            Ok(()) => known,
            Err(slot) => {
                self.stored(fp, sh, &mut t, slot, value);
                None
            }
        }
    }

    /// The value `fp` is stored with.
    pub fn get(&self, fp: u64) -> Option<u32> {
        lock(&self.shard(fp).table).get(fp)
    }

    /// Whether `fp` is stored.
    pub fn contains(&self, fp: u64) -> bool {
        lock(&self.shard(fp).table).contains_key(fp)
    }

    /// Partial-order reduction's visit of `fp` with sleep mask `asleep`: `None` if the state
    /// is new (stored with `asleep`); otherwise the transitions the stored visits left asleep
    /// and this one does not (the stored mask becomes the intersection).
    pub fn visit_sleeping(&self, fp: u64, asleep: u32) -> Option<u32> {
        let sh = self.shard(fp);
        let mut t = lock(&sh.table);
        let mut left = 0;
        match t.get_update(fp, |stored| left = revisit(stored, asleep)) {
            Ok(()) => Some(left),
            Err(slot) => {
                self.stored(fp, sh, &mut t, slot, asleep);
                None
            }
        }
    }

    /// Every fingerprint stored in the shards of part `part` of `parts` and its value, to `f`,
    /// each shard freed once it is read (the table is empty once every part is drained).
    pub fn drain(&self, part: usize, parts: usize, mut f: impl FnMut(u64, u32)) {
        let (from, to) = (SHARDS * part / parts, SHARDS * (part + 1) / parts);
        for (sh, hint) in self.shards[from..to].iter().zip(&self.hints[from..to]) {
            let t = std::mem::take(&mut *lock(&sh.table));
            hint.base.store(0, Relaxed);
            sh.states.store(0, Relaxed);
            // The shards' bytes were added up as they grew: this is the shard's share.
            self.table_bytes.fetch_sub(t.bytes(), Relaxed);
            for (fp, v) in t.entries() {
                f(fp, v);
            }
        }
    }

    /// States stored.
    pub fn len(&self) -> u64 {
        self.shards.iter().map(|sh| sh.states.load(Relaxed)).sum()
    }

    /// The bytes of its slots.
    pub fn bytes(&self) -> u64 {
        self.table_bytes.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A growth is refused when the old table and the new one together do not fit, though the
    /// new one alone would.
    #[test]
    fn a_table_that_would_not_fit_beside_its_old_slots_does_not_grow() {
        let mut t = FpTable::default();
        t.try_reserve(1000).unwrap();
        while t.len() < t.capacity() {
            t.insert(t.len() as u64 + 1, 0);
        }
        let (old, new) = (t.bytes(), t.bytes_after(t.capacity()));
        let tight = Budget::new(None, new + old - 1);
        assert_eq!(tight.reserve(&mut t, 0), Err("memory"));
        assert_eq!(t.bytes(), old, "the refused growth did not happen");
        let roomy = Budget::new(None, new + old);
        assert_eq!(roomy.reserve(&mut t, 0), Ok(()));
        assert_eq!(t.bytes(), new);
    }

    #[test]
    fn the_sharded_table_stores_and_intersects_sleep_masks() {
        let s = Sharded::default();
        assert!(s.insert(7, 0) && !s.insert(7, 0));
        assert_eq!(s.visit_sleeping(9, 0b110), None);
        assert_eq!(s.visit_sleeping(9, 0b010), Some(0b100));
        assert_eq!(s.visit_sleeping(9, 0b011), Some(0));
        assert_eq!(s.len(), 2);
        assert!(s.contains(9) && !s.contains(8));
        assert_eq!(
            (s.insert_or_get(11, 5), s.insert_or_get(11, 6), s.get(11), s.get(12)),
            (None, Some(5), Some(5), None)
        );
        // The counted bytes are the shards' own, as they grow.
        for fp in 0..100_000u64 {
            s.insert(fp.wrapping_mul(0x9e37_79b9_7f4a_7c15), 0);
        }
        let counted: u64 = s.shards.iter().map(|sh| lock(&sh.table).bytes()).sum();
        assert_eq!(s.bytes(), counted);
        assert!(s.bytes() >= s.len() * 12, "{} bytes for {} states", s.bytes(), s.len());
        // Every shard says where its lines are, for the prefetch.
        assert!(s
            .shards
            .iter()
            .zip(s.hints.iter())
            .all(|(sh, h)| h.base.load(Relaxed) == lock(&sh.table).line_hint().unwrap().0));
    }

    /// Workers store new states into `s`, worker `order(i)` at arrival `i`, each checking its
    /// own budget first, until every worker is refused: the states stored.
    fn stored_under(m: u64, workers: usize, order: impl Fn(u64) -> usize) -> u64 {
        let s = Sharded::default();
        let mut budgets = vec![Budget::new(Some(m), u64::MAX); workers];
        let mut refused = vec![false; workers];
        let mut fp = 0u64;
        for i in 0.. {
            let w = order(i);
            if refused.iter().all(|&r| r) {
                break;
            }
            if refused[w] {
                continue;
            }
            match budgets[w].reserve_shared(&s) {
                Err(why) => {
                    assert_eq!(why, "state budget (max_states)");
                    refused[w] = true;
                }
                Ok(()) => {
                    fp += 1;
                    assert!(s.insert(fp.wrapping_mul(0x9e37_79b9_7f4a_7c15), 0));
                }
            }
        }
        s.len()
    }

    /// The workers' state budget counts the shards now and then, not at every arrival: one
    /// worker stops exactly at `max_states`, and workers that take turns adversely stop past
    /// it by at most `max_states / 65,536` states each.
    #[test]
    fn the_workers_state_budget_stops_at_max_states_within_its_bound() {
        let m = 1_000_000;
        assert_eq!(stored_under(m, 1, |_| 0), m);
        assert_eq!(stored_under(m, 2, |i| (i % 2) as usize), m);
        // Worker 1 counts once at the start, then waits while worker 0 takes the search up
        // to the budget; then it stores what its count allowed.
        let late = stored_under(m, 2, |i| usize::from(i == 0 || i > 2 * m));
        assert!(late > m && late <= m + m / RECOUNT_FRACTION, "{late} states stored");
        // Far from the budget the shards are counted rarely; near it, at every arrival.
        let s = Sharded::default();
        let mut b = Budget::new(Some(m), u64::MAX);
        b.reserve_shared(&s).unwrap();
        assert_eq!(b.uncounted, m / RECOUNT_FRACTION);
        let mut near = Budget::new(Some(RECOUNT_FRACTION - 1), u64::MAX);
        near.reserve_shared(&s).unwrap();
        assert_eq!(near.uncounted, 0);
    }
}
