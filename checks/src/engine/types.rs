//! The engines' vocabulary: which engine, the options of a run, what it found and the
//! stateful engine's figures. Every other part of the checker names these; this file names
//! nothing of theirs but the trace, the monitors' violations and the cluster's address book.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use super::names::EngineName;
use super::stateful::cluster::Cluster;
use crate::monitor::Violation;
use crate::trace::Trace;
use mmmodel::ghost::Pid;

/// Which explorer, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// Loom: every interleaving (DPOR); `preemption_bound` limits preemptions per execution.
    Loom { preemption_bound: Option<usize> },
    /// Shuttle's PCT scheduler (probabilistic concurrency testing) with bug depth `depth`.
    ShuttlePct { iterations: usize, depth: usize, seed: u64 },
    /// Shuttle's uniformly random scheduler.
    ShuttleRandom { iterations: usize, seed: u64 },
    /// Shuttle's depth-first enumeration (no partial-order reduction), at most `iterations`.
    ShuttleDfs { iterations: usize },
    /// The stateful engine: a depth-first search over every scheduling choice of the
    /// protocol code on the stateful platform, storing the states it has explored (at most
    /// `max_states`), with exact livelock (fair cycle) detection, under `memory`.
    Stateful { max_states: Option<u64>, memory: Memory },
}

/// The memory model the stateful engine explores (`[explore] memory`, `--memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Memory {
    /// Sequential consistency: every access is one step in one global order.
    #[default]
    Sc,
    /// The Linux-kernel memory model, operationally (docs/model.md, "The kernel's memory
    /// model"): per-location store histories and per-task views; no load buffering.
    Lkmm,
}

impl Memory {
    pub const ALL: [Memory; 2] = [Memory::Sc, Memory::Lkmm];
    pub fn name(self) -> &'static str {
        match self {
            Memory::Sc => "sc",
            Memory::Lkmm => "lkmm",
        }
    }
    pub fn from_name(s: &str) -> Option<Memory> {
        Memory::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl Engine {
    pub fn kind(&self) -> EngineName {
        match self {
            Engine::Loom { .. } => EngineName::Loom,
            Engine::ShuttlePct { .. } => EngineName::ShuttlePct,
            Engine::ShuttleRandom { .. } => EngineName::ShuttleRandom,
            Engine::ShuttleDfs { .. } => EngineName::ShuttleDfs,
            Engine::Stateful { .. } => EngineName::Stateful,
        }
    }
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// Does a pass from this engine cover every interleaving (within its bound)?
    pub fn is_exhaustive(&self) -> bool {
        matches!(self, Engine::Loom { .. } | Engine::ShuttleDfs { .. } | Engine::Stateful { .. })
    }
    /// Most threads a scenario may have under this engine.
    pub fn max_threads(&self) -> usize {
        match self {
            // loom::MAX_THREADS is 5; the last role runs on loom's main thread.
            Engine::Loom { .. } => 5,
            // The stateful platform's body is task 0 and runs the last role, so every role
            // is a task of its own but for one: as many as the ghost tracks.
            _ => mmmodel::ghost::MAX_TASKS,
        }
    }
    /// The memory model the engine explores: `c11` (loom's C11 subset: SeqCst treated as AcqRel,
    /// no load buffering), `sc` (sequential consistency) or `lkmm` (stateful under `lkmm`).
    pub fn memory_model(&self) -> &'static str {
        match self {
            Engine::Loom { .. } => "c11",
            Engine::Stateful { memory, .. } => memory.name(),
            _ => "sc",
        }
    }
    /// The engine with its bound, in a few characters: `loom`, `loom pb3`, `pct d8`,
    /// `random`, `dfs`, `stateful`.
    pub fn short(&self) -> String {
        match *self {
            Engine::Loom { preemption_bound: None } => "loom".into(),
            Engine::Loom { preemption_bound: Some(b) } => format!("loom pb{b}"),
            Engine::ShuttlePct { depth, .. } => format!("pct d{depth}"),
            Engine::ShuttleRandom { .. } => "random".into(),
            Engine::ShuttleDfs { .. } => "dfs".into(),
            Engine::Stateful { .. } => "stateful".into(),
        }
    }
    /// The memory model in words.
    pub fn memory_model_name(&self) -> &'static str {
        match self {
            Engine::Loom { .. } => "loom's C11 subset",
            Engine::Stateful { memory: Memory::Lkmm, .. } => "the kernel's memory model (LKMM, no load buffering)",
            _ => "sequentially consistent",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Engine::Loom { preemption_bound: None } => write!(f, "loom"),
            Engine::Loom { preemption_bound: Some(b) } => write!(f, "loom(pb={b})"),
            Engine::ShuttlePct { iterations, depth, seed } => {
                write!(f, "shuttle-pct(n={iterations},d={depth},seed={seed})")
            }
            Engine::ShuttleRandom { iterations, seed } => write!(f, "shuttle-random(n={iterations},seed={seed})"),
            Engine::ShuttleDfs { iterations } => write!(f, "shuttle-dfs(n={iterations})"),
            Engine::Stateful { max_states: None, memory: Memory::Sc } => write!(f, "stateful"),
            Engine::Stateful { max_states: Some(n), memory: Memory::Sc } => write!(f, "stateful(max_states={n})"),
            Engine::Stateful { max_states: None, memory: Memory::Lkmm } => write!(f, "stateful(memory=lkmm)"),
            Engine::Stateful { max_states: Some(n), memory: Memory::Lkmm } => {
                write!(f, "stateful(max_states={n},memory=lkmm)")
            }
        }
    }
}

/// What a replay reproduces.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Replay {
    /// Execution `n` of an exploration that enumerates executions in a fixed order (loom,
    /// shuttle with its seed).
    Execution(u64),
    /// A schedule: the task chosen at every scheduling point (the stateful engine); with
    /// `cycle`, the choices from that position on repeat for ever (a lasso).
    Schedule { choices: Vec<u8>, cycle: Option<usize> },
}

/// How far an exploration has got (for progress bars).
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    pub executions: u64,
    pub seconds: f64,
    /// Stateful engine: distinct states stored, and the current depth.
    pub states: Option<u64>,
    pub depth: Option<usize>,
}

/// Called now and then with how far an exploration has got.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// How long to look and what to report along the way.
#[derive(Clone)]
pub struct Options {
    /// Stop (verdict `incomplete` unless a violation was found) after this long.
    pub max_duration: Option<Duration>,
    /// After a violation, keep exploring this many more executions for a shorter one.
    pub shortest_budget: u64,
    /// Replay this and report exactly it.
    pub replay: Option<Replay>,
    /// Called now and then with how far the exploration has got.
    pub progress: Option<ProgressFn>,
    /// Run the online monitors too on every execution and compare them with the trace
    /// monitors (`monitor::online::agree`): the first execution on which they disagree stops
    /// the exploration with an error ([`Outcome::error`]) that names it and the difference.
    pub check_online: bool,
    /// Stateful engine: keep every task's whole history in the state, ignoring the models' loop
    /// summaries (the reference the summaries are checked against; it does not end where a
    /// loop can run for ever).
    pub history_only: bool,
    /// Stateful engine: the reductions to apply where they are sound.
    pub reduce: Reduce,
    /// Stateful engine, for tests only: search the whole state graph (no reduction of the
    /// visited set) while computing, for every state, its least fingerprint over the images
    /// under the symmetry group the reduced search would use, and report the number of
    /// distinct ones ([`StateStats::orbit_census`]): the exact oracle of the symmetry
    /// reduction (checks/tests/reduction_soundness.rs). Off in every user's run.
    #[doc(hidden)]
    pub orbit_census: bool,
    /// Stateful engine, for tests only: search without applying the models' live-locals
    /// declarations (no symmetry, no partial-order reduction, no snapshots) while computing,
    /// for every state, the fingerprint the search that applies them would give it, and report
    /// the number of distinct ones ([`StateStats::live_census`]): the exact oracle of the
    /// reduction `live-locals` (checks/tests/stateful_soundness.rs). Off in every user's run.
    #[doc(hidden)]
    pub live_census: bool,
    /// Stateful engine, for tests only: the partial-order reduction checks on the monitors
    /// the steps it takes as commuting because their events are inert
    /// ([`crate::monitor::online::Online::inert`]), uses the full check's answer, and counts
    /// where the two differ ([`StateStats::inert_disagreements`]): the oracle of each
    /// model's declaration (checks/tests/por_soundness.rs). Off in every user's run.
    #[doc(hidden)]
    pub check_inert: bool,
    /// Stateful engine, for tests only: the bytes the snapshots on the search path may hold
    /// (default: a sixteenth of the memory available, at most 1 GiB), so that a test can make
    /// the search restore a snapshot above a state and replay from there.
    #[doc(hidden)]
    pub snapshot_cap: Option<usize>,
    /// Stateful engine: search with this many worker threads sharing one visited table
    /// (`--workers N`; docs/model.md, "Many workers"). 0 and 1 both mean one.
    pub workers: usize,
    /// Stateful engine: search over a cluster of processes (`--processes`, `--local-cluster`;
    /// docs/model.md, "Many machines"), `workers` threads in each.
    pub cluster: Option<Arc<Cluster>>,
}

/// The stateful engine's reductions (`[explore] reduce`, `--no-reduce`): each is applied only
/// where it is sound, and the outcome says which ran ([`StateStats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduce {
    /// Symmetry between interchangeable roles (docs/model.md, "Symmetry").
    pub symmetry: bool,
    /// Partial-order reduction by sleep sets, for searches that check no `progress`
    /// (docs/model.md, "Partial-order reduction").
    pub por: bool,
    /// Persistent sets of one transition: a task's start that is invisible and local, where
    /// the task has not started (and in the sleep-set search of one thread, a yield, with the
    /// cycle proviso). States, not only transitions, are saved; `progress` included
    /// (docs/model.md, "Persistent sets").
    pub persistent: bool,
    /// Cheaper transitions: the depth-first search goes back to a state on its path by
    /// restoring a snapshot of the execution there instead of replaying the path
    /// (docs/model.md, "Snapshots").
    pub snapshot: bool,
    /// The models' declarations of their tasks' live locals replace the tasks' histories, as
    /// SPIN's dead-variable reduction does (docs/model.md, "Live locals").
    pub live_locals: bool,
    /// The online monitors' state in the fingerprint only where an invariant checked reads
    /// it (docs/model.md, "Monitor projection").
    pub projection: bool,
    /// Under symmetry, a state's canonical form is the least fingerprint over the elements of
    /// the group that sort its orbits of tasks by their signatures (a few images a state)
    /// instead of over every element (docs/model.md, "The sorted canonical form"). The same
    /// states either way; without `symmetry` it does nothing.
    pub sorted_symmetry: bool,
    /// A seeded defect in a reduction, for the tests that show the soundness tests can fail.
    pub defect: Option<ReductionDefect>,
}

impl Default for Reduce {
    fn default() -> Self {
        Reduce {
            symmetry: true,
            por: true,
            persistent: true,
            snapshot: true,
            live_locals: true,
            projection: true,
            sorted_symmetry: true,
            defect: None,
        }
    }
}

impl Reduce {
    /// No reduction: the search as it was before reductions existed.
    pub const NONE: Reduce = Reduce {
        symmetry: false,
        por: false,
        persistent: false,
        snapshot: false,
        live_locals: false,
        projection: false,
        sorted_symmetry: false,
        defect: None,
    };
    /// The reductions a scenario file or the command line may name.
    pub const NAMES: &'static [&'static str] =
        &["symmetry", "por", "persistent", "snapshot", "live-locals", "projection", "sorted-symmetry"];
}

/// A seeded defect in a reduction or in the parallel search (never in a user's run: only the
/// tests set one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionDefect {
    /// `--workers`: a job handed over loses the first of its transitions (the giver clears it,
    /// and nobody explores it).
    WorkersLoseGivenTransition,
    /// `--workers`: the workers record only the transitions that reached a new state (a
    /// spanning forest), so the fair-cycle pass sees no cycle.
    WorkersRecordTreeEdgesOnly,
    /// `--workers` on a cycle invariant: a worker's cache of states it found stored lately
    /// takes any state whose slot is filled for the one stored there (the fingerprint is not
    /// compared), so states that were never stored count as known.
    WorkersRecentIgnoresKey,
    /// One search with Tarjan's algorithm: its cache of states visited lately
    /// (`table::Recent`) takes any state whose slot is filled for the one stored there (the
    /// fingerprint is not compared), so states that were never stored count as visited.
    RecentIgnoresKey,
    /// The fair-cycle classes of lasso invariants (`no-soft-lockup`) forget that every state of
    /// a classed cycle must keep the stuck situation: any fair component where one state has
    /// it is classed.
    LassoClassIgnoresKey,
    /// A cluster (`--processes`, `--local-cluster`): a quarter of the states a worker sends to
    /// a worker of another process are lost on the way (those whose fingerprint is a multiple
    /// of 4), so their owners never explore them.
    ClusterLosesSentStates,
    /// A cluster: a worker records a transition only when it owns the state it reaches, so the
    /// graph worker 0 decides `progress` on lacks every edge between workers.
    ClusterRecordsOwnEdgesOnly,
    /// The canonicalisation forgets that a node's objects (`pgdat[n]`) move with the node.
    SymmetryForgetsNodeObjects,
    /// Persistent sets that take a task alone wherever its start was found local, without
    /// asking whether the task is still at its start (so a task that has started runs alone
    /// from then on).
    PersistentStartsForever,
    /// Persistent sets without the cycle proviso: a yield taken alone is enough even when it
    /// goes back to a state already stored, so a task that yields in a loop can hide every
    /// other task's transitions from the states of its loop (the ignoring problem).
    PersistentWithoutProviso,
    /// Persistent sets that forget the visibility condition: a task's start that emits events
    /// counts as local all the same, so it is taken alone and its events come in one order
    /// only.
    PersistentIgnoresVisibility,
    /// Sleep sets that forget the runtime's part of the independence relation: two steps on
    /// the same object (one a write), the same lock, or a park and its unpark, taken as
    /// independent.
    PorIgnoresObjects,
    /// Sleep sets that take two steps with ghost events as independent without checking that
    /// the online monitors reach the same state in either order.
    PorIgnoresGhost,
    /// Sleep sets that take a step as inert on the monitors (so commuting with every step
    /// there) when one of its events is inert, instead of all of them.
    PorInertAnyEvent,
    /// Sleep sets that take a step that ends its task as independent of every other step (its
    /// operation, its events and the ghost's exit bookkeeping forgotten). An exit is
    /// independent under the same rules as any other step, not of everything.
    PorExitsIndependent,
    /// Under symmetry the body joins the other tasks one after another, in a fixed order that
    /// no renaming keeps, and its reads of the final state are scheduling points.
    SymmetryJoinsInOrder,
    /// Under symmetry every image puts a wait queue's list in pid order instead of renaming
    /// each entry in its place (the wake order no renaming kept, before the lists).
    SymmetrySortsWaitLists,
    /// The sorted canonical form: a task's signature is its own local hash, which a renaming
    /// changes, instead of the least of its local hashes over the group (two states of one
    /// orbit may then sort differently and both be stored).
    SymmetrySignatureOwnLocal,
    /// The sorted canonical form: a task's signature takes its pending operation's own code,
    /// which a renaming changes (an unpark of a renamed task, an access to a renamed node's
    /// object), instead of the least code over the group.
    SymmetrySignatureRawOp,
    /// Snapshots: a restore puts back the runtime and the stacks but not the online monitors'
    /// state (the ghost keeps the state of the last execution's end).
    SnapshotForgetsGhost,
    /// Snapshots: a restore puts back everything but the shared objects' values.
    SnapshotForgetsObjects,
    /// Snapshots under symmetry: a restore puts back everything but each task's local hash
    /// under each image of the group.
    SnapshotForgetsImageLocals,
    /// `memory = "lkmm"`: the fair-cycle pass counts cycles that read a store a later one has
    /// superseded (a task that never sees a store: no execution of any machine).
    FairnessIgnoresStaleReads,
    /// `--workers`: of a state two workers explored from (one gave the other a job there),
    /// the stored graph keeps only the first worker's transitions, so a cycle through the
    /// other's is missed.
    WorkersGraphKeepsFirstRowOnly,
    /// `--workers`: the fair-cycle pass's parallel trim neither counts nor follows the
    /// transitions of a state two workers explored from (their rows joined into one): a
    /// state of a cycle through it is taken for one that nothing enters.
    WorkersTrimSkipsJoinedRows,
    /// `--workers`: in the fair-cycle pass's parallel trim, a state a thread gives to another
    /// (the work is shared as it grows from the initial state) is peeled by both, so its
    /// successors lose two predecessors for one and a state of a cycle can be taken for one
    /// that nothing enters.
    WorkersTrimSharesTwice,
    /// `--workers`: closing states on the fly takes a transition to a state the same worker
    /// stored earlier (or to itself) for one into a closed state: a state whose transition
    /// goes back up the worker's path (every cycle one worker explores has one) closes.
    WorkersCloseSkipsEarlierStates,
    /// `--workers`: a state whose transitions two workers shared (a job given there, or a
    /// job's first state) is closed on the fly on those this worker took.
    WorkersCloseSplitStates,
    /// `live-locals`: a declaration of a task's live locals leaves out its context (what the
    /// task did before the enclosing function: for a kswapd, which batch it is in), so states
    /// with different futures meet.
    LiveLocalsForgetContext,
    /// A cluster's distributed fair-cycle pass drops the backward steps to a state another
    /// worker owns, so a component is cut where a cycle goes through two workers' states.
    ClusterPassDropsRemoteBack,
    /// `projection`: the monitors' parts are left out as if no invariant but `progress` and
    /// `lock-released` were checked, so a part an invariant checked reads is cleared after
    /// every step.
    ProjectionDropsReadParts,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_duration: None,
            shortest_budget: 2_000,
            replay: None,
            progress: None,
            check_online: false,
            history_only: false,
            reduce: Reduce::default(),
            orbit_census: false,
            live_census: false,
            check_inert: false,
            snapshot_cap: None,
            workers: 1,
            cluster: None,
        }
    }
}

/// A recorded counterexample.
#[derive(Debug, Clone)]
pub struct Found {
    /// How to reproduce it: its execution number within the exploration, or its schedule.
    pub replay: Replay,
    pub trace: Trace,
    pub violations: Vec<Violation>,
    /// The seeded mutation's code ran in this execution.
    pub mutation_reached: bool,
    /// A lasso: the events from this index on are the part that repeats for ever.
    pub cycle_from: Option<usize>,
    /// The tasks that finished within the trace, each with the number of trace events before
    /// it did (the HTML state panel's "finished"). A task not listed had not finished where
    /// the trace ends (a lasso, a deadlock, an explorer's step limit).
    pub exits: Vec<(Pid, usize)>,
}

impl Found {
    /// The execution number, for engines that number their executions.
    pub fn index(&self) -> Option<u64> {
        match self.replay {
            Replay::Execution(i) => Some(i),
            Replay::Schedule { .. } => None,
        }
    }
}

/// What a stateful exploration stored and walked (also its fields in `--json`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct StateStats {
    /// Distinct states stored.
    pub states: u64,
    /// Transitions explored (each once).
    pub transitions: u64,
    /// Longest path from the initial state the search walked.
    pub max_depth: usize,
    /// Bytes the visited-state table takes.
    pub memory_bytes: u64,
    /// The probability that two distinct states shared a 64-bit fingerprint somewhere in
    /// this search (so that one was wrongly taken as explored): at most n(n-1)/2^65.
    pub collision_probability: f64,
    /// Why the search stopped early, if it did (a state budget, a time limit, memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<&'static str>,
    /// The reductions that ran (`"none"`, `"symmetry"`, `"por"`, `"symmetry+por"`, `"snapshot"`,
    /// `"por+snapshot"`, `"symmetry+snapshot"` or `"symmetry+por+snapshot"`).
    pub reductions: &'static str,
    /// The model's declarations of its tasks' live locals replaced their histories (the
    /// reduction `live-locals`: on, not the history-only reference search, and a model that
    /// declares them).
    pub live_locals: bool,
    /// The monitor projection left some of the online monitors' state out of the fingerprint
    /// (the reduction `projection`: on, and an invariant not checked whose state no checked
    /// one reads).
    pub projection: bool,
    /// Persistent sets of one transition ran (the reduction `persistent`): a state where a
    /// task's start (or, in the sleep-set search of one thread, a yield) is invisible and
    /// local is explored by that transition alone. `persistent_states`: the states so
    /// explored. Unlike sleep sets, they store fewer states.
    pub persistent: bool,
    pub persistent_states: u64,
    /// Why persistent sets did not run, where they did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent_not_applied: Option<&'static str>,
    /// The symmetry group's size (1: no symmetry reduction ran).
    pub symmetry_group: usize,
    /// Under symmetry, the canonical form was the sorted one (the least fingerprint over the
    /// elements that sort the orbits' tasks by their signatures), not the least over every
    /// element: the same states, fewer images fingerprinted (reduction `sorted-symmetry`).
    pub symmetry_sorted: bool,
    /// Why symmetry reduction did not run, where it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symmetry_not_applied: Option<&'static str>,
    /// Why partial-order reduction did not run, where it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub por_not_applied: Option<&'static str>,
    /// Why the search replayed paths instead of restoring snapshots, where it did; and how
    /// many snapshots it restored. (A restore's replayed steps, from a snapshot above a state
    /// that has none, count in `replayed_steps`.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_not_applied: Option<&'static str>,
    pub restores: u64,
    /// The most bytes the snapshots on the search path held at once.
    pub snapshot_bytes: u64,
    /// Partial-order reduction: enabled transitions not taken because they were in the
    /// state's sleep set, and visits of a stored state that explored transitions its first
    /// visit had left asleep.
    pub slept: u64,
    pub revisits: u64,
    /// Partial-order reduction: checks that two steps commute on the online monitors
    /// answered without running them, because one step's events are all inert there (the
    /// model's declaration, docs/model.md "Inert events"); and, in a test's run that checks
    /// each such answer (`Options::check_inert`), the answers the full check contradicted.
    pub inert_shortcuts: u64,
    pub inert_disagreements: u64,
    /// Scheduling steps the depth-first search's executions ran (what a transition costs:
    /// `steps / transitions`), those of them that replayed a known prefix to reach the state
    /// to explore from, and those that ran an execution to its end after it had reached a
    /// known state. The rest took transitions out of new states. (Probes that make a counterexample
    /// shortest are not counted.)
    pub steps: u64,
    pub replayed_steps: u64,
    pub tail_steps: u64,
    /// Worker threads that searched (`--workers`), and the fewest and most states one of
    /// them stored (how evenly the work was shared).
    pub workers: usize,
    pub worker_states_min: u64,
    pub worker_states_max: u64,
    /// Processes of a cluster search (1 otherwise); whether this process only helped (process
    /// 0 reports the outcome); the candidate states sent to other processes, and their bytes.
    pub processes: usize,
    pub cluster_follower: bool,
    pub states_sent: u64,
    pub bytes_sent: u64,
    /// Seconds of the fair-cycle pass after a search of several workers (the union, its trim,
    /// Tarjan's search, the states' names if a component needs them) or processes (the
    /// distributed pass, then process 0's over the gathered graph if any); 0 if none.
    pub cycle_pass_seconds: f64,
    /// The states the fair-cycle pass of several workers trimmed on their threads before
    /// Tarjan's search (states on no cycle: `stateful/trim.rs`); 0 with one worker or in a
    /// cluster (whose distributed pass trims by rounds).
    pub cycle_pass_trimmed: u64,
    /// Of those, the states closed on the fly, whose transitions were never recorded
    /// (`stateful/closed.rs`); 0 otherwise.
    pub closed_on_the_fly: u64,
    /// A cluster's fair-cycle pass: whether the processes decided it together, with no
    /// process holding the graph (`false`: the graph was gathered on process 0, as when a
    /// component may hold a fair cycle); its rounds; the recorded graph's bytes over every
    /// process, and the most bytes one process held for the pass (its part of the graph and
    /// the pass's own arrays, or the whole graph on process 0 when gathered). 0 outside a
    /// cluster, or when no cycle invariant is checked.
    pub cycle_pass_distributed: bool,
    pub cycle_pass_rounds: u64,
    pub graph_bytes: u64,
    pub graph_bytes_max_process: u64,
    /// With [`Options::orbit_census`] (tests only): what the unreduced search found about the
    /// orbits of its states.
    #[serde(skip)]
    pub orbit_census: Option<OrbitCensus>,
    /// With [`Options::live_census`] (tests only): the distinct fingerprints the states would
    /// have with the live-locals declarations applied.
    #[serde(skip)]
    pub live_census: Option<u64>,
}

/// The orbits of an unreduced search's states under the symmetry group ([`Options::orbit_census`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrbitCensus {
    /// The group's size (1: no symmetry applies, every state is its own orbit).
    pub group: usize,
    /// Distinct least fingerprints over the images of the states stored: the number of
    /// reachable orbits, which an exact symmetry reduction stores one state of each.
    pub orbits: u64,
    /// Pairs of a stored state and an element of the group whose image is not a stored state
    /// (0 when the group maps the reachable states onto themselves, as automorphisms do).
    pub images_unreached: u64,
}

/// What an exploration found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub engine: Engine,
    pub executions: u64,
    pub seconds: f64,
    /// The engine finished its exploration (not stopped early by a violation, a time limit
    /// or a replay).
    pub complete: bool,
    /// The execution reported: the shortest violation of the target invariant (or of any
    /// invariant), or in a replay the replayed execution.
    pub found: Option<Found>,
    /// Every invariant violated in some explored execution, with how many executions.
    pub violated: BTreeMap<&'static str, u64>,
    /// For each invariant violated, the number of executions explored until its first
    /// violation (that one included): "executions to catch".
    pub first_violation: BTreeMap<&'static str, u64>,
    /// Protocol events counted over all explored executions.
    pub coverage: BTreeMap<&'static str, u64>,
    /// The engine failed (a panic in the model or the explorer), or, with
    /// [`Options::check_online`], the online and trace monitors disagreed on an execution.
    pub error: Option<String>,
    /// The stateful engine's figures.
    pub stats: Option<StateStats>,
    /// Executions on which the online monitors were compared with the trace monitors (and
    /// agreed, unless `error` says otherwise).
    pub online_checked: u64,
}
