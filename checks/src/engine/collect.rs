//! What loom and shuttle share: the per-execution body ([`execute_one`]) that builds the
//! model's kernel state on the engine's platform, runs every role to completion and runs the
//! monitors on the recorded events, and the [`Collector`] that keeps the verdict, the shortest
//! counterexample, the coverage and the numbers over every execution. A violation is a value,
//! never a panic inside the explorer.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mmmodel::event::Event;
use mmmodel::ghost::Pid;
use mmmodel::kernel::sched::Start;
use mmmodel::model::{run, PlatformFor};

use super::types::{Engine, Found, Options, Outcome, Progress, Replay};
use crate::monitor::{self, Checked, Exec, Violation};
use crate::recorder::Recorder;
use crate::spec::Spec;
use crate::trace::Trace;

/// The panic payload that stops a loom exploration between two executions.
pub(crate) struct StopExploring;

struct State {
    next: u64,
    executions: u64,
    found: Option<Found>,
    found_is_target: bool,
    last_improved: u64,
    violated: BTreeMap<&'static str, u64>,
    first_violation: BTreeMap<&'static str, u64>,
    coverage: BTreeMap<&'static str, u64>,
    stop: bool,
    /// The execution in flight: its index and a way to read its events so far.
    current: Option<(u64, Arc<dyn Fn() -> Trace + Send + Sync>)>,
    last_progress: Instant,
    online_checked: u64,
    /// The first disagreement of the online and trace monitors.
    online_disagreement: Option<String>,
}

/// Shared by every execution of one exploration.
pub(crate) struct Collector<M: Checked> {
    pub spec: Spec<M>,
    opts: Options,
    start: Instant,
    state: Mutex<State>,
}

impl<M: Checked> Collector<M> {
    pub fn new(spec: Spec<M>, opts: Options) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Collector {
            spec,
            opts,
            start: now,
            state: Mutex::new(State {
                next: 0,
                executions: 0,
                found: None,
                found_is_target: false,
                last_improved: 0,
                violated: BTreeMap::new(),
                first_violation: BTreeMap::new(),
                coverage: BTreeMap::new(),
                stop: false,
                current: None,
                last_progress: now,
                online_checked: 0,
                online_disagreement: None,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Should the exploration stop before its next execution?
    pub fn should_stop(&self) -> bool {
        let mut s = self.lock();
        if !s.stop && self.opts.max_duration.is_some_and(|d| self.start.elapsed() >= d) {
            s.stop = true;
        }
        s.stop
    }

    /// Start an execution: returns its index.
    fn begin(&self, rec: &Arc<Recorder<M::Event>>) -> u64 {
        let mut s = self.lock();
        let i = s.next;
        s.next += 1;
        let r = Arc::clone(rec);
        s.current = Some((i, Arc::new(move || Trace::new(r.events()))));
        i
    }

    /// The execution in flight and its events so far (for a report after an explorer panic).
    pub fn current_events(&self) -> Option<(u64, Trace)> {
        let s = self.lock();
        s.current.as_ref().map(|(i, read)| (*i, read()))
    }

    /// The online and trace monitors' comparison on execution `index`: a disagreement stops the
    /// exploration, and the first one becomes the outcome's error.
    fn online_agreement(&self, index: u64, agreement: Result<(), String>) {
        let mut s = self.lock();
        s.online_checked += 1;
        if let Err(diff) = agreement {
            if s.online_disagreement.is_none() {
                s.online_disagreement =
                    Some(format!("online and trace monitors disagree on execution {index}: {diff}"));
            }
            s.stop = true;
        }
    }

    pub(crate) fn finish(
        &self,
        index: u64,
        trace: Trace,
        exits: Vec<(Pid, usize)>,
        violations: Vec<Violation>,
        cov: BTreeMap<&'static str, u64>,
        mutation_reached: bool,
    ) {
        let mut s = self.lock();
        s.executions += 1;
        s.current = None;
        for (k, v) in cov {
            *s.coverage.entry(k).or_insert(0) += v;
        }
        let mut seen = BTreeSet::new();
        for v in &violations {
            if seen.insert(v.invariant) {
                *s.violated.entry(v.invariant).or_insert(0) += 1;
                let n = s.executions;
                s.first_violation.entry(v.invariant).or_insert(n);
            }
        }
        let target = self.spec.target.map(mmmodel::model::Named::name);
        if let Some(Replay::Execution(wanted)) = self.opts.replay {
            if index == wanted {
                s.found = Some(Found {
                    replay: Replay::Execution(index),
                    trace,
                    violations,
                    mutation_reached,
                    cycle_from: None,
                    exits,
                });
                s.stop = true;
            }
        } else if !violations.is_empty() {
            let is_target = match target {
                Some(t) => violations.iter().any(|v| v.invariant == t),
                None => true,
            };
            // Rank: violates the target invariant, then reads as a plain interleaving (no stale
            // load needed to explain it), then shortest.
            let plain = |vs: &[Violation]| !vs.iter().any(|v| v.weak_memory);
            let better = match &s.found {
                None => true,
                Some(f) => {
                    let old = (s.found_is_target, plain(&f.violations), std::cmp::Reverse(f.trace.len()));
                    let new = (is_target, plain(&violations), std::cmp::Reverse(trace.len()));
                    new > old
                }
            };
            if better {
                s.found = Some(Found {
                    replay: Replay::Execution(index),
                    trace,
                    violations,
                    mutation_reached,
                    cycle_from: None,
                    exits,
                });
                s.found_is_target = is_target;
                s.last_improved = s.executions;
            }
        }
        if self.opts.replay.is_none()
            && s.found.is_some()
            && s.found_is_target
            && s.executions - s.last_improved >= self.opts.shortest_budget
        {
            s.stop = true;
        }
        if let Some(p) = &self.opts.progress {
            if s.last_progress.elapsed() >= Duration::from_millis(200) {
                s.last_progress = Instant::now();
                let progress = Progress {
                    executions: s.executions,
                    seconds: self.start.elapsed().as_secs_f64(),
                    ..Progress::default()
                };
                drop(s);
                p(&progress);
            }
        }
    }

    pub fn outcome(&self, engine: Engine, complete: bool, error: Option<String>) -> Outcome {
        let s = self.lock();
        Outcome {
            engine,
            executions: s.executions,
            seconds: self.start.elapsed().as_secs_f64(),
            complete: complete && !s.stop,
            found: s.found.clone(),
            violated: s.violated.clone(),
            first_violation: s.first_violation.clone(),
            coverage: s.coverage.clone(),
            error: error.or_else(|| s.online_disagreement.clone()),
            online_checked: s.online_checked,
            stats: None,
        }
    }
}

/// One execution, on any checking platform.
pub(crate) fn execute_one<M: Checked, P: PlatformFor<M::Event, Ghost = Recorder<M::Event>>>(c: &Collector<M>) {
    let spec = &c.spec;
    let rec = Arc::new(Recorder::new(M::roles(&spec.cfg).len(), spec.bounds));
    let index = c.begin(&rec);
    let ran = run::<M, P>(&spec.cfg, Arc::clone(&rec), &Start::default());
    let events: Vec<(Pid, Event<M::Event>)> = rec.take_events();
    let exec = Exec::<M> { cfg: &spec.cfg, events: &events, fin: &ran.fin };
    let violations = monitor::check(&exec, &spec.invariants);
    let cov = monitor::coverage(&exec);
    if c.opts.check_online {
        c.online_agreement(index, monitor::online::agree(&exec, &spec.invariants));
    }
    c.finish(index, Trace::new(events), rec.take_exits(), violations, cov, rec.mutation_reached());
}

/// A readable message from a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// The panic hook that was installed before mmcheck first installed its own.
type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;
static ORIGINAL_HOOK: std::sync::OnceLock<Hook> = std::sync::OnceLock::new();

/// Install a panic hook that stays quiet for the engine's own stop signal and hands every
/// other panic to the hook the process started with. Shuttle installs its own hook on first
/// use (and loom's stop signal must not reach it), so call this before each engine runs.
///
/// Loom runs its threads as `generator` coroutines, which end by unwinding with a private
/// payload that the generator crate's own hook (installed on first use) keeps quiet. That hook
/// must be part of the base we hand panics to, so the first call runs an empty loom model
/// before taking the process's hook.
pub fn install_quiet_panic_hook() {
    ORIGINAL_HOOK.get_or_init(|| {
        ::loom::model::Builder::new().check(|| {});
        std::panic::take_hook()
    });
    std::panic::set_hook(Box::new(|info| {
        if info.payload().downcast_ref::<StopExploring>().is_some() {
            return;
        }
        if let Some(h) = ORIGINAL_HOOK.get() {
            h(info);
        }
    }));
}

/// Explorer panics that mean "this execution did not end": reported as `progress`.
pub(crate) fn is_step_limit_panic(msg: &str) -> bool {
    msg.contains("maximum number of branches")
        || msg.contains("exceeded the maximum number of steps")
        || msg.contains("max_steps")
}

/// Turn an explorer panic into a progress violation with the trace so far, or an error.
pub(crate) fn settle_panic<M: Checked>(
    c: &Collector<M>,
    engine: Engine,
    payload: Box<dyn std::any::Any + Send>,
) -> Outcome {
    if payload.downcast_ref::<StopExploring>().is_some() {
        return c.outcome(engine, false, None);
    }
    let msg = panic_message(payload.as_ref());
    if is_step_limit_panic(&msg) {
        if let Some((index, trace)) = c.current_events() {
            let v = Violation::new(
                M::PROGRESS,
                trace.len().checked_sub(1),
                format!("the execution did not end: {} ({msg})", engine.name()),
            );
            c.finish(index, trace, Vec::new(), vec![v], BTreeMap::new(), false);
            return c.outcome(engine, false, None);
        }
    }
    c.outcome(engine, false, Some(msg))
}
