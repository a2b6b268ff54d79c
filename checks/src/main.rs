//! `mmcheck`: check scenario files, print the verdict table, counterexamples and replay lines.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use mmcheck::check::{check, Report, RunOptions, Verdict};
use mmcheck::scenario::{self, Scenario, ScenarioError};
use mmcheck::trace::ReplayToken;
use mmmodel::mutation::{ModelKind, Mutation};

#[derive(Parser)]
#[command(name = "mmcheck", version, about = "Model-check Linux mm synchronisation protocols (kswapd tree_lock stall, compaction contention)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check scenario files (default: scenarios/) and print one row per scenario.
    Check {
        /// Scenario files or folders (searched recursively for *.toml).
        paths: Vec<PathBuf>,
        /// One JSON object per scenario instead of the table.
        #[arg(long)]
        json: bool,
        /// Reproduce the counterexample a previous run printed (one scenario file).
        #[arg(long, value_name = "TOKEN")]
        replay: Option<String>,
        /// Show every event in race diagrams (wait-queue locks too).
        #[arg(long)]
        verbose: bool,
        /// Print counterexamples of matching violation scenarios too (not only mismatches).
        #[arg(long)]
        traces: bool,
        /// Run with this engine instead of the scenario's: loom, shuttle-pct, shuttle-random,
        /// shuttle-dfs, or all (a cross-check: loom and both shuttle schedulers must agree).
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
    },
    /// For each model, invariants x variants: holds or violated, with the evidence, built by
    /// checking the shipped scenarios (default: scenarios/, without mutants/ and heavy/).
    Matrix {
        /// Only this model (kswapd-stall or compaction).
        #[arg(long)]
        model: Option<String>,
        /// Scenario files or folders to build the matrix from.
        paths: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario on real threads (the std platform, real timeouts), many iterations, and
    /// print the protocol's counters (see docs/performance.md for settings that make the
    /// contended paths happen on a small machine).
    Run {
        file: PathBuf,
        #[command(flatten)]
        args: RunArgs,
        /// One JSON object with every counter's amean/min/max instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Run several scenarios (or one scenario under several variants) on real threads,
    /// iterations interleaved, and print a before/after table in the style of the seeds'
    /// mmtests comparisons (Amean/Min/Max, % change of the mean against the first column).
    Compare {
        files: Vec<PathBuf>,
        /// Run the one FILE under each of these variants (comma-separated).
        #[arg(long, value_delimiter = ',')]
        variants: Vec<String>,
        #[command(flatten)]
        args: RunArgs,
    },
    /// Run every seeded mutant (scenarios/mutants/) and show which check catches it; exits 1 if
    /// any survives.
    Selftest {
        /// Only list the mutants.
        #[arg(long)]
        list: bool,
        /// The folder of mutant scenarios (default: scenarios/mutants).
        #[arg(long)]
        dir: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// Die quietly when stdout is a closed pipe (`mmcheck check | head`), as Unix tools do,
/// instead of panicking on the failed write: restore SIGPIPE's default action, which Rust's
/// runtime sets to "ignore".
#[cfg(unix)]
fn default_sigpipe() {
    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: signal(2) with SIG_DFL for SIGPIPE, before any thread is started.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,generator=off"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).without_time().init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Check { paths, json, replay, verbose, traces, engine } => cmd_check(paths, json, replay, verbose, traces, engine),
        Cmd::Matrix { model, paths, json } => cmd_matrix(model, paths, json),
        Cmd::Selftest { list, dir, json } => cmd_selftest(list, dir, json),
        Cmd::Run { file, args, json } => cmd_run(vec![file], Vec::new(), args, json, false),
        Cmd::Compare { files, variants, args } => cmd_run(files, variants, args, false, true),
    }
}

/// `scenarios/` in the current directory, or the repository's when run from elsewhere.
fn scenarios_root() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
    }
}

/// The default scenario set: everything under scenarios/ except the opt-in heavy runs.
fn default_scenario_paths() -> Vec<PathBuf> {
    let root = scenarios_root();
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.file_name().is_some_and(|n| n != "heavy")).collect())
        .unwrap_or_else(|_| vec![root.clone()]);
    v.sort();
    v
}

/// Parse every scenario; on any error print them all and return `Err(exit code 2)`.
fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, ExitCode> {
    let mut errors: Vec<ScenarioError> = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        match scenario::collect_files(p) {
            Ok(files) => {
                if files.is_empty() {
                    eprintln!("mmcheck: {}: no *.toml scenario files", p.display());
                    return Err(ExitCode::from(2));
                }
                for f in files {
                    match scenario::load(&f) {
                        Ok(s) => out.push(s),
                        Err(e) => errors.push(e),
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("mmcheck: {e}");
        }
        return Err(ExitCode::from(2));
    }
    Ok(out)
}

fn progress_bar(enabled: bool) -> (Option<indicatif::ProgressBar>, Option<Arc<dyn Fn(&str, u64, f64) + Send + Sync>>) {
    if !enabled {
        return (None, None);
    }
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
    let pb2 = pb.clone();
    let f: Arc<dyn Fn(&str, u64, f64) + Send + Sync> = Arc::new(move |label: &str, n: u64, t: f64| {
        let rate = if t > 0.0 { n as f64 / t } else { 0.0 };
        pb2.set_message(format!("{label}: {n} executions, {t:.1} s, {rate:.0}/s"));
        pb2.tick();
    });
    (Some(pb), Some(f))
}

fn cmd_check(paths: Vec<PathBuf>, json: bool, replay: Option<String>, verbose: bool, traces: bool, engine: Option<String>) -> ExitCode {
    let paths = if paths.is_empty() { default_scenario_paths() } else { paths };
    let scenarios = match load_all(&paths) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut opts = RunOptions::default();
    if let Some(e) = &engine {
        let allowed = ["loom", "shuttle-pct", "shuttle-random", "shuttle-dfs", "all"];
        if !allowed.contains(&e.as_str()) {
            eprintln!("mmcheck: --engine: unknown engine \"{e}\"; expected one of: {}", allowed.join(", "));
            return ExitCode::from(2);
        }
    }
    if let Some(e) = &engine {
        for sc in &scenarios {
            for en in mmcheck::check::engines_named(sc, e) {
                if sc.spec.model.tasks() > en.max_threads() {
                    eprintln!(
                        "mmcheck: {}: --engine {e}: {} threads, but {} runs at most {}",
                        sc.file.display(),
                        sc.spec.model.tasks(),
                        en.name(),
                        en.max_threads()
                    );
                    return ExitCode::from(2);
                }
            }
        }
    }
    if let Some(tok) = &replay {
        if scenarios.len() != 1 {
            eprintln!("mmcheck: --replay takes exactly one scenario file ({} given)", scenarios.len());
            return ExitCode::from(2);
        }
        let Some(t) = ReplayToken::parse(tok) else {
            eprintln!("mmcheck: {}: --replay: \"{tok}\" is not a replay token (engine-index-fingerprint)", scenarios[0].file.display());
            return ExitCode::from(2);
        };
        let sc = &scenarios[0];
        if !sc.engines.iter().any(|e| t.fits(&sc.spec, *e)) {
            eprintln!(
                "mmcheck: {}: --replay: token {tok} does not fit this scenario (it was made for another scenario, engine or version)",
                sc.file.display()
            );
            return ExitCode::from(2);
        }
        opts.replay = Some(t);
    }
    let interactive = !json && std::io::stderr().is_terminal();
    let (bar, progress) = progress_bar(interactive);
    opts.progress = progress;

    let mut reports: Vec<Report> = Vec::new();
    if !json {
        println!("{}", table_header());
    }
    for sc in &scenarios {
        tracing::info!(scenario = %sc.name, file = %sc.file.display(), "checking");
        let mut opts = opts.clone();
        if let Some(e) = &engine {
            opts.engine_override = Some(mmcheck::check::engines_named(sc, e));
        }
        let r = check(sc, &opts);
        tracing::info!(scenario = %sc.name, verdict = %r.verdict.label(), executions = r.executions(), "checked");
        if let Some(b) = &bar {
            b.set_message(String::new());
        }
        if json {
            println!("{}", serde_json::to_string(&r.to_json()).expect("serialisable"));
        } else {
            let row = format!("{}\n{}", table_row(&r), coverage_line(&r));
            if let Some(b) = &bar {
                b.suspend(|| println!("{row}"));
            } else {
                println!("{row}");
            }
        }
        reports.push(r);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !json {
        for r in &reports {
            let show = opts.replay.is_some() || !r.matched || traces;
            if show {
                print_detail(r, verbose);
            }
        }
        let bad = reports.iter().filter(|r| !r.matched).count();
        println!("\n{} scenario(s), {} as expected, {} not", reports.len(), reports.len() - bad, bad);
    }
    if let Some(t) = &opts.replay {
        // A replay succeeds when it reproduces a counterexample.
        let r = &reports[0];
        let found = r.runs.first().and_then(|run| run.outcome.found.as_ref());
        return match found {
            None => {
                eprintln!(
                    "mmcheck: {}: --replay: the exploration has only {} executions, no execution {}",
                    r.scenario.file.display(),
                    r.executions(),
                    t.index
                );
                ExitCode::from(2)
            }
            Some(f) if f.violations.is_empty() => {
                println!("execution {} violates no invariant", t.index);
                ExitCode::from(1)
            }
            Some(_) => ExitCode::SUCCESS,
        };
    }
    if reports.iter().all(|r| r.matched) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn table_header() -> String {
    format!(
        "{:<40} {:<12} {:<22} {:<14} {:>11} {:>8}  {:<30} {:<30} {}",
        "scenario", "model", "variant", "engine", "executions", "seconds", "verdict", "expected", "ok?"
    )
}

fn table_row(r: &Report) -> String {
    let sc = &r.scenario;
    let variant = match sc.spec.model.mutation() {
        Some(m) => format!("{}+{}", sc.spec.model.variant_name(), m.name()),
        None => sc.spec.model.variant_name().to_string(),
    };
    let engine = if r.runs.len() > 1 { "all".to_string() } else { r.engine_label().split('(').next().unwrap_or("").to_string() };
    format!(
        "{:<40} {:<12} {:<22} {:<14} {:>11} {:>8.2}  {:<30} {:<30} {}",
        sc.name,
        sc.model().name(),
        variant,
        engine,
        r.executions(),
        r.seconds(),
        r.verdict.label(),
        r.expected_label(),
        if r.matched { "ok" } else { "MISMATCH" }
    )
}

/// The compact coverage line under each row: the model's coverage events, in order.
fn coverage_line(r: &Report) -> String {
    let cov = r.coverage();
    let names = mmcheck::monitor::coverage_names(r.scenario.model());
    let parts: Vec<String> = names.iter().map(|n| format!("{n}={}", cov.get(n).copied().unwrap_or(0))).collect();
    format!("    coverage: {}", parts.join(" "))
}

fn print_detail(r: &Report, verbose: bool) {
    println!();
    match &r.verdict {
        Verdict::Vacuous(missing) => println!(
            "{}: vacuous pass: never reached {} in {} executions",
            r.scenario.name,
            missing.join(", "),
            r.executions()
        ),
        Verdict::Disagreement(d) => println!("{}: engines disagree: {d}", r.scenario.name),
        Verdict::Error(e) => println!("{}: engine error: {e}", r.scenario.name),
        Verdict::Incomplete => println!("{}: stopped at the time limit before the exploration was complete", r.scenario.name),
        _ => {}
    }
    if let Some(ce) = r.counterexample(verbose) {
        print!("{ce}");
    } else if r.verdict == Verdict::Pass {
        println!("{}: pass, {} executions; expected {}", r.scenario.name, r.executions(), r.expected_label());
    }
}

fn model_variants(model: ModelKind) -> Vec<&'static str> {
    match model {
        ModelKind::KswapdStall => mmmodel::reclaim::Variant::ALL.iter().map(|v| v.name()).collect(),
        ModelKind::Compaction => mmmodel::compaction::Variant::ALL.iter().map(|v| v.name()).collect(),
    }
}

fn cmd_matrix(model: Option<String>, paths: Vec<PathBuf>, json: bool) -> ExitCode {
    let models: Vec<ModelKind> = match &model {
        None => ModelKind::ALL.to_vec(),
        Some(m) => match ModelKind::from_name(m) {
            Some(k) => vec![k],
            None => {
                eprintln!("mmcheck: --model: unknown model \"{m}\" (kswapd-stall, compaction)");
                return ExitCode::from(2);
            }
        },
    };
    let paths = if paths.is_empty() {
        default_scenario_paths().into_iter().filter(|p| p.file_name().is_some_and(|n| n != "mutants")).collect()
    } else {
        paths
    };
    let scenarios = match load_all(&paths) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (bar, progress) = progress_bar(!json && std::io::stderr().is_terminal());
    let opts = RunOptions { progress, ..RunOptions::default() };
    let reports: Vec<Report> = scenarios
        .iter()
        .filter(|s| models.contains(&s.model()) && s.spec.model.mutation().is_none())
        .map(|s| check(s, &opts))
        .collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for m in models {
        let mx = mmcheck::matrix::build(m, model_variants(m), &reports);
        if json {
            println!("{}", serde_json::to_string(&mx).expect("serialisable"));
        } else {
            println!("{}", mmcheck::matrix::render(&mx));
        }
    }
    if reports.iter().all(|r| r.matched) {
        ExitCode::SUCCESS
    } else {
        eprintln!("mmcheck: some scenarios did not get their expected verdict (run mmcheck check for details)");
        ExitCode::from(1)
    }
}

fn cmd_selftest(list: bool, dir: Option<PathBuf>, json: bool) -> ExitCode {
    if list {
        println!("{:<32} {:<13} {:<22} {}", "mutant", "model", "caught by", "what it changes");
        for m in Mutation::ALL {
            println!("{:<32} {:<13} {:<22} {}", m.name(), m.model().name(), m.targets(), m.description());
        }
        return ExitCode::SUCCESS;
    }
    let dir = dir.unwrap_or_else(|| scenarios_root().join("mutants"));
    let scenarios = match mmcheck::selftest::load_mutant_scenarios(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mmcheck: {e}");
            return ExitCode::from(2);
        }
    };
    let (bar, progress) = progress_bar(!json && std::io::stderr().is_terminal());
    let opts = RunOptions { progress, ..RunOptions::default() };
    let results = mmcheck::selftest::run(&scenarios, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if json {
        for r in &results {
            let v = serde_json::json!({
                "mutant": r.mutation.name(), "model": r.mutation.model().name(), "targets": r.mutation.targets(),
                "caught_by": r.caught_by, "executions_to_catch": r.executions_to_catch, "engine": r.engine,
                "scenario": r.scenario, "killed": r.killed,
            });
            println!("{v}");
        }
    } else {
        println!("{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {}", "mutant", "model", "targets", "caught by", "execs", "engine", "status");
        for r in &results {
            println!(
                "{:<32} {:<13} {:<22} {:<22} {:>10}  {:<10} {}",
                r.mutation.name(),
                r.mutation.model().name(),
                r.mutation.targets(),
                r.caught_by.unwrap_or("-"),
                r.executions_to_catch.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                r.engine.as_deref().map(|e| e.split('(').next().unwrap_or(e)).unwrap_or("-"),
                if r.killed { "killed" } else if r.scenario.is_none() { "SURVIVED (no scenario)" } else { "SURVIVED" }
            );
        }
        let alive = results.iter().filter(|r| !r.killed).count();
        println!("\n{} mutant(s), {} killed, {} survived", results.len(), results.len() - alive, alive);
    }
    if results.iter().all(|r| r.killed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The options of `run` and `compare`.
#[derive(clap::Args)]
struct RunArgs {
    #[arg(long, default_value_t = 200)]
    iterations: u64,
    /// Run each thread of the scenario K times over (kswapd-stall: on fresh nodes;
    /// compaction: killers and resched threads aim at their own copy of the compactor).
    #[arg(long, default_value_t = 1, value_name = "K")]
    threads_scale: usize,
    /// Length of a jiffy in microseconds (the kswapd stall is HZ/100 = 10 jiffies,
    /// wait_iff_congested HZ/10 = 100 jiffies).
    #[arg(long, default_value_t = 10, value_name = "US")]
    jiffy_us: u64,
    /// Multiply every thread's work (batches, holds, attempts) by this.
    #[arg(long, default_value_t = 1, value_name = "N")]
    work: u32,
    /// Spin-loop hints inside each of a writer's tree_lock holds (a longer critical section).
    #[arg(long, default_value_t = 0, value_name = "N")]
    hold_spins: u32,
    /// Start threads of role KIND a random time in [0, US] microseconds after the others
    /// (comma-separated; e.g. bdi=500 keeps the device congested a while, killer=1 lands
    /// SIGKILL in the middle of a compaction). The same draws for every compared column.
    #[arg(long, value_delimiter = ',', value_name = "KIND=US")]
    delay: Vec<String>,
    /// Seed of the start delays.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop with an error if one iteration runs longer than this many seconds.
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    iteration_cap: f64,
    /// Also write an SVG chart of every counter's per-iteration distribution per column.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
}

fn cmd_run(files: Vec<PathBuf>, variants: Vec<String>, a: RunArgs, json: bool, compare: bool) -> ExitCode {
    let RunArgs { iterations, threads_scale, jiffy_us, work, hold_spins, delay, seed, iteration_cap, svg } = a;
    if files.is_empty() {
        eprintln!("mmcheck: name at least one scenario file");
        return ExitCode::from(2);
    }
    if !(1..=10_000_000).contains(&iterations)
        || !(1..=8).contains(&threads_scale)
        || !(1..=1_000_000).contains(&jiffy_us)
        || !(1..=100_000).contains(&work)
        || !(0.001..=86_400.0).contains(&iteration_cap)
    {
        eprintln!(
            "mmcheck: out of range: --iterations 1..=10000000, --threads-scale 1..=8, --jiffy-us 1..=1000000, --work 1..=100000, --iteration-cap 0.001..=86400"
        );
        return ExitCode::from(2);
    }
    let mut delays = Vec::new();
    for d in &delay {
        let parsed = d.split_once('=').and_then(|(k, v)| v.trim().parse::<u64>().ok().filter(|us| *us <= 1_000_000).map(|us| (k.trim().to_string(), us)));
        match parsed {
            Some((k, us)) => delays.push((k, std::time::Duration::from_micros(us))),
            None => {
                eprintln!("mmcheck: --delay: \"{d}\" is not KIND=US (microseconds, at most 1000000), e.g. bdi=300");
                return ExitCode::from(2);
            }
        }
    }
    let mut scenarios = match load_all(&files) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if !variants.is_empty() {
        if scenarios.len() != 1 {
            eprintln!("mmcheck: --variants takes exactly one scenario file");
            return ExitCode::from(2);
        }
        let base = scenarios.remove(0);
        for v in &variants {
            match mmcheck::runtime::with_variant(&base.spec.model, v) {
                Ok(m) => {
                    let mut sc = base.clone();
                    sc.spec.model = m;
                    scenarios.push(sc);
                }
                Err(e) => {
                    eprintln!("mmcheck: {}: --variants: {e}", base.file.display());
                    return ExitCode::from(2);
                }
            }
        }
    }
    let bar = (!json && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(iterations * scenarios.len() as u64);
        pb.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} iterations, {elapsed} (eta {eta})").expect("valid template"));
        pb
    });
    let cfg = mmcheck::runtime::RunConfig {
        iterations,
        threads_scale,
        jiffy: std::time::Duration::from_micros(jiffy_us),
        work,
        hold_spins,
        delays,
        seed,
        iteration_cap: std::time::Duration::from_secs_f64(iteration_cap),
        progress: bar.clone().map(|pb| Arc::new(move |_i: u64, _n: u64| pb.inc(1)) as Arc<dyn Fn(u64, u64) + Send + Sync>),
    };
    let results = mmcheck::runtime::run_interleaved(&scenarios, &cfg);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mmcheck: {e}");
            return ExitCode::from(if e.contains("has not finished after") { 1 } else { 2 });
        }
    };
    let settings = format!(
        "{iterations} iterations on real threads, jiffy {jiffy_us} us, --work {work}, --hold-spins {hold_spins}, --threads-scale {threads_scale}{}",
        if delay.is_empty() { String::new() } else { format!(", --delay {} (seed {seed})", delay.join(",")) }
    );
    if json {
        for r in &results {
            let mut counters = serde_json::Map::new();
            for name in mmcheck::runtime::counter_names(std::slice::from_ref(r)) {
                let (mean, min, max) = mmcheck::runtime::stats(&r.samples, &name);
                counters.insert(name, serde_json::json!({"amean": mean, "min": min, "max": max}));
            }
            let v = serde_json::json!({"name": r.name, "variant": r.label, "iterations": r.samples.len(), "seconds": r.seconds,
                "settings": settings, "violations": r.violations, "counters": counters});
            println!("{v}");
        }
    } else {
        if compare {
            let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
            let mut uniq = names.clone();
            uniq.dedup();
            println!("{}: {settings}", uniq.join(" vs "));
        } else {
            println!("{} ({}): {settings}, {:.2} s", results[0].name, results[0].label, results[0].seconds);
        }
        print!("{}", mmcheck::runtime::compare_table(&results));
    }
    if let Some(path) = svg {
        let title = format!("{}\n{settings}", results.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(" vs "));
        if let Err(e) = std::fs::write(&path, mmcheck::runtime::svg_chart(&results, &title)) {
            eprintln!("mmcheck: --svg {}: {e}", path.display());
            return ExitCode::from(2);
        }
        if !json {
            println!("chart: {}", path.display());
        }
    }
    ExitCode::SUCCESS
}
