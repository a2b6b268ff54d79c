use mmcheck::engine::{explore, Engine, Options};
use mmcheck::spec::{ModelSpec, RunSpec};
use mmmodel::kernel::sched::TimerModel;
use mmmodel::reclaim::{Config, Role, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = Variant::from_name(&args[1]).unwrap();
    let timer = if args[2] == "never" { TimerModel::Never } else { TimerModel::AnyTime };
    let eng = &args[3];
    let mut roles = vec![
        Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true },
        Role::Kswapd { node: 1, batches: 1, pages: 1, balances: true },
        Role::Writer { holds: 1 },
    ];
    for extra in &args[4..] {
        match extra.as_str() {
            "alloc" => roles.push(Role::Allocator { node: 0, attempts: 1 }),
            "direct" => roles.push(Role::DirectReclaim { node: 1, batches: 1, pages: 1 }),
            "bdi" => roles.push(Role::Bdi { congested_at_start: true }),
            "nobal" => { roles[0] = Role::Kswapd { node: 0, batches: 1, pages: 1, balances: false } }
            "k3" => roles.push(Role::Kswapd { node: 2, batches: 1, pages: 1, balances: true }),
            _ => panic!("{extra}"),
        }
    }
    let spec = RunSpec::new(ModelSpec::KswapdStall(Config { variant, mutation: None, roles, timer }));
    let engine = match eng.as_str() {
        "loom" => Engine::Loom { preemption_bound: None },
        "loom2" => Engine::Loom { preemption_bound: Some(2) },
        "loom3" => Engine::Loom { preemption_bound: Some(3) },
        s if s.starts_with("pb") => Engine::Loom { preemption_bound: Some(s[2..].parse().unwrap()) },
        "pct" => Engine::ShuttlePct { iterations: 10000, depth: 3, seed: 1 },
        _ => Engine::ShuttleRandom { iterations: 10000, seed: 1 },
    };
    let mut opts = Options::default();
    opts.max_duration = Some(std::time::Duration::from_secs(std::env::var("X_SECS").map(|s| s.parse().unwrap()).unwrap_or(120)));
    let o = explore(&spec, engine, &opts);
    println!("executions {} seconds {:.2} complete {} violated {:?} error {:?}", o.executions, o.seconds, o.complete, o.violated, o.error);
    println!("coverage {:?}", o.coverage);
    if let Some(f) = &o.found {
        println!("found at {} ({} events):", f.index, f.events.len());
        for (p, e) in &f.events { println!("  T{p}: {e}"); }
        for v in &f.violations { println!("  {}: {}", v.invariant, v.message); }
    }
}
