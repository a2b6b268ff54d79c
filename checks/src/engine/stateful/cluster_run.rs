//! The cluster search's timely dataflow (cluster.rs says how it works; this module is a child
//! of search.rs so that it can drive a worker's [`Search`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, OnceLock};

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

use super::{lasso_checked, Cluster, Graph, Job, Search, Shared, Target, WorkerOut};
use crate::engine::{Options, ReductionDefect};
use crate::monitor::online::CycleKey;
use crate::monitor::Checked;
use crate::spec::Spec;

/// A message of the search loop: (to worker, kind, fingerprint, schedule).
type Msg = (u64, u8, u64, Vec<u8>);
const START: u8 = 0;
const CANDIDATE: u8 = 1;
const HALT: u8 = 2;

/// The parts of graphs go to worker 0 in pieces of this many records.
const CHUNK: usize = 1 << 16;

/// What a worker sends worker 0 once the search is over.
#[derive(Serialize, Deserialize, Clone)]
enum Part {
    Stats(Box<Stats>),
    Nodes(Vec<(u64, u32, u32)>),
    Edges(Vec<(u64, u64, u8)>),
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
    memory: u64,
    /// Candidates sent to workers of other processes, and their bytes (bincode).
    sent: u64,
    bytes: u64,
    graph: bool,
    initial: Option<u64>,
    /// Whether the worker searched by snapshots, its restores and its snapshots' peak bytes.
    snapshots: (bool, u64, u64),
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

impl<M: Checked> Search<'_, M> {
    /// The search over a cluster (cluster.rs). Process 0 ends with the merged outcome, the
    /// others with none of it (they print nothing).
    pub(super) fn cluster(&mut self, c: &Cluster) {
        match self.cluster_outs(c) {
            Ok(outs) if c.process == 0 => {
                let peers = c.processes() * c.threads;
                let shared = Arc::new(Shared::new(1));
                shared.states.store(outs.iter().map(|o| o.stored).sum(), Relaxed);
                let with_graph = self.spec.invariants.contains(&M::PROGRESS) || lasso_checked(self.spec);
                self.merge(outs, peers, shared, with_graph);
            }
            Ok(_) => self.cluster_follower = true,
            Err(e) => self.error = Some(format!("{}{e}", super::cluster::ERROR)),
        }
        self.processes = c.processes();
    }

    fn cluster_outs(&mut self, c: &Cluster) -> Result<Vec<WorkerOut>, String> {
        let key = run_key(self.spec, self.opts, self.st.max_states);
        let sockets = c.connect(key)?;
        let hooks = Hooks::default();
        let allocators = ProcessBuilder::new_typed_vector(c.threads, hooks.refill.clone(), None);
        let (builders, guard) = initialize_networking_from_sockets(allocators, sockets, c.process, c.threads, hooks)
            .map_err(|e| format!("process {} ({}): starting the network: {e}", c.process, c.addresses[c.process]))?;
        let builders: Vec<AllocatorBuilder> = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
        let spec: Spec<M> = self.spec.clone();
        let opts = Options { progress: None, cluster: None, ..self.opts.clone() };
        let (engine, max_states, threads) = (self.engine, self.st.max_states, c.threads);
        let with_graph = self.spec.invariants.contains(&M::PROGRESS) || lasso_checked(self.spec);
        let lose = self.opts.reduce.defect == Some(ReductionDefect::ClusterLosesSentStates);
        let guards =
            timely::execute::execute_from(builders, Box::new(guard), WorkerConfig::default(), move |worker| {
                // A worker's search borrows its spec and options for as long as the dataflow that
                // drives it lives: leaked, a few kilobytes a run.
                let spec: &'static Spec<M> = Box::leak(Box::new(spec.clone()));
                let opts: &'static Options = Box::leak(Box::new(opts.clone()));
                let (index, peers) = (worker.index(), worker.peers());
                let search = Rc::new(RefCell::new({
                    let mut s = Search::new(spec, engine, opts, max_states.map(|m| m.div_ceil(peers as u64)));
                    s.st.shared = Some(Arc::new(Shared::new(1)));
                    s.st.graph = with_graph.then(Graph::default);
                    s.st.owner = Some((index, peers));
                    s
                }));
                let sent = Rc::new(RefCell::new((0u64, 0u64)));
                let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Msg>>> = InputHandle::new();
                let probe = ProbeHandle::new();
                let (s2, sent2) = (Rc::clone(&search), Rc::clone(&sent));
                worker.dataflow::<u64, _, _>(|scope| {
                    let start = scope.input_from(&mut input);
                    let (handle, cycle) = scope.feedback::<Vec<Msg>>(1u64);
                    start
                        .concat(cycle)
                        .unary(Exchange::new(|m: &Msg| m.0), "explore", move |_, _| {
                            let mut halted = false;
                            move |input, output| {
                                input.for_each(|cap, data| {
                                    let mut out: Vec<Msg> = Vec::new();
                                    let mut s = s2.borrow_mut();
                                    for (_, kind, fp, sched) in data.drain(..) {
                                        if halted || kind == HALT {
                                            halted = true;
                                            continue;
                                        }
                                        s.explore_from((kind == CANDIDATE).then_some(fp), sched);
                                        let mut sent = sent2.borrow_mut();
                                        for (fp, sched) in s.st.outbox.drain(..) {
                                            let to = super::cluster::owner(fp, peers);
                                            if to / threads != index / threads {
                                                if lose && fp % 4 == 0 {
                                                    continue;
                                                }
                                                sent.0 += 1;
                                                sent.1 += 8 + 1 + 8 + 8 + sched.len() as u64;
                                            }
                                            out.push((to as u64, CANDIDATE, fp, sched));
                                        }
                                        if s.st.target.is_some() || s.st.stopped_by.is_some() || s.error.is_some() {
                                            halted = true;
                                            out.extend((0..peers as u64).map(|w| (w, HALT, 0, Vec::new())));
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
                    input.send((0, START, 0, Vec::new()));
                }
                drop(input);
                while !probe.done() {
                    worker.step_or_park(None);
                }

                // Every worker's counts and graph to worker 0.
                let parts = {
                    let mut s = search.borrow_mut();
                    let (n, b) = *sent.borrow();
                    s.parts(n, b)
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

    /// Search from the initial state (`None`) or from a state another worker sent.
    fn explore_from(&mut self, fp: Option<u64>, sched: Vec<u8>) {
        if self.st.target.is_some() || self.st.stopped_by.is_some() || self.error.is_some() {
            return;
        }
        match fp {
            None => {
                self.st.frames.clear();
                self.st.prefix = sched;
                self.st.root = None;
            }
            Some(fp) => {
                if self.st.shared.as_ref().is_some_and(|sh| sh.contains(fp)) {
                    return;
                }
                self.st.start_job(Job { prefix: sched, todo: u32::MAX });
                self.st.candidate = true;
            }
        }
        self.dfs();
    }

    /// This worker's counts and graph, as messages for worker 0.
    fn parts(&mut self, sent: u64, bytes: u64) -> Vec<Part> {
        let st = &mut self.st;
        let target = match st.target.take() {
            Some(Target::Safety { invariant, path }) => Some((invariant.to_string(), path)),
            // Cycles are found by worker 0, on the union of the graphs.
            Some(Target::Cycle { .. }) | None => None,
        };
        let graph = st.graph.take();
        let stats = Stats {
            executions: self.runner.executions,
            transitions: st.transitions,
            max_depth: st.max_depth as u64,
            coverage: names(&st.coverage),
            violated: names(&st.violated),
            first_violation: names(&st.first_violation),
            target,
            stopped_by: st.stopped_by.map(str::to_string),
            error: self.error.clone(),
            steps: (st.steps_total, st.steps_replayed, st.steps_tail),
            stored: st.stored,
            memory: st.memory_bytes(),
            sent,
            bytes,
            graph: graph.is_some(),
            initial: graph.as_ref().and_then(|g| g.initial),
            snapshots: (self.snapshotted, self.restores, self.snapshot_bytes),
        };
        let mut parts = vec![Part::Stats(Box::new(stats))];
        if let Some(g) = graph {
            parts.extend(g.nodes.chunks(CHUNK).map(|c| Part::Nodes(c.to_vec())));
            parts.extend(g.edges.chunks(CHUNK).map(|c| Part::Edges(c.to_vec())));
            let keys: Vec<(u64, u8, u64, u32)> =
                g.keys.iter().map(|(fp, k)| (*fp, k.class, k.key, k.must_move)).collect();
            parts.extend(keys.chunks(CHUNK).map(|c| Part::Keys(c.to_vec())));
        }
        parts
    }
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
                executions: s.executions,
                transitions: s.transitions,
                max_depth: s.max_depth as usize,
                coverage: unnames(s.coverage),
                violated: unnames(s.violated),
                first_violation: unnames(s.first_violation),
                target: s.target.map(|(i, path)| Target::Safety { invariant: intern(i), path }),
                stopped_by: s.stopped_by.map(intern),
                error: s.error,
                slept: 0,
                revisits: 0,
                steps: s.steps,
                stored: s.stored,
                graph: s.graph.then_some(g),
                memory: s.memory,
                sent: (s.sent, s.bytes),
                snapshots: s.snapshots,
            }
        })
        .collect()
}
