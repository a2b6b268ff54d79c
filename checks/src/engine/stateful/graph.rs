//! The state graph the workers (or a cluster's processes) record when a cycle invariant is
//! checked: with more than one worker each records its states (the tasks enabled there) and
//! its transitions (the task of each), in the forms of `links.rs`; a cluster's by fingerprint.
//! Once the search is complete `stored.rs` builds the union and its strongly connected
//! components, and names the numbered workers' states from the shared table only if a
//! component needs their names (`Stored::name_from`; docs/model.md, "Many workers").

use serde::{Deserialize, Serialize};

use super::links::{Link, Links, Marks, MarksVec, Numbering};
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
    /// there and tasks that exist; their fingerprints stay in the shared visited table, beside
    /// their numbers (`fps` is filled only by the tests' graphs, which come named: the union
    /// of unnamed graphs names its states itself, `Stored::name_from`).
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

    /// A state the worker stored: a numbered worker keeps its marks only (its fingerprint is
    /// in the shared table, beside its number); a cluster's worker
    /// keeps the fingerprint too.
    pub fn state(&mut self, fp: u64, m: Marks) {
        if self.numbering.is_some() {
            self.marks.push(m);
        } else {
            self.nodes.push(Node { fp, enabled: m.enabled, tasks: m.tasks });
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stateful::links::{Label, Marks, Packed, TO_BITS};
    use crate::engine::stateful::stored::{components, AnyStored};
    use crate::engine::types::ReductionDefect;

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
        /// A task's bit between 8 and 16 in the later states: the marks widen to four bytes
        /// part way (the transitions still pack).
        MidTasks,
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
        for i in 0..n {
            let high = match shape {
                Shape::ManyTasks => 1 << 17,
                Shape::MidTasks if i >= n / 2 => 1 << 9,
                _ => 0,
            };
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
        let shapes = [Shape::Compact, Shape::Choices, Shape::ManyTasks, Shape::LongRows, Shape::MidTasks];
        let (mut widenings, mut trim_caught) = (0, 0);
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
            let form = |g: &Graph| match g.marks {
                MarksVec::Tiny(_) => 0,
                MarksVec::Narrow(_) => 1,
                MarksVec::Wide(_) => 2,
            };
            // Every worker that stored a state of the second half (there is one) widened to
            // four bytes; a worker that stored none kept two.
            if shape == Shape::MidTasks {
                assert!(numbered.iter().any(|g| form(g) == 1), "round {round}");
            }
            if shape == Shape::Compact {
                assert!(numbered.iter().all(|g| form(g) == 0), "round {round}");
            }
            if shape == Shape::LongRows {
                assert!(numbered.iter().flat_map(|g| &g.lens).all(|&l| l > 0));
            }
            let copies = |g: &[Graph]| g.to_vec();
            // The seeded defect in the trim: where it changes the components (a cycle through
            // a state two workers explored from is lost), the comparison below would fail.
            if workers > 1 {
                let bad = AnyStored::new(copies(&numbered), Some(ReductionDefect::WorkersTrimSkipsJoinedRows));
                trim_caught += usize::from(summary(&bad) != reference(&by_fp, false));
            }
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
        assert!(trim_caught > 100, "the trim's seeded defect changed the components of {trim_caught} graphs");
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
        let bad = AnyStored::new(vec![w0.clone(), w1.clone()], Some(ReductionDefect::WorkersGraphKeepsFirstRowOnly));
        assert_eq!(summary(&bad), vec![], "the seeded defect loses the cycle");
        // The pass trims the two workers' graph on two threads first: nothing is trimmed
        // here (state 3 is reached from the cycle). A trim that skips the joined rows of
        // state 1 takes state 2 for one that nothing enters, and the cycle is lost.
        let AnyStored::Packed(s) = &good else { panic!("packed") };
        assert_eq!(s.components_trimmed().1, 0);
        let bad = AnyStored::new(vec![w0, w1], Some(ReductionDefect::WorkersTrimSkipsJoinedRows));
        assert_eq!(summary(&bad), vec![], "the seeded defect loses the cycle");
        let AnyStored::Packed(s) = &bad else { panic!("packed") };
        assert_eq!(s.components_trimmed().1, 3, "the cycle's states trimmed");
    }

    /// The seeded defect `ReductionDefect::WorkersTrimSharesTwice` reaches the pass's trim
    /// through the union: two workers' graph in which worker 0's initial state enters 4,000
    /// states, each entering a fair cycle of two (one task each way). The union keeps all 4,000
    /// cycles; with the defect, a state the trim's two threads share is peeled by both and
    /// some cycles are lost (the sharing depends on timing: the second thread must ask for work
    /// while the first still peels, so on a loaded machine it is tried again, for up to a
    /// minute, until it happens).
    #[test]
    fn the_trims_shared_peel_defect_loses_cycles_through_the_union() {
        let m = 4_000usize;
        let build = || {
            let mut w0 = Graph::numbered(Numbering::new(0, 2));
            let w1 = Graph::numbered(Numbering::new(1, 2));
            let n0 = |i: usize| Numbering::new(0, 2).number(i).unwrap();
            w0.initial = Some(1);
            for i in 0..1 + 3 * m {
                w0.marks.push(Marks { enabled: 0b11, tasks: 0b11 });
                w0.fps.push(1 + i as u64);
            }
            let link = |to: usize, task: u8| Link { to: n0(to), task, choice: task, stale: false };
            w0.row(n0(0), (0..m).map(|i| link(1 + 3 * i, 0)));
            for i in 0..m {
                let (x, c, d) = (1 + 3 * i, 2 + 3 * i, 3 + 3 * i);
                w0.row(n0(x), [link(c, 0)]);
                w0.row(n0(c), [link(d, 0)]);
                w0.row(n0(d), [link(c, 1)]);
            }
            vec![w0, w1]
        };
        let good = AnyStored::new(build(), None);
        assert_eq!(summary(&good).len(), m, "every cycle is a fair component");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut tries = 0;
        let caught = loop {
            tries += 1;
            if summary(&AnyStored::new(build(), Some(ReductionDefect::WorkersTrimSharesTwice))).len() < m {
                break true;
            }
            if std::time::Instant::now() > until {
                break false;
            }
        };
        assert!(caught, "the seeded defect lost no cycle in {tries} tries");
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

    /// The workers' union is built before its states are named, and named from the shared
    /// table only when a component needs their names: the components and shortest paths are
    /// those of the union built from named graphs, and the table ends empty.
    #[test]
    fn a_union_built_unnamed_is_named_from_the_shared_table() {
        use crate::engine::stateful::stored::with_stored;
        let mut rng = Lcg(11);
        let mut with_components = 0;
        for round in 0..200 {
            let n = 2 + rng.below(40);
            let workers = 1 + rng.below(3) as usize;
            let (_, numbered) = both(&mut rng, n, workers, Shape::Compact);
            let table = crate::engine::stateful::store::Sharded::default();
            let mut unnamed = numbered.clone();
            for g in &mut unnamed {
                let numbering = g.numbering.unwrap();
                for (i, &fp) in g.fps.iter().enumerate() {
                    assert!(table.insert(fp, numbering.number(i).unwrap()));
                }
                g.fps.clear();
            }
            let named = AnyStored::new(numbered, None);
            let mut late = AnyStored::new(unnamed, None);
            let want = summary(&named);
            with_stored!(&mut late, s => {
                assert!(!s.named(), "round {round}");
                let (mut comps, _) = s.components_trimmed();
                assert_eq!(comps.len(), want.len(), "round {round}");
                if !comps.is_empty() {
                    s.name_from(&table);
                    s.name_members(&mut comps);
                    assert_eq!(table.len(), 0, "round {round}: the table is drained");
                    with_components += 1;
                }
            });
            if want.is_empty() {
                continue;
            }
            assert_eq!(summary(&late), want, "round {round}");
            for target in 0..n {
                let goal_fp = 1000 + target * 7;
                let pa = named.path_to(1000, &|v| named.fp(v) == goal_fp).map(|p| p.len());
                let pb = late.path_to(1000, &|v| late.fp(v) == goal_fp).map(|p| p.len());
                assert_eq!(pa, pb, "round {round}: shortest path to {goal_fp}");
            }
        }
        assert!(with_components > 50, "{with_components} graphs had a component");
    }
}
