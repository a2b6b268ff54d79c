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

/// One cell's evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
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
                    // A complete exhaustive exploration with no violation at all.
                    let better = match cells.get(&k) {
                        Some(c) => c.verdict == "holds" && o.executions > c.executions,
                        None => true,
                    };
                    if better {
                        cells.insert(k, Cell { verdict: "holds", executions: o.executions, engine: o.engine.to_string(), scenario: r.scenario.name.clone() });
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
    let mut s = format!("{} model: invariants x variants (cell: verdict, executions, engine)\n", m.model);
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
