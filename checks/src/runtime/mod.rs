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

mod counters;
mod runner;
mod svg;
mod table;
mod types;

pub use self::counters::{counter_names, ratio, stats};
pub use self::runner::{run, run_interleaved};
pub use self::svg::svg_chart;
pub use self::table::compare_table;
pub use self::types::{RunConfig, RunError, RunResult, Sample};
