//! `mmcheck matrix`: the side-by-side answer to "what did each patch change". For every
//! model, invariants × variants, built from the shipped scenarios' results: a cell says
//! *violated* when some explored execution of that variant broke the invariant, *holds* when a
//! complete exploration checked it and found no violation, and is empty when no scenario
//! decides it. Each cell carries its evidence (executions, engine, scenario).

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::check::Report;
use crate::engine::Engine;
use crate::registry::AnyModel;

/// One cell's evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// "violated", "holds" (a complete exhaustive run that reached the invariant's situation)
    /// or "unexercised" (complete and exhaustive, but it never reached it).
    pub verdict: &'static str,
    /// Executions explored until the first violation (violated), or explored in total
    /// (holds); for the stateful engine, transitions until the first violation, or states.
    pub executions: u64,
    /// The memory model the deciding engine explores: `c11` (loom) or `sc`.
    pub memory_model: &'static str,
    /// The engine that decided it (its memory model is [`Engine::memory_model`]).
    #[serde(serialize_with = "engine_text")]
    pub engine: Engine,
    pub scenario: String,
}

fn engine_text<S: Serializer>(e: &Engine, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&e.to_string())
}

/// Rows are invariants, columns variants.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    pub model: &'static str,
    pub variants: Vec<&'static str>,
    pub invariants: Vec<&'static str>,
    pub cells: BTreeMap<String, Cell>,
}

fn key(inv: &str, variant: &str) -> String {
    format!("{inv}|{variant}")
}

impl Matrix {
    pub fn cell(&self, inv: &str, variant: &str) -> Option<&Cell> {
        self.cells.get(&key(inv, variant))
    }
}

/// Build one model's matrix from scenario reports (mutant scenarios are ignored: they are
/// about the checker, not about a variant).
pub fn build(model: &dyn AnyModel, reports: &[Report]) -> Matrix {
    let invariants: Vec<&'static str> = model.invariants().iter().map(|i| i.id).collect();
    let mut cells: BTreeMap<String, Cell> = BTreeMap::new();
    for r in
        reports.iter().filter(|r| r.scenario.model().name() == model.name() && r.scenario.spec.mutation().is_none())
    {
        let variant = r.scenario.spec.variant();
        for run in &r.runs {
            let o = &run.outcome;
            if o.error.is_some() {
                continue;
            }
            for inv in r.scenario.spec.invariants() {
                let k = key(inv, variant);
                if let Some(&n) = o.first_violation.get(inv) {
                    let better = match cells.get(&k) {
                        Some(c) => c.verdict != "violated" || n < c.executions,
                        None => true,
                    };
                    if better {
                        cells.insert(
                            k,
                            Cell {
                                verdict: "violated",
                                executions: n,
                                memory_model: o.engine.memory_model(),
                                engine: o.engine,
                                scenario: r.scenario.name.clone(),
                            },
                        );
                    }
                } else if o.complete && o.engine.is_exhaustive() && o.found.is_none() {
                    // A complete exhaustive exploration with no violation at all: "holds" if it
                    // reached the invariant's situation, else "unexercised". Prefer holds, then
                    // the stronger engine for the invariant: for `progress` the stateful engine,
                    // which decides it exactly (fair cycles, no step bound); for the others
                    // loom's weak-memory proof. Then the larger exploration.
                    let reached = r.scenario.spec.exercised(inv, &o.coverage);
                    let verdict = if reached { "holds" } else { "unexercised" };
                    let size = o.stats.map_or(o.executions, |s| s.states);
                    let is_progress = inv == model.progress();
                    let rank = |v: &str, e: &Engine| {
                        let v = match v {
                            "holds" => 2,
                            "unexercised" => 1,
                            _ => 3,
                        };
                        let stronger =
                            if is_progress { matches!(e, Engine::Stateful { .. }) } else { e.memory_model() == "c11" };
                        (v, stronger as u8)
                    };
                    let better = match cells.get(&k) {
                        Some(c) => {
                            let (old, new) = (rank(c.verdict, &c.engine), rank(verdict, &o.engine));
                            old < new || (old == new && size > c.executions)
                        }
                        None => true,
                    };
                    if better {
                        cells.insert(
                            k,
                            Cell {
                                verdict,
                                executions: size,
                                memory_model: o.engine.memory_model(),
                                engine: o.engine,
                                scenario: r.scenario.name.clone(),
                            },
                        );
                    }
                }
            }
        }
    }
    Matrix { model: model.name(), variants: model.variants(), invariants, cells }
}

/// The matrix as a text table.
pub fn render(m: &Matrix) -> String {
    let col = 36;
    let mut s = format!(
        "{} model: invariants x variants (cell: verdict, executions (stateful: distinct states stored for holds \
         and unexercised, transitions up to the first violation for VIOLATED), engine, memory model: c11 = loom's C11 subset, sc = sequentially consistent; unexercised: passed, but never \
         reached the invariant's situation)\n",
        m.model
    );
    s.push_str(&format!("{:<24}", "invariant"));
    for v in &m.variants {
        s.push_str(&format!(" {:<col$}", v));
    }
    s.push('\n');
    for inv in &m.invariants {
        s.push_str(&format!("{:<24}", inv));
        for v in &m.variants {
            let text = match m.cell(inv, v) {
                Some(c) if c.verdict == "violated" => {
                    format!("VIOLATED @{} {} {}", c.executions, c.engine.short(), c.memory_model)
                }
                Some(c) if c.verdict == "unexercised" => {
                    format!("unexercised {} {} {}", c.executions, c.engine.short(), c.memory_model)
                }
                Some(c) => format!("holds {} {} {}", c.executions, c.engine.short(), c.memory_model),
                None => "-".to_string(),
            };
            s.push_str(&format!(" {:<col$}", text));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mmmodel::compaction::{self, Compaction};
    use mmmodel::kernel::sched::TimerModel;
    use mmmodel::reclaim::{self, KswapdStall};

    use crate::registry::{Entry, SHIPPED};
    use crate::spec::{AnySpec, Spec};

    #[test]
    fn a_pass_that_never_reached_the_situation_is_not_evidence() {
        static KS: Entry<KswapdStall> = Entry::NEW;
        let kswapd = Spec::<KswapdStall>::new(
            &KS,
            reclaim::Config {
                variant: reclaim::Variant::Recheck,
                mutation: None,
                roles: vec![reclaim::Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true }],
                timer: TimerModel::Never,
            },
        );
        let mut cov: BTreeMap<&'static str, u64> = BTreeMap::from([("congested-set", 3), ("congested-cleared", 5)]);
        assert!(!kswapd.exercised("congested-cleared", &cov), "no direct-reclaim stall");
        cov.insert("direct-stall", 1);
        assert!(kswapd.exercised("congested-cleared", &cov));

        static CO: Entry<Compaction> = Entry::NEW;
        let compactor = |mode| {
            Spec::<Compaction>::new(
                &CO,
                compaction::Config {
                    variant: compaction::Variant::FatalFix,
                    mutation: None,
                    roles: vec![compaction::Role::compactor(mode)],
                    pageblocks: 2,
                    pages_per_block: 2,
                    swap_cluster_max: 1,
                    compact_cluster_max: 1,
                    unmovable_per_block: 0,
                },
            )
        };
        let none = BTreeMap::new();
        assert!(!compactor(compaction::Mode::Async).exercised("sync-not-contended", &none));
        assert!(compactor(compaction::Mode::SyncLight).exercised("sync-not-contended", &none));
    }

    #[test]
    fn the_header_says_which_stateful_figure_each_cell_shows() {
        let m = super::Matrix { model: "kswapd-stall", variants: vec![], invariants: vec![], cells: BTreeMap::new() };
        let header = super::render(&m);
        let header = header.lines().next().unwrap_or_default();
        assert!(!header.contains("states or transitions"), "{header}");
        assert!(
            header.contains("distinct states stored for holds and unexercised")
                && header.contains("transitions up to the first violation for VIOLATED"),
            "{header}"
        );
    }

    #[test]
    fn every_invariant_says_what_exercises_it() {
        for model in SHIPPED {
            for inv in model.invariants() {
                assert!(
                    !inv.exercised_by.is_empty() || inv.id == "sync-not-contended",
                    "{}: nothing exercises it",
                    inv.id
                );
            }
        }
    }
}
