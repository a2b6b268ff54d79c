//! `mmcheck run` and `mmcheck compare`: scenarios on real threads, and their counters.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use mmcheck::registry::Registry;
use mmcheck::scenario::Scenario;
use mmcheck::term::{escape_control, show_path};

use super::inputs::load_all;
use super::output::{emit, emit_raw, CliError, Done};

/// The options of `run` and `compare`.
#[derive(clap::Args)]
pub struct RunArgs {
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

pub fn cmd_run(
    reg: &Registry,
    files: Vec<PathBuf>,
    variants: Vec<String>,
    a: RunArgs,
    json: bool,
    compare: bool,
) -> Done {
    let RunArgs { iterations, threads_scale, jiffy_us, work, hold_spins, delay, seed, iteration_cap, svg } = a;
    let cmd = if compare { "compare" } else { "run" };
    if files.is_empty() {
        return Err(CliError::Usage(format!("{cmd}: name at least one scenario file")));
    }
    // Every bad flag, one message each.
    let mut bad = Vec::new();
    let mut range = |flag: &str, value: String, ok: bool, range: &str| {
        if !ok {
            bad.push(format!("{flag} {value}: out of range {range}"));
        }
    };
    range("--iterations", iterations.to_string(), (1..=10_000_000).contains(&iterations), "1..=10000000");
    range("--threads-scale", threads_scale.to_string(), (1..=8).contains(&threads_scale), "1..=8");
    range("--jiffy-us", jiffy_us.to_string(), (1..=1_000_000).contains(&jiffy_us), "1..=1000000");
    range("--work", work.to_string(), (1..=100_000).contains(&work), "1..=100000");
    range("--iteration-cap", iteration_cap.to_string(), (0.001..=86_400.0).contains(&iteration_cap), "0.001..=86400");
    let mut delays: Vec<(String, std::time::Duration)> = Vec::new();
    for d in &delay {
        let parsed = d.split_once('=').and_then(|(k, v)| {
            let k = k.trim();
            let us = v.trim().parse::<u64>().ok().filter(|us| *us <= 1_000_000)?;
            (!k.is_empty()).then(|| (k.to_string(), us))
        });
        match parsed {
            Some((k, _)) if delays.iter().any(|(seen, _)| *seen == k) => bad.push(format!(
                "--delay {}: kind \"{}\" is given twice; give each kind one delay",
                escape_control(d),
                escape_control(&k)
            )),
            Some((k, us)) => delays.push((k, std::time::Duration::from_micros(us))),
            None => bad.push(format!(
                "--delay {}: not KIND=US (a role kind and microseconds, at most 1000000), e.g. bdi=300",
                escape_control(d)
            )),
        }
    }
    if !bad.is_empty() {
        return Err(CliError::Flags(bad));
    }
    for f in &files {
        if f.is_dir() {
            return Err(CliError::Usage(format!(
                "{}: a folder; {cmd} takes scenario files: name a file in it (mmcheck check takes folders)",
                show_path(f)
            )));
        }
    }
    for (i, a) in files.iter().enumerate() {
        if let Some(b) = files[..i].iter().find(|b| mmcheck::files::same_file(a, b)) {
            return Err(CliError::Usage(format!(
                "{cmd}: {} and {} are the same file: a file compared with itself shows only noise; name different \
                 files, or one file with --variants A,B",
                show_path(b),
                show_path(a)
            )));
        }
    }
    let mut scenarios = Vec::new();
    for f in &files {
        scenarios.extend(load_all(reg, std::slice::from_ref(f))?);
    }
    if let Some(other) = scenarios.iter().find(|s| s.model().name() != scenarios[0].model().name()) {
        return Err(CliError::Usage(format!(
            "{cmd}: {} is a {} scenario and {} a {} scenario: the two models share no counters; compare scenarios of \
             one model",
            show_path(&scenarios[0].file),
            scenarios[0].model().name(),
            show_path(&other.file),
            other.model().name()
        )));
    }
    // A delay for a kind of thread a file does not have would do nothing there.
    let mut lacking = Vec::new();
    for (d, (kind, _)) in delay.iter().zip(&delays) {
        for sc in &scenarios {
            let mut kinds = sc.spec.role_kinds();
            kinds.dedup();
            let mut uniq: Vec<&str> = Vec::new();
            for k in kinds {
                if !uniq.contains(&k) {
                    uniq.push(k);
                }
            }
            let msg = format!(
                "--delay {}: {} has no thread of kind \"{}\" (its kinds: {})",
                escape_control(d),
                show_path(&sc.file),
                escape_control(kind),
                uniq.join(", ")
            );
            if !uniq.contains(&kind.as_str()) && !lacking.contains(&msg) {
                lacking.push(msg);
            }
        }
    }
    if !lacking.is_empty() {
        return Err(CliError::Flags(lacking));
    }
    if !variants.is_empty() {
        if scenarios.len() != 1 {
            return Err(CliError::Usage("--variants takes exactly one scenario file".into()));
        }
        let base = scenarios.remove(0);
        for v in &variants {
            let spec = base.spec.with_variant(v).map_err(|e| {
                CliError::Usage(format!("{}: --variants: {}", show_path(&base.file), escape_control(&e)))
            })?;
            scenarios.push(Scenario { spec, ..base.clone() });
        }
    }
    let bar = (!json && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(iterations * scenarios.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} iterations, {elapsed} (eta {eta})")
                .expect("valid template"),
        );
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
        progress: bar
            .clone()
            .map(|pb| Arc::new(move |_i: u64, _n: u64| pb.inc(1)) as Arc<dyn Fn(u64, u64) + Send + Sync>),
    };
    let results = mmcheck::runtime::run_interleaved(&scenarios, &cfg);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let results = results.map_err(CliError::Run)?;
    let settings = format!(
        "{iterations} iterations on real threads, jiffy {jiffy_us} us, --work {work}, --hold-spins {hold_spins}, --threads-scale {threads_scale}{}",
        if delay.is_empty() { String::new() } else { format!(", --delay {} (seed {seed})", escape_control(&delay.join(","))) }
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
            emit(v)?;
        }
    } else {
        if compare {
            let names: Vec<String> = results.iter().map(|r| escape_control(&r.name).into_owned()).collect();
            let mut uniq = names.clone();
            uniq.dedup();
            emit(format_args!("{}: {settings}", uniq.join(" vs ")))?;
        } else {
            emit(format_args!(
                "{} ({}): {settings}, {:.2} s",
                escape_control(&results[0].name),
                results[0].label,
                results[0].seconds
            ))?;
        }
        emit_raw(&mmcheck::runtime::compare_table(&results))?;
    }
    if let Some(path) = svg {
        let title =
            format!("{}\n{settings}", results.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(" vs "));
        std::fs::write(&path, mmcheck::runtime::svg_chart(&results, &title))
            .map_err(|e| CliError::Output(format!("--svg {}: {e}", show_path(&path))))?;
        if !json {
            emit(format_args!("chart: {}", show_path(&path)))?;
        }
    }
    Ok(true)
}
