//! The binary's parts: one file per subcommand (`check`, `litmus`, `matrix`, `selftest`,
//! `run` and `compare`), the cluster flags of `check`, and what they share: the scenario files a command
//! reads (`inputs`) and what it writes and ends with (`output`). `main.rs` holds the command
//! line's definition and dispatches to them; no file here imports `main.rs` or this one.

pub mod check;
pub mod cluster;
pub mod inputs;
pub mod litmus;
pub mod matrix;
pub mod output;
pub mod run;
pub mod selftest;
