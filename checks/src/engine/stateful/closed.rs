//! States closed on the fly (docs/model.md, "Many workers": closing states on the fly): when
//! several workers of one process record the state graph for the fair-cycle pass, a worker
//! that leaves a state whose every recorded transition leads to a closed state closes it too,
//! and records no row for it. A closed state is on no cycle: each of its successors was closed
//! before it, so a cycle through it would need a state closed before itself. The pass then
//! holds only the states left open, and the transitions between them.
//!
//! A state closes only where one worker took every transition out of it: not where a worker
//! gave some away ([`super::dfs::donate`]) nor where a job starts (its giver took the others).
//! Only the worker that stored a state has it on its path with all its transitions, so only
//! that worker closes it, and a state's bit is written once. A bit read stale reads open: the
//! reader keeps its state open, which costs the pass a row and never a cycle.
//!
//! The bits are kept by state number ([`Numbering`]): per worker, chunks of 2^20 states
//! allocated as the worker closes states in them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use super::links::Numbering;

/// Bits of a chunk.
const CHUNK_BITS: usize = 20;
/// Chunks of a worker: enough for every index a number holds.
const CHUNKS: usize = 1 << (32 - CHUNK_BITS);

/// Bytes of a chunk.
const CHUNK_BYTES: u64 = (1 << CHUNK_BITS) / 8;

type Chunk = OnceLock<Box<[AtomicU64]>>;

/// The closed states of every worker of one search, by number.
pub(super) struct Closed {
    bits: u32,
    /// Per worker, its chunks.
    workers: Vec<Box<[Chunk]>>,
    /// Chunks allocated, for the memory budget.
    chunks: AtomicU64,
}

impl Closed {
    pub fn new(workers: usize) -> Self {
        let bits = Numbering::new(0, workers).bits;
        let per = CHUNKS >> bits;
        Closed {
            bits,
            workers: (0..workers.max(1)).map(|_| (0..per).map(|_| Chunk::new()).collect()).collect(),
            chunks: AtomicU64::new(0),
        }
    }

    fn at(&self, n: u32) -> Option<(&Chunk, usize)> {
        let (w, i) = Numbering::split(self.bits, n);
        Some((self.workers.get(w)?.get(i >> CHUNK_BITS)?, i & ((1 << CHUNK_BITS) - 1)))
    }

    /// Whether state `n` was closed (a state of a chunk not allocated yet is open).
    #[inline]
    pub fn get(&self, n: u32) -> bool {
        self.at(n).and_then(|(c, i)| c.get().map(|c| c[i / 64].load(Relaxed) & 1 << (i % 64) != 0)).unwrap_or(false)
    }

    /// Close state `n` (by the worker that stored it): the bytes this allocated (a chunk's,
    /// or 0), for the memory budget.
    pub fn close(&self, n: u32) -> u64 {
        let Some((c, i)) = self.at(n) else { return 0 };
        let mut grew = 0;
        let c = c.get_or_init(|| {
            self.chunks.fetch_add(1, Relaxed);
            grew = CHUNK_BYTES;
            (0..(1 << CHUNK_BITS) / 64).map(|_| AtomicU64::new(0)).collect()
        });
        c[i / 64].fetch_or(1 << (i % 64), Relaxed);
        grew
    }

    /// Bytes of the chunks allocated.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.chunks.load(Relaxed) * CHUNK_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_close_by_number_and_stay_closed() {
        for workers in [1usize, 2, 3, 8] {
            let c = Closed::new(workers);
            for w in 0..workers {
                let n = Numbering::new(w, workers);
                for i in [0usize, 1, 63, 64, (1 << CHUNK_BITS) + 5] {
                    let x = n.number(i).unwrap();
                    assert!(!c.get(x));
                    c.close(x);
                    assert!(c.get(x), "{workers} workers, worker {w}, index {i}");
                }
                // A neighbour stays open.
                assert!(!c.get(n.number(2).unwrap()));
            }
            assert_eq!(c.bytes(), 2 * workers as u64 * CHUNK_BYTES);
        }
    }
}
