//! The search shell: builds a search from a spec and options (its state space, its explorer,
//! its driver), runs it on one thread, on many (`workers.rs`) or over a cluster
//! (`cluster_run.rs`), makes its counterexample shortest (`shortest.rs`) and reports. See the
//! module docs of [`super`] for the layers.

use std::sync::Arc;
use std::time::Instant;

use mmmodel::model::Named;

use super::closed::Closed;
use super::cluster::{self, Cluster};
use super::cluster_fair::Decided;
use super::cluster_run::FairPass;
use super::dfs::shared::Shared;
use super::dfs::sleep::{Sleep, SleepStore};
use super::dfs::tarjan::Tarjan;
use super::dfs::{Ctx, Explorer, JobStart, PersistentSets};
use super::fair::{fair_components, Inconclusive};
use super::findings::{cycles_checked, lasso_checked, Counts, Findings, Target};
use super::graph::Graph;
use super::links::Numbering;
use super::market::Market;
use super::replay::Clock;
use super::schedule::REPLAY_DIVERGED;
use super::shortest::{report, Shortest};
use super::snapshots::SnapStats;
use super::space::Runner;
use super::store::{available_memory, Budget, Sharded};
use super::symmetry::{self, Canon};
use super::table::FpTable;
use super::workers::{self, Begin, Sent, Worker, WorkerOut};
use super::{cluster_run, persistent, por, replay, snapshots};
use crate::engine::types::{Engine, Memory, Options, Outcome, Reduce, ReductionDefect, Replay, StateStats};
use crate::monitor::Checked;
use crate::spec::Spec;

/// The explorer a search runs (`dfs/`), chosen once when it is built.
enum Explorers<M: Checked> {
    Tarjan(Tarjan),
    Sleep(Sleep<M>),
    Shared(Shared),
}

/// One search (or one worker's).
pub(super) struct Search<'a, M: Checked> {
    spec: &'a Spec<M>,
    opts: &'a Options,
    engine: Engine,
    runner: Runner<M>,
    cx: Ctx<'a, M>,
    explorer: Explorers<M>,
    clock: Clock,
    error: Option<String>,
    census: bool,
    por: bool,
    symmetry_group: usize,
    symmetry_not_applied: Option<&'static str>,
    por_not_applied: Option<&'static str>,
    persistent_not_applied: Option<&'static str>,
    /// Which tasks' starts are local has been learnt (`PersistentSets::local_starts`).
    starts_learnt: bool,
    /// Snapshots: why the search replays instead, if it does; what they did.
    snapshot_not_applied: Option<&'static str>,
    snaps: SnapStats,
    /// Workers that searched, and the fewest and most states one of them stored.
    workers: usize,
    worker_states: (u64, u64),
    /// After several workers or processes: the states stored and the bytes they took, over
    /// all of them.
    totals: Option<(u64, u64)>,
    /// In a cluster: processes, whether this process only helped (process 0 reports), the
    /// candidates sent to other processes.
    processes: usize,
    cluster_follower: bool,
    sent: Sent,
    /// The fair-cycle pass over the stored graph, after the search (one thread; in a cluster,
    /// the distributed pass too).
    cycle_pass_seconds: f64,
    /// The states that pass trimmed on the workers' threads before Tarjan (`trim.rs`).
    cycle_pass_trimmed: u64,
    /// In a cluster: the distributed fair-cycle pass (`cluster_fair/`).
    distributed: Distributed,
}

/// What a cluster's distributed fair-cycle pass decided and cost, over every process.
#[derive(Debug, Clone, Copy, Default)]
struct Distributed {
    /// It decided (no component may hold a fair cycle): no graph was gathered.
    decided: bool,
    rounds: u64,
    /// The graph's bytes over every worker; the most one process held, graph and pass (the
    /// whole graph on process 0 if it was gathered).
    graph_bytes: u64,
    held_max: u64,
}

impl Distributed {
    /// Over every worker's outcome; `threads`: workers a process.
    fn of(outs: &[WorkerOut], threads: usize) -> Self {
        let passes: Vec<(usize, Decided)> = outs.iter().enumerate().filter_map(|(w, o)| Some((w, o.pass?))).collect();
        if passes.is_empty() {
            return Distributed::default();
        }
        let threads = threads.max(1);
        let mut held = vec![0u64; outs.len().div_ceil(threads)];
        for &(w, d) in &passes {
            held[w / threads] += d.graph_bytes + d.bytes;
        }
        let graph_bytes = passes.iter().map(|(_, d)| d.graph_bytes).sum();
        let decided = passes.iter().all(|(_, d)| d.ran && !d.gather);
        if passes.iter().any(|(_, d)| d.gather) {
            held[0] += graph_bytes;
        }
        Distributed {
            decided,
            rounds: passes.iter().map(|(_, d)| d.rounds).max().unwrap_or(0),
            graph_bytes,
            held_max: held.into_iter().max().unwrap_or(0),
        }
    }
}

impl<'a, M: Checked> Search<'a, M> {
    pub fn new(spec: &'a Spec<M>, engine: Engine, opts: &'a Options, max_states: Option<u64>) -> Self {
        let clock = Clock::new();
        let memory = match engine {
            Engine::Stateful { memory, .. } => memory,
            _ => Memory::Sc,
        };
        let group = symmetry::group(spec, opts, memory);
        let census = opts.orbit_census;
        let snapshot_not_applied = if !opts.reduce.snapshot {
            Some("not asked for (reduce without \"snapshot\", or --no-reduce)")
        } else if opts.live_census {
            Some("a live-locals census (a snapshot does not hold the shadow hashes)")
        } else {
            None
        };
        let por = por::applies(spec, opts, memory);
        let persistent = persistent::applies(spec, opts, memory);
        let symmetry_group = group.size();
        // A census stores every state: `progress` is decided on the whole graph.
        let canon = if census { Canon::default() } else { Canon::new(&group.images) };
        let runner = Runner::new(spec, opts, &group.images, group.perms, por.is_ok(), memory);
        let explorer = if por.is_ok() {
            Explorers::Sleep(Sleep::new(SleepStore::Own(FpTable::default())))
        } else {
            Explorers::Tarjan(Tarjan::new(census, opts.live_census))
        };
        Search {
            spec,
            opts,
            engine,
            runner,
            cx: Ctx {
                spec,
                budget: Budget::new(max_states, available_memory()),
                defect: opts.reduce.defect,
                found: Findings::default(),
                canon,
                inconclusive: false,
                job: JobStart::default(),
                began: false,
                tasks_mask: 0,
                market: None,
                persistent: PersistentSets {
                    on: persistent.is_ok(),
                    local_starts: 0,
                    yields: persistent.is_ok() && por.is_ok() && opts.workers <= 1,
                },
                check_inert: opts.check_inert,
            },
            explorer,
            clock,
            error: None,
            census,
            por: por.is_ok(),
            symmetry_group,
            symmetry_not_applied: group.not_applied,
            por_not_applied: por.err(),
            persistent_not_applied: persistent.err(),
            starts_learnt: false,
            snapshot_not_applied,
            snaps: SnapStats::default(),
            workers: 1,
            worker_states: (0, 0),
            totals: None,
            processes: 1,
            cluster_follower: false,
            sent: Sent::default(),
            cycle_pass_seconds: 0.0,
            cycle_pass_trimmed: 0,
            distributed: Distributed::default(),
        }
    }

    /// One of several workers: the shared table, the market (`None` in a cluster, whose
    /// processes trade states, not jobs), the graph if a cycle invariant is checked, and in a
    /// cluster its index among all workers (else its index among this process's workers, and
    /// their number, by which it numbers the states of its graph).
    pub fn worker(
        mut self,
        table: Arc<Sharded>,
        market: Option<Arc<Market>>,
        owner: Option<(usize, usize)>,
        me: (usize, usize),
        closed: Option<Arc<Closed>>,
    ) -> Self {
        self.cx.market = market;
        let graph = cycles_checked(self.spec).then(|| match owner {
            Some(_) => Graph::default(),
            None => Graph::numbered(Numbering::new(me.0, me.1)),
        });
        self.explorer = if self.por {
            Explorers::Sleep(Sleep::new(SleepStore::Shared(table)))
        } else {
            Explorers::Shared(Shared::new(table, graph, owner, closed, self.cx.defect))
        };
        self
    }

    /// States stored, and the bytes of the tables and stacks: over every worker or process
    /// after several, else this search's explorer's.
    fn totals(&self) -> (u64, u64) {
        self.totals.unwrap_or_else(|| match &self.explorer {
            Explorers::Tarjan(e) => (Explorer::<M>::states(e), Explorer::<M>::memory_bytes(e)),
            Explorers::Sleep(e) => (e.states(), e.memory_bytes()),
            Explorers::Shared(e) => (Explorer::<M>::states(e), Explorer::<M>::memory_bytes(e)),
        })
    }

    /// Whether `progress` must also be fair to memory (`memory = "lkmm"`): its fair cycles are
    /// then decided on the stored graph, whose stale reads `fair.rs` leaves out (one search's
    /// Tarjan cannot).
    fn memory_fair(&self) -> bool {
        matches!(self.engine, Engine::Stateful { memory: Memory::Lkmm, .. }) && cycles_checked(self.spec)
    }

    /// The depth-first search of the job `cx` holds, by snapshots where they apply (and the
    /// job starts at the initial state or replays its schedule once), otherwise by replaying.
    fn dfs(&mut self) {
        if self.cx.persistent.on && !self.starts_learnt {
            self.cx.persistent.local_starts = self.runner.local_starts(self.cx.defect);
            self.starts_learnt = true;
        }
        let job = self.cx.job.prefix.is_empty() || self.cx.job.root.is_some();
        let by_snapshots = self.snapshot_not_applied.is_none() && job;
        let Search { cx, runner, opts, clock, snaps, explorer, .. } = self;
        let error = match explorer {
            Explorers::Tarjan(ex) => drive(cx, ex, runner, opts, clock, snaps, by_snapshots),
            Explorers::Sleep(ex) => drive(cx, ex, runner, opts, clock, snaps, by_snapshots),
            Explorers::Shared(ex) => drive(cx, ex, runner, opts, clock, snaps, by_snapshots),
        };
        if error.is_some() {
            self.error = error;
        }
    }

    /// The search with `workers` threads, then, if a cycle invariant is checked, the fair
    /// components of the graph they recorded.
    fn parallel(&mut self, workers: usize) {
        let market = Arc::new(Market::new(workers));
        let table = Arc::new(Sharded::default());
        let closed = Arc::new(Closed::new(workers));
        let quiet = Options { progress: None, ..self.opts.clone() };
        let (spec, engine, max_states, opts) = (self.spec, self.engine, self.cx.budget.max_states, self.opts);
        let outs = workers::run(workers, &market, |w| {
            let opts = if w == 0 { opts } else { &quiet };
            Search::new(spec, engine, opts, max_states).worker(
                Arc::clone(&table),
                Some(Arc::clone(&market)),
                None,
                (w, workers),
                Some(Arc::clone(&closed)),
            )
        });
        // The fair-cycle pass names the states from the table only if a component needs their
        // names (`Stored::name_from`).
        let totals = (table.len(), table.bytes());
        self.merge(outs, workers, Some(&table));
        drop(table);
        self.totals = Some(totals);
    }

    /// The search over a cluster (cluster.rs). Process 0 ends with the merged outcome, the
    /// others with none of it (they print nothing).
    fn cluster(&mut self, c: &Cluster) {
        let (engine, max_states) = (self.engine, self.cx.budget.max_states);
        let spec: Spec<M> = self.spec.clone();
        // No sleep sets: they do not travel with a state sent to its owner (por.rs), and a
        // worker that used them would search alone, its table never consulting owners.
        let reduce = Reduce { por: false, ..self.opts.reduce };
        let opts = Options { progress: None, cluster: None, reduce, ..self.opts.clone() };
        // A worker's search borrows its spec and options for as long as the dataflow that
        // drives it lives: leaked, a few kilobytes a run.
        let make = move |index: usize, peers: usize| {
            let spec: &'static Spec<M> = Box::leak(Box::new(spec.clone()));
            let opts: &'static Options = Box::leak(Box::new(opts.clone()));
            let max_states = max_states.map(|m| m.div_ceil(peers as u64));
            Search::new(spec, engine, opts, max_states).worker(
                Arc::new(Sharded::default()),
                None,
                Some((index, peers)),
                (index, peers),
                None,
            )
        };
        // The fair cycles are decided by the workers together, unless symmetry reduced the
        // graph (its components are then tested closed under the group, on process 0).
        let fair_pass = (cycles_checked(self.spec) && self.cx.canon.is_identity()).then_some(FairPass {
            with_stale: self.cx.defect == Some(ReductionDefect::FairnessIgnoresStaleReads),
            drop_remote_back: self.cx.defect == Some(ReductionDefect::ClusterPassDropsRemoteBack),
        });
        match cluster_run::outs(self.spec, self.opts, max_states, fair_pass, c, make) {
            Ok(outs) if c.process == 0 => {
                let peers = c.processes() * c.threads;
                let stored = outs.iter().map(|o| o.found.stored).sum();
                self.distributed = Distributed::of(&outs, c.threads);
                let seconds = outs.iter().filter_map(|o| o.pass).map(|d| d.seconds).fold(0.0, f64::max);
                let memory = self.merge(outs, peers, None);
                self.cycle_pass_seconds += seconds;
                self.totals = Some((stored, memory));
            }
            Ok(_) => self.cluster_follower = true,
            Err(e) => self.error = Some(format!("{}{e}", cluster::ERROR)),
        }
        self.processes = c.processes();
    }

    /// What the workers found, as one search's, then (if a cycle invariant is checked and
    /// nothing stopped the search) the fair components of the graph they recorded together.
    /// The bytes the workers said they took.
    fn merge(&mut self, outs: Vec<WorkerOut>, workers: usize, table: Option<&Sharded>) -> u64 {
        let mut m = workers::merge(outs);
        self.workers = workers;
        self.worker_states = (m.stored_min, m.stored_max);
        self.runner.executions += m.executions;
        self.cx.found.merge(m.found);
        self.error = self.error.take().or(m.error);
        self.sent.states += m.sent.states;
        self.sent.bytes += m.sent.bytes;
        self.snaps.merge(m.snapshots);
        if cycles_checked(self.spec) && !self.cx.found.halted() && self.error.is_none() {
            let pass = Instant::now();
            let cx = &mut self.cx;
            match fair_components(cx.spec, &cx.canon, cx.defect, std::mem::take(&mut m.graphs), table, &mut cx.found) {
                Ok(trimmed) => self.cycle_pass_trimmed = trimmed,
                Err(Inconclusive) => cx.inconclusive = true,
            }
            self.cycle_pass_seconds = pass.elapsed().as_secs_f64();
        }
        m.memory
    }

    /// The search's outcome, and whether symmetry must be switched off to decide `progress`.
    pub fn run(mut self) -> (Outcome, bool) {
        let mut found = None;
        if let Some(Replay::Schedule { choices, cycle }) = self.opts.replay.clone() {
            let r = self.runner.record(self.spec, &choices, cycle);
            if let Some(d) = r.diverged {
                // A token edited by hand (its last word hashes the scenario, not the schedule).
                self.error = Some(format!("{REPLAY_DIVERGED}: {d}"));
            } else {
                self.cx.found.coverage = Counts::from_map(&r.coverage);
                found = Some(report(self.spec, &mut self.cx.found, &mut self.error, r, choices, cycle, None));
            }
        } else {
            // A lasso invariant is decided on the stored graph (`fair_components`), so its
            // search takes the path of many workers, with one worker if one was asked for.
            if let Some(c) = self.opts.cluster.clone() {
                self.cluster(&c);
            } else if (self.opts.workers > 1 || lasso_checked(self.spec) || self.memory_fair())
                && !self.census
                && !self.opts.live_census
            {
                // (A census, orbits or live locals, counts on one search's table: it takes the
                // one-thread path whatever the workers, and under `lkmm` its Tarjan also
                // counts cycles of stale reads as livelocks; only its count is used.)
                self.parallel(self.opts.workers.max(1));
            } else {
                self.dfs();
            }
            if self.error.is_none() && !self.cx.inconclusive {
                let what = match &self.cx.found.target {
                    Some(Target::Safety { invariant, .. }) => Some(*invariant),
                    Some(Target::Cycle { .. }) => Some(M::PROGRESS.name()),
                    None => None,
                };
                let mut probes = Shortest { runner: &mut self.runner, spec: self.spec, identity: self.census };
                found = probes.shortest(&mut self.cx.found, &mut self.error);
                if let (Some(inv), None, None) = (what, &found, &self.error) {
                    self.error = Some(format!(
                        "the search found a violation of {inv} but replaying it did not reproduce it (a \
                         nondeterminism in the model, or an engine bug)"
                    ));
                }
            }
        }
        // A cluster's process other than 0 helped with a search whose outcome is process 0's.
        let complete = self.cx.found.stopped_by.is_none()
            && self.error.is_none()
            && found.is_none()
            && self.opts.replay.is_none()
            && !self.cluster_follower;
        let (states, memory_bytes) = self.totals();
        let n = states as f64;
        let orbit_census = match &self.explorer {
            Explorers::Tarjan(t) => t.census.as_ref().map(|c| c.report(self.symmetry_group, &t.visited)),
            _ => None,
        };
        let live_census = match &self.explorer {
            Explorers::Tarjan(t) => t.live_census.as_ref().map(|s| s.len() as u64),
            _ => None,
        };
        let stats = StateStats {
            live_census,
            states,
            transitions: self.cx.found.transitions,
            max_depth: self.cx.found.max_depth,
            memory_bytes,
            collision_probability: n * (n - 1.0).max(0.0) / 2f64.powi(65),
            stopped_by: self.cx.found.stopped_by,
            reductions: match (self.symmetry_group > 1 && !self.census, self.por, self.snaps.taken) {
                (false, false, false) => "none",
                (true, false, false) => "symmetry",
                (false, true, false) => "por",
                (true, true, false) => "symmetry+por",
                (false, false, true) => "snapshot",
                (false, true, true) => "por+snapshot",
                (true, false, true) => "symmetry+snapshot",
                (true, true, true) => "symmetry+por+snapshot",
            },
            live_locals: self.runner.ghost.live_locals_applied(),
            projection: self.runner.ghost.projection() != 0,
            persistent: self.cx.persistent.on,
            persistent_not_applied: self.persistent_not_applied,
            persistent_states: self.cx.found.persistent,
            snapshot_not_applied: self.snapshot_not_applied,
            restores: self.snaps.restores,
            snapshot_bytes: self.snaps.peak_bytes,
            symmetry_group: self.symmetry_group,
            symmetry_sorted: self.symmetry_group > 1 && !self.census && self.opts.reduce.sorted_symmetry,
            symmetry_not_applied: self.symmetry_not_applied,
            por_not_applied: self.por_not_applied,
            slept: self.cx.found.slept,
            revisits: self.cx.found.revisits,
            inert_shortcuts: self.cx.found.inert,
            inert_disagreements: self.cx.found.inert_disagreements,
            steps: self.cx.found.steps.total,
            replayed_steps: self.cx.found.steps.replayed,
            tail_steps: self.cx.found.steps.tail,
            workers: self.workers.max(1),
            worker_states_min: self.worker_states.0,
            worker_states_max: self.worker_states.1,
            processes: self.processes,
            cluster_follower: self.cluster_follower,
            states_sent: self.sent.states,
            bytes_sent: self.sent.bytes,
            cycle_pass_seconds: self.cycle_pass_seconds,
            cycle_pass_trimmed: self.cycle_pass_trimmed,
            closed_on_the_fly: self.cx.found.closed,
            cycle_pass_distributed: self.distributed.decided,
            cycle_pass_rounds: self.distributed.rounds,
            graph_bytes: self.distributed.graph_bytes,
            graph_bytes_max_process: self.distributed.held_max,
            orbit_census,
        };
        let outcome = Outcome {
            engine: self.engine,
            executions: self.runner.executions,
            seconds: self.clock.start.elapsed().as_secs_f64(),
            complete,
            found,
            violated: self.cx.found.violated,
            first_violation: self.cx.found.first_violation,
            coverage: self.cx.found.coverage.to_map(),
            error: self.error,
            // The online monitors are this engine's only monitors: nothing to compare.
            online_checked: 0,
            stats: Some(stats),
        };
        (outcome, self.cx.inconclusive)
    }
}

/// One job's search by `ex`, by snapshots or by replaying; the error, if any.
fn drive<M: Checked, E: Explorer<M>>(
    cx: &mut Ctx<'_, M>,
    ex: &mut E,
    runner: &mut Runner<M>,
    opts: &Options,
    clock: &mut Clock,
    snaps: &mut SnapStats,
    by_snapshots: bool,
) -> Option<String> {
    if by_snapshots {
        snapshots::run(cx, ex, runner, opts, clock, snaps)
    } else {
        replay::run(cx, ex, runner, opts, clock)
    }
}

impl<M: Checked> Worker for Search<'_, M> {
    fn search(&mut self, begin: Begin) {
        if self.halted() {
            return;
        }
        let (prefix, root, candidate) = match begin {
            Begin::Initial(prefix) => (prefix, None, false),
            Begin::Job(job) => (job.prefix, Some(job.todo), false),
            Begin::Candidate(job) => (job.prefix, Some(job.todo), true),
        };
        match &mut self.explorer {
            Explorers::Tarjan(e) => Explorer::<M>::clear(e),
            Explorers::Sleep(e) => e.clear(),
            Explorers::Shared(e) => Explorer::<M>::clear(e),
        }
        self.cx.job.prefix = prefix;
        self.cx.job.root = root;
        self.cx.job.candidate |= candidate;
        self.dfs();
    }

    fn halted(&self) -> bool {
        self.cx.found.halted() || self.error.is_some()
    }

    fn knows(&self, fp: u64) -> bool {
        match &self.explorer {
            Explorers::Shared(e) => e.table.contains(fp),
            _ => false,
        }
    }

    fn take_outbox(&mut self) -> Vec<(u64, Vec<u8>)> {
        match &mut self.explorer {
            Explorers::Shared(e) => std::mem::take(&mut e.outbox),
            _ => Vec::new(),
        }
    }

    fn finish(mut self) -> WorkerOut {
        let memory = self.totals().1;
        let graph = match &mut self.explorer {
            Explorers::Shared(e) => {
                self.cx.found.closed += std::mem::take(&mut e.closed_here);
                e.graph.take()
            }
            _ => None,
        };
        WorkerOut {
            found: self.cx.found,
            executions: self.runner.executions,
            error: self.error,
            graph,
            memory,
            sent: Sent::default(),
            snapshots: self.snaps,
            pass: None,
        }
    }
}
