//! The stateful runtime (`platform::stateful`): toy protocols written against the `Platform`
//! trait, run by round-robin, exhaustive (stateless and stateful) DFS and random choosers.
//!
//! `cargo test --release -p mmcheck-model --features stateful --test stateful_rt`
//! Measurements (add `--features stateful,shuttle` for the shuttle comparison):
//! `cargo test --release -p mmcheck-model --features stateful,shuttle --test stateful_rt -- --ignored --nocapture`
#![cfg(feature = "stateful")]

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::{Arc, Mutex, OnceLock};

use mmmodel::event::Wq;
use mmmodel::ghost::{NoGhost, Pid};
use mmmodel::kernel::sched::{io_schedule_timeout, run_tasks, Sched, Start, TimerModel, TASK_UNINTERRUPTIBLE};
use mmmodel::kernel::wait::{finish_wait, prepare_to_wait, wake_up, WaitQueueHead};
use mmmodel::model::run as run_model;
use mmmodel::platform::stateful::{self, Chooser, Op, RunEnd, SchedPoint, StackPool, SymImage, TaskId};
use mmmodel::platform::{Atomic, AtomicInt, Join, Platform, RawSpinLock, Stateful};

/// A ghost that checks nothing, for protocol events `E`.
type TestGhost<E = ()> = NoGhost<E>;

type P = Stateful<TestGhost>;

/// The toys' own count of platform operations (scheduling points), for the measurements.
static OPS: AtomicU64 = AtomicU64::new(0);
#[inline(always)]
fn op() {
    OPS.fetch_add(1, Relaxed);
}

// ---- toys, generic over the platform -----------------------------------------------------------

/// Store buffering: `a: x = 1; r1 = y` ‖ `b: y = 1; r2 = x`. Under SC (0, 0) is impossible.
fn store_buffering<Q: Platform>(fences: bool) -> (u32, u32) {
    let x = Arc::new(Q::AtomicU32::new(0));
    let y = Arc::new(Q::AtomicU32::new(0));
    let r1 = Arc::new(Q::AtomicU32::new(9));
    let r2 = Arc::new(Q::AtomicU32::new(9));
    let side = |me: Arc<Q::AtomicU32>, other: Arc<Q::AtomicU32>, r: Arc<Q::AtomicU32>| {
        move || {
            op();
            me.store(1, Relaxed);
            if fences {
                Q::fence(SeqCst);
                Q::fence(SeqCst);
            }
            op();
            let v = other.load(Relaxed);
            op();
            r.store(v, Relaxed);
        }
    };
    let a = Q::spawn("a".into(), side(x.clone(), y.clone(), r1.clone()));
    let b = Q::spawn("b".into(), side(y, x, r2.clone()));
    a.join();
    b.join();
    op();
    op();
    (r1.load(Relaxed), r2.load(Relaxed))
}

/// Two tasks add `iters` each to a counter with a load and a store, under a spinlock or not.
fn counter<Q: Platform>(locked: bool, iters: u32) -> u32 {
    let c = Arc::new(Q::AtomicU32::new(0));
    let l = Arc::new(Q::SpinLock::new(true));
    let worker = || {
        let (c, l) = (c.clone(), l.clone());
        move || {
            for _ in 0..iters {
                if locked {
                    op();
                    l.lock();
                }
                op();
                let v = c.load(Relaxed);
                op();
                c.store(v + 1, Relaxed);
                if locked {
                    op();
                    l.unlock();
                }
            }
        }
    };
    let a = Q::spawn("a".into(), worker());
    let b = Q::spawn("b".into(), worker());
    a.join();
    b.join();
    op();
    c.load(Relaxed)
}

/// A correct park/unpark handshake: the waiter parks until the flag is set; the waker sets it
/// and unparks the waiter if it has registered. Returns the flag.
fn handshake<Q: Platform>() -> bool {
    let flag = Arc::new(Q::AtomicBool::new(false));
    let th: Arc<OnceLock<Q::Thread>> = Arc::new(OnceLock::new());
    let w = {
        let (flag, th) = (flag.clone(), th.clone());
        Q::spawn("waiter".into(), move || {
            let _ = th.set(Q::current());
            while !flag.load(Acquire) {
                Q::park();
            }
        })
    };
    let k = {
        let (flag, th) = (flag.clone(), th.clone());
        Q::spawn("waker".into(), move || {
            flag.store(true, Release);
            if let Some(t) = th.get() {
                Q::unpark(t);
            }
        })
    };
    w.join();
    k.join();
    flag.load(Relaxed)
}

/// A lost wakeup: the waiter checks the flag, *then* announces it waits; the waker sets the
/// flag and unparks only a waiter that announced itself. Deadlocks when the waker runs
/// entirely between the waiter's check and its announcement.
fn lost_wakeup<Q: Platform>() {
    let flag = Arc::new(Q::AtomicBool::new(false));
    let waiting = Arc::new(Q::AtomicBool::new(false));
    let th: Arc<OnceLock<Q::Thread>> = Arc::new(OnceLock::new());
    let w = {
        let (flag, waiting, th) = (flag.clone(), waiting.clone(), th.clone());
        Q::spawn("waiter".into(), move || {
            let _ = th.set(Q::current());
            if !flag.load(Acquire) {
                waiting.store(true, Release);
                Q::park();
            }
        })
    };
    let k = Q::spawn("waker".into(), move || {
        flag.store(true, Release);
        if waiting.load(Acquire) {
            Q::unpark(th.get().unwrap());
        }
    });
    w.join();
    k.join();
}

/// The kernel model's wait queue (`kernel::wait`, `kernel::sched`, timer model `never`):
/// a waiter sleeps on `wq` until `cond`, a waker sets `cond` and calls `wake_up`. `correct`
/// checks the condition after `prepare_to_wait` (no lost wakeup); otherwise before it.
fn kernel_waitq<Q: Platform>(correct: bool)
where
    Q::Ghost: Default,
{
    let ghost = Arc::new(<Q::Ghost as Default>::default());
    let sched = Arc::new(Sched::<Q>::new(2, TimerModel::Never, ghost));
    let wq = Arc::new(WaitQueueHead::<Q>::new(Wq("congestion_wqh")));
    let cond = Arc::new(Q::AtomicBool::new(false));
    let task = move |pid: Pid| {
        let cur = sched.enter(pid);
        if pid == 0 {
            if correct {
                loop {
                    prepare_to_wait(&cur, &wq, TASK_UNINTERRUPTIBLE);
                    if cond.load(Acquire) {
                        break;
                    }
                    io_schedule_timeout(&cur, 10);
                }
            } else if !cond.load(Acquire) {
                prepare_to_wait(&cur, &wq, TASK_UNINTERRUPTIBLE);
                io_schedule_timeout(&cur, 10);
            }
            finish_wait(&cur, &wq);
        } else {
            cond.store(true, Release);
            Q::fence(SeqCst);
            wake_up(&cur, &wq);
        }
    };
    run_tasks::<Q, _>(2, &|pid| ["waiter", "waker"][pid].to_string(), &Start::default(), Arc::new(task));
}

// ---- choosers -----------------------------------------------------------------------------------

#[inline]
fn lowest(mask: u32) -> TaskId {
    mask.trailing_zeros() as TaskId
}

/// The next enabled task after the one that ran last, cyclically.
struct RoundRobin;
impl Chooser for RoundRobin {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let e = p.enabled() as u64;
        let above = e & !((2u64 << p.current()) - 1);
        lowest(if above != 0 { above as u32 } else { e as u32 })
    }
}

/// Keeps the running task while it is enabled.
struct Sticky;
impl Chooser for Sticky {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        if p.enabled() & (1 << p.current()) != 0 {
            p.current()
        } else {
            lowest(p.enabled())
        }
    }
}

/// Switches task at every point where another one is enabled.
struct Alternate;
impl Chooser for Alternate {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let others = p.enabled() & !(1 << p.current());
        lowest(if others != 0 { others } else { p.enabled() })
    }
}

/// Uniformly random among the enabled tasks (xorshift64*).
struct Random(u64);
impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}
impl Chooser for Random {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let mut e = p.enabled();
        let k = (self.next() % e.count_ones() as u64) as u32;
        for _ in 0..k {
            e &= e - 1;
        }
        lowest(e)
    }
}

/// Exhaustive stateless DFS: each execution replays a prefix of choices, then takes the
/// lowest enabled task at every new point; the next execution backtracks to the deepest
/// point with an untried alternative. Records every fingerprint it sees.
#[derive(Default)]
struct Dfs {
    /// (enabled mask, choice) per point of the current execution.
    path: Vec<(u32, TaskId)>,
    pos: usize,
    seen: HashSet<u64>,
    check_incremental: bool,
}
impl Chooser for Dfs {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let fp = p.fingerprint();
        if self.check_incremental {
            assert_eq!(fp, p.fingerprint_recomputed(), "incremental fingerprint diverged");
        }
        self.seen.insert(fp);
        let t = if self.pos < self.path.len() {
            let (mask, t) = self.path[self.pos];
            assert_eq!(mask, p.enabled(), "replay diverged");
            t
        } else {
            let t = lowest(p.enabled());
            self.path.push((p.enabled(), t));
            t
        };
        self.pos += 1;
        t
    }
}
impl Dfs {
    /// Moves to the next execution's prefix; `false` when the search is complete.
    fn backtrack(&mut self) -> bool {
        self.path.truncate(self.pos);
        self.pos = 0;
        while let Some((mask, t)) = self.path.pop() {
            let rest = mask as u64 & !((2u64 << t) - 1);
            if rest != 0 {
                self.path.push((mask, lowest(rest as u32)));
                return true;
            }
        }
        false
    }
}

/// Exhaustive stateful DFS: like [`Dfs`], but a point whose fingerprint was seen before is
/// not expanded: the execution is fast-forwarded to its end with the lowest-enabled policy
/// (nothing after it is recorded, so nothing after it is backtracked into).
#[derive(Default)]
struct StatefulDfs {
    path: Vec<(u32, TaskId)>,
    pos: usize,
    visited: HashSet<u64>,
    fast_forward: bool,
}
impl Chooser for StatefulDfs {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        if self.pos < self.path.len() {
            let (mask, t) = self.path[self.pos];
            assert_eq!(mask, p.enabled(), "replay diverged");
            self.pos += 1;
            return t;
        }
        let t = lowest(p.enabled());
        if !self.fast_forward {
            if self.visited.insert(p.fingerprint()) {
                self.path.push((p.enabled(), t));
                self.pos += 1;
            } else {
                self.fast_forward = true;
            }
        }
        t
    }
}
impl StatefulDfs {
    fn backtrack(&mut self) -> bool {
        self.fast_forward = false;
        self.path.truncate(self.pos);
        self.pos = 0;
        while let Some((mask, t)) = self.path.pop() {
            let rest = mask as u64 & !((2u64 << t) - 1);
            if rest != 0 {
                self.path.push((mask, lowest(rest as u32)));
                return true;
            }
        }
        false
    }
}

/// Runs `body` under a stateless DFS to exhaustion; returns (executions, ends, fingerprints).
fn explore_dfs(pool: &mut StackPool, body: impl Fn() + Clone + 'static) -> (usize, Vec<RunEnd>, HashSet<u64>) {
    let mut dfs = Dfs { check_incremental: true, ..Dfs::default() };
    let mut ends = Vec::new();
    loop {
        ends.push(stateful::run(pool, body.clone(), &mut dfs));
        if !dfs.backtrack() {
            break;
        }
    }
    (ends.len(), ends, dfs.seen)
}

/// Runs `body` under the stateful DFS; returns (executions, ends, visited).
fn explore_stateful(pool: &mut StackPool, body: impl Fn() + Clone + 'static) -> (usize, Vec<RunEnd>, HashSet<u64>) {
    let mut dfs = StatefulDfs::default();
    let mut ends = Vec::new();
    loop {
        ends.push(stateful::run(pool, body.clone(), &mut dfs));
        if !dfs.backtrack() {
            break;
        }
    }
    (ends.len(), ends, dfs.visited)
}

/// A body that records the toy's result in `out`.
fn recording<T: Send + Ord + 'static>(out: &Arc<Mutex<BTreeSet<T>>>, toy: fn() -> T) -> impl Fn() + Clone + 'static {
    let out = out.clone();
    move || {
        let r = toy();
        out.lock().unwrap().insert(r);
    }
}

fn rss_bytes() -> usize {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = s.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

// ---- (1) round robin runs every toy to completion ------------------------------------------------

#[test]
fn round_robin_completes_every_toy() {
    let mut pool = StackPool::new();
    let out = Arc::new(Mutex::new(BTreeSet::new()));
    assert_eq!(
        stateful::run(&mut pool, recording(&out, || store_buffering::<P>(false)), &mut RoundRobin),
        RunEnd::AllFinished
    );
    assert_eq!(out.lock().unwrap().len(), 1);
    let out = Arc::new(Mutex::new(BTreeSet::new()));
    assert_eq!(
        stateful::run(&mut pool, recording(&out, || counter::<P>(true, 3)), &mut RoundRobin),
        RunEnd::AllFinished
    );
    assert_eq!(*out.lock().unwrap(), BTreeSet::from([6]));
    let out = Arc::new(Mutex::new(BTreeSet::new()));
    assert_eq!(stateful::run(&mut pool, recording(&out, handshake::<P>), &mut RoundRobin), RunEnd::AllFinished);
    assert_eq!(*out.lock().unwrap(), BTreeSet::from([true]));
    assert_eq!(stateful::run(&mut pool, lost_wakeup::<P>, &mut RoundRobin), RunEnd::AllFinished);
    assert_eq!(stateful::run(&mut pool, || kernel_waitq::<P>(true), &mut RoundRobin), RunEnd::AllFinished);
    // Every stack is back in the pool, and at most one per task that was alive at once.
    assert!(pool.stacks() <= 3, "{} stacks", pool.stacks());
    assert!(!stateful::in_execution());
}

// ---- (2) exhaustive stateless DFS ---------------------------------------------------------------

#[test]
fn dfs_enumerates_sc_outcomes() {
    let mut pool = StackPool::new();
    let out = Arc::new(Mutex::new(BTreeSet::new()));
    let (n, ends, _) = explore_dfs(&mut pool, recording(&out, || store_buffering::<P>(false)));
    assert!(ends.iter().all(|e| *e == RunEnd::AllFinished));
    // SC: every outcome but (0, 0).
    assert_eq!(*out.lock().unwrap(), BTreeSet::from([(0, 1), (1, 0), (1, 1)]), "after {n} executions");

    let out = Arc::new(Mutex::new(BTreeSet::new()));
    explore_dfs(&mut pool, recording(&out, || counter::<P>(false, 2)));
    assert_eq!(*out.lock().unwrap(), BTreeSet::from([2, 3, 4]), "racy counter: a lost update (2 iterations each)");
    let out = Arc::new(Mutex::new(BTreeSet::new()));
    let (n, ends, _) = explore_dfs(&mut pool, recording(&out, || counter::<P>(true, 2)));
    assert!(ends.iter().all(|e| *e == RunEnd::AllFinished));
    assert_eq!(*out.lock().unwrap(), BTreeSet::from([4]), "locked counter, {n} executions");

    let out = Arc::new(Mutex::new(BTreeSet::new()));
    let (_, ends, _) = explore_dfs(&mut pool, recording(&out, handshake::<P>));
    assert!(ends.iter().all(|e| *e == RunEnd::AllFinished), "the handshake never deadlocks");
}

#[test]
fn dfs_counts_executions_of_store_buffering() {
    // Task 0: Start, Join(a), Join(b), Load r1, Load r2 (its spawns are not points);
    // a and b: Start, Store, Load, Store each. An execution is an interleaving of a and b
    // (C(8,4) = 70) and a place for task 0's Join(a) among the k steps b has left when a
    // finishes (k + 1 places; C(7-k, 3) interleavings leave k): 35 + 2*20 + 3*10 + 4*4 + 5*1.
    let mut pool = StackPool::new();
    let (n1, _, fps1) = explore_dfs(&mut pool, || {
        store_buffering::<P>(false);
    });
    let (n2, _, fps2) = explore_dfs(&mut pool, || {
        store_buffering::<P>(false);
    });
    assert_eq!(n1, 126);
    assert_eq!(n1, n2);
    assert_eq!(fps1, fps2);
    println!("store buffering: {n1} executions, {} distinct states", fps1.len());
}

#[test]
fn dfs_finds_the_lost_wakeup() {
    let mut pool = StackPool::new();
    let (n, ends, _) = explore_dfs(&mut pool, lost_wakeup::<P>);
    let deadlocks: Vec<_> = ends.iter().filter(|e| matches!(e, RunEnd::Deadlock { .. })).collect();
    assert!(!deadlocks.is_empty(), "{n} executions, no deadlock");
    // Blocked: task 0 (joining the waiter) and the waiter (task 1), parked forever.
    assert!(deadlocks.iter().all(|e| **e == RunEnd::Deadlock { blocked: 0b011 }), "{deadlocks:?}");
    assert!(ends.contains(&RunEnd::AllFinished));
}

#[test]
fn dfs_kernel_wait_queue() {
    let mut pool = StackPool::new();
    let (n, ends, _) = explore_dfs(&mut pool, || kernel_waitq::<P>(true));
    assert!(ends.iter().all(|e| *e == RunEnd::AllFinished), "prepare_to_wait before the check: no lost wakeup");
    let (m, ends, _) = explore_dfs(&mut pool, || kernel_waitq::<P>(false));
    let lost = ends.iter().filter(|e| matches!(e, RunEnd::Deadlock { .. })).count();
    assert!(lost > 0, "the check before prepare_to_wait loses the wakeup ({m} executions)");
    println!("kernel wait queue: correct {n} executions; racy {m} executions, {lost} lost wakeups");
}

// ---- (3) stateful DFS ---------------------------------------------------------------------------

#[test]
fn stateful_dfs_visits_exactly_the_reachable_states() {
    let mut pool = StackPool::new();
    type Toy = (&'static str, fn());
    let toys: [Toy; 6] = [
        ("store buffering", || {
            store_buffering::<P>(false);
        }),
        ("racy counter", || {
            counter::<P>(false, 2);
        }),
        ("locked counter", || {
            counter::<P>(true, 2);
        }),
        ("handshake", || {
            handshake::<P>();
        }),
        ("lost wakeup", lost_wakeup::<P>),
        ("kernel wait queue", || kernel_waitq::<P>(true)),
    ];
    for (name, toy) in toys {
        let (n_stateless, _, all) = explore_dfs(&mut pool, toy);
        let (n1, ends1, v1) = explore_stateful(&mut pool, toy);
        let (n2, ends2, v2) = explore_stateful(&mut pool, toy);
        assert_eq!((n1, &ends1, &v1), (n2, &ends2, &v2), "{name}: two stateful searches differ");
        // The fingerprint determines the future, so pruning at a seen state loses no state.
        assert_eq!(v1, all, "{name}: stateful DFS visited a different state set");
        assert!(n1 <= n_stateless);
        println!("{name}: {} states; stateless {n_stateless} executions, stateful {n1}", v1.len());
    }
    // The stateful search still finds the deadlock.
    let (_, ends, _) = explore_stateful(&mut pool, lost_wakeup::<P>);
    assert!(ends.iter().any(|e| matches!(e, RunEnd::Deadlock { .. })));
}

// ---- (4) determinism ----------------------------------------------------------------------------

/// Records the fingerprint and choice at every point.
struct Recorder<C> {
    inner: C,
    trace: Vec<(u64, Option<Op>, TaskId)>,
}
impl<C: Chooser> Chooser for Recorder<C> {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let t = self.inner.choose(p);
        self.trace.push((p.fingerprint(), p.pending(t), t));
        t
    }
}

/// Replays a list of choices.
struct Replay(Vec<TaskId>, usize);
impl Chooser for Replay {
    fn choose(&mut self, _p: &SchedPoint<'_>) -> TaskId {
        self.1 += 1;
        self.0[self.1 - 1]
    }
}

#[test]
fn same_choices_same_fingerprints() {
    let mut pool = StackPool::new();
    for seed in 1..50u64 {
        let toy = || {
            counter::<P>(true, 3);
            handshake::<P>();
        };
        let mut a = Recorder { inner: Random(seed * 0x9e37_79b9), trace: Vec::new() };
        assert_eq!(stateful::run(&mut pool, toy, &mut a), RunEnd::AllFinished);
        let choices: Vec<TaskId> = a.trace.iter().map(|x| x.2).collect();
        let mut b = Recorder { inner: Replay(choices, 0), trace: Vec::new() };
        assert_eq!(stateful::run(&mut pool, toy, &mut b), RunEnd::AllFinished);
        assert_eq!(a.trace, b.trace);
    }
}

#[test]
fn fingerprint_sees_values_ops_and_local_history() {
    // Same ops, different values loaded: different local hashes, different fingerprints.
    let mut pool = StackPool::new();
    let fps = |v: u32| {
        let mut r = Recorder { inner: Sticky, trace: Vec::new() };
        let mut pool = StackPool::new();
        stateful::run(
            &mut pool,
            move || {
                let x = <P as Platform>::AtomicU32::new(v);
                x.load(Relaxed);
                x.store(7, Relaxed);
                <P as Platform>::yield_now();
            },
            &mut r,
        );
        r.trace.into_iter().map(|x| x.0).collect::<Vec<_>>()
    };
    let (a, b) = (fps(1), fps(2));
    assert_eq!(a.len(), 4); // Start, Load, Store, Yield
    assert_eq!(a[0], b[0], "before the body runs");
    assert!(a[1..].iter().zip(&b[1..]).all(|(x, y)| x != y));
    // reset_local forgets the history: after it, only the summary (and the rest of the state) count.
    let mut fp_after_reset = |v: u32| {
        let mut r = Recorder { inner: Sticky, trace: Vec::new() };
        stateful::run(
            &mut pool,
            move || {
                let x = <P as Platform>::AtomicU32::new(v);
                x.load(Relaxed);
                x.store(7, Relaxed);
                stateful::reset_local(42);
                <P as Platform>::yield_now();
            },
            &mut r,
        );
        r.trace.last().unwrap().0
    };
    assert_eq!(fp_after_reset(1), fp_after_reset(2));
}

// ---- (5) memory stays flat ----------------------------------------------------------------------

#[test]
fn memory_is_flat_over_a_million_executions() {
    let mut pool = StackPool::new();
    let tiny = || {
        let x = Arc::new(<P as Platform>::AtomicU32::new(0));
        let x2 = x.clone();
        let h = P::spawn("t".into(), move || {
            x2.fetch_add(1, Relaxed);
        });
        x.fetch_add(1, Relaxed);
        h.join();
    };
    let mut rr = RoundRobin;
    let mut rnd = Random(7);
    let mut deadlocks = 0;
    let mut batch = |pool: &mut StackPool, n: usize| {
        for i in 0..n {
            assert_eq!(stateful::run(pool, tiny, &mut rr), RunEnd::AllFinished);
            if i % 10 == 0 {
                // Unfinished coroutines are unwound (deadlocks): stacks come back too.
                if let RunEnd::Deadlock { .. } = stateful::run(pool, lost_wakeup::<P>, &mut rnd) {
                    deadlocks += 1;
                }
            }
        }
    };
    batch(&mut pool, 20_000);
    let before = rss_bytes();
    let t = std::time::Instant::now();
    batch(&mut pool, 1_000_000);
    let after = rss_bytes();
    println!(
        "1,000,000 executions (+100,000 lost-wakeup ones, {deadlocks} deadlocked) in {:.2?}: RSS {} KiB -> {} KiB, {} pooled stacks",
        t.elapsed(),
        before / 1024,
        after / 1024,
        pool.stacks()
    );
    // RSS is the process's, and other tests run in parallel threads: allow them 4 MiB. A leak
    // of 4 bytes per execution would exceed it; a leaked stack (at least one touched page)
    // per execution would be gigabytes.
    assert!(after <= before + 4 * 1024 * 1024, "RSS grew from {before} to {after}");
    assert!(pool.stacks() <= 3);
    assert!(deadlocks > 1000, "the unwinding path ran ({deadlocks} deadlocks)");
}

// ---- (6) fences are not scheduling points -------------------------------------------------------

#[test]
fn fences_are_not_scheduling_points() {
    let mut pool = StackPool::new();
    let count = |pool: &mut StackPool, fences: bool| {
        let mut r = Recorder { inner: RoundRobin, trace: Vec::new() };
        stateful::run(
            pool,
            move || {
                store_buffering::<P>(fences);
            },
            &mut r,
        );
        r.trace.iter().map(|x| x.1).collect::<Vec<_>>()
    };
    let plain = count(&mut pool, false);
    let fenced = count(&mut pool, true);
    assert_eq!(plain, fenced);
    // Task 0: Start, Join, Join, Load, Load; a and b: Start, Store, Load, Store.
    assert_eq!(plain.len(), 5 + 4 + 4);
}

// ---- failure paths ------------------------------------------------------------------------------

/// Silences the default panic message of panics this file causes on purpose.
fn quiet_intentional_panics() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned());
            if !msg.is_some_and(|m| m.contains("intentional") || m.contains("stateful runtime")) {
                prev(info)
            }
        }));
    });
}

#[test]
fn a_panicking_task_ends_the_run_and_the_others_are_unwound() {
    quiet_intentional_panics();
    let mut pool = StackPool::new();
    struct Dropped(Arc<AtomicU64>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let drops = Arc::new(AtomicU64::new(0));
    for _ in 0..1000 {
        let d = drops.clone();
        let end = stateful::run(
            &mut pool,
            move || {
                let l = Arc::new(<P as Platform>::SpinLock::new(false));
                l.lock();
                let (l2, d2) = (l.clone(), d.clone());
                // Blocks on the lock forever; unwound (its guard dropped) when the run ends.
                let _h = P::spawn("blocked".into(), move || {
                    let _g = Dropped(d2);
                    l2.lock();
                });
                <P as Platform>::yield_now();
                <P as Platform>::yield_now();
                panic!("intentional");
            },
            &mut RoundRobin,
        );
        assert_eq!(end, RunEnd::Panicked { task: 0, message: "intentional".into() });
    }
    assert_eq!(drops.load(Relaxed), 1000);
    assert!(pool.stacks() <= 2);
    assert_eq!(stateful::run(&mut pool, lost_wakeup::<P>, &mut Sticky), RunEnd::AllFinished);
}

#[test]
fn a_bad_choice_panics_out_of_run_and_the_runtime_recovers() {
    quiet_intentional_panics();
    let mut pool = StackPool::new();
    for at_yield_point in [false, true] {
        // The first point is the scheduler loop's, the second a yield point's.
        let bad_at = at_yield_point as u64;
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut bad = |p: &SchedPoint<'_>| if p.steps() == bad_at { 5 } else { lowest(p.enabled()) };
            stateful::run(
                &mut pool,
                || {
                    handshake::<P>();
                },
                &mut bad,
            )
        }));
        let msg = *r.unwrap_err().downcast::<String>().unwrap();
        assert!(msg.contains("not enabled"), "{msg}");
        assert!(!stateful::in_execution());
        assert_eq!(
            stateful::run(
                &mut pool,
                || {
                    handshake::<P>();
                },
                &mut RoundRobin
            ),
            RunEnd::AllFinished
        );
    }
}

#[test]
fn objects_outside_an_execution_panic() {
    quiet_intentional_panics();
    let r = std::panic::catch_unwind(|| <P as Platform>::AtomicU32::new(0));
    assert!(r.is_err());
    // An object smuggled out of its execution is refused by the next one.
    let mut pool = StackPool::new();
    let smuggled: Arc<Mutex<Option<Arc<<P as Platform>::AtomicU32>>>> = Arc::new(Mutex::new(None));
    let s = smuggled.clone();
    stateful::run(
        &mut pool,
        move || *s.lock().unwrap() = Some(Arc::new(<P as Platform>::AtomicU32::new(0))),
        &mut RoundRobin,
    );
    let s = smuggled.clone();
    let end = stateful::run(
        &mut pool,
        move || {
            s.lock().unwrap().as_ref().unwrap().load(Relaxed);
        },
        &mut RoundRobin,
    );
    assert!(matches!(&end, RunEnd::Panicked { message, .. } if message.contains("another execution")), "{end:?}");
    // Nested runs are refused.
    let end = stateful::run(
        &mut pool,
        || drop(stateful::run(&mut StackPool::new(), || {}, &mut RoundRobin)),
        &mut RoundRobin,
    );
    assert!(matches!(&end, RunEnd::Panicked { message, .. } if message.contains("nested")), "{end:?}");
}

#[test]
fn pending_ops_and_enabled_masks() {
    let mut pool = StackPool::new();
    let mut seen = Vec::new();
    // The highest enabled task: the spawned task runs as soon as it can.
    let mut ch = |p: &SchedPoint<'_>| {
        seen.push((p.enabled(), (0..p.num_tasks()).map(|t| p.pending(t)).collect::<Vec<_>>()));
        31 - p.enabled().leading_zeros() as TaskId
    };
    let end = stateful::run(
        &mut pool,
        || {
            let l = Arc::new(<P as Platform>::SpinLock::new(true));
            l.lock();
            let l2 = l.clone();
            let h = P::spawn("t".into(), move || {
                if !l2.try_lock() {
                    l2.lock();
                }
                l2.unlock();
            });
            <P as Platform>::yield_now();
            let me = P::current();
            P::unpark(&me);
            P::park();
            l.unlock();
            h.join();
        },
        &mut ch,
    );
    assert_eq!(end, RunEnd::AllFinished);
    use Op::*;
    let expect: Vec<(u32, Vec<Option<Op>>)> = vec![
        (0b1, vec![Some(Start)]),
        (0b1, vec![Some(Lock(0))]),
        (0b11, vec![Some(Yield), Some(Start)]),
        (0b11, vec![Some(Yield), Some(TryLock(0))]),
        (0b01, vec![Some(Yield), Some(Lock(0))]), // the trylock failed; the lock blocks
        (0b01, vec![Some(Unpark(0)), Some(Lock(0))]),
        (0b01, vec![Some(Park), Some(Lock(0))]), // its own token is set: enabled
        (0b01, vec![Some(Unlock(0)), Some(Lock(0))]),
        (0b10, vec![Some(Join(1)), Some(Lock(0))]),
        (0b10, vec![Some(Join(1)), Some(Unlock(0))]),
        (0b01, vec![Some(Join(1)), None]),
    ];
    assert_eq!(seen, expect);
}

/// At every scheduling point, `last_op` is the operation the task that ran last was pending on
/// at the point before (what the sleep-set search takes as the step's operation), whether the
/// scheduler resumed that task or the task went on from its own yield point; `Op::Start` at
/// the first point.
#[test]
fn last_op_is_the_op_the_last_task_was_pending_on() {
    let mut pool = StackPool::new();
    for highest in [true, false] {
        let mut seen: Vec<(TaskId, Op, Vec<Option<Op>>)> = Vec::new();
        let mut ch = |p: &SchedPoint<'_>| {
            seen.push((p.current(), p.last_op(), (0..p.num_tasks()).map(|t| p.pending(t)).collect()));
            if highest {
                31 - p.enabled().leading_zeros() as TaskId
            } else {
                lowest(p.enabled())
            }
        };
        let end = stateful::run(
            &mut pool,
            || {
                let l = Arc::new(<P as Platform>::SpinLock::new(true));
                l.lock();
                let l2 = l.clone();
                let h = P::spawn("t".into(), move || {
                    if !l2.try_lock() {
                        l2.lock();
                    }
                    l2.unlock();
                });
                <P as Platform>::yield_now();
                let me = P::current();
                P::unpark(&me);
                P::park();
                l.unlock();
                h.join();
            },
            &mut ch,
        );
        assert_eq!(end, RunEnd::AllFinished);
        assert!(seen.len() > 8, "the run has its steps");
        assert_eq!(seen[0].1, Op::Start);
        // Both ways to run a task happen: the same task going on, and another resumed.
        assert!(seen.windows(2).any(|w| w[0].0 == w[1].0));
        assert!(seen.windows(2).any(|w| w[0].0 != w[1].0));
        for w in seen.windows(2) {
            let (before, (ran, op, _)) = (&w[0].2, &w[1]);
            assert_eq!(before[*ran], Some(*op), "the step's operation is what {ran} was pending on");
        }
    }
}

// ---- the real protocols -------------------------------------------------------------------------

/// A reclaim scenario: kswapd, a writer, an allocator and a direct reclaimer on one node.
fn reclaim_cfg() -> mmmodel::reclaim::Config {
    use mmmodel::reclaim::{Config, Role, Variant};
    Config {
        variant: Variant::Recheck,
        mutation: None,
        roles: vec![
            Role::Kswapd { node: 0, batches: 2, pages: 2, balances: true },
            Role::Writer { holds: 2, spins: 0 },
            Role::Allocator { node: 0, attempts: 1 },
            Role::DirectReclaim { node: 0, batches: 1, pages: 1, tags_congested: true },
        ],
        timer: TimerModel::AnyTime,
    }
}

/// A compaction scenario: an async compactor, an lru_lock holder, a killer and a resched.
fn compaction_cfg() -> mmmodel::compaction::Config {
    use mmmodel::compaction::{Config, HeldLock, Mode, Role, Variant};
    Config {
        variant: Variant::FatalFix,
        mutation: None,
        roles: vec![
            Role::compactor(Mode::Async),
            Role::LockHolder { lock: HeldLock::LruLock, holds: 2 },
            Role::Killer { target: 0 },
            Role::Resched { target: 0 },
        ],
        pageblocks: Config::DEFAULT_PAGEBLOCKS,
        pages_per_block: Config::DEFAULT_PAGES_PER_BLOCK,
        swap_cluster_max: Config::DEFAULT_SWAP_CLUSTER_MAX,
        compact_cluster_max: Config::DEFAULT_COMPACT_CLUSTER_MAX,
        unmovable_per_block: Config::DEFAULT_UNMOVABLE_PER_BLOCK,
    }
}

/// The reclaim and compaction models themselves run on the stateful platform (no ghost:
/// this checks the platform, not the protocols), under a random chooser.
#[test]
fn the_protocol_models_run_on_the_stateful_platform() {
    use mmmodel::{compaction, reclaim};
    let mut pool = StackPool::new();
    let (rcfg, ccfg) = (reclaim_cfg(), compaction_cfg());
    const EXECS: u64 = 20_000;
    for (name, body) in [
        (
            "reclaim",
            Box::new(move || {
                drop(run_model::<reclaim::KswapdStall, Stateful<TestGhost<reclaim::Event>>>(
                    &rcfg,
                    Arc::default(),
                    &Start::default(),
                ))
            }) as Box<dyn Fn()>,
        ),
        (
            "compaction",
            Box::new(move || {
                let _ = run_model::<compaction::Compaction, Stateful<TestGhost<compaction::Event>>>(
                    &ccfg,
                    Arc::default(),
                    &Start::default(),
                );
            }),
        ),
    ] {
        let body: Arc<dyn Fn()> = Arc::from(body);
        let mut steps = 0u64;
        let mut rnd = Random(3);
        let mut ch = |p: &SchedPoint<'_>| {
            steps += 1;
            rnd.choose(p)
        };
        let t = std::time::Instant::now();
        for _ in 0..EXECS {
            let b = body.clone();
            let end = stateful::run(&mut pool, move || b(), &mut ch);
            assert_eq!(end, RunEnd::AllFinished, "{name}");
        }
        let e = t.elapsed();
        println!(
            "{name}: {EXECS} random executions in {e:.2?}, {:.0} points each, {:.0} exec/s, {}",
            steps as f64 / EXECS as f64,
            EXECS as f64 / e.as_secs_f64(),
            rate(steps, e)
        );
    }
}

// ---- measurements -------------------------------------------------------------------------------

/// `n` loads of one object by one task.
fn loads<Q: Platform>(x: &Q::AtomicU32, n: u64) {
    for _ in 0..n {
        x.load(Relaxed);
    }
}

fn rate(steps: u64, t: std::time::Duration) -> String {
    format!("{:.1} M steps/s", steps as f64 / t.as_secs_f64() / 1e6)
}

/// Steps per second of the runtime: (a) one task, the chooser keeping it; (b) two tasks, the
/// chooser switching at every point; (c) a toy protocol (two tasks, a spinlock, 20 locked
/// increments each) under a random chooser, compared with shuttle's random and DFS
/// schedulers on the same toy (feature `shuttle`), counting the toy's own platform ops.
#[test]
#[ignore = "measurement: run with --ignored --nocapture"]
fn measure_steps_per_second() {
    use std::time::Instant;
    let mut pool = StackPool::new();
    const N: u64 = 20_000_000;

    // (a) the same task at every point: no context switch.
    let mut steps = 0;
    let mut sticky = |p: &SchedPoint<'_>| {
        steps = p.steps() + 1;
        Sticky.choose(p)
    };
    let t = Instant::now();
    stateful::run(
        &mut pool,
        || {
            let x = <P as Platform>::AtomicU32::new(0);
            loads::<P>(&x, N);
        },
        &mut sticky,
    );
    let e = t.elapsed();
    println!("(a) same task:        {steps} steps in {e:.2?}: {}", rate(steps, e));

    // (a') the same, also computing the fingerprint at every point.
    let mut acc = 0u64;
    let mut fp = |p: &SchedPoint<'_>| {
        steps = p.steps() + 1;
        acc ^= p.fingerprint();
        Sticky.choose(p)
    };
    let t = Instant::now();
    stateful::run(
        &mut pool,
        || {
            let x = <P as Platform>::AtomicU32::new(0);
            loads::<P>(&x, N);
        },
        &mut fp,
    );
    let e = t.elapsed();
    println!("(a') same task + fingerprint: {steps} steps in {e:.2?}: {} ({acc:x})", rate(steps, e));

    // (b) two tasks, a switch at every point.
    let mut alt = |p: &SchedPoint<'_>| {
        steps = p.steps() + 1;
        Alternate.choose(p)
    };
    let t = Instant::now();
    stateful::run(
        &mut pool,
        || {
            let x = Arc::new(<P as Platform>::AtomicU32::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let x = x.clone();
                    P::spawn("t".into(), move || loads::<P>(&x, N / 4))
                })
                .collect();
            for h in hs {
                h.join();
            }
        },
        &mut alt,
    );
    let e = t.elapsed();
    println!("(b) alternating:      {steps} steps in {e:.2?}: {}", rate(steps, e));

    // (c) the toy.
    const EXECS: usize = 100_000;
    let toy = || {
        counter::<P>(true, 20);
    };
    let mut total_steps = 0;
    let mut rnd = Random(1);
    let mut random = |p: &SchedPoint<'_>| {
        total_steps += 1;
        rnd.choose(p)
    };
    let ops0 = OPS.load(Relaxed);
    let t = Instant::now();
    for _ in 0..EXECS {
        stateful::run(&mut pool, toy, &mut random);
    }
    let e = t.elapsed();
    let ops = OPS.load(Relaxed) - ops0;
    println!(
        "(c) toy, stateful random: {EXECS} executions in {e:.2?} ({:.0} exec/s): {ops} toy ops, {}; {total_steps} scheduling points, {}",
        EXECS as f64 / e.as_secs_f64(),
        rate(ops, e),
        rate(total_steps, e)
    );

    #[cfg(feature = "shuttle")]
    {
        type S = mmmodel::platform::Shuttle<TestGhost>;
        type SR = mmmodel::platform::Shuttle<TestGhost<mmmodel::reclaim::Event>>;
        let toy = || {
            counter::<S>(true, 20);
        };
        let ops0 = OPS.load(Relaxed);
        let t = Instant::now();
        shuttle::check_random(toy, EXECS);
        let e = t.elapsed();
        let ops = OPS.load(Relaxed) - ops0;
        println!(
            "(c) toy, shuttle random:  {EXECS} executions in {e:.2?} ({:.0} exec/s): {ops} toy ops, {}",
            EXECS as f64 / e.as_secs_f64(),
            rate(ops, e)
        );
        let ops0 = OPS.load(Relaxed);
        let t = Instant::now();
        shuttle::check_dfs(toy, Some(EXECS));
        let e = t.elapsed();
        let ops = OPS.load(Relaxed) - ops0;
        println!(
            "(c) toy, shuttle dfs:     {EXECS} executions in {e:.2?} ({:.0} exec/s): {ops} toy ops, {}",
            EXECS as f64 / e.as_secs_f64(),
            rate(ops, e)
        );

        // (d) the reclaim model (4 roles), executions per second.
        let cfg = reclaim_cfg();
        let t = Instant::now();
        shuttle::check_random(
            move || drop(run_model::<mmmodel::reclaim::KswapdStall, SR>(&cfg, Arc::default(), &Start::default())),
            EXECS,
        );
        let e = t.elapsed();
        println!(
            "(d) reclaim model, shuttle random:  {EXECS} executions in {e:.2?} ({:.0} exec/s)",
            EXECS as f64 / e.as_secs_f64()
        );
    }
    {
        let cfg = reclaim_cfg();
        let mut rnd = Random(5);
        let mut points = 0u64;
        let mut ch = |p: &SchedPoint<'_>| {
            points += 1;
            rnd.choose(p)
        };
        let t = Instant::now();
        for _ in 0..EXECS {
            let cfg = cfg.clone();
            type PR = Stateful<TestGhost<mmmodel::reclaim::Event>>;
            stateful::run(
                &mut pool,
                move || drop(run_model::<mmmodel::reclaim::KswapdStall, PR>(&cfg, Arc::default(), &Start::default())),
                &mut ch,
            );
        }
        let e = t.elapsed();
        println!(
            "(d) reclaim model, stateful random: {EXECS} executions in {e:.2?} ({:.0} exec/s, {:.0} points each)",
            EXECS as f64 / e.as_secs_f64(),
            points as f64 / EXECS as f64
        );
    }
}

/// A stateless DFS that also notes, at every point, the state's fingerprint, its image under
/// the first element of the symmetry group (if any), the body's pending op and who finished.
#[derive(Default)]
struct SymDfs {
    inner: Dfs,
    points: Vec<(u64, Option<u64>, Option<Op>, u32)>,
}
impl Chooser for SymDfs {
    fn choose(&mut self, p: &SchedPoint<'_>) -> TaskId {
        let image = (p.symmetry_images() > 0).then(|| p.fingerprint_image(0));
        self.points.push((p.fingerprint(), image, p.pending(0), p.finished()));
        self.inner.choose(p)
    }
}

/// The body spawns two tasks that are the same, joins them and reads a result. Under symmetry
/// (the two tasks swapped) the joins are one step whose image is reachable, and nothing the
/// body does once alone is a scheduling point; without it, one join after the other.
#[test]
fn join_all_is_one_symmetric_step_under_symmetry() {
    let body = || {
        let x = <P as Platform>::AtomicU32::new(0);
        let hs: Vec<_> = (0..2)
            .map(|_| {
                P::spawn(String::new(), || {
                    P::yield_now();
                })
            })
            .collect();
        P::join_all(hs);
        let _ = x.load(Relaxed);
    };
    let explore = |symmetric: bool| {
        let mut pool = StackPool::new();
        if symmetric {
            pool.set_symmetry(&[SymImage { node: Vec::new(), pid: Vec::new(), task: vec![0, 2, 1] }]);
        }
        let mut dfs = SymDfs::default();
        loop {
            assert!(matches!(stateful::run(&mut pool, body, &mut dfs), RunEnd::AllFinished));
            if !dfs.inner.backtrack() {
                break;
            }
        }
        dfs.points
    };
    let sym = explore(true);
    let seen: HashSet<u64> = sym.iter().map(|p| p.0).collect();
    for &(_, image, op, finished) in &sym {
        assert!(!matches!(op, Some(Op::Join(_))), "a single join under symmetry");
        assert!(!matches!(op, Some(Op::JoinAll(m)) if m != 0b110), "{op:?}");
        // Once both have finished, the join is the body's last scheduling point.
        assert!(finished & 0b110 != 0b110 || matches!(op, Some(Op::JoinAll(_))), "a scheduling point after the join");
        assert!(seen.contains(&image.expect("an image")), "an image that no execution reaches");
    }
    assert!(sym.iter().any(|p| matches!(p.2, Some(Op::JoinAll(0b110)))));
    let plain = explore(false);
    assert!(
        plain.iter().any(|p| matches!(p.2, Some(Op::Join(1))))
            && plain.iter().any(|p| matches!(p.2, Some(Op::Join(2))))
    );
    assert!(plain.iter().any(|p| p.3 & 0b110 == 0b110), "without symmetry the body's last read is a scheduling point");
}
