//! A cluster's fair-cycle pass, distributed (docs/model.md, "Many machines": fair cycles): each
//! worker keeps the part of the state graph it recorded (the states it owns and the transitions
//! out of them), and the workers decide together, by messages over timely dataflow, whether the
//! graph has a strongly connected component that may hold a fair cycle. No worker gathers the
//! graph. If no component may (a `progress` proof), the pass is the whole decision: with no
//! fair component there is no fair cycle of `progress` and none of a lasso invariant, whose
//! cycles lie inside fair components (`fair.rs`). If one may, or the pass cannot run, every
//! worker sends its graph to worker 0 as before, which decides and builds the counterexample
//! (it needs the way in from the initial state). A search that stopped decides no fair cycle:
//! nothing is gathered.
//!
//! The algorithm is the coloring one for strongly connected components (Orzan 2004; the
//! trimming of McLendon et al. 2005), in rounds:
//! 1. **Reverse transitions.** Each transition's target's owner learns its source (for the
//!    backward steps below) and counts its predecessors.
//! 2. **Trim.** A state with no predecessor or no successor left, other than itself, is a
//!    component of its own (fair if its transitions to itself make it so): it leaves, and tells
//!    its successors and predecessors, which may leave in turn.
//! 3. **Color.** Every state left takes as its color the greatest fingerprint of a state that
//!    reaches it (the fingerprints flow forward until none grows).
//! 4. **Backward.** A state whose color is its own fingerprint is a root. The states of its
//!    color that reach it (backward from the root, through states of the same color only) are
//!    its component: a state reaches the root and the root reaches it. Each transition met on the
//!    way back is inside the component, so the component's owner learns which tasks move in it,
//!    and from its members which tasks are disabled somewhere and which exist: the fairness
//!    test of `fair.rs`.
//! 5. The components found leave, as trimmed states do; repeat from 2 until no state is left.
//!
//! Only the transitions the fair-cycle pass follows count: those that read nothing stale
//! (`graph.rs`). Each phase runs until timely's progress tracking says no message is left. A
//! worker handles the messages of one timestamp together, once no more of it can come, in the
//! order of the states they are about: its states are sorted by fingerprint, so its arrays are
//! walked, not jumped through (docs/performance.md, "The cluster's fair-cycle pass,
//! distributed").

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Capability, Concat, ConnectLoop, Feedback, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};

use super::cluster::owner;
use super::fair::fair;
use super::graph::Graph;
use super::store::Identity;

/// States a worker goes through in one activation of a fan-out (so that a phase that sends a
/// message a transition does not hold them all at once).
const CHUNK: u32 = 1 << 16;

/// What a message says.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum What {
    /// Go on with worker `.1`'s fan-out of the current phase from its state `.0`.
    Seed(u32, u32),
    /// State `.0` has one more predecessor.
    Pred(u64),
    /// State `.0` has the predecessor numbered `.1` (see [`Pass::id`]).
    Rev(u64, u32),
    /// A predecessor of state `.0` has left; a successor of the state numbered `.0` has.
    LostPred(u64),
    LostSucc(u32),
    /// A state that reaches state `.0` has color `.1`.
    Color(u64, u64),
    /// The state numbered `.0` has a transition to `.1`, a member of the component of root
    /// `.2`.
    Back(u32, u64, u64),
    /// For the component of root `.0`: tasks that move inside it, tasks disabled at a member,
    /// tasks that exist at a member.
    Agg(u64, u32, u32, u32),
    /// A number worker `.0` adds up.
    Sum(u32, u64),
}

/// A message: what it says names the state it is about, and so the worker it goes to.
type Msg = What;

impl What {
    /// Where the message's state is in its worker's arrays: fingerprint or number, after the
    /// kind of message.
    fn order(&self) -> (u8, u64) {
        match *self {
            What::Seed(from, _) => (0, u64::from(from)),
            What::Pred(fp) | What::Rev(fp, _) | What::LostPred(fp) | What::Color(fp, _) => (1, fp),
            What::LostSucc(id) | What::Back(id, ..) => (2, u64::from(id)),
            What::Agg(c, ..) => (3, c),
            What::Sum(..) => (4, 0),
        }
    }

    /// The worker the message goes to, of `peers`; `local_bits`: [`Pass::local_bits`].
    fn to(&self, peers: usize, local_bits: u32) -> u64 {
        match *self {
            What::Seed(_, w) | What::Sum(w, _) => u64::from(w),
            What::Pred(fp) | What::Rev(fp, _) | What::LostPred(fp) | What::Color(fp, _) | What::Agg(fp, ..) => {
                owner(fp, peers) as u64
            }
            What::LostSucc(id) | What::Back(id, ..) => u64::from(id) >> local_bits,
        }
    }
}

/// The phases whose fan-out goes through every state.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Pred,
    Rev,
    Trim,
    Color,
    Back,
}

/// What the pass decided, and what it cost this worker.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(super) struct Decided {
    /// Some component of the graph may hold a fair cycle (or the pass could not run): worker 0
    /// must decide on the gathered graph.
    pub gather: bool,
    /// The pass ran to a decision (not when a worker's search stopped, or the graph could not
    /// be numbered).
    pub ran: bool,
    /// Rounds of trim, color and backward steps.
    pub rounds: u64,
    /// The most bytes this worker held for the pass beside its graph, and its graph's bytes.
    pub bytes: u64,
    pub graph_bytes: u64,
    /// Seconds the pass took this worker.
    pub seconds: f64,
}

/// A worker's side of the pass: its graph, sorted (states by fingerprint, transitions by
/// source), and per state the counts, color and marks of the rounds. Transitions from a state
/// to itself are not counted as predecessors or successors: a state whose only neighbour left
/// is itself is a component of its own, decided where it leaves.
#[derive(Default)]
struct Pass {
    graph: Graph,
    me: usize,
    peers: usize,
    with_stale: bool,
    /// The seeded defect `ReductionDefect::ClusterPassDropsRemoteBack`.
    drop_remote_back: bool,
    phase: Option<Phase>,
    /// `out[i]..out[i + 1]`: the transitions out of state `i` in `graph.edges`.
    out: Vec<u32>,
    /// `rev_at[i]..rev_at[i + 1]`: the predecessors of state `i` (other than itself) in `rev`,
    /// by number.
    rev_at: Vec<u32>,
    rev: Vec<u32>,
    /// Bits of a state's number that hold its index at its worker (the rest: the worker).
    local_bits: u32,
    /// `dir[b]..dir[b + 1]`: the states whose fingerprints' top `dir_bits` bits are `b` (about
    /// four a bucket).
    dir: Vec<u32>,
    dir_bits: u32,
    /// Predecessors and successors (other than itself) still in the graph.
    preds: Vec<u32>,
    succs: Vec<u32>,
    color: Vec<u64>,
    /// 0: left; 1: in the graph; 2: in the graph and in a component found this round.
    live: Vec<u8>,
    agg: HashMap<u64, (u32, u32, u32), BuildHasherDefault<Identity>>,
    /// A component that may hold a fair cycle was found.
    fair_found: bool,
    sum: u64,
}

impl Pass {
    /// This worker's index of the state `fp`: the directory gives the few states that share
    /// the fingerprint's top bits (fingerprints are uniform), and a search among them the one.
    #[inline]
    fn local(&self, fp: u64) -> Option<usize> {
        let b = bucket(fp, self.dir_bits);
        let (lo, hi) = (self.dir[b] as usize, self.dir[b + 1] as usize);
        self.graph.nodes[lo..hi].binary_search_by_key(&fp, |n| n.fp).ok().map(|k| lo + k)
    }

    /// The number of this worker's state `i`: the worker in the top bits, the index below (a
    /// predecessor is named by number, half a fingerprint, and found without a search).
    fn id(&self, i: usize) -> u32 {
        ((self.me as u64) << self.local_bits | i as u64) as u32
    }

    fn index_of(&self, id: u32) -> usize {
        (u64::from(id) & ((1u64 << self.local_bits) - 1)) as usize
    }

    /// The transitions out of state `i` the pass follows, to other states: (target, task).
    fn succ(&self, i: usize) -> impl Iterator<Item = (u64, u8)> + '_ {
        let (with_stale, fp) = (self.with_stale, self.graph.nodes[i].fp);
        self.graph.edges[self.out[i] as usize..self.out[i + 1] as usize]
            .iter()
            .filter(move |e| (with_stale || !e.stale) && e.to != fp)
            .map(|e| (e.to, e.task))
    }

    /// The tasks that move on a transition from state `i` to itself.
    fn self_moves(&self, i: usize) -> u32 {
        let fp = self.graph.nodes[i].fp;
        self.graph.edges[self.out[i] as usize..self.out[i + 1] as usize]
            .iter()
            .filter(|e| (self.with_stale || !e.stale) && e.to == fp)
            .fold(0, |m, e| m | 1 << e.task)
    }

    fn pred(&self, i: usize) -> &[u32] {
        &self.rev[self.rev_at[i] as usize..self.rev_at[i + 1] as usize]
    }

    /// State `i` leaves the graph, with no predecessor or no successor left: a component of its
    /// own, fair if its transitions to itself make it so. Its neighbours lose it.
    fn leave(&mut self, i: usize, out: &mut Vec<Msg>) {
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
    fn join(&mut self, i: usize, c: u64, out: &mut Vec<Msg>) {
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
    fn seed(&mut self, from: u32, out: &mut Vec<Msg>) {
        let n = self.graph.nodes.len();
        let end = (from.saturating_add(CHUNK) as usize).min(n);
        for i in from as usize..end {
            if self.phase != Some(Phase::Pred) && self.phase != Some(Phase::Rev) && self.live[i] == 0 {
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

    fn handle(&mut self, what: What, out: &mut Vec<Msg>) {
        match what {
            What::Seed(from, _) => self.seed(from, out),
            What::Pred(fp) => {
                if let Some(i) = self.local(fp) {
                    self.preds[i] += 1;
                }
            }
            What::Rev(fp, from) => {
                if let Some(i) = self.local(fp) {
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

    fn bytes(&self) -> u64 {
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
fn bucket(fp: u64, bits: u32) -> usize {
    fp.checked_shr(64 - bits).unwrap_or(0) as usize
}

/// Run one phase: this worker starts with `start`, and the phase is over when no message is
/// left anywhere.
fn phase(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, start: Vec<Msg>) {
    let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Msg>>> = InputHandle::new();
    let probe = ProbeHandle::new();
    let p = Rc::clone(pass);
    let (peers, local_bits) = (worker.peers(), pass.borrow().local_bits);
    worker.dataflow::<u64, _, _>(|scope| {
        let begin = scope.input_from(&mut input);
        let (handle, cycle) = scope.feedback::<Vec<Msg>>(1u64);
        begin
            .concat(cycle)
            .unary_frontier::<CapacityContainerBuilder<Vec<Msg>>, _, _, _>(
                Exchange::new(move |m: &Msg| m.to(peers, local_bits)),
                "fair-pass",
                move |_, _| {
                    // The messages of a time are handled together once no more of that time can
                    // come (one batch a time and worker, not one per message that arrived).
                    let mut stash: BTreeMap<u64, (Capability<u64>, Vec<Msg>)> = BTreeMap::new();
                    move |(input, frontier), output| {
                        input.for_each(|cap, data| {
                            let Some(&t) = cap.least() else { return };
                            // A worker's own fan-out goes on at once.
                            let (mut out, mut rest) = (Vec::new(), Vec::new());
                            {
                                let mut p = p.borrow_mut();
                                for m in data.drain(..) {
                                    match m {
                                        What::Seed(..) => p.handle(m, &mut out),
                                        _ => rest.push(m),
                                    }
                                }
                            }
                            if !out.is_empty() {
                                output.session(&cap).give_iterator(out.into_iter());
                            }
                            if !rest.is_empty() {
                                stash.entry(t).or_insert_with(|| (cap.delayed(&t, 0), Vec::new())).1.append(&mut rest);
                            }
                        });
                        while let Some(t) = stash.first_key_value().map(|(&t, _)| t) {
                            if frontier.less_equal(&t) {
                                break;
                            }
                            let (cap, mut msgs) = stash.remove(&t).expect("the first time");
                            // In the order of the states they are about (this worker's states are
                            // sorted by fingerprint, and numbered in that order): the arrays are
                            // then walked, not jumped through. The messages of one time commute.
                            msgs.sort_unstable_by_key(What::order);
                            let mut out: Vec<Msg> = Vec::new();
                            let mut p = p.borrow_mut();
                            for m in msgs {
                                p.handle(m, &mut out);
                            }
                            if !out.is_empty() {
                                output.session(&cap).give_iterator(out.into_iter());
                            }
                        }
                    }
                },
            )
            .probe_with(&probe)
            .connect_loop(handle);
    });
    for m in start {
        input.send(m);
    }
    drop(input);
    while !probe.done() {
        worker.step_or_park(None);
    }
}

/// The sum over every worker of `v`.
fn sum(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, v: u64) -> u64 {
    let peers = worker.peers() as u64;
    {
        let mut p = pass.borrow_mut();
        p.sum = 0;
        p.phase = None;
    }
    phase(worker, pass, (0..peers).map(|to| What::Sum(to as u32, v)).collect());
    pass.borrow().sum
}

/// Run a fan-out phase through every state of every worker still in the graph.
fn fan_out(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, p: Phase) {
    let me = worker.index() as u64;
    pass.borrow_mut().phase = Some(p);
    phase(worker, pass, vec![What::Seed(0, me as u32)]);
}

/// The distributed fair-cycle pass over `graph`, this worker's part, run by every worker of the
/// cluster together; the graph (sorted) comes back with the decision. `run`: this worker's
/// search completed without a stop or an error (if any worker's did not, no worker runs the
/// pass). `with_stale`: the seeded defect `FairnessIgnoresStaleReads`; `drop_remote_back`:
/// `ClusterPassDropsRemoteBack`.
pub(super) fn decide(
    worker: &mut timely::worker::Worker,
    mut graph: Graph,
    run: bool,
    with_stale: bool,
    drop_remote_back: bool,
) -> (Graph, Decided) {
    let (me, peers) = (worker.index(), worker.peers());
    let started = std::time::Instant::now();
    // A worker's states and transitions are its own (a worker explores only the states it
    // owns); were they not, the graph is gathered.
    let own =
        graph.nodes.iter().all(|n| owner(n.fp, peers) == me) && graph.edges.iter().all(|e| owner(e.from, peers) == me);
    graph.nodes.shrink_to_fit();
    graph.edges.shrink_to_fit();
    graph.keys.shrink_to_fit();
    let graph_bytes = graph.bytes();
    graph.nodes.sort_unstable_by_key(|n| n.fp);
    graph.edges.sort_by_key(|e| e.from);
    let n = graph.nodes.len();
    let mut out = Vec::with_capacity(n + 1);
    let mut e = 0usize;
    for node in &graph.nodes {
        while e < graph.edges.len() && graph.edges[e].from < node.fp {
            e += 1;
        }
        out.push(e as u32);
        while e < graph.edges.len() && graph.edges[e].from == node.fp {
            e += 1;
        }
    }
    out.push(e as u32);
    let mut pass = Pass {
        graph,
        me,
        peers,
        with_stale,
        drop_remote_back,
        out,
        preds: vec![0; n],
        local_bits: 32 - (usize::BITS - (peers.max(1) - 1).leading_zeros()),
        ..Pass::default()
    };
    pass.dir_bits = (n / 4).max(1).ilog2();
    let buckets = 1usize << pass.dir_bits;
    pass.dir = Vec::with_capacity(buckets + 1);
    let mut k = 0usize;
    for b in 0..buckets {
        while k < n && bucket(pass.graph.nodes[k].fp, pass.dir_bits) < b {
            k += 1;
        }
        pass.dir.push(k as u32);
    }
    pass.dir.push(n as u32);
    let pass = Rc::new(RefCell::new(pass));
    let mut decided = Decided { gather: true, graph_bytes, ..Decided::default() };
    let finish = |pass: Rc<RefCell<Pass>>, decided: Decided| {
        let decided = Decided { seconds: started.elapsed().as_secs_f64(), ..decided };
        (std::mem::take(&mut pass.borrow_mut().graph), decided)
    };
    // Every state must have a number.
    let numbered = (n as u64) < 1u64 << pass.borrow().local_bits;
    let refused = sum(worker, &pass, u64::from(!run) | u64::from(!own || !numbered) << 32);
    if refused & 0xffff_ffff != 0 {
        // A search that stopped decides no fair cycle: the graph is not needed.
        decided.gather = false;
        return finish(pass, decided);
    }
    if refused != 0 {
        return finish(pass, decided);
    }
    decided.ran = true;
    // Predecessors: counted, then placed.
    fan_out(worker, &pass, Phase::Pred);
    {
        let mut p = pass.borrow_mut();
        let mut at = 0u32;
        let mut rev_at = Vec::with_capacity(n + 1);
        for i in 0..n {
            rev_at.push(at);
            at += p.preds[i];
            p.preds[i] = at - rev_at[i];
        }
        rev_at.push(at);
        p.rev_at = rev_at;
        p.rev = vec![0; at as usize];
    }
    fan_out(worker, &pass, Phase::Rev);
    {
        let mut p = pass.borrow_mut();
        let p = &mut *p;
        p.preds = (0..n).map(|i| p.rev_at[i + 1] - p.rev_at[i]).collect();
        p.succs = (0..n).map(|i| p.succ(i).count() as u32).collect();
        p.live = vec![1; n];
        decided.bytes = p.bytes();
    }
    loop {
        fan_out(worker, &pass, Phase::Trim);
        let left = pass.borrow().live.iter().filter(|&&l| l == 1).count() as u64;
        let found = u64::from(pass.borrow().fair_found);
        // Both sums in one: the states left, and (above bit 48) the workers that found a fair
        // component.
        let total = sum(worker, &pass, left | found << 48);
        if total >> 48 != 0 {
            break;
        }
        if total == 0 {
            decided.gather = false;
            break;
        }
        decided.rounds += 1;
        {
            let mut p = pass.borrow_mut();
            let p = &mut *p;
            // The colors are allocated at the first round (a graph the trimming empties needs
            // none).
            p.color.resize(n, 0);
            for i in 0..n {
                p.color[i] = p.graph.nodes[i].fp;
            }
        }
        fan_out(worker, &pass, Phase::Color);
        fan_out(worker, &pass, Phase::Back);
        let mut p = pass.borrow_mut();
        decided.bytes = decided.bytes.max(p.bytes());
        if p.agg.values().any(|&(moves, disabled, tasks)| moves != 0 && fair(moves, disabled, tasks)) {
            p.fair_found = true;
        }
        p.agg.clear();
    }
    finish(pass, decided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stateful::graph::{Edge, Node, Stored};
    use crate::engine::types::ReductionDefect;

    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// A random graph of three tasks: states with random fingerprints and enabled tasks, and
    /// random transitions (some from a state to itself, some stale).
    fn random(seed: u64) -> Graph {
        let mut rng = Lcg(seed);
        let n = 2 + rng.below(30);
        let fps: Vec<u64> = (0..n).map(|_| rng.below(u64::MAX) << 1 | 1).collect();
        let nodes = fps.iter().map(|&fp| Node { fp, enabled: 1 + rng.below(7) as u32, tasks: 0b111 }).collect();
        let m = rng.below(3 * n);
        let edges = (0..m)
            .map(|_| {
                let (a, b) = (fps[rng.below(n) as usize], fps[rng.below(n) as usize]);
                let task = rng.below(3) as u8;
                Edge { from: a, to: b, task, choice: task, stale: rng.below(8) == 0 }
            })
            .collect();
        Graph { initial: Some(fps[0]), nodes, edges, ..Graph::default() }
    }

    /// The part of `g` worker `me` of `peers` owns.
    fn part(g: &Graph, me: usize, peers: usize) -> Graph {
        Graph {
            nodes: g.nodes.iter().copied().filter(|n| owner(n.fp, peers) == me).collect(),
            edges: g.edges.iter().copied().filter(|e| owner(e.from, peers) == me).collect(),
            ..Graph::default()
        }
    }

    /// Whether some component of the whole graph is fair (`fair.rs`'s test on one machine).
    fn fair_somewhere(g: &Graph, with_stale: bool) -> bool {
        let defect = with_stale.then_some(ReductionDefect::FairnessIgnoresStaleReads);
        Stored::new(vec![g.clone()], defect).components().iter().any(|c| fair(c.moves, c.disabled, c.tasks))
    }

    /// What three workers of one timely instance decide on the graphs of `seeds`: for each,
    /// whether they gather it, and the rounds.
    fn distributed(seeds: Vec<u64>, with_stale: bool, drop_remote_back: bool) -> Vec<(bool, u64)> {
        let guards = timely::execute(timely::Config::process(3), move |worker| {
            let (me, peers) = (worker.index(), worker.peers());
            seeds
                .iter()
                .map(|&s| {
                    let (_, d) = decide(worker, part(&random(s), me, peers), true, with_stale, drop_remote_back);
                    (d.gather, d.rounds)
                })
                .collect::<Vec<_>>()
        })
        .expect("timely");
        let all: Vec<Vec<(bool, u64)>> = guards.join().into_iter().map(|r| r.expect("a worker")).collect();
        // Every worker comes to the same decision.
        for w in &all[1..] {
            assert_eq!(w.iter().map(|d| d.0).collect::<Vec<_>>(), all[0].iter().map(|d| d.0).collect::<Vec<_>>());
        }
        all.into_iter().next().expect("worker 0")
    }

    /// On 1,000 random graphs split over three workers, the pass gathers the graph exactly when
    /// one machine's Tarjan finds a fair component (with and without the stale transitions),
    /// and it needed rounds beyond the trimming on some of them.
    #[test]
    fn the_distributed_pass_decides_as_one_machine_does() {
        let seeds: Vec<u64> = (0..1000).collect();
        for with_stale in [false, true] {
            let got = distributed(seeds.clone(), with_stale, false);
            let mut fair_graphs = 0;
            for (&s, &(gather, _)) in seeds.iter().zip(&got) {
                let want = fair_somewhere(&random(s), with_stale);
                assert_eq!(gather, want, "graph {s}, with_stale {with_stale}");
                fair_graphs += usize::from(want);
            }
            assert!(fair_graphs > 100 && fair_graphs < 900, "{fair_graphs} of 1,000 graphs have a fair component");
            let rounds = got.iter().filter(|d| !d.0 && d.1 > 0).count();
            assert!(rounds >= 15, "only {rounds} proofs needed a round of colors");
        }
    }

    /// The seeded defect `ReductionDefect::ClusterPassDropsRemoteBack` cuts a component where
    /// its cycle goes through two workers' states: some fair components are missed, and a
    /// graph with one is passed.
    #[test]
    fn a_pass_that_drops_the_backward_steps_between_workers_is_caught() {
        let seeds: Vec<u64> = (0..300).collect();
        let got = distributed(seeds.clone(), false, true);
        let missed = seeds.iter().zip(&got).filter(|(&s, d)| !d.0 && fair_somewhere(&random(s), false)).count();
        assert!(missed > 0, "the seeded defect missed no fair component");
    }
}
