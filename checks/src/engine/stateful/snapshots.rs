//! The snapshotting driver (docs/model.md, "Snapshots"): one execution, which the search takes
//! back to the deepest state on its path with a transition left by restoring the snapshot it
//! took there, where `replay.rs` replays the path in a new execution. No replays, no tails;
//! the same states, transitions and order.

use std::sync::{Arc, Mutex};

use super::dfs::{donate, Arrival, Ctx, Explorer};
use super::ghost::{GhostSave, Mode, StatefulGhost};
use super::replay::Clock;
use super::space::{lowest, Decision, RunEnd, Runner, SchedPoint, SnapChooser, Snapshot, TaskId};
use crate::engine::types::{Options, ReductionDefect};
use crate::monitor::Checked;

/// What the snapshots of a search did: whether it took them, how many it restored, and the
/// most bytes the snapshots on its path held at once.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SnapStats {
    pub taken: bool,
    pub restores: u64,
    pub peak_bytes: u64,
}

impl SnapStats {
    pub fn merge(&mut self, o: SnapStats) {
        self.taken |= o.taken;
        self.restores += o.restores;
        self.peak_bytes = self.peak_bytes.max(o.peak_bytes);
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

/// The chooser of the snapshotting search.
struct SnapSearch<'x, 'a, M: Checked, E: Explorer<M>> {
    cx: &'x mut Ctx<'a, M>,
    ex: &'x mut E,
    ghost: Arc<StatefulGhost<M>>,
    cfg: Arc<M::Config>,
    fin: Arc<Mutex<Option<M::Final>>>,
    /// The path's snapshots are `snaps[..live]`; the ones past it were popped off the path,
    /// and the next ones reuse their room in place (a `Snap` is a few hundred bytes, not
    /// moved in and out of a spare list).
    snaps: Vec<Snap<M>>,
    live: usize,
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
    opts: &'x Options,
    clock: &'x mut Clock,
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

impl<M: Checked, E: Explorer<M>> SnapSearch<'_, '_, M, E> {
    fn counts(&self) -> [usize; 3] {
        [Arc::strong_count(&self.cfg), Arc::strong_count(&self.ghost), Arc::strong_count(&self.fin)]
    }

    /// Back to the deepest state on the path with a transition left; `enabled`: the tasks that
    /// can move where the execution is now (none at its end).
    fn back(&mut self, enabled: u32) -> Decision<'_> {
        let (cx, ex) = (&mut *self.cx, &mut *self.ex);
        if cx.halted() {
            return Decision::Stop;
        }
        if self.clock.out_of_time_sampled(self.opts) {
            cx.found.stopped_by = Some("time limit");
            return Decision::Stop;
        }
        if let Some(market) = &cx.market {
            // Another worker stopped the search, or waits for work: give it the transitions
            // left at the shallowest state of the path (their snapshot stays, unused).
            if market.stopped() {
                return Decision::Stop;
            }
            donate(cx, ex);
        }
        self.clock.report_sampled(self.opts, self.executions + self.restores, || ex.states(), ex.depth());
        if !ex.backtrack(cx) {
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
        let depth = ex.depth();
        while self.live > 0 && self.snaps[self.live - 1].depth > depth {
            self.live -= 1;
            self.bytes -= self.snaps[self.live].bytes;
        }
        let snap = self.snaps[..self.live].last().expect("the first state with a transition left has a snapshot");
        // From the snapshot's state: its chosen transition and those of the states after it on
        // the path, the last of which is the new one.
        let first = ex.chosen(snap.depth - 1);
        self.replay.clear();
        self.replay.extend((snap.depth..depth).map(|i| ex.chosen(i)));
        self.next = 0;
        if cx.defect != Some(ReductionDefect::SnapshotForgetsGhost) {
            self.ghost.restore(&snap.ghost);
        } else {
            self.ghost.set_mode(Mode::Explore);
            self.ghost.drain_found(|_, _| ());
            self.ghost.discard_step();
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

impl<M: Checked, E: Explorer<M>> SnapChooser for SnapSearch<'_, '_, M, E> {
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
                self.ghost.drain_found(|_, _| ());
                self.ghost.discard_step();
                self.ghost.set_mode(Mode::Explore);
            } else {
                self.replayed += 1;
            }
            return Decision::Run(t as TaskId);
        }
        let depth = self.ex.depth();
        let g = Arc::clone(&self.ghost);
        let root = self.root.take();
        if root.is_some() {
            self.replay.clear();
            self.next = 0;
        }
        if root.is_some() && std::mem::take(&mut self.candidate) {
            // Another process counted the transition into it.
            self.cx.job.skip_arrival = true;
        }
        let arrival = if let (Some(todo), false) = (root, self.cx.job.skip_arrival) {
            Arrival::Explore(self.ex.arrive_root(self.cx, p, &g, todo))
        } else {
            self.ex.arrive(self.cx, p, &g)
        };
        let t = match arrival {
            Arrival::Explore(t) => {
                g.set_mode(Mode::Explore);
                t
            }
            Arrival::Known(_) => {
                // A known state (or a search that must stop): no tail, straight back.
                g.set_mode(Mode::FastForward);
                return self.back(p.enabled());
            }
        };
        debug_assert_eq!(self.ex.depth(), depth + 1, "a new state pushes a frame");
        if self.steps.is_multiple_of(1024) {
            // A long descent through new states (under `lkmm` a loop whose stores pile up
            // never comes back to a known one) must still keep the time limit and report.
            if self.clock.out_of_time(self.opts) {
                self.cx.found.stopped_by = Some("time limit");
                return Decision::Stop;
            }
            let ex = &*self.ex;
            self.clock.report(self.opts, self.executions + self.restores, || ex.states(), ex.depth());
        }
        if self.ex.returns_to(depth) && (self.live == 0 || self.bytes < self.cap) {
            let counts = self.counts();
            if self.live == self.snaps.len() {
                self.snaps.push(Snap { depth: 0, bytes: 0, rt: Snapshot::default(), ghost: g.save(), counts });
            } else {
                g.save_into(&mut self.snaps[self.live].ghost);
            }
            let (path, past) = self.snaps.split_at_mut(self.live);
            let prev = path.last().map(|s| &s.rt);
            let snap = &mut past[0];
            p.snapshot_into(prev, &mut snap.rt);
            snap.bytes = snap.rt.bytes_beyond(prev);
            snap.depth = depth + 1;
            snap.counts = counts;
            self.bytes += snap.bytes;
            self.peak = self.peak.max(self.bytes);
            self.live += 1;
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
        self.ex.ended(self.cx, end, fin.as_ref(), &self.ghost);
        // The final state lives in the execution's heap: gone with the restore.
        drop(fin);
        self.back(0)
    }
}

/// The search of the job `cx` holds by snapshots; the error, if any.
pub(super) fn run<M: Checked, E: Explorer<M>>(
    cx: &mut Ctx<'_, M>,
    ex: &mut E,
    runner: &mut Runner<M>,
    opts: &Options,
    clock: &mut Clock,
    stats: &mut SnapStats,
) -> Option<String> {
    // The workers share the budget.
    let workers = cx.market.as_ref().map_or(1, |m| m.workers()).max(1);
    let cap = opts.snapshot_cap.unwrap_or(((cx.budget.max_memory / 16).min(1 << 30) as usize) / workers);
    // A job starts by replaying its schedule to the state it was given.
    let root = cx.job.root.take();
    let candidate = std::mem::take(&mut cx.job.candidate);
    let replay = if root.is_some() { cx.job.prefix.clone() } else { Vec::new() };
    let mode = if replay.is_empty() { Mode::Explore } else { Mode::Replay };
    let mut ch = SnapSearch {
        cx: &mut *cx,
        ex,
        ghost: Arc::clone(&runner.ghost),
        cfg: Arc::clone(&runner.cfg),
        fin: Arc::clone(&runner.fin),
        snaps: Vec::new(),
        live: 0,
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
        opts,
        clock,
        executions: runner.executions,
    };
    let end = runner.execute_snapshots(mode, &mut ch);
    let (steps, replayed, restores, peak, tail) = (ch.steps, ch.replayed, ch.restores, ch.peak, ch.tail);
    drop(ch);
    runner.take_final();
    runner.executions += restores;
    stats.merge(SnapStats { taken: true, restores, peak_bytes: peak as u64 });
    cx.found.steps.total += steps;
    cx.found.steps.replayed += replayed;
    cx.found.steps.tail += tail;
    match &end {
        RunEnd::Panicked { task, message } => Some(format!("task {task} panicked: {message}")),
        _ => None,
    }
}
