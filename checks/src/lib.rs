//! # mmcheck
//!
//! The checker side of mmcheck: engines (loom, shuttle), the recorder ghost, invariant
//! monitors, scenario files, reports. The protocols themselves are in the `mmmodel` crate.

pub mod check;
pub mod engine;
pub mod files;
pub mod html;
pub mod matrix;
pub mod monitor;
pub mod recorder;
pub mod registry;
pub mod runtime;
pub mod scenario;
pub mod selftest;
pub mod spec;
pub mod term;
pub mod trace;
