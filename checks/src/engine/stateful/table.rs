//! The visited tables' hash table: fingerprint to a `u32`, open addressing over cache lines of
//! five slots (the keys and their values side by side), probing line by line. One search's
//! table is one [`FpTable`]; the workers' shared table (`store.rs`) is 256 of them, each
//! behind its lock.
//!
//! The search looks a state up once per transition, in a table of tens of millions of states
//! that no cache holds. `hashbrown` keeps its control bytes apart from its keys, so a lookup
//! costs two cache misses (the control group, then the key); `perf annotate` of the 3-kswapd
//! proof put 29 % of all the search's time on those two loads (docs/performance.md,
//! "Snapshots"), and of a two-worker search's, 35 % on the shared table's (docs/performance.md,
//! "The visited table in cache lines"). Here a lookup usually touches one line, which the
//! search asks for ahead ([`FpTable::prefetch`]). The fingerprints are already well mixed
//! hashes; the line is taken from their top bits after one multiplication. The first version
//! had 16-byte slots, four to a line, doubling at three quarters full (21 to 43 bytes an
//! entry); five to a line at up to seven eighths full take 15 to 30.

/// Slots a line holds.
const WAYS: usize = 5;

/// One cache line of slots: five keys, then their five values (`key == 0` is empty; the
/// fingerprint 0 is kept apart, in [`FpTable::zero`]). A line fills from its first slot, and a
/// fingerprint whose line is full goes to the next line (linear probing by lines), so a lookup
/// reads one line, and at the table's fullest seldom a second, adjacent one.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line {
    keys: [u64; WAYS],
    vals: [u32; WAYS],
}

/// The states a search found lately, with their values, direct-mapped by fingerprint (a slot
/// holds the last fingerprint that mapped to it; 0 is empty, so the fingerprint 0 never hits):
/// a hit needs no line of the visited table, whose every lookup misses the processor's caches
/// and its TLB. 2^15 entries, 512 KB, allocated at the first use; a bigger cache misses the
/// caches itself (docs/performance.md). Whoever writes a value to the table writes it here too,
/// so a hit is what the table holds.
#[derive(Default)]
pub struct Recent(Vec<(u64, u32)>);

impl Recent {
    const ENTRIES: usize = 1 << 15;

    #[inline]
    fn slot(&mut self, fp: u64) -> &mut (u64, u32) {
        if self.0.is_empty() {
            self.0 = vec![(0, 0); Self::ENTRIES];
        }
        &mut self.0[(fp as usize) % Self::ENTRIES]
    }

    /// The value of `fp`, if it was the last fingerprint to map to its slot. `ignore_key`: a
    /// seeded defect (`WorkersRecentIgnoresKey`, `RecentIgnoresKey`), any filled slot answers.
    #[inline]
    pub fn get(&mut self, fp: u64, ignore_key: bool) -> Option<u32> {
        let (seen, value) = *self.slot(fp);
        (fp != 0 && (seen == fp || (ignore_key && seen != 0))).then_some(value)
    }

    /// `fp` has `value` in the table.
    #[inline]
    pub fn put(&mut self, fp: u64, value: u32) {
        *self.slot(fp) = (fp, value);
    }

    /// The bytes it holds.
    pub fn bytes(&self) -> u64 {
        (self.0.capacity() * std::mem::size_of::<(u64, u32)>()) as u64
    }
}

/// Fingerprint to `u32`, growing by doubling at seven eighths full.
#[derive(Default)]
pub struct FpTable {
    lines: Vec<Line>,
    /// 64 minus log2 of the number of lines.
    shift: u32,
    len: usize,
    zero: Option<u32>,
}

/// Where [`FpTable::get_update`] found room for a fingerprint it does not hold.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    line: usize,
    way: usize,
    /// The table's size then: a grown table has moved every entry.
    lines: usize,
}

/// Bytes a line takes.
const LINE_BYTES: u64 = std::mem::size_of::<Line>() as u64;

/// Bytes the table takes per entry at its emptiest, just after it doubled (seven sixteenths
/// full): 29.3, rounded up. The one-thread search's memory budget counts on it.
pub const BYTES_PER_ENTRY_MAX: u64 = (LINE_BYTES * 16).div_ceil(WAYS as u64 * 7);

impl FpTable {
    #[inline]
    fn home(&self, fp: u64) -> usize {
        home(fp, self.shift)
    }

    /// The line and slot that hold `fp`, or the empty slot where it would go (the table is
    /// never full).
    #[inline]
    fn probe(&self, fp: u64) -> (usize, usize) {
        let mask = self.lines.len() - 1;
        let mut i = self.home(fp);
        loop {
            let line = &self.lines[i];
            for (j, &k) in line.keys.iter().enumerate() {
                if k == fp || k == 0 {
                    return (i, j);
                }
            }
            i = (i + 1) & mask;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// How many entries it holds before it grows.
    pub fn capacity(&self) -> usize {
        self.lines.len() * WAYS / 8 * 7
    }

    /// The bytes of its lines.
    pub fn bytes(&self) -> u64 {
        self.lines.len() as u64 * LINE_BYTES
    }

    /// The bytes it would take after growing to hold `additional` more entries.
    pub fn bytes_after(&self, additional: usize) -> u64 {
        self.lines_for(self.len + additional) as u64 * LINE_BYTES
    }

    fn lines_for(&self, want: usize) -> usize {
        let mut n = self.lines.len().max(8);
        while n * WAYS / 8 * 7 < want {
            n *= 2;
        }
        n
    }

    /// Ask the processor to bring `fp`'s home line into the cache, so that the lookup that
    /// follows (after other work) does not wait for memory. A hint only: nothing is read.
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        if !self.lines.is_empty() {
            prefetch_line(self.lines.as_ptr() as usize, self.shift, fp);
        }
    }

    /// Where its lines are and how a fingerprint's home line is found, for a prefetch by a
    /// thread that does not hold the table ([`prefetch_line`]); `None` while it has no lines.
    pub fn line_hint(&self) -> Option<(usize, u32)> {
        (!self.lines.is_empty()).then_some((self.lines.as_ptr() as usize, self.shift))
    }

    /// Every fingerprint stored and its value.
    pub fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let lines =
            self.lines.iter().flat_map(|l| l.keys.iter().zip(l.vals).filter(|(k, _)| **k != 0).map(|(k, v)| (*k, v)));
        self.zero.map(|v| (0, v)).into_iter().chain(lines)
    }

    #[inline]
    pub fn get(&self, fp: u64) -> Option<u32> {
        if fp == 0 {
            return self.zero;
        }
        if self.lines.is_empty() {
            return None;
        }
        let (i, j) = self.probe(fp);
        let line = &self.lines[i];
        (line.keys[j] == fp).then_some(line.vals[j])
    }

    #[inline]
    pub fn contains_key(&self, fp: u64) -> bool {
        self.get(fp).is_some()
    }

    /// One probe for a lookup that may update: `fp`'s value, changed by `f` in place, or,
    /// if it has none, where a new entry goes (for [`FpTable::put_at`], valid while the table
    /// does not grow).
    #[inline]
    pub fn get_update(&mut self, fp: u64, f: impl FnOnce(&mut u32)) -> Result<(), Slot> {
        if fp == 0 || self.lines.is_empty() {
            return match self.zero.as_mut() {
                Some(v) if fp == 0 => {
                    f(v);
                    Ok(())
                }
                _ => Err(Slot { line: usize::MAX, way: 0, lines: self.lines.len() }),
            };
        }
        let (i, j) = self.probe(fp);
        let line = &mut self.lines[i];
        if line.keys[j] == fp {
            f(&mut line.vals[j]);
            Ok(())
        } else {
            Err(Slot { line: i, way: j, lines: self.lines.len() })
        }
    }

    /// A new entry for `fp` at `slot` (from [`FpTable::get_update`] on this `fp`); if the
    /// table grew since, or `fp` is 0, an ordinary insert.
    #[inline]
    pub fn put_at(&mut self, slot: Slot, fp: u64, val: u32) {
        if fp == 0 || slot.line == usize::MAX || slot.lines != self.lines.len() || self.len >= self.capacity() {
            self.insert(fp, val);
            return;
        }
        let line = &mut self.lines[slot.line];
        debug_assert_eq!(line.keys[slot.way], 0, "a free slot");
        line.keys[slot.way] = fp;
        line.vals[slot.way] = val;
        self.len += 1;
    }

    /// Sets `fp`'s value (a new entry if it had none), growing first if the table is full.
    #[inline]
    pub fn insert(&mut self, fp: u64, val: u32) {
        if fp == 0 {
            self.len += usize::from(self.zero.is_none());
            self.zero = Some(val);
            return;
        }
        if self.len >= self.capacity() {
            // Growing is fallible only through `try_reserve`; here it is the allocator's abort.
            self.grow_to(self.lines_for(self.len + 1));
        }
        let (i, j) = self.probe(fp);
        let line = &mut self.lines[i];
        if line.keys[j] == 0 {
            self.len += 1;
            line.keys[j] = fp;
        }
        line.vals[j] = val;
    }

    /// Room for `additional` more entries, or an error if the memory cannot be had.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), std::collections::TryReserveError> {
        let n = self.lines_for(self.len + additional);
        if n > self.lines.len() {
            let mut probe: Vec<Line> = Vec::new();
            probe.try_reserve_exact(n)?;
            drop(probe);
            self.grow_to(n);
        }
        Ok(())
    }

    fn grow_to(&mut self, n: usize) {
        debug_assert!(n.is_power_of_two() && n >= 8);
        let old = std::mem::replace(&mut self.lines, vec![Line::default(); n]);
        self.shift = 64 - n.trailing_zeros();
        for line in old {
            for (&k, &v) in line.keys.iter().zip(&line.vals) {
                if k != 0 {
                    let (i, j) = self.probe(k);
                    self.lines[i].keys[j] = k;
                    self.lines[i].vals[j] = v;
                }
            }
        }
    }
}

/// The home line of `fp` in a table of `64 - shift` bits of lines.
#[inline]
fn home(fp: u64, shift: u32) -> usize {
    (fp.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
}

/// Ask the processor for `fp`'s home line of a table whose lines start at `base`, with
/// [`FpTable::line_hint`]'s `shift`. A hint only: the address is not dereferenced, and a stale
/// `base` (a table that grew since) costs one useless prefetch.
#[inline]
pub fn prefetch_line(base: usize, shift: u32, fp: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let at = base.wrapping_add(home(fp, shift).wrapping_mul(LINE_BYTES as usize));
        // SAFETY: `_mm_prefetch` reads nothing and cannot fault, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, shift, fp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The tests' pseudo-random keys (xorshift64).
    fn xorshift(x: &mut u64) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
    }

    /// Random inserts, updates and lookups (the fingerprint 0 among them, and keys that share
    /// their home slot) agree with a `HashMap` through several growths.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut t = FpTable::default();
        let mut m: HashMap<u64, u32> = HashMap::new();
        let mut x = 0x1234_5678_9abc_def0u64;
        for i in 0..200_000u32 {
            xorshift(&mut x);
            // A small key space, so that keys repeat; 0 and colliding keys included.
            let fp = match i % 7 {
                0 => 0,
                1 => x % 64,
                _ => x % 150_000,
            };
            if i % 3 == 0 {
                assert_eq!(t.get(fp), m.get(&fp).copied(), "lookup {i}");
            } else {
                t.insert(fp, i);
                m.insert(fp, i);
            }
            if i % 5 == 0 {
                if let Some(b) = m.get_mut(&fp) {
                    t.get_update(fp, |a| *a = a.wrapping_add(1)).expect("stored in both");
                    *b = b.wrapping_add(1);
                }
            }
            assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            assert_eq!(t.get(*k), Some(*v));
        }
        assert!(t.capacity() >= t.len() && t.bytes() >= t.len() as u64 * LINE_BYTES / WAYS as u64);
    }

    /// The one-probe visit ([`FpTable::get_update`], then [`FpTable::put_at`] where the state
    /// is new) agrees with a hash map, also when the table grows (or a reservation grows it)
    /// between the probe and the insert, and for the fingerprint 0.
    #[test]
    fn a_one_probe_visit_agrees_with_a_hash_map() {
        let mut t = FpTable::default();
        let mut m: HashMap<u64, u32> = HashMap::new();
        let mut x = 0x0fed_cba9_8765_4321u64;
        for i in 0..200_000u32 {
            xorshift(&mut x);
            let fp = match i % 11 {
                _ if i == 1_001 || i == 50_001 => 0x8000_0000_0000_0000 | i as u64,
                0 => 0,
                1 => x % 64,
                _ => x % 120_000,
            };
            let mut seen = None;
            match t.get_update(fp, |v| {
                seen = Some(*v);
                *v = v.wrapping_mul(3);
            }) {
                Ok(()) => {
                    let e = m.get_mut(&fp).expect("found in the table, so in the map");
                    assert_eq!(seen, Some(*e), "value of {fp} at {i}");
                    *e = e.wrapping_mul(3);
                }
                Err(slot) => {
                    assert!(!m.contains_key(&fp), "{fp} is in the map but not found at {i}");
                    if i == 1_001 || i == 50_001 {
                        // The table grows between the probe and the insert.
                        let lines = t.lines.len();
                        t.try_reserve(t.capacity() - t.len() + 1).unwrap();
                        assert!(t.lines.len() > lines, "the table grew");
                    }
                    t.put_at(slot, fp, i);
                    assert_eq!(t.get(fp), Some(i), "{fp} just put at {i}");
                    m.insert(fp, i);
                }
            }
            assert_eq!(t.len(), m.len(), "length at {i}");
        }
        for (k, v) in &m {
            assert_eq!(t.get(*k), Some(*v));
        }
    }

    /// Twelve fingerprints with one home line fill it and the two after it; each is found,
    /// one more with that home is not, and all are still found after the table doubles.
    #[test]
    fn a_full_line_spills_into_the_next() {
        let mut t = FpTable::default();
        t.try_reserve(30).unwrap();
        let shift = t.shift;
        let same: Vec<u64> = (1..).filter(|&fp| home(fp, shift) == 3).take(13).collect();
        for (i, &fp) in same[..12].iter().enumerate() {
            t.insert(fp, i as u32);
        }
        assert_eq!((t.len(), t.shift), (12, shift), "no growth yet");
        assert!(t.lines[3].keys.iter().chain(&t.lines[4].keys).all(|&k| k != 0), "lines 3 and 4 full");
        assert_eq!(t.lines[5].keys.iter().filter(|&&k| k != 0).count(), 2, "two spill into line 5");
        for (i, &fp) in same[..12].iter().enumerate() {
            assert_eq!(t.get(fp), Some(i as u32));
        }
        assert_eq!(t.get(same[12]), None);
        t.try_reserve(1000).unwrap();
        assert_ne!(t.shift, shift, "it grew");
        for (i, &fp) in same[..12].iter().enumerate() {
            assert_eq!(t.get(fp), Some(i as u32));
        }
    }

    #[test]
    fn reserve_grows_once_for_what_it_was_asked() {
        let mut t = FpTable::default();
        t.try_reserve(1000).unwrap();
        let bytes = t.bytes();
        assert!(t.capacity() >= 1000);
        for k in 1..=1000u64 {
            t.insert(k, k as u32);
        }
        assert_eq!(t.bytes(), bytes, "no growth within the reserved room");
        assert_eq!(t.get(500), Some(500));
        assert_eq!(t.get(1001), None);
    }
}
