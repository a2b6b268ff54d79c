//! What one check runs: a model configuration with the checker's bounds and the invariants
//! it checks ([`Spec`], typed by its model), and the same behind [`AnySpec`], the
//! object-safe face the rest of the checker (scenarios, reports, the runtime mode) uses
//! without knowing which model it is.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mmmodel::ghost::Pid;
use mmmodel::kernel::sched::Start;
use mmmodel::model::{run, Counters, Named, ProtoEvent, Seeded};
use mmmodel::platform::Std;

use mmmodel::model::{FieldError, Fields, RoleKind};

use crate::engine::types::{Engine, Options, Outcome};
use crate::monitor::{self, Checked, Exec};
use crate::recorder::{Bounds, Recorder};

/// An invariant, as reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantInfo {
    pub id: &'static str,
    pub statement: &'static str,
    pub exercised_by: Vec<&'static str>,
}

/// A seeded mutation, as reports name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationInfo {
    pub name: &'static str,
    pub model: &'static str,
    /// The invariant whose check must catch it.
    pub targets: &'static str,
    pub description: &'static str,
}

/// A scenario file's model part, checked for names by the scenario parser.
pub struct Parts {
    pub variant: String,
    pub mutation: Option<String>,
    /// (role kind, its keys), in file order.
    pub threads: Vec<(String, Fields)>,
    /// `[params]` without the checker's own keys.
    pub params: Fields,
    pub bounds: Bounds,
    /// Invariant ids (all of the model's if `None`).
    pub invariants: Option<Vec<String>>,
    pub target: Option<String>,
}

/// A model as the rest of the checker sees it: names and descriptions, and how to build a
/// [`Spec`] of it from a scenario file's parts.
pub trait AnyModel: Send + Sync {
    fn name(&self) -> &'static str;
    fn variants(&self) -> Vec<&'static str>;
    fn variant_description(&self, variant: &str) -> Option<&'static str>;
    fn invariants(&self) -> Vec<InvariantInfo>;
    /// The id of the model's `progress` invariant (the one the stateful engine decides
    /// exactly, by fair cycles, where the other engines use a step bound).
    fn progress(&self) -> &'static str;
    /// The coverage events, in documentation order (the vocabulary of `reaches`).
    fn coverage_names(&self) -> Vec<&'static str>;
    /// The coverage events that mean "the contended path was explored".
    fn contended_path(&self) -> Vec<&'static str>;
    fn mutations(&self) -> Vec<MutationInfo>;
    fn role_kinds(&self) -> &'static [RoleKind];
    /// Keys of `[params]` (without the checker's `step_bound`).
    fn params(&self) -> &'static [&'static str];
    /// Runtime counters always reported, and ratios compared.
    fn counters(&self) -> &'static [&'static str];
    fn ratios(&self) -> &'static [(&'static str, &'static str)];
    /// Build a spec. Names of variant, mutation, role kinds, invariants are already checked
    /// against this model's lists; keys and values are checked here. On error, every error
    /// found (each thread's and `[params]`'s keys are checked on their own), never none.
    fn build(&'static self, parts: Parts) -> Result<Arc<dyn AnySpec>, Vec<FieldError>>;
    /// Explore `spec`, one of this model's specs, with `engine` (the engines' entry for a spec
    /// whose model is known only here; see `crate::engine::Explore`).
    fn explore(&self, spec: &dyn AnySpec, engine: Engine, opts: &Options) -> Outcome;
}

/// A configuration of model `M` plus what the checker looks for.
pub struct Spec<M: Checked> {
    /// The registry entry of `M` (names, descriptions, parsing).
    pub model: &'static dyn AnyModel,
    pub cfg: M::Config,
    pub bounds: Bounds,
    /// The invariants checked; all of the model's by default.
    pub invariants: Vec<M::Invariant>,
    /// The invariant whose violation the scenario expects, if any: the search keeps looking
    /// for the shortest violation of this one.
    pub target: Option<M::Invariant>,
}

impl<M: Checked> Clone for Spec<M> {
    fn clone(&self) -> Self {
        Spec {
            model: self.model,
            cfg: self.cfg.clone(),
            bounds: self.bounds,
            invariants: self.invariants.clone(),
            target: self.target,
        }
    }
}

impl<M: Checked> Debug for Spec<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spec")
            .field("model", &M::NAME)
            .field("cfg", &self.cfg)
            .field("bounds", &self.bounds)
            .field("invariants", &self.invariants)
            .field("target", &self.target)
            .finish()
    }
}

impl<M: Checked> Spec<M> {
    pub fn new(model: &'static dyn AnyModel, cfg: M::Config) -> Self {
        let invariants = M::INVARIANTS.iter().map(|i| i.id).collect();
        Spec { model, cfg, bounds: Bounds::default(), invariants, target: None }
    }
    fn with_cfg(&self, cfg: M::Config) -> Arc<dyn AnySpec> {
        Arc::new(Spec::<M> { cfg, ..self.clone() })
    }
}

/// The recent events of an execution in flight (the runtime watchdog's report).
pub trait Watch: Send + Sync {
    fn last_events(&self, n: usize) -> Vec<(Pid, String)>;
}

impl<E: ProtoEvent> Watch for Recorder<E> {
    fn last_events(&self, n: usize) -> Vec<(Pid, String)> {
        let ev = self.events();
        ev[ev.len().saturating_sub(n)..].iter().map(|(p, e)| (*p, format!("{e:?}"))).collect()
    }
}

/// A [`Spec`] of any model.
pub trait AnySpec: Send + Sync + Debug {
    fn model(&self) -> &'static dyn AnyModel;
    fn variant(&self) -> &'static str;
    fn mutation(&self) -> Option<&'static str>;
    /// Thread names, by pid.
    fn comms(&self) -> Vec<String>;
    /// Role kinds, by pid.
    fn role_kinds(&self) -> Vec<&'static str>;
    fn tasks(&self) -> usize {
        self.comms().len()
    }
    fn bounds(&self) -> Bounds;
    /// The ids of the invariants checked.
    fn invariants(&self) -> Vec<&'static str>;
    fn target(&self) -> Option<&'static str>;
    /// Everything that decides an exploration, as text (for replay-token fingerprints).
    fn replay_text(&self) -> String;
    /// The same configuration under another variant of its model.
    fn with_variant(&self, name: &str) -> Result<Arc<dyn AnySpec>, String>;
    /// The same configuration checking only the invariants `names` (the target kept if it is
    /// one of them); an error names an invariant the model does not have.
    fn with_invariants(&self, names: &[&str]) -> Result<Arc<dyn AnySpec>, String>;
    /// The same configuration without its seeded mutation.
    fn without_mutation(&self) -> Arc<dyn AnySpec>;
    /// Whether the seeded mutation can run in this configuration.
    fn mutation_applies(&self) -> Result<(), String>;
    /// Whether an exploration that reached `coverage` exercised invariant `inv`.
    fn exercised(&self, inv: &str, coverage: &BTreeMap<&'static str, u64>) -> bool;
    /// Runtime mode: every thread run `k` times over, `work` times its work, `hold_spins`
    /// inside each hold, with real time of a `jiffy` per jiffy.
    fn for_real_threads(
        &self,
        k: usize,
        work: u32,
        hold_spins: u32,
        jiffy: Duration,
    ) -> Result<Arc<dyn AnySpec>, String>;
    /// Runtime mode: one iteration on real threads, each thread starting after its delay.
    /// `started` gets the iteration's recorder before the threads start. Returns the
    /// iteration's counters and the invariants it violated.
    fn run_real(&self, delays: &[Duration], started: &dyn Fn(Arc<dyn Watch>)) -> (Counters, Vec<&'static str>);
    fn as_any(&self) -> &dyn Any;
}

impl<M: Checked> AnySpec for Spec<M> {
    fn model(&self) -> &'static dyn AnyModel {
        self.model
    }
    fn variant(&self) -> &'static str {
        M::variant(&self.cfg).name()
    }
    fn mutation(&self) -> Option<&'static str> {
        M::mutation(&self.cfg).map(|m| m.name())
    }
    fn comms(&self) -> Vec<String> {
        M::roles(&self.cfg).iter().map(M::comm).collect()
    }
    fn role_kinds(&self) -> Vec<&'static str> {
        M::roles(&self.cfg).iter().map(M::role_kind).collect()
    }
    fn bounds(&self) -> Bounds {
        self.bounds
    }
    fn invariants(&self) -> Vec<&'static str> {
        self.invariants.iter().map(|i| i.name()).collect()
    }
    fn target(&self) -> Option<&'static str> {
        self.target.map(|t| t.name())
    }
    fn replay_text(&self) -> String {
        format!("{}|{:?}|{:?}|{:?}|{:?}", M::NAME, self.cfg, self.bounds, self.invariants, self.target)
    }
    fn with_variant(&self, name: &str) -> Result<Arc<dyn AnySpec>, String> {
        let v = M::Variant::from_name(name)
            .ok_or_else(|| format!("unknown {} variant \"{name}\" ({})", M::NAME, M::Variant::names().join(", ")))?;
        Ok(self.with_cfg(M::with_variant(&self.cfg, v)))
    }
    fn with_invariants(&self, names: &[&str]) -> Result<Arc<dyn AnySpec>, String> {
        let mut invariants = Vec::new();
        for n in names {
            invariants.push(M::Invariant::from_name(n).ok_or_else(|| format!("{} has no invariant \"{n}\"", M::NAME))?);
        }
        let target = self.target.filter(|t| invariants.contains(t));
        Ok(Arc::new(Spec::<M> { invariants, target, ..self.clone() }))
    }
    fn without_mutation(&self) -> Arc<dyn AnySpec> {
        self.with_cfg(M::without_mutation(&self.cfg))
    }
    fn mutation_applies(&self) -> Result<(), String> {
        M::mutation(&self.cfg).map_or(Ok(()), |m| m.applies(&self.cfg))
    }
    fn exercised(&self, inv: &str, coverage: &BTreeMap<&'static str, u64>) -> bool {
        M::INVARIANTS.iter().find(|i| i.id.name() == inv).is_some_and(|i| M::exercised(i, &self.cfg, coverage))
    }
    fn for_real_threads(
        &self,
        k: usize,
        work: u32,
        hold_spins: u32,
        jiffy: Duration,
    ) -> Result<Arc<dyn AnySpec>, String> {
        let cfg = M::scale(&self.cfg, k, work, hold_spins)?;
        Ok(self.with_cfg(M::real_time(&cfg, jiffy)))
    }
    fn run_real(&self, delays: &[Duration], started: &dyn Fn(Arc<dyn Watch>)) -> (Counters, Vec<&'static str>) {
        let rec = Arc::new(Recorder::<M::Event>::with_clock(M::roles(&self.cfg).len(), self.bounds));
        started(Arc::clone(&rec) as Arc<dyn Watch>);
        let t0 = Instant::now();
        let ran = run::<M, Std<Recorder<M::Event>>>(&self.cfg, Arc::clone(&rec), &Start { delays: delays.to_vec() });
        let elapsed = t0.elapsed();
        let events = rec.take_events();
        let times = rec.take_times();
        let exec = Exec::<M> { cfg: &self.cfg, events: &events, fin: &ran.fin };
        let vs = monitor::check(&exec, &self.invariants);
        let mut seen: Vec<&'static str> = Vec::new();
        for v in &vs {
            if !seen.contains(&v.invariant) {
                seen.push(v.invariant);
            }
        }
        let mut c = Counters::new();
        for (k, v) in monitor::coverage(&exec) {
            c.insert(k.to_string(), v as f64);
        }
        M::counters(&self.cfg, &events, &times, &mut c);
        M::violation_counters(&vs, &mut c);
        c.insert("elapsed-us".into(), elapsed.as_secs_f64() * 1e6);
        if let Some(ns) = ran.cpu_ns {
            c.insert("cpu-us".into(), ns as f64 / 1e3);
        }
        (c, seen)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Model `M`'s configuration of a spec, when it is one of `M`'s (for model-specific code and
/// tests).
pub fn config_of<M: Checked>(spec: &dyn AnySpec) -> Option<&M::Config> {
    spec.as_any().downcast_ref::<Spec<M>>().map(|s| &s.cfg)
}
