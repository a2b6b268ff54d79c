//! The one-thread search's visited table: fingerprint to a `u32`, open addressing with linear
//! probing over 16-byte slots (the key and its value side by side, four to a cache line).
//!
//! The search looks a state up once per transition, in a table of tens of millions of states
//! that no cache holds. `hashbrown` keeps its control bytes apart from its keys, so a lookup
//! costs two cache misses (the control group, then the key); `perf annotate` of the 3-kswapd
//! proof put 29 % of all the search's time on those two loads (docs/performance.md,
//! "Snapshots"). Here a lookup usually touches one line. The fingerprints are already well
//! mixed hashes; the slot is taken from their top bits after one multiplication.

/// One slot: `key == 0` is empty (the fingerprint 0 is kept apart, in [`FpTable::zero`]).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    val: u32,
}

/// Fingerprint to `u32`, growing by doubling at three quarters full.
#[derive(Default)]
pub struct FpTable {
    slots: Vec<Slot>,
    /// 64 minus log2 of the number of slots.
    shift: u32,
    len: usize,
    zero: Option<u32>,
}

/// Bytes a slot takes.
pub const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

impl FpTable {
    #[inline]
    fn home(&self, fp: u64) -> usize {
        (fp.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The slot that holds `fp`, or the empty slot where it would go (the table is never full).
    #[inline]
    fn probe(&self, fp: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(fp);
        loop {
            let k = self.slots[i].key;
            if k == fp || k == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// How many entries it holds before it grows.
    pub fn capacity(&self) -> usize {
        self.slots.len() / 4 * 3
    }

    /// The bytes of its slots.
    pub fn bytes(&self) -> u64 {
        self.slots.len() as u64 * SLOT_BYTES
    }

    /// The bytes it would take after growing to hold `additional` more entries.
    pub fn bytes_after(&self, additional: usize) -> u64 {
        let want = self.len + additional;
        let mut n = self.slots.len().max(16);
        while n / 4 * 3 < want {
            n *= 2;
        }
        n as u64 * SLOT_BYTES
    }

    /// Ask the processor to bring `fp`'s home slot into the cache, so that the lookup that
    /// follows (after other work) does not wait for memory. A hint only: nothing is read.
    #[inline]
    pub fn prefetch(&self, fp: u64) {
        #[cfg(target_arch = "x86_64")]
        if !self.slots.is_empty() {
            let slot: *const Slot = &self.slots[self.home(fp)];
            // SAFETY: `_mm_prefetch` reads nothing and cannot fault; the pointer is in bounds.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fp;
    }

    #[inline]
    pub fn get(&self, fp: u64) -> Option<u32> {
        if fp == 0 {
            return self.zero;
        }
        if self.slots.is_empty() {
            return None;
        }
        let s = self.slots[self.probe(fp)];
        (s.key == fp).then_some(s.val)
    }

    #[inline]
    pub fn contains_key(&self, fp: u64) -> bool {
        self.get(fp).is_some()
    }

    #[inline]
    pub fn get_mut(&mut self, fp: u64) -> Option<&mut u32> {
        if fp == 0 {
            return self.zero.as_mut();
        }
        if self.slots.is_empty() {
            return None;
        }
        let i = self.probe(fp);
        let s = &mut self.slots[i];
        (s.key == fp).then_some(&mut s.val)
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
            self.grow_to(self.bytes_after(1) / SLOT_BYTES);
        }
        let i = self.probe(fp);
        let s = &mut self.slots[i];
        if s.key == 0 {
            self.len += 1;
            s.key = fp;
        }
        s.val = val;
    }

    /// Room for `additional` more entries, or an error if the memory cannot be had.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), std::collections::TryReserveError> {
        let n = self.bytes_after(additional) / SLOT_BYTES;
        if n as usize > self.slots.len() {
            let mut probe: Vec<Slot> = Vec::new();
            probe.try_reserve_exact(n as usize)?;
            drop(probe);
            self.grow_to(n);
        }
        Ok(())
    }

    fn grow_to(&mut self, n: u64) {
        let n = n as usize;
        debug_assert!(n.is_power_of_two() && n >= 16);
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); n]);
        self.shift = 64 - n.trailing_zeros();
        let mask = n - 1;
        for s in old {
            if s.key != 0 {
                let mut i = self.home(s.key);
                while self.slots[i].key != 0 {
                    i = (i + 1) & mask;
                }
                self.slots[i] = s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts, updates and lookups (the fingerprint 0 among them, and keys that share
    /// their home slot) agree with a `HashMap` through several growths.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut t = FpTable::default();
        let mut m: HashMap<u64, u32> = HashMap::new();
        let mut x = 0x1234_5678_9abc_def0u64;
        for i in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
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
                if let (Some(a), Some(b)) = (t.get_mut(fp), m.get_mut(&fp)) {
                    *a = a.wrapping_add(1);
                    *b = b.wrapping_add(1);
                }
            }
            assert_eq!(t.len(), m.len());
        }
        for (k, v) in &m {
            assert_eq!(t.get(*k), Some(*v));
        }
        assert!(t.capacity() >= t.len() && t.bytes() >= t.len() as u64 * SLOT_BYTES);
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
