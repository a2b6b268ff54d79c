//! Views: for each location, the rank of a message.

/// A location: a shared object or a lock word, numbered in creation order.
pub type Loc = usize;

/// For each location, the rank of a message (an index into the location's list); locations a
/// view has no entry for are at rank 0 (the oldest message kept).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View(Vec<u32>);

impl View {
    /// The heap bytes it holds.
    pub(super) fn bytes(&self) -> usize {
        self.0.capacity() * core::mem::size_of::<u32>()
    }

    #[inline]
    pub fn get(&self, x: Loc) -> u32 {
        self.0.get(x).copied().unwrap_or(0)
    }

    #[inline]
    pub(super) fn raise(&mut self, x: Loc, v: u32) {
        if v > self.get(x) {
            if self.0.len() <= x {
                self.0.resize(x + 1, 0);
            }
            self.0[x] = v;
        }
    }

    pub(super) fn join(&mut self, o: &View) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, &b) in self.0.iter_mut().zip(&o.0) {
            *a = (*a).max(b);
        }
    }

    pub(super) fn joined(&self, o: &View) -> View {
        let mut v = self.clone();
        v.join(o);
        v
    }

    /// A message was placed at rank `p` of `x`: the ranks at and above it move up one.
    pub(super) fn shift(&mut self, x: Loc, p: u32) {
        if let Some(e) = self.0.get_mut(x) {
            if *e >= p {
                *e += 1;
            }
        }
    }

    /// The `k` oldest messages of `x` were dropped: ranks move down, those below round up.
    pub(super) fn drop_below(&mut self, x: Loc, k: u32) {
        if let Some(e) = self.0.get_mut(x) {
            *e = e.saturating_sub(k);
        }
    }

    pub(super) fn hash_into(&self, h: &mut u64) {
        let n = self.0.iter().rposition(|&e| e != 0).map_or(0, |i| i + 1);
        *h = mix(*h, n as u64);
        for &e in &self.0[..n] {
            *h = mix(*h, e as u64);
        }
    }
}

pub(super) fn mix(h: u64, v: u64) -> u64 {
    let r = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    r ^ (r >> 29)
}
