//! The depth-first explorers, behind one [`Explorer`] trait: what the search does when an
//! execution reaches a state by a new transition ([`Explorer::arrive`]), which transition it
//! takes next ([`Explorer::backtrack`]), and what it can give another worker. Three of them:
//!
//! * [`tarjan::Tarjan`]: one search, its own visited table, Tarjan's strongly connected
//!   components along the search (fair cycles decided as each component closes);
//! * [`sleep::Sleep`]: partial-order reduction by sleep sets with state caching, on one
//!   search's table or the workers' shared one (no `progress`);
//! * [`shared::Shared`]: one of several workers (or a cluster's), on the shared table,
//!   recording its part of the state graph when a cycle invariant is checked.
//!
//! The drivers (`replay.rs`, `snapshots.rs`) run executions and call an explorer at every new
//! state; [`Ctx`] is what every explorer shares with them: the spec, the budget, the findings,
//! the job the search started from.

pub(super) mod shared;
pub(super) mod sleep;
pub(super) mod tarjan;

use std::sync::Arc;

use super::findings::{decisive, ids, Findings, Target};
use super::ghost::StatefulGhost;
use super::market::Market;
use super::space::{RunEnd, SchedPoint, TaskId};
use super::store::Budget;
use super::symmetry::Canon;
use crate::engine::types::ReductionDefect;
use crate::monitor::Checked;
use crate::spec::Spec;

/// Where a worker's search starts: the schedule to its first state (empty: the initial
/// state), the transitions it was given there (until it has reached it), and whether that
/// state is one another process sent (cluster.rs), whose arrival the sender counted.
#[derive(Default)]
pub(super) struct JobStart {
    pub prefix: Vec<u8>,
    pub root: Option<u32>,
    pub candidate: bool,
    pub skip_arrival: bool,
}

/// What every explorer shares with the drivers.
pub(super) struct Ctx<'a, M: Checked> {
    pub spec: &'a Spec<M>,
    pub budget: Budget,
    pub defect: Option<ReductionDefect>,
    pub found: Findings,
    /// Under symmetry: the group's maps of the runtime's tasks.
    pub canon: Canon,
    /// Under symmetry, a component of the quotient graph may hold a fair cycle: the search
    /// stops, and is run again without symmetry to decide it exactly.
    pub inconclusive: bool,
    pub job: JobStart,
    /// The search has stored a state (or started from a given one): from now on every new
    /// transition's findings count.
    pub began: bool,
    /// The mask of every task at the last state arrived at.
    pub tasks_mask: u32,
    /// With more than one worker: the job market and stop signal.
    pub market: Option<Arc<Market>>,
    /// Persistent sets (`persistent.rs`): whether they apply, and what they take alone.
    pub persistent: PersistentSets,
    /// `Options::check_inert` (tests only): the inert steps' commutation checked too.
    pub check_inert: bool,
}

impl<M: Checked> Ctx<'_, M> {
    /// The search must stop: a decisive violation, a budget, or symmetry that cannot decide.
    pub fn halted(&self) -> bool {
        self.found.halted() || self.inconclusive
    }
}

/// What persistent sets of one transition the search takes (`persistent.rs`).
#[derive(Default, Clone, Copy)]
pub(super) struct PersistentSets {
    /// They apply.
    pub on: bool,
    /// The tasks whose start is explored alone where they have not started (learnt before
    /// the search: [`super::space::Runner::local_starts`]).
    pub local_starts: u32,
    /// The sleep-set search also takes a yield alone, with the cycle proviso (one search
    /// only: what the proviso keeps depends on the order states are stored in).
    pub yields: bool,
}

/// What an explorer decided at a state: the task to run, and whether the search goes on from
/// there (`Explore`) or the state is known or the search must stop (`Known`: the rest of the
/// execution is a tail, or the driver goes straight back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrival {
    Explore(TaskId),
    Known(TaskId),
}

/// A state on the depth-first path (Tarjan's; one of several workers uses `todo`, `chosen`
/// and `fp` only).
pub(super) struct Frame {
    /// Tarjan's index and low link.
    pub index: u32,
    pub low: u32,
    /// Tasks whose transition from here has not been explored yet (the state's enabled tasks
    /// are on Tarjan's stack).
    pub todo: u32,
    /// The choice whose transition from here is being explored.
    pub chosen: u8,
    /// At a choice point of `memory = "lkmm"`: the task whose memory operation the choices
    /// are alternatives of (`NO_TASK` elsewhere: the choice is the task).
    pub by: u8,
    /// Tasks whose transition from here stays inside this state's component.
    pub moves: u32,
    /// Position on the Tarjan stack.
    pub tpos: usize,
    /// The state's fingerprint (the visited table's key).
    pub fp: u64,
    /// One of several workers: transitions out of this state were given away, or it is the
    /// state a job starts from, so this worker does not take every transition out of it and
    /// it is not closed on the fly (`closed.rs`).
    pub split: bool,
}

impl Frame {
    /// A frame of a worker's search: no Tarjan.
    pub fn plain(todo: u32, chosen: u8, by: u8, fp: u64) -> Self {
        Frame { index: 0, low: 0, todo, chosen, by, moves: 0, tpos: 0, fp, split: false }
    }

    /// The task that moves when this frame's choice is taken.
    #[inline]
    pub fn mover(&self) -> u8 {
        if self.by == NO_TASK {
            self.chosen
        } else {
            self.by
        }
    }
}

/// [`Frame::by`] where the choice is a task.
pub(super) const NO_TASK: u8 = u8::MAX;

/// Who chooses at `p`: the task at a choice point, else [`NO_TASK`].
#[inline]
pub(super) fn chooser_of(p: &SchedPoint<'_>) -> u8 {
    p.choosing().map_or(NO_TASK, |t| t as u8)
}

/// A state on an explorer's path: the task chosen there, and the transitions left.
pub(super) trait PathFrame {
    fn chosen(&self) -> u8;
    fn todo(&self) -> u32;
    fn todo_mut(&mut self) -> &mut u32;
    /// Whether the search may come back here for another transition: one is left in `todo`,
    /// or held back until the one taken has shown whether it was enough (`dfs/sleep.rs`).
    fn returns(&self) -> bool {
        self.todo() != 0
    }
}

impl PathFrame for Frame {
    fn chosen(&self) -> u8 {
        self.chosen
    }
    fn todo(&self) -> u32 {
        self.todo
    }
    fn todo_mut(&mut self) -> &mut u32 {
        &mut self.todo
    }
}

/// One depth-first explorer (see the module docs).
pub(super) trait Explorer<M: Checked> {
    /// Its path's frames.
    type Frame: PathFrame;
    fn frames(&self) -> &[Self::Frame];
    fn frames_mut(&mut self) -> &mut [Self::Frame];

    /// A scheduling point reached by a new transition (or the first one).
    fn arrive(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) -> Arrival;
    /// The state a job starts from (another worker stored it, and gave away the transitions
    /// `todo` left to explore there): the first of them.
    fn arrive_root(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> TaskId;
    /// Pop the states whose transitions are all explored, and choose the next transition of
    /// the deepest one that has one left; `false` if none has (or the search must stop).
    fn backtrack(&mut self, cx: &mut Ctx<'_, M>) -> bool;
    /// Forget the path (a new job starts).
    fn clear(&mut self);
    /// States stored.
    fn states(&self) -> u64;
    /// Bytes of its table and stacks.
    fn memory_bytes(&self) -> u64;

    /// States on the path.
    fn depth(&self) -> usize {
        self.frames().len()
    }
    /// The task chosen at the `i`-th state of the path.
    fn chosen(&self, i: usize) -> u8 {
        self.frames()[i].chosen()
    }
    /// The transitions left to explore at the `i`-th state of the path; [`Self::take_todo`]
    /// gives them away.
    fn todo(&self, i: usize) -> u32 {
        self.frames()[i].todo()
    }
    /// Whether the search may come back to the `i`-th state of the path ([`PathFrame::returns`]).
    fn returns_to(&self, i: usize) -> bool {
        self.frames()[i].returns()
    }
    fn take_todo(&mut self, i: usize) -> u32 {
        std::mem::take(self.frames_mut()[i].todo_mut())
    }

    /// The schedule of the search path (the choice taken at every state on it).
    fn path(&self, cx: &Ctx<'_, M>) -> Vec<u8> {
        let mut path = cx.job.prefix.clone();
        path.extend((0..self.depth()).map(|i| self.chosen(i)));
        path
    }

    /// A safety violation found by the transition the search path ends with.
    fn found(&self, cx: &mut Ctx<'_, M>, ids: &[&'static str]) {
        if cx.found.target.is_none() {
            if let Some(inv) = decisive(cx.spec, ids) {
                cx.found.target = Some(Target::Safety { invariant: inv, path: self.path(cx) });
            }
        }
    }

    /// A new state was reached (past the initial one): count what the transition into it found.
    fn account_arrival(&self, cx: &mut Ctx<'_, M>, g: &StatefulGhost<M>) {
        if cx.began {
            let ids = g.drain_found(|found, cov| cx.found.account(cx.spec, found, cov));
            self.found(cx, &ids);
        }
    }

    /// The execution the search just ran ended (not in fast-forward): what its last transition
    /// and the end checks found.
    fn ended(&self, cx: &mut Ctx<'_, M>, end: &RunEnd, fin: Option<&M::Final>, g: &StatefulGhost<M>) {
        let mut ids_now = g.drain_found(|found, cov| cx.found.account(cx.spec, found, cov));
        match (end, fin) {
            (RunEnd::AllFinished, Some(fin)) => {
                let end = g.end(fin);
                let more = ids(cx.spec, &end);
                cx.found.count_violations(&more);
                ids_now.extend(more);
            }
            (RunEnd::Deadlock { .. }, _) if cx.spec.invariants.contains(&M::PROGRESS) => {
                // No task can move and some have not finished: they never will.
                use mmmodel::model::Named;
                let inv = M::PROGRESS.name();
                cx.found.count_violations(&[inv]);
                ids_now.push(inv);
            }
            _ => {}
        }
        self.found(cx, &ids_now);
    }
}

/// The state a job starts from: what the transition into it found was counted by the worker
/// that gave the job away, and from here on what this worker's transitions find counts. The
/// transitions given that are enabled here.
pub(super) fn job_root<M: Checked>(cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> u32 {
    g.drain_found(|_, _| ());
    g.discard_step();
    cx.began = true;
    cx.tasks_mask = super::space::tasks_mask(p);
    let todo = todo & p.enabled();
    debug_assert!(todo != 0, "a job whose transitions are not enabled");
    todo
}

/// If another worker waits for work: the transitions left at the shallowest state of the
/// search path that has some, given away (and no longer this worker's).
pub(super) fn donate<M: Checked, E: Explorer<M>>(cx: &Ctx<'_, M>, ex: &mut E) {
    let Some(market) = &cx.market else { return };
    if !market.wanted() {
        return;
    }
    let Some(depth) = (0..ex.depth()).position(|i| ex.todo(i) != 0) else { return };
    let mut prefix = cx.job.prefix.clone();
    prefix.extend((0..depth).map(|i| ex.chosen(i)));
    let todo = ex.take_todo(depth);
    market.give_away(super::market::Job { prefix, todo }, cx.defect);
}
