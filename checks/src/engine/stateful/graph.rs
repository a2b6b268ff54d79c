//! The state graph the workers (or a cluster's processes) record when a cycle invariant is
//! checked, and its strongly connected components: with more than one worker each records its
//! edges (the task of each) and its states (the tasks enabled there), and once the search is
//! complete [`Stored::components`] runs Tarjan over them (docs/model.md, "Many workers"). The
//! fairness test on a component is [`super::fair`]'s; the shortest way into one is
//! [`Stored::path_to`].

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use serde::{Deserialize, Serialize};

use super::store::Identity;
use crate::engine::types::ReductionDefect;
use crate::monitor::online::CycleKey;

/// A stored state as the graph keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Node {
    pub fp: u64,
    /// The tasks enabled there, and the tasks that exist.
    pub enabled: u32,
    pub tasks: u32,
}

/// A transition: from, to, the task that moved and the choice that took it (the same but at a
/// choice point of `memory = "lkmm"`, where the choice is an alternative of the task's memory
/// operation), and whether it read a store a later one had superseded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Edge {
    pub from: u64,
    pub to: u64,
    pub task: u8,
    pub choice: u8,
    pub stale: bool,
}

impl Edge {
    /// A transition by `task`'s own choice that read nothing stale.
    #[cfg(test)]
    pub fn plain(from: u64, to: u64, task: u8) -> Self {
        Edge { from, to, task, choice: task, stale: false }
    }
}

/// A transition out of a state, as the stored graph keeps it: to (a node number), the task that
/// moved, the choice that took it, and whether it read a store a later one had superseded.
/// Eight bytes, against an [`Edge`]'s 24: a worker records its transitions out of a state
/// together, when it leaves the state ([`Graph::row`]), so the source is said once a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Link {
    pub to: u32,
    pub task: u8,
    pub choice: u8,
    pub stale: bool,
}

/// Bits of a [`Packed`] transition's target.
const TO_BITS: u32 = 27;

/// A transition in four bytes: its target in the low 27 bits, the task that moved in the next
/// four, whether it read a superseded store in the top bit. Only a transition whose choice is
/// its task (every transition under `memory = "sc"`) packs; a worker's transitions are packed
/// until one does not fit, and then all of them are widened to [`Link`]s (`Links::push`).
/// The pass holds them packed when every worker's are and the states' places fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Packed(u32);

impl Packed {
    /// `l` with its target `to` (already in packed form), if it packs.
    #[inline]
    fn of(l: Link, to: Option<u32>) -> Option<Self> {
        let to = to?;
        (l.choice == l.task && l.task < 16 && to < 1 << TO_BITS)
            .then(|| Packed(to | u32::from(l.task) << TO_BITS | u32::from(l.stale) << 31))
    }
}

/// What the pass reads of a transition, in either form.
pub(super) trait Label: Copy + Send {
    fn to(self) -> u32;
    fn task(self) -> u8;
    fn choice(self) -> u8;
    fn stale(self) -> bool;
    /// The same transition to `to`.
    fn with_to(self, to: u32) -> Self;
}

impl Label for Link {
    #[inline]
    fn to(self) -> u32 {
        self.to
    }
    #[inline]
    fn task(self) -> u8 {
        self.task
    }
    #[inline]
    fn choice(self) -> u8 {
        self.choice
    }
    #[inline]
    fn stale(self) -> bool {
        self.stale
    }
    #[inline]
    fn with_to(self, to: u32) -> Self {
        Link { to, ..self }
    }
}

impl Label for Packed {
    #[inline]
    fn to(self) -> u32 {
        self.0 & ((1 << TO_BITS) - 1)
    }
    #[inline]
    fn task(self) -> u8 {
        (self.0 >> TO_BITS & 15) as u8
    }
    #[inline]
    fn choice(self) -> u8 {
        self.task()
    }
    #[inline]
    fn stale(self) -> bool {
        self.0 >> 31 != 0
    }
    #[inline]
    fn with_to(self, to: u32) -> Self {
        debug_assert!(to < 1 << TO_BITS);
        Packed(self.0 & !((1 << TO_BITS) - 1) | to)
    }
}

/// A worker's transitions: packed while they all pack, else wide.
#[derive(Debug, Clone)]
pub(super) enum Links {
    Packed(Vec<Packed>),
    Wide(Vec<Link>),
}

impl Default for Links {
    fn default() -> Self {
        Links::Packed(Vec::new())
    }
}

impl Links {
    fn bytes(&self) -> usize {
        match self {
            Links::Packed(v) => v.capacity() * std::mem::size_of::<Packed>(),
            Links::Wide(v) => v.capacity() * std::mem::size_of::<Link>(),
        }
    }

    /// Record `l`, whose target is a state number of workers numbered with `bits`; the first
    /// transition that does not pack widens every one recorded before it.
    #[inline]
    fn push(&mut self, l: Link, bits: u32) {
        if let Links::Packed(v) = self {
            match Packed::of(l, Numbering::pack(bits, l.to)) {
                Some(p) => return v.push(p),
                None => self.widen(bits),
            }
        }
        if let Links::Wide(v) = self {
            v.push(l);
        }
    }

    /// The transitions as [`Link`]s, their targets state numbers.
    fn widen(&mut self, bits: u32) {
        if let Links::Packed(v) = self {
            let wide = v
                .iter()
                .map(|&p| Link {
                    to: Numbering::unpack(bits, p.to()),
                    task: p.task(),
                    choice: p.task(),
                    stale: p.stale(),
                })
                .collect();
            *self = Links::Wide(wide);
        }
    }
}

/// What the fair-cycle test needs of a state: the tasks enabled there, and the tasks that
/// exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Marks {
    pub enabled: u32,
    pub tasks: u32,
}

/// States' [`Marks`], in the order of their numbers: both masks in four bytes while every
/// task's bit fits in 16, else eight (all of them widened when the first does not fit).
#[derive(Debug, Clone)]
pub(super) enum MarksVec {
    Narrow(Vec<u32>),
    Wide(Vec<Marks>),
}

impl Default for MarksVec {
    fn default() -> Self {
        MarksVec::Narrow(Vec::new())
    }
}

impl MarksVec {
    pub fn len(&self) -> usize {
        match self {
            MarksVec::Narrow(v) => v.len(),
            MarksVec::Wide(v) => v.len(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            MarksVec::Narrow(v) => v.capacity() * std::mem::size_of::<u32>(),
            MarksVec::Wide(v) => v.capacity() * std::mem::size_of::<Marks>(),
        }
    }

    #[inline]
    pub fn push(&mut self, m: Marks) {
        if let MarksVec::Narrow(v) = self {
            if (m.enabled | m.tasks) >> 16 == 0 {
                return v.push(m.enabled | m.tasks << 16);
            }
            self.widen();
        }
        if let MarksVec::Wide(v) = self {
            v.push(m);
        }
    }

    fn widen(&mut self) {
        if let MarksVec::Narrow(v) = self {
            *self = MarksVec::Wide(v.iter().map(|&x| Marks { enabled: x & 0xffff, tasks: x >> 16 }).collect());
        }
    }

    /// The marks of the `i`-th state.
    #[inline]
    pub fn get(&self, i: usize) -> Marks {
        match self {
            MarksVec::Narrow(v) => Marks { enabled: v[i] & 0xffff, tasks: v[i] >> 16 },
            MarksVec::Wide(v) => v[i],
        }
    }

    /// `other`'s marks after these (`other` is left empty).
    fn append(&mut self, other: &mut MarksVec) {
        if let (MarksVec::Narrow(a), MarksVec::Narrow(b)) = (&mut *self, &mut *other) {
            a.append(b);
        } else {
            self.widen();
            other.widen();
            if let (MarksVec::Wide(a), MarksVec::Wide(b)) = (&mut *self, &mut *other) {
                a.append(b);
            }
        }
        *other = MarksVec::default();
    }

    fn reserve_exact(&mut self, n: usize) {
        match self {
            MarksVec::Narrow(v) => v.reserve_exact(n),
            MarksVec::Wide(v) => v.reserve_exact(n),
        }
    }
}

/// How the workers of one process number the states they store: worker `w`'s `i`-th state is
/// `w << (32 - bits) | i`, the number the shared visited table keeps beside its fingerprint
/// (so a worker that reaches a state another stored knows its number without asking it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Numbering {
    pub worker: u32,
    /// Bits of the worker's index: enough for every worker of the search.
    pub bits: u32,
}

impl Numbering {
    pub fn new(worker: usize, workers: usize) -> Self {
        let bits = usize::BITS - (workers.max(1) - 1).leading_zeros();
        Numbering { worker: worker as u32, bits }
    }

    /// The number of this worker's `i`-th state, if it has one.
    #[inline]
    pub fn number(&self, i: usize) -> Option<u32> {
        let local = 32 - self.bits;
        (local == 32 || (i as u64) < 1u64 << local).then(|| {
            if self.bits == 0 {
                i as u32
            } else {
                self.worker << local | i as u32
            }
        })
    }

    /// The worker that numbered `n`, and its index among that worker's states.
    #[inline]
    pub fn split(bits: u32, n: u32) -> (usize, usize) {
        if bits == 0 {
            (0, n as usize)
        } else {
            let local = 32 - bits;
            ((n >> local) as usize, (n & ((1u32 << local) - 1)) as usize)
        }
    }

    /// The state number `n` in a [`Packed`] transition's 27 bits (the worker's index in the
    /// top `bits` of them), if its index fits.
    #[inline]
    fn pack(bits: u32, n: u32) -> Option<u32> {
        let (w, i) = Self::split(bits, n);
        let local = TO_BITS.checked_sub(bits)?;
        ((i as u64) < 1u64 << local).then(|| ((w as u32) << local) | i as u32)
    }

    /// The packed form's worker and index.
    #[inline]
    fn split_packed(bits: u32, p: u32) -> (usize, usize) {
        let local = TO_BITS - bits;
        ((p >> local) as usize, (p & ((1u32 << local) - 1)) as usize)
    }

    /// The state number of the packed form `p`.
    #[inline]
    fn unpack(bits: u32, p: u32) -> u32 {
        let (w, i) = Self::split_packed(bits, p);
        if bits == 0 {
            i as u32
        } else {
            (w as u32) << (32 - bits) | i as u32
        }
    }
}

/// A worker's part of the state graph (kept only when `progress` or a lasso invariant is
/// checked). The workers of one process record transitions between numbered states
/// (`links`); a cluster's, whose states other processes own and number, by fingerprint
/// (`edges`).
#[derive(Debug, Default, Clone)]
pub(super) struct Graph {
    /// The initial state (recorded by the worker that stored it).
    pub initial: Option<u64>,
    /// Every state a cluster's worker stored: fingerprint, tasks enabled there, tasks that
    /// exist.
    pub nodes: Vec<Node>,
    /// Every state a numbered worker stored, in the order of their numbers: tasks enabled
    /// there and tasks that exist; their fingerprints are in the shared visited table during
    /// the search, and come to `fps` after it ([`name_states`]).
    pub marks: MarksVec,
    pub fps: Vec<u64>,
    /// Every transition the worker took, by fingerprint (a cluster's worker).
    pub edges: Vec<Edge>,
    /// Every transition the worker took, by number (when `numbering` is set), in rows: row
    /// `r` is the transitions out of state `rows[r]`, the `lens[r]` after the rows before it
    /// (a state with more than 255 has several rows).
    pub links: Links,
    pub rows: Vec<u32>,
    pub lens: Vec<u8>,
    pub numbering: Option<Numbering>,
    /// The stuck situations of the states it stored, for the lasso invariants
    /// ([`crate::monitor::online::Online::cycle_keys`]; states with none are not listed): by
    /// fingerprint, or by number when `numbering` is set.
    pub keys: Vec<(u64, CycleKey)>,
}

impl Graph {
    /// The graph of one of the workers of one process.
    pub fn numbered(numbering: Numbering) -> Self {
        Graph { numbering: Some(numbering), ..Graph::default() }
    }

    /// The transitions out of the state numbered `from` that the worker took (a state has one
    /// row per worker that explored from it: the one that stored it, and any it gave
    /// transitions to).
    pub fn row(&mut self, from: u32, links: impl IntoIterator<Item = Link>) {
        let bits = self.numbering.map_or(0, |n| n.bits);
        let mut len = 0u8;
        for l in links {
            if len == u8::MAX {
                self.rows.push(from);
                self.lens.push(len);
                len = 0;
            }
            self.links.push(l, bits);
            len += 1;
        }
        if len > 0 {
            self.rows.push(from);
            self.lens.push(len);
        }
    }

    /// Bytes its records take.
    pub fn bytes(&self) -> u64 {
        (self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.marks.bytes()
            + self.fps.capacity() * std::mem::size_of::<u64>()
            + self.edges.capacity() * std::mem::size_of::<Edge>()
            + self.links.bytes()
            + self.rows.capacity() * std::mem::size_of::<u32>()
            + self.lens.capacity()
            + self.keys.capacity() * std::mem::size_of::<(u64, CycleKey)>()) as u64
    }
}

/// The numbered workers' states get their fingerprints (`Graph::fps`) from the shared visited
/// table, which stores each with its number, and which this empties shard by shard, on
/// `threads` threads. The pairs go through buckets by number first, so that each part of
/// `fps` is written while the table shrinks, and the two are never both resident in full.
pub(super) fn name_states(graphs: &mut [&mut Graph], table: &super::store::Sharded, threads: usize) {
    const BUCKETS: usize = 64;
    let threads = threads.max(1);
    let Some(bits) = graphs.first().and_then(|g| g.numbering).map(|n| n.bits) else { return };
    let workers = graphs.iter().filter_map(|g| g.numbering).map(|n| n.worker as usize + 1).max().unwrap_or(1);
    // The size of a worker's buckets, by the worker's index.
    let mut size: Vec<Option<usize>> = vec![None; workers];
    for g in graphs.iter() {
        if let Some(n) = g.numbering {
            size[n.worker as usize] = Some(g.marks.len().div_ceil(BUCKETS).max(1));
        }
    }
    // Each thread's (number, fingerprint) pairs in three words, by worker and bucket.
    let size = &size;
    let parts: Vec<Vec<Vec<[u32; 3]>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|part| {
                sc.spawn(move || {
                    let room = |b: usize| size[b / BUCKETS].map_or(0, |s| s / threads + s / 16 + 16);
                    let mut buckets: Vec<Vec<[u32; 3]>> =
                        (0..workers * BUCKETS).map(|b| Vec::with_capacity(room(b))).collect();
                    table.drain(part, threads, |fp, number| {
                        let (w, i) = Numbering::split(bits, number);
                        if let Some(&Some(s)) = size.get(w) {
                            buckets[w * BUCKETS + (i / s).min(BUCKETS - 1)].push([
                                number,
                                fp as u32,
                                (fp >> 32) as u32,
                            ]);
                        }
                    });
                    buckets
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    // Each worker's fingerprints, bucket by bucket (one thread a worker's graph).
    let parts = std::sync::Mutex::new(parts);
    std::thread::scope(|sc| {
        for g in graphs.iter_mut() {
            let parts = &parts;
            sc.spawn(move || {
                let Some(w) = g.numbering.map(|n| n.worker as usize) else { return };
                g.fps = vec![0; g.marks.len()];
                for b in w * BUCKETS..(w + 1) * BUCKETS {
                    for t in 0..threads {
                        let bucket = std::mem::take(&mut parts.lock().unwrap_or_else(|e| e.into_inner())[t][b]);
                        for &[number, lo, hi] in &bucket {
                            let (_, i) = Numbering::split(bits, number);
                            if let Some(f) = g.fps.get_mut(i) {
                                *f = u64::from(hi) << 32 | u64::from(lo);
                            }
                        }
                    }
                }
            });
        }
    });
}

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

/// Where a node's transitions are in a [`Stored`] graph: pool, start, length.
#[derive(Debug, Clone, Copy, Default)]
struct Slice {
    pool: u32,
    start: u32,
    len: u32,
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
            let bits = graphs[0].numbering.map_or(0, |n| n.bits);
            let n: usize = graphs.iter().map(|g| g.marks.len()).sum();
            if n <= 1 << TO_BITS && graphs.iter().all(|g| matches!(g.links, Links::Packed(_))) {
                let take = |g: &mut Graph| match std::mem::take(&mut g.links) {
                    Links::Packed(v) => v,
                    Links::Wide(_) => unreachable!("every worker's transitions are packed"),
                };
                let place = |offset: &[usize], p: u32| {
                    let (w, i) = Numbering::split_packed(bits, p);
                    (offset[w] + i) as u32
                };
                AnyStored::Packed(Stored::numbered(graphs, with_stale, first_only, take, place))
            } else {
                for g in &mut graphs {
                    g.links.widen(bits);
                }
                let take = |g: &mut Graph| match std::mem::take(&mut g.links) {
                    Links::Wide(v) => v,
                    Links::Packed(_) => unreachable!("every worker's transitions are widened"),
                };
                let place = |offset: &[usize], n: u32| {
                    let (w, i) = Numbering::split(bits, n);
                    (offset[w] + i) as u32
                };
                AnyStored::Wide(Stored::numbered(graphs, with_stale, first_only, take, place))
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
    /// worker's offset plus its index there (`place`, from a target as `take` gives the
    /// worker's transitions), with no index to build, and its transitions are the rows the
    /// workers recorded, where they recorded them.
    fn numbered(
        mut graphs: Vec<Graph>,
        with_stale: bool,
        first_only: bool,
        take: impl Fn(&mut Graph) -> Vec<L>,
        place_to: impl Fn(&[usize], u32) -> u32 + Sync,
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
        let place = |id: u32| {
            let (w, i) = Numbering::split(bits, id);
            (offset[w] + i) as u32
        };
        let initial = graphs.iter().find_map(|g| g.initial);
        // The first worker's states are the union's first: its vectors grow to hold the rest.
        let mut marks = std::mem::take(&mut graphs[0].marks);
        marks.reserve_exact(n - marks.len());
        let mut fps = std::mem::take(&mut graphs[0].fps);
        fps.resize(marks.len(), 0);
        fps.reserve_exact(n - fps.len());
        let mut keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>> = HashMap::default();
        for (pool, g) in graphs.iter_mut().enumerate() {
            if pool > 0 {
                let stored = g.marks.len();
                marks.append(&mut g.marks);
                g.fps.resize(stored, 0);
                fps.append(&mut g.fps);
                g.fps = Vec::new();
            }
            for (id, k) in std::mem::take(&mut g.keys) {
                keys.entry(u64::from(place(id as u32))).or_default().push(k);
            }
        }
        let mut pools: Vec<Vec<L>> = Vec::with_capacity(graphs.len() + 1);
        pools.extend(graphs.iter_mut().map(take));
        // Two independent halves on two threads: where each state's row is (`slices`, from
        // the workers' rows), and the workers' numbers in the transitions made places in the
        // union.
        let (slices, seen, more) = std::thread::scope(|sc| {
            let offset = &offset;
            let remap = sc.spawn(|| {
                for links in pools.iter_mut() {
                    for l in links.iter_mut() {
                        *l = l.with_to(place_to(offset, l.to()));
                    }
                }
            });
            let mut slices = vec![Slice::default(); n];
            let mut seen = vec![false; n];
            // Rows of a node that already has one: (node, pool, start, length).
            let mut more: Vec<(u32, u32, u32, u32)> = Vec::new();
            for (pool, g) in graphs.iter_mut().enumerate() {
                let mut begin = 0u32;
                for (&from, &len) in g.rows.iter().zip(&g.lens) {
                    let v = place(from);
                    let s = Slice { pool: pool as u32, start: begin, len: u32::from(len) };
                    if std::mem::replace(&mut seen[v as usize], true) {
                        more.push((v, s.pool, s.start, s.len));
                    } else {
                        slices[v as usize] = s;
                    }
                    begin += u32::from(len);
                }
                g.rows = Vec::new();
                g.lens = Vec::new();
            }
            remap.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (slices, seen, more)
        });
        let (mut slices, mut more) = (slices, more);
        drop(seen);
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
            for s in std::iter::once(first).chain(group.iter().map(|&(_, pool, start, len)| Slice { pool, start, len }))
            {
                joined.extend_from_slice(&pools[s.pool as usize][s.start as usize..(s.start + s.len) as usize]);
            }
            slices[v] = Slice { pool: extra, start, len: joined.len() as u32 - start };
        }
        pools.push(joined);
        sort_keys(&mut keys);
        Stored { initial, marks, fps, pools, slices, with_stale, keys }
    }

    /// Every transition out of node `v`.
    #[inline]
    fn out(&self, v: u32) -> &[L] {
        let s = self.slices[v as usize];
        &self.pools[s.pool as usize][s.start as usize..(s.start + s.len) as usize]
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
        let marks = &self.marks;
        let n = marks.len();
        assert!(n < 1 << 31, "the pass numbers components above every index");
        let mut rindex = vec![0u32; n];
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
                members: members.iter().map(|&m| self.fps[m as usize]).collect(),
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
    pub fn components(&self) -> Vec<Component> {
        self.sccs(|_| true)
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
        graphs.iter().flat_map(|g| &g.edges).filter_map(known).for_each(|(a, _)| slices[a as usize].len += 1);
        let mut at = 0u32;
        for s in &mut slices {
            s.start = at;
            at += s.len;
        }
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
        Stored { initial, marks, fps, pools: vec![pool], slices, with_stale, keys }
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

    fn nodes(v: &[(u64, u32, u32)]) -> Vec<Node> {
        v.iter().map(|&(fp, enabled, tasks)| Node { fp, enabled, tasks }).collect()
    }
    fn edges(v: &[(u64, u64, u8)]) -> Vec<Edge> {
        v.iter().map(|&(from, to, task)| Edge::plain(from, to, task)).collect()
    }

    /// Two components with a transition inside (a 2-cycle and a self-loop), a transient state,
    /// and the shortest path to the self-loop.
    #[test]
    fn components_and_paths_of_a_small_graph() {
        let g = Graph {
            initial: Some(1),
            nodes: nodes(&[(1, 0b11, 0b11), (2, 0b01, 0b11), (3, 0b10, 0b11), (4, 0b01, 0b11)]),
            edges: edges(&[(1, 2, 0), (2, 3, 0), (3, 2, 1), (1, 4, 1), (4, 4, 0)]),
            ..Graph::default()
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
        let s = AnyStored::new(vec![g], None);
        assert_eq!(s.path_to(1, &|n| s.fp(n) == 4), Some(vec![1]));
        assert_eq!(s.path_to(1, &|n| s.fp(n) == 3), Some(vec![0, 0]));
        assert_eq!(s.path_to(2, &|n| s.fp(n) == 1), None);
    }

    /// A small pseudo-random generator (the tests need no seed control beyond a fixed start).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// The components of a graph as sets: sorted members, moves, disabled, tasks.
    fn summary(s: &AnyStored) -> Vec<(Vec<u64>, u32, u32, u32)> {
        let mut v: Vec<_> = s
            .components()
            .into_iter()
            .map(|mut c| {
                c.members.sort_unstable();
                (c.members, c.moves, c.disabled, c.tasks)
            })
            .collect();
        v.sort();
        v
    }

    /// One random graph, as a cluster records it (by fingerprint) and as `workers` workers of
    /// one process do (numbered, in rows; some states explored from by two workers, as when
    /// one gives another a job there).
    /// What of a random graph does not fit the compact forms.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Shape {
        /// Everything packs.
        Compact,
        /// Some transitions' choice is not their task (under `lkmm`): the transitions widen.
        Choices,
        /// A task's bit beyond 16: the marks widen, and the transitions of that task.
        ManyTasks,
        /// A state with more than 255 transitions: its row is cut in several.
        LongRows,
    }

    /// One random graph, as a cluster records it (by fingerprint) and as `workers` workers of
    /// one process do (numbered, in rows; some states explored from by two workers, as when
    /// one gives another a job there).
    fn both(rng: &mut Lcg, n: u64, workers: usize, shape: Shape) -> (Graph, Vec<Graph>) {
        let fp = |i: u64| 1000 + i * 7;
        let mut by_fp = Graph { initial: Some(fp(0)), ..Graph::default() };
        let mut numbered: Vec<Graph> = (0..workers).map(|w| Graph::numbered(Numbering::new(w, workers))).collect();
        // Who stores each state, and its number.
        let mut number = Vec::new();
        let high = if shape == Shape::ManyTasks { 1 << 17 } else { 0 };
        for i in 0..n {
            let w = if i == 0 { 0 } else { rng.below(workers as u64) as usize };
            let node = Node { fp: fp(i), enabled: rng.below(4) as u32 | 1, tasks: 0b11 | high };
            by_fp.nodes.push(node);
            let g = &mut numbered[w];
            number.push(g.numbering.unwrap().number(g.marks.len()).unwrap());
            g.marks.push(Marks { enabled: node.enabled, tasks: node.tasks });
            g.fps.push(node.fp);
        }
        numbered[0].initial = Some(fp(0));
        for i in 0..n {
            let mut links = Vec::new();
            let many = if shape == Shape::LongRows && rng.below(8) == 0 { 256 + rng.below(400) } else { rng.below(4) };
            for _ in 0..many {
                let j = rng.below(n);
                let task = if shape == Shape::ManyTasks && rng.below(8) == 0 { 17 } else { rng.below(2) as u8 };
                let choice = if shape == Shape::Choices && rng.below(4) == 0 { task + 2 } else { task };
                let stale = rng.below(8) == 0;
                by_fp.edges.push(Edge { from: fp(i), to: fp(j), task, choice, stale });
                links.push(Link { to: number[j as usize], task, choice, stale });
            }
            // The rows: the first part by one worker, the rest (if any) by another.
            let cut = rng.below(links.len() as u64 + 1) as usize;
            let (a, b) = (rng.below(workers as u64) as usize, rng.below(workers as u64) as usize);
            numbered[a].row(number[i as usize], links[..cut].iter().copied());
            numbered[b].row(number[i as usize], links[cut..].iter().copied());
        }
        (by_fp, numbered)
    }

    /// The components as [`summary`] gives them, found without Tarjan: two states are in one
    /// component when each reaches the other (a breadth-first search from every state).
    fn reference(g: &Graph, with_stale: bool) -> Vec<(Vec<u64>, u32, u32, u32)> {
        let edges: Vec<&Edge> = g.edges.iter().filter(|e| with_stale || !e.stale).collect();
        let fps: Vec<u64> = g.nodes.iter().map(|n| n.fp).collect();
        let reach = |from: u64| {
            let mut seen = std::collections::BTreeSet::from([from]);
            let mut todo = vec![from];
            while let Some(v) = todo.pop() {
                for e in edges.iter().filter(|e| e.from == v) {
                    if seen.insert(e.to) {
                        todo.push(e.to);
                    }
                }
            }
            seen
        };
        let reaches: Vec<_> = fps.iter().map(|&f| reach(f)).collect();
        let mut out = Vec::new();
        let mut done = std::collections::BTreeSet::new();
        for (i, &f) in fps.iter().enumerate() {
            if done.contains(&f) {
                continue;
            }
            let class: Vec<u64> = fps
                .iter()
                .enumerate()
                .filter(|&(j, &h)| reaches[i].contains(&h) && reaches[j].contains(&f))
                .map(|(_, &h)| h)
                .collect();
            done.extend(class.iter().copied());
            let inside = |e: &&&Edge| class.contains(&e.from) && class.contains(&e.to);
            let moves = edges.iter().filter(inside).fold(0u32, |m, e| m | 1 << e.task);
            if moves == 0 {
                continue;
            }
            let (mut disabled, mut tasks) = (0, 0);
            for n in g.nodes.iter().filter(|n| class.contains(&n.fp)) {
                disabled |= !n.enabled & n.tasks;
                tasks |= n.tasks;
            }
            let mut members = class.clone();
            members.sort_unstable();
            out.push((members, moves, disabled, tasks));
        }
        out.sort();
        out
    }

    /// The workers of one process record numbered rows, a cluster fingerprinted edges: both
    /// give the same components (with and without the stale transitions), stuck situations
    /// and shortest paths, on graphs where states have rows in two workers.
    #[test]
    fn numbered_rows_and_fingerprinted_edges_give_the_same_graph() {
        let mut rng = Lcg(7);
        let shapes = [Shape::Compact, Shape::Choices, Shape::ManyTasks, Shape::LongRows];
        let mut widenings = 0;
        for round in 0..400 {
            let n = 2 + rng.below(40);
            let workers = 1 + rng.below(3) as usize;
            let shape = shapes[round % shapes.len()];
            let (by_fp, numbered) = both(&mut rng, n, workers, shape);
            let widened = numbered.iter().any(|g| matches!(g.links, Links::Wide(_)));
            assert!(
                !widened || [Shape::Choices, Shape::ManyTasks].contains(&shape),
                "round {round}: only a choice that is not its task, or a task beyond 16, widens"
            );
            widenings += usize::from(widened);
            let wide_marks = numbered.iter().any(|g| matches!(g.marks, MarksVec::Wide(_)));
            assert_eq!(wide_marks, shape == Shape::ManyTasks, "round {round}");
            if shape == Shape::LongRows {
                assert!(numbered.iter().flat_map(|g| &g.lens).all(|&l| l > 0));
            }
            let copies = |g: &[Graph]| g.to_vec();
            for defect in [None, Some(ReductionDefect::FairnessIgnoresStaleReads)] {
                let a = AnyStored::new(vec![by_fp.clone()], defect);
                let b = AnyStored::new(copies(&numbered), defect);
                let with_stale = defect.is_some();
                assert_eq!(summary(&a), reference(&by_fp, with_stale), "round {round}: Tarjan against the closure");
                assert_eq!(b.packed(), !widened, "round {round}: packed unless a transition did not pack");
                assert_eq!(summary(&a), summary(&b), "round {round}, {workers} workers, {defect:?}");
                for target in 0..n {
                    let goal_fp = 1000 + target * 7;
                    let pa = a.path_to(1000, &|v| a.fp(v) == goal_fp).map(|p| p.len());
                    let pb = b.path_to(1000, &|v| b.fp(v) == goal_fp).map(|p| p.len());
                    assert_eq!(pa, pb, "round {round}: shortest path to {goal_fp}");
                }
            }
        }
        assert!(widenings > 50, "the wide form was tested ({widenings} graphs)");
    }

    /// A cycle through a state two workers explored from: one recorded the transition into the
    /// cycle, the other the one that closes it. The seeded defect
    /// `ReductionDefect::WorkersGraphKeepsFirstRowOnly` keeps only the first worker's row there
    /// and misses the cycle; the union keeps both.
    #[test]
    fn a_cycle_through_a_state_two_workers_explored_from_is_kept() {
        let mut w0 = Graph::numbered(Numbering::new(0, 2));
        let mut w1 = Graph::numbered(Numbering::new(1, 2));
        let n0 = |i| Numbering::new(0, 2).number(i).unwrap();
        let n1 = |i| Numbering::new(1, 2).number(i).unwrap();
        // State 1 (worker 0's first) and state 2 (worker 1's first).
        w0.initial = Some(1);
        for (g, fp) in [(&mut w0, 1), (&mut w1, 2)] {
            g.marks.push(Marks { enabled: 0b11, tasks: 0b11 });
            g.fps.push(fp);
        }
        // Worker 0 leaves state 1 by task 1 to a self-loop state... recorded first; worker 1
        // was given task 0's transition out of state 1, into state 2, which returns by task 1.
        w0.marks.push(Marks { enabled: 0b11, tasks: 0b11 });
        w0.fps.push(3);
        w0.row(n0(0), [Link { to: n0(1), task: 1, choice: 1, stale: false }]);
        w1.row(n0(0), [Link { to: n1(0), task: 0, choice: 0, stale: false }]);
        w1.row(n1(0), [Link { to: n0(0), task: 1, choice: 1, stale: false }]);
        let good = AnyStored::new(vec![w0.clone(), w1.clone()], None);
        assert_eq!(summary(&good), vec![(vec![1, 2], 0b11, 0, 0b11)]);
        let bad = AnyStored::new(vec![w0, w1], Some(ReductionDefect::WorkersGraphKeepsFirstRowOnly));
        assert_eq!(summary(&bad), vec![], "the seeded defect loses the cycle");
    }

    /// A state number packs while its index fits in the 27 bits less the worker's: with two
    /// workers, 2^26 states each. Packed and unpacked, it is the same number.
    #[test]
    fn a_state_number_packs_while_its_index_fits() {
        for workers in [1usize, 2, 3, 8] {
            let bits = Numbering::new(0, workers).bits;
            let last = (1usize << (TO_BITS - bits)) - 1;
            for w in 0..workers {
                let numbering = Numbering::new(w, workers);
                for i in [0, 1, last] {
                    let n = numbering.number(i).unwrap();
                    let p = Numbering::pack(bits, n).expect("fits");
                    assert!(p < 1 << TO_BITS);
                    assert_eq!(Numbering::unpack(bits, p), n, "{workers} workers, worker {w}, index {i}");
                }
                if let Some(n) = numbering.number(last + 1) {
                    assert_eq!(Numbering::pack(bits, n), None, "{workers} workers: index {} does not fit", last + 1);
                }
            }
        }
        let l = Link { to: 5, task: 15, choice: 15, stale: true };
        let p = Packed::of(l, Some(5)).unwrap();
        assert_eq!((p.to(), p.task(), p.choice(), p.stale()), (5, 15, 15, true));
        assert_eq!(Packed::of(Link { task: 16, choice: 16, ..l }, Some(5)), None, "a task beyond the sixteenth");
        assert_eq!(p.with_to(7).to(), 7);
        assert_eq!(Packed::of(Link { choice: 3, ..l }, Some(5)), None, "a choice that is not its task");
        // A worker's transitions widen at the first that does not pack, and keep their targets.
        let mut g = Graph::numbered(Numbering::new(1, 2));
        let far = Numbering::new(1, 2).number(1 << 26).unwrap();
        g.row(0, [Link { to: 3, task: 1, choice: 1, stale: false }, Link { to: far, task: 0, choice: 0, stale: true }]);
        let Links::Wide(v) = &g.links else { panic!("a target beyond 2^26 widens") };
        assert_eq!(v.iter().map(|l| l.to).collect::<Vec<_>>(), vec![3, far]);
    }

    /// The states' fingerprints come from the shared table, which ends empty: every number
    /// gets its fingerprint, on one thread or more.
    #[test]
    fn states_are_named_from_the_shared_table() {
        for threads in [1, 2, 3] {
            let table = crate::engine::stateful::store::Sharded::default();
            let mut graphs: Vec<Graph> = (0..2).map(|w| Graph::numbered(Numbering::new(w, 2))).collect();
            let mut want = [Vec::new(), Vec::new()];
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for i in 0..5000usize {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let w = i % 3 % 2;
                let g = &mut graphs[w];
                let n = g.numbering.unwrap().number(g.marks.len()).unwrap();
                g.marks.push(Marks { enabled: 1, tasks: 1 });
                let fp = if i == 7 { 0 } else { x };
                assert!(table.insert(fp, n));
                want[w].push(fp);
            }
            let mut refs: Vec<&mut Graph> = graphs.iter_mut().collect();
            name_states(&mut refs, &table, threads);
            assert_eq!(table.len(), 0, "the table is drained");
            for w in 0..2 {
                assert_eq!(graphs[w].fps, want[w], "worker {w}, {threads} threads");
            }
        }
    }
}
