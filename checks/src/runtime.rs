//! Runtime mode: the same protocol code on real OS threads (the `std` platform), with real
//! timeouts, many iterations, and the protocol's own counters (`mmcheck run`, `mmcheck
//! compare`). The recorder runs with a clock, and the checker's monitors judge every
//! iteration's trace, so a lost wakeup that happens on real hardware is counted.
//!
//! A real-thread trace is ordered by when each event was recorded (under the recorder's lock,
//! just after its operation), not by the hardware's order of the operations themselves; the
//! monitors' verdicts on it are observations, not proofs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mmmodel::event::{Event, LockName, Wq};
use mmmodel::kernel::sched::TimerModel;
use mmmodel::platform::Std;
use mmmodel::{compaction, reclaim};

use crate::monitor::{self, Exec};
use crate::recorder::Recorder;
use crate::scenario::Scenario;
use crate::spec::ModelSpec;

/// How to run.
#[derive(Clone)]
pub struct RunConfig {
    pub iterations: u64,
    /// Each thread of the scenario is run this many times over (kswapds, allocators and direct
    /// reclaimers on fresh nodes).
    pub threads_scale: usize,
    /// The length of a jiffy: the scenario's timeouts (HZ/100, HZ/10 at HZ=1000) scaled down.
    pub jiffy: Duration,
    /// Every thread's amount of work (batches, holds, attempts) multiplied by this.
    pub work: u32,
    /// Spin-loop hints inside each of the writer's tree_lock holds.
    pub hold_spins: u32,
    pub progress: Option<Arc<dyn Fn(u64, u64) + Send + Sync>>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { iterations: 200, threads_scale: 1, jiffy: Duration::from_micros(10), work: 1, hold_spins: 0, progress: None }
    }
}

/// One iteration's counters, by name.
pub type Sample = BTreeMap<String, f64>;

/// The counters of many iterations of one scenario.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub name: String,
    pub label: String,
    pub samples: Vec<Sample>,
    /// Invariant → iterations in which its monitor reported a violation.
    pub violations: BTreeMap<&'static str, u64>,
    pub seconds: f64,
}

/// The counters a run reports, in print order (others, such as per-reason aborts, follow).
pub const REPORTED: &[&str] = &[
    "elapsed-us",
    "trylock-failed",
    "cmpxchg-won",
    "cmpxchg-lost",
    "stalls",
    "stalls-full-timeout",
    "stall-us",
    "lost-wakeups",
    "congested-set",
    "congested-cleared",
    "direct-stall",
    "direct-stall-us",
    "lock-contended",
    "lock-hold-us",
    "lock-wait-us",
    "block-finished",
    "block-abandoned",
    "isolated-migrate",
    "isolated-free",
];

/// `spec` with every thread run `k` times over, each doing `work` times its work.
pub fn scale(spec: &ModelSpec, k: usize, work: u32, hold_spins: u32) -> Result<ModelSpec, String> {
    if k <= 1 && work <= 1 && hold_spins == 0 {
        return Ok(spec.clone());
    }
    match spec {
        ModelSpec::KswapdStall(c) => {
            let nodes = c.nr_nodes() as i32;
            let mut roles = Vec::new();
            for i in 0..k as i32 {
                for r in &c.roles {
                    roles.push(match r.clone() {
                        reclaim::Role::Kswapd { node, batches, pages, balances } => {
                            reclaim::Role::Kswapd { node: node + i * nodes, batches: batches * work, pages, balances }
                        }
                        reclaim::Role::Allocator { node, attempts } => reclaim::Role::Allocator { node: node + i * nodes, attempts: attempts * work },
                        reclaim::Role::DirectReclaim { node, batches, pages } => {
                            reclaim::Role::DirectReclaim { node: node + i * nodes, batches: batches * work, pages }
                        }
                        reclaim::Role::Writer { holds, .. } => reclaim::Role::Writer { holds: holds * work, spins: hold_spins },
                        other => other,
                    });
                }
            }
            let c = reclaim::Config { roles, ..c.clone() };
            c.validate()?;
            Ok(ModelSpec::KswapdStall(c))
        }
        ModelSpec::Compaction(c) => {
            if k > 1 {
                // Killers and resched threads name their target compactor by pid.
                return Err("--threads-scale is not supported for the compaction model (killer and resched threads target one compactor); use --work".into());
            }
            let roles = c
                .roles
                .iter()
                .map(|r| match r.clone() {
                    compaction::Role::LockHolder { lock, holds } => compaction::Role::LockHolder { lock, holds: holds * work },
                    other => other,
                })
                .collect();
            let c = compaction::Config { roles, ..c.clone() };
            c.validate()?;
            Ok(ModelSpec::Compaction(c))
        }
    }
}

/// `spec` with real time instead of an explorer-chosen timer.
fn real_time(spec: &ModelSpec, jiffy: Duration) -> ModelSpec {
    match spec {
        ModelSpec::KswapdStall(c) => ModelSpec::KswapdStall(reclaim::Config { timer: TimerModel::Real { jiffy }, ..c.clone() }),
        #[allow(unreachable_patterns)]
        other => other.clone(),
    }
}

/// Run `sc` on real threads.
pub fn run(sc: &Scenario, cfg: &RunConfig) -> Result<RunResult, String> {
    Ok(run_interleaved(std::slice::from_ref(sc), cfg)?.remove(0))
}

/// Run several scenarios on real threads, one iteration of each in turn, so that drift in the
/// machine's state (frequency, caches, other load) falls on all of them alike.
pub fn run_interleaved(scs: &[Scenario], cfg: &RunConfig) -> Result<Vec<RunResult>, String> {
    let mut specs = Vec::new();
    for sc in scs {
        specs.push(real_time(&scale(&sc.spec.model, cfg.threads_scale, cfg.work, cfg.hold_spins)?, cfg.jiffy));
    }
    let mut results: Vec<RunResult> = scs
        .iter()
        .map(|sc| RunResult {
            name: sc.name.clone(),
            label: match sc.spec.model.mutation() {
                Some(m) => format!("{}+{}", sc.spec.model.variant_name(), m.name()),
                None => sc.spec.model.variant_name().to_string(),
            },
            samples: Vec::with_capacity(cfg.iterations as usize),
            violations: BTreeMap::new(),
            seconds: 0.0,
        })
        .collect();
    let mut done = 0;
    for _ in 0..cfg.iterations {
        for ((sc, spec), res) in scs.iter().zip(&specs).zip(results.iter_mut()) {
            let t = Instant::now();
            let sample = one_iteration(sc, spec, &mut res.violations);
            res.samples.push(sample);
            res.seconds += t.elapsed().as_secs_f64();
            done += 1;
            if let Some(p) = &cfg.progress {
                p(done, cfg.iterations * scs.len() as u64);
            }
        }
    }
    Ok(results)
}

fn one_iteration(sc: &Scenario, spec: &ModelSpec, violations: &mut BTreeMap<&'static str, u64>) -> Sample {
    let tasks = spec.tasks();
    {
        let rec = Arc::new(Recorder::with_clock(tasks, sc.spec.bounds));
        let t0 = Instant::now();
        let fin = spec.run::<Std<Recorder>>(Arc::clone(&rec));
        let elapsed = t0.elapsed();
        let events = rec.take_events();
        let times = rec.take_times();
        let exec = Exec { model: spec, events: &events, fin: &fin };
        let vs = monitor::check(&exec, &sc.spec.invariants);
        let mut seen: Vec<&'static str> = Vec::new();
        for v in &vs {
            if !seen.contains(&v.invariant) {
                seen.push(v.invariant);
                *violations.entry(v.invariant).or_insert(0) += 1;
            }
        }
        let mut s = counters(&exec, &times);
        s.insert("elapsed-us".into(), elapsed.as_secs_f64() * 1e6);
        s.insert("lost-wakeups".into(), vs.iter().filter(|v| v.invariant == "no-lost-wakeup").count() as f64);
        s
    }
}

fn us(a: Instant, b: Instant) -> f64 {
    b.saturating_duration_since(a).as_secs_f64() * 1e6
}

/// The counters of one iteration, from its timestamped trace.
fn counters(exec: &Exec, times: &[Instant]) -> Sample {
    let mut s = Sample::new();
    for (k, v) in monitor::coverage(exec) {
        s.insert(k.to_string(), v as f64);
    }
    let add = |s: &mut Sample, k: &str, v: f64| *s.entry(k.to_string()).or_insert(0.0) += v;
    let tasks = exec.model.tasks();
    // Per task: the queue it last enqueued on, when it started to sleep, what it waits for.
    let mut last_wq: Vec<Option<Wq>> = vec![None; tasks];
    let mut slept_at: Vec<Option<Instant>> = vec![None; tasks];
    let mut waiting_since: Vec<Option<Instant>> = vec![None; tasks];
    let mut held_since: Vec<BTreeMap<LockName, Instant>> = vec![BTreeMap::new(); tasks];
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let Some(&t) = times.get(i) else { break };
        let p = *pid;
        match *e {
            Event::Enqueued { wq } => last_wq[p] = Some(wq),
            Event::Schedule { .. } => {
                slept_at[p] = Some(t);
                if last_wq[p] == Some(Wq::KswapdContended) {
                    add(&mut s, "stalls", 1.0);
                }
            }
            Event::Woken | Event::TimedOut { .. } | Event::SleptForever => {
                if let Some(a) = slept_at[p].take() {
                    let key = if last_wq[p] == Some(Wq::Congestion) { "direct-stall-us" } else { "stall-us" };
                    add(&mut s, key, us(a, t));
                    if matches!(e, Event::TimedOut { .. }) && last_wq[p] == Some(Wq::KswapdContended) {
                        add(&mut s, "stalls-full-timeout", 1.0);
                    }
                }
            }
            Event::TrylockFailed { .. } | Event::LockContended { .. } => {
                waiting_since[p].get_or_insert(t);
            }
            Event::LockAcquired { lock, .. } => {
                if let Some(a) = waiting_since[p].take() {
                    add(&mut s, "lock-wait-us", us(a, t));
                }
                held_since[p].insert(lock, t);
            }
            Event::LockReleased { lock } => {
                if let Some(a) = held_since[p].remove(&lock) {
                    add(&mut s, "lock-hold-us", us(a, t));
                }
            }
            Event::Isolated { free, pages, .. } => add(&mut s, if free { "isolated-free" } else { "isolated-migrate" }, pages as f64),
            Event::CompactEnd { reason, .. } => {
                let r = reason.map(|r| format!("end-{r:?}")).unwrap_or_else(|| "end-none".into());
                add(&mut s, &r, 1.0);
            }
            _ => {}
        }
    }
    s
}

/// Amean, min and max of one counter over a run's samples.
pub fn stats(samples: &[Sample], key: &str) -> (f64, f64, f64) {
    let v: Vec<f64> = samples.iter().map(|s| s.get(key).copied().unwrap_or(0.0)).collect();
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

/// Every counter any of the runs has, reported ones first.
pub fn counter_names(runs: &[RunResult]) -> Vec<String> {
    let mut names: Vec<String> = REPORTED.iter().map(|s| s.to_string()).collect();
    for r in runs {
        for s in &r.samples {
            for k in s.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
    }
    names.retain(|n| runs.iter().any(|r| r.samples.iter().any(|s| s.get(n).is_some_and(|v| *v != 0.0))));
    names
}

/// A table in the style of the seeds' mmtests comparisons: one column per run, `Amean`,
/// `Min` and `Max` rows per counter, and the change of each column's mean against the first
/// column, `(new - first) / first`, in percent.
pub fn compare_table(runs: &[RunResult]) -> String {
    let mut out = String::new();
    let w = runs.iter().map(|r| r.label.len()).max().unwrap_or(8).max(20);
    out.push_str(&format!("{:<34}", ""));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.label));
    }
    out.push('\n');
    for name in counter_names(runs) {
        for (row, pick) in [("Amean", 0usize), ("Min", 1), ("Max", 2)] {
            out.push_str(&format!("{:<6}{:<28}", row, name));
            let base = stats(&runs[0].samples, &name);
            for r in runs {
                let st = stats(&r.samples, &name);
                let v = [st.0, st.1, st.2][pick];
                if row == "Amean" {
                    let pct = if base.0 == 0.0 { if st.0 == 0.0 { 0.0 } else { f64::INFINITY } } else { (st.0 - base.0) / base.0 * 100.0 };
                    let cell = if pct.is_finite() { format!("{v:.2} ({pct:7.2}%)") } else { format!("{v:.2} (    new)") };
                    out.push_str(&format!(" {cell:>w$}"));
                } else {
                    out.push_str(&format!(" {:>w$}", format!("{v:.2}")));
                }
            }
            out.push('\n');
        }
    }
    out.push_str(&format!("{:<34}", "iterations"));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.samples.len()));
    }
    out.push('\n');
    out.push_str(&format!("{:<34}", "violations (iterations)"));
    for r in runs {
        let v: Vec<String> = r.violations.iter().map(|(k, n)| format!("{k}={n}")).collect();
        out.push_str(&format!(" {:>w$}", if v.is_empty() { "none".to_string() } else { v.join(",") }));
    }
    out.push('\n');
    out
}

/// The same configuration under another variant of its model.
pub fn with_variant(model: &ModelSpec, name: &str) -> Result<ModelSpec, String> {
    match model {
        ModelSpec::KswapdStall(c) => {
            let v = reclaim::Variant::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = reclaim::Variant::ALL.iter().map(|v| v.name()).collect();
                format!("unknown kswapd-stall variant \"{name}\" ({})", names.join(", "))
            })?;
            Ok(ModelSpec::KswapdStall(reclaim::Config { variant: v, ..c.clone() }))
        }
        ModelSpec::Compaction(c) => {
            let v = compaction::Variant::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = compaction::Variant::ALL.iter().map(|v| v.name()).collect();
                format!("unknown compaction variant \"{name}\" ({})", names.join(", "))
            })?;
            Ok(ModelSpec::Compaction(compaction::Config { variant: v, ..c.clone() }))
        }
    }
}
