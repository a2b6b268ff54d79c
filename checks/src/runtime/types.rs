//! What the runtime mode's files share: how to run ([`RunConfig`]), what a run gives
//! ([`RunResult`], its [`Sample`]s) and why it stops ([`RunError`]). Re-exported at
//! `mmcheck::runtime`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::registry::AnyModel;

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
#[derive(Clone)]
pub struct RunResult {
    pub name: String,
    pub label: String,
    pub model: &'static dyn AnyModel,
    pub samples: Vec<Sample>,
    /// Invariant → iterations in which its monitor reported a violation.
    pub violations: BTreeMap<&'static str, u64>,
    pub seconds: f64,
}

/// Why a run on real threads stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A scenario cannot run as asked (a scaled configuration the kernel cannot have, a
    /// `--delay` for a role kind no scenario has): the input is wrong.
    Config(String),
    /// The run's worker thread could not be started.
    Spawn(String),
    /// An iteration did not finish within the cap: what the watchdog saw.
    Hung(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(m) | RunError::Spawn(m) | RunError::Hung(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RunError {}
