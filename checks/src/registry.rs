//! The registry: the one place the checker lists the models it knows.
//!
//! Adding a protocol is a folder in `model/src/` (its [`Model`]), its monitors in
//! `checks/src/monitor/` (its [`Checked`]), its scenarios, and one line in [`SHIPPED`].
//! Everything else (scenario parsing, the engines, reports, the matrix, the self-test, the
//! runtime mode) works through [`AnyModel`] and [`AnySpec`].

use std::marker::PhantomData;
use std::sync::Arc;

use mmmodel::compaction::Compaction;
use mmmodel::model::{FieldError, Named, RoleKind, Seeded, Variant};
use mmmodel::reclaim::KswapdStall;
use mmmodel::throttle::ReclaimThrottle;

use crate::engine::types::{Engine, Options, Outcome};
use crate::monitor::Checked;
pub use crate::spec::{AnyModel, InvariantInfo, MutationInfo, Parts};
use crate::spec::{AnySpec, Spec};

/// The shipped models, in documentation order.
pub static SHIPPED: &[&dyn AnyModel] =
    &[&Entry::<KswapdStall>::NEW, &Entry::<Compaction>::NEW, &Entry::<ReclaimThrottle>::NEW];

/// The registry entry of model `M`.
pub struct Entry<M>(PhantomData<fn() -> M>);

impl<M> Entry<M> {
    pub const NEW: Entry<M> = Entry(PhantomData);
}

fn named<N: Named>(s: &str) -> N {
    N::from_name(s).unwrap_or_else(|| panic!("the scenario parser checked the name \"{s}\""))
}

impl<M: Checked> AnyModel for Entry<M> {
    fn name(&self) -> &'static str {
        M::NAME
    }
    fn variants(&self) -> Vec<&'static str> {
        M::Variant::names()
    }
    fn variant_description(&self, variant: &str) -> Option<&'static str> {
        M::Variant::from_name(variant).map(|v| v.description())
    }
    fn progress(&self) -> &'static str {
        M::PROGRESS.name()
    }
    fn invariants(&self) -> Vec<InvariantInfo> {
        M::INVARIANTS
            .iter()
            .map(|i| InvariantInfo {
                id: i.id.name(),
                statement: i.statement,
                exercised_by: i.exercised_by.iter().map(|c| c.name()).collect(),
            })
            .collect()
    }
    fn coverage_names(&self) -> Vec<&'static str> {
        M::Coverage::names()
    }
    fn contended_path(&self) -> Vec<&'static str> {
        M::CONTENDED_PATH.iter().map(|c| c.name()).collect()
    }
    fn mutations(&self) -> Vec<MutationInfo> {
        M::Mutation::ALL
            .iter()
            .map(|m| MutationInfo {
                name: m.name(),
                model: M::NAME,
                targets: m.targets().name(),
                description: m.description(),
            })
            .collect()
    }
    fn role_kinds(&self) -> &'static [RoleKind] {
        M::ROLES
    }
    fn params(&self) -> &'static [&'static str] {
        M::PARAMS
    }
    fn counters(&self) -> &'static [&'static str] {
        M::COUNTERS
    }
    fn ratios(&self) -> &'static [(&'static str, &'static str)] {
        M::RATIOS
    }

    fn explore(&self, spec: &dyn AnySpec, engine: Engine, opts: &Options) -> Outcome {
        let spec = spec.as_any().downcast_ref::<Spec<M>>().expect("a spec is explored by its own model's entry");
        crate::engine::explore(spec, engine, opts)
    }
    fn build(&'static self, parts: Parts) -> Result<Arc<dyn AnySpec>, Vec<FieldError>> {
        let variant: M::Variant = named(&parts.variant);
        let mutation: Option<M::Mutation> = parts.mutation.as_deref().map(named);
        let kinds: Vec<&str> = parts.threads.iter().map(|(k, _)| k.as_str()).collect();
        // Each thread's keys, and the keys of [params], are checked on their own: every
        // error of each is reported.
        let mut errors = Vec::new();
        let mut roles = Vec::with_capacity(parts.threads.len());
        for (kind, mut f) in parts.threads.iter().map(|(k, f)| (k.as_str(), f.clone())) {
            let rk = M::ROLES.iter().find(|r| r.name == kind).expect("the scenario parser checked the role kind");
            let takes = if rk.keys.is_empty() { "nothing".to_string() } else { rk.keys.join(", ") };
            let unknown: Vec<String> = f.keys().filter(|k| !rk.keys.contains(k)).map(str::to_string).collect();
            for key in &unknown {
                errors.push(f.error(key, format!("role \"{kind}\" takes no \"{key}\" (it takes: {takes})")));
            }
            match M::parse_role(kind, &mut f, &kinds) {
                Ok(r) => roles.push(r),
                Err(e) => errors.push(e),
            }
        }
        let mut params = parts.params;
        let mut takes: Vec<&str> = M::PARAMS.to_vec();
        takes.push("step_bound");
        for key in params.keys().filter(|k| !M::PARAMS.contains(k)) {
            errors.push(
                params.error(key, format!("the {} model takes no \"{key}\" (it takes: {})", M::NAME, takes.join(", "))),
            );
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let cfg = M::configure(variant, mutation, roles, &mut params).map_err(|e| vec![e])?;
        if let Some(m) = mutation {
            m.applies(&cfg).map_err(|why| {
                vec![FieldError {
                    field: "mutation".into(),
                    message: format!("{} cannot run in this scenario: {why}", m.name()),
                }]
            })?;
        }
        let mut spec = Spec::<M>::new(self, cfg);
        spec.bounds = parts.bounds;
        if let Some(ids) = &parts.invariants {
            spec.invariants = ids.iter().map(|s| named(s)).collect();
        }
        // An invariant judged on lassos is found by searching for fair cycles (see Checked::LASSO).
        spec.target = parts.target.as_deref().map(named).filter(|t| !M::LASSO.contains(t));
        Ok(Arc::new(spec))
    }
}

/// The models a checker run knows: the shipped ones, plus any a test adds.
#[derive(Clone)]
pub struct Registry {
    models: Vec<&'static dyn AnyModel>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry { models: SHIPPED.to_vec() }
    }
}

impl Registry {
    /// The shipped models and `extra`.
    pub fn with(mut self, extra: &'static dyn AnyModel) -> Self {
        self.models.push(extra);
        self
    }
    pub fn models(&self) -> &[&'static dyn AnyModel] {
        &self.models
    }
    pub fn find(&self, name: &str) -> Option<&'static dyn AnyModel> {
        self.models.iter().copied().find(|m| m.name() == name)
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.models.iter().map(|m| m.name()).collect()
    }
}
