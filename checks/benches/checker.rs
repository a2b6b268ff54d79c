//! Checker throughput: executions per second of each engine on shipped scenarios (the time
//! of a fixed amount of exploration; executions/s = executions / time).
//!
//! Run: `cargo bench -p mmcheck --bench checker`. The executions each engine needs to find
//! each known violation are reported by `mmcheck check --engine all --json` instead (field
//! `engines[].first_violation`), see docs/performance.md.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use mmcheck::engine::{explore, Engine, Options};
use mmcheck::scenario;

fn load(rel: &str) -> mmcheck::scenario::Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(rel);
    scenario::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn throughput(c: &mut Criterion) {
    // A complete loom exploration (pass scenario: no early stop) and fixed shuttle budgets.
    let sc = load("kswapd-stall/recheck-2kswapd-writer.toml");
    let mut g = c.benchmark_group("checker_recheck_2kswapd_writer");
    g.sample_size(10);
    let loom = Engine::Loom { preemption_bound: Some(3) };
    let n_loom = explore(&sc.spec, loom, &Options::default()).executions;
    g.throughput(Throughput::Elements(n_loom));
    g.bench_function("loom_pb3", |b| b.iter(|| explore(&sc.spec, loom, &Options::default())));
    for (name, e) in [
        ("shuttle_pct", Engine::ShuttlePct { iterations: 2000, depth: 3, seed: 1 }),
        ("shuttle_random", Engine::ShuttleRandom { iterations: 2000, seed: 1 }),
        ("shuttle_dfs", Engine::ShuttleDfs { iterations: 2000 }),
    ] {
        g.throughput(Throughput::Elements(2000));
        g.bench_function(name, |b| b.iter(|| explore(&sc.spec, e, &Options::default())));
    }
    g.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
