//! What one check runs: a model configuration (which protocol, variant, mutation, threads and
//! parameters) with the checker's bounds, independent of the engine that explores it.

use std::sync::Arc;

use mmmodel::mutation::{ModelKind, Mutation};
use mmmodel::platform::Platform;
use mmmodel::compaction;
use mmmodel::reclaim;

use crate::recorder::{Bounds, Recorder};

/// A model configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    KswapdStall(reclaim::Config),
    Compaction(compaction::Config),
}

/// The state a run ends in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Final {
    KswapdStall(reclaim::FinalState),
    Compaction(compaction::FinalState),
}

impl ModelSpec {
    pub fn kind(&self) -> ModelKind {
        match self {
            ModelSpec::KswapdStall(_) => ModelKind::KswapdStall,
            ModelSpec::Compaction(_) => ModelKind::Compaction,
        }
    }
    pub fn variant_name(&self) -> &'static str {
        match self {
            ModelSpec::KswapdStall(c) => c.variant.name(),
            ModelSpec::Compaction(c) => c.variant.name(),
        }
    }
    pub fn mutation(&self) -> Option<Mutation> {
        match self {
            ModelSpec::KswapdStall(c) => c.mutation,
            ModelSpec::Compaction(c) => c.mutation,
        }
    }
    /// Thread names, by pid.
    pub fn comms(&self) -> Vec<String> {
        match self {
            ModelSpec::KswapdStall(c) => c.roles.iter().map(|r| r.comm()).collect(),
            ModelSpec::Compaction(c) => c.roles.iter().map(|r| r.comm()).collect(),
        }
    }
    pub fn tasks(&self) -> usize {
        self.comms().len()
    }
    /// Run one execution on platform `P` with recorder `rec`.
    pub fn run<P: Platform<Ghost = Recorder>>(&self, rec: Arc<Recorder>) -> Final {
        match self {
            ModelSpec::KswapdStall(c) => Final::KswapdStall(reclaim::run::<P>(c, rec)),
            ModelSpec::Compaction(c) => Final::Compaction(compaction::run::<P>(c, rec)),
        }
    }
}

/// A model configuration plus what the checker looks for.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub model: ModelSpec,
    pub bounds: Bounds,
    /// The invariants checked (ids); all of the model's by default.
    pub invariants: Vec<&'static str>,
    /// The invariant whose violation the scenario expects, if any: the search keeps looking
    /// for the shortest violation of this one.
    pub target: Option<&'static str>,
}

impl RunSpec {
    pub fn new(model: ModelSpec) -> Self {
        let invariants = crate::monitor::invariants(model.kind()).iter().map(|i| i.id).collect();
        RunSpec { model, bounds: Bounds::default(), invariants, target: None }
    }
}
