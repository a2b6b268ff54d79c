//! What a search found: the counters, the invariants violated and when first, the coverage,
//! and the first violation to make shortest ([`Target`]). One worker's findings, one
//! process's, or a cluster's: [`Findings::merge`] adds one search's to another's.

use std::collections::BTreeMap;

use mmmodel::model::Named;

use super::store::FpSet;
use crate::monitor::online::Found as OnlineFound;
use crate::monitor::Checked;
use crate::spec::Spec;

/// The first violation the depth-first search met: what to make shortest.
pub(super) enum Target {
    /// A safety violation of this invariant, found at the end of this schedule.
    Safety { invariant: &'static str, path: Vec<u8> },
    /// A fair cycle: the states of its component, the tasks that must move in it, the
    /// schedule that leads to the component's root, and the lasso invariant it violates
    /// besides `progress` (an index into [`Checked::LASSO`]), if any.
    Cycle { members: FpSet, must_move: u32, path: Vec<u8>, class: Option<u8> },
}

/// Scheduling steps the search's executions ran: all of them, those that replayed a known
/// prefix, and those that ran an execution to its end after it reached a known state (the
/// rest took transitions out of new states).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Steps {
    pub total: u64,
    pub replayed: u64,
    pub tail: u64,
}

/// Counts by name, for the few coverage events a model has: a short list searched by the
/// name's address first (each name is one literal), so that counting one event costs no
/// string comparison.
#[derive(Default, Clone, Debug)]
pub(super) struct Counts(Vec<(&'static str, u64)>);

impl Counts {
    /// Adds `n` to `name`'s count.
    #[inline]
    pub fn add(&mut self, name: &'static str, n: u64) {
        if let Some(e) = self.0.iter_mut().find(|(k, _)| std::ptr::eq(*k, name)) {
            e.1 += n;
        } else if let Some(e) = self.0.iter_mut().find(|(k, _)| *k == name) {
            e.1 += n;
        } else {
            self.0.push((name, n));
        }
    }

    pub fn from_map(m: &BTreeMap<&'static str, u64>) -> Counts {
        Counts(m.iter().map(|(k, v)| (*k, *v)).collect())
    }

    pub fn to_map(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for (k, v) in &self.0 {
            *m.entry(*k).or_insert(0) += v;
        }
        m
    }
}

/// The counters and first violations of a search.
#[derive(Default)]
pub(super) struct Findings {
    pub transitions: u64,
    pub max_depth: usize,
    pub coverage: Counts,
    pub violated: BTreeMap<&'static str, u64>,
    pub first_violation: BTreeMap<&'static str, u64>,
    pub target: Option<Target>,
    pub stopped_by: Option<&'static str>,
    /// Partial-order reduction: transitions left asleep, and visits of a stored state that
    /// explored what an earlier visit had left asleep.
    pub slept: u64,
    pub revisits: u64,
    /// Persistent sets: states explored by one transition alone (a task's start or yield
    /// that proved local and reached a new state).
    pub persistent: u64,
    /// Commutation checks on the monitors answered by a step's inert events
    /// ([`crate::monitor::online::Online::inert`]: with `Options::check_inert`, run anyway),
    /// and with `Options::check_inert` the ones where the full check said otherwise.
    pub inert: u64,
    pub inert_disagreements: u64,
    /// Several workers recording the graph: states closed on the fly (`closed.rs`).
    pub closed: u64,
    pub steps: Steps,
    /// States this search stored itself (one of several workers: its share).
    pub stored: u64,
}

/// Whether `spec` checks one of its model's lasso invariants ([`Checked::LASSO`]).
pub(super) fn lasso_checked<M: Checked>(spec: &Spec<M>) -> bool {
    M::LASSO.iter().any(|i| spec.invariants.contains(i))
}

/// Whether `spec` checks an invariant decided by fair cycles (`progress` or a lasso invariant).
pub(super) fn cycles_checked<M: Checked>(spec: &Spec<M>) -> bool {
    spec.invariants.contains(&M::PROGRESS) || lasso_checked(spec)
}

/// The checked invariants among what the online monitors found.
pub(super) fn ids<M: Checked>(spec: &Spec<M>, found: &OnlineFound<M>) -> Vec<&'static str> {
    if found.violated.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<&'static str> =
        found.violated.iter().filter(|i| spec.invariants.contains(i)).map(|i| i.name()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether a violation of `ids` ends the depth-first search (the target invariant, or any
/// invariant when the scenario names none).
pub(super) fn decisive<M: Checked>(spec: &Spec<M>, ids: &[&'static str]) -> Option<&'static str> {
    match spec.target {
        Some(t) => ids.iter().copied().find(|i| *i == t.name()),
        None => ids.first().copied(),
    }
}

impl Findings {
    /// A decisive violation was found or a budget ran out: the search stops.
    pub fn halted(&self) -> bool {
        self.target.is_some() || self.stopped_by.is_some()
    }

    pub fn count_violations(&mut self, ids: &[&'static str]) {
        for &i in ids {
            *self.violated.entry(i).or_insert(0) += 1;
            self.first_violation.entry(i).or_insert(self.transitions);
        }
    }

    /// Record what one explored transition found; returns the invariants it violated.
    pub fn account<M: Checked>(
        &mut self,
        spec: &Spec<M>,
        found: &OnlineFound<M>,
        coverage: &[M::Coverage],
    ) -> Vec<&'static str> {
        self.transitions += 1;
        for c in coverage.iter().chain(&found.derived) {
            self.coverage.add(c.name(), 1);
        }
        let ids = ids(spec, found);
        self.count_violations(&ids);
        ids
    }

    /// Another search's findings added to these (counts summed, the first target kept).
    pub fn merge(&mut self, o: Findings) {
        self.transitions += o.transitions;
        self.max_depth = self.max_depth.max(o.max_depth);
        for (k, v) in o.coverage.0 {
            self.coverage.add(k, v);
        }
        for (k, v) in o.violated {
            *self.violated.entry(k).or_insert(0) += v;
        }
        for (k, v) in o.first_violation {
            let e = self.first_violation.entry(k).or_insert(v);
            *e = (*e).min(v);
        }
        self.target = self.target.take().or(o.target);
        self.stopped_by = self.stopped_by.or(o.stopped_by);
        self.slept += o.slept;
        self.revisits += o.revisits;
        self.persistent += o.persistent;
        self.inert += o.inert;
        self.inert_disagreements += o.inert_disagreements;
        self.closed += o.closed;
        self.steps.total += o.steps.total;
        self.steps.replayed += o.steps.replayed;
        self.steps.tail += o.steps.tail;
    }
}
