//! Scenario files: a TOML description of one check (model, variant, threads, parameters,
//! engine, expected verdict), parsed into a validated [`Scenario`]. Every error names the
//! file, the line and the field. The format is documented in docs/scenarios.md.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use mmmodel::compaction;
use mmmodel::kernel::sched::TimerModel;
use mmmodel::mutation::{ModelKind, Mutation};
use mmmodel::reclaim;

use crate::engine::Engine;
use crate::monitor;
use crate::recorder::Bounds;
use crate::spec::{ModelSpec, RunSpec};

/// A scenario-file error: where, which field, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// The verdict a scenario expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectVerdict {
    Pass,
    Violation,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect {
    pub verdict: ExpectVerdict,
    /// With `Violation`: the invariant that must be reported.
    pub invariant: Option<&'static str>,
    /// Coverage events that must occur in at least one explored execution.
    pub reaches: Vec<&'static str>,
}

/// A parsed, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub file: PathBuf,
    pub name: String,
    pub description: String,
    pub spec: RunSpec,
    /// The engines to run: one, or all of them (`engine = "all"`, a cross-check).
    pub engines: Vec<Engine>,
    pub expect: Expect,
    pub max_seconds: Option<f64>,
    pub shortest_budget: Option<u64>,
}

impl Scenario {
    pub fn model(&self) -> ModelKind {
        self.spec.model.kind()
    }
}

// ---------------------------------------------------------------- raw TOML

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    model: Spanned<String>,
    variant: Spanned<String>,
    name: Option<String>,
    description: Option<String>,
    mutation: Option<Spanned<String>>,
    #[serde(default)]
    thread: Vec<Spanned<RawThread>>,
    #[serde(default)]
    params: Option<Spanned<RawParams>>,
    explore: Option<Spanned<RawExplore>>,
    expect: Spanned<RawExpect>,
    check: Option<RawCheck>,
}

/// Every key any role takes; which ones a role accepts is checked per role.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThread {
    role: Spanned<String>,
    node: Option<Spanned<i64>>,
    batches: Option<Spanned<i64>>,
    pages: Option<Spanned<i64>>,
    balances: Option<Spanned<bool>>,
    holds: Option<Spanned<i64>>,
    attempts: Option<Spanned<i64>>,
    congested_at_start: Option<Spanned<bool>>,
    tags_congested: Option<Spanned<bool>>,
    mode: Option<Spanned<String>>,
    lock: Option<Spanned<String>>,
    target: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawParams {
    timeout: Option<Spanned<String>>,
    step_bound: Option<Spanned<i64>>,
    pageblocks: Option<Spanned<i64>>,
    pages_per_block: Option<Spanned<i64>>,
    swap_cluster_max: Option<Spanned<i64>>,
    compact_cluster_max: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExplore {
    engine: Option<Spanned<String>>,
    preemption_bound: Option<Spanned<i64>>,
    iterations: Option<Spanned<i64>>,
    depth: Option<Spanned<i64>>,
    seed: Option<Spanned<i64>>,
    max_seconds: Option<Spanned<f64>>,
    shortest_budget: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    verdict: Spanned<String>,
    invariant: Option<Spanned<String>>,
    #[serde(default)]
    reaches: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    invariants: Vec<Spanned<String>>,
}

// ---------------------------------------------------------------- parsing

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].bytes().filter(|&b| b == b'\n').count() + 1
    }
    fn err(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            line: Some(self.line(span)),
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
    fn int<T: TryFrom<i64>>(&self, v: &Spanned<i64>, field: &str, range: Range<i64>) -> Result<T, ScenarioError> {
        let x = *v.get_ref();
        if !range.contains(&x) {
            return Err(self.err(v.span(), field, format!("{x} is out of range {}..={}", range.start, range.end - 1)));
        }
        T::try_from(x).map_err(|_| self.err(v.span(), field, format!("{x} is out of range")))
    }
    fn opt_int<T: TryFrom<i64>>(&self, v: &Option<Spanned<i64>>, field: &str, range: Range<i64>, default: T) -> Result<T, ScenarioError> {
        match v {
            Some(v) => self.int(v, field, range),
            None => Ok(default),
        }
    }
}

fn one_of<'s>(ctx: &Ctx, v: &Spanned<String>, field: &str, allowed: &[&'s str]) -> Result<&'s str, ScenarioError> {
    allowed.iter().find(|a| **a == v.get_ref().as_str()).copied().ok_or_else(|| {
        ctx.err(v.span(), field, format!("unknown value \"{}\"; expected one of: {}", v.get_ref(), allowed.join(", ")))
    })
}

/// Read and parse a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: None,
        field: None,
        message: format!("cannot read the file: {e}"),
    })?;
    parse(path, &text)
}

/// Parse scenario text (`path` is only used in messages and for the default name).
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { file: path, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| ctx.line(s));
        let message = e.message().to_string();
        let field = message
            .split('`')
            .nth(1)
            .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
            .map(str::to_string);
        ScenarioError { file: path.to_path_buf(), line, field, message }
    })?;

    let model_name = one_of(&ctx, &raw.model, "model", &["kswapd-stall", "compaction"])?;
    let model_kind = ModelKind::from_name(model_name).expect("listed above");

    let mutation = match &raw.mutation {
        None => None,
        Some(m) => {
            let mu = Mutation::from_name(m.get_ref()).ok_or_else(|| {
                let names: Vec<&str> = Mutation::ALL.iter().filter(|x| x.model() == model_kind).map(|x| x.name()).collect();
                ctx.err(m.span(), "mutation", format!("unknown mutation \"{}\"; this model's: {}", m.get_ref(), names.join(", ")))
            })?;
            if mu.model() != model_kind {
                return Err(ctx.err(m.span(), "mutation", format!("{} is a mutation of the {} model", mu.name(), mu.model().name())));
            }
            Some(mu)
        }
    };

    let params = raw.params.as_ref().map(|p| p.get_ref());
    let default_params = RawParams::default();
    let params = params.unwrap_or(&default_params);
    let step_bound = ctx.opt_int(&params.step_bound, "params.step_bound", 2..1_000_001, Bounds::default().step_bound)?;

    let model = match model_kind {
        ModelKind::KswapdStall => ModelSpec::KswapdStall(reclaim_config(&ctx, &raw, params, mutation)?),
        ModelKind::Compaction => ModelSpec::Compaction(compaction_config(&ctx, &raw, params, mutation)?),
    };

    // [explore]
    let default_explore = RawExplore::default();
    let ex = raw.explore.as_ref().map(|e| e.get_ref()).unwrap_or(&default_explore);
    let engine_name = match &ex.engine {
        Some(e) => one_of(&ctx, e, "explore.engine", &["loom", "shuttle-pct", "shuttle-random", "shuttle-dfs", "all"])?,
        None => "loom",
    };
    let pb = match &ex.preemption_bound {
        Some(v) => Some(ctx.int::<usize>(v, "explore.preemption_bound", 0..21)?),
        None => None,
    };
    let iterations = ctx.opt_int::<usize>(&ex.iterations, "explore.iterations", 1..100_000_001, 1000)?;
    let depth = ctx.opt_int::<usize>(&ex.depth, "explore.depth", 1..21, 3)?;
    let seed = ctx.opt_int::<u64>(&ex.seed, "explore.seed", 0..i64::MAX, 1)?;
    let loom = Engine::Loom { preemption_bound: pb };
    let pct = Engine::ShuttlePct { iterations, depth, seed };
    let random = Engine::ShuttleRandom { iterations, seed };
    let dfs = Engine::ShuttleDfs { iterations };
    let engines = match engine_name {
        "loom" => vec![loom],
        "shuttle-pct" => vec![pct],
        "shuttle-random" => vec![random],
        "shuttle-dfs" => vec![dfs],
        _ => vec![loom, pct, random],
    };
    // Engine-specific keys must not be silently ignored.
    if let Some(v) = &ex.preemption_bound {
        if !engines.iter().any(|e| matches!(e, Engine::Loom { .. })) {
            return Err(ctx.err(v.span(), "explore.preemption_bound", format!("only loom takes a preemption bound (engine is {engine_name})")));
        }
    }
    for (key, v) in [("explore.iterations", &ex.iterations), ("explore.seed", &ex.seed)] {
        if let Some(v) = v {
            if engine_name == "loom" {
                return Err(ctx.err(v.span(), key, "loom explores exhaustively; iterations and seed are for the shuttle engines"));
            }
        }
    }
    if let (Some(v), "shuttle-dfs") = (&ex.seed, engine_name) {
        return Err(ctx.err(v.span(), "explore.seed", "shuttle-dfs enumerates schedules in a fixed order; it takes no seed"));
    }
    if let Some(v) = &ex.depth {
        if !matches!(engine_name, "shuttle-pct" | "all") {
            return Err(ctx.err(v.span(), "explore.depth", "only shuttle-pct takes a depth"));
        }
    }
    let max_seconds = match &ex.max_seconds {
        Some(v) => {
            let s = *v.get_ref();
            if !(s > 0.0 && s <= 86_400.0) {
                return Err(ctx.err(v.span(), "explore.max_seconds", format!("{s} is out of range (0, 86400]")));
            }
            Some(s)
        }
        None => None,
    };
    let shortest_budget = match &ex.shortest_budget {
        Some(v) => Some(ctx.int::<u64>(v, "explore.shortest_budget", 0..100_000_001)?),
        None => None,
    };
    let tasks = model.tasks();
    for e in &engines {
        if tasks > e.max_threads() {
            let span = raw.thread.get(e.max_threads()).map(|t| t.span()).unwrap_or(0..0);
            return Err(ctx.err(
                span,
                "thread",
                format!("{tasks} threads, but {} runs at most {} (loom::MAX_THREADS is 5, and the last thread runs on loom's main thread)", e.name(), e.max_threads()),
            ));
        }
    }

    // [check] and [expect]
    let known: Vec<&'static str> = monitor::invariants(model_kind).iter().map(|i| i.id).collect();
    let inv_name = |v: &Spanned<String>, field: &str| -> Result<&'static str, ScenarioError> {
        known.iter().find(|k| **k == v.get_ref().as_str()).copied().ok_or_else(|| {
            ctx.err(v.span(), field, format!("unknown invariant \"{}\"; the {} model's: {}", v.get_ref(), model_name, known.join(", ")))
        })
    };
    let invariants = match &raw.check {
        Some(c) => {
            let mut v = Vec::new();
            for i in &c.invariants {
                v.push(inv_name(i, "check.invariants")?);
            }
            if v.is_empty() {
                return Err(ScenarioError { file: path.to_path_buf(), line: None, field: Some("check.invariants".into()), message: "empty list".into() });
            }
            v
        }
        None => known.clone(),
    };
    let exp = raw.expect.get_ref();
    let verdict = match one_of(&ctx, &exp.verdict, "expect.verdict", &["pass", "violation"])? {
        "pass" => ExpectVerdict::Pass,
        _ => ExpectVerdict::Violation,
    };
    let invariant = match &exp.invariant {
        Some(i) => {
            let id = inv_name(i, "expect.invariant")?;
            if !invariants.contains(&id) {
                return Err(ctx.err(i.span(), "expect.invariant", format!("{id} is not among check.invariants")));
            }
            if verdict == ExpectVerdict::Pass {
                return Err(ctx.err(i.span(), "expect.invariant", "a pass expects no violation; name an invariant only with verdict = \"violation\""));
            }
            Some(id)
        }
        None => None,
    };
    if verdict == ExpectVerdict::Violation && invariant.is_none() {
        return Err(ctx.err(raw.expect.span(), "expect.invariant", "required with verdict = \"violation\""));
    }
    let cov = monitor::coverage_names(model_kind);
    let mut reaches = Vec::new();
    for r in &exp.reaches {
        let name = cov.iter().find(|c| **c == r.get_ref().as_str()).copied().ok_or_else(|| {
            ctx.err(r.span(), "expect.reaches", format!("unknown event \"{}\"; the {} model's: {}", r.get_ref(), model_name, cov.join(", ")))
        })?;
        reaches.push(name);
    }

    let name = raw.name.clone().unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let mut spec = RunSpec::new(model);
    spec.bounds = Bounds { step_bound };
    spec.invariants = invariants;
    spec.target = invariant;
    Ok(Scenario {
        file: path.to_path_buf(),
        name,
        description: raw.description.clone().unwrap_or_default(),
        spec,
        engines,
        expect: Expect { verdict, invariant, reaches },
        max_seconds,
        shortest_budget,
    })
}

/// The keys each role accepts (besides `role`).
fn role_keys(role: &str) -> &'static [&'static str] {
    match role {
        "kswapd" => &["node", "batches", "pages", "balances"],
        "writer" => &["holds"],
        "allocator" => &["node", "attempts"],
        "direct-reclaim" => &["node", "batches", "pages", "tags_congested"],
        "bdi" => &["congested_at_start"],
        "compactor" => &["mode"],
        "lock-holder" => &["lock", "holds"],
        "killer" | "resched" => &["target"],
        _ => &[],
    }
}

/// The keys present in a thread table, with their spans.
fn present_keys(t: &RawThread) -> Vec<(&'static str, Range<usize>)> {
    let mut v = Vec::new();
    macro_rules! k {
        ($($f:ident),*) => { $( if let Some(x) = &t.$f { v.push((stringify!($f), x.span())); } )* };
    }
    k!(node, batches, pages, balances, holds, attempts, congested_at_start, tags_congested, mode, lock, target);
    v
}

fn check_role_keys(ctx: &Ctx, t: &RawThread, i: usize) -> Result<(), ScenarioError> {
    let role = t.role.get_ref().as_str();
    let allowed = role_keys(role);
    for (key, span) in present_keys(t) {
        if !allowed.contains(&key) {
            return Err(ctx.err(
                span,
                &format!("thread[{i}].{key}"),
                format!("role \"{role}\" takes no \"{key}\" (it takes: {})", if allowed.is_empty() { "nothing".to_string() } else { allowed.join(", ") }),
            ));
        }
    }
    Ok(())
}

fn reclaim_config(ctx: &Ctx, raw: &RawScenario, params: &RawParams, mutation: Option<Mutation>) -> Result<reclaim::Config, ScenarioError> {
    let names: Vec<&str> = reclaim::Variant::ALL.iter().map(|v| v.name()).collect();
    let variant = one_of(ctx, &raw.variant, "variant", &names).map(|n| reclaim::Variant::from_name(n).expect("listed"))?;
    let timer = match &params.timeout {
        None => TimerModel::Never,
        Some(t) => match one_of(ctx, t, "params.timeout", &["never", "any-time"])? {
            "never" => TimerModel::Never,
            _ => TimerModel::AnyTime,
        },
    };
    for (key, v) in [
        ("params.pageblocks", &params.pageblocks),
        ("params.pages_per_block", &params.pages_per_block),
        ("params.swap_cluster_max", &params.swap_cluster_max),
        ("params.compact_cluster_max", &params.compact_cluster_max),
    ] {
        if let Some(v) = v {
            return Err(ctx.err(v.span(), key, "a compaction parameter; the kswapd-stall model takes timeout and step_bound"));
        }
    }
    if raw.thread.is_empty() {
        return Err(ScenarioError { file: ctx.file.to_path_buf(), line: None, field: Some("thread".into()), message: "a scenario needs at least one [[thread]]".into() });
    }
    let mut roles = Vec::new();
    for (i, t) in raw.thread.iter().enumerate() {
        let span = t.span();
        let t = t.get_ref();
        let field = |k: &str| format!("thread[{i}].{k}");
        let role = one_of(ctx, &t.role, &field("role"), &["kswapd", "writer", "allocator", "direct-reclaim", "bdi"])?;
        check_role_keys(ctx, t, i)?;
        let node = |ctx: &Ctx| -> Result<i32, ScenarioError> {
            match &t.node {
                Some(n) => ctx.int(n, &field("node"), 0..8),
                None => Err(ctx.err(span.clone(), &field("node"), format!("role \"{role}\" needs a node (0..=7)"))),
            }
        };
        roles.push(match role {
            "kswapd" => reclaim::Role::Kswapd {
                node: node(ctx)?,
                batches: ctx.opt_int(&t.batches, &field("batches"), 1..9, 1)?,
                pages: ctx.opt_int(&t.pages, &field("pages"), 1..65, 1)?,
                balances: t.balances.as_ref().map(|b| *b.get_ref()).unwrap_or(true),
            },
            "writer" => reclaim::Role::Writer { holds: ctx.opt_int(&t.holds, &field("holds"), 1..9, 1)?, spins: 0 },
            "allocator" => reclaim::Role::Allocator { node: node(ctx)?, attempts: ctx.opt_int(&t.attempts, &field("attempts"), 1..9, 1)? },
            "direct-reclaim" => reclaim::Role::DirectReclaim {
                node: node(ctx)?,
                batches: ctx.opt_int(&t.batches, &field("batches"), 1..9, 1)?,
                pages: ctx.opt_int(&t.pages, &field("pages"), 1..65, 1)?,
                tags_congested: t.tags_congested.as_ref().map(|b| *b.get_ref()).unwrap_or(false),
            },
            _ => reclaim::Role::Bdi { congested_at_start: t.congested_at_start.as_ref().map(|b| *b.get_ref()).unwrap_or(true) },
        });
    }
    let cfg = reclaim::Config { variant, mutation, roles, timer };
    if let Err(msg) = cfg.validate() {
        let span = raw.thread.first().map(|t| t.span()).unwrap_or(0..0);
        return Err(ctx.err(span, "thread", msg));
    }
    Ok(cfg)
}

fn compaction_config(ctx: &Ctx, raw: &RawScenario, params: &RawParams, mutation: Option<Mutation>) -> Result<compaction::Config, ScenarioError> {
    let names: Vec<&str> = compaction::Variant::ALL.iter().map(|v| v.name()).collect();
    let variant = one_of(ctx, &raw.variant, "variant", &names).map(|n| compaction::Variant::from_name(n).expect("listed"))?;
    if let Some(t) = &params.timeout {
        return Err(ctx.err(
            t.span(),
            "params.timeout",
            "compaction has no timers: timeout is a kswapd-stall parameter (the compaction model takes pageblocks, \
             pages_per_block, swap_cluster_max, compact_cluster_max and step_bound)",
        ));
    }
    use compaction::Config as C;
    let pageblocks = ctx.opt_int(&params.pageblocks, "params.pageblocks", 2..9, C::DEFAULT_PAGEBLOCKS)?;
    let pages_per_block = ctx.opt_int(&params.pages_per_block, "params.pages_per_block", 2..17, C::DEFAULT_PAGES_PER_BLOCK)?;
    let power_of_two = |v: &Option<Spanned<i64>>, field: &str, x: u32, what: &str| -> Result<(), ScenarioError> {
        match v {
            Some(v) if !x.is_power_of_two() => Err(ctx.err(v.span(), field, format!("{x} is not a power of two ({what})"))),
            _ => Ok(()),
        }
    };
    power_of_two(&params.pages_per_block, "params.pages_per_block", pages_per_block, "pageblock_nr_pages is 1 << pageblock_order")?;
    let swap_cluster_max = ctx.opt_int(&params.swap_cluster_max, "params.swap_cluster_max", 1..pages_per_block as i64 + 1, C::DEFAULT_SWAP_CLUSTER_MAX.min(pages_per_block))?;
    power_of_two(&params.swap_cluster_max, "params.swap_cluster_max", swap_cluster_max, "SWAP_CLUSTER_MAX divides pageblock_nr_pages")?;
    let pfns = (pageblocks * pages_per_block) as i64;
    let compact_cluster_max = ctx.opt_int(&params.compact_cluster_max, "params.compact_cluster_max", 1..pfns + 1, C::DEFAULT_COMPACT_CLUSTER_MAX)?;
    if raw.thread.is_empty() {
        return Err(ScenarioError { file: ctx.file.to_path_buf(), line: None, field: Some("thread".into()), message: "a scenario needs at least one [[thread]]".into() });
    }
    let nr = raw.thread.len();
    let first_compactor = raw.thread.iter().position(|t| t.get_ref().role.get_ref() == "compactor");
    let mut roles = Vec::new();
    for (i, t) in raw.thread.iter().enumerate() {
        let span = t.span();
        let t = t.get_ref();
        let field = |k: &str| format!("thread[{i}].{k}");
        let role = one_of(ctx, &t.role, &field("role"), &["compactor", "lock-holder", "killer", "resched"])?;
        check_role_keys(ctx, t, i)?;
        let target = |ctx: &Ctx| -> Result<usize, ScenarioError> {
            let pid = match &t.target {
                Some(v) => ctx.int::<usize>(v, &field("target"), 0..nr as i64)?,
                None => first_compactor.ok_or_else(|| ctx.err(span.clone(), &field("target"), "no compactor to target"))?,
            };
            if raw.thread[pid].get_ref().role.get_ref() != "compactor" {
                let s = t.target.as_ref().map(|v| v.span()).unwrap_or(span.clone());
                return Err(ctx.err(s, &field("target"), format!("thread {pid} is not a compactor (targets are thread indexes, from 0)")));
            }
            Ok(pid)
        };
        roles.push(match role {
            "compactor" => {
                let modes: Vec<&str> = compaction::Mode::ALL.iter().map(|m| m.name()).collect();
                let mode = match &t.mode {
                    Some(m) => compaction::Mode::from_name(one_of(ctx, m, &field("mode"), &modes)?).expect("listed"),
                    None => compaction::Mode::Async,
                };
                compaction::Role::Compactor { mode }
            }
            "lock-holder" => {
                let lock = match &t.lock {
                    Some(l) => compaction::HeldLock::from_name(one_of(ctx, l, &field("lock"), &["lru_lock", "zone_lock", "zone->lock", "lru", "zone"])?).expect("listed"),
                    None => return Err(ctx.err(span.clone(), &field("lock"), "a lock-holder needs a lock: \"lru_lock\" or \"zone_lock\"")),
                };
                compaction::Role::LockHolder { lock, holds: ctx.opt_int(&t.holds, &field("holds"), 1..9, 1)? }
            }
            "killer" => compaction::Role::Killer { target: target(ctx)? },
            _ => compaction::Role::Resched { target: target(ctx)? },
        });
    }
    let cfg = compaction::Config { variant, mutation, roles, pageblocks, pages_per_block, swap_cluster_max, compact_cluster_max };
    if let Err(msg) = cfg.validate() {
        let span = raw.thread.first().map(|t| t.span()).unwrap_or(0..0);
        return Err(ctx.err(span, "thread", msg));
    }
    Ok(cfg)
}

/// Every `*.toml` file under `path` (a file or a folder, recursively), sorted.
pub fn collect_files(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let meta = std::fs::metadata(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: None,
        field: None,
        message: format!("cannot read: {e}"),
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd = std::fs::read_dir(&dir).map_err(|e| ScenarioError { file: dir.clone(), line: None, field: None, message: format!("cannot read the folder: {e}") })?;
        for entry in rd.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
