//! `mmcheck matrix`: the side-by-side answer to "what did each patch change". For every
//! model, invariants × variants, built from the shipped scenarios' results: a cell says
//! *violated* when some explored execution of that variant broke the invariant, *holds* when a
//! complete exploration checked it and found no violation, and is empty when no scenario
//! decides it. Each cell carries its evidence (executions, engine, scenario).

use std::collections::BTreeMap;

use mmmodel::mutation::ModelKind;
use serde::Serialize;

use crate::check::Report;
use crate::monitor;

/// The coverage events an exploration must have reached for its "holds" to say anything about
/// an invariant: the situation the invariant constrains. A pass that never reached them (a
/// scenario with no direct reclaimer says nothing about `congested-cleared`) is shown as
/// `unexercised`, and is used only when no scenario exercised the invariant.
pub fn exercised_by(model: ModelKind, inv: &str) -> Option<&'static [&'static str]> {
    Some(match (model, inv) {
        (ModelKind::KswapdStall, "single-exclusive") => &["cmpxchg-won", "cmpxchg-lost"],
        (ModelKind::KswapdStall, "exclusive-never-waits") => &["cmpxchg-won", "enqueued"],
        (ModelKind::KswapdStall, "stall-once") => &["cmpxchg-lost", "enqueued"],
        (ModelKind::KswapdStall, "no-lost-wakeup") => &["enqueued", "wake-empty-queue"],
        (ModelKind::KswapdStall, "exclusive-released") => &["cmpxchg-won", "released"],
        (ModelKind::KswapdStall, "progress") => &["trylock-failed"],
        (ModelKind::KswapdStall, "congested-cleared") => &["congested-set", "congested-cleared", "direct-stall"],
        (ModelKind::KswapdStall, "lock-released") => &["trylock-failed"],
        (ModelKind::Compaction, "progress") => &["lock-contended"],
        (ModelKind::Compaction, "finish-pageblock") => &["contended-set"],
        (ModelKind::Compaction, "lock-released") => &["lock-contended"],
        (ModelKind::Compaction, "contended-monotonic") => &["contended-set"],
        // Sync modes never trylock, so no event marks them; see `exercised`.
        (ModelKind::Compaction, "sync-not-contended") => &[],
        (ModelKind::Compaction, "scanners-ordered") => &["scanners-met"],
        _ => return None,
    })
}

/// Whether one exploration exercised `inv`: it reached every event of `exercised_by`, and,
/// for `sync-not-contended`, its scenario has a compactor in a sync mode.
fn exercised(model: ModelKind, inv: &str, spec: &crate::spec::ModelSpec, coverage: &BTreeMap<&'static str, u64>) -> bool {
    let events = exercised_by(model, inv).is_some_and(|evs| evs.iter().all(|e| coverage.get(e).is_some_and(|&n| n > 0)));
    let roles = match (inv, spec) {
        ("sync-not-contended", crate::spec::ModelSpec::Compaction(cfg)) => cfg
            .roles
            .iter()
            .any(|r| matches!(r, mmmodel::compaction::Role::Compactor { mode } if *mode != mmmodel::compaction::Mode::Async)),
        _ => true,
    };
    events && roles
}

/// One cell's evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// "violated", "holds" (a complete exhaustive run that reached the invariant's situation)
    /// or "unexercised" (complete and exhaustive, but it never reached it).
    pub verdict: &'static str,
    /// Executions explored until the first violation (violated), or explored in total (holds).
    pub executions: u64,
    pub engine: String,
    pub scenario: String,
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
pub fn build(model: ModelKind, variants: Vec<&'static str>, reports: &[Report]) -> Matrix {
    let invariants: Vec<&'static str> = monitor::invariants(model).iter().map(|i| i.id).collect();
    let mut cells: BTreeMap<String, Cell> = BTreeMap::new();
    for r in reports.iter().filter(|r| r.scenario.model() == model && r.scenario.spec.model.mutation().is_none()) {
        let variant = r.scenario.spec.model.variant_name();
        for run in &r.runs {
            let o = &run.outcome;
            if o.error.is_some() {
                continue;
            }
            for inv in &r.scenario.spec.invariants {
                let k = key(inv, variant);
                if let Some(&n) = o.first_violation.get(inv) {
                    let better = match cells.get(&k) {
                        Some(c) => c.verdict != "violated" || n < c.executions,
                        None => true,
                    };
                    if better {
                        cells.insert(k, Cell { verdict: "violated", executions: n, engine: o.engine.to_string(), scenario: r.scenario.name.clone() });
                    }
                } else if o.complete && o.engine.is_exhaustive() && o.found.is_none() {
                    // A complete exhaustive exploration with no violation at all: "holds" if it
                    // reached the invariant's situation, else "unexercised". Prefer holds, then
                    // the larger exploration.
                    let reached = exercised(model, inv, &r.scenario.spec.model, &o.coverage);
                    let verdict = if reached { "holds" } else { "unexercised" };
                    let rank = |v: &str| match v {
                        "holds" => 2,
                        "unexercised" => 1,
                        _ => 3,
                    };
                    let better = match cells.get(&k) {
                        Some(c) => {
                            rank(c.verdict) < rank(verdict) || (c.verdict == verdict && o.executions > c.executions)
                        }
                        None => true,
                    };
                    if better {
                        cells.insert(k, Cell { verdict, executions: o.executions, engine: o.engine.to_string(), scenario: r.scenario.name.clone() });
                    }
                }
            }
        }
    }
    Matrix { model: model.name(), variants, invariants, cells }
}

/// The matrix as a text table.
pub fn render(m: &Matrix) -> String {
    let col = 32;
    let mut s = format!(
        "{} model: invariants x variants (cell: verdict, executions, engine; unexercised: passed, but never \
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
                Some(c) if c.verdict == "violated" => format!("VIOLATED @{} {}", c.executions, short(&c.engine)),
                Some(c) if c.verdict == "unexercised" => format!("unexercised {} {}", c.executions, short(&c.engine)),
                Some(c) => format!("holds {} {}", c.executions, short(&c.engine)),
                None => "-".to_string(),
            };
            s.push_str(&format!(" {:<col$}", text));
        }
        s.push('\n');
    }
    s
}

/// `loom`, `loom pb3`, `pct d8`, `random`, `dfs`.
fn short(engine: &str) -> String {
    if let Some(rest) = engine.strip_prefix("loom(pb=") {
        return format!("loom pb{}", rest.trim_end_matches(')'));
    }
    if let Some(rest) = engine.strip_prefix("shuttle-pct(") {
        let d = rest.split(',').find_map(|p| p.strip_prefix("d=")).unwrap_or("?");
        return format!("pct d{d}");
    }
    engine.split('(').next().unwrap_or(engine).replace("shuttle-", "")
}

#[cfg(test)]
mod tests {
    use mmmodel::mutation::ModelKind;

    use std::collections::BTreeMap;

    use mmmodel::kernel::sched::TimerModel;
    use mmmodel::{compaction, reclaim};

    use super::{exercised, exercised_by};
    use crate::monitor;
    use crate::spec::ModelSpec;

    #[test]
    fn a_pass_that_never_reached_the_situation_is_not_evidence() {
        let kswapd = ModelSpec::KswapdStall(reclaim::Config {
            variant: reclaim::Variant::Recheck,
            mutation: None,
            roles: vec![reclaim::Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true }],
            timer: TimerModel::Never,
        });
        let mut cov: BTreeMap<&'static str, u64> = BTreeMap::from([("congested-set", 3), ("congested-cleared", 5)]);
        assert!(!exercised(ModelKind::KswapdStall, "congested-cleared", &kswapd, &cov), "no direct-reclaim stall");
        cov.insert("direct-stall", 1);
        assert!(exercised(ModelKind::KswapdStall, "congested-cleared", &kswapd, &cov));

        let compactor = |mode| {
            ModelSpec::Compaction(compaction::Config {
                variant: compaction::Variant::FatalFix,
                mutation: None,
                roles: vec![compaction::Role::Compactor { mode }],
                pageblocks: 2,
                pages_per_block: 2,
                swap_cluster_max: 1,
                compact_cluster_max: 1,
            })
        };
        let none = BTreeMap::new();
        assert!(!exercised(ModelKind::Compaction, "sync-not-contended", &compactor(compaction::Mode::Async), &none));
        assert!(exercised(ModelKind::Compaction, "sync-not-contended", &compactor(compaction::Mode::SyncLight), &none));
    }

    #[test]
    fn every_invariant_says_what_exercises_it_in_the_models_own_event_names() {
        for model in [ModelKind::KswapdStall, ModelKind::Compaction] {
            let names = monitor::coverage_names(model);
            for inv in monitor::invariants(model) {
                let evs = exercised_by(model, inv.id).unwrap_or_else(|| panic!("{}: no exercised_by entry", inv.id));
                assert!(!evs.is_empty() || inv.id == "sync-not-contended", "{}: nothing exercises it", inv.id);
                for e in evs {
                    assert!(names.contains(e), "{}: {e} is not a {} coverage event", inv.id, model.name());
                }
            }
        }
    }
}
