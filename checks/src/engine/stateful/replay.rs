//! The replaying driver: since a program's stack cannot be saved, a state is reached again by
//! replaying the choices that lead to it from the start. Each execution replays the choices
//! of the states on the search path, then lets the explorer take new transitions until it
//! reaches a known state, then runs to its end (fast-forward). `snapshots.rs` is the driver
//! that restores a copy of the execution instead, where it applies.

use std::time::{Duration, Instant};

use super::dfs::{donate, Arrival, Ctx, Explorer};
use super::ghost::{Mode, StatefulGhost};
use super::space::{lowest, RunEnd, Runner, SchedPoint, TaskId};
use crate::engine::types::{Options, Progress};
use crate::monitor::Checked;

/// When the search started, and when it last said how far it had got.
pub(super) struct Clock {
    pub start: Instant,
    pub last_progress: Instant,
    /// Calls of [`Clock::out_of_time_sampled`]: it reads the clock on the first and every 64th.
    ticks: std::cell::Cell<u32>,
    /// Calls of [`Clock::report_sampled`].
    report_ticks: u32,
}

impl Clock {
    pub fn new() -> Self {
        let now = Instant::now();
        Clock { start: now, last_progress: now, ticks: std::cell::Cell::new(0), report_ticks: 0 }
    }

    /// Calls the progress callback, at most every 200 ms.
    /// (`states` is asked only when a report is due: the workers' table sums its shards.)
    pub fn report(&mut self, opts: &Options, executions: u64, states: impl FnOnce() -> u64, depth: usize) {
        if let Some(p) = &opts.progress {
            if self.last_progress.elapsed() >= Duration::from_millis(200) {
                self.last_progress = Instant::now();
                p(&Progress {
                    executions,
                    seconds: self.start.elapsed().as_secs_f64(),
                    states: Some(states()),
                    depth: Some(depth),
                });
            }
        }
    }

    /// [`Clock::report`], asked at every backtrack of the snapshot driver: it reads the clock
    /// on the first call and every 64th (reading it each time was 1.8 % of the safety proof's
    /// time, `perf`).
    pub fn report_sampled(&mut self, opts: &Options, executions: u64, states: impl FnOnce() -> u64, depth: usize) {
        let t = self.report_ticks;
        self.report_ticks = t.wrapping_add(1);
        if t.is_multiple_of(64) {
            self.report(opts, executions, states, depth);
        }
    }

    /// Whether the time limit has passed.
    pub fn out_of_time(&self, opts: &Options) -> bool {
        opts.max_duration.is_some_and(|d| self.start.elapsed() >= d)
    }

    /// The same, asked at every backtrack of the snapshot driver, millions of times a second:
    /// reading the clock each time was 2 to 3 % of a proof's time (`perf`), so it is read on
    /// the first call and every 64th (a search overruns its limit by at most 63 backtracks).
    /// A long descent through new states asks [`Clock::out_of_time`] every 1,024 steps.
    pub fn out_of_time_sampled(&self, opts: &Options) -> bool {
        let Some(d) = opts.max_duration else { return false };
        let t = self.ticks.get();
        self.ticks.set(t.wrapping_add(1));
        t.is_multiple_of(64) && self.start.elapsed() >= d
    }
}

/// Whether the search must stop before its next execution (and if the time limit says so,
/// say it).
fn should_stop<M: Checked>(cx: &mut Ctx<'_, M>, opts: &Options, clock: &Clock) -> bool {
    if cx.found.halted() {
        return true;
    }
    if cx.market.as_ref().is_some_and(|m| m.stopped()) {
        return true;
    }
    if clock.out_of_time(opts) {
        cx.found.stopped_by = Some("time limit");
    }
    cx.found.stopped_by.is_some()
}

/// Executions until every transition of every reachable state of the job has been explored,
/// or a decisive violation, a budget or an error stops the search. The error, if any.
pub(super) fn run<M: Checked, E: Explorer<M>>(
    cx: &mut Ctx<'_, M>,
    ex: &mut E,
    runner: &mut Runner<M>,
    opts: &Options,
    clock: &mut Clock,
) -> Option<String> {
    // A job's first execution replays the schedule to the state it starts from.
    let mut replay: Vec<u8> = cx.job.prefix.clone();
    loop {
        if should_stop(cx, opts, clock) {
            return None;
        }
        let depth = cx.job.prefix.len() + ex.depth();
        clock.report(opts, runner.executions, || ex.states(), depth);
        donate(cx, ex);
        let mut step = 0usize;
        let mut ff = false;
        let mut tail = 0u64;
        let root = cx.job.root.take();
        let candidate = std::mem::take(&mut cx.job.candidate);
        let mut chooser = |p: &SchedPoint<'_>, g: &StatefulGhost<M>| -> TaskId {
            let i = step;
            step += 1;
            if i < replay.len() {
                if i + 1 == replay.len() && root.is_none() {
                    // The last replayed choice is a new transition: its findings (and, under
                    // partial-order reduction, its footprint) count.
                    let _ = g.take();
                    g.discard_step();
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
                    let t = ex.arrive_root(cx, p, g, todo);
                    g.set_mode(Mode::Explore);
                    return t;
                }
                cx.job.skip_arrival = true;
            }
            match ex.arrive(cx, p, g) {
                Arrival::Explore(t) => {
                    g.set_mode(Mode::Explore);
                    t
                }
                Arrival::Known(t) => {
                    // A known state (or a search that must stop): the tail begins here.
                    g.set_mode(Mode::FastForward);
                    ff = true;
                    tail += 1;
                    t
                }
            }
        };
        let mode = if replay.is_empty() { Mode::Explore } else { Mode::Replay };
        let (end, fin) = runner.execute(mode, false, &mut chooser);
        cx.found.steps.replayed += replay.len().saturating_sub(usize::from(root.is_none())) as u64;
        cx.found.steps.tail += tail;
        cx.found.steps.total += step as u64;
        if let RunEnd::Panicked { task, message } = &end {
            return Some(format!("task {task} panicked: {message}"));
        }
        if !ff {
            ex.ended(cx, &end, fin.as_ref(), &runner.ghost);
        }
        if cx.halted() {
            return None;
        }
        // Backtrack to the deepest state with a transition left to explore.
        if !ex.backtrack(cx) {
            return None;
        }
        replay.clear();
        replay.extend(ex.path(cx));
    }
}
