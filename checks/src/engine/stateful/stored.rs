//! The union of the workers' graphs (`graph.rs`) for the fair-cycle pass, and its strongly
//! connected components: each worker's rows stay where it recorded them, in the packed form
//! or the wide one (`links.rs`); [`Stored::components`] runs Tarjan over them (Pearce's
//! one-word variant). The fairness test on a component is [`super::fair`]'s; the shortest way
//! into one is [`Stored::path_to`].

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::graph::{Edge, Graph};
use super::links::{Label, Link, Links, Marks, MarksVec, Numbering, Packed, TO_BITS};
use super::store::Identity;
use super::trim::trim_sharing;
use crate::engine::types::ReductionDefect;
use crate::monitor::online::CycleKey;

/// A strongly connected component with a transition inside it, and what its fair-cycle test
/// needs: its states, the tasks that move inside it, and those disabled somewhere in it.
pub(super) struct Component {
    pub members: Vec<u64>,
    pub moves: u32,
    pub disabled: u32,
    pub tasks: u32,
    /// The members as node numbers of the [`Stored`] graph.
    pub nodes: Vec<u32>,
}

/// Each node's stuck situations, sorted and without repeats.
fn sort_keys(keys: &mut HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>>) {
    for v in keys.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
}

/// Where a node's transitions are in a [`Stored`] graph: pool, start, length, in eight bytes
/// (one per state of the union: twelve took 30 MB more of the two-worker 3-kswapd `progress`
/// proof's peak, docs/performance.md, "The two workers' pass in less memory"). The pool takes the
/// top [`POOL_BITS`] of the second word: a pool per worker (at most 256) and the joined rows'.
/// The length takes the rest: a state's transitions, at most a worker's 32 tasks times 256
/// choices from each worker that explored it, fit.
#[derive(Debug, Clone, Copy, Default)]
struct Slice {
    start: u32,
    pool_len: u32,
}

/// Bits of a [`Slice`]'s pool.
const POOL_BITS: u32 = 9;
const LEN_MASK: u32 = u32::MAX >> POOL_BITS;

impl Slice {
    fn new(pool: u32, start: u32, len: u32) -> Self {
        assert!(pool >> POOL_BITS == 0 && len & !LEN_MASK == 0, "pool {pool} or length {len} beyond a slice's bits");
        Slice { start, pool_len: pool << (32 - POOL_BITS) | len }
    }
    #[inline]
    fn pool(self) -> u32 {
        self.pool_len >> (32 - POOL_BITS)
    }
    #[inline]
    fn len(self) -> u32 {
        self.pool_len & LEN_MASK
    }
}

/// The union of the workers' graphs, its transitions in the form `L` (packed, or [`Link`]s).
/// Each worker's rows stay where it recorded them (its pool); a node with rows in several
/// workers' pools has them copied together into one more.
pub(super) struct Stored<L> {
    /// The initial state.
    pub initial: Option<u64>,
    marks: MarksVec,
    fps: Vec<u64>,
    pools: Vec<Vec<L>>,
    slices: Vec<Slice>,
    /// Whether the components keep the transitions that read a superseded store (the seeded
    /// defect `ReductionDefect::FairnessIgnoresStaleReads`).
    with_stale: bool,
    /// Each node's stuck situations (sorted).
    keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>>,
    /// The threads that trim the graph before Tarjan (`trim.rs`): the workers that recorded
    /// it (one: no trim).
    threads: usize,
    /// The seeded defect `ReductionDefect::WorkersTrimSkipsJoinedRows`: the trim neither
    /// counts nor follows the transitions of a state two workers explored from.
    trim_skips_joined: bool,
    /// The seeded defect `ReductionDefect::WorkersTrimSharesTwice`: a state the trim's threads
    /// share is peeled by both.
    trim_shares_twice: bool,
    /// A union of numbered workers' graphs built before their states were named (`fps`
    /// empty): the bits of a state's number that name its worker, and each worker's offset
    /// in the union ([`Stored::name_from`]).
    unnamed: Option<(u32, Vec<usize>)>,
}

/// The union, packed when every worker's transitions are and every state's place fits.
pub(super) enum AnyStored {
    Packed(Stored<Packed>),
    Wide(Stored<Link>),
}

/// `$body` with `$s` bound to the [`Stored`] inside `$any`, whichever its form.
macro_rules! with_stored {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            AnyStored::Packed($s) => $body,
            AnyStored::Wide($s) => $body,
        }
    };
}
pub(super) use with_stored;

impl AnyStored {
    /// The union of `graphs`, which it consumes. Its components are those of the transitions
    /// that read nothing stale (unless `with_stale`, the seeded defect
    /// `ReductionDefect::FairnessIgnoresStaleReads`): a cycle in which a task keeps reading a
    /// store that a later one has superseded is no execution of any machine (docs/model.md,
    /// "Liveness under weak memory").
    /// `defect`: the seeded defects `FairnessIgnoresStaleReads` (above) and
    /// `WorkersGraphKeepsFirstRowOnly` (of a state two workers explored from, only the first
    /// row is kept).
    pub fn new(mut graphs: Vec<Graph>, defect: Option<ReductionDefect>) -> Self {
        let with_stale = defect == Some(ReductionDefect::FairnessIgnoresStaleReads);
        if graphs.iter().all(|g| g.numbering.is_some()) && !graphs.is_empty() {
            let first_only = defect == Some(ReductionDefect::WorkersGraphKeepsFirstRowOnly);
            let skip_joined = defect == Some(ReductionDefect::WorkersTrimSkipsJoinedRows);
            let twice = defect == Some(ReductionDefect::WorkersTrimSharesTwice);
            let bits = graphs[0].numbering.map_or(0, |n| n.bits);
            let n: usize = graphs.iter().map(|g| g.marks.len()).sum();
            if n <= 1 << TO_BITS && graphs.iter().all(|g| matches!(g.links, Links::Packed(_))) {
                AnyStored::Packed(Stored::numbered(graphs, with_stale, first_only, skip_joined, twice))
            } else {
                for g in &mut graphs {
                    g.links.widen(bits);
                }
                AnyStored::Wide(Stored::numbered(graphs, with_stale, first_only, skip_joined, twice))
            }
        } else {
            AnyStored::Wide(Stored::by_fingerprint(graphs, with_stale))
        }
    }

    /// The strongly connected components of the whole graph that have a transition inside.
    #[cfg(test)]
    pub fn components(&self) -> Vec<Component> {
        with_stored!(self, s => s.components())
    }

    /// The initial state.
    #[cfg(test)]
    pub fn initial(&self) -> Option<u64> {
        with_stored!(self, s => s.initial)
    }

    /// The shortest schedule from the state `from` to any node `goal` admits.
    #[cfg(test)]
    pub fn path_to(&self, from: u64, goal: &dyn Fn(u32) -> bool) -> Option<Vec<u8>> {
        with_stored!(self, s => s.path_to(from, goal))
    }

    /// The fingerprint of node `n`.
    #[cfg(test)]
    pub fn fp(&self, n: u32) -> u64 {
        with_stored!(self, s => s.fp(n))
    }

    /// Whether its transitions are packed.
    #[cfg(test)]
    pub fn packed(&self) -> bool {
        matches!(self, AnyStored::Packed(_))
    }
}

impl<L: Label> Stored<L> {
    /// The workers of one process numbered their states: a node's place in the union is its
    /// worker's offset plus its index there, with no index to build, and its transitions are
    /// the rows the workers recorded, where they recorded them (every worker's in the form
    /// `L`).
    fn numbered(
        mut graphs: Vec<Graph>,
        with_stale: bool,
        first_only: bool,
        trim_skips_joined: bool,
        trim_shares_twice: bool,
    ) -> Self {
        let bits = graphs[0].numbering.map_or(0, |n| n.bits);
        graphs.sort_by_key(|g| g.numbering.map(|n| n.worker));
        let workers = graphs.iter().filter_map(|g| g.numbering).map(|n| n.worker as usize + 1).max().unwrap_or(1);
        let mut offset = vec![0usize; workers];
        let mut n = 0usize;
        for g in &graphs {
            offset[g.numbering.map_or(0, |n| n.worker) as usize] = n;
            n += g.marks.len();
        }
        // A worker's state number (in a row) and a recorded target, as places in the union.
        let place = |id: u32| {
            let (w, i) = Numbering::split(bits, id);
            (offset[w] + i) as u32
        };
        let place_to = |to: u32| {
            let (w, i) = L::split(bits, to);
            (offset[w] + i) as u32
        };
        // The states are named before the union is built (the tests' graphs), or after, from
        // the shared table, and only if a component needs its members' names.
        let named = graphs.iter().all(|g| g.fps.len() == g.marks.len());
        assert!(named || graphs.iter().all(|g| g.fps.is_empty()), "every state named, or none");
        let unnamed = (!named).then(|| (bits, offset.clone()));
        let initial = graphs.iter().find_map(|g| g.initial);
        // The first worker's states are the union's first: its vectors grow to hold the rest.
        let mut marks = std::mem::take(&mut graphs[0].marks);
        marks.reserve_exact(n - marks.len());
        let mut fps = std::mem::take(&mut graphs[0].fps);
        fps.reserve_exact(n - fps.len());
        let mut keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>> = HashMap::default();
        for (pool, g) in graphs.iter_mut().enumerate() {
            if pool > 0 {
                marks.append(&mut g.marks);
                fps.append(&mut g.fps);
                g.fps = Vec::new();
            }
            for (id, k) in std::mem::take(&mut g.keys) {
                keys.entry(u64::from(place(id as u32))).or_default().push(k);
            }
        }
        let mut pools: Vec<Vec<L>> = Vec::with_capacity(graphs.len() + 1);
        pools.extend(graphs.iter_mut().map(|g| L::take(&mut g.links).expect("every worker's transitions in one form")));
        // Two independent halves on two threads: where each state's row is (`slices`, from
        // the workers' rows), and the workers' numbers in the transitions made places in the
        // union.
        let (slices, more) = std::thread::scope(|sc| {
            let remap = sc.spawn(|| {
                for links in pools.iter_mut() {
                    for l in links.iter_mut() {
                        *l = l.with_to(place_to(l.to()));
                    }
                }
            });
            // A node with a row has a slice of length above 0 (`Graph::row` records no empty
            // row).
            let mut slices = vec![Slice::default(); n];
            // Rows of a node that already has one: (node, pool, start, length).
            let mut more: Vec<(u32, u32, u32, u32)> = Vec::new();
            for (pool, g) in graphs.iter_mut().enumerate() {
                let mut begin = 0u32;
                for (&from, &len) in g.rows.iter().zip(&g.lens) {
                    let v = place(from);
                    let s = Slice::new(pool as u32, begin, u32::from(len));
                    if slices[v as usize].len() != 0 {
                        more.push((v, s.pool(), s.start, s.len()));
                    } else {
                        slices[v as usize] = s;
                    }
                    begin += u32::from(len);
                }
                g.rows = Vec::new();
                g.lens = Vec::new();
            }
            remap.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (slices, more)
        });
        let (mut slices, mut more) = (slices, more);
        if first_only {
            more.clear();
        }
        more.sort_unstable();
        let mut joined: Vec<L> = Vec::new();
        let extra = pools.len() as u32;
        for group in more.chunk_by(|a, b| a.0 == b.0) {
            let v = group[0].0 as usize;
            let first = slices[v];
            let start = joined.len() as u32;
            for s in
                std::iter::once(first).chain(group.iter().map(|&(_, pool, start, len)| Slice::new(pool, start, len)))
            {
                joined.extend_from_slice(&pools[s.pool() as usize][s.start as usize..(s.start + s.len()) as usize]);
            }
            slices[v] = Slice::new(extra, start, joined.len() as u32 - start);
        }
        pools.push(joined);
        sort_keys(&mut keys);
        let threads = graphs.len();
        Stored {
            initial,
            marks,
            fps,
            pools,
            slices,
            with_stale,
            keys,
            threads,
            trim_skips_joined,
            trim_shares_twice,
            unnamed,
        }
    }

    /// Whether its states have their fingerprints.
    pub fn named(&self) -> bool {
        self.unnamed.is_none()
    }

    /// Name the states of a union built unnamed from the shared visited table, which keeps
    /// each state's fingerprint beside its number, and which this empties.
    pub fn name_from(&mut self, table: &super::store::Sharded) {
        let Some((bits, offset)) = self.unnamed.take() else { return };
        let mut fps = vec![0u64; self.marks.len()];
        table.drain(0, 1, |fp, number| {
            let (w, i) = Numbering::split(bits, number);
            if let Some(f) = offset.get(w).and_then(|o| fps.get_mut(o + i)) {
                *f = fp;
            }
        });
        self.fps = fps;
    }

    /// Name the members of `comps`, found unnamed ([`Stored::name_from`]).
    pub fn name_members(&self, comps: &mut [Component]) {
        for c in comps {
            c.members = c.nodes.iter().map(|&m| self.fps[m as usize]).collect();
        }
    }

    /// Every transition out of node `v`.
    #[inline]
    fn out(&self, v: u32) -> &[L] {
        let s = self.slices[v as usize];
        &self.pools[s.pool() as usize][s.start as usize..(s.start + s.len()) as usize]
    }

    /// The transitions out of node `v` the components follow.
    #[inline]
    fn row(&self, v: u32) -> impl Iterator<Item = &L> {
        let with_stale = self.with_stale;
        self.out(v).iter().filter(move |l| with_stale || !l.stale())
    }

    /// The strongly connected components, with a transition inside them, of the subgraph of
    /// the nodes `keep` admits: Pearce's one-array variant of Tarjan's algorithm ("A
    /// space-efficient algorithm for finding strongly connected components", 2016),
    /// iterative. A node's one word is 0 until it is visited, then its index or the least
    /// index it reaches on the stack (its low link), and once its component has closed the
    /// component's number, counted down from `u32::MAX - 1`, above every index: an edge into
    /// a closed component then never lowers a low link. The stack holds only the nodes that
    /// are not their component's root. Half the random reads of an index and a low link side
    /// by side (the pass is serial after the workers' search).
    pub fn sccs(&self, keep: impl Fn(u32) -> bool) -> Vec<Component> {
        self.sccs_from(vec![0u32; self.marks.len()], keep)
    }

    /// [`Stored::sccs`] from Tarjan's array `rindex` as [`trim`] leaves it: 0 for a node to
    /// visit, [`super::trim::TRIMMED`] for one on no cycle (a closed component that no component is
    /// numbered with, so no low link or component's transition reaches it).
    fn sccs_from(&self, mut rindex: Vec<u32>, keep: impl Fn(u32) -> bool) -> Vec<Component> {
        let marks = &self.marks;
        let n = marks.len();
        assert!(n < 1 << 31, "the pass numbers components above every index");
        assert_eq!(rindex.len(), n);
        let mut stack: Vec<u32> = Vec::new();
        // The components with a transition inside, by number.
        let mut out: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut component = u32::MAX - 1;
        let mut members: Vec<u32> = Vec::new();
        let mut next = 1u32;
        // (node, next transition of its row to look at, whether it is still its component's
        // root)
        let mut call: Vec<(u32, u32, bool)> = Vec::new();
        for root in 0..n as u32 {
            if rindex[root as usize] != 0 || !keep(root) {
                continue;
            }
            rindex[root as usize] = next;
            next += 1;
            call.push((root, 0, true));
            while let Some(&mut (v, ref mut e, ref mut is_root)) = call.last_mut() {
                if let Some(&l) = self.out(v).get(*e as usize) {
                    *e += 1;
                    let w = l.to();
                    if (l.stale() && !self.with_stale) || !keep(w) {
                        continue;
                    }
                    let rw = rindex[w as usize];
                    if rw == 0 {
                        rindex[w as usize] = next;
                        next += 1;
                        call.push((w, 0, true));
                    } else if rw < rindex[v as usize] {
                        rindex[v as usize] = rw;
                        *is_root = false;
                    }
                    continue;
                }
                let is_root = *is_root;
                call.pop();
                if is_root {
                    let rv = rindex[v as usize];
                    members.clear();
                    members.push(v);
                    while let Some(&t) = stack.last() {
                        if rindex[t as usize] < rv {
                            break;
                        }
                        stack.pop();
                        rindex[t as usize] = component;
                        members.push(t);
                    }
                    rindex[v as usize] = component;
                    // A single state with no transition to itself is left out now.
                    if members.len() > 1 || self.row(v).any(|l| l.to() == v) {
                        out.push((component, members.clone()));
                    }
                    component -= 1;
                } else {
                    stack.push(v);
                }
                if let Some(&mut (u, _, ref mut u_root)) = call.last_mut() {
                    let rv = rindex[v as usize];
                    if rv < rindex[u as usize] {
                        rindex[u as usize] = rv;
                        *u_root = false;
                    }
                }
            }
        }
        let low = |w: u32| rindex[w as usize];
        let mut comps = Vec::new();
        for (c, members) in out {
            let mut moves = 0u32;
            for &m in &members {
                for l in self.row(m) {
                    if low(l.to()) == c && keep(l.to()) {
                        moves |= 1 << l.task();
                    }
                }
            }
            if moves == 0 {
                continue;
            }
            let (mut disabled, mut tasks) = (0u32, 0u32);
            for &m in &members {
                let n = marks.get(m as usize);
                disabled |= !n.enabled & n.tasks;
                tasks |= n.tasks;
            }
            comps.push(Component {
                members: if self.fps.is_empty() {
                    Vec::new()
                } else {
                    members.iter().map(|&m| self.fps[m as usize]).collect()
                },
                moves,
                disabled,
                tasks,
                nodes: members,
            });
        }
        comps
    }

    /// The stuck situations of node `n` (sorted), if it has any.
    pub fn keys_of(&self, n: u32) -> Option<&[CycleKey]> {
        self.keys.get(&u64::from(n)).map(Vec::as_slice)
    }

    /// The strongly connected components of the whole graph that have a transition inside.
    #[cfg(test)]
    pub fn components(&self) -> Vec<Component> {
        self.components_trimmed().0
    }

    /// [`Stored::components`], and how many states were trimmed first: on the workers' graph
    /// the trim runs on their threads ([`trim`]); one worker's graph is not trimmed (0).
    pub fn components_trimmed(&self) -> (Vec<Component>, u64) {
        if self.threads < 2 {
            return (self.sccs(|_| true), 0);
        }
        let skip = |v: u32| self.trim_skips_joined && self.slices[v as usize].pool() == self.pools.len() as u32 - 1;
        // A state with no row has no successor: the peel need not visit it.
        let sink = |v: u32| self.slices[v as usize].len() == 0;
        let succ = |v: u32, f: &mut dyn FnMut(u32)| {
            if !skip(v) {
                self.row(v).for_each(|l| f(l.to()));
            }
        };
        let ((rindex, trimmed), _) = trim_sharing(self.marks.len(), self.threads, self.trim_shares_twice, &sink, succ);
        (self.sccs_from(rindex, |_| true), trimmed)
    }

    /// The node of the state `fp`, if it is stored.
    fn node_of(&self, fp: u64) -> Option<u32> {
        self.fps.iter().position(|&f| f == fp).map(|i| i as u32)
    }

    /// The shortest schedule from the state `from` to any node `goal` admits, over every
    /// stored transition (the choices that take it).
    pub fn path_to(&self, from: u64, goal: &dyn Fn(u32) -> bool) -> Option<Vec<u8>> {
        let from = self.node_of(from)?;
        const UNSEEN: u32 = u32::MAX;
        let mut prev: Vec<(u32, u8)> = vec![(UNSEEN, 0); self.marks.len()];
        prev[from as usize] = (from, 0);
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(v) = queue.pop_front() {
            if goal(v) {
                let mut path = Vec::new();
                let mut at = v;
                while at != from {
                    let (p, c) = prev[at as usize];
                    path.push(c);
                    at = p;
                }
                path.reverse();
                return Some(path);
            }
            for l in self.out(v) {
                if prev[l.to() as usize].0 == UNSEEN {
                    prev[l.to() as usize] = (v, l.choice());
                    queue.push_back(l.to());
                }
            }
        }
        None
    }

    /// The fingerprint of node `n`.
    pub fn fp(&self, n: u32) -> u64 {
        self.fps[n as usize]
    }
}

impl Stored<Link> {
    /// A cluster's graphs, whose transitions name states by fingerprint: one pool, in rows by
    /// counting.
    fn by_fingerprint(graphs: Vec<Graph>, with_stale: bool) -> Self {
        let mut index: HashMap<u64, u32, BuildHasherDefault<Identity>> = HashMap::default();
        // Wide: a cluster's graph is the plain reference the numbered forms are tested against.
        let mut marks = MarksVec::Wide(Vec::new());
        let mut fps: Vec<u64> = Vec::new();
        for g in &graphs {
            for &n in &g.nodes {
                if index.insert(n.fp, marks.len() as u32).is_none() {
                    marks.push(Marks { enabled: n.enabled, tasks: n.tasks });
                    fps.push(n.fp);
                }
            }
        }
        let initial = graphs.iter().find_map(|g| g.initial);
        let known = |e: &Edge| Some((*index.get(&e.from)?, *index.get(&e.to)?));
        let mut slices = vec![Slice::default(); marks.len()];
        let mut lens = vec![0u32; marks.len()];
        graphs.iter().flat_map(|g| &g.edges).filter_map(known).for_each(|(a, _)| lens[a as usize] += 1);
        let mut at = 0u32;
        for (s, &len) in slices.iter_mut().zip(&lens) {
            *s = Slice::new(0, at, len);
            at += len;
        }
        drop(lens);
        let mut pool = vec![Link::default(); at as usize];
        let mut next: Vec<u32> = slices.iter().map(|s| s.start).collect();
        for e in graphs.iter().flat_map(|g| &g.edges) {
            if let Some((a, b)) = known(e) {
                let i = &mut next[a as usize];
                pool[*i as usize] = Link { to: b, task: e.task, choice: e.choice, stale: e.stale };
                *i += 1;
            }
        }
        let mut keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>> = HashMap::default();
        for g in &graphs {
            for &(fp, k) in &g.keys {
                if let Some(&i) = index.get(&fp) {
                    keys.entry(u64::from(i)).or_default().push(k);
                }
            }
        }
        sort_keys(&mut keys);
        let (threads, trim_skips_joined, trim_shares_twice) = (1, false, false);
        Stored {
            initial,
            marks,
            fps,
            pools: vec![pool],
            slices,
            with_stale,
            keys,
            threads,
            trim_skips_joined,
            trim_shares_twice,
            unnamed: None,
        }
    }
}

/// The strongly connected components of the graph that have a transition inside them, and
/// the initial state.
#[cfg(test)]
pub(super) fn components(graphs: &[Graph]) -> (Vec<Component>, Option<u64>) {
    let s = AnyStored::new(graphs.to_vec(), None);
    (s.components(), s.initial())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice keeps its pool (up to 257 of them: 256 workers and the joined rows) and its
    /// length at their limits, and refuses what does not fit rather than mixing the two.
    #[test]
    fn a_slice_keeps_its_pool_and_length_at_their_limits() {
        for (pool, start, len) in [(0, 0, 1), (256, u32::MAX, LEN_MASK), (511, 7, 255), (2, 0, 1 << 20)] {
            let s = Slice::new(pool, start, len);
            assert_eq!((s.pool(), s.start, s.len()), (pool, start, len));
        }
        assert!(std::panic::catch_unwind(|| Slice::new(512, 0, 1)).is_err());
        assert!(std::panic::catch_unwind(|| Slice::new(0, 0, LEN_MASK + 1)).is_err());
    }
}
