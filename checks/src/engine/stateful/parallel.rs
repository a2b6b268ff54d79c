//! Many workers on one machine (`--workers N`): what they share, and the fair-cycle pass over
//! the state graph they store when `progress` is checked.
//!
//! Each worker is a thread with its own coroutine runtime that runs the depth-first search of
//! [`super::search`] from the states it is given. They share:
//!
//! * **the visited table**, cut into [`SHARDS`] shards by the fingerprint's top bits, each a
//!   hash table behind its own lock (a worker holds one lock for one lookup-and-insert, never
//!   two; with 256 shards and a handful of workers a lock is almost never contended). A
//!   state belongs to the worker that inserts it, which explores it; under partial-order
//!   reduction the entry is its sleep mask, and a visit with a smaller one explores the
//!   difference, whoever stored it (the same rule as one worker's);
//! * **a job market** (stateright's and SPIN's hand-off): a worker with nothing to do says so,
//!   and a busy one gives away the transitions left to explore at the shallowest state of its
//!   search path, as the schedule that leads there plus a task mask. The receiver replays the
//!   schedule and searches on from there. A state's schedule is all a job needs: states are
//!   never serialised.
//!
//! Safety violations stop every worker. `progress` needs the strongly connected components of
//! the whole state graph, which one worker's Tarjan cannot see when others hold parts of it:
//! with more than one worker each records its edges (the task of each) and its states (the
//! tasks enabled there), and once the search is complete [`fair_components`] runs Tarjan over
//! them (docs/model.md, "Many workers").

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};

use super::search::Identity;

/// Shards of the shared visited table.
pub const SHARDS: usize = 256;

type Shard = HashMap<u64, u32, BuildHasherDefault<Identity>>;

/// Transitions left to explore at one state: the schedule that leads there, and the tasks.
#[derive(Debug, Clone)]
pub(super) struct Job {
    pub prefix: Vec<u8>,
    pub todo: u32,
}

#[derive(Default)]
struct Market {
    jobs: Vec<Job>,
    idle: usize,
    done: bool,
}

/// What the workers of one search share.
pub(super) struct Shared {
    shards: Box<[Mutex<Shard>]>,
    /// States stored, by every worker.
    pub states: AtomicU64,
    /// Set when any worker found a decisive violation, hit a budget or failed: every worker
    /// stops at its next scheduling point.
    pub stop: AtomicBool,
    /// Workers waiting for a job, and jobs offered and not taken yet.
    hungry: AtomicUsize,
    offered: AtomicUsize,
    market: Mutex<Market>,
    wake: Condvar,
    workers: usize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    pub fn new(workers: usize) -> Self {
        Shared {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            states: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            hungry: AtomicUsize::new(0),
            offered: AtomicUsize::new(0),
            market: Mutex::new(Market::default()),
            wake: Condvar::new(),
            workers,
        }
    }

    fn shard(&self, fp: u64) -> &Mutex<Shard> {
        &self.shards[(fp >> 56) as usize % SHARDS]
    }

    /// Insert `fp` with `value` if it is not stored: whether it was new.
    pub fn insert(&self, fp: u64, value: u32) -> bool {
        let mut s = lock(self.shard(fp));
        if s.contains_key(&fp) {
            return false;
        }
        s.insert(fp, value);
        drop(s);
        self.states.fetch_add(1, Relaxed);
        true
    }

    /// Partial-order reduction's visit of `fp` with sleep mask `asleep`: `None` if the state
    /// is new (stored with `asleep`); otherwise the transitions the stored visits left asleep
    /// and this one does not (the stored mask becomes the intersection).
    pub fn visit_sleeping(&self, fp: u64, asleep: u32) -> Option<u32> {
        let mut s = lock(self.shard(fp));
        match s.get_mut(&fp) {
            Some(stored) => {
                let left = *stored & !asleep;
                *stored &= asleep;
                Some(left)
            }
            None => {
                s.insert(fp, asleep);
                drop(s);
                self.states.fetch_add(1, Relaxed);
                None
            }
        }
    }

    /// Slots of capacity over every shard (for the memory figure).
    pub fn capacity(&self) -> usize {
        self.shards.iter().map(|s| lock(s).capacity()).sum()
    }

    /// Whether a worker waits for a job that nobody has offered yet (cheap: two loads).
    pub fn wanted(&self) -> bool {
        self.hungry.load(Relaxed) > self.offered.load(Relaxed)
    }

    /// Offer a job to a waiting worker.
    pub fn give(&self, job: Job) {
        let mut m = lock(&self.market);
        self.offered.fetch_add(1, Relaxed);
        m.jobs.push(job);
        drop(m);
        self.wake.notify_one();
    }

    /// Stop every worker (a violation, a budget, an error).
    pub fn halt(&self) {
        self.stop.store(true, Relaxed);
        let mut m = lock(&self.market);
        m.done = true;
        drop(m);
        self.wake.notify_all();
    }

    /// Wait for a job; `None` once every worker is waiting and no job is left (the search is
    /// complete) or the search was stopped.
    pub fn take(&self) -> Option<Job> {
        let mut m = lock(&self.market);
        m.idle += 1;
        self.hungry.fetch_add(1, Relaxed);
        loop {
            if m.done || self.stop.load(Relaxed) {
                return None;
            }
            if let Some(job) = m.jobs.pop() {
                m.idle -= 1;
                self.hungry.fetch_sub(1, Relaxed);
                self.offered.fetch_sub(1, Relaxed);
                return Some(job);
            }
            if m.idle == self.workers {
                m.done = true;
                drop(m);
                self.wake.notify_all();
                return None;
            }
            m = self.wake.wait(m).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A worker's part of the state graph (kept only when `progress` is checked).
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// The initial state (recorded by the worker that stored it).
    pub initial: Option<u64>,
    /// Every state the worker stored: fingerprint, tasks enabled there, tasks that exist.
    pub nodes: Vec<(u64, u32, u32)>,
    /// Every transition the worker took: from, to, the task that moved.
    pub edges: Vec<(u64, u64, u8)>,
}

/// A strongly connected component with a transition inside it, and what its fair-cycle test
/// needs: its states, the tasks that move inside it, and those disabled somewhere in it.
pub(super) struct Component {
    pub members: Vec<u64>,
    pub moves: u32,
    pub disabled: u32,
    pub tasks: u32,
}

/// The strongly connected components of the graph that have a transition inside them (an
/// iterative Tarjan), and the shortest schedule from the initial state to each component's
/// first member found (a breadth-first pass over the stored edges).
pub(super) fn components(graphs: &[Graph]) -> (Vec<Component>, Option<u64>) {
    let mut index: HashMap<u64, u32, BuildHasherDefault<Identity>> = HashMap::default();
    let mut nodes: Vec<(u64, u32, u32)> = Vec::new();
    for g in graphs {
        for &n in &g.nodes {
            if index.insert(n.0, nodes.len() as u32).is_none() {
                nodes.push(n);
            }
        }
    }
    let initial = graphs.iter().find_map(|g| g.initial);
    // Adjacency in compressed rows.
    let n = nodes.len();
    let mut start = vec![0u32; n + 1];
    let mut edges: Vec<(u32, u32, u8)> = Vec::new();
    for g in graphs {
        for &(a, b, t) in &g.edges {
            if let (Some(&a), Some(&b)) = (index.get(&a), index.get(&b)) {
                edges.push((a, b, t));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(a, _, _) in &edges {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    const UNSEEN: u32 = u32::MAX;
    let mut idx = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut comp_of = vec![UNSEEN; n];
    let mut out = Vec::new();
    let mut next = 0u32;
    // (node, next edge to look at)
    let mut call: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if idx[root as usize] != UNSEEN {
            continue;
        }
        call.push((root, start[root as usize]));
        idx[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut e)) = call.last_mut() {
            if *e < start[v as usize + 1] {
                let w = edges[*e as usize].1;
                *e += 1;
                if idx[w as usize] == UNSEEN {
                    idx[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, start[w as usize]));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(idx[w as usize]);
                }
                continue;
            }
            call.pop();
            if let Some(&(u, _)) = call.last() {
                low[u as usize] = low[u as usize].min(low[v as usize]);
            }
            if low[v as usize] == idx[v as usize] {
                let c = out.len() as u32;
                let mut members = Vec::new();
                loop {
                    let w = stack.pop().expect("Tarjan's stack");
                    on_stack[w as usize] = false;
                    comp_of[w as usize] = c;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(members);
            }
        }
    }
    let mut comps = Vec::new();
    for (c, members) in out.into_iter().enumerate() {
        let mut moves = 0u32;
        for &m in &members {
            for &(_, w, t) in &edges[start[m as usize] as usize..start[m as usize + 1] as usize] {
                if comp_of[w as usize] == c as u32 {
                    moves |= 1 << t;
                }
            }
        }
        if moves == 0 {
            continue;
        }
        let (mut disabled, mut tasks) = (0u32, 0u32);
        for &m in &members {
            let (_, enabled, tm) = nodes[m as usize];
            disabled |= !enabled & tm;
            tasks |= tm;
        }
        comps.push(Component {
            members: members.iter().map(|&m| nodes[m as usize].0).collect(),
            moves,
            disabled,
            tasks,
        });
    }
    (comps, initial)
}

/// The shortest schedule from `from` to any state `goal` admits, over the stored edges.
pub(super) fn path_to(graphs: &[Graph], from: u64, goal: &dyn Fn(u64) -> bool) -> Option<Vec<u8>> {
    let mut adj: HashMap<u64, Vec<(u64, u8)>, BuildHasherDefault<Identity>> = HashMap::default();
    for g in graphs {
        for &(a, b, t) in &g.edges {
            adj.entry(a).or_default().push((b, t));
        }
    }
    let mut prev: HashMap<u64, (u64, u8), BuildHasherDefault<Identity>> = HashMap::default();
    let mut queue = std::collections::VecDeque::from([from]);
    let mut seen: std::collections::HashSet<u64, BuildHasherDefault<Identity>> = Default::default();
    seen.insert(from);
    while let Some(v) = queue.pop_front() {
        if goal(v) {
            let mut path = Vec::new();
            let mut at = v;
            while at != from {
                let (p, t) = prev[&at];
                path.push(t);
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        for &(w, t) in adj.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(w) {
                prev.insert(w, (v, t));
                queue.push_back(w);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two components with a transition inside (a 2-cycle and a self-loop), a transient state,
    /// and the shortest path to the self-loop.
    #[test]
    fn components_and_paths_of_a_small_graph() {
        let g = Graph {
            initial: Some(1),
            nodes: vec![(1, 0b11, 0b11), (2, 0b01, 0b11), (3, 0b10, 0b11), (4, 0b01, 0b11)],
            edges: vec![(1, 2, 0), (2, 3, 0), (3, 2, 1), (1, 4, 1), (4, 4, 0)],
        };
        let (comps, initial) = components(std::slice::from_ref(&g));
        assert_eq!(initial, Some(1));
        let mut found: Vec<(Vec<u64>, u32, u32)> = comps
            .into_iter()
            .map(|mut c| {
                c.members.sort_unstable();
                (c.members, c.moves, c.disabled)
            })
            .collect();
        found.sort();
        assert_eq!(found, vec![(vec![2, 3], 0b11, 0b11), (vec![4], 0b01, 0b10)]);
        assert_eq!(path_to(std::slice::from_ref(&g), 1, &|s| s == 4), Some(vec![1]));
        assert_eq!(path_to(std::slice::from_ref(&g), 1, &|s| s == 3), Some(vec![0, 0]));
        assert_eq!(path_to(std::slice::from_ref(&g), 2, &|s| s == 1), None);
    }

    #[test]
    fn the_market_ends_when_every_worker_waits() {
        let s = Shared::new(2);
        std::thread::scope(|sc| {
            let a = sc.spawn(|| s.take().map(|j| j.todo));
            // Give the job only once the other worker waits (or right away: either way it gets it).
            s.give(Job { prefix: vec![0], todo: 0b10 });
            assert_eq!(a.join().unwrap(), Some(0b10));
        });
        std::thread::scope(|sc| {
            let a = sc.spawn(|| s.take().is_none());
            let b = sc.spawn(|| s.take().is_none());
            assert!(a.join().unwrap() && b.join().unwrap());
        });
        assert!(s.insert(7, 0) && !s.insert(7, 0));
        assert_eq!(s.visit_sleeping(9, 0b110), None);
        assert_eq!(s.visit_sleeping(9, 0b010), Some(0b100));
        assert_eq!(s.visit_sleeping(9, 0b011), Some(0));
        assert_eq!(s.states.load(Relaxed), 2);
    }
}
