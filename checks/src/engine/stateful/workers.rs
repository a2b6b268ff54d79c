//! Many workers on one machine (`--workers N`; docs/model.md, "Many workers"): each is a thread
//! with its own coroutine runtime that searches from the states it is given, over one shared
//! visited table (`store.rs`) and one job market (`market.rs`). Safety violations stop every
//! worker. `progress` needs the strongly connected components of the whole state graph, which
//! no one worker sees: each records its part (`graph.rs`), and once the search is complete the
//! fair-cycle pass (`fair.rs`) runs over their union.
//!
//! A worker is anything that implements [`Worker`]: the search shell (`search.rs`) does, and the
//! cluster (`cluster_run.rs`) drives the same trait over timely dataflow.

use std::sync::Arc;

use super::cluster_fair::Decided;
use super::findings::Findings;
use super::graph::Graph;
use super::market::{Job, Market};
use super::snapshots::SnapStats;

/// Where a worker's next search starts.
pub(super) enum Begin {
    /// The initial state, reached by this schedule (empty).
    Initial(Vec<u8>),
    /// A job another worker of this process gave away.
    Job(Job),
    /// A state another process sent (cluster.rs): a job of every transition, whose arrival the
    /// sender counted; it is searched only if it is new here.
    Candidate(Job),
}

/// Candidates sent to workers of other processes, and their bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sent {
    pub states: u64,
    pub bytes: u64,
}

/// What one worker found, for the search that started it.
pub(super) struct WorkerOut {
    pub found: Findings,
    pub executions: u64,
    pub error: Option<String>,
    pub graph: Option<Graph>,
    /// In a cluster: the worker's visited table's and stacks' bytes, and what it sent to other
    /// processes.
    pub memory: u64,
    pub sent: Sent,
    pub snapshots: SnapStats,
    /// In a cluster: what the distributed fair-cycle pass decided and cost this worker.
    pub pass: Option<Decided>,
}

/// One worker's search.
pub(super) trait Worker {
    /// Search from `begin` until its job is done or the search must stop.
    fn search(&mut self, begin: Begin);
    /// A decisive violation, a budget or an error: every worker must stop.
    fn halted(&self) -> bool;
    /// Whether it stored the state `fp` (a cluster's candidate it already has).
    fn knows(&self, fp: u64) -> bool;
    /// The states it found that workers of other processes own, with their schedules.
    fn take_outbox(&mut self) -> Vec<(u64, Vec<u8>)>;
    /// What it found.
    fn finish(self) -> WorkerOut;
}

/// Run `workers` workers made by `make` (given their index) on as many threads: worker 0 starts
/// at the initial state, the others take jobs from `market` until the search is complete or
/// stopped.
pub(super) fn run<W: Worker>(workers: usize, market: &Arc<Market>, make: impl Fn(usize) -> W + Sync) -> Vec<WorkerOut> {
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let market = Arc::clone(market);
                let make = &make;
                sc.spawn(move || {
                    // A worker that panics (an engine bug) stops the others, which would
                    // otherwise wait for it for ever; its panic is then re-raised below.
                    struct HaltOnPanic<'s>(&'s Market);
                    impl Drop for HaltOnPanic<'_> {
                        fn drop(&mut self) {
                            if std::thread::panicking() {
                                self.0.halt();
                            }
                        }
                    }
                    let _halt = HaltOnPanic(&market);
                    let mut s = make(w);
                    let mut begin = (w == 0).then(|| Begin::Initial(Vec::new()));
                    loop {
                        let b = match begin.take() {
                            Some(b) => b,
                            None => match market.take() {
                                Some(job) => Begin::Job(job),
                                None => break,
                            },
                        };
                        s.search(b);
                        if s.halted() {
                            market.halt();
                            break;
                        }
                    }
                    s.finish()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    })
}

/// The workers' outcomes as one search's.
pub(super) struct Merged {
    pub found: Findings,
    pub executions: u64,
    pub error: Option<String>,
    pub graphs: Vec<Graph>,
    pub sent: Sent,
    pub snapshots: SnapStats,
    pub memory: u64,
    /// The fewest and most states one worker stored.
    pub stored_min: u64,
    pub stored_max: u64,
}

/// Counts summed, the first target and error kept, the graphs gathered.
pub(super) fn merge(outs: Vec<WorkerOut>) -> Merged {
    let mut m = Merged {
        found: Findings::default(),
        executions: 0,
        error: None,
        graphs: Vec::new(),
        sent: Sent::default(),
        snapshots: SnapStats::default(),
        memory: 0,
        stored_min: outs.iter().map(|o| o.found.stored).min().unwrap_or(0),
        stored_max: outs.iter().map(|o| o.found.stored).max().unwrap_or(0),
    };
    for o in outs {
        m.executions += o.executions;
        m.found.merge(o.found);
        m.error = m.error.take().or(o.error);
        m.graphs.extend(o.graph);
        m.sent.states += o.sent.states;
        m.sent.bytes += o.sent.bytes;
        m.snapshots.merge(o.snapshots);
        m.memory += o.memory;
    }
    m
}
