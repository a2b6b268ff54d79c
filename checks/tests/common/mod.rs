//! Shared by the scenario test binaries: run one scenario file with the engines of one
//! family, require the expected verdict, and require that its counterexample replays to
//! the identical trace.
//!
//! Every execution is also checked by the online monitors, which must agree with the trace
//! monitors on it (`RunOptions::check_online`; a disagreement is an `error` verdict).
//! `MMCHECK_CHECK_ONLINE=0` turns that off (to measure what it costs).

#![allow(dead_code)]

pub mod oracle;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mmcheck::check::{check, RunOptions, Verdict};
use mmcheck::engine::Engine;
use mmcheck::scenario;

pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// Loom explorations run one at a time. Loom maps, protects and unmaps a fresh stack for every
/// thread of every execution; with two explorations on two cores each munmap also has to shoot
/// down the other core's TLB, and the loom test binary took 382 s with libtest's two threads
/// against 175 s with one (measured with `--test-threads 1`). Holding this lock gives the
/// single-threaded figure without asking every caller for `--test-threads 1`.
static LOOM_SERIAL: Mutex<()> = Mutex::new(());

/// Whether the scenario tests compare the online monitors with the trace monitors (yes, unless
/// `MMCHECK_CHECK_ONLINE=0`).
pub fn check_online() -> bool {
    std::env::var("MMCHECK_CHECK_ONLINE").map_or(true, |v| v != "0")
}

/// `family`: "loom" runs the scenario's loom engine, "shuttle" its shuttle engines,
/// "stateful" its stateful engine.
/// Hold while running a loom exploration outside [`scenario_test`].
#[allow(dead_code)] // not every test binary runs loom by hand
pub fn loom_serial() -> std::sync::MutexGuard<'static, ()> {
    LOOM_SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file with `variants` is one scenario per variant: each is checked (and replayed) in turn.
pub fn scenario_test(rel: &str, family: &str) {
    let _serial = (family == "loom").then(|| LOOM_SERIAL.lock().unwrap_or_else(|e| e.into_inner()));
    let path = scenarios_dir().join(rel);
    let each = scenario::load_each(&path).unwrap_or_else(|e| panic!("{e}"));
    for sc in &each {
        let rel = if each.len() > 1 { format!("{rel} ({})", sc.spec.variant()) } else { rel.to_string() };
        check_one(&rel, sc, family);
    }
}

fn check_one(rel: &str, sc: &scenario::Scenario, family: &str) {
    let engines: Vec<Engine> =
        sc.engines.iter().copied().filter(|e| matches!(e, Engine::Loom { .. }) == (family == "loom")).collect();
    assert!(!engines.is_empty(), "{rel}: no {family} engine");
    let opts = RunOptions { engine_override: Some(engines), check_online: check_online(), ..RunOptions::default() };
    let r = check(sc, &opts);
    let online: u64 = r.runs.iter().map(|x| x.outcome.online_checked).sum();
    // Written straight to stderr, past libtest's capture, so that `cargo test` shows how
    // many executions every check explored even when it passes.
    let _ = writeln!(
        std::io::stderr().lock(),
        "    {rel}: {} on {}: {} executions{}, {online} cross-checked online, {:.2} s (expected {})",
        r.verdict.label(),
        r.engine_names(),
        r.executions(),
        if r.runs.iter().all(|x| x.outcome.complete) { " (complete)" } else { "" },
        r.seconds(),
        r.expected_label()
    );
    if let Some(ce) = r.counterexample(false) {
        println!("{ce}");
    }
    assert!(r.matched, "{rel}: got {:?}, expected {}", r.verdict, r.expected_label());
    // Every reported violation replays to the identical trace from its token.
    if let (Verdict::Violation(_), Some(token), Some(i)) = (&r.verdict, &r.replay, r.shown) {
        let original = r.runs[i].outcome.found.as_ref().expect("shown run has a counterexample");
        let ropts = RunOptions {
            replay: Some(token.clone()),
            engine_override: Some(vec![r.runs[i].outcome.engine]),
            ..RunOptions::default()
        };
        let again = check(sc, &ropts);
        let replayed =
            again.runs.first().and_then(|run| run.outcome.found.as_ref()).expect("the replay reproduces an execution");
        assert_eq!(replayed.replay, original.replay, "{rel}: replay {token} reached another execution");
        assert_eq!(replayed.trace, original.trace, "{rel}: replay {token} gave a different trace");
        assert_eq!(replayed.violations, original.violations, "{rel}: replay {token} gave different violations");
    }
}

/// A kswapd-stall scenario of the given kswapds (batches, balances), extras and parameters, for
/// the reductions' generated comparisons.
pub fn kswapd_config(
    kswapds: &[(u32, bool)],
    allocator: Option<usize>,
    direct: Option<usize>,
    variant: &str,
    mutation: Option<&str>,
    anytime: bool,
) -> String {
    let mut t = format!("model = \"kswapd-stall\"\nvariant = \"{variant}\"\n");
    if let Some(m) = mutation {
        t += &format!("mutation = \"{m}\"\n");
    }
    for (n, (batches, balances)) in kswapds.iter().enumerate() {
        t += &format!("\n[[thread]]\nrole = \"kswapd\"\nnode = {n}\nbatches = {batches}\nbalances = {balances}\n");
    }
    if let Some(n) = direct {
        t += &format!("\n[[thread]]\nrole = \"direct-reclaim\"\nnode = {n}\n");
    }
    t += "\n[[thread]]\nrole = \"writer\"\n";
    if let Some(n) = allocator {
        t += &format!("\n[[thread]]\nrole = \"allocator\"\nnode = {n}\n");
    }
    t += &format!("\n[params]\ntimeout = \"{}\"\n", if anytime { "any-time" } else { "never" });
    t += "\n[explore]\nengine = \"stateful\"\n\n[expect]\nverdict = \"pass\"\n";
    t
}

/// The text of a generated kswapd-stall configuration for the reductions' comparisons: 2 or 3
/// kswapds ([`kswapds`]), maybe an allocator and (less often) a direct reclaimer on one of their
/// nodes, any variant, maybe one of `mutations`, either timer model.
pub fn generated_kswapd_config(
    mutations: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    (
        kswapds(),
        prop::option::of(0usize..3),
        prop::option::weighted(0.2, 0usize..3),
        prop::sample::select(vec!["waitqueue-v1", "directcongest-v1", "recheck"]),
        prop::option::weighted(0.3, prop::sample::select(mutations)),
        any::<bool>(),
    )
        .prop_map(|(ks, allocator, direct, variant, mutation, anytime)| {
            let allocator = allocator.filter(|&n| n < ks.len());
            let direct = direct.filter(|&n| n < ks.len());
            kswapd_config(&ks, allocator, direct, variant, mutation, anytime)
        })
}

/// A generated configuration's scenario; `None` for a mutation that does not apply to it
/// (nothing to compare).
pub fn parse_generated(text: &str) -> Option<scenario::Scenario> {
    scenario::parse(std::path::Path::new("generated.toml"), text).ok()
}

/// 2 or 3 kswapds of 1 or 2 batches, most of them balancing.
pub fn kswapds() -> impl proptest::strategy::Strategy<Value = Vec<(u32, bool)>> {
    use proptest::prelude::*;
    prop::collection::vec((1u32..=2, prop::bool::weighted(0.8)), 2..=3)
}

/// The coverage events an outcome reached.
pub fn reached(o: &mmcheck::engine::Outcome) -> std::collections::BTreeSet<&'static str> {
    o.coverage.iter().filter(|(_, &n)| n > 0).map(|(k, _)| *k).collect()
}

/// The invariants of an outcome's counterexample.
pub fn found_invariants(o: &mmcheck::engine::Outcome) -> std::collections::BTreeSet<&'static str> {
    o.found.as_ref().map(|f| f.violations.iter().map(|v| v.invariant).collect()).unwrap_or_default()
}

/// The shipped scenarios of at most `max_tasks` threads, outside heavy/: (path relative to
/// scenarios/, with `@VARIANT` for a file with `variants`; scenario), in file order.
pub fn shipped_small(max_tasks: usize) -> Vec<(String, scenario::Scenario)> {
    let mut out = Vec::new();
    for (rel, sc) in shipped() {
        if sc.spec.tasks() <= max_tasks {
            out.push((rel, sc));
        }
    }
    out
}

/// Every shipped scenario outside heavy/, one per variant of a file with `variants`: (path
/// relative to scenarios/, with `@VARIANT` for such a file; scenario), in file order.
pub fn shipped() -> Vec<(String, scenario::Scenario)> {
    let mut out = Vec::new();
    for f in scenario::collect_files(&scenarios_dir()).unwrap() {
        if f.components().any(|c| c.as_os_str() == "heavy") {
            continue;
        }
        let each = scenario::load_each(&f).unwrap_or_else(|e| panic!("{e}"));
        let multi = each.len() > 1;
        let rel = f.strip_prefix(scenarios_dir()).unwrap_or(Path::new("?")).display().to_string();
        for sc in each {
            let rel = if multi { format!("{rel}@{}", sc.spec.variant()) } else { rel.clone() };
            out.push((rel, sc));
        }
    }
    out
}

/// `f` over `items` on every core (at most one thread a core), the results in the items' order.
/// The soundness suites compare dozens of independent searches, each on one thread; run one
/// after another they left the second core idle. A panic in `f` fails the caller's test (the
/// scope re-raises it), with its message printed by the thread that panicked.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len()).max(1);
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return done };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(done) => done.into_iter().for_each(|(i, r)| out[i] = Some(r)),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    });
    out.into_iter().map(|r| r.expect("every item was mapped")).collect()
}
