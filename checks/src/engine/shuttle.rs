//! The shuttle engines: PCT, uniformly random, and DFS schedulers.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use mmmodel::platform::Shuttle;
use shuttle::scheduler::{DfsScheduler, PctScheduler, RandomScheduler, Schedule, Scheduler, Task, TaskId};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};

use super::collect::{execute_one, install_quiet_panic_hook, settle_panic, Collector};
use super::types::{Engine, Options, Outcome};
use crate::monitor::Checked;
use crate::recorder::Recorder;
use crate::spec::Spec;

/// Shuttle's per-execution step limit (its stand-in for livelock); the model's own step
/// bound normally ends a runaway loop first.
pub const MAX_STEPS: usize = 200_000;

/// A scheduler that stops when the collector says so (violation found and shortened, time
/// limit, replay target reached).
///
/// Shuttle's random scheduler prints a "failing seed" message when it is dropped in the
/// middle of its iterations (it assumes a panic stopped it). A scheduler stopped early by
/// the collector is therefore leaked rather than dropped: a few hundred bytes per run.
struct Stoppable<S, M: Checked> {
    inner: std::mem::ManuallyDrop<S>,
    c: Arc<Collector<M>>,
    finished: Arc<std::sync::atomic::AtomicBool>,
    stopped_early: bool,
}

impl<S, M: Checked> Drop for Stoppable<S, M> {
    fn drop(&mut self) {
        if !self.stopped_early {
            // SAFETY: dropped exactly once, here; never used again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.inner) }
        }
    }
}

impl<S: Scheduler, M: Checked> Scheduler for Stoppable<S, M> {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.c.should_stop() {
            self.stopped_early = true;
            return None;
        }
        let s = self.inner.new_execution();
        if s.is_none() {
            self.finished.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        s
    }
    fn next_task(&mut self, runnable: &[&Task], current: Option<TaskId>, is_yielding: bool) -> Option<TaskId> {
        self.inner.next_task(runnable, current, is_yielding)
    }
    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }
}

pub fn explore<M: Checked>(spec: &Spec<M>, engine: Engine, opts: &Options) -> Outcome {
    let c = Collector::new(spec.clone(), opts.clone());
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::None;
    config.max_steps = MaxSteps::FailAfter(MAX_STEPS);
    config.silence_warnings = true;
    let body = Arc::clone(&c);
    let f = move || execute_one::<M, Shuttle<Recorder<M::Event>>>(&body);
    install_quiet_panic_hook();
    let run = |s: Box<dyn Scheduler + Send>| {
        let st = Stoppable {
            inner: std::mem::ManuallyDrop::new(s),
            c: Arc::clone(&c),
            finished: Arc::clone(&finished),
            stopped_early: false,
        };
        catch_unwind(AssertUnwindSafe(|| {
            Runner::new(st, config.clone()).run(f.clone());
        }))
    };
    let sched: Box<dyn Scheduler + Send> = match engine {
        Engine::ShuttlePct { iterations, depth, seed } => {
            Box::new(PctScheduler::new_from_seed(seed, depth, iterations))
        }
        Engine::ShuttleRandom { iterations, seed } => Box::new(RandomScheduler::new_from_seed(seed, iterations)),
        Engine::ShuttleDfs { iterations } => Box::new(DfsScheduler::new(Some(iterations), false)),
        Engine::Loom { .. } | Engine::Stateful { .. } => unreachable!("{engine} is not a shuttle engine"),
    };
    let r = run(sched);
    install_quiet_panic_hook();
    match r {
        Ok(()) => {
            // DFS that ran out of schedules explored everything; PCT and random are "complete"
            // when they ran all their iterations.
            let complete = match engine {
                Engine::ShuttleDfs { .. } => finished.load(std::sync::atomic::Ordering::Relaxed),
                _ => true,
            };
            c.outcome(engine, complete, None)
        }
        Err(p) => settle_panic(&c, engine, p),
    }
}
