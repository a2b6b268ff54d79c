//! The state space of one [`Spec`]: executions of the model's own code on the stateful
//! platform (`mmmodel::platform::stateful`: every task a coroutine, every scheduling choice
//! ours), a state's fingerprint and its images under symmetry, probes (replay a schedule and
//! say where it leads) and recordings (replay it with the recorder on, for the report). With
//! the ghost (`ghost.rs`, the online monitors' half of a state), this is the layer that knows
//! the platform: every other layer names the platform's types through this file.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mmmodel::ghost::Pid;
use mmmodel::kernel::sched::Start;
use mmmodel::model::{run, Named};
use mmmodel::platform::stateful;
pub(super) use mmmodel::platform::stateful::{
    Decision, Op, RunEnd, SchedPoint, SnapChooser, Snapshot, StackPool, SymImage, TaskId,
};
use mmmodel::platform::Stateful;

use super::ghost::{LiveLocals, Mode, StatefulGhost};
use crate::engine::types::{Memory, Options, ReductionDefect};
use crate::monitor::online::{Found as OnlineFound, Online};
use crate::monitor::{self, Checked, Exec, Violation};
use crate::spec::Spec;
use crate::trace::Trace;

/// Runs executions of one spec on the stateful platform.
pub(super) struct Runner<M: Checked> {
    pub cfg: Arc<M::Config>,
    pub ghost: Arc<StatefulGhost<M>>,
    pub fin: Arc<Mutex<Option<M::Final>>>,
    pool: StackPool,
    pub executions: u64,
}

impl<M: Checked> Runner<M> {
    /// A runner for `spec` whose ghost runs the online monitors (with the loop summaries unless
    /// `opts.history_only`, and the model's live-locals declarations as `opts` asks),
    /// canonicalising under the group `images` (with `perms`, the same in the model's terms),
    /// and with a runtime defect seeded if `opts.reduce.defect` is one.
    pub fn new(
        spec: &Spec<M>,
        opts: &Options,
        images: &[SymImage],
        perms: Vec<mmmodel::model::Perm>,
        por: bool,
        memory: Memory,
    ) -> Self {
        let (history_only, defect) = (opts.history_only, opts.reduce.defect);
        let (live_locals, live_census) = (opts.reduce.live_locals, opts.live_census);
        let mut pool = StackPool::new();
        pool.set_memory(match memory {
            Memory::Sc => stateful::Memory::Sc,
            Memory::Lkmm => stateful::Memory::Lkmm,
        });
        match defect {
            Some(ReductionDefect::SymmetryForgetsNodeObjects) => pool.seed_symmetry_defect_forget_node_objects(),
            Some(ReductionDefect::SymmetryJoinsInOrder) => pool.seed_symmetry_defect_join_in_order(),
            Some(ReductionDefect::SymmetrySortsWaitLists) => pool.seed_symmetry_defect_sort_wait_lists(),
            Some(ReductionDefect::SymmetrySignatureOwnLocal) => pool.seed_symmetry_defect_signature_own_local(),
            Some(ReductionDefect::SymmetrySignatureRawOp) => pool.seed_symmetry_defect_signature_raw_op(),
            _ => {}
        }
        pool.set_symmetry(images);
        pool.set_symmetry_all_images(!opts.reduce.sorted_symmetry);
        if defect == Some(ReductionDefect::SnapshotForgetsImageLocals) {
            pool.seed_snapshot_defect_keep_image_locals();
        }
        if defect == Some(ReductionDefect::SnapshotForgetsObjects) {
            pool.seed_snapshot_defect_keep_objects();
        }
        let forget = defect == Some(ReductionDefect::LiveLocalsForgetContext);
        let live = match (live_locals && M::LIVE_LOCALS, live_census, forget) {
            (false, _, _) => LiveLocals::Off,
            (true, true, forget) => LiveLocals::Census(forget),
            (true, false, true) => LiveLocals::ForgetContext,
            (true, false, false) => LiveLocals::On,
        };
        pool.set_live_census(live_census);
        let project = match (opts.reduce.projection, defect) {
            (true, Some(ReductionDefect::ProjectionDropsReadParts)) => <M::Online as Online<M>>::projection(&[]),
            (true, _) => <M::Online as Online<M>>::projection(&spec.invariants),
            (false, _) => 0,
        };
        let ghost =
            StatefulGhost::new(spec.cfg.clone(), !history_only, perms).with_live_locals(live).with_projection(project);
        ghost.set_por(por);
        Runner {
            cfg: Arc::new(spec.cfg.clone()),
            ghost: Arc::new(ghost),
            fin: Arc::new(Mutex::new(None)),
            pool,
            executions: 0,
        }
    }

    /// Run one execution: `chooser` decides every scheduling point. Returns how it ended and
    /// the final state if every task finished.
    pub fn execute(
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
        let fin = self.take_final();
        (end, fin)
    }

    /// Run one execution that `chooser` takes back to earlier states by restoring snapshots
    /// (`snapshots.rs`).
    pub fn execute_snapshots(&mut self, mode: Mode, chooser: &mut dyn SnapChooser) -> RunEnd {
        self.executions += 1;
        self.ghost.reset(mode, false);
        let body = self.body();
        stateful::run_snapshots(&mut self.pool, body, chooser)
    }

    /// The final state the last execution left, if every task finished.
    pub fn take_final(&self) -> Option<M::Final> {
        self.fin.lock().unwrap_or_else(|e| e.into_inner()).take()
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

// ---------------------------------------------------------------- states

pub(super) fn mix(a: u64, b: u64) -> u64 {
    let r = (a ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ b.rotate_left(29);
    let r = (r ^ (r >> 31)).wrapping_mul(0x94d0_49bb_1331_11eb);
    r ^ (r >> 32)
}

/// The whole state at a scheduling point.
#[inline]
pub(super) fn fingerprint<M: Checked>(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
    fingerprint_image(p, ghost).0
}

/// The fingerprint, and the group element whose image it is (`None`: the identity).
pub(super) fn fingerprint_image<M: Checked>(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> (u64, Option<usize>) {
    let g = p.symmetry_images();
    if g == 0 {
        return (identity_fingerprint(p, ghost), None);
    }
    // Symmetry: the least fingerprint over the state's candidate images (its orbit's
    // representative): the elements that sort its orbits of tasks, or every element.
    let mut ks = [0usize; super::symmetry::MAX_GROUP];
    let (identity, n) = p.canonical_candidates(&mut ks);
    let mut runtime = [0u64; super::symmetry::MAX_GROUP];
    p.fingerprint_images_of(&ks[..n], &mut runtime[..n]);
    let mut best: Option<(u64, Option<usize>)> = identity.then(|| (identity_fingerprint(p, ghost), None));
    for (&k, &r) in ks[..n].iter().zip(&runtime[..n]) {
        let f = mix(r, ghost.state_hash_image(k));
        if best.is_none_or(|(fp, _)| f < fp) {
            best = Some((f, Some(k)));
        }
    }
    best.expect("a sorting element of the group, or the identity")
}

/// The whole state at a scheduling point, not canonicalised.
pub(super) fn identity_fingerprint<M: Checked>(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
    let runtime = if ghost.summaries() { p.fingerprint() } else { p.fingerprint_keeping_finished() };
    mix(runtime, ghost.state_hash())
}

/// The fingerprint the state would have with the model's live-locals declarations applied
/// (the live-locals census; tests only).
pub(super) fn shadow_fingerprint<M: Checked>(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>) -> u64 {
    mix(p.fingerprint_shadow(), ghost.state_hash())
}

/// The fingerprint of the state's image under element `k` of the symmetry group.
pub(super) fn image_fingerprint<M: Checked>(p: &SchedPoint<'_>, ghost: &StatefulGhost<M>, k: usize) -> u64 {
    mix(p.fingerprint_image(k), ghost.state_hash_image(k))
}

/// The mask of every task that exists at `p`.
pub(super) fn tasks_mask(p: &SchedPoint<'_>) -> u32 {
    if p.num_tasks() >= 32 {
        u32::MAX
    } else {
        (1u32 << p.num_tasks()) - 1
    }
}

/// The lowest task of a mask.
#[inline]
pub(super) fn lowest(mask: u32) -> TaskId {
    mask.trailing_zeros() as TaskId
}

/// The runtime's shape at a point: tasks, objects and locks made, and tasks finished (a step
/// that changes it is dependent on every other, `por.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Shape {
    pub tasks: usize,
    pub objects: usize,
    pub locks: usize,
    pub finished: u32,
}

impl Shape {
    pub fn of(p: &SchedPoint<'_>) -> Self {
        Shape { tasks: p.num_tasks(), objects: p.num_objects(), locks: p.num_locks(), finished: p.finished() }
    }
}

// ---------------------------------------------------------------- what a start does

impl<M: Checked> Runner<M> {
    /// The tasks seen waiting at their start on one execution (the lowest enabled task first:
    /// the body spawns the others before any of them runs) whose start (the code before their
    /// first operation) is invisible and local: it emits no event, touches none of the ghost's sleep
    /// and exit bookkeeping, makes no task, object or lock, and does not end the task. That
    /// code reads nothing shared (every access is an operation) and no other task's state, so
    /// what it does is the same from every state: one execution a task, each taking that
    /// task's start first, learns it.
    pub fn local_starts(&mut self, defect: Option<ReductionDefect>) -> u32 {
        // The seeded defect: a start that emits events counts as local all the same.
        let visible_ok = defect == Some(ReductionDefect::PersistentIgnoresVisibility);
        let por = self.ghost.keeps_steps();
        self.ghost.set_por(true);
        // The tasks that wait at their start somewhere on that execution (a task spawned on
        // no such execution is never taken alone).
        let mut starts = 0u32;
        let mut collect = |p: &SchedPoint<'_>, _: &StatefulGhost<M>| -> TaskId {
            starts |= (0..p.num_tasks())
                .filter(|&t| p.enabled() & 1 << t != 0 && p.pending(t) == Some(Op::Start))
                .fold(0, |m, t| m | 1 << t);
            lowest(p.enabled())
        };
        self.execute(Mode::FastForward, false, &mut collect);
        let mut local = 0u32;
        for t in (0..u32::BITS as TaskId).filter(|&t| starts & 1 << t != 0) {
            let (mut before, mut ok, mut done) = (None, false, false);
            let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
                match before {
                    None if p.enabled() & 1 << t != 0 && p.pending(t) == Some(Op::Start) => {
                        g.set_mode(Mode::Explore);
                        g.discard_step();
                        before = Some(Shape::of(p));
                        return t;
                    }
                    Some(shape) if !done => {
                        let mut events = Vec::new();
                        let touch = g.take_step_into(&mut events);
                        ok = touch == 0 && (events.is_empty() || visible_ok) && Shape::of(p) == shape;
                        g.set_mode(Mode::FastForward);
                        done = true;
                    }
                    _ => {}
                }
                lowest(p.enabled())
            };
            self.execute(Mode::FastForward, false, &mut chooser);
            local |= u32::from(ok) << t;
        }
        self.ghost.set_por(por);
        self.ghost.drain_found(|_, _| ());
        self.ghost.discard_step();
        local
    }
}

// ---------------------------------------------------------------- probes and recordings

/// What one probe (a replay of a schedule, then one step) saw.
pub(super) struct Probe {
    /// The state after the schedule (`None`: the execution ended): its fingerprint, the
    /// choices there, and the task choosing there if it is a choice point of `lkmm`.
    pub state: Option<(u64, u32)>,
    pub by: Option<u8>,
    /// Whether the schedule's last transition read a store a later one had superseded.
    pub stale: bool,
    /// Invariants violated by the schedule's last transition (or at the end).
    pub violated: Vec<&'static str>,
    /// The schedule is not one of this scenario's executions (then `state` is `None` and
    /// `violated` empty).
    pub diverged: Option<Divergence>,
}

/// Where a schedule left the executions it can name: a choice of a task that cannot move
/// there, or an execution that ended before its choices did. A schedule the search took
/// replays; one read off a graph whose states a defect merged, or a replay token edited by
/// hand, may not, and is then reported, not run (the runtime panics on a task that cannot
/// move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Divergence {
    /// Choice `at` (from 0) names `task`; the tasks that could move are those of `enabled`.
    NotEnabled { at: usize, task: u8, enabled: u32 },
    /// The execution ended after `after` of the schedule's `of` choices.
    Ended { after: usize, of: usize },
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Divergence::NotEnabled { at, task, enabled } => {
                let can: Vec<String> = (0..32).filter(|t| enabled & (1 << t) != 0).map(|t| t.to_string()).collect();
                write!(
                    f,
                    "choice {} (counting from 1) names task {task}, which cannot move there (the tasks that can: {})",
                    at + 1,
                    can.join(", ")
                )
            }
            Divergence::Ended { after, of } => {
                write!(f, "the execution ended after {after} of its {of} choices")
            }
        }
    }
}

/// Choice `i` of `choices` at a point where `enabled` can move: the task, or (the first time
/// the schedule leaves the executions) the divergence, noted in `diverged`, and the lowest task
/// that can move, to end the execution.
fn scheduled(choices: &[u8], i: usize, enabled: u32, diverged: &mut Option<Divergence>) -> TaskId {
    if diverged.is_none() {
        let task = choices[i];
        if u32::from(task) < 32 && enabled & (1 << task) != 0 {
            return task as TaskId;
        }
        *diverged = Some(Divergence::NotEnabled { at: i, task, enabled });
    }
    lowest(enabled)
}

/// A schedule replayed with the recorder on.
pub(super) struct Recorded {
    pub trace: Trace,
    pub coverage: BTreeMap<&'static str, u64>,
    pub violations: Vec<Violation>,
    pub mutation_reached: bool,
    pub cycle_from: Option<usize>,
    pub deadlock: bool,
    pub exits: Vec<(Pid, usize)>,
    /// The schedule is not one of this scenario's executions (what was recorded is the part
    /// before it left them, then the lowest task that could move each time).
    pub diverged: Option<Divergence>,
}

impl<M: Checked> Runner<M> {
    /// Replay `choices`; report the state after them (its own fingerprint if `identity`, else
    /// its orbit's) and what their last transition found.
    pub fn probe(&mut self, spec: &Spec<M>, identity: bool, choices: &[u8]) -> Probe {
        let invariants = &spec.invariants;
        let ids = |found: &OnlineFound<M>| -> Vec<&'static str> {
            found.violated.iter().filter(|i| invariants.contains(i)).map(|i| i.name()).collect()
        };
        let mut step = 0usize;
        let mut state = None;
        let mut by = None;
        let mut stale = false;
        let mut violated = Vec::new();
        let mut diverged = None;
        let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
            let i = step;
            step += 1;
            if i + 1 == choices.len() {
                g.drain_found(|_, _| ());
            }
            if i < choices.len() {
                let t = scheduled(choices, i, p.enabled(), &mut diverged);
                if diverged.is_some() {
                    g.set_mode(Mode::FastForward);
                }
                return t;
            }
            if i == choices.len() && diverged.is_none() {
                let fp = if identity { identity_fingerprint(p, g) } else { fingerprint(p, g) };
                state = Some((fp, p.enabled()));
                by = p.choosing().map(|t| t as u8);
                stale = p.stale();
                let (found, _) = g.take();
                violated.extend(ids(&found));
                g.set_mode(Mode::FastForward);
            }
            lowest(p.enabled())
        };
        let (end, fin) = self.execute(Mode::Replay, false, &mut chooser);
        if diverged.is_none() && step < choices.len() {
            diverged = Some(Divergence::Ended { after: step, of: choices.len() });
        }
        if diverged.is_some() {
            return Probe { state: None, by: None, stale: false, violated: Vec::new(), diverged };
        }
        if state.is_none() {
            // The schedule's last transition ended the execution.
            let g = &self.ghost;
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
        Probe { state, by, stale, violated, diverged: None }
    }

    /// Replay `choices` with the recorder on, for the report. With `cycle`, the recording
    /// stops where the choices end (what follows is the harness ending the execution, not a
    /// part of the lasso), and the position where the cycle starts is returned.
    pub fn record(&mut self, spec: &Spec<M>, choices: &[u8], cycle: Option<usize>) -> Recorded {
        let mut step = 0usize;
        let mut cycle_from = None;
        let mut schedule_end = None;
        let mut diverged = None;
        let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
            let i = step;
            step += 1;
            if Some(i) == cycle {
                cycle_from = Some(g.recorded_len());
            }
            if i < choices.len() {
                let was = diverged.is_some();
                let t = scheduled(choices, i, p.enabled(), &mut diverged);
                if !was && diverged.is_some() {
                    schedule_end = Some(g.recorded_len());
                    g.set_mode(Mode::FastForward);
                }
                return t;
            }
            if i == choices.len() && diverged.is_none() {
                schedule_end = Some(g.recorded_len());
                g.set_mode(Mode::FastForward);
            }
            lowest(p.enabled())
        };
        let (end, fin) = self.execute(Mode::Replay, true, &mut chooser);
        if diverged.is_none() && step < choices.len() {
            diverged = Some(Divergence::Ended { after: step, of: choices.len() });
        }
        let mut events = self.ghost.take_record();
        let mut exits = self.ghost.take_exits();
        let mutation_reached = self.ghost.mutation_reached();
        let violations = match (&fin, cycle) {
            (Some(fin), None) => {
                let exec = Exec::<M> { cfg: &spec.cfg, events: &events, fin };
                monitor::check(&exec, &spec.invariants)
            }
            _ => Vec::new(),
        };
        if cycle.is_some() {
            let end = schedule_end.unwrap_or(events.len());
            events.truncate(end);
            // A task that ended only in the harness's run-out after the lasso did not finish.
            exits.retain(|&(_, n)| n < end);
        }
        // The coverage of the events shown (a replay's coverage line counts this one
        // execution, as loom's and shuttle's count the executions they replayed).
        let coverage = match &fin {
            Some(fin) => monitor::coverage(&Exec::<M> { cfg: &spec.cfg, events: &events, fin }),
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
            exits,
            diverged,
        }
    }
}
