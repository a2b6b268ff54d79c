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
//! peels it next, or gives it to a thread that has run out of states to peel. A graph the
//! workers explored has one state that nothing enters, the initial one, so without the giving
//! one thread peeled every state (measured: 7,564,317 against 0 on the 3-kswapd `progress`
//! proof). Each state is peeled at most once, after every predecessor it has; a state
//! on a cycle never is (its predecessor on the cycle is peeled only after it). The counts are
//! the array Tarjan starts from: a state left keeps 0 (not visited), a trimmed one gets
//! [`TRIMMED`], which Tarjan reads as a closed component that no component is numbered with.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, Mutex};

/// A trimmed state's word in Tarjan's array: above every index and every component's number.
pub(super) const TRIMMED: u32 = u32::MAX;

/// The graph of `n` states whose transitions `succ(v, f)` gives (`f` called with each
/// successor of `v`), trimmed on `threads` threads: Tarjan's starting array (0 for a state
/// left, [`TRIMMED`] for one removed) and how many states were removed.
#[cfg(test)]
pub(super) fn trim<F>(n: usize, threads: usize, succ: F) -> (Vec<u32>, u64)
where
    F: Fn(u32, &mut dyn FnMut(u32)) + Sync,
{
    trim_sharing(n, threads, false, &|_| false, succ).0
}

/// The threads' shared work: states to peel that a busy thread gave up, and how many threads
/// are busy (a thread is busy from when it has states to peel until it has none and the pool
/// is empty).
struct Pool {
    todo: Vec<u32>,
    busy: usize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`trim`], and how many states a thread gave to another; `share_twice`: the seeded defect
/// `ReductionDefect::WorkersTrimSharesTwice` (a state a thread gives to the pool is peeled by
/// both, so its successors lose two predecessors for one). `sink(v)` says that `v` has no
/// successor: such a state that nothing enters is trimmed without a peel (peeling it would
/// take nothing from any other state). Most states of a graph the workers closed on the fly
/// (`closed.rs`) are such states: the peel then runs over the states left open. A wrong
/// answer cannot lose a cycle (a state that nothing enters is on none); it leaves the
/// successors of the state unpeeled, for Tarjan.
pub(super) fn trim_sharing<F>(
    n: usize,
    threads: usize,
    share_twice: bool,
    sink: &(dyn Fn(u32) -> bool + Sync),
    succ: F,
) -> ((Vec<u32>, u64), u64)
where
    F: Fn(u32, &mut dyn FnMut(u32)) + Sync,
{
    let threads = threads.clamp(1, n.max(1));
    let mut words = vec![0u32; n];
    let shared = AtomicU64::new(0);
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
        // peels: a state another thread's peel takes to zero is that thread's alone. A graph
        // one search explored has one such state, the initial one: the work is shared as it
        // grows (`Pool`).
        let ready = Barrier::new(threads);
        let pool = Mutex::new(Pool { todo: Vec::new(), busy: threads });
        let hungry = AtomicUsize::new(0);
        let peeled = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let (ready, pool, hungry, shared) = (&ready, &pool, &hungry, &shared);
                    sc.spawn(move || {
                        let mut todo: Vec<u32> =
                            part(i).filter(|&v| counts[v as usize].load(Relaxed) == 0 && !sink(v)).collect();
                        ready.wait();
                        let mut peeled = 0u64;
                        loop {
                            while let Some(v) = todo.pop() {
                                peeled += 1;
                                succ(v, &mut |w| {
                                    if counts[w as usize].fetch_sub(1, Relaxed) == 1 {
                                        todo.push(w);
                                    }
                                });
                                // A thread is out of work: the oldest half of this one's goes
                                // to the pool, unless the pool still holds what it was given.
                                if todo.len() > 1 && hungry.load(Relaxed) > 0 {
                                    let give = todo.len() / 2;
                                    let mut p = lock(pool);
                                    if !p.todo.is_empty() {
                                        continue;
                                    }
                                    if share_twice {
                                        p.todo.extend_from_slice(&todo[..give]);
                                    } else {
                                        p.todo.extend(todo.drain(..give));
                                    }
                                    shared.fetch_add(give as u64, Relaxed);
                                }
                            }
                            // Out of work: take some from the pool, or end once no thread
                            // has any (only a busy thread makes more).
                            let mut p = lock(pool);
                            p.busy -= 1;
                            hungry.fetch_add(1, Relaxed);
                            loop {
                                if !p.todo.is_empty() {
                                    let take = p.todo.len().div_ceil(2);
                                    let from = p.todo.len() - take;
                                    todo.extend(p.todo.drain(from..));
                                    p.busy += 1;
                                    hungry.fetch_sub(1, Relaxed);
                                    break;
                                }
                                if p.busy == 0 {
                                    return peeled;
                                }
                                drop(p);
                                std::thread::yield_now();
                                p = lock(pool);
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).sum::<u64>()
        });
        peeled
    };
    let shared = shared.into_inner();
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
    debug_assert!(share_twice || peeled <= trimmed, "each state trimmed was peeled at most once");
    ((words, trimmed), shared)
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

    /// Successors from a list of edges, by source.
    fn adjacency(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); n];
        for &(a, b) in edges {
            out[a as usize].push(b);
        }
        out
    }

    /// A graph one search explored has one state that nothing enters: the threads share the
    /// peel as it grows from it, and trim exactly what one thread does. Random graphs of
    /// 20,000 states reached from state 0, acyclic or with a few cycles, on two, three and
    /// eight threads.
    #[test]
    fn the_peel_from_one_initial_state_is_shared_and_trims_what_one_thread_does() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % below
        };
        let mut shared_somewhere = false;
        for round in 0..6 {
            let n = 20_000usize;
            let mut edges = Vec::new();
            for v in 1..n as u32 {
                // Every state is entered from an earlier one, and from a few more.
                edges.push((next(u64::from(v)) as u32, v));
                for _ in 0..next(3) {
                    edges.push((next(u64::from(v)) as u32, v));
                }
            }
            // Half the graphs get cycles: an edge back from a state a few steps on.
            if round % 2 == 1 {
                let forward = adjacency(n, &edges);
                for _ in 0..5 {
                    let to = next(n as u64) as u32;
                    let mut v = to;
                    for _ in 0..3 {
                        if let Some(&w) = forward[v as usize].first() {
                            v = w;
                        }
                    }
                    edges.push((v, to));
                }
            }
            let adj = adjacency(n, &edges);
            let succ = |v: u32, f: &mut dyn FnMut(u32)| adj[v as usize].iter().for_each(|&w| f(w));
            let ((one, trimmed_one), _) = trim_sharing(n, 1, false, &|_| false, succ);
            if round % 2 == 0 {
                assert_eq!(trimmed_one as usize, n, "round {round}: an acyclic graph is trimmed whole");
            } else {
                assert!((trimmed_one as usize) < n, "round {round}: the cycles stay");
            }
            // The states with no successor, known to the trim or not: the same outcome. A state
            // that nothing enters is on no cycle, so even a state with successors taken for a
            // sink is trimmed rightly; what it enters is then not peeled and stays for Tarjan.
            // The comparison sees such a mistake (the initial state taken for a sink), and what
            // it trims is a part of what the trim does.
            let sink = |v: u32| adj[v as usize].is_empty();
            let ((words, _), _) = trim_sharing(n, 2, false, &|v| v == 0 || sink(v), succ);
            assert!(words != one, "round {round}: the initial state taken for a sink changes the outcome");
            assert!(words.iter().zip(&one).all(|(&w, &o)| w != TRIMMED || o == TRIMMED), "round {round}");
            // As the workers' graphs are: beside these states, as many that nothing enters and
            // that have no successor (states closed on the fly), trimmed whether the trim knows
            // them or not.
            let closed = |v: u32| v as usize >= n;
            let succ_beside = |v: u32, f: &mut dyn FnMut(u32)| {
                if !closed(v) {
                    succ(v, f)
                }
            };
            let ((beside, trimmed_beside), _) = trim_sharing(2 * n, 2, false, &|_| false, succ_beside);
            assert_eq!(trimmed_beside, trimmed_one + n as u64, "round {round}");
            assert!(beside[..n] == one[..] && beside[n..].iter().all(|&w| w == TRIMMED), "round {round}");
            let known = |v: u32| closed(v) || sink(v);
            assert_eq!(trim_sharing(2 * n, 2, false, &known, succ_beside).0, (beside, trimmed_beside), "round {round}");
            for threads in [2, 3, 8] {
                let ((words, trimmed), shared) = trim_sharing(n, threads, false, &|_| false, succ);
                assert_eq!((trimmed, &words), (trimmed_one, &one), "round {round}, {threads} threads");
                shared_somewhere |= shared > 0;
                let ((words, trimmed), _) = trim_sharing(n, threads, false, &sink, succ);
                assert_eq!((trimmed, &words), (trimmed_one, &one), "round {round}, {threads} threads, sinks known");
            }
        }
        assert!(shared_somewhere, "the threads shared the peel");
    }

    /// The seeded defect `ReductionDefect::WorkersTrimSharesTwice`: a state a thread gives
    /// to another is peeled by both. State 0 enters 10,000 states, each of which enters a
    /// cycle of two: one peel of it leaves the cycle's first state one predecessor (the
    /// cycle's), two leave none, and the cycle is trimmed. The correct trim keeps every cycle
    /// (and shares the peel); the defective one loses some.
    #[test]
    fn a_state_peeled_by_two_threads_is_caught() {
        let m = 10_000u32;
        let n = 1 + 3 * m as usize;
        let mut edges = Vec::new();
        for i in 0..m {
            let (x, c, d) = (1 + 3 * i, 2 + 3 * i, 3 + 3 * i);
            edges.extend([(0, x), (x, c), (c, d), (d, c)]);
        }
        let adj = adjacency(n, &edges);
        let succ = |v: u32, f: &mut dyn FnMut(u32)| adj[v as usize].iter().for_each(|&w| f(w));
        let cycles_kept =
            |words: &[u32]| (0..m).all(|i| words[2 + 3 * i as usize] == 0 && words[3 + 3 * i as usize] == 0);
        let (mut good_shared, mut caught) = (false, false);
        // The sharing depends on timing (the second thread must ask for work while the first
        // still peels): on a loaded machine, tried again for up to a minute until it happens.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < until {
            let ((words, trimmed), shared) = trim_sharing(n, 2, false, &|_| false, succ);
            assert!(cycles_kept(&words) && trimmed == 1 + u64::from(m), "the correct trim keeps every cycle");
            good_shared |= shared > 0;
            let ((words, _), shared) = trim_sharing(n, 2, true, &|_| false, succ);
            if shared > 0 {
                caught |= !cycles_kept(&words);
            }
            if good_shared && caught {
                break;
            }
        }
        assert!(good_shared, "the correct trim shared its peel");
        assert!(caught, "the seeded defect lost a cycle");
    }
}
