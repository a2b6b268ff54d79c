//! `mmcheck matrix`: the side-by-side answer to "what did each patch change". For every
//! model, invariants × variants, built from the shipped scenarios' results, each cell decided
//! over every configuration of that variant that checks the invariant (a file with `variants`
//! gives one configuration per variant):
//!
//! * *violated* when some configuration of that variant broke the invariant in an explored
//!   execution;
//! * *holds* when no configuration broke it, every configuration an exhaustive engine explored
//!   completely passed, and at least one of them reached the invariant's situation
//!   (*unexercised* when none did); the configurations that decided nothing (a pass that is
//!   not a proof: a shuttle engine's schedules, a search a time or state limit stopped) are the
//!   cell's `undecided`, shown as "+N unproven";
//! * empty when no scenario decides it (no violation, and no complete exhaustive pass: a cell
//!   only sampled is not shown, and `matrix` exits 2 when no cell is decided, as before).
//!
//! A configuration whose search stopped at the first violation of another invariant decides
//! nothing about this one: it is listed among the cell's `undecided` scenarios and neither
//! makes nor keeps the verdict. Each cell carries the evidence that decides it (executions,
//! engine, scenario) and the list of every scenario it was decided over.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use crate::check::Report;
use crate::engine::Engine;
use crate::registry::AnyModel;

/// One cell's evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// "violated" (some configuration violates it), "holds" (none violates it, every one explored
    /// completely by an exhaustive engine passed, one of those reaching the invariant's
    /// situation) or "unexercised" (the same, but none reached it).
    pub verdict: &'static str,
    /// Executions explored until the first violation (violated), or explored in total
    /// (holds, open); for the stateful engine, transitions until the first violation, or states.
    pub executions: u64,
    /// The memory model the deciding engine explores: `c11` (loom) or `sc`.
    pub memory_model: &'static str,
    /// The engine that decided it (its memory model is [`Engine::memory_model`]); for an open
    /// cell, the engine of the pass that was not exhaustive.
    #[serde(serialize_with = "engine_text")]
    pub engine: Engine,
    /// The scenario that decides it (for an open cell, the pass that keeps it open).
    pub scenario: String,
    /// Every scenario of this variant that checks the invariant, in file order.
    pub scenarios: Vec<String>,
    /// Those of them that decided nothing about it: a pass that is not a proof (a shuttle
    /// engine's, a search a limit stopped) or a search stopped at another invariant's violation.
    pub undecided: Vec<String>,
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

/// What one scenario says about one invariant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Says {
    /// Violated at execution (or transition) `n`.
    Violated(u64),
    /// Explored completely by an exhaustive engine with no violation of it; `reached`: the
    /// invariant's situation was reached; `size`: executions, or states.
    Holds { reached: bool, size: u64 },
    /// It passed, but not exhaustively: a shuttle engine, a limit, an engine error.
    Open,
    /// Its search stopped at the first violation of another invariant.
    Stopped,
}

/// One scenario's word on `inv`, and the engine that gave it.
fn says(r: &Report, inv: &str) -> (Says, Engine) {
    let mut best: Option<(Says, Engine)> = None;
    for run in &r.runs {
        let o = &run.outcome;
        if o.error.is_some() {
            continue;
        }
        if let Some(&n) = o.first_violation.get(inv) {
            if !matches!(best, Some((Says::Violated(m), _)) if m <= n) {
                best = Some((Says::Violated(n), o.engine));
            }
        }
    }
    if let Some(b) = best {
        return b;
    }
    // A complete exhaustive exploration that did not violate it. Among several (engine =
    // "all"), the stronger engine for the invariant, then the larger: see `rank`.
    for run in &r.runs {
        let o = &run.outcome;
        if o.error.is_none() && o.complete && o.engine.is_exhaustive() && !o.first_violation.contains_key(inv) {
            let reached = r.scenario.spec.exercised(inv, &o.coverage);
            let size = o.stats.map_or(o.executions, |s| s.states);
            let new = (Says::Holds { reached, size }, o.engine);
            if best.is_none_or(|old| rank(r, inv, old) < rank(r, inv, new)) {
                best = Some(new);
            }
        }
    }
    if let Some(b) = best {
        return b;
    }
    let engine = r.runs.first().map_or(Engine::Loom { preemption_bound: None }, |run| run.outcome.engine);
    if r.runs.iter().any(|run| run.outcome.found.as_ref().is_some_and(|f| !f.violations.is_empty())) {
        return (Says::Stopped, engine);
    }
    (Says::Open, engine)
}

/// How good a piece of "holds" evidence is: reached before unexercised; then the stronger
/// engine for the invariant (strongest of all the stateful engine under the kernel's memory
/// model: exhaustive, no bound, weak memory; then for `progress` the stateful engine under
/// `sc`, which decides it exactly: fair cycles, no step bound; for the others loom's bounded
/// weak-memory proof); then the larger exploration.
fn rank(r: &Report, inv: &str, (says, engine): (Says, Engine)) -> (u8, u8, u64) {
    let Says::Holds { reached, size } = says else { return (0, 0, 0) };
    let is_progress = inv == r.scenario.model().progress();
    let strength = match (engine, engine.memory_model()) {
        (Engine::Stateful { .. }, "lkmm") => 2,
        (Engine::Stateful { .. }, _) if is_progress => 1,
        (_, "c11") if !is_progress => 1,
        _ => 0,
    };
    (reached as u8, strength, size)
}

/// Build one model's matrix from scenario reports (mutant scenarios are ignored: they are
/// about the checker, not about a variant). Each cell is decided over every report of its
/// variant that checks its invariant.
pub fn build(model: &dyn AnyModel, reports: &[Report]) -> Matrix {
    let invariants: Vec<&'static str> = model.invariants().iter().map(|i| i.id).collect();
    let mut cells: BTreeMap<String, Cell> = BTreeMap::new();
    let mine: Vec<&Report> = reports
        .iter()
        .filter(|r| r.scenario.model().name() == model.name() && r.scenario.spec.mutation().is_none())
        .collect();
    for variant in model.variants() {
        for &inv in &invariants {
            let of: Vec<(&Report, Says, Engine)> = mine
                .iter()
                .filter(|r| r.scenario.spec.variant() == variant && r.scenario.spec.invariants().contains(&inv))
                .map(|r| {
                    let (s, e) = says(r, inv);
                    (*r, s, e)
                })
                .collect();
            let cell = |verdict, executions, engine: Engine, r: &Report| Cell {
                verdict,
                executions,
                memory_model: engine.memory_model(),
                engine,
                scenario: r.scenario.name.clone(),
                scenarios: of.iter().map(|(r, ..)| r.scenario.name.clone()).collect(),
                undecided: of
                    .iter()
                    .filter(|(_, s, _)| matches!(s, Says::Open | Says::Stopped))
                    .map(|(r, ..)| r.scenario.name.clone())
                    .collect(),
            };
            // Violated: the earliest first violation of every configuration.
            let violated = of
                .iter()
                .filter_map(|&(r, s, e)| if let Says::Violated(n) = s { Some((n, r, e)) } else { None })
                .min_by_key(|(n, ..)| *n);
            let holds = of
                .iter()
                .filter(|(_, s, _)| matches!(s, Says::Holds { .. }))
                .max_by_key(|&&(r, s, e)| rank(r, inv, (s, e)));
            let decided = if let Some((n, r, e)) = violated {
                Some(cell("violated", n, e, r))
            } else if let Some(&(r, Says::Holds { reached, size }, e)) = holds {
                // No configuration violates it and every one an exhaustive engine explored
                // completely passed; holds once one of them reached the situation. The
                // configurations that decided nothing are the cell's `undecided`.
                Some(cell(if reached { "holds" } else { "unexercised" }, size, e, r))
            } else {
                // Only passes that are not proofs (a shuttle engine's, a stopped search's), or
                // nothing: the cell decides nothing.
                None
            };
            if let Some(c) = decided {
                cells.insert(key(inv, variant), c);
            }
        }
    }
    Matrix { model: model.name(), variants: model.variants(), invariants, cells }
}

/// A cell's evidence: its verdict, the executions (states) behind it, the engine and its memory
/// model, and how many configurations it leaves unproven.
fn evidence(c: &Cell) -> String {
    let head = match c.verdict {
        "violated" => format!("VIOLATED @{}", c.executions),
        v => format!("{v} {}", c.executions),
    };
    let text = format!("{head} {} {}", c.engine.short(), c.memory_model);
    if !c.undecided.is_empty() && c.verdict != "violated" {
        format!("{text} +{} unproven", c.undecided.len())
    } else {
        text
    }
}

/// The matrix as a text table, every cell with its evidence (`matrix --wide`): one column of
/// 38 characters a variant.
pub fn render_wide(m: &Matrix) -> String {
    let col = 38;
    let mut s = format!(
        "{} model: invariants x variants, each cell decided over every configuration of its variant that checks \
         the invariant (cell: verdict, executions (stateful: distinct states stored for holds \
         and unexercised, transitions up to the first violation for VIOLATED), engine, memory model: c11 = loom's C11 subset, sc = sequentially consistent, lkmm = the kernel's memory model (stateful, no load buffering); unexercised: passed, but never \
         reached the invariant's situation; +N \
         unproven: N more configurations that check it passed without a complete exhaustive exploration, or \
         stopped at another invariant's violation; the scenarios that decide each cell are listed below the table)\n",
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
            let text = m.cell(inv, v).map_or_else(|| "-".to_string(), evidence);
            s.push_str(&format!(" {:<col$}", text));
        }
        s.push('\n');
    }
    // Which scenario decides each cell, and how many configurations it was decided over.
    s.push_str("decided by (invariant, variant: the deciding scenario; of N: the configurations that check it)\n");
    for inv in &m.invariants {
        for v in &m.variants {
            if let Some(c) = m.cell(inv, v) {
                s.push_str(&format!("  {inv}, {v}: {} (of {})\n", c.scenario, c.scenarios.len()));
            }
        }
    }
    s
}

/// The matrix as a text table that fits 120 columns for the shipped models: each cell is its
/// verdict (and `+N` configurations it leaves unproven); the evidence of every cell (executions,
/// engine, memory model, deciding scenario) is listed below the table, one line each (two
/// where one would be wider than 120 columns).
/// [`render_wide`] puts the evidence in the cells.
pub fn render(m: &Matrix) -> String {
    let mut s = format!(
        "{} model: invariants x variants. Each cell is decided over every configuration of its variant that\n\
         checks the invariant: VIOLATED (some configuration violates it), holds (every one passed, and an\n\
         exhaustive exploration reached the invariant's situation), unexercised (passed, but never reached it),\n\
         +N: N more configurations passed without a complete exhaustive exploration, or stopped at another\n\
         invariant's violation. Below the table, each cell's evidence: executions (stateful: distinct states\n\
         stored; for VIOLATED the transitions up to the first violation), engine, memory model (c11 = loom's C11\n\
         subset, sc = sequentially consistent, lkmm = the kernel's memory model, no load buffering), and the\n\
         deciding scenario (of N: the configurations that check it). --wide puts the evidence in the cells.\n",
        m.model
    );
    let short = |c: &Cell| {
        let v = if c.verdict == "violated" { "VIOLATED".to_string() } else { c.verdict.to_string() };
        if !c.undecided.is_empty() && c.verdict != "violated" {
            format!("{v} +{}", c.undecided.len())
        } else {
            v
        }
    };
    let first = m.invariants.iter().map(|i| i.len()).chain(["invariant".len()]).max().unwrap_or(0);
    let widths: Vec<usize> = m
        .variants
        .iter()
        .map(|v| {
            m.invariants.iter().filter_map(|i| m.cell(i, v)).map(|c| short(c).len()).chain([v.len()]).max().unwrap_or(1)
        })
        .collect();
    let row = |label: &str, cells: Vec<String>| {
        let mut line = format!("{label:<first$}");
        for (text, w) in cells.iter().zip(&widths) {
            line.push_str(&format!("  {text:<w$}"));
        }
        line.trim_end().to_string() + "\n"
    };
    s.push_str(&row("invariant", m.variants.iter().map(|v| v.to_string()).collect()));
    for inv in &m.invariants {
        s.push_str(&row(
            inv,
            m.variants.iter().map(|v| m.cell(inv, v).map_or_else(|| "-".to_string(), short)).collect(),
        ));
    }
    s.push_str("evidence (invariant, variant: verdict, executions, engine, memory model; deciding scenario, of N)\n");
    for inv in &m.invariants {
        for v in &m.variants {
            if let Some(c) = m.cell(inv, v) {
                let line = format!("  {inv}, {v}: {}; {} (of {})", evidence(c), c.scenario, c.scenarios.len());
                if line.chars().count() <= 120 {
                    s.push_str(&line);
                } else {
                    // Folded: the deciding scenario on a line of its own.
                    s.push_str(&format!(
                        "  {inv}, {v}: {};\n      {} (of {})",
                        evidence(c),
                        c.scenario,
                        c.scenarios.len()
                    ));
                }
                s.push('\n');
            }
        }
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
        let wide = super::render_wide(&m);
        let header = wide.lines().next().unwrap_or_default();
        assert!(!header.contains("states or transitions"), "{header}");
        assert!(
            header.contains("distinct states stored for holds and unexercised")
                && header.contains("transitions up to the first violation for VIOLATED"),
            "{header}"
        );
        // The default table's header, folded to 120 columns, says the same.
        let text = super::render(&m);
        let header: Vec<&str> =
            text.lines().take_while(|l| *l != "invariant" && !l.starts_with("invariant ")).collect();
        assert!(header.iter().all(|l| l.chars().count() <= 120), "{header:?}");
        let header = header.join(" ");
        assert!(!header.contains("states or transitions"), "{header}");
        assert!(
            header.contains("distinct states stored")
                && header.contains("for VIOLATED the transitions up to the first violation"),
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
