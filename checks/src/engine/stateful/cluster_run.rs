//! The cluster search's timely dataflow (cluster.rs says how it works): every worker of every
//! process is a [`Worker`] (`workers.rs`) that searches the states it owns and sends the
//! others to their owners; once the search is over, the workers run the distributed fair-cycle
//! pass (`cluster_fair/`) if a cycle invariant is checked, and worker 0 gathers every
//! worker's findings, and the graph only if the pass could not decide without it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::{AllocatorBuilder, Hooks};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Concat, ConnectLoop, Feedback, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::WorkerConfig;

use super::cluster::{self, Cluster};
use super::cluster_fair::{self, Decided};
use super::findings::{Counts, Findings, Steps, Target};
use super::graph::{Edge, Graph, Node};
use super::market::Job;
use super::snapshots::SnapStats;
use super::workers::{Begin, Sent, Worker, WorkerOut};
use crate::engine::types::{Options, ReductionDefect};
use crate::monitor::online::CycleKey;
use crate::monitor::Checked;
use crate::spec::Spec;

/// A message of the search loop.
#[derive(Clone, Serialize, Deserialize)]
struct Msg {
    /// The worker it is for.
    to: u64,
    kind: Kind,
    /// A candidate's fingerprint, and the schedule that leads to it (or to the initial state).
    fp: u64,
    schedule: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    /// Start at the initial state (worker 0's first message).
    Start,
    /// A state this worker owns, found by another.
    Candidate,
    /// The search is over: stop.
    Halt,
}

/// The parts of graphs go to worker 0 in pieces of this many records.
const CHUNK: usize = 1 << 16;

/// What a worker sends worker 0 once the search is over.
#[derive(Serialize, Deserialize, Clone)]
enum Part {
    Stats(Box<Stats>),
    Nodes(Vec<Node>),
    Edges(Vec<Edge>),
    Keys(Vec<(u64, u8, u64, u32)>),
}

#[derive(Serialize, Deserialize, Clone, Default)]
struct Stats {
    executions: u64,
    transitions: u64,
    max_depth: u64,
    coverage: Vec<(String, u64)>,
    violated: Vec<(String, u64)>,
    first_violation: Vec<(String, u64)>,
    /// A safety violation: the invariant and the schedule.
    target: Option<(String, Vec<u8>)>,
    stopped_by: Option<String>,
    error: Option<String>,
    steps: (u64, u64, u64),
    stored: u64,
    /// States the worker explored by one start alone (persistent sets).
    persistent: u64,
    memory: u64,
    /// Candidates sent to workers of other processes, and their bytes (bincode).
    sent: u64,
    bytes: u64,
    graph: bool,
    initial: Option<u64>,
    /// Whether the worker searched by snapshots, its restores and its snapshots' peak bytes.
    snapshots: (bool, u64, u64),
    /// The distributed fair-cycle pass (`cluster_fair/`), if it ran.
    pass: Option<Decided>,
}

/// One `&'static str` per distinct name (the names of invariants, coverage events and reasons
/// that come back from other processes as text).
fn intern(s: String) -> &'static str {
    static NAMES: OnceLock<Mutex<std::collections::HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = set.get(s.as_str()) {
        return n;
    }
    let n: &'static str = Box::leak(s.into_boxed_str());
    set.insert(n);
    n
}

fn names(m: &BTreeMap<&'static str, u64>) -> Vec<(String, u64)> {
    m.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn unnames(v: Vec<(String, u64)>) -> BTreeMap<&'static str, u64> {
    v.into_iter().map(|(k, n)| (intern(k), n)).collect()
}

/// The run key both ends of every connection compare: the scenario and the options that shape
/// the search.
fn run_key<M: Checked>(spec: &Spec<M>, opts: &Options, max_states: Option<u64>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{spec:?}").hash(&mut h);
    format!("{:?}", opts.reduce).hash(&mut h);
    opts.max_duration.hash(&mut h);
    max_states.hash(&mut h);
    opts.history_only.hash(&mut h);
    h.finish()
}

/// How the fair-cycle pass runs in a cluster whose workers record the graph: distributed
/// (`cluster_fair/`), with the seeded defects it knows.
#[derive(Debug, Clone, Copy)]
pub(super) struct FairPass {
    /// `ReductionDefect::FairnessIgnoresStaleReads`.
    pub with_stale: bool,
    /// `ReductionDefect::ClusterPassDropsRemoteBack`.
    pub drop_remote_back: bool,
}

/// Run a cluster search of `spec`: this process's workers, made by `make` (given the
/// worker's index over every process and their number), over timely dataflow with the other
/// processes of `c`. With `fair_pass`, the workers then decide together whether the graph they
/// recorded may hold a fair cycle, and send it to worker 0 only if it may. On process 0 every
/// worker's outcome; elsewhere none.
pub(super) fn outs<M: Checked, W: Worker + 'static>(
    spec: &Spec<M>,
    opts: &Options,
    max_states: Option<u64>,
    fair_pass: Option<FairPass>,
    c: &Cluster,
    make: impl Fn(usize, usize) -> W + Send + Sync + 'static,
) -> Result<Vec<WorkerOut>, String> {
    let key = run_key(spec, opts, max_states);
    let sockets = c.connect(key)?;
    let hooks = Hooks::default();
    let allocators = ProcessBuilder::new_typed_vector(c.threads, hooks.refill.clone(), None);
    let (builders, guard) = initialize_networking_from_sockets(allocators, sockets, c.process, c.threads, hooks)
        .map_err(|e| format!("process {} ({}): starting the network: {e}", c.process, c.addresses[c.process]))?;
    let builders: Vec<AllocatorBuilder> = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
    let threads = c.threads;
    let lose = opts.reduce.defect == Some(ReductionDefect::ClusterLosesSentStates);
    let guards = timely::execute::execute_from(builders, Box::new(guard), WorkerConfig::default(), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let search = Rc::new(RefCell::new(Some(make(index, peers))));
        let sent = Rc::new(RefCell::new(Sent::default()));
        let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Msg>>> = InputHandle::new();
        let probe = ProbeHandle::new();
        let (s2, sent2) = (Rc::clone(&search), Rc::clone(&sent));
        worker.dataflow::<u64, _, _>(|scope| {
            let start = scope.input_from(&mut input);
            let (handle, cycle) = scope.feedback::<Vec<Msg>>(1u64);
            start
                .concat(cycle)
                .unary(Exchange::new(|m: &Msg| m.to), "explore", move |_, _| {
                    let mut halted = false;
                    move |input, output| {
                        input.for_each(|cap, data| {
                            let mut out: Vec<Msg> = Vec::new();
                            let mut s = s2.borrow_mut();
                            let s = s.as_mut().expect("the worker's search lives as long as its dataflow");
                            for m in data.drain(..) {
                                if halted || m.kind == Kind::Halt {
                                    halted = true;
                                    continue;
                                }
                                // Search from the initial state, or from a state another worker
                                // sent (if it is new here).
                                match m.kind {
                                    Kind::Candidate if s.knows(m.fp) => {}
                                    Kind::Candidate => {
                                        s.search(Begin::Candidate(Job { prefix: m.schedule, todo: u32::MAX }))
                                    }
                                    _ => s.search(Begin::Initial(m.schedule)),
                                }
                                let mut sent = sent2.borrow_mut();
                                for (fp, schedule) in s.take_outbox() {
                                    let to = cluster::owner(fp, peers);
                                    if to / threads != index / threads {
                                        if lose && fp % 4 == 0 {
                                            continue; // the seeded defect: a quarter of the states sent are lost
                                        }
                                        sent.states += 1;
                                        sent.bytes += 8 + 1 + 8 + 8 + schedule.len() as u64;
                                    }
                                    out.push(Msg { to: to as u64, kind: Kind::Candidate, fp, schedule });
                                }
                                if s.halted() {
                                    halted = true;
                                    out.extend((0..peers as u64).map(|w| Msg {
                                        to: w,
                                        kind: Kind::Halt,
                                        fp: 0,
                                        schedule: Vec::new(),
                                    }));
                                }
                            }
                            if !out.is_empty() {
                                output.session(&cap).give_iterator(out.into_iter());
                            }
                        });
                    }
                })
                .probe_with(&probe)
                .connect_loop(handle);
        });
        if index == 0 {
            input.send(Msg { to: 0, kind: Kind::Start, fp: 0, schedule: Vec::new() });
        }
        drop(input);
        while !probe.done() {
            worker.step_or_park(None);
        }

        // Every worker's counts and graph to worker 0.
        let parts = {
            let s = search.borrow_mut().take().expect("the worker's search");
            let mut out = s.finish();
            if let (Some(f), Some(g)) = (fair_pass, out.graph.take()) {
                // Every worker of every process records a graph, or none does.
                let run = out.error.is_none() && !out.found.halted();
                let (g, decided) = cluster_fair::decide(worker, g, run, f.with_stale, f.drop_remote_back);
                out.graph = decided.gather.then_some(g);
                out.pass = Some(decided);
            }
            parts(out, *sent.borrow())
        };
        drop(search);
        let received: Rc<RefCell<Vec<(u64, Part)>>> = Rc::new(RefCell::new(Vec::new()));
        let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<(u64, Part)>>> = InputHandle::new();
        let probe = ProbeHandle::new();
        let r2 = Rc::clone(&received);
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Exchange::new(|_: &(u64, Part)| 0),
                    "gather",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|_, data| r2.borrow_mut().append(data));
                        }
                    },
                )
                .probe_with(&probe);
        });
        for p in parts {
            input.send((index as u64, p));
        }
        drop(input);
        while !probe.done() {
            worker.step_or_park(None);
        }
        let parts = std::mem::take(&mut *received.borrow_mut());
        if index == 0 {
            outs_from(parts, peers)
        } else {
            Vec::new()
        }
    })?;
    let mut outs = Vec::new();
    for r in guards.join() {
        outs.extend(r.map_err(|e| format!("process {}: a worker failed: {e}", c.process))?);
    }
    Ok(outs)
}

/// A worker's findings and graph, as messages for worker 0.
fn parts(out: WorkerOut, sent: Sent) -> Vec<Part> {
    let WorkerOut { found: mut st, executions, error, graph, memory, snapshots, pass, .. } = out;
    let target = match st.target.take() {
        Some(Target::Safety { invariant, path }) => Some((invariant.to_string(), path)),
        // Cycles are found by worker 0, on the union of the graphs.
        Some(Target::Cycle { .. }) | None => None,
    };
    let stats = Stats {
        executions,
        transitions: st.transitions,
        max_depth: st.max_depth as u64,
        coverage: names(&st.coverage.to_map()),
        violated: names(&st.violated),
        first_violation: names(&st.first_violation),
        target,
        stopped_by: st.stopped_by.map(str::to_string),
        error,
        steps: (st.steps.total, st.steps.replayed, st.steps.tail),
        stored: st.stored,
        persistent: st.persistent,
        memory,
        sent: sent.states,
        bytes: sent.bytes,
        graph: graph.is_some(),
        initial: graph.as_ref().and_then(|g| g.initial),
        snapshots: (snapshots.taken, snapshots.restores, snapshots.peak_bytes),
        pass,
    };
    let mut parts = vec![Part::Stats(Box::new(stats))];
    if let Some(g) = graph {
        parts.extend(g.nodes.chunks(CHUNK).map(|c| Part::Nodes(c.to_vec())));
        parts.extend(g.edges.chunks(CHUNK).map(|c| Part::Edges(c.to_vec())));
        let keys: Vec<(u64, u8, u64, u32)> = g.keys.iter().map(|(fp, k)| (*fp, k.class, k.key, k.must_move)).collect();
        parts.extend(keys.chunks(CHUNK).map(|c| Part::Keys(c.to_vec())));
    }
    parts
}

/// Worker 0: every worker's parts, back into the outcomes of one machine's workers.
fn outs_from(parts: Vec<(u64, Part)>, peers: usize) -> Vec<WorkerOut> {
    let mut stats: Vec<Option<Stats>> = (0..peers).map(|_| None).collect();
    let mut graphs: Vec<Graph> = (0..peers).map(|_| Graph::default()).collect();
    for (w, p) in parts {
        let w = w as usize;
        match p {
            Part::Stats(s) => stats[w] = Some(*s),
            Part::Nodes(v) => graphs[w].nodes.extend(v),
            Part::Edges(v) => graphs[w].edges.extend(v),
            Part::Keys(v) => graphs[w]
                .keys
                .extend(v.into_iter().map(|(fp, class, key, must_move)| (fp, CycleKey { class, key, must_move }))),
        }
    }
    stats
        .into_iter()
        .zip(graphs)
        .enumerate()
        .map(|(w, (s, mut g))| {
            let s =
                s.unwrap_or_else(|| Stats { error: Some(format!("worker {w} sent no result")), ..Stats::default() });
            g.initial = s.initial;
            WorkerOut {
                found: Findings {
                    transitions: s.transitions,
                    max_depth: s.max_depth as usize,
                    coverage: Counts::from_map(&unnames(s.coverage)),
                    violated: unnames(s.violated),
                    first_violation: unnames(s.first_violation),
                    target: s.target.map(|(i, path)| Target::Safety { invariant: intern(i), path }),
                    stopped_by: s.stopped_by.map(intern),
                    slept: 0,
                    revisits: 0,
                    persistent: s.persistent,
                    inert: 0,
                    inert_disagreements: 0,
                    closed: 0,
                    steps: Steps { total: s.steps.0, replayed: s.steps.1, tail: s.steps.2 },
                    stored: s.stored,
                },
                executions: s.executions,
                error: s.error,
                graph: s.graph.then_some(g),
                memory: s.memory,
                sent: Sent { states: s.sent, bytes: s.bytes },
                snapshots: SnapStats { taken: s.snapshots.0, restores: s.snapshots.1, peak_bytes: s.snapshots.2 },
                pass: s.pass,
            }
        })
        .collect()
}
