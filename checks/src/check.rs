//! Running a scenario: explore it with its engine(s), judge the verdict against the
//! expectation (vacuity and engine agreement included), and describe the result.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::engine::{self, Engine, EngineName, Explore, Memory, Options, Outcome};
use crate::scenario::{ExpectVerdict, Scenario};
use crate::token::ReplayToken;

/// What a scenario's exploration concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No violation in everything explored, and every `reaches` event was reached.
    Pass,
    /// An invariant was violated (the one reported first).
    Violation(&'static str),
    /// No violation, but an event the scenario is about never happened: the pass says nothing.
    Vacuous(Vec<&'static str>),
    /// The exploration stopped (time limit) before it was complete, with no violation.
    Incomplete,
    /// The engines of a cross-check (`engine = "all"`) disagree.
    Disagreement(String),
    /// The engine failed.
    Error(String),
}

impl Verdict {
    pub fn label(&self) -> String {
        match self {
            Verdict::Pass => "pass".into(),
            Verdict::Violation(i) => format!("violation({i})"),
            Verdict::Vacuous(_) => "vacuous".into(),
            Verdict::Incomplete => "incomplete".into(),
            Verdict::Disagreement(_) => "disagreement".into(),
            Verdict::Error(_) => "error".into(),
        }
    }
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Violation(_) => "violation",
            Verdict::Vacuous(_) => "vacuous",
            Verdict::Incomplete => "incomplete",
            Verdict::Disagreement(_) => "disagreement",
            Verdict::Error(_) => "error",
        }
    }
}

/// One engine's part of a scenario run.
#[derive(Debug, Clone)]
pub struct EngineRun {
    pub outcome: Outcome,
    pub verdict: Verdict,
}

/// The result of checking one scenario.
#[derive(Debug, Clone)]
pub struct Report {
    pub scenario: Scenario,
    pub runs: Vec<EngineRun>,
    pub verdict: Verdict,
    pub matched: bool,
    /// The run whose counterexample is reported.
    pub shown: Option<usize>,
    pub replay: Option<ReplayToken>,
    /// What the verdict needs said beside it (a violation only a weak-memory engine sees).
    pub note: Option<String>,
}

impl Report {
    /// The stateful engine's figures, if it ran.
    pub fn stateful(&self) -> Option<engine::StateStats> {
        self.runs.iter().find_map(|r| r.outcome.stats)
    }
    /// Why an exploration stopped early, if one did for a budget.
    pub fn stopped_by(&self) -> Option<&'static str> {
        self.stateful().and_then(|s| s.stopped_by)
    }
    pub fn executions(&self) -> u64 {
        self.runs.iter().map(|r| r.outcome.executions).sum()
    }
    pub fn seconds(&self) -> f64 {
        self.runs.iter().map(|r| r.outcome.seconds).sum()
    }
    /// The memory models of its runs, in their order, each once in a row (`c11+sc+lkmm`).
    pub fn memory_models(&self) -> String {
        let mut m: Vec<&str> = self.runs.iter().map(|r| r.outcome.engine.memory_model()).collect();
        m.dedup();
        m.join("+")
    }
    /// Its runs' engines, in their order (`stateful+loom`); the table's engine column, which
    /// also says what the verdict covers, is the CLI's `covers_label`.
    pub fn engine_names(&self) -> String {
        let v: Vec<String> = self.runs.iter().map(|r| r.outcome.engine.to_string()).collect();
        v.join("+")
    }
    pub fn expected_label(&self) -> String {
        match (self.scenario.expect.verdict, self.scenario.expect.invariant) {
            (ExpectVerdict::Pass, _) => "pass".into(),
            (ExpectVerdict::Violation, Some(i)) => format!("violation({i})"),
            (ExpectVerdict::Violation, None) => "violation".into(),
        }
    }
    /// Coverage summed over the engines.
    pub fn coverage(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for r in &self.runs {
            for (k, v) in &r.outcome.coverage {
                *m.entry(*k).or_insert(0) += v;
            }
        }
        m
    }
    /// The race diagram of the reported counterexample, with the violations and replay line.
    pub fn counterexample(&self, verbose: bool) -> Option<String> {
        let run = &self.runs[self.shown?];
        let f = run.outcome.found.as_ref()?;
        let comms = self.scenario.spec.comms();
        let which = match (f.index(), &run.outcome.stats) {
            (Some(i), _) => format!("execution {i} of {}", run.outcome.executions),
            (None, Some(st)) => format!("{} states explored, {}", st.states, run.outcome.engine.memory_model_name()),
            (None, None) => "a replayed schedule".to_string(),
        };
        // A bounded engine sees a livelock only as an execution the step bound (or its own
        // loop detection) ended; the stateful engine closes the cycle.
        let exact = if self.verdict == Verdict::Violation("progress")
            && !matches!(run.outcome.engine, Engine::Stateful { .. })
        {
            "; a bounded search: --engine stateful decides progress exactly"
        } else {
            ""
        };
        let mut s = format!(
            "{}: {} on {} ({} events, {which}{exact})\n",
            crate::term::escape_control(&self.scenario.name),
            self.verdict.label(),
            run.outcome.engine,
            f.trace.len(),
        );
        s.push_str(&f.trace.render_lasso(&comms, &f.violations, verbose, f.cycle_from));
        let mut seen = Vec::new();
        for v in &f.violations {
            if seen.contains(&(v.invariant, v.message.clone())) {
                continue;
            }
            seen.push((v.invariant, v.message.clone()));
            s.push_str(&format!("violated {}: {}\n", v.invariant, v.message));
        }
        let wasted: u64 =
            f.violations.iter().filter(|v| v.invariant == "no-lost-wakeup").map(|v| v.wasted_jiffies).sum();
        if wasted > 0 {
            s.push_str(&format!(
                "wasted sleep: {wasted} jiffies ({} ms at HZ={})\n",
                wasted * 1000 / mmmodel::kernel::HZ,
                mmmodel::kernel::HZ
            ));
        }
        if let Some(t) = &self.replay {
            s.push_str(&format!("replay: {}\n", crate::term::replay_command(&self.scenario.file, &t.to_string())));
        }
        Some(s)
    }
}

/// Called now and then with what is being checked and how far its exploration has got.
pub type Progress = Arc<dyn Fn(&str, &engine::Progress) + Send + Sync>;

/// How to run the checks.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Replay this token instead of exploring.
    pub replay: Option<ReplayToken>,
    /// Run only this engine's part of an `engine = "all"` scenario, or override the engine.
    pub engine_override: Option<Vec<Engine>>,
    pub progress: Option<Progress>,
    /// Compare the online monitors with the trace monitors on every execution
    /// ([`Options::check_online`]); a disagreement is an `error` verdict.
    pub check_online: bool,
    /// `--no-reduce`: the stateful engine's search with no reduction, whatever the file says.
    pub no_reduce: bool,
    /// `--memory`: the stateful engine's memory model, whatever the file says.
    pub memory: Option<Memory>,
    /// `--workers N`: the stateful engine's worker threads (0 and 1 both mean one).
    pub workers: usize,
    /// `--processes`/`--local-cluster`: the stateful engine's search over a cluster.
    pub cluster: Option<Arc<engine::stateful::cluster::Cluster>>,
}

fn options_for(sc: &Scenario, run: &RunOptions, engine: Engine) -> Options {
    let mut o = Options { check_online: run.check_online, ..Options::default() };
    if let Some(s) = sc.max_seconds {
        o.max_duration = Some(Duration::from_secs_f64(s));
    }
    if let Some(b) = sc.shortest_budget {
        o.shortest_budget = b;
    }
    if let Some(r) = sc.reduce {
        o.reduce = r;
    }
    if run.no_reduce {
        o.reduce = engine::Reduce::NONE;
    }
    o.workers = run.workers.max(1);
    o.cluster = run.cluster.clone();
    if let Some(p) = &run.progress {
        let p = Arc::clone(p);
        let label = format!("{} [{}]", sc.name, engine.name());
        o.progress = Some(Arc::new(move |pr: &engine::Progress| p(&label, pr)));
    }
    o
}

fn judge(sc: &Scenario, o: &Outcome) -> Verdict {
    if let Some(e) = &o.error {
        return Verdict::Error(e.clone());
    }
    if let Some(f) = &o.found {
        if f.violations.is_empty() {
            // A replay of an execution that violates nothing.
            return Verdict::Pass;
        }
        let inv = match sc.spec.target() {
            Some(t) if f.violations.iter().any(|v| v.invariant == t) => t,
            _ => f.violations[0].invariant,
        };
        return Verdict::Violation(inv);
    }
    if let Some((inv, _)) = o.violated.iter().next() {
        // Every engine keeps a counterexample for what it counts; a count without one is the
        // engine's failure, never a pass.
        return Verdict::Error(format!("{} counted violations of {inv} but kept no counterexample", o.engine));
    }
    if !o.complete {
        return Verdict::Incomplete;
    }
    let missing: Vec<&'static str> =
        sc.expect.reaches.iter().copied().filter(|r| o.coverage.get(r).copied().unwrap_or(0) == 0).collect();
    if !missing.is_empty() {
        return Verdict::Vacuous(missing);
    }
    Verdict::Pass
}

/// Check one scenario.
pub fn check(sc: &Scenario, run: &RunOptions) -> Report {
    let mut engines = run.engine_override.clone().unwrap_or_else(|| sc.engines.clone());
    if let Some(m) = run.memory {
        for e in &mut engines {
            if let Engine::Stateful { memory, .. } = e {
                *memory = m;
            }
        }
    }
    let mut runs = Vec::new();
    for e in engines {
        let mut opts = options_for(sc, run, e);
        if let Some(t) = &run.replay {
            if !t.fits(&*sc.spec, e) {
                continue;
            }
            opts.replay = Some(t.replay.clone());
        }
        let outcome = sc.spec.explore(e, &opts);
        let verdict = judge(sc, &outcome);
        runs.push(EngineRun { outcome, verdict });
    }
    combine(sc, runs)
}

/// Whether `runs` that violate and `clean` runs that do not are explained by the memory model:
/// every violation comes from loom (its C11 subset) and some clean run is a complete
/// exhaustive search of every sequentially consistent interleaving (the stateful engine), so
/// the violation needs a weak-memory outcome.
fn weak_memory_only(violations: &[&EngineRun], clean: &[&EngineRun]) -> Option<String> {
    let all_c11 = violations.iter().all(|r| r.outcome.engine.memory_model() == "c11");
    let sc_proof = clean
        .iter()
        .find(|r| r.outcome.engine.memory_model() == "sc" && r.outcome.engine.is_exhaustive() && r.outcome.complete)?;
    all_c11.then(|| {
        format!(
            "a weak-memory outcome: {} finds it in loom's C11 model, and {} explored every sequentially consistent \
             interleaving without it",
            violations[0].verdict.label(),
            sc_proof.outcome.engine
        )
    })
}

fn combine(sc: &Scenario, runs: Vec<EngineRun>) -> Report {
    let mut note = None;
    let verdict = if runs.is_empty() {
        Verdict::Error("no engine ran".into())
    } else if let Some(r) = runs.iter().find(|r| matches!(r.verdict, Verdict::Error(_))) {
        r.verdict.clone()
    } else {
        let violations: Vec<&EngineRun> = runs.iter().filter(|r| matches!(r.verdict, Verdict::Violation(_))).collect();
        let clean: Vec<&EngineRun> =
            runs.iter().filter(|r| matches!(r.verdict, Verdict::Pass | Verdict::Vacuous(_))).collect();
        if !violations.is_empty() && !clean.is_empty() && weak_memory_only(&violations, &clean).is_some() {
            note = weak_memory_only(&violations, &clean);
            violations[0].verdict.clone()
        } else if !violations.is_empty() && !clean.is_empty() {
            let v = violations[0];
            let missed: Vec<String> = clean
                .iter()
                .map(|r| match r.outcome.engine {
                    Engine::Loom { preemption_bound: Some(b) } => {
                        format!("loom with preemption bound {b} (the bound hid it)")
                    }
                    e => format!("{e}"),
                })
                .collect();
            Verdict::Disagreement(format!(
                "{} found {} but {} did not",
                v.outcome.engine,
                v.verdict.label(),
                missed.join(", ")
            ))
        } else if let Some(v) = violations.first() {
            // Engines that each found a violation: the headline names the invariant the file
            // expects when one of them found it (issue 37, row 4), else the first.
            let expected = sc.expect.invariant.map(Verdict::Violation);
            violations.iter().find(|r| Some(&r.verdict) == expected.as_ref()).unwrap_or(v).verdict.clone()
        } else if let Some(r) = runs.iter().find(|r| matches!(r.verdict, Verdict::Incomplete | Verdict::Vacuous(_))) {
            r.verdict.clone()
        } else {
            Verdict::Pass
        }
    };
    let matched = match (sc.expect.verdict, &verdict) {
        (ExpectVerdict::Pass, Verdict::Pass) => true,
        (ExpectVerdict::Violation, Verdict::Violation(_)) => {
            let want = sc.expect.invariant.expect("validated");
            runs.iter()
                .any(|r| r.outcome.found.as_ref().is_some_and(|f| f.violations.iter().any(|v| v.invariant == want)))
        }
        _ => false,
    };
    // Show the shortest counterexample of the expected (or reported) invariant.
    let want = sc.expect.invariant.or(match verdict {
        Verdict::Violation(i) => Some(i),
        _ => None,
    });
    let shown = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.outcome.found.as_ref().map(|f| (i, f)))
        .filter(|(_, f)| want.is_none_or(|w| f.violations.iter().any(|v| v.invariant == w)))
        .min_by_key(|(_, f)| f.trace.len())
        .or_else(|| runs.iter().enumerate().find_map(|(i, r)| r.outcome.found.as_ref().map(|f| (i, f))))
        .map(|(i, _)| i);
    let replay = shown.map(|i| {
        let r = &runs[i];
        ReplayToken::new(&*sc.spec, r.outcome.engine, r.outcome.found.as_ref().expect("shown has found").replay.clone())
    });
    Report { scenario: sc.clone(), runs, verdict, matched, shown, replay, note }
}

/// One JSON object per scenario (`mmcheck check --json`).
#[derive(Serialize)]
pub struct JsonReport {
    pub file: String,
    pub name: String,
    pub model: &'static str,
    pub variant: &'static str,
    pub mutation: Option<&'static str>,
    pub engine: String,
    pub verdict: &'static str,
    pub invariant: Option<&'static str>,
    pub detail: Option<String>,
    pub executions: u64,
    pub seconds: f64,
    pub complete: bool,
    pub expected: String,
    pub matched: bool,
    pub replay: Option<String>,
    pub violated: BTreeMap<&'static str, u64>,
    pub coverage: BTreeMap<&'static str, u64>,
    /// The memory model of every engine that ran (`sc`, `c11`), joined with `+`.
    pub memory_model: String,
    /// The stateful engine's figures (absent when it did not run).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stats: Option<engine::StateStats>,
    pub engines: Vec<JsonEngine>,
    /// With `--traces`: the race diagram of the counterexample shown, with its `violated` and
    /// `replay:` lines, as the table prints it (absent without `--traces`, or with no
    /// counterexample).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagram: Option<String>,
}

#[derive(Serialize)]
pub struct JsonEngine {
    pub engine: String,
    pub verdict: &'static str,
    pub executions: u64,
    pub seconds: f64,
    pub complete: bool,
    /// Executions (stateful: transitions) explored until each violated invariant was first
    /// violated.
    pub first_violation: BTreeMap<&'static str, u64>,
    pub coverage: BTreeMap<&'static str, u64>,
    /// `sc` (sequentially consistent), `c11` (loom's C11 subset) or `lkmm` (stateful, LKMM).
    pub memory_model: &'static str,
    /// The stateful engine's figures.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stats: Option<engine::StateStats>,
}

impl Report {
    pub fn to_json(&self) -> JsonReport {
        let sc = &self.scenario;
        let mut violated = BTreeMap::new();
        for r in &self.runs {
            for (k, v) in &r.outcome.violated {
                *violated.entry(*k).or_insert(0) += v;
            }
        }
        JsonReport {
            file: sc.file.display().to_string(),
            name: sc.name.clone(),
            model: sc.model().name(),
            variant: sc.spec.variant(),
            mutation: sc.spec.mutation(),
            engine: self.engine_names(),
            verdict: self.verdict.kind(),
            invariant: match self.verdict {
                Verdict::Violation(i) => Some(i),
                _ => None,
            },
            detail: match &self.verdict {
                Verdict::Vacuous(m) => Some(format!("never reached: {}", m.join(", "))),
                Verdict::Disagreement(d) | Verdict::Error(d) => Some(d.clone()),
                Verdict::Incomplete => self.stopped_by().map(|w| format!("stopped by the {w}")),
                _ => self.note.clone(),
            },
            executions: self.executions(),
            seconds: self.seconds(),
            complete: self.runs.iter().all(|r| r.outcome.complete),
            expected: self.expected_label(),
            matched: self.matched,
            replay: self.replay.as_ref().map(|t| crate::term::replay_command(&sc.file, &t.to_string())),
            violated,
            coverage: self.coverage(),
            memory_model: self.memory_models(),
            stats: self.stateful(),
            engines: self
                .runs
                .iter()
                .map(|r| JsonEngine {
                    engine: r.outcome.engine.to_string(),
                    verdict: r.verdict.kind(),
                    executions: r.outcome.executions,
                    seconds: r.outcome.seconds,
                    complete: r.outcome.complete,
                    first_violation: r.outcome.first_violation.clone(),
                    coverage: r.outcome.coverage.clone(),
                    memory_model: r.outcome.engine.memory_model(),
                    stats: r.outcome.stats,
                })
                .collect(),
            diagram: None,
        }
    }
}

/// The engines `name` stands for (`mmcheck check --engine NAME`), taking their parameters from
/// the scenario where it has them (preemption bound, iterations, depth, seed) and the
/// documented defaults otherwise.
pub fn engines_named(sc: &Scenario, name: EngineName) -> Vec<Engine> {
    let pb = sc.engines.iter().find_map(|e| match e {
        Engine::Loom { preemption_bound } => Some(*preemption_bound),
        _ => None,
    });
    let (mut iterations, mut depth, mut seed) = (1000, 3, 1);
    for e in &sc.engines {
        match *e {
            Engine::ShuttlePct { iterations: i, depth: d, seed: s } => (iterations, depth, seed) = (i, d, s),
            Engine::ShuttleRandom { iterations: i, seed: s } => (iterations, seed) = (i, s),
            Engine::ShuttleDfs { iterations: i } => iterations = i,
            Engine::Loom { .. } | Engine::Stateful { .. } => {}
        }
    }
    let (max_states, memory) = sc
        .engines
        .iter()
        .find_map(|e| match e {
            Engine::Stateful { max_states, memory } => Some((*max_states, *memory)),
            _ => None,
        })
        .unwrap_or((None, Memory::Sc));
    let loom = Engine::Loom { preemption_bound: pb.flatten() };
    let pct = Engine::ShuttlePct { iterations, depth, seed };
    let random = Engine::ShuttleRandom { iterations, seed };
    let stateful = Engine::Stateful { max_states, memory };
    match name {
        EngineName::Loom => vec![loom],
        EngineName::ShuttlePct => vec![pct],
        EngineName::ShuttleRandom => vec![random],
        EngineName::ShuttleDfs => vec![Engine::ShuttleDfs { iterations }],
        EngineName::Stateful => vec![stateful],
        EngineName::All => vec![loom, pct, random, stateful],
    }
}
