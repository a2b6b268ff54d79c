//! `mmcheck`: check scenario files, print the verdict table, counterexamples and replay lines.
//!
//! This file defines the command line and dispatches; each subcommand is a file of `cli/`.

mod cli;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use mmcheck::registry::Registry;

use crate::cli::check::cmd_check;
use crate::cli::cluster::{self, ClusterArgs};
use crate::cli::matrix::cmd_matrix;
use crate::cli::output::HtmlOut;
use crate::cli::run::{cmd_run, RunArgs};
use crate::cli::selftest::cmd_selftest;

#[derive(Parser)]
#[command(
    name = "mmcheck",
    version,
    about = "Model-check Linux mm synchronisation protocols (kswapd tree_lock stall, compaction contention, reclaim throttling)"
)]
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
        /// The wide table: every column on one line (expected verdict, executions, states,
        /// seconds) and the coverage counts on one line, whatever their length. The default
        /// table fits 120 columns.
        #[arg(long)]
        wide: bool,
        /// Run with this engine instead of the scenario's: loom, shuttle-pct, shuttle-random,
        /// shuttle-dfs, stateful, or all (a cross-check: loom, both randomised shuttle
        /// schedulers and stateful must agree).
        #[arg(long, value_name = "ENGINE")]
        engine: Option<String>,
        /// Also run the online monitors on every execution and fail (verdict error) on the
        /// first one where they disagree with the trace monitors.
        #[arg(long)]
        check_online: bool,
        /// The stateful engine's search with no reduction (no symmetry, no partial-order reduction),
        /// whatever the scenario's `[explore] reduce` says.
        #[arg(long)]
        no_reduce: bool,
        /// The stateful engine's memory model, whatever the scenario's `[explore] memory` says: sc
        /// (sequential consistency) or lkmm (the Linux-kernel memory model, no load buffering;
        /// see docs/model.md, "The kernel's memory model").
        #[arg(long, value_name = "MODEL")]
        memory: Option<String>,
        /// The stateful engine's search on N worker threads sharing one visited table (default
        /// 1; see docs/model.md, "Many workers"). Verdicts do not depend on N, and state counts
        /// neither, but where a task yields in a safety check: one thread alone takes a yield by
        /// itself (docs/model.md, "Persistent sets").
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        workers: u16,
        #[command(flatten)]
        cluster: ClusterArgs,
        /// Also write one self-contained HTML page per violation and DIR/index.html (see
        /// docs/scenarios.md).
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
        /// Also write the swimlane drawing of the counterexample as SVG (one scenario file).
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    /// Run litmus tests in the kernel's C format (tools/memory-model/litmus-tests) on the
    /// stateful platform under the kernel's memory model, and compare each outcome (Always,
    /// Sometimes, Never) with the file's `Result:` line.
    Litmus {
        /// .litmus files or folders (searched recursively).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// One JSON object per test instead of the table.
        #[arg(long)]
        json: bool,
        /// The memory model: lkmm (default) or sc.
        #[arg(long, value_name = "MODEL", default_value = "lkmm")]
        memory: String,
    },
    /// For each model, invariants x variants: holds or violated, with the evidence, built by
    /// checking the shipped scenarios (default: scenarios/, without mutants/ and heavy/).
    Matrix {
        /// Only this model (kswapd-stall, compaction or reclaim-throttle).
        #[arg(long)]
        model: Option<String>,
        /// Scenario files or folders to build the matrix from.
        paths: Vec<PathBuf>,
        /// One JSON object per matrix instead of the tables.
        #[arg(long)]
        json: bool,
        /// Also write the matrices, every scenario and a page per violation as HTML into DIR.
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
        /// Run every stateful exploration under this memory model (sc or lkmm), whatever the
        /// file says; loom and shuttle keep theirs. Each cell names the memory model of its
        /// evidence.
        #[arg(long, value_name = "MODEL")]
        memory: Option<String>,
        /// The wide table: each cell with its evidence (executions, engine, memory model)
        /// instead of the verdict alone. The default table fits 120 columns.
        #[arg(long)]
        wide: bool,
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
    let filter = std::env::var("RUST_LOG")
        .ok()
        .map(|f| log_filter(&f))
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok());
    let filter = filter.unwrap_or_else(|| tracing_subscriber::EnvFilter::new(log_filter("warn")));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()))
        .without_time()
        .init();
    let cli = Cli::parse();
    let reg = Registry::default();
    let done = match cli.cmd {
        Cmd::Check {
            paths,
            json,
            replay,
            verbose,
            traces,
            wide,
            engine,
            check_online,
            no_reduce,
            memory,
            workers,
            cluster,
            html,
            svg,
        } => {
            let out = HtmlOut { html, svg, verbose };
            match cluster::start(&cluster, workers, replay.is_some()) {
                Err(e) => Err(e),
                Ok(c) => {
                    let done = cmd_check(
                        &reg,
                        paths,
                        json,
                        replay,
                        verbose,
                        (traces, wide),
                        engine,
                        (check_online, no_reduce, memory, workers, c.as_ref().map(|c| Arc::clone(&c.cluster))),
                        &out,
                    );
                    match c {
                        Some(c) => c.finish(done),
                        None => done,
                    }
                }
            }
        }
        Cmd::Matrix { model, paths, json, html, memory, wide } => {
            cmd_matrix(&reg, model, paths, (json, wide), memory, &HtmlOut { html, svg: None, verbose: false })
        }
        Cmd::Litmus { paths, json, memory } => cli::litmus::cmd_litmus(paths, json, &memory),
        Cmd::Selftest { list, dir, json } => cmd_selftest(&reg, list, dir, json),
        Cmd::Run { file, args, json } => cmd_run(&reg, vec![file], Vec::new(), args, json, false),
        Cmd::Compare { files, variants, args } => cmd_run(&reg, files, variants, args, false, true),
    };
    match done {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            e.report();
            e.exit_code()
        }
    }
}

/// The checkers' own crates (each group: the names a filter may use for it, and its
/// directives), kept at `warn` unless the user's filter names them: loom logs every
/// execution's threads at `info`, thousands of lines per scenario.
const CHECKER_LOGS: &[(&[&str], &str)] = &[
    (&["loom"], "loom=warn"),
    (&["shuttle", "shuttle_engine"], "shuttle=warn,shuttle_engine=warn"),
    (&["generator"], "generator=off"),
];

/// The user's `RUST_LOG` filter, with the directives of each of [`CHECKER_LOGS`] that no
/// directive of it names (`RUST_LOG=info` shows mmcheck's lines, not loom's; `info,loom=debug`
/// shows loom's too).
fn log_filter(user: &str) -> String {
    let targets: Vec<&str> = user
        .split(',')
        .map(|d| d.trim().split(['=', '[']).next().unwrap_or("").trim())
        .filter(|t| !t.is_empty())
        .collect();
    let names =
        |name: &str| targets.iter().any(|t| *t == name || t.strip_prefix(name).is_some_and(|r| r.starts_with("::")));
    let mut out: Vec<&str> = vec![user.trim()];
    out.extend(CHECKER_LOGS.iter().filter(|(aliases, _)| !aliases.iter().any(|a| names(a))).map(|(_, d)| *d));
    out.retain(|d| !d.is_empty());
    out.join(",")
}
