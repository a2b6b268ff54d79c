//! The state graph the workers (or a cluster's processes) record when a cycle invariant is
//! checked, and its strongly connected components: with more than one worker each records its
//! edges (the task of each) and its states (the tasks enabled there), and once the search is
//! complete [`Stored::components`] runs Tarjan over them (docs/model.md, "Many workers"). The
//! fairness test on a component is [`super::fair`]'s; the shortest way into one is
//! [`path_to`].

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use serde::{Deserialize, Serialize};

use super::store::Identity;
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
/// checked).
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// The initial state (recorded by the worker that stored it).
    pub initial: Option<u64>,
    /// Every state the worker stored: fingerprint, tasks enabled there, tasks that exist.
    pub nodes: Vec<Node>,
    /// Every transition the worker took: from, to, the task that moved.
    pub edges: Vec<Edge>,
    /// The stuck situations of the states it stored, for the lasso invariants
    /// ([`crate::monitor::online::Online::cycle_keys`]; states with none are not listed).
    pub keys: Vec<(u64, CycleKey)>,
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

impl Component {}

/// The union of the workers' graphs, with its edges in compressed rows.
pub(super) struct Stored {
    /// The initial state.
    pub initial: Option<u64>,
    nodes: Vec<Node>,
    /// Node `n`'s edges are `edges[start[n]..start[n + 1]]`: (from, to, task).
    start: Vec<u32>,
    edges: Vec<(u32, u32, u8)>,
    /// Each node's stuck situations (sorted).
    keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>>,
}

impl Stored {
    /// The union of `graphs`. Its components are those of the transitions that read nothing
    /// stale (unless `with_stale`, the seeded defect `ReductionDefect::FairnessIgnoresStaleReads`):
    /// a cycle in which a task keeps reading a store that a later one has superseded is no
    /// execution of any machine (docs/model.md, "Liveness under weak memory").
    pub fn new(graphs: &[Graph], with_stale: bool) -> Self {
        let mut index: HashMap<u64, u32, BuildHasherDefault<Identity>> = HashMap::default();
        let mut nodes: Vec<Node> = Vec::new();
        for g in graphs {
            for &n in &g.nodes {
                if index.insert(n.fp, nodes.len() as u32).is_none() {
                    nodes.push(n);
                }
            }
        }
        let initial = graphs.iter().find_map(|g| g.initial);
        let n = nodes.len();
        let mut start = vec![0u32; n + 1];
        let mut edges: Vec<(u32, u32, u8)> = Vec::new();
        for g in graphs {
            for e in g.edges.iter().filter(|e| with_stale || !e.stale) {
                if let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) {
                    edges.push((a, b, e.task));
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
        let mut keys: HashMap<u64, Vec<CycleKey>, BuildHasherDefault<Identity>> = HashMap::default();
        for g in graphs {
            for &(fp, k) in &g.keys {
                if let Some(&i) = index.get(&fp) {
                    keys.entry(u64::from(i)).or_default().push(k);
                }
            }
        }
        for v in keys.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        Stored { initial, nodes, start, edges, keys }
    }

    /// The strongly connected components, with a transition inside them, of the subgraph of
    /// the nodes `keep` admits (an iterative Tarjan).
    pub fn sccs(&self, keep: &dyn Fn(u32) -> bool) -> Vec<Component> {
        let (nodes, start, edges) = (&self.nodes, &self.start, &self.edges);
        let n = nodes.len();
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
            if idx[root as usize] != UNSEEN || !keep(root) {
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
                    if !keep(w) {
                        continue;
                    }
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
                let n = nodes[m as usize];
                disabled |= !n.enabled & n.tasks;
                tasks |= n.tasks;
            }
            comps.push(Component {
                members: members.iter().map(|&m| nodes[m as usize].fp).collect(),
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
        self.sccs(&|_| true)
    }
}

/// The strongly connected components of the graph that have a transition inside them, and
/// the initial state.
#[cfg(test)]
pub(super) fn components(graphs: &[Graph]) -> (Vec<Component>, Option<u64>) {
    let s = Stored::new(graphs, false);
    (s.components(), s.initial)
}

/// The shortest schedule from `from` to any state `goal` admits, over the stored edges.
pub(super) fn path_to(graphs: &[Graph], from: u64, goal: &dyn Fn(u64) -> bool) -> Option<Vec<u8>> {
    let mut adj: HashMap<u64, Vec<(u64, u8)>, BuildHasherDefault<Identity>> = HashMap::default();
    for g in graphs {
        for e in &g.edges {
            adj.entry(e.from).or_default().push((e.to, e.choice));
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
            keys: Vec::new(),
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
}
