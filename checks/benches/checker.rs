//! (c) Checker throughput: executions per second of each engine on shipped scenarios (the
//! time of a fixed amount of exploration; criterion reports it as elements/s, one element per
//! execution).
//!
//! * `checker_kswapd`: kswapd-stall, 2 kswapds and a writer (recheck, a pass: no early stop),
//!   loom at preemption bound 3 and 2,000 executions of each shuttle scheduler.
//! * `checker_compaction`: compaction, a sync-light compactor, an lru_lock holder and a killer
//!   (fatal-fix, a pass), loom unbounded and 2,000 executions of each shuttle scheduler.
//! * `checker_large`: shuttle on the large configurations loom cannot take (8 and 7 threads).
//! * `stateful_states`: the stateful engine's states per second (criterion's elements are
//!   states stored): a whole exhaustive search of kswapd-stall with 2 kswapds and a writer,
//!   unbounded (loom takes about 1.9 million executions for the same file), and of compaction
//!   with both lock holders, a killer and a resched.
//!
//! Run: `cargo bench -p mmcheck --bench checker`. The executions each engine needs to find
//! each known violation are reported by `mmcheck check --engine all --json` instead (field
//! `engines[].first_violation`), see docs/performance.md.

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use mmcheck::engine::{Engine, Explore, Memory, Options};
use mmcheck::scenario;

fn load(rel: &str) -> mmcheck::scenario::Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(rel);
    scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

const SHUTTLE_N: usize = 2000;

fn shuttle_engines() -> [(&'static str, Engine); 3] {
    [
        ("shuttle_pct", Engine::ShuttlePct { iterations: SHUTTLE_N, depth: 3, seed: 1 }),
        ("shuttle_random", Engine::ShuttleRandom { iterations: SHUTTLE_N, seed: 1 }),
        ("shuttle_dfs", Engine::ShuttleDfs { iterations: SHUTTLE_N }),
    ]
}

/// One group: loom (if given) over the whole scenario, each shuttle scheduler for a fixed
/// budget.
fn group(c: &mut Criterion, name: &str, rel: &str, loom: Option<(&str, Engine)>) {
    let sc = load(rel);
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    if let Some((label, loom)) = loom {
        let n = sc.spec.explore(loom, &Options::default()).executions;
        eprintln!("{name}/{label}: {n} executions per exploration");
        g.throughput(Throughput::Elements(n));
        g.bench_function(label, |b| b.iter(|| sc.spec.explore(loom, &Options::default())));
    }
    for (label, e) in shuttle_engines() {
        if matches!(e, Engine::ShuttleDfs { .. }) && loom.is_none() {
            continue; // DFS on a large configuration is a budget of its first few schedules.
        }
        g.throughput(Throughput::Elements(SHUTTLE_N as u64));
        g.bench_function(label, |b| b.iter(|| sc.spec.explore(e, &Options::default())));
    }
    g.finish();
}

/// The stateful engine over whole searches: throughput in states stored.
fn stateful(c: &mut Criterion) {
    let mut g = c.benchmark_group("stateful_states");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for (label, rel) in [
        ("kswapd_2kswapd_writer", "kswapd-stall/recheck-2kswapd-writer-stateful.toml"),
        ("compaction_holders_killer_resched", "compaction/fatal-fix-both-locks-killer-pb3.toml"),
        ("kswapd_direct_reclaim_bdi", "kswapd-stall/recheck-direct-reclaim-bdi-stateful.toml"),
    ] {
        let sc = load(rel);
        let e = Engine::Stateful { max_states: None, memory: Memory::Sc };
        let o = sc.spec.explore(e, &Options::default());
        let st = o.stats.expect("the stateful engine reports its figures");
        eprintln!(
            "stateful_states/{label}: {} states, {} transitions, {} executions",
            st.states, st.transitions, o.executions
        );
        g.throughput(Throughput::Elements(st.states));
        g.bench_function(label, |b| b.iter(|| sc.spec.explore(e, &Options::default())));
    }
    g.finish();
}

fn throughput(c: &mut Criterion) {
    group(
        c,
        "checker_kswapd",
        "kswapd-stall/recheck-2kswapd-writer.toml",
        Some(("loom_pb3", Engine::Loom { preemption_bound: Some(3) })),
    );
    group(
        c,
        "checker_compaction",
        "compaction/fatal-fix-sync-light-holder-killer.toml",
        Some(("loom", Engine::Loom { preemption_bound: None })),
    );
    group(c, "checker_large_kswapd_8threads", "kswapd-stall/recheck-large-pct.toml", None);
    group(c, "checker_large_compaction_7threads", "compaction/fatal-fix-pct-large.toml", None);
}

criterion_group!(benches, throughput, stateful);
criterion_main!(benches);
