//! A worker's side of the distributed fair-cycle pass: its part of the graph and the arrays of
//! the rounds, and what it does with each message (`mod.rs` says how the pass works).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::super::fair::fair;
use super::super::graph::Graph;
use super::super::store::Identity;
use super::msg::{Msg, Phase, What};

/// States a worker goes through in one activation of a fan-out (so that a phase that sends a
/// message a transition does not hold them all at once).
pub(super) const CHUNK: u32 = 1 << 16;

/// A worker's side of the pass: its graph, sorted (states by fingerprint, transitions by
/// source), and per state the counts, color and marks of the rounds. Transitions from a state
/// to itself are not counted as predecessors or successors: a state whose only neighbour left
/// is itself is a component of its own, decided where it leaves.
#[derive(Default)]
pub(super) struct Pass {
    pub(super) graph: Graph,
    pub(super) me: usize,
    pub(super) peers: usize,
    pub(super) with_stale: bool,
    /// The seeded defect `ReductionDefect::ClusterPassDropsRemoteBack`.
    pub(super) drop_remote_back: bool,
    pub(super) phase: Option<Phase>,
    /// `out[i]..out[i + 1]`: the transitions out of state `i` in `graph.edges`.
    pub(super) out: Vec<u32>,
    /// `rev_at[i]..rev_at[i + 1]`: the predecessors of state `i` (other than itself) in `rev`,
    /// by number.
    pub(super) rev_at: Vec<u32>,
    pub(super) rev: Vec<u32>,
    /// Bits of a state's number that hold its index at its worker (the rest: the worker).
    pub(super) local_bits: u32,
    /// `dir[b]..dir[b + 1]`: the states whose fingerprints' top `dir_bits` bits are `b` (about
    /// four a bucket).
    pub(super) dir: Vec<u32>,
    pub(super) dir_bits: u32,
    /// Predecessors and successors (other than itself) still in the graph.
    pub(super) preds: Vec<u32>,
    pub(super) succs: Vec<u32>,
    pub(super) color: Vec<u64>,
    /// 0: left; 1: in the graph; 2: in the graph and in a component found this round.
    pub(super) live: Vec<u8>,
    pub(super) agg: HashMap<u64, (u32, u32, u32), BuildHasherDefault<Identity>>,
    /// A component that may hold a fair cycle was found.
    pub(super) fair_found: bool,
    pub(super) sum: u64,
}

impl Pass {
    /// This worker's index of the state `fp`: the directory gives the few states that share
    /// the fingerprint's top bits (fingerprints are uniform), and a search among them the one.
    #[inline]
    pub(super) fn local(&self, fp: u64) -> Option<usize> {
        let b = bucket(fp, self.dir_bits);
        let (lo, hi) = (self.dir[b] as usize, self.dir[b + 1] as usize);
        self.graph.nodes[lo..hi].binary_search_by_key(&fp, |n| n.fp).ok().map(|k| lo + k)
    }

    /// The number of this worker's state `i`: the worker in the top bits, the index below (a
    /// predecessor is named by number, half a fingerprint, and found without a search).
    pub(super) fn id(&self, i: usize) -> u32 {
        ((self.me as u64) << self.local_bits | i as u64) as u32
    }

    pub(super) fn index_of(&self, id: u32) -> usize {
        (u64::from(id) & ((1u64 << self.local_bits) - 1)) as usize
    }

    /// The transitions out of state `i` the pass follows, to other states: (target, task).
    pub(super) fn succ(&self, i: usize) -> impl Iterator<Item = (u64, u8)> + '_ {
        let (with_stale, fp) = (self.with_stale, self.graph.nodes[i].fp);
        self.graph.edges[self.out[i] as usize..self.out[i + 1] as usize]
            .iter()
            .filter(move |e| (with_stale || !e.stale) && e.to != fp)
            .map(|e| (e.to, e.task))
    }

    /// The tasks that move on a transition from state `i` to itself.
    pub(super) fn self_moves(&self, i: usize) -> u32 {
        let fp = self.graph.nodes[i].fp;
        self.graph.edges[self.out[i] as usize..self.out[i + 1] as usize]
            .iter()
            .filter(|e| (self.with_stale || !e.stale) && e.to == fp)
            .fold(0, |m, e| m | 1 << e.task)
    }

    pub(super) fn pred(&self, i: usize) -> &[u32] {
        &self.rev[self.rev_at[i] as usize..self.rev_at[i + 1] as usize]
    }

    /// State `i` leaves the graph, with no predecessor or no successor left: a component of its
    /// own, fair if its transitions to itself make it so. Its neighbours lose it.
    pub(super) fn leave(&mut self, i: usize, out: &mut Vec<Msg>) {
        let n = self.graph.nodes[i];
        let moves = self.self_moves(i);
        if self.live[i] == 1 && moves != 0 && fair(moves, !n.enabled & n.tasks, n.tasks) {
            self.fair_found = true;
        }
        // A state that leaves with no successor left has none to tell, and likewise for
        // predecessors (a member of a component has both).
        let member = self.live[i] == 2;
        self.live[i] = 0;
        if member || self.succs[i] > 0 {
            for (to, _) in self.succ(i) {
                out.push(What::LostPred(to));
            }
        }
        if member || self.preds[i] > 0 {
            for &p in self.pred(i) {
                out.push(What::LostSucc(p));
            }
        }
    }

    /// State `i` joins the component of root `c`: its predecessors of the same color may too.
    pub(super) fn join(&mut self, i: usize, c: u64, out: &mut Vec<Msg>) {
        self.live[i] = 2;
        let n = self.graph.nodes[i];
        out.push(What::Agg(c, self.self_moves(i), !n.enabled & n.tasks, n.tasks));
        for &p in self.pred(i) {
            let msg = What::Back(p, n.fp, c);
            if self.drop_remote_back && msg.to(self.peers, self.local_bits) != self.me as u64 {
                continue; // the seeded defect: a cycle through another worker's state is cut
            }
            out.push(msg);
        }
    }

    /// This worker's fan-out of the current phase over its states `from..`, a chunk at a time.
    pub(super) fn seed(&mut self, from: u32, out: &mut Vec<Msg>) {
        let n = self.graph.nodes.len();
        let end = (from.saturating_add(CHUNK) as usize).min(n);
        for i in from as usize..end {
            if self.phase != Some(Phase::Pred) && self.live[i] == 0 {
                continue;
            }
            let fp = self.graph.nodes[i].fp;
            match self.phase {
                Some(Phase::Pred) => {
                    for (to, _) in self.succ(i) {
                        out.push(What::Pred(to));
                    }
                }
                Some(Phase::Rev) => {
                    let id = self.id(i);
                    for (to, _) in self.succ(i) {
                        out.push(What::Rev(to, id));
                    }
                }
                Some(Phase::Forward) if self.live[i] == 1 && self.preds[i] == 0 => self.leave(i, out),
                Some(Phase::Trim)
                    if self.live[i] == 2 || (self.live[i] == 1 && (self.preds[i] == 0 || self.succs[i] == 0)) =>
                {
                    self.leave(i, out)
                }
                // A state whose color has grown already sent the greater one on.
                Some(Phase::Color) if self.live[i] == 1 && self.color[i] == fp => {
                    for (to, _) in self.succ(i) {
                        out.push(What::Color(to, fp));
                    }
                }
                Some(Phase::Back) if self.live[i] == 1 && self.color[i] == fp => self.join(i, fp, out),
                _ => {}
            }
        }
        if end < n {
            out.push(What::Seed(end as u32, self.me as u32));
        }
    }

    pub(super) fn handle(&mut self, what: What, out: &mut Vec<Msg>) {
        match what {
            What::Seed(from, _) => self.seed(from, out),
            What::Pred(fp) => {
                if let Some(i) = self.local(fp) {
                    self.preds[i] += 1;
                }
            }
            What::Rev(fp, from) => {
                if let Some(i) = self.local(fp).filter(|&i| self.live[i] != 0 && self.preds[i] > 0) {
                    // `preds` counts down to the state's first predecessor's place.
                    self.preds[i] -= 1;
                    self.rev[(self.rev_at[i] + self.preds[i]) as usize] = from;
                }
            }
            What::LostPred(fp) => {
                if let Some(i) = self.local(fp).filter(|&i| self.live[i] == 1 && self.preds[i] > 0) {
                    self.preds[i] -= 1;
                    if self.preds[i] == 0 {
                        self.leave(i, out);
                    }
                }
            }
            What::LostSucc(id) => {
                let i = self.index_of(id);
                if self.live[i] == 1 && self.succs[i] > 0 {
                    self.succs[i] -= 1;
                    if self.succs[i] == 0 {
                        self.leave(i, out);
                    }
                }
            }
            What::Color(fp, c) => {
                if let Some(i) = self.local(fp).filter(|&i| self.live[i] == 1 && self.color[i] < c) {
                    self.color[i] = c;
                    for (to, _) in self.succ(i) {
                        out.push(What::Color(to, c));
                    }
                }
            }
            What::Back(id, to, c) => {
                let i = self.index_of(id);
                if self.live[i] != 0 && self.color[i] == c {
                    let moves = self.succ(i).filter(|&(t, _)| t == to).fold(0u32, |m, (_, task)| m | 1 << task);
                    out.push(What::Agg(c, moves, 0, 0));
                    if self.live[i] == 1 {
                        self.join(i, c, out);
                    }
                }
            }
            What::Agg(c, moves, disabled, tasks) => {
                let a = self.agg.entry(c).or_default();
                *a = (a.0 | moves, a.1 | disabled, a.2 | tasks);
            }
            What::Sum(_, v) => self.sum += v,
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        (self.out.capacity() * 4
            + self.rev_at.capacity() * 4
            + self.rev.capacity() * 4
            + self.preds.capacity() * 4
            + self.succs.capacity() * 4
            + self.color.capacity() * 8
            + self.live.capacity()
            + self.dir.capacity() * 4
            + self.agg.capacity() * 24) as u64
    }
}

/// The directory bucket of fingerprint `fp`: its top `bits` bits.
#[inline]
pub(super) fn bucket(fp: u64, bits: u32) -> usize {
    fp.checked_shr(64 - bits).unwrap_or(0) as usize
}
