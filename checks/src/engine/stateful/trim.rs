//! The fair-cycle pass's parallel first step over the workers' graph: trimming (as OWCTY's
//! elimination, Černá and Pelánek 2003; as the "trim" of parallel SCC algorithms). A state
//! that no transition of the graph enters is on no cycle, and neither is a state whose every
//! predecessor was trimmed: repeatedly removing them leaves exactly the states on a cycle and
//! those a cycle reaches, so the strongly connected components with a transition inside are
//! the same in what is left as in the whole graph, and Tarjan (`stored.rs`) runs only there.
//! A graph with no cycle (the 3-kswapd proofs: docs/performance.md) is trimmed whole.
//!
//! Two steps, each on `threads` threads over parts of the states: count each state's
//! predecessors (an atomic increment per transition), then peel, each thread from the states
//! of its part that nothing enters: the thread whose decrement takes a state's count to zero
//! peels it next. Each state is peeled at most once, after every predecessor it has; a state
//! on a cycle never is (its predecessor on the cycle is peeled only after it). The counts are
//! the array Tarjan starts from: a state left keeps 0 (not visited), a trimmed one gets
//! [`TRIMMED`], which Tarjan reads as a closed component that no component is numbered with.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Barrier;

/// A trimmed state's word in Tarjan's array: above every index and every component's number.
pub(super) const TRIMMED: u32 = u32::MAX;

/// The graph of `n` states whose transitions `succ(v, f)` gives (`f` called with each
/// successor of `v`), trimmed on `threads` threads: Tarjan's starting array (0 for a state
/// left, [`TRIMMED`] for one removed) and how many states were removed.
pub(super) fn trim<F>(n: usize, threads: usize, succ: F) -> (Vec<u32>, u64)
where
    F: Fn(u32, &mut dyn FnMut(u32)) + Sync,
{
    let threads = threads.clamp(1, n.max(1));
    let mut words = vec![0u32; n];
    let peeled = {
        const _: () = assert!(core::mem::align_of::<AtomicU32>() == core::mem::align_of::<u32>());
        // SAFETY: `AtomicU32` has the size, alignment (checked above) and bit validity of
        // `u32`, and `words` is borrowed mutably for as long as `counts` lives, so nothing
        // reads the words but through it.
        let counts: &[AtomicU32] = unsafe { &*(words.as_mut_slice() as *mut [u32] as *const [AtomicU32]) };
        let part = |i: usize| (n * i / threads) as u32..(n * (i + 1) / threads) as u32;
        let succ = &succ;
        std::thread::scope(|sc| {
            for i in 0..threads {
                sc.spawn(move || {
                    for v in part(i) {
                        succ(v, &mut |w| {
                            counts[w as usize].fetch_add(1, Relaxed);
                        });
                    }
                });
            }
        });
        // Every thread lists the states of its part that nothing enters before any thread
        // peels: a state another thread's peel takes to zero is that thread's alone.
        let ready = Barrier::new(threads);
        let peeled = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let ready = &ready;
                    sc.spawn(move || {
                        let mut todo: Vec<u32> = part(i).filter(|&v| counts[v as usize].load(Relaxed) == 0).collect();
                        ready.wait();
                        let mut peeled = 0u64;
                        while let Some(v) = todo.pop() {
                            peeled += 1;
                            succ(v, &mut |w| {
                                if counts[w as usize].fetch_sub(1, Relaxed) == 1 {
                                    todo.push(w);
                                }
                            });
                        }
                        peeled
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).sum::<u64>()
        });
        peeled
    };
    let mut trimmed = 0u64;
    for w in &mut words {
        // A state left keeps a count above zero; every state at zero was peeled.
        if *w == 0 {
            *w = TRIMMED;
            trimmed += 1;
        } else {
            *w = 0;
        }
    }
    debug_assert_eq!(peeled, trimmed, "each state trimmed was peeled once");
    (words, trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: usize, edges: &[(u32, u32)], threads: usize) -> Vec<bool> {
        let (words, trimmed) = trim(n, threads, |v, f| {
            for &(a, b) in edges {
                if a == v {
                    f(b);
                }
            }
        });
        assert_eq!(trimmed as usize, words.iter().filter(|&&w| w == TRIMMED).count());
        words.iter().map(|&w| w == 0).collect()
    }

    /// A chain into a cycle, a self-loop, and a tail out of the cycle: the chain goes, the
    /// cycle, the self-loop and what the cycle reaches stay, on one thread and on three.
    #[test]
    fn trimming_keeps_the_cycles_and_what_they_reach() {
        // 0 -> 1 -> 2 -> 3 -> 2, 3 -> 4; 5 -> 5; 6 alone.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (5, 5)];
        for threads in [1, 2, 3, 8] {
            assert_eq!(run(7, &edges, threads), [false, false, true, true, true, true, false], "{threads} threads");
        }
        // No cycle: everything goes.
        assert_eq!(run(4, &[(0, 1), (1, 2), (0, 2), (2, 3)], 2), [false; 4]);
        assert_eq!(run(0, &[], 2), Vec::<bool>::new());
    }
}
