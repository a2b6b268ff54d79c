//! Engines: explore a [`Spec`] with loom (exhaustive DPOR, optional preemption bound),
//! shuttle (PCT, random, DFS) or the stateful engine, collecting the verdict, the shortest
//! counterexample, the coverage of protocol events, and the numbers (executions, seconds).
//!
//! This file only dispatches. The vocabulary every engine and report shares is in
//! [`types`] (re-exported here), what loom and shuttle share in `collect.rs`.

mod collect;
pub mod loom;
mod names;
pub mod shuttle;
pub mod stateful;
pub mod types;

pub use self::collect::install_quiet_panic_hook;
pub use self::types::*;
use crate::monitor::Checked;
use crate::spec::{AnySpec, Spec};

/// Exploring a spec whose model is known only at run time (`Arc<dyn AnySpec>`): the model's
/// registry entry picks the typed [`explore`]. The engines depend on the spec, never the
/// other way round.
pub trait Explore {
    /// Run it under `engine`.
    fn explore(&self, engine: Engine, opts: &Options) -> Outcome;
}

impl Explore for dyn AnySpec {
    fn explore(&self, engine: Engine, opts: &Options) -> Outcome {
        self.model().explore(self, engine, opts)
    }
}

/// Run `spec` under `engine`.
pub fn explore<M: Checked>(spec: &Spec<M>, engine: Engine, opts: &Options) -> Outcome {
    match engine {
        Engine::Loom { preemption_bound } => loom::explore(spec, preemption_bound, opts, engine),
        Engine::Stateful { .. } => stateful::explore(spec, engine, opts),
        _ => shuttle::explore(spec, engine, opts),
    }
}
