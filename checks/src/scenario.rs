//! Scenario files: a TOML description of one check (model, variant, threads, parameters,
//! engine, expected verdict), parsed into a validated [`Scenario`]. Every error names the
//! file, the line and the field with its table. The format is documented in
//! docs/scenarios.md.
//!
//! The checker's own tables (`[explore]`, `[expect]`, `[check]`) are parsed here; the
//! model's (`[[thread]]`, `[params]`) reach the model as typed [`Fields`] through the
//! registry, and its errors come back naming their field.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mmmodel::model::{FieldError, Fields, Value};
use serde::Deserialize;
use toml::Spanned;

use crate::engine::{Engine, EngineName};
use crate::recorder::Bounds;
use crate::registry::{AnyModel, Parts, Registry};
use crate::spec::AnySpec;

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
        write!(f, "{}", crate::term::escape_control(&self.file.display().to_string()))?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {}", crate::term::escape_control(field))?;
        }
        write!(f, ": {}", crate::term::escape_control_lines(&self.message))
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
    pub spec: Arc<dyn AnySpec>,
    /// The engines to run: one, or all of them (`engine = "all"`, a cross-check).
    pub engines: Vec<Engine>,
    pub expect: Expect,
    pub max_seconds: Option<f64>,
    pub shortest_budget: Option<u64>,
}

impl Scenario {
    pub fn model(&self) -> &'static dyn AnyModel {
        self.spec.model()
    }
}

// ---------------------------------------------------------------- raw TOML

/// A table whose keys belong to the model: each key with its span, each value with its own.
type RawTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    model: Spanned<String>,
    variant: Spanned<String>,
    name: Option<String>,
    description: Option<String>,
    mutation: Option<Spanned<String>>,
    #[serde(default)]
    thread: Vec<Spanned<RawTable>>,
    #[serde(default)]
    params: Option<Spanned<RawTable>>,
    explore: Option<Spanned<RawExplore>>,
    expect: Spanned<RawExpect>,
    check: Option<RawCheck>,
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
    max_states: Option<Spanned<i64>>,
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
    /// Where each model field is, for the model's errors (`thread[1].node` → its span).
    spans: BTreeMap<String, Range<usize>>,
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
    /// An error with no place in the file.
    fn whole(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.file.to_path_buf(),
            line: None,
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
    /// A model's error, placed at its field (or the field's table).
    fn field_error(&self, e: FieldError) -> ScenarioError {
        let span = self
            .spans
            .get(&e.field)
            .or_else(|| self.spans.get(e.field.rsplit_once('.').map_or("", |(t, _)| t)))
            .cloned();
        ScenarioError {
            file: self.file.to_path_buf(),
            line: span.map(|s| self.line(s)),
            field: Some(e.field),
            message: e.message,
        }
    }
    fn int<T: TryFrom<i64>>(&self, v: &Spanned<i64>, field: &str, range: Range<i64>) -> Result<T, ScenarioError> {
        let x = *v.get_ref();
        if !range.contains(&x) {
            return Err(self.err(v.span(), field, format!("{x} is out of range {}..={}", range.start, range.end - 1)));
        }
        T::try_from(x).map_err(|_| self.err(v.span(), field, format!("{x} is out of range")))
    }
    fn opt_int<T: TryFrom<i64>>(
        &self,
        v: &Option<Spanned<i64>>,
        field: &str,
        range: Range<i64>,
        default: T,
    ) -> Result<T, ScenarioError> {
        match v {
            Some(v) => self.int(v, field, range),
            None => Ok(default),
        }
    }
    /// `v` must be one of `allowed`.
    fn one_of<'s>(&self, v: &Spanned<String>, field: &str, allowed: &[&'s str]) -> Result<&'s str, ScenarioError> {
        allowed.iter().find(|a| **a == v.get_ref().as_str()).copied().ok_or_else(|| {
            self.err(
                v.span(),
                field,
                format!("unknown value \"{}\"; expected one of: {}", v.get_ref(), allowed.join(", ")),
            )
        })
    }
}

/// Read and parse a scenario file with the shipped models.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    load_with(&Registry::default(), path)
}

/// Read and parse a scenario file with the models of `reg` (read with
/// [`crate::files::read_scenario`]: a regular, UTF-8 file of at most 1 MiB).
pub fn load_with(reg: &Registry, path: &Path) -> Result<Scenario, ScenarioError> {
    let text = crate::files::read_scenario(path)?;
    parse_with(reg, path, &text)
}

/// Parse scenario text with the shipped models (`path` is only used in messages and for the
/// default name).
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse_with(&Registry::default(), path, text)
}

/// Parse scenario text with the models of `reg`: one step per table.
pub fn parse_with(reg: &Registry, path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let mut ctx = Ctx { file: path, text, spans: BTreeMap::new() };
    let raw = toml_text(&ctx)?;
    let (model, variant, mutation) = model_table(&ctx, reg, &raw)?;
    let threads = thread_tables(&mut ctx, model, &raw)?;
    let (params, bounds) = params_table(&mut ctx, &raw)?;
    let explore = explore_table(&ctx, &raw)?;
    let invariants = check_table(&ctx, model, &raw)?;
    let expect = expect_table(&ctx, model, &raw, invariants.as_deref())?;

    ctx.spans.insert("thread".into(), raw.thread.first().map(|t| t.span()).unwrap_or(0..0));
    if let Some(m) = &raw.mutation {
        ctx.spans.insert("mutation".into(), m.span());
    }
    let parts = Parts {
        variant,
        mutation,
        threads,
        params,
        bounds,
        invariants: invariants.map(|v| v.iter().map(|s| s.to_string()).collect()),
        target: expect.invariant.map(str::to_string),
    };
    let spec = model.build(parts).map_err(|e| ctx.field_error(e))?;

    let tasks = spec.tasks();
    for e in &explore.engines {
        if tasks > e.max_threads() {
            let span = raw.thread.get(e.max_threads()).map(|t| t.span()).unwrap_or(0..0);
            return Err(ctx.err(
                span,
                "thread",
                format!(
                    "{tasks} threads, but {} runs at most {} (loom::MAX_THREADS is 5, and the last thread runs on loom's main thread)",
                    e.name(),
                    e.max_threads()
                ),
            ));
        }
    }
    let name = raw
        .name
        .clone()
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    Ok(Scenario {
        file: path.to_path_buf(),
        name,
        description: raw.description.clone().unwrap_or_default(),
        spec,
        engines: explore.engines,
        expect,
        max_seconds: explore.max_seconds,
        shortest_budget: explore.shortest_budget,
    })
}

/// The TOML itself.
fn toml_text(ctx: &Ctx) -> Result<RawScenario, ScenarioError> {
    toml::from_str(ctx.text).map_err(|e| {
        let line = e.span().map(|s| ctx.line(s));
        let message = e.message().to_string();
        let field = message
            .split('`')
            .nth(1)
            .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
            .map(str::to_string);
        ScenarioError { file: ctx.file.to_path_buf(), line, field, message }
    })
}

/// `model`, `variant`, `mutation`: names of the model's.
fn model_table(
    ctx: &Ctx,
    reg: &Registry,
    raw: &RawScenario,
) -> Result<(&'static dyn AnyModel, String, Option<String>), ScenarioError> {
    let names = reg.names();
    let model = reg.find(ctx.one_of(&raw.model, "model", &names)?).expect("listed");
    let variant = ctx.one_of(&raw.variant, "variant", &model.variants())?.to_string();
    let mutation = match &raw.mutation {
        None => None,
        Some(m) => {
            if let Some(other) = reg
                .models()
                .iter()
                .find(|o| o.name() != model.name() && o.mutations().iter().any(|x| x.name == m.get_ref()))
            {
                return Err(ctx.err(
                    m.span(),
                    "mutation",
                    format!("{} is a mutation of the {} model", m.get_ref(), other.name()),
                ));
            }
            let mine: Vec<&str> = model.mutations().iter().map(|x| x.name).collect();
            if !mine.contains(&m.get_ref().as_str()) {
                return Err(ctx.err(
                    m.span(),
                    "mutation",
                    format!("unknown mutation \"{}\"; this model's: {}", m.get_ref(), mine.join(", ")),
                ));
            }
            Some(m.get_ref().clone())
        }
    };
    Ok((model, variant, mutation))
}

/// A TOML value as a model reads it.
fn value(v: &toml::Value) -> Value {
    match v {
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Array(_) => Value::Other("an array"),
        toml::Value::Table(_) => Value::Other("a table"),
        toml::Value::Datetime(_) => Value::Other("a date"),
    }
}

/// A model table as [`Fields`], recording where each key is.
fn fields(ctx: &mut Ctx, table: &str, raw: &RawTable, skip: &[&str]) -> Fields {
    let mut entries = Vec::new();
    for (k, v) in raw {
        if skip.contains(&k.get_ref().as_str()) {
            continue;
        }
        ctx.spans.insert(format!("{table}.{}", k.get_ref()), k.span());
        entries.push((k.get_ref().clone(), value(v.get_ref())));
    }
    // File order, so that the first bad key is the one reported.
    entries.sort_by_key(|(k, _)| ctx.spans[&format!("{table}.{k}")].start);
    Fields::new(table, entries)
}

/// `[[thread]]`: each one's role kind, and its other keys for the model.
fn thread_tables(
    ctx: &mut Ctx,
    model: &dyn AnyModel,
    raw: &RawScenario,
) -> Result<Vec<(String, Fields)>, ScenarioError> {
    if raw.thread.is_empty() {
        return Err(ctx.whole("thread", "a scenario needs at least one [[thread]]"));
    }
    let kinds: Vec<&str> = model.role_kinds().iter().map(|r| r.name).collect();
    let mut out = Vec::new();
    for (i, t) in raw.thread.iter().enumerate() {
        let table = format!("thread[{i}]");
        ctx.spans.insert(table.clone(), t.span());
        let role = t.get_ref().iter().find(|(k, _)| k.get_ref() == "role");
        let kind = match role {
            None => {
                return Err(ctx.err(
                    t.span(),
                    &format!("{table}.role"),
                    format!("missing; one of: {}", kinds.join(", ")),
                ))
            }
            Some((k, v)) => match v.get_ref() {
                toml::Value::String(s) => {
                    let s = Spanned::new(v.span(), s.clone());
                    ctx.one_of(&s, &format!("{table}.role"), &kinds)?.to_string()
                }
                other => {
                    return Err(ctx.err(
                        k.span(),
                        &format!("{table}.role"),
                        format!("expected a string, found {}", other.type_str()),
                    ))
                }
            },
        };
        out.push((kind, fields(ctx, &table, t.get_ref(), &["role"])));
    }
    Ok(out)
}

/// `[params]`: the checker's `step_bound`, and the rest for the model.
fn params_table(ctx: &mut Ctx, raw: &RawScenario) -> Result<(Fields, Bounds), ScenarioError> {
    let empty = RawTable::new();
    let table = raw.params.as_ref().map(|p| p.get_ref()).unwrap_or(&empty);
    let mut bounds = Bounds::default();
    if let Some((k, v)) = table.iter().find(|(k, _)| k.get_ref() == "step_bound") {
        let toml::Value::Integer(x) = v.get_ref() else {
            return Err(ctx.err(
                k.span(),
                "params.step_bound",
                format!("expected an integer, found {}", v.get_ref().type_str()),
            ));
        };
        bounds.step_bound = ctx.int(&Spanned::new(v.span(), *x), "params.step_bound", 2..1_000_001)?;
    }
    if let Some(p) = &raw.params {
        ctx.spans.insert("params".into(), p.span());
    }
    Ok((fields(ctx, "params", table, &["step_bound"]), bounds))
}

/// `[explore]`, resolved.
struct Explore {
    engines: Vec<Engine>,
    max_seconds: Option<f64>,
    shortest_budget: Option<u64>,
}

fn explore_table(ctx: &Ctx, raw: &RawScenario) -> Result<Explore, ScenarioError> {
    let default_explore = RawExplore::default();
    let ex = raw.explore.as_ref().map(|e| e.get_ref()).unwrap_or(&default_explore);
    let engine = match &ex.engine {
        Some(e) => {
            let names: Vec<&str> = EngineName::ALL.iter().map(|n| n.name()).collect();
            EngineName::from_name(ctx.one_of(e, "explore.engine", &names)?).expect("listed")
        }
        None => EngineName::Loom,
    };
    let pb = match &ex.preemption_bound {
        Some(v) => Some(ctx.int::<usize>(v, "explore.preemption_bound", 0..21)?),
        None => None,
    };
    let iterations = ctx.opt_int::<usize>(&ex.iterations, "explore.iterations", 1..100_000_001, 1000)?;
    let depth = ctx.opt_int::<usize>(&ex.depth, "explore.depth", 1..21, 3)?;
    let seed = ctx.opt_int::<u64>(&ex.seed, "explore.seed", 0..i64::MAX, 1)?;
    let max_states = match &ex.max_states {
        Some(v) => {
            let n = ctx.int::<u64>(v, "explore.max_states", 1..10_000_000_001)?;
            let need = n.saturating_mul(crate::engine::stateful::BYTES_PER_STATE);
            let have = crate::engine::stateful::available_memory();
            if need > have {
                return Err(ctx.err(
                    v.span(),
                    "explore.max_states",
                    format!(
                        "{n} states need about {} MiB for the visited-state table, more than this machine can give \
                         ({} MiB); lower it",
                        need >> 20,
                        have >> 20
                    ),
                ));
            }
            Some(n)
        }
        None => None,
    };
    let loom = Engine::Loom { preemption_bound: pb };
    let pct = Engine::ShuttlePct { iterations, depth, seed };
    let random = Engine::ShuttleRandom { iterations, seed };
    let stateful = Engine::Stateful { max_states };
    let engines = match engine {
        EngineName::Loom => vec![loom],
        EngineName::ShuttlePct => vec![pct],
        EngineName::ShuttleRandom => vec![random],
        EngineName::ShuttleDfs => vec![Engine::ShuttleDfs { iterations }],
        EngineName::Stateful => vec![stateful],
        EngineName::All => vec![loom, pct, random, stateful],
    };
    if let Some(v) = &ex.max_states {
        if !matches!(engine, EngineName::Stateful | EngineName::All) {
            return Err(ctx.err(
                v.span(),
                "explore.max_states",
                format!("only the stateful engine stores states (engine is {})", engine.name()),
            ));
        }
    }
    // Engine-specific keys must not be silently ignored.
    let name = engine.name();
    if let Some(v) = &ex.preemption_bound {
        if !engines.iter().any(|e| matches!(e, Engine::Loom { .. })) {
            return Err(ctx.err(
                v.span(),
                "explore.preemption_bound",
                format!("only loom takes a preemption bound (engine is {name})"),
            ));
        }
    }
    for (key, v) in [("explore.iterations", &ex.iterations), ("explore.seed", &ex.seed)] {
        if let (Some(v), EngineName::Loom) = (v, engine) {
            return Err(ctx.err(
                v.span(),
                key,
                "loom explores exhaustively; iterations and seed are for the shuttle engines",
            ));
        }
    }
    if let (Some(v), EngineName::ShuttleDfs) = (&ex.seed, engine) {
        return Err(ctx.err(
            v.span(),
            "explore.seed",
            "shuttle-dfs enumerates schedules in a fixed order; it takes no seed",
        ));
    }
    if let Some(v) = &ex.depth {
        if !matches!(engine, EngineName::ShuttlePct | EngineName::All) {
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
    Ok(Explore { engines, max_seconds, shortest_budget })
}

/// `invariant` must be one of the model's.
fn invariant_name(
    ctx: &Ctx,
    model: &dyn AnyModel,
    v: &Spanned<String>,
    field: &str,
) -> Result<&'static str, ScenarioError> {
    let known: Vec<&'static str> = model.invariants().iter().map(|i| i.id).collect();
    known.iter().find(|k| **k == v.get_ref().as_str()).copied().ok_or_else(|| {
        ctx.err(
            v.span(),
            field,
            format!("unknown invariant \"{}\"; the {} model's: {}", v.get_ref(), model.name(), known.join(", ")),
        )
    })
}

/// `[check]`: the invariants checked (`None`: all of the model's).
fn check_table(ctx: &Ctx, model: &dyn AnyModel, raw: &RawScenario) -> Result<Option<Vec<&'static str>>, ScenarioError> {
    let Some(c) = &raw.check else { return Ok(None) };
    let mut v = Vec::new();
    for i in &c.invariants {
        v.push(invariant_name(ctx, model, i, "check.invariants")?);
    }
    if v.is_empty() {
        return Err(ctx.whole("check.invariants", "empty list"));
    }
    Ok(Some(v))
}

/// `[expect]`.
fn expect_table(
    ctx: &Ctx,
    model: &dyn AnyModel,
    raw: &RawScenario,
    checked: Option<&[&'static str]>,
) -> Result<Expect, ScenarioError> {
    let exp = raw.expect.get_ref();
    let verdict = match ctx.one_of(&exp.verdict, "expect.verdict", &["pass", "violation"])? {
        "pass" => ExpectVerdict::Pass,
        _ => ExpectVerdict::Violation,
    };
    let invariant = match &exp.invariant {
        Some(i) => {
            let id = invariant_name(ctx, model, i, "expect.invariant")?;
            if checked.is_some_and(|c| !c.contains(&id)) {
                return Err(ctx.err(i.span(), "expect.invariant", format!("{id} is not among check.invariants")));
            }
            if verdict == ExpectVerdict::Pass {
                return Err(ctx.err(
                    i.span(),
                    "expect.invariant",
                    "a pass expects no violation; name an invariant only with verdict = \"violation\"",
                ));
            }
            Some(id)
        }
        None => None,
    };
    if verdict == ExpectVerdict::Violation && invariant.is_none() {
        return Err(ctx.err(raw.expect.span(), "expect.invariant", "required with verdict = \"violation\""));
    }
    let cov = model.coverage_names();
    let mut reaches = Vec::new();
    for r in &exp.reaches {
        let name = cov.iter().find(|c| **c == r.get_ref().as_str()).copied().ok_or_else(|| {
            ctx.err(
                r.span(),
                "expect.reaches",
                format!("unknown event \"{}\"; the {} model's: {}", r.get_ref(), model.name(), cov.join(", ")),
            )
        })?;
        reaches.push(name);
    }
    Ok(Expect { verdict, invariant, reaches })
}

/// The scenario files `path` stands for (a file, or every `*.toml` file in a folder,
/// recursively, sorted): see [`crate::files::collect`].
pub fn collect_files(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    Ok(crate::files::collect(&[path.to_path_buf()])?)
}
