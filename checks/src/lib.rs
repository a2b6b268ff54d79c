//! # mmcheck
//!
//! The checker side of mmcheck: engines (loom, shuttle), the recorder ghost, invariant
//! monitors, scenario files, reports. The protocols themselves are in the `mmmodel` crate.

/// The stateful engine's snapshots keep an execution's heap in a per-thread arena
/// (`mmmodel::platform::stateful::arena`); elsewhere this is the system allocator.
#[global_allocator]
static GLOBAL: mmmodel::platform::stateful::arena::ArenaAlloc = mmmodel::platform::stateful::arena::ArenaAlloc;

pub mod check;
pub mod engine;
pub mod files;
pub mod html;
pub mod litmus;
pub mod matrix;
pub mod monitor;
pub mod recorder;
pub mod registry;
pub mod runtime;
pub mod scenario;
pub mod selftest;
pub mod spec;
pub mod term;
pub mod token;
pub mod trace;
