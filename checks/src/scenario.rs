//! Scenario files: a TOML description of one check (model, variant, threads, parameters,
//! engine, expected verdict), parsed into a validated [`Scenario`]. Every error names the
//! file, the line and the field with its table. The format is documented in
//! docs/scenarios.md.
//!
//! The checker's own tables (`[explore]`, `[expect]`, `[check]`) are parsed here; the
//! model's (`[[thread]]`, `[params]`) reach the model as typed [`Fields`] through the
//! registry, and its errors come back naming their field.
//!
//! Every error of a file is reported ([`parse_all_with`]), not only the first: an unknown
//! key, a value of the wrong type or out of range, a name that is not the model's, a
//! duplicate in a list, each table checked on its own. A check that needs another part (the
//! model's names need a known `model`; the engine's keys need a known `engine`) is left out
//! when that part is wrong, so one mistake gives one error. The text is read with
//! toml_edit's parser, which keeps the place of every key at every depth, so that an error
//! in any table names its line and its field with the table (`explore.max_secnds`).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mmmodel::model::{FieldError, Fields, Value};
use toml::Spanned;

use crate::engine::{Engine, EngineName, Memory};
use crate::files::FileError;
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
        write!(f, ": {}", crate::term::escape_control(&self.message))
    }
}

impl std::error::Error for ScenarioError {}

impl From<FileError> for ScenarioError {
    fn from(e: FileError) -> ScenarioError {
        ScenarioError { file: e.path, line: None, field: None, message: e.message }
    }
}

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
    /// `[explore] reduce`: the stateful engine's reductions (`None`: the default, every
    /// reduction where it is sound).
    pub reduce: Option<crate::engine::Reduce>,
}

impl Scenario {
    pub fn model(&self) -> &'static dyn AnyModel {
        self.spec.model()
    }
}

// ---------------------------------------------------------------- raw TOML

/// A TOML value as the parser reads it; a table keeps the place of each of its keys.
#[derive(Debug)]
enum Node {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Date,
    Array(Vec<Spanned<Node>>),
    Table(Tab),
}

impl Node {
    /// What it is, for "expected X, found Y".
    fn kind(&self) -> &'static str {
        match self {
            Node::Str(_) => "a string",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a float",
            Node::Bool(_) => "a boolean",
            Node::Date => "a date",
            Node::Array(_) => "an array",
            Node::Table(_) => "a table",
        }
    }
}

/// A table: its keys, each with its span and its value, in file order.
#[derive(Debug, Default)]
struct Tab {
    entries: Vec<(Spanned<String>, Spanned<Node>)>,
}

impl Tab {
    fn get(&self, key: &str) -> Option<&Spanned<Node>> {
        self.entries.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
    }
}

/// The document with the place of every key and value at every depth (toml_edit's parser keeps
/// them all; serde's `Spanned` keeps them one level down only).
fn document(ctx: &Ctx) -> Result<Tab, ScenarioError> {
    let doc = toml_edit::ImDocument::parse(ctx.text).map_err(|e| ScenarioError {
        file: ctx.file.to_path_buf(),
        line: e.span().map(|s| ctx.line(s)),
        // A bad value (a number too large for 64 bits, say) names its field, as every other
        // error in a value does (issue 37, row 10).
        field: e.span().and_then(|s| field_at(ctx.text, s.start)),
        // One line: TOML's messages can have several ("invalid string\nexpected ...").
        message: {
            let m = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
            // toml_edit has no words for some errors (a key with no value at the end of the file).
            if m.is_empty() {
                "invalid TOML here (a key with no value?)".to_string()
            } else {
                m
            }
        },
    })?;
    Ok(std_table(doc.as_table(), 0..0))
}

/// `TABLE.KEY` (or `KEY` at the top) of a `KEY = VALUE` line holding byte `at`, from the
/// nearest table header above it; none if the line is not one (a header, a syntax error).
fn field_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|h| h.trim_start_matches('[').split(']').next().unwrap_or("").trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

fn std_table(t: &toml_edit::Table, at: Range<usize>) -> Tab {
    let mut entries = Vec::new();
    for (k, item) in t.iter() {
        if item.is_none() {
            continue;
        }
        let span = t.key(k).and_then(|k| k.span()).unwrap_or_else(|| at.clone());
        entries.push((Spanned::new(span.clone(), k.to_string()), item_node(item, span)));
    }
    Tab { entries }
}

fn inline_table(t: &toml_edit::InlineTable, at: Range<usize>) -> Tab {
    let mut entries = Vec::new();
    for (k, v) in t.iter() {
        let span = t.key(k).and_then(|k| k.span()).unwrap_or_else(|| at.clone());
        entries.push((Spanned::new(span.clone(), k.to_string()), value_node(v, span)));
    }
    Tab { entries }
}

/// `at`: the place to give it if the parser has none (its key's).
fn item_node(item: &toml_edit::Item, at: Range<usize>) -> Spanned<Node> {
    use toml_edit::Item;
    match item {
        Item::Value(v) => value_node(v, at),
        Item::Table(t) => {
            let span = t.span().unwrap_or(at);
            Spanned::new(span.clone(), Node::Table(std_table(t, span)))
        }
        Item::ArrayOfTables(a) => {
            let tables: Vec<Spanned<Node>> = a
                .iter()
                .map(|t| {
                    let span = t.span().unwrap_or_else(|| at.clone());
                    Spanned::new(span.clone(), Node::Table(std_table(t, span)))
                })
                .collect();
            let span = tables.first().map_or(at, |t| t.span());
            Spanned::new(span, Node::Array(tables))
        }
        Item::None => Spanned::new(at, Node::Table(Tab::default())),
    }
}

fn value_node(v: &toml_edit::Value, at: Range<usize>) -> Spanned<Node> {
    use toml_edit::Value as V;
    let span = v.span().unwrap_or(at);
    let node = match v {
        V::String(s) => Node::Str(s.value().clone()),
        V::Integer(i) => Node::Int(*i.value()),
        V::Float(f) => Node::Float(*f.value()),
        V::Boolean(b) => Node::Bool(*b.value()),
        V::Datetime(_) => Node::Date,
        V::Array(a) => Node::Array(a.iter().map(|x| value_node(x, span.clone())).collect()),
        V::InlineTable(t) => Node::Table(inline_table(t, span.clone())),
    };
    Spanned::new(span, node)
}

// ---------------------------------------------------------------- parsing

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
    /// Where each model field is, for the model's errors (`thread[1].node` → its span).
    spans: BTreeMap<String, Range<usize>>,
    /// Every error found so far.
    errors: Vec<ScenarioError>,
}

impl Ctx<'_> {
    fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
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
    fn push(&mut self, e: ScenarioError) {
        self.errors.push(e);
    }
    /// The value, or `None` with its error kept.
    fn keep<T>(&mut self, r: Result<T, ScenarioError>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
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

/// `table.key` (`key` at the top level).
fn field_name(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// The edit distance of `a` and `b` (for "did you mean").
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// One of the checker's tables (or the top level), read key by key: an unknown key or a value
/// of the wrong type is an error naming `table.key`, kept, and the key reads as absent.
struct Table<'t> {
    /// `explore`, `expect`, `check`, `thread[2]`, or "" for the top level.
    name: String,
    tab: &'t Tab,
}

impl<'t> Table<'t> {
    fn field(&self, key: &str) -> String {
        field_name(&self.name, key)
    }
    fn has(&self, key: &str) -> bool {
        self.tab.get(key).is_some()
    }
    /// Every key not in `known` is an error.
    fn unknown_keys(&self, ctx: &mut Ctx, known: &[&str]) {
        for (k, _) in &self.tab.entries {
            let key = k.get_ref().as_str();
            if known.contains(&key) {
                continue;
            }
            let near = known
                .iter()
                .copied()
                .filter(|n| distance(key, n) <= 2.max(n.len() / 4))
                .min_by_key(|n| distance(key, n));
            let hint = near.map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
            let whose = if self.name.is_empty() { "a scenario file".to_string() } else { format!("[{}]", self.name) };
            ctx.push(ctx.err(
                k.span(),
                &self.field(key),
                format!("unknown key{hint}; {whose} takes: {}", known.join(", ")),
            ));
        }
    }
    fn wrong_type(&self, ctx: &mut Ctx, key: &str, v: &Spanned<Node>, expected: &str) {
        ctx.push(ctx.err(v.span(), &self.field(key), format!("expected {expected}, found {}", v.get_ref().kind())));
    }
    fn str(&self, ctx: &mut Ctx, key: &str) -> Option<Spanned<String>> {
        let v = self.tab.get(key)?;
        match v.get_ref() {
            Node::Str(s) => Some(Spanned::new(v.span(), s.clone())),
            _ => {
                self.wrong_type(ctx, key, v, "a string");
                None
            }
        }
    }
    fn int(&self, ctx: &mut Ctx, key: &str) -> Option<Spanned<i64>> {
        let v = self.tab.get(key)?;
        match v.get_ref() {
            Node::Int(i) => Some(Spanned::new(v.span(), *i)),
            _ => {
                self.wrong_type(ctx, key, v, "an integer");
                None
            }
        }
    }
    /// A number (an integer is one too).
    fn float(&self, ctx: &mut Ctx, key: &str) -> Option<Spanned<f64>> {
        let v = self.tab.get(key)?;
        match v.get_ref() {
            Node::Float(f) => Some(Spanned::new(v.span(), *f)),
            Node::Int(i) => Some(Spanned::new(v.span(), *i as f64)),
            _ => {
                self.wrong_type(ctx, key, v, "a number");
                None
            }
        }
    }
    /// An array of strings: the strings, each once (an element of another type, and a
    /// duplicate, are errors).
    fn strings(&self, ctx: &mut Ctx, key: &str) -> Option<Vec<Spanned<String>>> {
        let v = self.tab.get(key)?;
        let Node::Array(items) = v.get_ref() else {
            self.wrong_type(ctx, key, v, "an array of strings");
            return None;
        };
        let mut out: Vec<Spanned<String>> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.get_ref() {
                Node::Str(s) if out.iter().any(|o| o.get_ref() == s) => {
                    ctx.push(ctx.err(item.span(), &self.field(key), format!("\"{s}\" is listed twice; name each once")))
                }
                Node::Str(s) => out.push(Spanned::new(item.span(), s.clone())),
                other => ctx.push(ctx.err(
                    item.span(),
                    &format!("{}[{i}]", self.field(key)),
                    format!("expected a string, found {}", other.kind()),
                )),
            }
        }
        Some(out)
    }
    /// A table under `key`, read as `name`.
    fn table(&self, ctx: &mut Ctx, key: &'static str) -> Option<(Range<usize>, Table<'t>)> {
        let v = self.tab.get(key)?;
        match v.get_ref() {
            Node::Table(t) => Some((v.span(), Table { name: key.to_string(), tab: t })),
            _ => {
                self.wrong_type(ctx, key, v, &format!("a table ([{key}])"));
                None
            }
        }
    }
}

/// The most errors reported for one file (a file of thousands of unknown keys is not a
/// scenario; the rest are counted).
pub const MAX_ERRORS: usize = 50;

/// The top-level keys.
const TOP_KEYS: &[&str] = &[
    "model",
    "variant",
    "variants",
    "name",
    "description",
    "mutation",
    "thread",
    "params",
    "explore",
    "check",
    "expect",
];

/// Read and parse a scenario file of one configuration with the shipped models (a file with
/// `variants` is several: read it with [`load_each`]).
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    load_with(&Registry::default(), path)
}

/// Read and parse a scenario file with the models of `reg` (read with
/// [`crate::files::read_scenario`]: a regular, UTF-8 file of at most 1 MiB); the first error.
pub fn load_with(reg: &Registry, path: &Path) -> Result<Scenario, ScenarioError> {
    load_all_with(reg, path).map_err(first)
}

/// Like [`load_with`], with every error of the file, in line order.
pub fn load_all_with(reg: &Registry, path: &Path) -> Result<Scenario, Vec<ScenarioError>> {
    let text = crate::files::read_scenario(path).map_err(|e| vec![ScenarioError::from(e)])?;
    parse_all_with(reg, path, &text)
}

/// Every scenario a file describes, with the shipped models: one, or with `variants` one per
/// variant (`NAME@VARIANT`), in the order the file lists them; the first error.
pub fn load_each(path: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    load_each_with(&Registry::default(), path).map_err(first)
}

/// Like [`load_each`], with the models of `reg` and every error of the file.
pub fn load_each_with(reg: &Registry, path: &Path) -> Result<Vec<Scenario>, Vec<ScenarioError>> {
    let text = crate::files::read_scenario(path).map_err(|e| vec![ScenarioError::from(e)])?;
    parse_each_all_with(reg, path, &text)
}

/// Parse scenario text with the shipped models (`path` is only used in messages and for the
/// default name); the first error.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse_with(&Registry::default(), path, text)
}

/// Like [`parse`], with every error of the file, in line order.
pub fn parse_all(path: &Path, text: &str) -> Result<Scenario, Vec<ScenarioError>> {
    parse_all_with(&Registry::default(), path, text)
}

/// Parse scenario text with the models of `reg`; the first error (in line order).
pub fn parse_with(reg: &Registry, path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse_all_with(reg, path, text).map_err(first)
}

/// Every scenario of the text, with the shipped models (see [`load_each`]); the first error.
pub fn parse_each(path: &Path, text: &str) -> Result<Vec<Scenario>, ScenarioError> {
    parse_each_all_with(&Registry::default(), path, text).map_err(first)
}

fn first(mut errors: Vec<ScenarioError>) -> ScenarioError {
    errors.remove(0)
}

/// Parse the text of one configuration with the models of `reg`, every error in line order.
/// A file that describes several (`variants`) is refused on its `variants` field: a caller
/// that takes them reads it with [`parse_each_all_with`].
pub fn parse_all_with(reg: &Registry, path: &Path, text: &str) -> Result<Scenario, Vec<ScenarioError>> {
    let mut each = parse_each_all_with(reg, path, text)?;
    if each.len() == 1 {
        return Ok(each.remove(0));
    }
    let names: Vec<&str> = each.iter().map(|s| s.spec.variant()).collect();
    Err(vec![ScenarioError {
        file: path.to_path_buf(),
        line: None,
        field: Some("variants".into()),
        message: format!(
            "the file describes {} configurations, one per variant ({}); this command takes one (`mmcheck check` \
             and `mmcheck matrix` take them all)",
            each.len(),
            names.join(", ")
        ),
    }])
}

/// Parse scenario text with the models of `reg`, one step per table: every scenario it
/// describes (one per variant with `variants`, else one). Every error is collected: each
/// table is checked on its own, and a check that needs another part (the names of a model,
/// the engine) is skipped when that part is wrong. The errors come back sorted by line
/// (errors about the file as a whole last), never empty.
pub fn parse_each_all_with(reg: &Registry, path: &Path, text: &str) -> Result<Vec<Scenario>, Vec<ScenarioError>> {
    let mut ctx = Ctx { file: path, text, spans: BTreeMap::new(), errors: Vec::new() };
    let doc = document(&ctx).map_err(|e| vec![e])?;
    let top = Table { name: String::new(), tab: &doc };
    top.unknown_keys(&mut ctx, TOP_KEYS);
    let name = top.str(&mut ctx, "name");
    let description = top.str(&mut ctx, "description");
    let (model, variants, mutation) = model_table(&mut ctx, reg, &top);
    let threads = thread_list(&mut ctx, &top);
    let roles = threads.as_ref().and_then(|t| thread_tables(&mut ctx, model, t));
    let params = params_table(&mut ctx, &top);
    let explore = match top.table(&mut ctx, "explore") {
        Some((_, t)) => explore_table(&mut ctx, &t),
        None if top.has("explore") => None,
        None => explore_table(&mut ctx, &Table { name: "explore".into(), tab: &Tab::default() }),
    };
    let invariants = check_table(&mut ctx, model, &top);
    let expect = expect_table(&mut ctx, model, &top, invariants.as_ref(), variants.as_ref());

    // The thread limits and needs of the engines.
    let mut engine_refused_count = false;
    if let (Some(ex), Some(threads)) = (&explore, &threads) {
        let tasks = threads.len();
        if let Some((e, why)) = ex.engines.iter().find_map(|e| engine_refusal(*e, tasks).map(|w| (*e, w))) {
            engine_refused_count = tasks > e.max_threads();
            let span = threads.get(e.max_threads()).or(threads.first()).map(|t| t.span()).unwrap_or(0..0);
            let why = if ex.engines.len() > 1 { format!("{why} (engine = \"all\" runs {})", e.name()) } else { why };
            ctx.push(ctx.err(span, "thread", why));
        }
    }

    // The model's own checks, on names already checked: one configuration per variant.
    let mut specs = Vec::new();
    // (Built even when [check] or [expect] are wrong, for the model's errors: the specs are
    // then not used.)
    if let (Some(model), Some(variants), Some(mutation), Some(roles), Some((params, bounds))) =
        (model, &variants, mutation, roles, params)
    {
        if let Some(t) = threads.as_ref().and_then(|t| t.first()) {
            ctx.spans.insert("thread".into(), t.span());
        }
        // A model's error is the same under every variant, or names the variants it is about.
        let mut model_errors: Vec<(ScenarioError, Vec<&str>)> = Vec::new();
        for variant in &variants.names {
            let target = expect.as_ref().and_then(|e| e.of(variant)).and_then(|e| e.invariant).map(str::to_string);
            let parts = Parts {
                variant: variant.clone(),
                mutation: mutation.clone(),
                threads: roles.clone(),
                params: params.clone(),
                bounds,
                invariants: invariants
                    .as_ref()
                    .and_then(|i| i.as_ref())
                    .map(|v| v.iter().map(|s| s.to_string()).collect()),
                target,
            };
            match model.build(parts) {
                Ok(s) => specs.push(s),
                Err(es) => {
                    let limit = format!("at most {} threads", mmmodel::ghost::MAX_TASKS);
                    for e in es {
                        // The engine's own thread limit, reported above, is the one that matters.
                        if engine_refused_count && e.field == "thread" && e.message == limit {
                            continue;
                        }
                        let e = ctx.field_error(e);
                        match model_errors.iter_mut().find(|(x, _)| *x == e) {
                            Some((_, vs)) => vs.push(variant),
                            None => model_errors.push((e, vec![variant])),
                        }
                    }
                }
            }
        }
        for (mut e, vs) in model_errors {
            if vs.len() < variants.names.len() {
                e.message = format!("{} (variant {})", e.message, vs.join(", "));
            }
            ctx.push(e);
        }
    }

    if !ctx.errors.is_empty() {
        let mut errors = ctx.errors;
        errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        if errors.len() > MAX_ERRORS {
            let more = errors.len() - MAX_ERRORS;
            errors.truncate(MAX_ERRORS);
            errors.push(ScenarioError {
                file: path.to_path_buf(),
                line: None,
                field: None,
                message: format!("and {more} more errors (is this a scenario file?)"),
            });
        }
        return Err(errors);
    }
    let (Some(variants), Some(explore), Some(expect)) = (variants, explore, expect) else {
        unreachable!("every part that is missing has an error")
    };
    let name = name
        .map(|n| n.into_inner())
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let description = description.map(|d| d.into_inner()).unwrap_or_default();
    Ok(specs
        .into_iter()
        .map(|spec| {
            let variant = spec.variant();
            Scenario {
                file: path.to_path_buf(),
                name: if variants.multi { format!("{name}@{variant}") } else { name.clone() },
                description: description.clone(),
                expect: expect.of(variant).expect("an expectation for every variant").clone(),
                spec,
                engines: explore.engines.clone(),
                max_seconds: explore.max_seconds,
                shortest_budget: explore.shortest_budget,
                reduce: explore.reduce,
            }
        })
        .collect())
}

/// Why `engine` cannot run a scenario of `tasks` threads, if it cannot: more threads than it
/// runs, or one thread under PCT (shuttle's PCT scheduler needs two threads to schedule, and
/// stops with a panic otherwise).
pub fn engine_refusal(engine: Engine, tasks: usize) -> Option<String> {
    let max = engine.max_threads();
    if tasks > max {
        let why = match engine {
            Engine::Loom { .. } => "loom::MAX_THREADS is 5, and the last thread runs on loom's main thread".to_string(),
            _ => format!("the model's ghost state tracks at most {} tasks", mmmodel::ghost::MAX_TASKS),
        };
        return Some(format!("{tasks} threads, but {} runs at most {max} ({why})", engine.name()));
    }
    if tasks < 2 && matches!(engine, Engine::ShuttlePct { .. }) {
        return Some(format!(
            "{tasks} thread, but shuttle-pct needs at least two (PCT schedules by changing the priorities of \
             threads); for one thread use loom or stateful, which are exhaustive and quick here"
        ));
    }
    None
}

/// The variants a file is checked under: `variant = "V"` (one scenario, named as the file)
/// or `variants = ["V", ...]` / `variants = "all"` (one scenario per variant, `NAME@V`).
#[derive(Debug, Clone)]
struct Variants {
    names: Vec<String>,
    multi: bool,
}

/// `model`, `variant` or `variants`, `mutation`: names of the model's. `None`: missing or
/// wrong (with its error kept); the mutation is `Some(None)` when there is none.
#[allow(clippy::type_complexity)]
fn model_table(
    ctx: &mut Ctx,
    reg: &Registry,
    top: &Table,
) -> (Option<&'static dyn AnyModel>, Option<Variants>, Option<Option<String>>) {
    let names = reg.names();
    let model_name = top.str(ctx, "model");
    if !top.has("model") {
        ctx.push(ctx.whole("model", format!("missing; one of: {}", names.join(", "))));
    }
    let model = model_name.and_then(|m| {
        let r = ctx.one_of(&m, "model", &names).map(|n| reg.find(n).expect("listed"));
        ctx.keep(r)
    });
    let variant = top.str(ctx, "variant");
    let list = variants_value(ctx, top);
    let mutation = top.str(ctx, "mutation");
    let bad_mutation = mutation.is_none() && top.has("mutation");
    let both = top.has("variant") && top.has("variants");
    if both {
        let span = top.tab.get("variants").map(|v| v.span()).unwrap_or(0..0);
        ctx.push(ctx.err(
            span,
            "variants",
            "give either variant (one configuration) or variants (the same configuration under several), not both",
        ));
    }
    let Some(model) = model else {
        if !top.has("variant") && !top.has("variants") {
            ctx.push(ctx.whole("variant", "missing"));
        }
        return (None, None, None);
    };
    if !top.has("variant") && !top.has("variants") {
        ctx.push(ctx.whole(
            "variant",
            format!(
                "missing; the {} model's: {} (or variants = [...] or \"all\", one scenario per variant)",
                model.name(),
                model.variants().join(", ")
            ),
        ));
    }
    let known = model.variants();
    let variants = if both {
        None
    } else if top.has("variant") {
        variant
            .and_then(|v| {
                let r = ctx.one_of(&v, "variant", &known).map(str::to_string);
                ctx.keep(r)
            })
            .map(|v| Variants { names: vec![v], multi: false })
    } else {
        match list {
            Some(VariantList::All) => {
                Some(Variants { names: known.iter().map(|v| v.to_string()).collect(), multi: true })
            }
            Some(VariantList::Named(vs)) => {
                let before = ctx.errors.len();
                let mut out = Vec::new();
                for v in &vs {
                    let r = ctx.one_of(v, "variants", &known).map(str::to_string);
                    if let Some(v) = ctx.keep(r) {
                        out.push(v);
                    }
                }
                (ctx.errors.len() == before).then_some(Variants { names: out, multi: true })
            }
            None => None,
        }
    };
    let mutation = match mutation {
        None if bad_mutation => None,
        None => Some(None),
        Some(m) => {
            ctx.spans.insert("mutation".into(), m.span());
            let other = reg
                .models()
                .iter()
                .find(|o| o.name() != model.name() && o.mutations().iter().any(|x| x.name == m.get_ref()));
            let mine: Vec<&str> = model.mutations().iter().map(|x| x.name).collect();
            if let Some(other) = other {
                ctx.push(ctx.err(
                    m.span(),
                    "mutation",
                    format!("{} is a mutation of the {} model", m.get_ref(), other.name()),
                ));
                None
            } else if !mine.contains(&m.get_ref().as_str()) {
                ctx.push(ctx.err(
                    m.span(),
                    "mutation",
                    format!("unknown mutation \"{}\"; this model's: {}", m.get_ref(), mine.join(", ")),
                ));
                None
            } else if top.has("variants") {
                ctx.push(ctx.err(
                    m.span(),
                    "mutation",
                    "a mutant is checked under one variant: give variant = \"...\", not variants",
                ));
                None
            } else {
                Some(Some(m.into_inner()))
            }
        }
    };
    (Some(model), variants, mutation)
}

/// What `variants` names, before the model's names are checked.
enum VariantList {
    All,
    Named(Vec<Spanned<String>>),
}

/// `variants`: `"all"` or a non-empty list of strings, each once. `None`: absent or wrong
/// (with its error kept).
fn variants_value(ctx: &mut Ctx, top: &Table) -> Option<VariantList> {
    let v = top.tab.get("variants")?;
    match v.get_ref() {
        Node::Str(s) if s == "all" => Some(VariantList::All),
        Node::Str(s) => {
            ctx.push(ctx.err(
                v.span(),
                "variants",
                format!(
                    "expected a list of variants or \"all\", found the string \"{s}\" (for one variant, write \
                     variant = \"{s}\")"
                ),
            ));
            None
        }
        Node::Array(items) if items.is_empty() => {
            ctx.push(ctx.err(v.span(), "variants", "empty list; name at least one variant, or \"all\""));
            None
        }
        Node::Array(_) => {
            let before = ctx.errors.len();
            let list = top.strings(ctx, "variants")?;
            (ctx.errors.len() == before).then_some(VariantList::Named(list))
        }
        _ => {
            top.wrong_type(ctx, "variants", v, "a list of variants or \"all\"");
            None
        }
    }
}

/// A model value as a model reads it.
fn value(v: &Node) -> Value {
    match v {
        Node::Int(i) => Value::Int(*i),
        Node::Bool(b) => Value::Bool(*b),
        Node::Str(s) => Value::Str(s.clone()),
        Node::Float(f) => Value::Float(*f),
        Node::Array(_) => Value::Other("an array"),
        Node::Table(_) => Value::Other("a table"),
        Node::Date => Value::Other("a date"),
    }
}

/// A model table as [`Fields`], in file order, recording where each key is.
fn fields(ctx: &mut Ctx, table: &str, raw: &Tab, skip: &[&str]) -> Fields {
    let mut entries = Vec::new();
    for (k, v) in &raw.entries {
        if skip.contains(&k.get_ref().as_str()) {
            continue;
        }
        ctx.spans.insert(format!("{table}.{}", k.get_ref()), k.span());
        entries.push((k.get_ref().clone(), value(v.get_ref())));
    }
    Fields::new(table, entries)
}

/// `[[thread]]`: the tables, if `thread` is a non-empty array of tables.
fn thread_list<'d>(ctx: &mut Ctx, top: &Table<'d>) -> Option<Vec<&'d Spanned<Node>>> {
    let Some(v) = top.tab.get("thread") else {
        ctx.push(ctx.whole("thread", "a scenario needs at least one [[thread]]"));
        return None;
    };
    let Node::Array(items) = v.get_ref() else {
        top.wrong_type(ctx, "thread", v, "an array of tables ([[thread]], one per thread)");
        return None;
    };
    if items.is_empty() {
        ctx.push(ctx.err(v.span(), "thread", "a scenario needs at least one [[thread]]"));
        return None;
    }
    let before = ctx.errors.len();
    for (i, t) in items.iter().enumerate() {
        if !matches!(t.get_ref(), Node::Table(_)) {
            ctx.push(ctx.err(
                t.span(),
                &format!("thread[{i}]"),
                format!("expected a table, found {}", t.get_ref().kind()),
            ));
        }
    }
    (ctx.errors.len() == before).then(|| items.iter().collect())
}

/// `[[thread]]`: each one's role kind, and its other keys for the model.
fn thread_tables(
    ctx: &mut Ctx,
    model: Option<&dyn AnyModel>,
    threads: &[&Spanned<Node>],
) -> Option<Vec<(String, Fields)>> {
    let kinds: Vec<&str> = model.map(|m| m.role_kinds().iter().map(|r| r.name).collect()).unwrap_or_default();
    let before = ctx.errors.len();
    let mut out = Vec::new();
    for (i, t) in threads.iter().enumerate() {
        let Node::Table(tab) = t.get_ref() else { continue };
        let table = format!("thread[{i}]");
        ctx.spans.insert(table.clone(), t.span());
        let role = Table { name: table.clone(), tab }.str(ctx, "role");
        let field = format!("{table}.role");
        if !tab.entries.iter().any(|(k, _)| k.get_ref() == "role") {
            let one_of = if kinds.is_empty() { String::new() } else { format!("; one of: {}", kinds.join(", ")) };
            ctx.push(ctx.err(t.span(), &field, format!("missing{one_of}")));
            continue;
        }
        let Some(role) = role else { continue };
        if model.is_none() {
            continue;
        }
        let r = ctx.one_of(&role, &field, &kinds).map(str::to_string);
        if let Some(kind) = ctx.keep(r) {
            out.push((kind, fields(ctx, &table, tab, &["role"])));
        }
    }
    (ctx.errors.len() == before && model.is_some()).then_some(out)
}

/// `[params]`: the checker's `step_bound`, and the rest for the model.
fn params_table(ctx: &mut Ctx, top: &Table) -> Option<(Fields, Bounds)> {
    let empty = Tab::default();
    let (span, t) = match top.table(ctx, "params") {
        Some((span, t)) => (Some(span), t),
        None if top.has("params") => return None,
        None => (None, Table { name: "params".into(), tab: &empty }),
    };
    let mut bounds = Bounds::default();
    if t.has("step_bound") {
        let v = t.int(ctx, "step_bound")?;
        let r = ctx.int(&v, "params.step_bound", 2..1_000_001);
        bounds.step_bound = ctx.keep(r)?;
    }
    if let Some(span) = span {
        ctx.spans.insert("params".into(), span);
    }
    Some((fields(ctx, "params", t.tab, &["step_bound"]), bounds))
}

/// `[explore]`, resolved.
struct Explore {
    engines: Vec<Engine>,
    max_seconds: Option<f64>,
    shortest_budget: Option<u64>,
    reduce: Option<crate::engine::Reduce>,
}

const EXPLORE_KEYS: &[&str] = &[
    "engine",
    "preemption_bound",
    "iterations",
    "depth",
    "seed",
    "max_seconds",
    "shortest_budget",
    "max_states",
    "reduce",
    "memory",
];

fn explore_table(ctx: &mut Ctx, ex: &Table) -> Option<Explore> {
    let before = ctx.errors.len();
    ex.unknown_keys(ctx, EXPLORE_KEYS);
    let engine = match ex.str(ctx, "engine") {
        Some(e) => {
            let names: Vec<&str> = EngineName::ALL.iter().map(|n| n.name()).collect();
            let r = ctx.one_of(&e, "explore.engine", &names).map(|n| EngineName::from_name(n).expect("listed"));
            ctx.keep(r)
        }
        None if ex.has("engine") => None,
        None => Some(EngineName::Loom),
    };
    let pb_v = ex.int(ctx, "preemption_bound");
    let iterations_v = ex.int(ctx, "iterations");
    let depth_v = ex.int(ctx, "depth");
    let seed_v = ex.int(ctx, "seed");
    let max_states_v = ex.int(ctx, "max_states");
    let max_seconds_v = ex.float(ctx, "max_seconds");
    let budget_v = ex.int(ctx, "shortest_budget");
    let reduce_v = ex.strings(ctx, "reduce");
    let memory_v = ex.str(ctx, "memory");
    let mut memory = Memory::Sc;
    if let Some(v) = &memory_v {
        let names: Vec<&str> = Memory::ALL.iter().map(|m| m.name()).collect();
        let r = ctx.one_of(v, "explore.memory", &names).map(|n| Memory::from_name(n).expect("listed"));
        memory = ctx.keep(r).unwrap_or(memory);
    }
    let mut reduce = None;
    if let Some(list) = &reduce_v {
        let mut r = crate::engine::Reduce::NONE;
        let mut named: Vec<&str> = Vec::new();
        let mut sorted_span = None;
        for e in list {
            let name = e.get_ref().as_str();
            if !crate::engine::Reduce::NAMES.contains(&name) {
                ctx.push(ctx.err(
                    e.span(),
                    "explore.reduce",
                    format!(
                        "unknown reduction \"{name}\"; the stateful engine's: {}",
                        crate::engine::Reduce::NAMES.join(", ")
                    ),
                ));
            } else if named.contains(&name) {
                ctx.push(ctx.err(e.span(), "explore.reduce", format!("\"{name}\" is named twice")));
            } else {
                named.push(name);
                match name {
                    "symmetry" => r.symmetry = true,
                    "por" => r.por = true,
                    "persistent" => r.persistent = true,
                    "snapshot" => r.snapshot = true,
                    "live-locals" => r.live_locals = true,
                    "projection" => r.projection = true,
                    "sorted-symmetry" => {
                        r.sorted_symmetry = true;
                        sorted_span = Some(e.span());
                    }
                    _ => unreachable!("Reduce::NAMES"),
                }
            }
        }
        if let (Some(span), false) = (sorted_span, r.symmetry) {
            ctx.push(
                ctx.err(
                    span,
                    "explore.reduce",
                    "\"sorted-symmetry\" is a way of computing \"symmetry\"'s canonical form: name \"symmetry\" too"
                        .to_string(),
                ),
            );
        }
        reduce = Some(r);
    }

    let mut pb = None;
    if let Some(v) = &pb_v {
        let r = ctx.int::<usize>(v, "explore.preemption_bound", 0..21);
        pb = ctx.keep(r);
    }
    let mut iterations = 1000;
    if let Some(v) = &iterations_v {
        let r = ctx.int::<usize>(v, "explore.iterations", 1..100_000_001);
        iterations = ctx.keep(r).unwrap_or(iterations);
    }
    let mut depth = 3;
    if let Some(v) = &depth_v {
        let r = ctx.int::<usize>(v, "explore.depth", 1..21);
        depth = ctx.keep(r).unwrap_or(depth);
    }
    let mut seed = 1;
    if let Some(v) = &seed_v {
        let r = ctx.int::<u64>(v, "explore.seed", 0..i64::MAX);
        seed = ctx.keep(r).unwrap_or(seed);
    }
    let mut max_states = None;
    if let Some(v) = &max_states_v {
        let r = ctx.int::<u64>(v, "explore.max_states", 1..10_000_000_001);
        if let Some(n) = ctx.keep(r) {
            let need = n.saturating_mul(crate::engine::stateful::BYTES_PER_STATE);
            let have = crate::engine::stateful::available_memory();
            if need > have {
                ctx.push(ctx.err(
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
            max_states = Some(n);
        }
    }
    let mut max_seconds = None;
    if let Some(v) = &max_seconds_v {
        let s = *v.get_ref();
        if s > 0.0 && s <= 86_400.0 {
            max_seconds = Some(s);
        } else {
            // Echoed as written (1e300, not its 300 digits).
            let written = ctx.text.get(v.span()).map(str::trim).filter(|w| !w.is_empty()).map(str::to_string);
            let shown = written.unwrap_or_else(|| s.to_string());
            ctx.push(ctx.err(v.span(), "explore.max_seconds", format!("{shown} is out of range (0, 86400]")));
        }
    }
    let mut shortest_budget = None;
    if let Some(v) = &budget_v {
        let r = ctx.int::<u64>(v, "explore.shortest_budget", 0..100_000_001);
        shortest_budget = ctx.keep(r);
    }

    // Engine-specific keys must not be silently ignored.
    let engine = engine?;
    let name = engine.name();
    if let Some(v) = &max_states_v {
        if !matches!(engine, EngineName::Stateful | EngineName::All) {
            ctx.push(ctx.err(
                v.span(),
                "explore.max_states",
                format!("only the stateful engine stores states (engine is {name})"),
            ));
        }
    }
    if let (Some(v), false) = (&memory_v, matches!(engine, EngineName::Stateful | EngineName::All)) {
        ctx.push(ctx.err(
            v.span(),
            "explore.memory",
            format!(
                "only the stateful engine takes a memory model (engine is {name}: loom explores its C11 subset, \
                 shuttle sequential consistency)"
            ),
        ));
    }
    if let (Some(list), false) = (&reduce_v, matches!(engine, EngineName::Stateful | EngineName::All)) {
        let span = list.first().map(|e| e.span()).unwrap_or(0..0);
        ctx.push(ctx.err(span, "explore.reduce", format!("only the stateful engine reduces (engine is {name})")));
    }
    if let Some(v) = &pb_v {
        if !matches!(engine, EngineName::Loom | EngineName::All) {
            ctx.push(ctx.err(
                v.span(),
                "explore.preemption_bound",
                format!("only loom takes a preemption bound (engine is {name})"),
            ));
        }
    }
    if matches!(engine, EngineName::Loom | EngineName::Stateful) {
        for (key, v) in [("explore.iterations", &iterations_v), ("explore.seed", &seed_v)] {
            if let Some(v) = v {
                ctx.push(ctx.err(
                    v.span(),
                    key,
                    format!("{name} explores exhaustively; iterations and seed are for the shuttle engines"),
                ));
            }
        }
    }
    if let (Some(v), EngineName::Stateful) = (&budget_v, engine) {
        ctx.push(ctx.err(
            v.span(),
            "explore.shortest_budget",
            "the stateful engine makes its counterexample shortest by a breadth-first search of its own; \
             shortest_budget is for loom and the shuttle engines",
        ));
    }
    if let (Some(v), EngineName::ShuttleDfs) = (&seed_v, engine) {
        ctx.push(ctx.err(
            v.span(),
            "explore.seed",
            "shuttle-dfs enumerates schedules in a fixed order; it takes no seed",
        ));
    }
    if let Some(v) = &depth_v {
        if !matches!(engine, EngineName::ShuttlePct | EngineName::All) {
            ctx.push(ctx.err(v.span(), "explore.depth", "only shuttle-pct takes a depth"));
        }
    }
    if ctx.errors.len() != before {
        return None;
    }
    let loom = Engine::Loom { preemption_bound: pb };
    let pct = Engine::ShuttlePct { iterations, depth, seed };
    let random = Engine::ShuttleRandom { iterations, seed };
    let stateful = Engine::Stateful { max_states, memory };
    let engines = match engine {
        EngineName::Loom => vec![loom],
        EngineName::ShuttlePct => vec![pct],
        EngineName::ShuttleRandom => vec![random],
        EngineName::ShuttleDfs => vec![Engine::ShuttleDfs { iterations }],
        EngineName::Stateful => vec![stateful],
        EngineName::All => vec![loom, pct, random, stateful],
    };
    Some(Explore { engines, max_seconds, shortest_budget, reduce })
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

/// `[check]`: the invariants checked (`Some(None)`: all of the model's; `None`: wrong, or the
/// model is unknown).
fn check_table(ctx: &mut Ctx, model: Option<&dyn AnyModel>, top: &Table) -> Option<Option<Vec<&'static str>>> {
    let Some((_, c)) = top.table(ctx, "check") else {
        return if top.has("check") { None } else { Some(None) };
    };
    let before = ctx.errors.len();
    c.unknown_keys(ctx, &["invariants"]);
    let list = c.strings(ctx, "invariants");
    if !c.has("invariants") {
        ctx.push(ctx.whole(
            "check.invariants",
            "missing; list the invariants to check, or leave out [check] to check all of the model's",
        ));
    }
    let mut v = Vec::new();
    if let (Some(list), Some(model)) = (&list, model) {
        if list.is_empty() {
            ctx.push(ctx.whole("check.invariants", "empty list"));
        }
        for i in list {
            let r = invariant_name(ctx, model, i, "check.invariants");
            if let Some(id) = ctx.keep(r) {
                v.push(id);
            }
        }
    }
    (ctx.errors.len() == before && model.is_some()).then_some(Some(v))
}

/// `[expect]`, resolved: one expectation for the file's one variant, or one per variant
/// (`by_variant`, with `variants`).
struct Expects {
    single: Option<Expect>,
    by_variant: Vec<(String, Expect)>,
}

impl Expects {
    /// The expectation of the scenario of `variant`.
    fn of(&self, variant: &str) -> Option<&Expect> {
        self.single.as_ref().or_else(|| self.by_variant.iter().find(|(v, _)| v == variant).map(|(_, e)| e))
    }
}

/// `expect.by_variant`'s value for one variant: `"pass"` or `"violation(INVARIANT)"`.
fn variant_verdict(text: &str) -> Option<(ExpectVerdict, Option<&str>)> {
    match text.trim() {
        "pass" => Some((ExpectVerdict::Pass, None)),
        t => {
            let inv = t.strip_prefix("violation(")?.strip_suffix(')')?.trim();
            (!inv.is_empty()).then_some((ExpectVerdict::Violation, Some(inv)))
        }
    }
}

/// `[expect]`. `variants`: the file's variants, if they are known.
fn expect_table(
    ctx: &mut Ctx,
    model: Option<&dyn AnyModel>,
    top: &Table,
    checked: Option<&Option<Vec<&'static str>>>,
    variants: Option<&Variants>,
) -> Option<Expects> {
    let Some((span, exp)) = top.table(ctx, "expect") else {
        if !top.has("expect") {
            let what = if top.has("variants") {
                "[expect] with by_variant = { \"VARIANT\" = \"pass\" or \"violation(INVARIANT)\", ... }"
            } else {
                "[expect] with verdict = \"pass\" or \"violation\""
            };
            ctx.push(ctx.whole("expect", format!("missing; every scenario says what it expects: {what}")));
        }
        return None;
    };
    let before = ctx.errors.len();
    exp.unknown_keys(ctx, &["verdict", "invariant", "reaches", "by_variant"]);
    // With `variants` the verdicts are per variant, in by_variant; with `variant`, one.
    let multi = top.has("variants") && !top.has("variant");
    if multi {
        for key in ["verdict", "invariant"] {
            if let Some((k, _)) = exp.tab.entries.iter().find(|(k, _)| k.get_ref() == key) {
                ctx.push(ctx.err(
                    k.span(),
                    &exp.field(key),
                    "a file with variants expects a verdict per variant: give them in expect.by_variant",
                ));
            }
        }
    } else if let Some((k, _)) = exp.tab.entries.iter().find(|(k, _)| k.get_ref() == "by_variant") {
        ctx.push(ctx.err(
            k.span(),
            "expect.by_variant",
            "only a file with variants = [...] or \"all\" expects a verdict per variant; this one names one \
             variant: give verdict",
        ));
    }
    let verdict = if multi {
        None
    } else {
        match exp.str(ctx, "verdict") {
            Some(v) => {
                let r = ctx.one_of(&v, "expect.verdict", &["pass", "violation"]).map(|v| match v {
                    "pass" => ExpectVerdict::Pass,
                    _ => ExpectVerdict::Violation,
                });
                ctx.keep(r)
            }
            None => {
                if !exp.has("verdict") {
                    ctx.push(ctx.err(span.clone(), "expect.verdict", "missing; \"pass\" or \"violation\""));
                }
                None
            }
        }
    };
    // An invariant named in an expectation must be the model's and among those checked.
    let known_invariant = |ctx: &mut Ctx, i: &Spanned<String>, field: &str| -> Option<&'static str> {
        let model = model?;
        let r = invariant_name(ctx, model, i, field);
        let id = ctx.keep(r)?;
        if let Some(Some(c)) = checked {
            if !c.contains(&id) {
                ctx.push(ctx.err(i.span(), field, format!("{id} is not among check.invariants")));
            }
        }
        Some(id)
    };
    let mut invariant = None;
    if !multi {
        let invariant_v = exp.str(ctx, "invariant");
        if let Some(i) = &invariant_v {
            invariant = known_invariant(ctx, i, "expect.invariant");
        }
        if let (Some(i), Some(ExpectVerdict::Pass)) = (&invariant_v, verdict) {
            ctx.push(ctx.err(
                i.span(),
                "expect.invariant",
                "a pass expects no violation; name an invariant only with verdict = \"violation\"",
            ));
        }
        if verdict == Some(ExpectVerdict::Violation) && !exp.has("invariant") {
            ctx.push(ctx.err(span.clone(), "expect.invariant", "required with verdict = \"violation\""));
        }
    }
    let mut reaches = Vec::new();
    if let (Some(list), Some(model)) = (exp.strings(ctx, "reaches"), model) {
        let cov = model.coverage_names();
        for r in &list {
            match cov.iter().find(|c| **c == r.get_ref().as_str()) {
                Some(c) => reaches.push(*c),
                None => ctx.push(ctx.err(
                    r.span(),
                    "expect.reaches",
                    format!("unknown event \"{}\"; the {} model's: {}", r.get_ref(), model.name(), cov.join(", ")),
                )),
            }
        }
    }
    let mut by_variant: Vec<(String, Expect)> = Vec::new();
    if multi {
        match exp.tab.get("by_variant") {
            None => ctx.push(ctx.err(
                span.clone(),
                "expect.by_variant",
                "missing; a file with variants expects a verdict per variant: by_variant = { \"VARIANT\" = \
                 \"pass\" or \"violation(INVARIANT)\", ... }",
            )),
            Some(v) => match v.get_ref() {
                Node::Table(t) => {
                    for (k, val) in &t.entries {
                        let key = k.get_ref().as_str();
                        let field = format!("expect.by_variant.{key}");
                        if let Some(model) = model {
                            if !model.variants().contains(&key) {
                                ctx.push(ctx.err(
                                    k.span(),
                                    &field,
                                    format!(
                                        "unknown variant \"{key}\"; the {} model's: {}",
                                        model.name(),
                                        model.variants().join(", ")
                                    ),
                                ));
                                continue;
                            }
                        }
                        if let Some(vs) = variants {
                            if !vs.names.iter().any(|n| n == key) {
                                ctx.push(ctx.err(
                                    k.span(),
                                    &field,
                                    format!("{key} is not among the file's variants ({})", vs.names.join(", ")),
                                ));
                                continue;
                            }
                        }
                        let Node::Str(text) = val.get_ref() else {
                            ctx.push(ctx.err(
                                val.span(),
                                &field,
                                format!(
                                    "expected a string, \"pass\" or \"violation(INVARIANT)\", found {}",
                                    val.get_ref().kind()
                                ),
                            ));
                            continue;
                        };
                        let Some((verdict, inv)) = variant_verdict(text) else {
                            ctx.push(ctx.err(
                                val.span(),
                                &field,
                                format!("expected \"pass\" or \"violation(INVARIANT)\", found \"{text}\""),
                            ));
                            continue;
                        };
                        let invariant = match inv {
                            Some(i) => {
                                let i = Spanned::new(val.span(), i.to_string());
                                match known_invariant(ctx, &i, &field) {
                                    Some(id) => Some(id),
                                    None => continue,
                                }
                            }
                            None => None,
                        };
                        by_variant.push((key.to_string(), Expect { verdict, invariant, reaches: reaches.clone() }));
                    }
                    if let Some(vs) = variants {
                        let missing: Vec<&str> = vs
                            .names
                            .iter()
                            .filter(|n| !t.entries.iter().any(|(k, _)| k.get_ref() == *n))
                            .map(String::as_str)
                            .collect();
                        if !missing.is_empty() {
                            ctx.push(ctx.err(
                                v.span(),
                                "expect.by_variant",
                                format!(
                                    "no verdict for variant {} (every variant of the file needs one)",
                                    missing.join(", ")
                                ),
                            ));
                        }
                    }
                }
                _ => exp.wrong_type(ctx, "by_variant", v, "a table (by_variant = { \"VARIANT\" = \"pass\", ... })"),
            },
        }
    }
    if ctx.errors.len() != before || model.is_none() {
        return None;
    }
    if multi {
        return Some(Expects { single: None, by_variant });
    }
    let verdict = verdict?;
    Some(Expects { single: Some(Expect { verdict, invariant, reaches }), by_variant })
}

/// The scenario files `path` stands for (a file, or every `*.toml` file in a folder,
/// recursively, sorted): see [`crate::files::collect`].
pub fn collect_files(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    Ok(crate::files::collect(&[path.to_path_buf()])?)
}
