//! The stateful engine's search: depth-first with a visited set and Tarjan's strongly
//! connected components (for fair cycles), then breadth-first passes for the shortest
//! counterexample. See the module docs of [`super`].

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mmmodel::kernel::sched::{explorer_task, Start};
use mmmodel::model::{run, Named};
use mmmodel::platform::stateful::{self, Decision, Op, RunEnd, SchedPoint, SnapChooser, Snapshot, StackPool, TaskId};
use mmmodel::platform::Stateful;

use super::cluster::{self, Cluster};
use super::ghost::{GhostSave, Mode, StatefulGhost, StepEvents, TOUCH_SLEEPERS};

#[path = "cluster_run.rs"]
mod cluster_run;
use super::parallel::{self, Graph, Job, Shared, Stored};
use super::symmetry;
use super::table::FpTable;
use crate::engine::{Engine, Found, Options, OrbitCensus, Outcome, Progress, ReductionDefect, Replay, StateStats};
use crate::monitor::online::Found as OnlineFound;
use crate::monitor::{self, Checked, Exec, Violation};
use crate::spec::Spec;
use crate::trace::Trace;

/// Fingerprints are already uniformly distributed: hash them by themselves.
#[derive(Default)]
pub(super) struct Identity(u64);

impl std::hash::Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
}

type FpSet = HashSet<u64, BuildHasherDefault<Identity>>;

/// A state's entry in the visited table once its strongly connected component is complete.
const DONE: u32 = u32::MAX;

/// A state on the depth-first path.
struct Frame {
    /// Tarjan's index and low link.
    index: u32,
    low: u32,
    /// Tasks whose transition from here has not been explored yet (the state's enabled tasks
    /// are on Tarjan's stack).
    todo: u32,
    /// The task whose transition from here is being explored.
    chosen: u8,
    /// Tasks whose transition from here stays inside this state's component.
    moves: u32,
    /// Position on the Tarjan stack.
    tpos: usize,
    /// The state's fingerprint (the visited table's key).
    fp: u64,
}

/// A step's footprint changes what every other step sees (it started or ended a task, or made
/// an object or a lock): dependent on everything.
const TOUCH_GLOBAL: u8 = 4;

/// A transition as the partial-order reduction sees it: the task, the op it performs (its
/// pending op at the state it leaves), the events it emitted and the ghost bookkeeping it
/// touched. A transition asleep in a state is the same step as when it was taken (every step
/// since was independent of it), so this footprint, taken when it ran, stays its footprint.
struct Step<M: Checked> {
    task: u8,
    op: Option<Op>,
    events: StepEvents<M>,
    touch: u8,
}

/// A state on the partial-order reduced search's path (no Tarjan: it checks no `progress`).
struct PFrame<M: Checked> {
    /// Tasks whose transition from here is still to explore.
    todo: u32,
    chosen: u8,
    /// The state's sleep set: transitions an equivalent path has already taken.
    sleep: Vec<Rc<Step<M>>>,
    /// Transitions explored from here so far (asleep in the states their successors reach).
    done: Vec<Rc<Step<M>>>,
    /// The online monitors at this state, every task's pending op, and the shape of the
    /// runtime (tasks, objects, locks) and the finished tasks.
    online: M::Online,
    ops: Vec<Option<Op>>,
    shape: (usize, usize, usize, u32),
}

/// Whether two ops of different tasks commute and neither enables or disables the other:
/// not the same object with a write, not the same lock, not a park and its unpark.
fn ops_independent(ta: u8, a: Option<Op>, tb: u8, b: Option<Op>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return false };
    if let (Some(x), Some(y)) = (a.object(), b.object()) {
        if x == y && (a.is_write() || b.is_write()) {
            return false;
        }
    }
    if a.lock().is_some() && a.lock() == b.lock() {
        return false;
    }
    match (a, b) {
        // The body's wait for every task: enabled once they have all finished, and their
        // finishing steps are dependent on everything anyway.
        (Op::JoinAll(_), _) | (_, Op::JoinAll(_)) => false,
        (Op::Park, Op::Unpark(u)) => u as u8 != ta,
        (Op::Unpark(u), Op::Park) => u as u8 != tb,
        (Op::Unpark(u), Op::Unpark(v)) => u != v,
        (Op::Join(u), _) => u as u8 != tb,
        (_, Op::Join(u)) => u as u8 != ta,
        _ => true,
    }
}

/// A state on Tarjan's stack (its component is not complete yet).
struct TEntry {
    fp: u64,
    enabled: u32,
    moves: u32,
}

/// The first violation the depth-first search met: what to make shortest.
enum Target {
    /// A safety violation of this invariant, found at the end of this schedule.
    Safety { invariant: &'static str, path: Vec<u8> },
    /// A fair cycle: the states of its component, the tasks that must move in it, the
    /// schedule that leads to the component's root, and the lasso invariant it violates
    /// besides `progress` (an index into [`Checked::LASSO`]), if any.
    Cycle { members: FpSet, must_move: u32, path: Vec<u8>, class: Option<u8> },
}

/// What one probe (a replay of a schedule, then one step) saw.
struct Probe {
    /// The state after the schedule (`None`: the execution ended).
    state: Option<(u64, u32)>,
    /// Invariants violated by the schedule's last transition (or at the end).
    violated: Vec<&'static str>,
}

/// Runs executions of one spec on the stateful platform.
struct Runner<M: Checked> {
    cfg: Arc<M::Config>,
    ghost: Arc<StatefulGhost<M>>,
    fin: Arc<Mutex<Option<M::Final>>>,
    pool: StackPool,
    executions: u64,
}

impl<M: Checked> Runner<M> {
    /// Run one execution: `chooser` decides every scheduling point. Returns how it ended and
    /// the final state if every task finished.
    fn execute(
        &mut self,
        mode: Mode,
        record: bool,
        chooser: &mut dyn FnMut(&SchedPoint<'_>, &StatefulGhost<M>) -> TaskId,
    ) -> (RunEnd, Option<M::Final>) {
        self.executions += 1;
        self.ghost.reset(mode, record);
        let body = self.body();
        let g = Arc::clone(&self.ghost);
        let mut ch = |p: &SchedPoint<'_>| chooser(p, &g);
        let end = stateful::run(&mut self.pool, body, &mut ch);
        let fin = self.fin.lock().unwrap_or_else(|e| e.into_inner()).take();
        (end, fin)
    }

    /// An execution's body (task 0): the model's `run` on the stateful platform, leaving its
    /// final state in `fin`.
    fn body(&self) -> impl FnOnce() + 'static {
        let (cfg, ghost, fin) = (Arc::clone(&self.cfg), Arc::clone(&self.ghost), Arc::clone(&self.fin));
        move || {
            let ran = run::<M, Stateful<StatefulGhost<M>>>(&cfg, ghost, &Start::default());
            *fin.lock().unwrap_or_else(|e| e.into_inner()) = Some(ran.fin);
        }
    }
}

/// Calls the progress callback, at most every 200 ms.
fn report_progress(opts: &Options, last: &mut Instant, start: Instant, executions: u64, states: u64, depth: usize) {
    if let Some(p) = &opts.progress {
        if last.elapsed() >= Duration::from_millis(200) {
            *last = Instant::now();
            p(&Progress {
                executions,
                seconds: start.elapsed().as_secs_f64(),
                states: Some(states),
                depth: Some(depth),
            });
        }
    }
}

/// The depth-first search's state: what the chooser updates at every new state.
struct Dfs<'a, M: Checked> {
    spec: &'a Spec<M>,
    max_states: Option<u64>,
    max_memory: u64,
    visited: FpTable,
    frames: Vec<Frame>,
    tstack: Vec<TEntry>,
    next_index: u32,
    tasks_mask: u32,
    transitions: u64,
    max_depth: usize,
    coverage: BTreeMap<&'static str, u64>,
    violated: BTreeMap<&'static str, u64>,
    first_violation: BTreeMap<&'static str, u64>,
    target: Option<Target>,
    stopped_by: Option<&'static str>,
    /// Under symmetry: each element's map of the runtime's tasks, to close the task masks of a
    /// component under the group (docs/model.md, "Symmetry": progress).
    task_maps: Vec<Vec<u8>>,
    /// Under symmetry, a component of the quotient graph may hold a fair cycle: the search
    /// stops, and is run again without symmetry to decide it exactly.
    refuted: bool,
    /// Partial-order reduction (sleep sets with state caching; the visited table keeps each
    /// state's sleep set, as a mask in the canonical state's task names).
    por: bool,
    pframes: Vec<PFrame<M>>,
    /// Popped frames, kept for their vectors' room.
    spare: Vec<PFrame<M>>,
    /// The inverse of each element's task map (canonical names back to the state's own).
    inv_maps: Vec<Vec<u8>>,
    slept: u64,
    revisits: u64,
    /// Scheduling steps the search's executions ran: all of them, those that replayed a
    /// known prefix, and those that ran an execution to its end after it reached a known
    /// state (the rest took transitions out of new states).
    steps_total: u64,
    steps_replayed: u64,
    steps_tail: u64,
    defect: Option<ReductionDefect>,
    /// [`Options::orbit_census`] (tests only): the visited set holds every state, and this
    /// the least fingerprint over each one's images and the images themselves.
    census: Option<Census>,
    /// With more than one worker (parallel.rs): the shared visited table and job market, the
    /// schedule to the state this worker's search starts from, the transitions it was given
    /// there (until it has reached it), the states it stored, and (when `progress` is
    /// checked) its part of the state graph.
    shared: Option<Arc<Shared>>,
    prefix: Vec<u8>,
    root: Option<u32>,
    stored: u64,
    graph: Option<Graph>,
    /// In a cluster (cluster.rs): this worker's index and the number of workers over every
    /// process. A state another worker owns is not stored here: it goes to `outbox` with the
    /// schedule that leads to it, for its owner.
    owner: Option<(usize, usize)>,
    outbox: Vec<(u64, Vec<u8>)>,
    /// The job is a state another worker sent (cluster.rs): the transition into it was counted
    /// by the sender, and it is stored here if it is new.
    candidate: bool,
    skip_arrival: bool,
}

/// What [`Options::orbit_census`] collects.
#[derive(Default)]
struct Census {
    canonical: FpSet,
    images: Vec<u64>,
}

pub(super) struct Search<'a, M: Checked> {
    spec: &'a Spec<M>,
    opts: &'a Options,
    engine: Engine,
    runner: Runner<M>,
    st: Dfs<'a, M>,
    start: Instant,
    last_progress: Instant,
    error: Option<String>,
    symmetry_group: usize,
    symmetry_not_applied: Option<&'static str>,
    por_not_applied: Option<&'static str>,
    /// Workers that searched, and the fewest and most states one of them stored.
    workers: usize,
    worker_states: (u64, u64),
    /// In a cluster: processes, whether this process only helped (process 0 reports), the
    /// candidates sent to other processes and their bytes, and the visited tables' bytes.
    processes: usize,
    cluster_follower: bool,
    sent: (u64, u64),
    cluster_memory: u64,
    /// The fair-cycle pass over the stored graph (one thread, after the search).
    cycle_pass_seconds: f64,
    /// Snapshots: why the search replays instead, if it does; how many restores it made.
    snapshot_not_applied: Option<&'static str>,
    restores: u64,
    snapshot_bytes: u64,
    /// The search went by snapshots ([`Self::dfs_snapshots`]).
    snapshotted: bool,
}

/// What one worker of a parallel search found, for the search that started it.
struct WorkerOut {
    executions: u64,
    transitions: u64,
    max_depth: usize,
    coverage: BTreeMap<&'static str, u64>,
    violated: BTreeMap<&'static str, u64>,
    first_violation: BTreeMap<&'static str, u64>,
    target: Option<Target>,
    stopped_by: Option<&'static str>,
    error: Option<String>,
    slept: u64,
    revisits: u64,
    steps: (u64, u64, u64),
    stored: u64,
    graph: Option<Graph>,
    /// In a cluster: the worker's visited table's bytes, and what it sent to other processes.
    memory: u64,
    sent: (u64, u64),
    /// A lone worker's snapshots: whether it took them, its restores, their peak bytes.
    snapshots: (bool, u64, u64),
}

/// Bytes the visited table takes per slot of capacity (key, value, control byte).
pub const BYTES_PER_SLOT: u64 = 8 + 4 + 1;

fn mix(a: u64, b: u64) -> u64 {
    let r = (a ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ b.rotate_left(29);
    let r = (r ^ (r >> 31)).wrapping_mul(0x94d0_49bb_1331_11eb);
    r ^ (r >> 32)
}

/// Memory this machine can give the search: 80 % of what is available now, or less if the
/// environment variable `MMCHECK_MEMORY_MIB` says so (as SPIN's `-DMEMLIM`: a limit for a
/// shared machine, and the way the tests make a search run out of memory).
pub fn available_memory() -> u64 {
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    let machine = avail.map_or(8 << 30, |kb| kb * 1024 / 5 * 4);
    let limit = std::env::var("MMCHECK_MEMORY_MIB").ok().and_then(|v| v.trim().parse::<u64>().ok());
    limit.map_or(machine, |mib| machine.min(mib.saturating_mul(1 << 20)))
}

/// The image of a mask of tasks under a map of the tasks.
fn map_mask(map: &[u8], mask: u32) -> u32 {
    let (mut m, mut out) = (mask, 0u32);
    while m != 0 {
        let t = m.trailing_zeros() as usize;
        m &= m - 1;
        out |= 1 << map.get(t).map_or(t as u32, |&u| u as u32);
    }
    out
}

/// The mask of every task that exists at `p`.
fn tasks_mask(p: &SchedPoint<'_>) -> u32 {
    if p.num_tasks() >= 32 {
        u32::MAX
    } else {
        (1u32 << p.num_tasks()) - 1
    }
}

fn lowest(mask: u32) -> TaskId {
    mask.trailing_zeros() as TaskId
}

impl<'a, M: Checked> Search<'a, M> {
    pub fn new(spec: &'a Spec<M>, engine: Engine, opts: &'a Options, max_states: Option<u64>) -> Self {
        let now = Instant::now();
        let group = symmetry::group(spec, opts);
        let census = opts.orbit_census.then(Census::default);
        let mut pool = StackPool::new();
        let mut images = group.images.clone();
        match opts.reduce.defect {
            Some(ReductionDefect::SymmetryForgetsNodeObjects) => pool.seed_symmetry_defect_forget_node_objects(),
            Some(ReductionDefect::SymmetryJoinsInOrder) => pool.seed_symmetry_defect_join_in_order(),
            // Seeded in the search itself (`Dfs::independent`).
            Some(
                ReductionDefect::PorIgnoresObjects
                | ReductionDefect::PorIgnoresGhost
                | ReductionDefect::WorkersLoseGivenTransition
                | ReductionDefect::WorkersRecordTreeEdgesOnly
                | ReductionDefect::LassoClassIgnoresKey
                | ReductionDefect::ClusterLosesSentStates
                | ReductionDefect::ClusterRecordsOwnEdgesOnly
                | ReductionDefect::SnapshotForgetsGhost
                | ReductionDefect::SnapshotForgetsObjects,
            )
            | None => {}
        }
        let symmetric = !images.is_empty();
        pool.set_symmetry(&std::mem::take(&mut images));
        if opts.reduce.defect == Some(ReductionDefect::SnapshotForgetsObjects) {
            pool.seed_snapshot_defect_keep_objects();
        }
        let snapshot_not_applied = if !opts.reduce.snapshot {
            Some("not asked for (reduce without \"snapshot\", or --no-reduce)")
        } else if symmetric || census.is_some() {
            Some("symmetry applies (a snapshot does not hold the per-image local hashes)")
        } else {
            None
        };
        let por = por_applies(spec, opts);
        let symmetry_group = group.size();
        let ghost = StatefulGhost::new(spec.cfg.clone(), !opts.history_only, group.perms);
        ghost.set_por(por.is_ok());
        let task_maps: Vec<Vec<u8>> = group.images.iter().map(|i| i.task.clone()).collect();
        let inv_maps = task_maps
            .iter()
            .map(|m| {
                let mut inv: Vec<u8> = (0..m.len() as u8).collect();
                for (t, &u) in m.iter().enumerate() {
                    inv[u as usize] = t as u8;
                }
                inv
            })
            .collect();
        Search {
            por_not_applied: por.err(),
            symmetry_group,
            symmetry_not_applied: group.not_applied,
            spec,
            opts,
            engine,
            runner: Runner {
                cfg: Arc::new(spec.cfg.clone()),
                ghost: Arc::new(ghost),
                fin: Arc::new(Mutex::new(None)),
                pool,
                executions: 0,
            },
            st: Dfs {
                spec,
                max_states,
                max_memory: available_memory(),
                visited: FpTable::default(),
                frames: Vec::new(),
                tstack: Vec::new(),
                next_index: 0,
                tasks_mask: 0,
                transitions: 0,
                max_depth: 0,
                coverage: BTreeMap::new(),
                violated: BTreeMap::new(),
                first_violation: BTreeMap::new(),
                target: None,
                stopped_by: None,
                // A census stores every state: `progress` is decided on the whole graph.
                task_maps: if census.is_some() { Vec::new() } else { task_maps },
                refuted: false,
                census,
                por: por.is_ok(),
                pframes: Vec::new(),
                spare: Vec::new(),
                inv_maps,
                slept: 0,
                revisits: 0,
                steps_total: 0,
                steps_replayed: 0,
                steps_tail: 0,
                defect: opts.reduce.defect,
                shared: None,
                prefix: Vec::new(),
                root: None,
                stored: 0,
                graph: None,
                owner: None,
                outbox: Vec::new(),
                candidate: false,
                skip_arrival: false,
            },
            start: now,
            last_progress: now,
            error: None,
            workers: 1,
            worker_states: (0, 0),
            processes: 1,
            cluster_follower: false,
            sent: (0, 0),
            cluster_memory: 0,
            cycle_pass_seconds: 0.0,
            snapshot_not_applied,
            restores: 0,
            snapshot_bytes: 0,
            snapshotted: false,
        }
    }
}

/// Whether the partial-order reduction applies to `spec` under `opts`, or why not.
/// Whether `spec` checks one of its model's lasso invariants ([`Checked::LASSO`]).
fn lasso_checked<M: Checked>(spec: &Spec<M>) -> bool {
    M::LASSO.iter().any(|i| spec.invariants.contains(i))
}

fn por_applies<M: Checked>(spec: &Spec<M>, opts: &Options) -> Result<(), &'static str> {
    if !opts.reduce.por {
        return Err("not asked for (reduce without \"por\", or --no-reduce)");
    }
    if opts.history_only {
        return Err("the history-only reference search explores every transition");
    }
    if opts.replay.is_some() {
        return Err("a replay follows one schedule");
    }
    if opts.orbit_census {
        return Err("an orbit census stores every state of the unreduced search");
    }
    if opts.cluster.is_some() {
        return Err("a cluster search does not carry sleep sets between processes");
    }
    M::partial_order(&spec.cfg)?;
    if spec.invariants.contains(&M::PROGRESS) {
        return Err(
            "progress is checked: its fair cycles are decided on the whole state graph, every transition explored",
        );
    }
    if lasso_checked(spec) {
        return Err("a lasso invariant is checked: its fair cycles are decided on the whole state graph");
    }
    Ok(())
}

impl<M: Checked> Dfs<'_, M> {
    /// The whole state at a scheduling point.
    fn fingerprint(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
        Self::fingerprint_image(p, ghost).0
    }

    /// The fingerprint, and the group element whose image it is (`None`: the identity).
    fn fingerprint_image(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> (u64, Option<usize>) {
        let mut fp = Self::identity_fingerprint(p, ghost);
        let mut which = None;
        // Symmetry: the least fingerprint over the state's images (its orbit's representative).
        for k in 0..p.symmetry_images() {
            let f = Self::image_fingerprint(p, ghost, k);
            if f < fp {
                fp = f;
                which = Some(k);
            }
        }
        (fp, which)
    }

    /// The whole state at a scheduling point, not canonicalised.
    fn identity_fingerprint(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
        let runtime = if ghost.summaries() { p.fingerprint() } else { p.fingerprint_keeping_finished() };
        mix(runtime, ghost.state_hash())
    }

    /// The fingerprint of the state's image under element `k` of the symmetry group.
    fn image_fingerprint(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>, k: usize) -> u64 {
        mix(p.fingerprint_image(k), ghost.state_hash_image(k))
    }

    /// The key the visited set stores a state under: its orbit's least fingerprint, or under
    /// a census the state's own (the census notes its images).
    fn key(&mut self, p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
        let Some(census) = &mut self.census else { return Self::fingerprint(p, ghost) };
        let fp = Self::identity_fingerprint(p, ghost);
        if !self.visited.contains_key(fp) {
            let mut canonical = fp;
            for k in 0..p.symmetry_images() {
                let image = Self::image_fingerprint(p, ghost, k);
                canonical = canonical.min(image);
                census.images.push(image);
            }
            census.canonical.insert(canonical);
        }
        fp
    }

    /// The census's findings, once the search is over.
    fn census(&self, group: usize) -> Option<OrbitCensus> {
        let c = self.census.as_ref()?;
        Some(OrbitCensus {
            group,
            orbits: c.canonical.len() as u64,
            images_unreached: c.images.iter().filter(|fp| !self.visited.contains_key(**fp)).count() as u64,
        })
    }

    /// The checked invariants among what the online monitors found.
    fn ids(&self, found: &OnlineFound<M>) -> Vec<&'static str> {
        let mut v: Vec<&'static str> =
            found.violated.iter().filter(|i| self.spec.invariants.contains(i)).map(|i| i.name()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn count_violations(&mut self, ids: &[&'static str]) {
        for &i in ids {
            *self.violated.entry(i).or_insert(0) += 1;
            self.first_violation.entry(i).or_insert(self.transitions);
        }
    }

    /// Record what one explored transition found; returns the invariants it violated.
    fn account(&mut self, found: OnlineFound<M>, coverage: Vec<M::Coverage>) -> Vec<&'static str> {
        self.transitions += 1;
        for c in coverage.iter().chain(&found.derived) {
            *self.coverage.entry(c.name()).or_insert(0) += 1;
        }
        let ids = self.ids(&found);
        self.count_violations(&ids);
        ids
    }

    /// A new state was reached (past the initial one): count what the transition into it found.
    fn account_arrival(&mut self, g: &StatefulGhost<M>) {
        if self.next_index > 0 {
            let (found, cov) = g.take();
            let ids = self.account(found, cov);
            self.found(&ids);
        }
    }

    /// Whether a violation of `ids` ends the depth-first search (the target invariant, or any
    /// invariant when the scenario names none).
    fn decisive(&self, ids: &[&'static str]) -> Option<&'static str> {
        match self.spec.target {
            Some(t) => ids.iter().copied().find(|i| *i == t.name()),
            None => ids.first().copied(),
        }
    }

    /// The schedule of the search path (the choice taken at every state on it).
    fn path(&self) -> Vec<u8> {
        let mut path = self.prefix.clone();
        if self.por {
            path.extend(self.pframes.iter().map(|f| f.chosen));
        } else {
            path.extend(self.frames.iter().map(|f| f.chosen));
        }
        path
    }

    /// A safety violation found by the transition the search path ends with.
    fn found(&mut self, ids: &[&'static str]) {
        if self.target.is_none() {
            if let Some(inv) = self.decisive(ids) {
                self.target = Some(Target::Safety { invariant: inv, path: self.path() });
            }
        }
    }

    /// States stored (by every worker).
    fn states(&self) -> u64 {
        match &self.shared {
            Some(sh) => sh.states.load(std::sync::atomic::Ordering::Relaxed),
            None => self.visited.len() as u64,
        }
    }

    fn memory_bytes(&self) -> u64 {
        let table = match &self.shared {
            Some(sh) => sh.capacity() as u64 * BYTES_PER_SLOT,
            None => self.visited.bytes(),
        };
        table
            + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + (self.tstack.capacity() * std::mem::size_of::<TEntry>()) as u64
            + (self.pframes.capacity() * std::mem::size_of::<PFrame<M>>()) as u64
    }

    /// A task mask in the canonical state's task names (`k`: the element whose image the
    /// canonical state is), and back.
    fn to_canonical(&self, mask: u32, k: Option<usize>) -> u32 {
        k.map_or(mask, |k| map_mask(&self.task_maps[k], mask))
    }
    fn canonical_to_own(&self, mask: u32, k: Option<usize>) -> u32 {
        k.map_or(mask, |k| map_mask(&self.inv_maps[k], mask))
    }

    /// Whether the sleeping step `a` and the step `b` just taken, both from the state of
    /// `from`, are independent there.
    fn independent(&self, a: &Step<M>, b: &Step<M>, from: &PFrame<M>, g: &StatefulGhost<M>) -> bool {
        if (a.touch | b.touch) & TOUCH_GLOBAL != 0 {
            return false;
        }
        let (ta, tb) = (a.touch, b.touch);
        if (ta & TOUCH_SLEEPERS != 0 && tb != 0) || (tb & TOUCH_SLEEPERS != 0 && ta != 0) {
            return false;
        }
        if self.defect != Some(ReductionDefect::PorIgnoresObjects) && !ops_independent(a.task, a.op, b.task, b.op) {
            return false;
        }
        self.defect == Some(ReductionDefect::PorIgnoresGhost) || g.commute(&from.online, &a.events, &b.events)
    }

    /// The chooser at a scheduling point reached by a new transition, under partial-order
    /// reduction: sleep sets with state caching (Godefroid, "Partial-Order Methods for the
    /// Verification of Concurrent Systems", 1996, chapter 5). A state is explored with the
    /// transitions not in its sleep set; the visited table keeps the sleep set it was explored
    /// with, and a later visit with a smaller sleep set explores what the first one left
    /// asleep. Every reachable state is still visited; transitions are saved.
    fn arrive_por(&mut self, p: &SchedPoint<'_>, g: &StatefulGhost<M>, ff: &mut bool) -> TaskId {
        let (fp, image) = Self::fingerprint_image(p, g);
        let enabled = p.enabled();
        let shape = (p.num_tasks(), p.num_objects(), p.num_locks(), p.finished());
        self.account_arrival(g);
        let stop = |g: &StatefulGhost<M>, ff: &mut bool| {
            *ff = true;
            g.set_mode(Mode::FastForward);
            lowest(enabled)
        };
        // The sleep set of this state: the parent's sleeping and explored transitions that are
        // independent of the one just taken. (Frames are reused: their vectors keep their
        // room.)
        let mut frame = self.spare_frame();
        if self.pframes.is_empty() {
            // The initial state: what the body did before it is no step of the search.
            let _ = g.take_step();
        }
        if let Some(top) = self.pframes.last() {
            let (events, mut touch) = g.take_step();
            let t = top.chosen;
            let (tasks, objects, locks, finished) = top.shape;
            if (tasks, objects, locks) != (shape.0, shape.1, shape.2) || (shape.3 & !finished) != 0 {
                touch |= TOUCH_GLOBAL;
            }
            let step = Step { task: t, op: top.ops[t as usize], events, touch };
            for a in top.sleep.iter().chain(&top.done) {
                if self.independent(a, &step, top, g) {
                    frame.sleep.push(Rc::clone(a));
                }
            }
            self.pframes.last_mut().expect("a frame").done.push(Rc::new(step));
        }
        if self.target.is_some() || self.stopped_by.is_some() {
            self.spare.push(frame);
            return stop(g, ff);
        }
        let asleep = frame.sleep.iter().fold(0u32, |m, a| m | 1 << a.task) & enabled;
        let canonical = self.to_canonical(asleep, image);
        let seen = match self.shared.clone() {
            Some(sh) => match self.reserve() {
                Err(why) => {
                    self.stopped_by = Some(why);
                    Some(0)
                }
                // `None`: this visit stored the state; otherwise what earlier visits (by any
                // worker) left asleep and this one does not.
                Ok(()) => {
                    let seen = sh.visit_sleeping(fp, canonical);
                    self.revisits += u64::from(seen.is_some_and(|left| left != 0));
                    seen
                }
            },
            None => None,
        };
        let stored_here = self.shared.is_some() && seen.is_none();
        if stored_here {
            self.next_index += 1;
            self.stored += 1;
            self.slept += asleep.count_ones() as u64;
        }
        let todo = match self.visited.get(fp) {
            _ if self.shared.is_some() => match seen {
                Some(left) => self.canonical_to_own(left, image) & enabled,
                None => enabled & !asleep,
            },
            Some(stored) => {
                // Explored before with sleep set `stored`: explore what it left asleep and
                // this visit does not.
                let left = stored & !canonical;
                if left != 0 {
                    self.visited.insert(fp, stored & canonical);
                    self.revisits += 1;
                }
                self.canonical_to_own(left, image) & enabled
            }
            None => match self.reserve() {
                Err(why) => {
                    self.stopped_by = Some(why);
                    0
                }
                Ok(()) => {
                    self.next_index += 1;
                    self.visited.insert(fp, canonical);
                    self.slept += asleep.count_ones() as u64;
                    enabled & !asleep
                }
            },
        };
        if todo == 0 {
            self.spare.push(frame);
            return stop(g, ff);
        }
        let first = lowest(todo);
        frame.todo = todo & !(1 << first);
        frame.chosen = first as u8;
        Self::snapshot(&mut frame, p, g);
        self.pframes.push(frame);
        self.max_depth = self.max_depth.max(self.pframes.len());
        g.set_mode(Mode::Explore);
        first
    }

    /// A frame for the partial-order reduced search (a popped one reused: its vectors keep
    /// their room), with empty sets.
    fn spare_frame(&mut self) -> PFrame<M> {
        let mut frame = self.spare.pop().unwrap_or_else(|| PFrame {
            todo: 0,
            chosen: 0,
            sleep: Vec::new(),
            done: Vec::new(),
            online: M::Online::default(),
            ops: Vec::new(),
            shape: (0, 0, 0, 0),
        });
        frame.sleep.clear();
        frame.done.clear();
        frame
    }

    /// What a frame keeps of its state for the independence checks: the online monitors,
    /// every task's pending op, the runtime's shape.
    fn snapshot(frame: &mut PFrame<M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) {
        g.online_into(&mut frame.online);
        frame.ops.clear();
        frame.ops.extend((0..p.num_tasks()).map(|t| p.pending(t as TaskId)));
        frame.shape = (p.num_tasks(), p.num_objects(), p.num_locks(), p.finished());
    }

    /// Make room for one more state, or say why not.
    fn reserve(&mut self) -> Result<(), &'static str> {
        if let Some(sh) = &self.shared {
            let n = sh.states.load(std::sync::atomic::Ordering::Relaxed);
            if self.max_states.is_some_and(|m| n >= m) {
                return Err("state budget (max_states)");
            }
            if n.saturating_mul(super::BYTES_PER_STATE) > self.max_memory {
                return Err("memory");
            }
            return Ok(());
        }
        if self.max_states.is_some_and(|m| self.visited.len() as u64 >= m) {
            return Err("state budget (max_states)");
        }
        if self.visited.len() >= self.visited.capacity() {
            let grow = self.visited.capacity().max(1024);
            // The grown table and the search's other structures (its stacks).
            let others = self.memory_bytes() - self.visited.bytes();
            if self.visited.bytes_after(grow) + others > self.max_memory {
                return Err("memory");
            }
            self.visited.try_reserve(grow).map_err(|_| "memory")?;
        }
        Ok(())
    }

    /// The chooser at a scheduling point reached by a new transition (or the first one).
    fn arrive(&mut self, p: &SchedPoint<'_>, g: &StatefulGhost<M>, ff: &mut bool) -> TaskId {
        if self.shared.is_some() {
            return self.arrive_shared(p, g, ff);
        }
        let fp = self.key(p, g);
        let enabled = p.enabled();
        self.tasks_mask = tasks_mask(p);
        self.account_arrival(g);
        let stop = |g: &StatefulGhost<M>, ff: &mut bool| {
            *ff = true;
            g.set_mode(Mode::FastForward);
            lowest(enabled)
        };
        if self.target.is_some() || self.stopped_by.is_some() || self.refuted {
            return stop(g, ff);
        }
        if let Some(index) = self.visited.get(fp) {
            if index != DONE {
                // A state on Tarjan's stack: this transition closes a cycle inside its
                // component.
                if let Some(parent) = self.frames.last_mut() {
                    parent.low = parent.low.min(index);
                    parent.moves |= 1 << parent.chosen;
                }
            }
            return stop(g, ff);
        }
        if let Err(why) = self.reserve() {
            self.stopped_by = Some(why);
            return stop(g, ff);
        }
        let index = self.next_index;
        self.next_index += 1;
        self.visited.insert(fp, index);
        let tpos = self.tstack.len();
        self.tstack.push(TEntry { fp, enabled, moves: 0 });
        let first = lowest(enabled);
        self.frames.push(Frame {
            index,
            low: index,
            todo: enabled & !(1 << first),
            chosen: first as u8,
            moves: 0,
            tpos,
            fp,
        });
        self.max_depth = self.max_depth.max(self.frames.len());
        g.set_mode(Mode::Explore);
        first
    }

    /// [`Self::arrive`] for one of several workers: the visited table is shared, there is no
    /// Tarjan (with `progress` the worker records its part of the graph instead, for
    /// [`parallel::components`]).
    fn arrive_shared(&mut self, p: &SchedPoint<'_>, g: &StatefulGhost<M>, ff: &mut bool) -> TaskId {
        let fp = Self::fingerprint(p, g);
        let enabled = p.enabled();
        self.tasks_mask = tasks_mask(p);
        if std::mem::take(&mut self.skip_arrival) {
            // A state another worker sent: it counted the transition into it.
            let _ = g.take();
            let _ = g.take_step();
            self.next_index = self.next_index.max(1);
        } else {
            self.account_arrival(g);
        }
        let initial = self.prefix.is_empty() && self.frames.is_empty();
        let edge = self.frames.last().map(|top| (top.fp, fp, top.chosen));
        let tree_only = self.defect == Some(ReductionDefect::WorkersRecordTreeEdgesOnly);
        if let Some(graph) = &mut self.graph {
            match edge {
                Some(e) if !tree_only => graph.edges.push(e),
                None if initial => graph.initial = Some(fp),
                _ => {}
            }
        }
        let stop = |g: &StatefulGhost<M>, ff: &mut bool| {
            *ff = true;
            g.set_mode(Mode::FastForward);
            lowest(enabled)
        };
        if self.target.is_some() || self.stopped_by.is_some() {
            return stop(g, ff);
        }
        if let Err(why) = self.reserve() {
            self.stopped_by = Some(why);
            return stop(g, ff);
        }
        if let Some((me, peers)) = self.owner {
            if cluster::owner(fp, peers) != me {
                if self.defect == Some(ReductionDefect::ClusterRecordsOwnEdgesOnly) && edge.is_some() {
                    if let Some(graph) = &mut self.graph {
                        graph.edges.pop();
                    }
                }
                // Another worker's state: its owner decides whether it is new.
                self.outbox.push((fp, self.path()));
                return stop(g, ff);
            }
        }
        let sh = self.shared.as_ref().expect("a shared table");
        if !sh.insert(fp, 0) {
            return stop(g, ff);
        }
        self.next_index += 1;
        self.stored += 1;
        if let Some(graph) = &mut self.graph {
            graph.nodes.push((fp, enabled, self.tasks_mask));
            if let (Some(e), true) = (edge, tree_only) {
                graph.edges.push(e);
            }
            if !M::LASSO.is_empty() {
                let mut keys = Vec::new();
                g.cycle_keys(&mut keys);
                // The monitors name tasks by pid, the runtime by its own task numbers.
                let n = M::roles(&self.spec.cfg).len();
                graph.keys.extend(keys.into_iter().map(|mut k| {
                    k.must_move = (0..n.min(32))
                        .filter(|p| k.must_move & (1 << p) != 0)
                        .fold(0, |m, p| m | 1 << explorer_task(n, p));
                    (fp, k)
                }));
            }
        }
        let first = lowest(enabled);
        self.frames.push(Frame {
            index: 0,
            low: 0,
            todo: enabled & !(1 << first),
            chosen: first as u8,
            moves: 0,
            tpos: 0,
            fp,
        });
        self.max_depth = self.max_depth.max(self.prefix.len() + self.frames.len());
        g.set_mode(Mode::Explore);
        first
    }

    /// The state a job starts from (another worker stored it, and gave away the transitions
    /// `todo` left to explore there): a frame for them, with an empty sleep set under
    /// partial-order reduction (which only explores more).
    fn arrive_root(&mut self, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> TaskId {
        let _ = g.take();
        let _ = g.take_step();
        // What this worker's next transitions find counts (`account_arrival`).
        self.next_index = self.next_index.max(1);
        let enabled = p.enabled();
        self.tasks_mask = tasks_mask(p);
        let todo = todo & enabled;
        debug_assert!(todo != 0, "a job whose transitions are not enabled");
        let first = lowest(todo);
        if self.por {
            let mut frame = self.spare_frame();
            frame.todo = todo & !(1 << first);
            frame.chosen = first as u8;
            Self::snapshot(&mut frame, p, g);
            self.pframes.push(frame);
        } else {
            let fp = Self::fingerprint(p, g);
            self.frames.push(Frame {
                index: 0,
                low: 0,
                todo: todo & !(1 << first),
                chosen: first as u8,
                moves: 0,
                tpos: 0,
                fp,
            });
        }
        g.set_mode(Mode::Explore);
        first
    }

    /// If another worker waits for work: the transitions left at the shallowest state of the
    /// search path that has some, given away (and no longer this worker's).
    fn donate(&mut self) -> Option<Job> {
        if !self.shared.as_ref()?.wanted() {
            return None;
        }
        let depth = if self.por {
            self.pframes.iter().position(|f| f.todo != 0)?
        } else {
            self.frames.iter().position(|f| f.todo != 0)?
        };
        let mut prefix = self.prefix.clone();
        let mut todo = if self.por {
            prefix.extend(self.pframes[..depth].iter().map(|f| f.chosen));
            std::mem::take(&mut self.pframes[depth].todo)
        } else {
            prefix.extend(self.frames[..depth].iter().map(|f| f.chosen));
            std::mem::take(&mut self.frames[depth].todo)
        };
        if self.defect == Some(ReductionDefect::WorkersLoseGivenTransition) {
            // Only the first transition of the job is lost.
            todo &= todo - 1;
        }
        (todo != 0).then_some(Job { prefix, todo })
    }

    /// Start the search over from a job.
    fn start_job(&mut self, job: Job) {
        self.frames.clear();
        while let Some(f) = self.pframes.pop() {
            self.spare.push(f);
        }
        self.prefix = job.prefix;
        self.root = Some(job.todo);
    }

    /// The execution the search just ran ended (not in fast-forward): what its last transition
    /// and the end checks found.
    fn ended(&mut self, end: &RunEnd, fin: Option<&M::Final>, g: &StatefulGhost<M>) {
        let (found, cov) = g.take();
        let mut ids = self.account(found, cov);
        match (end, fin) {
            (RunEnd::AllFinished, Some(fin)) => {
                let end = g.end(fin);
                let more = self.ids(&end);
                self.count_violations(&more);
                ids.extend(more);
            }
            (RunEnd::Deadlock { .. }, _) if self.spec.invariants.contains(&M::PROGRESS) => {
                // No task can move and some have not finished: they never will.
                let inv = M::PROGRESS.name();
                self.count_violations(&[inv]);
                ids.push(inv);
            }
            _ => {}
        }
        self.found(&ids);
    }

    /// Pop the states whose transitions are all explored, and choose the next transition of
    /// the deepest one that has one left; `false` if none has (or the search must stop).
    fn backtrack(&mut self) -> bool {
        if self.por {
            while let Some(top) = self.pframes.last_mut() {
                if top.todo != 0 {
                    let t = top.todo.trailing_zeros();
                    top.todo &= !(1 << t);
                    top.chosen = t as u8;
                    return true;
                }
                let f = self.pframes.pop().expect("a frame");
                self.spare.push(f);
            }
            return false;
        }
        loop {
            let Some(top) = self.frames.last_mut() else { return false };
            if top.todo != 0 {
                let t = top.todo.trailing_zeros();
                top.todo &= !(1 << t);
                top.chosen = t as u8;
                return true;
            }
            if self.shared.is_some() {
                // No Tarjan with several workers.
                self.frames.pop();
                continue;
            }
            self.pop_frame();
            if self.target.is_some() || self.refuted {
                return false;
            }
        }
    }

    /// Every transition of the top state has been explored: close it (Tarjan).
    fn pop_frame(&mut self) {
        let f = self.frames.pop().expect("a frame to pop");
        self.tstack[f.tpos].moves = f.moves;
        if f.low == f.index {
            // `f` is the root of a strongly connected component: the states above it on
            // Tarjan's stack.
            let members: Vec<TEntry> = self.tstack.drain(f.tpos..).collect();
            let mut moves = 0u32;
            let mut disabled = 0u32;
            for m in &members {
                moves |= m.moves;
                disabled |= !m.enabled & self.tasks_mask;
                if let Some(v) = self.visited.get_mut(m.fp) {
                    *v = DONE;
                }
            }
            // A fair cycle: the component has a transition inside it, and every task either
            // moves inside it or is disabled somewhere in it (weak fairness).
            // Under symmetry the component is a component of the quotient graph, whose states
            // were explored from arbitrary members of their orbits: a real fair cycle through
            // it moves or disables, at each of its states, the image of a task the component
            // records. Closing both masks under the group never misses one; a component that
            // passes the closed check is decided again without symmetry.
            let (mut cm, mut cd) = (moves, disabled);
            for map in &self.task_maps {
                cm |= map_mask(map, moves);
                cd |= map_mask(map, disabled);
            }
            if !self.task_maps.is_empty() {
                if moves != 0
                    && (cm | cd) & self.tasks_mask == self.tasks_mask
                    && self.spec.invariants.contains(&M::PROGRESS)
                {
                    self.refuted = true;
                }
            } else if moves != 0 && (moves | disabled) & self.tasks_mask == self.tasks_mask {
                let inv = M::PROGRESS.name();
                if self.spec.invariants.contains(&M::PROGRESS) {
                    self.count_violations(&[inv]);
                    if self.target.is_none() && self.decisive(&[inv]).is_some() {
                        self.target = Some(Target::Cycle {
                            members: members.iter().map(|m| m.fp).collect(),
                            must_move: self.tasks_mask & !disabled,
                            path: self.path(),
                            class: None,
                        });
                    }
                }
            }
        }
        if let Some(parent) = self.frames.last_mut() {
            parent.low = parent.low.min(f.low);
            if f.low != f.index {
                // `f` stays on Tarjan's stack: it is in the parent's component.
                parent.moves |= 1 << parent.chosen;
            }
        }
    }
}

/// A state on the snapshotting search's path with a transition left: the execution there,
/// the ghost, and the reference counts of the runner's shared handles (the execution's tasks
/// hold clones of them, and a restore brings back or drops tasks without running their code).
struct Snap<M: Checked> {
    depth: usize,
    /// The bytes it holds of its own (its heap, tables and the stacks it copied).
    bytes: usize,
    rt: Snapshot,
    ghost: GhostSave<M>,
    counts: [usize; 3],
}

/// The chooser of [`Search::dfs_snapshots`].
struct SnapSearch<'x, 'a, M: Checked> {
    st: &'x mut Dfs<'a, M>,
    ghost: Arc<StatefulGhost<M>>,
    cfg: Arc<M::Config>,
    fin: Arc<Mutex<Option<M::Final>>>,
    snaps: Vec<Snap<M>>,
    /// Snapshots popped off the path, whose room the next ones reuse.
    spare: Vec<Snap<M>>,
    /// The snapshots' bytes, their peak, and the most they may take: past it, a state gets no
    /// snapshot, and going back to it restores the deepest snapshot above it and replays the
    /// path from there (the choices left in `replay`, from `next`).
    bytes: usize,
    peak: usize,
    cap: usize,
    replay: Vec<u8>,
    next: usize,
    /// A job's transitions left at the state its schedule (`replay`, from the start) reaches.
    root: Option<u32>,
    /// The job is a state another process of a cluster sent (its owner is this worker): it
    /// arrives as a new state would, and is stored here if it is new.
    candidate: bool,
    /// Whether the search is running the last execution to its end (`tail` steps) after its
    /// job is done ([`SnapSearch::back`]).
    draining: bool,
    tail: u64,
    steps: u64,
    replayed: u64,
    restores: u64,
    opts: &'a Options,
    start: Instant,
    last_progress: Instant,
    executions: u64,
}

/// Sets `a`'s strong count to `want` (at least the caller's own handle).
fn set_strong_count<T>(a: &Arc<T>, want: usize) {
    let now = Arc::strong_count(a);
    for _ in now..want {
        // SAFETY: `a` is a live `Arc`; the extra count stands for a handle a restored task holds.
        unsafe { Arc::increment_strong_count(Arc::as_ptr(a)) };
    }
    for _ in want..now {
        // SAFETY: the count stands for a handle a task dropped by a restore held, never for
        // `a` itself (`want` counts `a`, so the count stays above zero).
        unsafe { Arc::decrement_strong_count(Arc::as_ptr(a)) };
    }
}

impl<M: Checked> SnapSearch<'_, '_, M> {
    fn depth(&self) -> usize {
        if self.st.por {
            self.st.pframes.len()
        } else {
            self.st.frames.len()
        }
    }

    fn counts(&self) -> [usize; 3] {
        [Arc::strong_count(&self.cfg), Arc::strong_count(&self.ghost), Arc::strong_count(&self.fin)]
    }

    /// Back to the deepest state on the path with a transition left, or stop.
    /// Back to the deepest state on the path with a transition left; `enabled`: the tasks that
    /// can move where the execution is now (none at its end).
    fn back(&mut self, enabled: u32) -> Decision<'_> {
        let st = &mut *self.st;
        if st.target.is_some() || st.stopped_by.is_some() || st.refuted {
            return Decision::Stop;
        }
        if self.opts.max_duration.is_some_and(|d| self.start.elapsed() >= d) {
            st.stopped_by = Some("time limit");
            return Decision::Stop;
        }
        if let Some(sh) = &st.shared {
            // Another worker stopped the search, or waits for work: give it the transitions
            // left at the shallowest state of the path (their snapshot stays, unused).
            if sh.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Decision::Stop;
            }
            if let Some(job) = st.donate() {
                st.shared.as_ref().expect("a donation is shared").give(job);
            }
        }
        let depth = st.frames.len().max(st.pframes.len());
        report_progress(
            self.opts,
            &mut self.last_progress,
            self.start,
            self.executions + self.restores,
            st.states(),
            depth,
        );
        if !st.backtrack() {
            // The job is done. Where tasks can still move, run them to their end (fast-forward,
            // as a replaying search's tail): stopping here would unwind every unfinished task's
            // coroutine, which costs more than a tail (model.md, "The search"). A cluster's jobs
            // are a few states each, so that is most of what a job costs.
            if enabled == 0 {
                return Decision::Stop;
            }
            self.draining = true;
            self.ghost.set_mode(Mode::FastForward);
            self.tail += 1;
            self.steps += 1;
            return Decision::Run(lowest(enabled));
        }
        let depth = if st.por { st.pframes.len() } else { st.frames.len() };
        while let Some(s) = self.snaps.pop_if(|s| s.depth > depth) {
            self.bytes -= s.bytes;
            self.spare.push(s);
        }
        let snap = self.snaps.last().expect("the first state with a transition left has a snapshot");
        // From the snapshot's state: its chosen transition and those of the states after it on
        // the path, the last of which is the new one.
        let chosen = |i: usize| if st.por { st.pframes[i].chosen } else { st.frames[i].chosen };
        let first = chosen(snap.depth - 1);
        self.replay.clear();
        self.replay.extend((snap.depth..depth).map(chosen));
        self.next = 0;
        if st.defect != Some(ReductionDefect::SnapshotForgetsGhost) {
            self.ghost.restore(&snap.ghost);
        } else {
            self.ghost.set_mode(Mode::Explore);
            let _ = self.ghost.take();
            let _ = self.ghost.take_step();
        }
        set_strong_count(&self.cfg, snap.counts[0]);
        set_strong_count(&self.ghost, snap.counts[1]);
        set_strong_count(&self.fin, snap.counts[2]);
        self.restores += 1;
        self.steps += 1;
        if !self.replay.is_empty() {
            self.ghost.set_mode(Mode::Replay);
            self.replayed += 1;
        }
        Decision::Restore(&snap.rt, first as TaskId)
    }
}

impl<M: Checked> SnapChooser for SnapSearch<'_, '_, M> {
    fn choose<'s>(&'s mut self, p: &SchedPoint<'_>) -> Decision<'s> {
        if self.draining {
            self.tail += 1;
            self.steps += 1;
            return Decision::Run(lowest(p.enabled()));
        }
        if self.next < self.replay.len() {
            let t = self.replay[self.next];
            self.next += 1;
            self.steps += 1;
            if self.root.is_some() {
                // A job's schedule: its last transition was counted by the worker that gave
                // the job away (`arrive_root` drops its findings).
                self.replayed += 1;
            } else if self.next == self.replay.len() {
                // The last replayed choice is the new transition: its findings count.
                let _ = self.ghost.take();
                let _ = self.ghost.take_step();
                self.ghost.set_mode(Mode::Explore);
            } else {
                self.replayed += 1;
            }
            return Decision::Run(t as TaskId);
        }
        let depth = self.depth();
        let mut ff = false;
        let g = Arc::clone(&self.ghost);
        let root = self.root.take();
        if root.is_some() {
            self.replay.clear();
            self.next = 0;
        }
        if root.is_some() && std::mem::take(&mut self.candidate) {
            // Another process counted the transition into it.
            self.st.skip_arrival = true;
        }
        let t = if let (Some(todo), false) = (root, self.st.skip_arrival) {
            self.st.arrive_root(p, &g, todo)
        } else if self.st.por {
            self.st.arrive_por(p, &g, &mut ff)
        } else {
            self.st.arrive(p, &g, &mut ff)
        };
        if ff {
            // A known state (or a search that must stop): no tail, straight back.
            return self.back(p.enabled());
        }
        debug_assert_eq!(self.depth(), depth + 1, "a new state pushes a frame");
        let todo = if self.st.por { self.st.pframes[depth].todo } else { self.st.frames[depth].todo };
        if todo != 0 && (self.snaps.is_empty() || self.bytes < self.cap) {
            let prev = self.snaps.last().map(|s| &s.rt);
            let counts = self.counts();
            let mut snap = match self.spare.pop() {
                Some(mut s) => {
                    g.save_into(&mut s.ghost);
                    s
                }
                None => Snap { depth: 0, bytes: 0, rt: Snapshot::default(), ghost: g.save(), counts },
            };
            p.snapshot_into(prev, &mut snap.rt);
            snap.bytes = snap.rt.bytes_beyond(prev);
            snap.depth = depth + 1;
            snap.counts = counts;
            self.bytes += snap.bytes;
            self.peak = self.peak.max(self.bytes);
            self.snaps.push(snap);
        }
        self.steps += 1;
        Decision::Run(t)
    }

    fn ended<'s>(&'s mut self, _p: &SchedPoint<'_>, end: &RunEnd) -> Decision<'s> {
        if self.draining {
            // The tail after the job: nothing in it counts.
            self.fin.lock().unwrap_or_else(|e| e.into_inner()).take();
            return Decision::Stop;
        }
        let fin = self.fin.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.st.ended(end, fin.as_ref(), &self.ghost);
        // The final state lives in the execution's heap: gone with the restore.
        drop(fin);
        self.back(0)
    }
}

impl<M: Checked> Search<'_, M> {
    fn should_stop(&mut self) -> bool {
        if self.st.stopped_by.is_some() || self.st.target.is_some() || self.error.is_some() {
            return true;
        }
        if self.st.shared.as_ref().is_some_and(|sh| sh.stop.load(std::sync::atomic::Ordering::Relaxed)) {
            return true;
        }
        if self.opts.max_duration.is_some_and(|d| self.start.elapsed() >= d) {
            self.st.stopped_by = Some("time limit");
        }
        self.st.stopped_by.is_some()
    }

    fn progress(&mut self) {
        let depth = self.st.prefix.len() + self.st.frames.len().max(self.st.pframes.len());
        report_progress(
            self.opts,
            &mut self.last_progress,
            self.start,
            self.runner.executions,
            self.st.states(),
            depth,
        );
    }

    // ---------------------------------------------------------------- depth-first search

    /// The depth-first search (under partial-order reduction, with the states' sleep sets and
    /// no Tarjan): executions until every transition of every reachable state has been
    /// explored, or a decisive violation, a budget or an error stops it. Each execution replays
    /// the choices of the states on the search path, then explores new transitions until it
    /// reaches a known state, then runs to its end (fast-forward).
    fn dfs(&mut self) {
        // Workers snapshot too: a job (from a worker of this machine, or a candidate state
        // from another process of a cluster) replays its schedule once, then its subtree is
        // searched by snapshots.
        let job = self.st.prefix.is_empty() || self.st.root.is_some();
        if self.snapshot_not_applied.is_none() && job {
            return self.dfs_snapshots();
        }
        // A job's first execution replays the schedule to the state it starts from.
        let mut replay: Vec<u8> = self.st.prefix.clone();
        loop {
            if self.should_stop() {
                return;
            }
            self.progress();
            if let Some(job) = self.st.donate() {
                self.st.shared.as_ref().expect("a donation is shared").give(job);
            }
            let mut step = 0usize;
            let mut ff = false;
            let mut tail = 0u64;
            let root = self.st.root.take();
            let candidate = std::mem::take(&mut self.st.candidate);
            let st = &mut self.st;
            let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
                let i = step;
                step += 1;
                if i < replay.len() {
                    if i + 1 == replay.len() && root.is_none() {
                        // The last replayed choice is a new transition: its findings (and,
                        // under partial-order reduction, its footprint) count.
                        let _ = g.take();
                        let _ = g.take_step();
                        g.set_mode(Mode::Explore);
                    }
                    return replay[i] as TaskId;
                }
                if ff {
                    tail += 1;
                    return lowest(p.enabled());
                }
                if let (Some(todo), true) = (root, i == replay.len()) {
                    if !candidate {
                        return st.arrive_root(p, g, todo);
                    }
                    st.skip_arrival = true;
                }
                let t = if st.por { st.arrive_por(p, g, &mut ff) } else { st.arrive(p, g, &mut ff) };
                // A known state (or a search that must stop): the tail begins here.
                tail += u64::from(ff);
                t
            };
            let mode = if replay.is_empty() { Mode::Explore } else { Mode::Replay };
            let (end, fin) = self.runner.execute(mode, false, &mut chooser);
            self.st.steps_replayed += replay.len().saturating_sub(usize::from(root.is_none())) as u64;
            self.st.steps_tail += tail;
            self.st.steps_total += step as u64;
            if let RunEnd::Panicked { task, message } = &end {
                self.error = Some(format!("task {task} panicked: {message}"));
                return;
            }
            if !ff {
                self.st.ended(&end, fin.as_ref(), &self.runner.ghost);
            }
            if self.st.target.is_some() || self.st.stopped_by.is_some() || self.st.refuted {
                return;
            }
            // Backtrack to the deepest state with a transition left to explore.
            if !self.st.backtrack() {
                return;
            }
            replay.clear();
            replay.extend(self.st.path());
        }
    }

    /// [`Self::dfs`] by snapshots (docs/model.md, "Snapshots"): one execution, which the search
    /// takes back to the deepest state on its path with a transition left by restoring the
    /// snapshot it took there, where [`Self::dfs`] replays the path in a new execution. No
    /// replays, no tails; the same states, transitions and order.
    fn dfs_snapshots(&mut self) {
        let runner = &mut self.runner;
        // The workers share the budget.
        let workers = self.st.shared.as_ref().map_or(1, |sh| sh.workers()).max(1);
        let cap = self.opts.snapshot_cap.unwrap_or(((self.st.max_memory / 16).min(1 << 30) as usize) / workers);
        // A job starts by replaying its schedule to the state it was given.
        let root = self.st.root.take();
        let candidate = std::mem::take(&mut self.st.candidate);
        let replay = if root.is_some() { self.st.prefix.clone() } else { Vec::new() };
        let mode = if replay.is_empty() { Mode::Explore } else { Mode::Replay };
        let mut ch = SnapSearch {
            st: &mut self.st,
            ghost: Arc::clone(&runner.ghost),
            cfg: Arc::clone(&runner.cfg),
            fin: Arc::clone(&runner.fin),
            snaps: Vec::new(),
            spare: Vec::new(),
            bytes: 0,
            peak: 0,
            cap,
            replay,
            next: 0,
            root,
            candidate,
            draining: false,
            tail: 0,
            steps: 0,
            replayed: 0,
            restores: 0,
            opts: self.opts,
            start: self.start,
            last_progress: self.last_progress,
            executions: runner.executions,
        };
        runner.executions += 1;
        runner.ghost.reset(mode, false);
        let body = runner.body();
        let end = stateful::run_snapshots(&mut runner.pool, body, &mut ch);
        let (steps, replayed, restores, peak, tail) = (ch.steps, ch.replayed, ch.restores, ch.peak, ch.tail);
        self.last_progress = ch.last_progress;
        drop(ch);
        runner.fin.lock().unwrap_or_else(|e| e.into_inner()).take();
        runner.executions += restores;
        self.restores += restores;
        self.snapshot_bytes = self.snapshot_bytes.max(peak as u64);
        self.snapshotted = true;
        self.st.steps_total += steps;
        self.st.steps_replayed += replayed;
        self.st.steps_tail += tail;
        if let RunEnd::Panicked { task, message } = &end {
            self.error = Some(format!("task {task} panicked: {message}"));
        }
    }

    // ---------------------------------------------------------------- many workers

    /// The search with `workers` threads (parallel.rs): each runs [`Self::dfs`] on its own
    /// runtime from the jobs it gets, over one shared visited table; the first decisive
    /// violation, budget or error stops them all. Then, if `progress` is checked, the fair
    /// components of the graph they recorded.
    fn parallel(&mut self, workers: usize) {
        let shared = Arc::new(Shared::new(workers));
        let with_graph = self.spec.invariants.contains(&M::PROGRESS) || lasso_checked(self.spec);
        let quiet = Options { progress: None, ..self.opts.clone() };
        let (spec, engine, max_states, opts) = (self.spec, self.engine, self.st.max_states, self.opts);
        let outs: Vec<WorkerOut> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let shared = Arc::clone(&shared);
                    let opts = if w == 0 { opts } else { &quiet };
                    sc.spawn(move || {
                        // A worker that panics (an engine bug) stops the others, which would
                        // otherwise wait for it for ever; its panic is then re-raised below.
                        struct HaltOnPanic<'s>(&'s Shared);
                        impl Drop for HaltOnPanic<'_> {
                            fn drop(&mut self) {
                                if std::thread::panicking() {
                                    self.0.halt();
                                }
                            }
                        }
                        let _halt = HaltOnPanic(&shared);
                        let mut s = Search::new(spec, engine, opts, max_states);
                        s.st.shared = Some(Arc::clone(&shared));
                        s.st.graph = with_graph.then(Graph::default);
                        // Worker 0 starts at the initial state; the others wait for jobs.
                        let mut first = w == 0;
                        loop {
                            if !first {
                                match shared.take() {
                                    Some(job) => s.st.start_job(job),
                                    None => break,
                                }
                            }
                            first = false;
                            s.dfs();
                            if s.st.target.is_some() || s.st.stopped_by.is_some() || s.error.is_some() {
                                shared.halt();
                                break;
                            }
                        }
                        WorkerOut {
                            executions: s.runner.executions,
                            transitions: s.st.transitions,
                            max_depth: s.st.max_depth,
                            coverage: s.st.coverage,
                            violated: s.st.violated,
                            first_violation: s.st.first_violation,
                            target: s.st.target,
                            stopped_by: s.st.stopped_by,
                            error: s.error,
                            slept: s.st.slept,
                            revisits: s.st.revisits,
                            steps: (s.st.steps_total, s.st.steps_replayed, s.st.steps_tail),
                            stored: s.st.stored,
                            graph: s.st.graph,
                            memory: 0,
                            sent: (0, 0),
                            snapshots: (s.snapshotted, s.restores, s.snapshot_bytes),
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        self.merge(outs, workers, shared, with_graph);
    }

    /// What the workers found, as one search's: counts summed, the first target, then (if
    /// `progress` or a lasso invariant is checked and nothing stopped the search) the fair
    /// components of the graph they recorded together.
    fn merge(&mut self, outs: Vec<WorkerOut>, workers: usize, shared: Arc<Shared>, with_graph: bool) {
        self.workers = workers;
        self.worker_states =
            (outs.iter().map(|o| o.stored).min().unwrap_or(0), outs.iter().map(|o| o.stored).max().unwrap_or(0));
        let st = &mut self.st;
        let mut graphs = Vec::new();
        for o in outs {
            self.runner.executions += o.executions;
            st.transitions += o.transitions;
            st.max_depth = st.max_depth.max(o.max_depth);
            for (k, v) in o.coverage {
                *st.coverage.entry(k).or_insert(0) += v;
            }
            for (k, v) in o.violated {
                *st.violated.entry(k).or_insert(0) += v;
            }
            for (k, v) in o.first_violation {
                let e = st.first_violation.entry(k).or_insert(v);
                *e = (*e).min(v);
            }
            st.target = st.target.take().or(o.target);
            st.stopped_by = st.stopped_by.or(o.stopped_by);
            self.error = self.error.take().or(o.error);
            st.slept += o.slept;
            st.revisits += o.revisits;
            st.steps_total += o.steps.0;
            st.steps_replayed += o.steps.1;
            st.steps_tail += o.steps.2;
            graphs.extend(o.graph);
            self.sent.0 += o.sent.0;
            self.sent.1 += o.sent.1;
            self.snapshotted |= o.snapshots.0;
            self.restores += o.snapshots.1;
            self.snapshot_bytes = self.snapshot_bytes.max(o.snapshots.2);
            self.cluster_memory += o.memory;
        }
        st.shared = Some(shared);
        if with_graph && st.target.is_none() && st.stopped_by.is_none() && self.error.is_none() {
            let pass = Instant::now();
            self.fair_components(&graphs);
            self.cycle_pass_seconds = pass.elapsed().as_secs_f64();
        }
    }

    /// `progress` over the graph the workers recorded: a component with a transition inside it
    /// where every task moves or is disabled somewhere is a fair cycle (as in
    /// [`Dfs::pop_frame`], with the same closure under the symmetry group). Inside each fair
    /// component, the fair cycles of the model's lasso invariants (`no-soft-lockup`): for each
    /// stuck situation of the online monitors, the fair components of the states that keep it
    /// ([`Stored::class_cycles`]). Every one counts; the counterexample is the first cycle of a
    /// checked lasso invariant, or else the first fair cycle.
    fn fair_components(&mut self, graphs: &[Graph]) {
        let stored = Stored::new(graphs);
        let inv = M::PROGRESS.name();
        let checks_progress = self.spec.invariants.contains(&M::PROGRESS);
        let mut first: Option<Target> = None;
        for c in stored.components() {
            if !self.st.task_maps.is_empty() {
                let (mut cm, mut cd) = (c.moves, c.disabled);
                for map in &self.st.task_maps {
                    cm |= map_mask(map, c.moves);
                    cd |= map_mask(map, c.disabled);
                }
                if (cm | cd) & c.tasks == c.tasks {
                    self.st.refuted = true;
                    return;
                }
                continue;
            }
            if !c.fair() {
                continue;
            }
            if checks_progress {
                self.st.count_violations(&[inv]);
                if first.is_none() && self.st.decisive(&[inv]).is_some() {
                    first = Some(Target::Cycle {
                        members: c.members.iter().copied().collect(),
                        must_move: c.tasks & !c.disabled,
                        path: Vec::new(),
                        class: None,
                    });
                }
            }
            let ignore_key = self.st.defect == Some(ReductionDefect::LassoClassIgnoresKey);
            for (k, sub) in stored.class_cycles(&c, ignore_key) {
                let Some(&id) = M::LASSO.get(k.class as usize) else { continue };
                if !self.spec.invariants.contains(&id) {
                    continue;
                }
                self.st.count_violations(&[id.name()]);
                if !matches!(first, Some(Target::Cycle { class: Some(_), .. }))
                    && self.st.decisive(&[id.name()]).is_some()
                {
                    first = Some(Target::Cycle {
                        members: sub.members.iter().copied().collect(),
                        must_move: (sub.tasks & !sub.disabled) | k.must_move,
                        path: Vec::new(),
                        class: Some(k.class),
                    });
                }
            }
        }
        if let Some(Target::Cycle { members, must_move, class, .. }) = first {
            let path = stored
                .initial
                .and_then(|i| parallel::path_to(graphs, i, &|fp| members.contains(&fp)))
                .unwrap_or_default();
            self.st.target = Some(Target::Cycle { members, must_move, path, class });
        }
    }

    // ---------------------------------------------------------------- probes and BFS

    /// Replay `choices`; report the state after them and what their last transition found.
    fn probe(&mut self, choices: &[u8]) -> Probe {
        let invariants = &self.spec.invariants;
        let ids = |found: &OnlineFound<M>| -> Vec<&'static str> {
            found.violated.iter().filter(|i| invariants.contains(i)).map(|i| i.name()).collect()
        };
        let census = self.st.census.is_some();
        let mut step = 0usize;
        let mut state = None;
        let mut violated = Vec::new();
        let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
            let i = step;
            step += 1;
            if i + 1 == choices.len() {
                let _ = g.take();
            }
            if i < choices.len() {
                return choices[i] as TaskId;
            }
            if i == choices.len() {
                let fp = if census { Dfs::<M>::identity_fingerprint(p, g) } else { Dfs::<M>::fingerprint(p, g) };
                state = Some((fp, p.enabled()));
                let (found, _) = g.take();
                violated.extend(ids(&found));
                g.set_mode(Mode::FastForward);
            }
            lowest(p.enabled())
        };
        let (end, fin) = self.runner.execute(Mode::Replay, false, &mut chooser);
        if state.is_none() {
            // The schedule's last transition ended the execution.
            let g = &self.runner.ghost;
            let (found, _) = g.take();
            violated.extend(ids(&found));
            match (end, fin) {
                (RunEnd::AllFinished, Some(fin)) => violated.extend(ids(&g.end(&fin))),
                (RunEnd::Deadlock { .. }, _) if invariants.contains(&M::PROGRESS) => violated.push(M::PROGRESS.name()),
                _ => {}
            }
        }
        violated.sort_unstable();
        violated.dedup();
        Probe { state, violated }
    }

    /// Breadth-first from the state `start` leads to, over states `allowed` admits, carrying
    /// the mask of the tasks that have moved since: the shortest schedule (after `start`, at
    /// most `max_len` long) whose last transition satisfies `goal`.
    fn bfs(
        &mut self,
        start: &[u8],
        max_len: usize,
        budget: u64,
        allowed: &dyn Fn(u64) -> bool,
        goal: &dyn Fn(&Probe, u32) -> bool,
    ) -> Option<Vec<u8>> {
        let limit = self.runner.executions.saturating_add(budget);
        let (fp0, en0) = self.probe(start).state?;
        let mut seen: HashSet<(u64, u32)> = HashSet::new();
        let mut queue: VecDeque<(u32, u32, Vec<u8>)> = VecDeque::new();
        seen.insert((fp0, 0));
        queue.push_back((en0, 0, Vec::new()));
        while let Some((enabled, moved, path)) = queue.pop_front() {
            if path.len() >= max_len {
                continue;
            }
            if self.runner.executions >= limit {
                return None;
            }
            let mut e = enabled;
            while e != 0 {
                let t = e.trailing_zeros() as u8;
                e &= !(1 << t);
                let mut next = path.clone();
                next.push(t);
                let mut full = start.to_vec();
                full.extend_from_slice(&next);
                let probe = self.probe(&full);
                let moved = moved | 1 << t;
                if goal(&probe, moved) {
                    return Some(next);
                }
                if let Some((fp, en)) = probe.state {
                    if allowed(fp) && seen.insert((fp, moved)) {
                        queue.push_back((en, moved, next));
                    }
                }
            }
        }
        None
    }

    /// Replay `choices` with the recorder on, for the report. With `cycle`, the recording
    /// stops where the choices end (what follows is the harness ending the execution, not a
    /// part of the lasso), and the position where the cycle starts is returned.
    fn record(&mut self, choices: &[u8], cycle: Option<usize>) -> Recorded {
        let mut step = 0usize;
        let mut cycle_from = None;
        let mut schedule_end = None;
        let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
            let i = step;
            step += 1;
            if Some(i) == cycle {
                cycle_from = Some(g.recorded_len());
            }
            if i < choices.len() {
                return choices[i] as TaskId;
            }
            if i == choices.len() {
                schedule_end = Some(g.recorded_len());
                g.set_mode(Mode::FastForward);
            }
            lowest(p.enabled())
        };
        let (end, fin) = self.runner.execute(Mode::Replay, true, &mut chooser);
        let mut events = self.runner.ghost.take_record();
        let mutation_reached = self.runner.ghost.mutation_reached();
        let violations = match (&fin, cycle) {
            (Some(fin), None) => {
                let exec = Exec::<M> { cfg: &self.spec.cfg, events: &events, fin };
                monitor::check(&exec, &self.spec.invariants)
            }
            _ => Vec::new(),
        };
        if cycle.is_some() {
            events.truncate(schedule_end.unwrap_or(events.len()));
        }
        // The coverage of the events shown (a replay's coverage line counts this one
        // execution, as loom's and shuttle's count the executions they replayed).
        let coverage = match &fin {
            Some(fin) => monitor::coverage(&Exec::<M> { cfg: &self.spec.cfg, events: &events, fin }),
            None => {
                let mut m = BTreeMap::new();
                for c in events.iter().filter_map(|(_, e)| M::coverage(e)) {
                    *m.entry(c.name()).or_insert(0) += 1;
                }
                m
            }
        };
        Recorded {
            trace: Trace::new(events),
            coverage,
            violations,
            mutation_reached,
            cycle_from,
            deadlock: matches!(end, RunEnd::Deadlock { .. }),
        }
    }

    /// The violation of a lasso (the engine's own: no monitor sees an infinite execution).
    fn lasso_violation(at: usize) -> Violation {
        Violation::new(
            M::PROGRESS,
            Some(at),
            format!(
                "the execution can go on for ever: from #{at} on, the steps marked ~ bring it back to the state it was \
                 in at #{at}, and repeat; every task that can move at every step of the cycle moves in it (a fair \
                 cycle, found with no step bound)"
            ),
        )
    }

    /// A recorded schedule as a counterexample. `class`: for a cycle the search found, the
    /// lasso invariant it classed it under (`Some(None)`: none); `None` for a replay.
    ///
    /// A lasso is also judged by the trace form of the lasso invariants ([`Checked::lasso`]),
    /// whose violations come first (they name the verdict). A cycle the search classed under
    /// an invariant must be one the trace form names too: if not, the two forms disagree and
    /// the outcome is an error. A cycle the search did not class keeps its verdict (the
    /// search decided on the whole graph that no fair cycle of a lasso invariant exists; the
    /// shortest lasso through a fair component is not always fair itself). A replay takes
    /// the trace form's word.
    fn report(&mut self, r: Recorded, choices: Vec<u8>, cycle: Option<usize>, class: Option<Option<u8>>) -> Found {
        let mut violations = r.violations;
        if cycle.is_some() {
            let from = r.cycle_from.unwrap_or(0);
            let invariants = &self.spec.invariants;
            let judged: Vec<Violation> = r
                .trace
                .events::<M::Event>()
                .map(|events| M::lasso(&self.spec.cfg, events, from))
                .unwrap_or_default()
                .into_iter()
                .filter(|v| invariants.iter().any(|i| i.name() == v.invariant))
                .collect();
            let keep: Vec<Violation> = match class {
                None => {
                    for v in &judged {
                        *self.st.violated.entry(v.invariant).or_insert(0) += 1;
                        self.st.first_violation.entry(v.invariant).or_insert(self.st.transitions);
                    }
                    judged
                }
                Some(None) => Vec::new(),
                Some(Some(c)) => {
                    let want = M::LASSO.get(c as usize).map(|i| i.name()).unwrap_or("?");
                    let (named, _): (Vec<Violation>, Vec<Violation>) =
                        judged.into_iter().partition(|v| v.invariant == want);
                    if named.is_empty() && self.error.is_none() {
                        self.error = Some(format!(
                            "the search found a fair cycle of {want} (its online form), but the lasso it reports is not                              one by the trace form of {want} (an engine or monitor bug)"
                        ));
                    }
                    named
                }
            };
            violations.splice(0..0, keep);
            violations.push(Self::lasso_violation(from));
        } else if r.deadlock {
            violations.push(Violation::new(
                M::PROGRESS,
                r.trace.len().checked_sub(1),
                "no task can move and some have not finished: they never will (a deadlock)".into(),
            ));
        }
        Found {
            replay: Replay::Schedule { choices, cycle },
            trace: r.trace,
            violations,
            mutation_reached: r.mutation_reached,
            cycle_from: r.cycle_from,
        }
    }

    /// The shortest counterexample for what the depth-first search found: a breadth-first
    /// pass, given as many executions as the depth-first search took transitions (and at least
    /// 20,000); if it runs out, the depth-first search's own schedule (not always the shortest).
    fn shortest(&mut self) -> Option<Found> {
        let budget = self.st.transitions.max(20_000);
        match self.st.target.take()? {
            Target::Safety { invariant, path } => {
                let short = self.bfs(&[], path.len(), budget, &|_| true, &|p, _| p.violated.contains(&invariant));
                let path = short.unwrap_or(path);
                let r = self.record(&path, None);
                Some(self.report(r, path, None, None))
            }
            Target::Cycle { members, must_move, path, class } => {
                let inside = |fp: u64| members.contains(&fp);
                // The shortest way into the component.
                let prefix = self
                    .bfs(&[], path.len() + 1, budget, &|_| true, &|p, _| p.state.is_some_and(|(fp, _)| inside(fp)))
                    .unwrap_or(path);
                let entry = self.probe(&prefix).state?.0;
                // The shortest fair cycle through the entry: back to it, every task that must
                // move having moved (inside the component, which is small).
                let cycle = self.bfs(&prefix, members.len() * 32 + 32, u64::MAX, &inside, &|p, moved| {
                    p.state.is_some_and(|(fp, _)| fp == entry) && moved & must_move == must_move
                })?;
                let mut choices = prefix.clone();
                choices.extend_from_slice(&cycle);
                let r = self.record(&choices, Some(prefix.len()));
                Some(self.report(r, choices, Some(prefix.len()), Some(class)))
            }
        }
    }

    /// The search's outcome, and whether symmetry must be switched off to decide `progress`.
    pub fn run(mut self) -> (Outcome, bool) {
        let mut found = None;
        if let Some(Replay::Schedule { choices, cycle }) = self.opts.replay.clone() {
            let r = self.record(&choices, cycle);
            self.st.coverage = r.coverage.clone();
            found = Some(self.report(r, choices, cycle, None));
        } else {
            // A lasso invariant is decided on the stored graph (`fair_components`), so its
            // search takes the path of many workers, with one worker if one was asked for.
            if let Some(c) = self.opts.cluster.clone() {
                self.cluster(&c);
            } else if (self.opts.workers > 1 || lasso_checked(self.spec)) && self.st.census.is_none() {
                self.parallel(self.opts.workers.max(1));
            } else {
                self.dfs();
            }
            if self.error.is_none() && !self.st.refuted {
                let what = match &self.st.target {
                    Some(Target::Safety { invariant, .. }) => Some(*invariant),
                    Some(Target::Cycle { .. }) => Some(M::PROGRESS.name()),
                    None => None,
                };
                found = self.shortest();
                if let (Some(inv), None) = (what, &found) {
                    self.error = Some(format!(
                        "the search found a violation of {inv} but replaying it did not reproduce it (a \
                         nondeterminism in the model, or an engine bug)"
                    ));
                }
            }
        }
        // A cluster's process other than 0 helped with a search whose outcome is process 0's.
        let complete = self.st.stopped_by.is_none()
            && self.error.is_none()
            && found.is_none()
            && self.opts.replay.is_none()
            && !self.cluster_follower;
        let n = self.st.states() as f64;
        let stats = StateStats {
            states: self.st.states(),
            transitions: self.st.transitions,
            max_depth: self.st.max_depth,
            memory_bytes: if self.cluster_memory > 0 { self.cluster_memory } else { self.st.memory_bytes() },
            collision_probability: n * (n - 1.0).max(0.0) / 2f64.powi(65),
            stopped_by: self.st.stopped_by,
            reductions: match (self.symmetry_group > 1 && self.st.census.is_none(), self.st.por, self.snapshotted) {
                (false, false, false) => "none",
                (true, false, false) => "symmetry",
                (false, true, false) => "por",
                (true, true, false) => "symmetry+por",
                (false, false, true) => "snapshot",
                (false, true, true) => "por+snapshot",
                (true, _, true) => unreachable!("no snapshots under symmetry"),
            },
            snapshot_not_applied: self.snapshot_not_applied,
            restores: self.restores,
            snapshot_bytes: self.snapshot_bytes,
            symmetry_group: self.symmetry_group,
            symmetry_not_applied: self.symmetry_not_applied,
            por_not_applied: self.por_not_applied,
            slept: self.st.slept,
            revisits: self.st.revisits,
            steps: self.st.steps_total,
            replayed_steps: self.st.steps_replayed,
            tail_steps: self.st.steps_tail,
            workers: self.workers.max(1),
            worker_states_min: self.worker_states.0,
            worker_states_max: self.worker_states.1,
            processes: self.processes,
            cluster_follower: self.cluster_follower,
            states_sent: self.sent.0,
            bytes_sent: self.sent.1,
            cycle_pass_seconds: self.cycle_pass_seconds,
            orbit_census: self.st.census(self.symmetry_group),
        };
        let outcome = Outcome {
            engine: self.engine,
            executions: self.runner.executions,
            seconds: self.start.elapsed().as_secs_f64(),
            complete,
            found,
            violated: self.st.violated,
            first_violation: self.st.first_violation,
            coverage: self.st.coverage,
            error: self.error,
            // The online monitors are this engine's only monitors: nothing to compare.
            online_checked: 0,
            stats: Some(stats),
        };
        (outcome, self.st.refuted)
    }
}

/// A schedule replayed with the recorder on.
struct Recorded {
    trace: Trace,
    coverage: BTreeMap<&'static str, u64>,
    violations: Vec<Violation>,
    mutation_reached: bool,
    cycle_from: Option<usize>,
    deadlock: bool,
}
