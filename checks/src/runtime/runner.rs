//! The runner and its watchdog: iterations of several scenarios, interleaved, on real threads.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::types::{RunConfig, RunError, RunResult, Sample};
use crate::scenario::Scenario;
use crate::spec::{AnySpec, Watch};
use crate::term::show_path;

/// Run `sc` on real threads.
pub fn run(sc: &Scenario, cfg: &RunConfig) -> Result<RunResult, RunError> {
    Ok(run_interleaved(std::slice::from_ref(sc), cfg)?.remove(0))
}

/// What the worker reports after each iteration.
struct Done {
    index: usize,
    sample: Sample,
    violated: Vec<&'static str>,
    seconds: f64,
}

/// The iteration in progress, for the watchdog's report: scenario, iteration, its recorder,
/// when it started.
type Current = Arc<Mutex<Option<(usize, u64, Arc<dyn Watch>, Instant)>>>;

/// Run several scenarios on real threads, one iteration of each in turn, so that drift in the
/// machine's state (frequency, caches, other load) falls on all of them alike.
///
/// The iterations run on a worker thread; if one of them has not finished after
/// `cfg.iteration_cap`, this returns [`RunError::Hung`] naming it with its last events, and the
/// worker and its model threads are abandoned (they end with the process).
pub fn run_interleaved(scs: &[Scenario], cfg: &RunConfig) -> Result<Vec<RunResult>, RunError> {
    let mut specs: Vec<Arc<dyn AnySpec>> = Vec::new();
    for sc in scs {
        let spec = sc.spec.for_real_threads(cfg.threads_scale, cfg.work, cfg.hold_spins, cfg.jiffy).map_err(|e| {
            RunError::Config(format!(
                "{}: --threads-scale {} / --work {}: {e}",
                show_path(&sc.file),
                cfg.threads_scale,
                cfg.work
            ))
        })?;
        specs.push(spec);
    }
    // A delay for a kind of thread a scenario does not have would do nothing there.
    for (i, (kind, _)) in cfg.delays.iter().enumerate() {
        if cfg.delays[..i].iter().any(|(k, _)| k == kind) {
            return Err(RunError::Config(format!("--delay: kind \"{kind}\" is given twice")));
        }
        for sc in scs {
            let mut kinds: Vec<&str> = Vec::new();
            for k in sc.spec.role_kinds() {
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            if !kinds.contains(&kind.as_str()) {
                return Err(RunError::Config(format!(
                    "--delay: {} has no thread of kind \"{kind}\" (its kinds: {})",
                    show_path(&sc.file),
                    kinds.join(", ")
                )));
            }
        }
    }
    let mut results: Vec<RunResult> = scs
        .iter()
        .map(|sc| RunResult {
            name: sc.name.clone(),
            label: match sc.spec.mutation() {
                Some(m) => format!("{}+{m}", sc.spec.variant()),
                None => sc.spec.variant().to_string(),
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
        let cfg = cfg.clone();
        let current = Arc::clone(&current);
        let specs = specs.clone();
        std::thread::Builder::new()
            .name("mmcheck-run".into())
            .spawn(move || {
                let mut done = 0;
                for it in 0..cfg.iterations {
                    let delays: Vec<Vec<Duration>> = specs.iter().map(|s| draw_delays(&**s, &cfg, it)).collect();
                    for (i, spec) in specs.iter().enumerate() {
                        let t = Instant::now();
                        let (sample, violated) = spec.run_real(&delays[i], &|rec| {
                            *current.lock().unwrap_or_else(|e| e.into_inner()) = Some((i, it, rec, Instant::now()));
                        });
                        let seconds = t.elapsed().as_secs_f64();
                        if tx.send(Done { index: i, sample, violated, seconds }).is_err() {
                            return;
                        }
                        done += 1;
                        if let Some(p) = &cfg.progress {
                            p(done, cfg.iterations * specs.len() as u64);
                        }
                    }
                }
            })
            .map_err(|e| RunError::Spawn(format!("cannot start the run's worker thread: {e}")))?
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
                    return Err(RunError::Hung(hung_report(scs, &comms, &current, cfg.iteration_cap)));
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
    let comms = &comms[i];
    let mut msg = format!(
        "{}: iteration {} ({}) has not finished after {:.3} s; stopping the run (its threads are abandoned). Last events:",
        sc.name,
        it + 1,
        sc.spec.variant(),
        cap.as_secs_f64()
    );
    for (pid, e) in rec.last_events(12) {
        let who = comms.get(pid).cloned().unwrap_or_else(|| format!("T{pid}"));
        msg.push_str(&format!("\n    T{pid} ({who}): {e}"));
    }
    msg
}

/// splitmix64: a small deterministic generator for the start delays.
pub(super) fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Each thread's start delay for iteration `it` (the same for every compared scenario).
fn draw_delays(spec: &dyn AnySpec, cfg: &RunConfig, it: u64) -> Vec<Duration> {
    let mut state = cfg.seed ^ it.wrapping_mul(0xd134_2543_de82_ef95);
    spec.role_kinds()
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

#[cfg(test)]
mod tests {
    use mmmodel::compaction::{self, Compaction};

    use super::*;
    use crate::spec::config_of;

    fn load(rel: &str) -> Scenario {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(rel);
        crate::scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn compaction_threads_scale_aims_each_killer_at_its_own_compactor() {
        let sc = load("compaction/finishcontend-v3-fatal-loop.toml");
        let scaled = sc.spec.for_real_threads(3, 2, 0, Duration::from_micros(10)).unwrap();
        let c = config_of::<Compaction>(&*scaled).unwrap();
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
        let cfg = RunConfig {
            iterations: 20,
            delays: vec![("killer".into(), Duration::from_micros(30))],
            ..RunConfig::default()
        };
        let r = run(&load("compaction/finishcontend-v3-fatal-loop.toml"), &cfg).unwrap();
        assert_eq!(r.samples.len(), 20);
        // Every compactor either ended (an end-* reason) or had its loop stopped.
        for s in &r.samples {
            assert!(s.contains_key("migrate-scanned"));
            assert!(s.contains_key("loops-stopped") || s.keys().any(|k| k.starts_with("end-")), "{s:?}");
        }
        let svg = crate::runtime::svg_chart(&[r], "t");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }

    #[test]
    fn delays_are_the_same_for_compared_scenarios_and_within_bounds() {
        let sc = load("kswapd-stall/recheck-large-pct.toml");
        let cfg = RunConfig { delays: vec![("bdi".into(), Duration::from_micros(100))], ..RunConfig::default() };
        let a = draw_delays(&*sc.spec, &cfg, 7);
        let b = draw_delays(&*sc.spec.with_variant("waitqueue-v1").unwrap(), &cfg, 7);
        assert_eq!(a, b);
        for (d, k) in a.iter().zip(sc.spec.role_kinds()) {
            assert!(*d <= Duration::from_micros(100));
            if k != "bdi" {
                assert!(d.is_zero());
            }
        }
    }
}
