//! Runtime mode: the same protocol code on real OS threads (the `std` platform), with real
//! timeouts, many iterations, and the protocol's own counters (`mmcheck run`, `mmcheck
//! compare`). The recorder runs with a clock, and the checker's monitors judge every
//! iteration's trace, so a lost wakeup that happens on real hardware is counted.
//!
//! A real-thread trace is ordered by when each event was recorded (under the recorder's lock,
//! just after its operation), not by the hardware's order of the operations themselves; the
//! monitors' verdicts on it are observations, not proofs. The recorder's lock is also taken
//! once per event by every thread, so it serialises the threads more than the kernel's code
//! would be: the times measured here are the model's, recorder included, never the kernel's.
//!
//! Each iteration spawns the scenario's threads, holds them at a start gate until all exist,
//! optionally delays some role kinds by a random time (`--delay KIND=US`: a backing device
//! that stays congested for a while, a SIGKILL that lands in the middle of a compaction),
//! runs them to completion and joins them. A watchdog stops the run if an iteration does not
//! finish within [`RunConfig::iteration_cap`]: nothing in `mmcheck run` can hang.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use mmmodel::event::{Event, LockName, Wq};
use mmmodel::ghost::Pid;
use mmmodel::kernel::sched::TimerModel;
use mmmodel::mutation::ModelKind;
use mmmodel::platform::Std;
use mmmodel::{compaction, reclaim};

use crate::monitor::{self, Exec};
use crate::recorder::Recorder;
use crate::scenario::Scenario;
use crate::spec::{Final, ModelSpec};

/// How to run.
#[derive(Clone)]
pub struct RunConfig {
    pub iterations: u64,
    /// Each thread of the scenario is run this many times over (kswapd-stall: kswapds,
    /// allocators and direct reclaimers on fresh nodes; compaction: every thread again, killers
    /// and resched threads aimed at their own copy of the compactor).
    pub threads_scale: usize,
    /// The length of a jiffy: the scenario's timeouts (HZ/100, HZ/10 at HZ=1000) scaled down.
    pub jiffy: Duration,
    /// Every thread's amount of work (batches, holds, attempts) multiplied by this.
    pub work: u32,
    /// Spin-loop hints inside each of the writer's tree_lock holds.
    pub hold_spins: u32,
    /// Start delays by role kind (`kswapd`, `writer`, `bdi`, `killer`, …): each thread of that
    /// kind starts a uniformly random time in `[0, max]` after the start gate. The draws depend
    /// only on `seed` and the iteration number, so compared scenarios get the same delays.
    pub delays: Vec<(String, Duration)>,
    pub seed: u64,
    /// An iteration still running after this long stops the run with an error.
    pub iteration_cap: Duration,
    pub progress: Option<Arc<dyn Fn(u64, u64) + Send + Sync>>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            iterations: 200,
            threads_scale: 1,
            jiffy: Duration::from_micros(10),
            work: 1,
            hold_spins: 0,
            delays: Vec::new(),
            seed: 1,
            iteration_cap: Duration::from_secs(10),
            progress: None,
        }
    }
}

/// One iteration's counters, by name.
pub type Sample = BTreeMap<String, f64>;

/// The counters of many iterations of one scenario.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub name: String,
    pub label: String,
    pub model: ModelKind,
    pub samples: Vec<Sample>,
    /// Invariant → iterations in which its monitor reported a violation.
    pub violations: BTreeMap<&'static str, u64>,
    pub seconds: f64,
}

/// The counters a run of a model always reports (even when zero), in print order; any other
/// counter that is not zero somewhere (coverage events, other abort reasons) follows.
pub fn reported(model: ModelKind) -> &'static [&'static str] {
    match model {
        ModelKind::KswapdStall => &[
            "elapsed-us",
            "cpu-us",
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
            "stall-us-total",
            "lock-hold-us",
            "lock-wait-us",
        ],
        ModelKind::Compaction => &[
            "elapsed-us",
            "cpu-us",
            "lock-contended",
            "contended-set",
            "block-finished",
            "block-abandoned",
            "migrate-scanned",
            "free-scanned",
            "isolated-migrate",
            "isolated-free",
            "migrated",
            "end-Success",
            "end-ScannersMet",
            "end-Contended",
            "end-IsolateAbort",
            "end-NoMemory",
            "loops-stopped",
            "lock-hold-us",
            "lock-wait-us",
        ],
    }
}

/// Ratios a comparison also shows, as (numerator, denominator) counters: the ratio of their
/// totals over all iterations of a column.
pub fn ratios(model: ModelKind) -> &'static [(&'static str, &'static str)] {
    match model {
        ModelKind::KswapdStall => &[("cpu-us", "elapsed-us"), ("stall-us", "stalls"), ("direct-stall-us", "direct-stall"), ("lock-wait-us", "trylock-failed")],
        ModelKind::Compaction => &[
            ("cpu-us", "elapsed-us"),
            ("migrate-scanned", "block-finished"),
            ("free-scanned", "migrated"),
            ("lock-wait-us", "lock-contended"),
        ],
    }
}

/// The ratio of two counters' totals over `samples` (`None` when the denominator is 0).
pub fn ratio(samples: &[Sample], num: &str, den: &str) -> Option<f64> {
    let total = |k: &str| samples.iter().map(|s| s.get(k).copied().unwrap_or(0.0)).sum::<f64>();
    let d = total(den);
    (d != 0.0).then(|| total(num) / d)
}

/// The role kinds of a model (the keys `--delay` accepts).
pub fn role_kinds(model: ModelKind) -> &'static [&'static str] {
    match model {
        ModelKind::KswapdStall => &["kswapd", "writer", "allocator", "direct-reclaim", "bdi"],
        ModelKind::Compaction => &["compactor", "lock-holder", "killer", "resched"],
    }
}

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
                        reclaim::Role::DirectReclaim { node, batches, pages, tags_congested } => {
                            reclaim::Role::DirectReclaim { node: node + i * nodes, batches: batches * work, pages, tags_congested }
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
            let n = c.roles.len();
            let mut roles = Vec::new();
            for i in 0..k.max(1) {
                for r in &c.roles {
                    roles.push(match r.clone() {
                        compaction::Role::LockHolder { lock, holds } => compaction::Role::LockHolder { lock, holds: holds * work },
                        // Killers and resched threads name their compactor by pid: aim each copy
                        // at the compactor of its own copy.
                        compaction::Role::Killer { target } => compaction::Role::Killer { target: target + i * n },
                        compaction::Role::Resched { target } => compaction::Role::Resched { target: target + i * n },
                        other => other,
                    });
                }
            }
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
        // Compaction has no timers.
        other => other.clone(),
    }
}

/// The role kind of every thread of `spec`, by pid.
fn kinds(spec: &ModelSpec) -> Vec<&'static str> {
    match spec {
        ModelSpec::KswapdStall(c) => c.roles.iter().map(|r| r.kind()).collect(),
        ModelSpec::Compaction(c) => c.roles.iter().map(|r| r.kind()).collect(),
    }
}

/// Run `sc` on real threads.
pub fn run(sc: &Scenario, cfg: &RunConfig) -> Result<RunResult, String> {
    Ok(run_interleaved(std::slice::from_ref(sc), cfg)?.remove(0))
}

/// What the worker reports after each iteration.
struct Done {
    index: usize,
    sample: Sample,
    violated: Vec<&'static str>,
    seconds: f64,
}

/// The iteration in progress, for the watchdog's report.
type Current = Arc<Mutex<Option<(usize, u64, Arc<Recorder>, Instant)>>>;

/// Run several scenarios on real threads, one iteration of each in turn, so that drift in the
/// machine's state (frequency, caches, other load) falls on all of them alike.
///
/// The iterations run on a worker thread; if one of them has not finished after
/// `cfg.iteration_cap`, this returns an error naming it with its last events, and the
/// worker and its model threads are abandoned (they end with the process).
pub fn run_interleaved(scs: &[Scenario], cfg: &RunConfig) -> Result<Vec<RunResult>, String> {
    let mut specs = Vec::new();
    for sc in scs {
        specs.push(real_time(&scale(&sc.spec.model, cfg.threads_scale, cfg.work, cfg.hold_spins)?, cfg.jiffy));
    }
    for (kind, _) in &cfg.delays {
        if !scs.iter().any(|sc| role_kinds(sc.model()).contains(&kind.as_str())) {
            let mut all: Vec<&str> = Vec::new();
            for sc in scs {
                for k in role_kinds(sc.model()) {
                    if !all.contains(k) {
                        all.push(k);
                    }
                }
            }
            return Err(format!("--delay: no thread of kind \"{kind}\" in these scenarios (kinds: {})", all.join(", ")));
        }
    }
    let mut results: Vec<RunResult> = scs
        .iter()
        .map(|sc| RunResult {
            name: sc.name.clone(),
            label: match sc.spec.model.mutation() {
                Some(m) => format!("{}+{}", sc.spec.model.variant_name(), m.name()),
                None => sc.spec.model.variant_name().to_string(),
            },
            model: sc.model(),
            samples: Vec::with_capacity(cfg.iterations as usize),
            violations: BTreeMap::new(),
            seconds: 0.0,
        })
        .collect();

    let comms: Vec<Vec<String>> = specs.iter().map(|s| s.comms()).collect();
    let current: Current = Arc::new(Mutex::new(None));
    let (tx, rx) = mpsc::channel::<Done>();
    let worker = {
        let scs: Vec<Scenario> = scs.to_vec();
        let cfg = cfg.clone();
        let current = Arc::clone(&current);
        std::thread::Builder::new()
            .name("mmcheck-run".into())
            .spawn(move || {
                let mut done = 0;
                for it in 0..cfg.iterations {
                    let delays: Vec<Vec<Duration>> = specs.iter().map(|s| draw_delays(s, &cfg, it)).collect();
                    for (i, (sc, spec)) in scs.iter().zip(&specs).enumerate() {
                        let t = Instant::now();
                        let (sample, violated) = one_iteration(sc, spec, &delays[i], |rec| {
                            *current.lock().unwrap_or_else(|e| e.into_inner()) = Some((i, it, rec, Instant::now()));
                        });
                        let seconds = t.elapsed().as_secs_f64();
                        if tx.send(Done { index: i, sample, violated, seconds }).is_err() {
                            return;
                        }
                        done += 1;
                        if let Some(p) = &cfg.progress {
                            p(done, cfg.iterations * scs.len() as u64);
                        }
                    }
                }
            })
            .map_err(|e| format!("cannot start the run's worker thread: {e}"))?
    };
    let total = cfg.iterations as usize * scs.len();
    let poll = cfg.iteration_cap.min(Duration::from_millis(100));
    let mut received = 0;
    while received < total {
        match rx.recv_timeout(poll) {
            Ok(d) => {
                received += 1;
                let r = &mut results[d.index];
                r.samples.push(d.sample);
                r.seconds += d.seconds;
                for v in d.violated {
                    *r.violations.entry(v).or_insert(0) += 1;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let started = current.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|c| c.3);
                if started.is_some_and(|t| t.elapsed() >= cfg.iteration_cap) {
                    return Err(hung_report(scs, &comms, &current, cfg.iteration_cap));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Err(e) = worker.join() {
        std::panic::resume_unwind(e);
    }
    Ok(results)
}

/// The watchdog's message: which iteration is stuck, and what its threads did last.
fn hung_report(scs: &[Scenario], comms: &[Vec<String>], current: &Current, cap: Duration) -> String {
    let cur = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some((i, it, rec, _)) = cur else { unreachable!("the watchdog reports only a started iteration") };
    let sc = &scs[i];
    let events = rec.events();
    let comms = &comms[i];
    let mut msg = format!(
        "{}: iteration {} ({}) has not finished after {:.3} s; stopping the run (its threads are abandoned). Last events:",
        sc.name,
        it + 1,
        sc.spec.model.variant_name(),
        cap.as_secs_f64()
    );
    for (pid, e) in events.iter().skip(events.len().saturating_sub(12)) {
        let who = comms.get(*pid).cloned().unwrap_or_else(|| format!("T{pid}"));
        msg.push_str(&format!("\n    T{pid} ({who}): {e:?}"));
    }
    msg
}

/// splitmix64: a small deterministic generator for the start delays.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Each thread's start delay for iteration `it` (the same for every compared scenario).
fn draw_delays(spec: &ModelSpec, cfg: &RunConfig, it: u64) -> Vec<Duration> {
    let mut state = cfg.seed ^ it.wrapping_mul(0xd134_2543_de82_ef95);
    kinds(spec)
        .into_iter()
        .map(|kind| {
            let r = splitmix(&mut state);
            match cfg.delays.iter().find(|(k, _)| k == kind) {
                Some((_, max)) if !max.is_zero() => Duration::from_nanos(r % (max.as_nanos() as u64 + 1)),
                _ => Duration::ZERO,
            }
        })
        .collect()
}

/// One execution of `spec` on real threads: spawn every role, hold them at a gate until all
/// exist, start each after its delay, join them. The model's own `run` functions do the
/// same minus the delays (and, for compaction, the gate); the threads run the model's
/// `run_task`, the code the checkers explore.
fn run_gated(spec: &ModelSpec, rec: Arc<Recorder>, delays: &[Duration]) -> (Final, Option<u64>) {
    match spec {
        ModelSpec::KswapdStall(c) => {
            let k = reclaim::Reclaim::<Std<Recorder>>::new(c.clone(), rec);
            let cpu = spawn_gated(&spec.comms(), delays, |pid| k.run_task(pid));
            (Final::KswapdStall(k.final_state()), cpu)
        }
        ModelSpec::Compaction(c) => {
            let k = compaction::Compaction::<Std<Recorder>>::new(c.clone(), rec);
            let cpu = spawn_gated(&spec.comms(), delays, |pid| k.run_task(pid));
            (Final::Compaction(k.final_state()), cpu)
        }
    }
}

/// The calling thread's time on a CPU so far, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), or `None` where that is not available.
/// (`/proc/thread-self/schedstat` would need no `unsafe`, but for a running thread it lags by
/// up to a scheduler tick, far longer than an iteration.)
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_ns() -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one `struct timespec` (two 64-bit fields on 64-bit Linux)
    // to the pointer it is given, which points to a live, writable `Timespec`.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

/// Spawn one thread per task, start them together, join them. Returns the CPU time the
/// tasks used (the sum over threads, from the start of each task to its end), if the
/// platform reports it.
fn spawn_gated(comms: &[String], delays: &[Duration], task: impl Fn(Pid) + Sync) -> Option<u64> {
    let gate = Barrier::new(comms.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .iter()
            .enumerate()
            .map(|(pid, comm)| {
                let (gate, task) = (&gate, &task);
                let delay = delays.get(pid).copied().unwrap_or_default();
                std::thread::Builder::new()
                    .name(comm.clone())
                    .spawn_scoped(s, move || {
                        gate.wait();
                        if !delay.is_zero() {
                            // Sleeping would round up to the timer slack (50 us or more); spin,
                            // but give the CPU away while waiting: threads outnumber cores.
                            let until = Instant::now() + delay;
                            while Instant::now() < until {
                                std::thread::yield_now();
                            }
                        }
                        let t0 = thread_cpu_ns();
                        task(pid);
                        Some(thread_cpu_ns()?.saturating_sub(t0?))
                    })
                    .expect("spawn a runtime thread")
            })
            .collect();
        let mut total = Some(0u64);
        for h in handles {
            match h.join() {
                Ok(cpu) => total = total.zip(cpu).map(|(a, b)| a + b),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        total
    })
}

fn one_iteration(sc: &Scenario, spec: &ModelSpec, delays: &[Duration], started: impl FnOnce(Arc<Recorder>)) -> (Sample, Vec<&'static str>) {
    let rec = Arc::new(Recorder::with_clock(spec.tasks(), sc.spec.bounds));
    started(Arc::clone(&rec));
    let t0 = Instant::now();
    let (fin, cpu_ns) = run_gated(spec, Arc::clone(&rec), delays);
    let elapsed = t0.elapsed();
    let events = rec.take_events();
    let times = rec.take_times();
    let exec = Exec { model: spec, events: &events, fin: &fin };
    let vs = monitor::check(&exec, &sc.spec.invariants);
    let mut seen: Vec<&'static str> = Vec::new();
    for v in &vs {
        if !seen.contains(&v.invariant) {
            seen.push(v.invariant);
        }
    }
    let mut s = counters(&exec, &times);
    s.insert("elapsed-us".into(), elapsed.as_secs_f64() * 1e6);
    if let Some(ns) = cpu_ns {
        s.insert("cpu-us".into(), ns as f64 / 1e3);
    }
    s.insert("lost-wakeups".into(), vs.iter().filter(|v| v.invariant == "no-lost-wakeup").count() as f64);
    (s, seen)
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
    // Compaction: each compactor's last scanner positions (migrate_pfn, free_pfn).
    let mut scanners: Vec<Option<(u32, u32)>> = vec![None; tasks];
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
            Event::Migrated { pages, .. } => add(&mut s, "migrated", pages as f64),
            Event::ScannerAt { migrate_pfn, free_pfn } => scanners[p] = Some((migrate_pfn, free_pfn)),
            Event::CompactEnd { reason, migrate_pfn, free_pfn, .. } => {
                scanners[p] = Some((migrate_pfn, free_pfn));
                let r = reason.map(|r| format!("end-{r:?}")).unwrap_or_else(|| "end-none".into());
                add(&mut s, &r, 1.0);
            }
            Event::Livelock { .. } | Event::StepBound { .. } => add(&mut s, "loops-stopped", 1.0),
            _ => {}
        }
    }
    if let ModelSpec::KswapdStall(_) = exec.model {
        // Time asleep in either stall: kswapd's on kswapd_contended_wait, direct reclaim's in
        // wait_iff_congested (4/4 trades the one for the other).
        let total = s.get("stall-us").copied().unwrap_or(0.0) + s.get("direct-stall-us").copied().unwrap_or(0.0);
        s.insert("stall-us-total".into(), total);
    }
    if let ModelSpec::Compaction(c) = exec.model {
        // Pages each scanner has covered, from where it stopped: the migration scanner scans
        // up from the zone start; the free scanner scans pageblocks down from the zone end,
        // each one upwards from its start. (A one-pass count: the model's scanners never go
        // back, and pfns re-read within a pageblock by a rescan are not counted.)
        let (start, end, ppb) = (c.zone_start_pfn(), c.zone_end_pfn(), c.pages_per_block);
        for (m, f) in scanners.into_iter().flatten() {
            add(&mut s, "migrate-scanned", m.saturating_sub(start) as f64);
            let bs = f & !(ppb - 1);
            let free = if f == bs { end.saturating_sub(f) } else { end.saturating_sub(bs + ppb) + (f - bs) };
            add(&mut s, "free-scanned", free as f64);
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

/// Every counter to show for these runs: each model's reported counters (even when zero),
/// then any other counter that is not zero in some sample.
pub fn counter_names(runs: &[RunResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for n in reported(r.model) {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    let fixed = names.len();
    for r in runs {
        for s in &r.samples {
            for k in s.keys() {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
    }
    let mut i = 0;
    names.retain(|n| {
        i += 1;
        i <= fixed || runs.iter().any(|r| r.samples.iter().any(|s| s.get(n).is_some_and(|v| *v != 0.0)))
    });
    names
}

/// A table in the style of the seeds' mmtests comparisons: one column per run, `Amean`,
/// `Min` and `Max` rows per counter, and the change of each column's mean against the first
/// column, `(new - first) / first`, in percent.
pub fn compare_table(runs: &[RunResult]) -> String {
    let mut out = String::new();
    let w = runs.iter().map(|r| r.label.len()).max().unwrap_or(8).max(20);
    out.push_str(&format!("{:<38}", ""));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.label));
    }
    out.push('\n');
    for name in counter_names(runs) {
        for (row, pick) in [("Amean", 0usize), ("Min", 1), ("Max", 2)] {
            out.push_str(&format!("{:<6}{:<32}", row, name));
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
    let mut shown: Vec<(&str, &str)> = Vec::new();
    for r in runs {
        for &(a, b) in ratios(r.model) {
            if !shown.contains(&(a, b)) {
                shown.push((a, b));
            }
        }
    }
    for (a, b) in shown {
        out.push_str(&format!("{:<6}{:<32}", "Ratio", format!("{a}/{b}")));
        let base = ratio(&runs[0].samples, a, b);
        for r in runs {
            let cell = match (ratio(&r.samples, a, b), base) {
                (None, _) => "-".to_string(),
                (Some(v), Some(b)) if b == 0.0 && v == 0.0 => format!("{v:.2} ({:7.2}%)", 0.0),
                (Some(v), Some(b)) if b != 0.0 => format!("{v:.2} ({:7.2}%)", (v - b) / b * 100.0),
                (Some(v), _) => format!("{v:.2} (    new)"),
            };
            out.push_str(&format!(" {cell:>w$}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:<38}", "iterations"));
    for r in runs {
        out.push_str(&format!(" {:>w$}", r.samples.len()));
    }
    out.push('\n');
    out.push_str(&format!("{:<38}", "seconds"));
    for r in runs {
        out.push_str(&format!(" {:>w$.2}", r.seconds));
    }
    out.push('\n');
    out.push_str(&format!("{:<38}", "violations (iterations)"));
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

// ---------------------------------------------------------------- the chart

/// Quantile `q` of sorted `v` (linear interpolation).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let x = q * (v.len() - 1) as f64;
    let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A number for an axis label: short, no trailing zeros.
fn tick_label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// An SVG chart of the per-iteration distributions: one panel per counter (the counters of
/// [`counter_names`]), one strip per run in each panel, every iteration a dot (jittered
/// sideways), with a box from the first to the third quartile, the median as a line, the mean
/// as a diamond and whiskers to min and max. `title` may have several lines (the first is
/// bold). Hand-written SVG, no dependencies.
pub fn svg_chart(runs: &[RunResult], title: &str) -> String {
    const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
    let names = counter_names(runs);
    let cols = 3usize;
    let (pw, ph) = (380.0f64, 220.0f64);
    let (ml, mr, mt, mb) = (52.0, 12.0, 26.0, 22.0);
    let title_lines: Vec<&str> = title.lines().collect();
    let head = 16.0 * title_lines.len().max(1) as f64 + 20.0;
    let legend_h = 22.0 * runs.len() as f64 + 10.0;
    let rows = names.len().div_ceil(cols);
    let width = pw * cols as f64;
    let height = head + legend_h + ph * rows as f64;
    let mut o = String::new();
    o.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    ));
    o.push_str(&format!("<rect width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>\n"));
    for (i, line) in title_lines.iter().enumerate() {
        let (size, weight) = if i == 0 { (15, "bold") } else { (12, "normal") };
        o.push_str(&format!(
            "<text x=\"10\" y=\"{}\" font-size=\"{size}\" font-weight=\"{weight}\">{}</text>\n",
            22 + 16 * i,
            xml_escape(line)
        ));
    }
    for (i, r) in runs.iter().enumerate() {
        let y = head + 4.0 + 22.0 * i as f64;
        o.push_str(&format!("<rect x=\"12\" y=\"{:.0}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n", y, COLORS[i % COLORS.len()]));
        o.push_str(&format!(
            "<text x=\"32\" y=\"{:.0}\">{} ({}: {} iterations)</text>\n",
            y + 12.0,
            xml_escape(&r.label),
            xml_escape(&r.name),
            r.samples.len()
        ));
    }
    let top = head + legend_h;
    for (n, name) in names.iter().enumerate() {
        let (px, py) = ((n % cols) as f64 * pw, top + (n / cols) as f64 * ph);
        let (x0, x1, y0, y1) = (px + ml, px + pw - mr, py + mt, py + ph - mb);
        let series: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| {
                let mut v: Vec<f64> = r.samples.iter().map(|s| s.get(name).copied().unwrap_or(0.0)).collect();
                v.sort_by(|a, b| a.total_cmp(b));
                v
            })
            .collect();
        let lo = series.iter().filter_map(|v| v.first()).copied().fold(f64::INFINITY, f64::min).min(0.0);
        let mut hi = series.iter().filter_map(|v| v.last()).copied().fold(f64::NEG_INFINITY, f64::max);
        if !hi.is_finite() || hi <= lo {
            hi = lo + 1.0;
        }
        // Four grid steps of a round size (1, 2, 2.5 or 5 times a power of ten).
        let raw = (hi - lo) / 4.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(raw);
        hi = lo + 4.0 * step;
        let y = |v: f64| y1 - (v - lo) / (hi - lo) * (y1 - y0);
        o.push_str(&format!("<g><title>{}</title>\n", xml_escape(name)));
        o.push_str(&format!("<text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\">{}</text>\n", x0, py + 16.0, xml_escape(name)));
        o.push_str(&format!(
            "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>\n",
            x1 - x0,
            y1 - y0
        ));
        for k in 0..=4 {
            let v = lo + (hi - lo) * k as f64 / 4.0;
            let yy = y(v);
            o.push_str(&format!("<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#eee\"/>\n"));
            o.push_str(&format!("<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n", x0 - 4.0, yy + 4.0, tick_label(v)));
        }
        let slot = (x1 - x0) / runs.len().max(1) as f64;
        for (i, v) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let cx = x0 + slot * (i as f64 + 0.5);
            let half = (slot * 0.3).min(40.0);
            // The dots: at most 400 per strip (evenly spaced through the sorted values).
            let step = (v.len() / 400).max(1);
            let mut jit = 0x2545_f491_4f6c_dd1du64 ^ (i as u64 + 1);
            for val in v.iter().step_by(step) {
                let j = (splitmix(&mut jit) % 1000) as f64 / 1000.0 * 2.0 - 1.0;
                o.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.6\" fill=\"{color}\" fill-opacity=\"0.35\"/>\n",
                    cx + j * half * 0.9,
                    y(*val)
                ));
            }
            if v.is_empty() {
                continue;
            }
            let (q1, med, q3) = (quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75));
            let (mn, mx) = (v[0], v[v.len() - 1]);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            o.push_str(&format!("<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n", y(mn), y(q1)));
            o.push_str(&format!("<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n", y(q3), y(mx)));
            for w in [mn, mx] {
                o.push_str(&format!(
                    "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>\n",
                    cx - half * 0.4,
                    cx + half * 0.4,
                    y(w),
                    y(w)
                ));
            }
            o.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" fill-opacity=\"0.15\" stroke=\"{color}\"/>\n",
                cx - half,
                y(q3),
                2.0 * half,
                (y(q1) - y(q3)).max(0.5)
            ));
            o.push_str(&format!(
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{color}\" stroke-width=\"2.5\"/>\n",
                cx - half,
                cx + half,
                y(med),
                y(med)
            ));
            let (my, d) = (y(mean), 4.0);
            o.push_str(&format!(
                "<polygon points=\"{:.1},{my:.1} {cx:.1},{:.1} {:.1},{my:.1} {cx:.1},{:.1}\" fill=\"white\" stroke=\"black\"/>\n",
                cx - d,
                my - d,
                cx + d,
                my + d
            ));
            let label: String = runs[i].label.chars().take(((slot / 6.0) as usize).max(4)).collect();
            o.push_str(&format!("<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{color}\">{}</text>\n", y1 + 14.0, xml_escape(&label)));
        }
        o.push_str("</g>\n");
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rel: &str) -> Scenario {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(rel);
        crate::scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn compaction_threads_scale_aims_each_killer_at_its_own_compactor() {
        let sc = load("compaction/finishcontend-v3-fatal-loop.toml");
        let ModelSpec::Compaction(c) = scale(&sc.spec.model, 3, 2, 0).unwrap() else { panic!() };
        assert_eq!(c.roles.len(), 9);
        for (pid, r) in c.roles.iter().enumerate() {
            if let compaction::Role::Killer { target } = r {
                assert_eq!(*target, pid / 3 * 3, "killer T{pid}");
                assert!(matches!(c.roles[*target], compaction::Role::Compactor { .. }));
            }
            if let compaction::Role::LockHolder { holds, .. } = r {
                assert_eq!(*holds, 2);
            }
        }
    }

    #[test]
    fn a_run_of_each_model_ends_and_counts() {
        let cfg = RunConfig { iterations: 5, work: 4, hold_spins: 100, ..RunConfig::default() };
        let r = run(&load("kswapd-stall/directcongest-v1-large-pct.toml"), &cfg).unwrap();
        assert_eq!(r.samples.len(), 5);
        assert!(r.samples.iter().all(|s| s.get("congested-cleared") == Some(&3.0)));
        // A finishcontend-v3 compactor killed mid-pageblock loops for ever on real threads
        // too; the recorder stops the loop, so every iteration ends.
        let cfg = RunConfig { iterations: 20, delays: vec![("killer".into(), Duration::from_micros(30))], ..RunConfig::default() };
        let r = run(&load("compaction/finishcontend-v3-fatal-loop.toml"), &cfg).unwrap();
        assert_eq!(r.samples.len(), 20);
        // Every compactor either ended (an end-* reason) or had its loop stopped.
        for s in &r.samples {
            assert!(s.contains_key("migrate-scanned"));
            assert!(s.contains_key("loops-stopped") || s.keys().any(|k| k.starts_with("end-")), "{s:?}");
        }
        let svg = svg_chart(&[r], "t");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }

    #[test]
    fn delays_are_the_same_for_compared_scenarios_and_within_bounds() {
        let sc = load("kswapd-stall/recheck-large-pct.toml");
        let cfg = RunConfig { delays: vec![("bdi".into(), Duration::from_micros(100))], ..RunConfig::default() };
        let a = draw_delays(&sc.spec.model, &cfg, 7);
        let b = draw_delays(&with_variant(&sc.spec.model, "waitqueue-v1").unwrap(), &cfg, 7);
        assert_eq!(a, b);
        for (d, k) in a.iter().zip(kinds(&sc.spec.model)) {
            assert!(*d <= Duration::from_micros(100));
            if k != "bdi" {
                assert!(d.is_zero());
            }
        }
    }
}
