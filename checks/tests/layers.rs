//! The layering of the source (issue 35): no file of `checks/src` or `model/src` imports, through
//! any chain of files, a file that imports it back; and no file of `checks/src/engine/` or
//! `model/src/platform/` is longer than 600 lines before its test module.
//!
//! Pure file reading: no engine runs. Every `.rs` file under `checks/src` and `model/src` is
//! read and a file -> file graph built: an edge A -> B when A names an item through a path that
//! resolves to module file B: `use crate::..`, `use super::..`, `use self::..`, a path that
//! starts with a child module or with a module a `use` brought in, `crate::..`/`super::..`
//! paths written inline in code, `mmmodel::..` (and the binary's `mmcheck::..`) paths into the
//! other crate, `pub use` re-exports. Comments and string literals are skipped, and so are test
//! modules (`#[cfg(test)] mod tests { .. }`). A path resolves to the deepest module that exists
//! as a file (`a/b.rs` or `a/b/mod.rs`, or a `#[path = ".."]` on its `mod` declaration): an
//! item named at its end resolves to the module that holds it (for a re-exported item, the
//! module that re-exports it). A `mod child;` declaration is not an edge.
//!
//! Every strongly connected component of more than one file is a cycle; the test fails,
//! naming the files, the edges inside it and the line of each, for a cycle that is not one of
//! [`KNOWN_CYCLES`] (empty today), and for an entry of [`KNOWN_CYCLES`] that is no
//! longer a cycle, so that the list can only shrink. [`KNOWN_LONG`] does the same for long
//! files.
//!
//! Run: `cargo test --release -p mmcheck --test layers`.
//!
//! List the graph (every edge with its lines, then the cycles):
//! `cargo test --release -p mmcheck --test layers -- --ignored --nocapture print_graph`;
//! with `LAYERS_DOT=1` in the environment it prints the graph in Graphviz's dot format instead.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The import cycles of today, each the set of files of one strongly connected component
/// (any order): none, in checks/src or model/src (issue 35 removed the last three). The list
/// can only shrink: never add an entry; a new cycle is broken by moving the names both files
/// need into a file that imports neither (as `runtime/types.rs`, `monitor/types.rs` and the
/// binary's `cli/output.rs` do). `print_graph` (see the module docs) lists the edges.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// The most lines a file of `checks/src/engine/` or `model/src/platform/` may have before its
/// test module.
const MAX_LINES: usize = 600;

/// Today's longer files and their length (lines before the test module): a file here may not
/// grow, and its entry goes when it is at most [`MAX_LINES`] long (issue 35).
const KNOWN_LONG: &[(&str, usize)] = &[];

/// The directories whose files [`MAX_LINES`] bounds.
const BOUNDED: &[&str] = &["checks/src/engine/", "model/src/platform/"];

/// The directories read.
const SOURCES: &[&str] = &["checks/src", "model/src"];

/// The crates: the name other crates use, the root file, the crates it may name.
const CRATES: &[Krate] = &[
    Krate { name: "mmmodel", root: "model/src/lib.rs", externs: &[] },
    Krate { name: "mmcheck", root: "checks/src/lib.rs", externs: &["mmmodel"] },
    Krate { name: "mmcheck (bin)", root: "checks/src/main.rs", externs: &["mmmodel", "mmcheck"] },
];

// ---- the resolver ----------------------------------------------------------------------------

/// A crate of the graph.
#[derive(Debug, Clone, Copy)]
struct Krate {
    name: &'static str,
    root: &'static str,
    externs: &'static [&'static str],
}

/// A module: the crate (its index in the crate list) and the path from the crate's root.
type Module = (usize, Vec<String>);

/// A file's code with comments, string and character literals blanked out (newlines kept, so
/// that line numbers stay), and with its test modules blanked out too.
fn clean(text: &str) -> String {
    drop_test_modules(&strip(text))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Blanks comments (line, block, nested, doc), string literals (plain, byte, raw) and
/// character literals, keeping every newline.
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let n = c.len();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < n {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(c[i - 1]);
        if ch == '/' && next == Some('/') {
            while i < n && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < n {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (ch == 'r' || (ch == 'b' && next == Some('r'))) && raw_string_at(&c, i).is_some() {
            let (start, hashes) = raw_string_at(&c, i).expect("checked");
            // `start` is the opening quote; the literal ends at a quote followed by `hashes` #s.
            for &x in &c[i..=start] {
                blank(&mut out, x);
            }
            i = start + 1;
            while i < n {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if ch == '"' {
            out.push(' ');
            i += 1;
            while i < n && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < n {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if ch == '\'' && next == Some('\\') {
            // An escaped character literal: '\n', '\'', '\u{..}'.
            out.push_str("  ");
            i += 2;
            if i < n {
                blank(&mut out, c[i]);
                i += 1;
            }
            while i < n && c[i] != '\'' {
                blank(&mut out, c[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if ch == '\'' && c.get(i + 2) == Some(&'\'') {
            // A character literal 'x' (a lifetime or label is left as it is).
            out.push_str("   ");
            i += 3;
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

/// Whether a raw string literal (`r"`, `r#"`, `br"` ..) starts at `i`: the index of its
/// opening quote and its number of `#`s.
fn raw_string_at(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i + if c[i] == 'b' { 2 } else { 1 };
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((j, hashes))
}

/// Where the test modules start: the char index of each `#[cfg(test)]` that an inline or file
/// `mod` follows (other attributes and a visibility may come between), and the index just
/// past the module's closing brace (`None` for `mod name;`). On stripped code.
fn test_modules(code: &str) -> Vec<(usize, Option<usize>)> {
    let c: Vec<char> = code.chars().collect();
    let pat: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i + pat.len() <= c.len() {
        if c[i..i + pat.len()] != pat[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + pat.len();
        // Skip whitespace, further attributes and a visibility.
        loop {
            while j < c.len() && c[j].is_whitespace() {
                j += 1;
            }
            if c.get(j) == Some(&'#') && c.get(j + 1) == Some(&'[') {
                let mut depth = 0;
                while j < c.len() {
                    if c[j] == '[' {
                        depth += 1;
                    } else if c[j] == ']' {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    j += 1;
                }
                continue;
            }
            if c[j..].starts_with(&['p', 'u', 'b']) && !c.get(j + 3).is_some_and(|&x| is_ident(x)) {
                j += 3;
                while j < c.len() && c[j].is_whitespace() {
                    j += 1;
                }
                if c.get(j) == Some(&'(') {
                    while j < c.len() && c[j] != ')' {
                        j += 1;
                    }
                    j += 1;
                }
                continue;
            }
            break;
        }
        let is_mod = c[j..].starts_with(&['m', 'o', 'd']) && c.get(j + 3).is_some_and(|x| x.is_whitespace());
        if !is_mod {
            i += pat.len();
            continue;
        }
        while j < c.len() && c[j] != '{' && c[j] != ';' {
            j += 1;
        }
        if c.get(j) != Some(&'{') {
            found.push((start, None));
            i = j;
            continue;
        }
        let mut depth = 0;
        while j < c.len() {
            if c[j] == '{' {
                depth += 1;
            } else if c[j] == '}' {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            j += 1;
        }
        found.push((start, Some(j + 1)));
        i = j + 1;
    }
    found
}

/// The code without its inline test modules (blanked, newlines kept).
fn drop_test_modules(code: &str) -> String {
    let mut c: Vec<char> = code.chars().collect();
    let n = c.len();
    for (start, end) in test_modules(code) {
        if let Some(end) = end {
            for x in &mut c[start..end.min(n)] {
                if *x != '\n' {
                    *x = ' ';
                }
            }
        }
    }
    c.into_iter().collect()
}

/// The number of lines of `text` before its first test module (all of them if it has none).
fn lines_before_tests(text: &str) -> usize {
    let code = strip(text);
    match test_modules(&code).first() {
        Some(&(start, _)) => code.chars().take(start).filter(|&c| c == '\n').count(),
        None => text.lines().count(),
    }
}

/// A token of cleaned code, with its line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if is_ident(ch) || (ch == '$' && c.get(i + 1).is_some_and(|&x| is_ident(x))) {
            let s = i;
            i += 1;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            // A raw identifier `r#name` is the name.
            if i - s == 1 && ch == 'r' && c.get(i) == Some(&'#') && c.get(i + 1).is_some_and(|&x| is_ident(x)) {
                let s = i + 1;
                i = s;
                while i < c.len() && is_ident(c[i]) {
                    i += 1;
                }
                out.push((Tok::Ident(c[s..i].iter().collect()), line));
                continue;
            }
            let word: String = c[s..i].iter().collect();
            if !word.starts_with(|x: char| x.is_ascii_digit()) {
                out.push((Tok::Ident(word), line));
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// One path a `use` names: its segments (`self` at the end dropped), the name it binds (`None`
/// for a glob) and its line.
#[derive(Debug, Clone)]
struct UseLeaf {
    path: Vec<String>,
    name: Option<String>,
    line: usize,
}

/// Parses the use tree starting at `toks[*i]` (after `use`), with the segments before it.
fn use_tree(toks: &[(Tok, usize)], i: &mut usize, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let mut path = prefix.to_vec();
    let mut line = toks.get(*i).map_or(0, |t| t.1);
    if toks.get(*i).map(|t| &t.0) == Some(&Tok::Path) {
        *i += 1;
    }
    while let Some((t, l)) = toks.get(*i) {
        match t {
            Tok::Ident(s) if s != "as" => {
                path.push(s.clone());
                line = *l;
                *i += 1;
                if toks.get(*i).map(|t| &t.0) == Some(&Tok::Path) {
                    *i += 1;
                    continue;
                }
                break;
            }
            Tok::Punct('{') => {
                *i += 1;
                while let Some((t, _)) = toks.get(*i) {
                    match t {
                        Tok::Punct('}') => {
                            *i += 1;
                            break;
                        }
                        Tok::Punct(',') => *i += 1,
                        _ => {
                            let before = *i;
                            use_tree(toks, i, &path, out);
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
                return;
            }
            Tok::Punct('*') => {
                *i += 1;
                out.push(UseLeaf { path, name: None, line });
                return;
            }
            _ => break,
        }
    }
    let mut name = path.last().cloned();
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
        name = path.last().cloned();
    }
    if let (Some((Tok::Ident(a), _)), Some((Tok::Ident(b), _))) = (toks.get(*i), toks.get(*i + 1)) {
        if a == "as" {
            name = Some(b.clone());
            *i += 2;
        }
    }
    if !path.is_empty() {
        out.push(UseLeaf { path, name, line });
    }
}

/// The source read: file (relative, `/`-separated) -> text.
type Files = BTreeMap<String, String>;

/// The module tree of every crate, and the edges.
#[derive(Debug, Default)]
struct Graph {
    /// Module -> file.
    file_of: HashMap<Module, String>,
    /// File -> module.
    module_of: BTreeMap<String, Module>,
    /// (from, to) -> the lines of `from` that name `to`.
    edges: BTreeMap<(String, String), Vec<usize>>,
    /// File -> the names its `use` declarations bring in -> the module and path they name.
    bindings: HashMap<String, HashMap<String, (Module, Vec<String>)>>,
}

fn parent_dir(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The `#[path = ".."]` on the `mod` declaration at line `line` (1-based): on that line or
/// among the attribute lines just above it.
fn path_attribute(raw: &[&str], line: usize) -> Option<String> {
    let mut l = line;
    while l >= 1 {
        let text = raw.get(l - 1)?.trim();
        if l != line && !text.starts_with("#[") {
            return None;
        }
        if let Some(at) = text.find("#[path") {
            let rest = &text[at..];
            let q1 = rest.find('"')?;
            let q2 = rest[q1 + 1..].find('"')?;
            return Some(rest[q1 + 1..q1 + 1 + q2].to_string());
        }
        l -= 1;
    }
    None
}

/// Whether the `mod` declaration at line `line` (1-based) is a test module: `#[cfg(test)]` on
/// that line or among the attribute lines just above it.
fn is_test_module(raw: &[&str], line: usize) -> bool {
    let mut l = line;
    while l >= 1 {
        let Some(text) = raw.get(l - 1).map(|t| t.trim()) else {
            return false;
        };
        if l != line && !text.starts_with("#[") {
            return false;
        }
        if text.contains("#[cfg(test)]") {
            return true;
        }
        l -= 1;
    }
    false
}

impl Graph {
    /// Builds the module trees from the crates' roots, then the edges.
    fn build(files: &Files, crates: &[Krate]) -> Result<Graph, String> {
        let mut g = Graph::default();
        let mut test_files = BTreeSet::new();
        let cleaned: BTreeMap<&str, String> = files.iter().map(|(f, t)| (f.as_str(), clean(t))).collect();
        for (k, krate) in crates.iter().enumerate() {
            if !files.contains_key(krate.root) {
                return Err(format!("crate root {} not found", krate.root));
            }
            let mut stack = vec![(krate.root.to_string(), Vec::<String>::new())];
            while let Some((file, path)) = stack.pop() {
                if let Some(other) = g.module_of.get(&file) {
                    return Err(format!("{file} is a module twice: {other:?} and {:?}", (k, &path)));
                }
                g.module_of.insert(file.clone(), (k, path.clone()));
                g.file_of.insert((k, path.clone()), file.clone());
                let raw: Vec<&str> = files[&file].lines().collect();
                let toks = tokens(&cleaned[file.as_str()]);
                let name = file.rsplit('/').next().unwrap_or("");
                let dir = parent_dir(&file);
                let base = if matches!(name, "mod.rs" | "lib.rs" | "main.rs") {
                    dir.to_string()
                } else {
                    format!("{dir}/{}", name.trim_end_matches(".rs"))
                };
                for w in toks.windows(3) {
                    let (Tok::Ident(m), Tok::Ident(child), Tok::Punct(';')) = (&w[0].0, &w[1].0, &w[2].0) else {
                        continue;
                    };
                    if m != "mod" {
                        continue;
                    }
                    let candidates = match path_attribute(&raw, w[0].1) {
                        Some(p) => vec![join(dir, &p)],
                        None => vec![format!("{base}/{child}.rs"), format!("{base}/{child}/mod.rs")],
                    };
                    let Some(found) = candidates.iter().find(|c| files.contains_key(c.as_str())) else {
                        return Err(format!("{file}:{}: no file for `mod {child};` (tried {candidates:?})", w[0].1));
                    };
                    if is_test_module(&raw, w[0].1) {
                        // A test module in a file of its own: left out, as inline ones are.
                        test_files.insert(found.clone());
                        continue;
                    }
                    let mut p = path.clone();
                    p.push(child.clone());
                    stack.push((found.clone(), p));
                }
            }
        }
        let lost: Vec<&String> =
            files.keys().filter(|f| !g.module_of.contains_key(*f) && !test_files.contains(*f)).collect();
        if !lost.is_empty() {
            return Err(format!("files that no crate's module tree reaches: {lost:?}"));
        }
        let files_in_order: Vec<String> = g.module_of.keys().cloned().collect();
        let toks: BTreeMap<&str, Vec<(Tok, usize)>> =
            files_in_order.iter().map(|f| (f.as_str(), tokens(&cleaned[f.as_str()]))).collect();
        for file in &files_in_order {
            let (leaves, _) = Self::uses(&toks[file.as_str()]);
            g.bind(file, &leaves, crates);
        }
        for file in &files_in_order {
            g.add_edges(file, &toks[file.as_str()], crates);
        }
        Ok(g)
    }

    /// The module a path's first segment stands for in module `(k, here)`, if it is one this
    /// graph knows: `crate`, `super`, `self`, another crate, a child module or a module a
    /// `use` named.
    fn head(
        &self,
        crates: &[Krate],
        (k, here): (usize, &[String]),
        aliases: &HashMap<String, Module>,
        segs: &[String],
    ) -> Option<(Module, usize)> {
        let first = segs.first()?;
        match first.as_str() {
            "crate" | "$crate" => Some(((k, Vec::new()), 1)),
            "self" => Some(((k, here.to_vec()), 1)),
            "super" => {
                let mut m = here.to_vec();
                let mut n = 0;
                while segs.get(n).is_some_and(|s| s == "super") {
                    m.pop()?;
                    n += 1;
                }
                Some(((k, m), n))
            }
            name => {
                if crates[k].externs.contains(&name) {
                    let e = crates.iter().position(|c| c.name == name)?;
                    return Some(((e, Vec::new()), 1));
                }
                let mut child = here.to_vec();
                child.push(name.to_string());
                if self.file_of.contains_key(&(k, child.clone())) {
                    return Some(((k, child), 1));
                }
                aliases.get(name).map(|m| (m.clone(), 1))
            }
        }
    }

    /// The `use` declarations of `file`: their leaves, and which tokens they cover.
    fn uses(toks: &[(Tok, usize)]) -> (Vec<UseLeaf>, Vec<bool>) {
        let mut leaves = Vec::new();
        let mut in_use = vec![false; toks.len()];
        let mut i = 0;
        while i < toks.len() {
            let starts_use = toks[i].0 == Tok::Ident("use".into())
                && (i == 0 || !matches!(toks[i - 1].0, Tok::Path | Tok::Punct('.')));
            if !starts_use {
                i += 1;
                continue;
            }
            let start = i;
            i += 1;
            use_tree(toks, &mut i, &[], &mut leaves);
            while i < toks.len() && toks[i].0 != Tok::Punct(';') {
                i += 1;
            }
            for f in &mut in_use[start..i.min(toks.len())] {
                *f = true;
            }
        }
        (leaves, in_use)
    }

    /// The names `file`'s `use` declarations bring in, each with where it points (a module
    /// and the path after it).
    fn bind(&mut self, file: &str, leaves: &[UseLeaf], crates: &[Krate]) {
        let (k, here) = self.module_of[file].clone();
        let mut b = HashMap::new();
        for leaf in leaves {
            if let (Some(name), Some((m, n))) = (&leaf.name, self.head(crates, (k, &here), &HashMap::new(), &leaf.path))
            {
                b.insert(name.clone(), (m, leaf.path[n..].to_vec()));
            }
        }
        self.bindings.insert(file.to_string(), b);
    }

    /// The file a path names, from module `(k, base)`: the deepest module along `segs` that is
    /// a file, or, where the next segment is a name that module's `use` brought in, the file
    /// that name resolves to (a re-exported item resolves to the module that defines it).
    fn resolve(&self, k: usize, mut base: Vec<String>, segs: &[String], depth: usize) -> Option<String> {
        let mut used = 0;
        for s in segs {
            base.push(s.clone());
            if !self.file_of.contains_key(&(k, base.clone())) {
                base.pop();
                break;
            }
            used += 1;
        }
        let file = self.file_of.get(&(k, base))?;
        if let (Some(name), true) = (segs.get(used), depth < 8) {
            if let Some(((tk, tbase), trest)) = self.bindings.get(file).and_then(|b| b.get(name)) {
                let mut next = trest.clone();
                next.extend(segs[used + 1..].iter().cloned());
                if let Some(f) = self.resolve(*tk, tbase.clone(), &next, depth + 1) {
                    return Some(f);
                }
            }
        }
        Some(file.clone())
    }

    /// The edges of `file`: from its `use` declarations, then from the paths in its code.
    fn add_edges(&mut self, file: &str, toks: &[(Tok, usize)], crates: &[Krate]) {
        let (k, here) = self.module_of[file].clone();
        let (leaves, in_use) = Self::uses(toks);
        // The modules `use` brought in by name: a path may start with one.
        let mut aliases = HashMap::new();
        let mut named = Vec::new();
        for leaf in &leaves {
            let Some(((mk, mbase), n)) = self.head(crates, (k, &here), &HashMap::new(), &leaf.path) else {
                continue;
            };
            let rest = &leaf.path[n..];
            let mut full = mbase.clone();
            full.extend(rest.iter().cloned());
            if let (Some(name), true) = (&leaf.name, self.file_of.contains_key(&(mk, full.clone()))) {
                aliases.insert(name.clone(), (mk, full));
            }
            if let Some(to) = self.resolve(mk, mbase, rest, 0) {
                named.push((to, leaf.line));
            }
        }
        // Paths in code: an identifier followed by `::` that does not continue a path.
        let mut i = 0;
        while i < toks.len() {
            let head = match &toks[i].0 {
                Tok::Ident(s) if !in_use[i] && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) => s,
                _ => {
                    i += 1;
                    continue;
                }
            };
            if i > 0 && toks[i - 1].0 == Tok::Path {
                i += 1;
                continue;
            }
            let line = toks[i].1;
            let mut segs = vec![head.clone()];
            let mut j = i + 1;
            while toks.get(j).map(|t| &t.0) == Some(&Tok::Path) {
                match toks.get(j + 1).map(|t| &t.0) {
                    Some(Tok::Ident(s)) => {
                        segs.push(s.clone());
                        j += 2;
                    }
                    _ => break,
                }
            }
            if let Some(((mk, mbase), n)) = self.head(crates, (k, &here), &aliases, &segs) {
                if let Some(to) = self.resolve(mk, mbase, &segs[n..], 0) {
                    named.push((to, line));
                }
            }
            i = j.max(i + 1);
        }
        for (to, line) in named {
            if to != file {
                let lines = self.edges.entry((file.to_string(), to)).or_default();
                if !lines.contains(&line) {
                    lines.push(line);
                }
            }
        }
    }

    /// The strongly connected components of more than one file, each sorted, in order.
    fn cycles(&self) -> Vec<Vec<String>> {
        let nodes: Vec<&String> = self.module_of.keys().collect();
        let index: HashMap<&String, usize> = nodes.iter().enumerate().map(|(i, f)| (*f, i)).collect();
        let mut succ = vec![Vec::new(); nodes.len()];
        for (a, b) in self.edges.keys() {
            succ[index[a]].push(index[b]);
        }
        // Tarjan's algorithm.
        struct T<'a> {
            succ: &'a [Vec<usize>],
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        fn visit(t: &mut T, v: usize) {
            t.index[v] = Some(t.next);
            t.low[v] = t.next;
            t.next += 1;
            t.stack.push(v);
            t.on[v] = true;
            for &w in &t.succ[v] {
                match t.index[w] {
                    None => {
                        visit(t, w);
                        t.low[v] = t.low[v].min(t.low[w]);
                    }
                    Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(t.low[v]) == t.index[v] {
                let mut c = Vec::new();
                loop {
                    let w = t.stack.pop().expect("on the stack");
                    t.on[w] = false;
                    c.push(w);
                    if w == v {
                        break;
                    }
                }
                t.out.push(c);
            }
        }
        let n = nodes.len();
        let mut t = T {
            succ: &succ,
            index: vec![None; n],
            low: vec![0; n],
            on: vec![false; n],
            stack: vec![],
            next: 0,
            out: vec![],
        };
        for v in 0..n {
            if t.index[v].is_none() {
                visit(&mut t, v);
            }
        }
        let mut out: Vec<Vec<String>> = t
            .out
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<String> = c.into_iter().map(|i| nodes[i].clone()).collect();
                c.sort();
                c
            })
            .collect();
        out.sort();
        out
    }

    /// A cycle's files, then every edge inside it with its lines.
    fn describe(&self, cycle: &[String]) -> String {
        let set: BTreeSet<&String> = cycle.iter().collect();
        let mut s = format!("  {} files: {}\n", cycle.len(), cycle.join(", "));
        for ((a, b), lines) in &self.edges {
            if set.contains(a) && set.contains(b) {
                let at: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                s += &format!("    {a}:{} -> {b}\n", at.join(","));
            }
        }
        s
    }

    /// What is wrong with the cycles against `known`: new (or changed) cycles, and entries of
    /// `known` that are no longer cycles.
    fn check_cycles(&self, known: &[&[&str]]) -> Vec<String> {
        let mut errors = Vec::new();
        let found = self.cycles();
        let known: Vec<Vec<String>> = known
            .iter()
            .map(|c| {
                let mut c: Vec<String> = c.iter().map(|s| s.to_string()).collect();
                c.sort();
                c
            })
            .collect();
        for c in &found {
            if known.contains(c) {
                continue;
            }
            let shrunk = known.iter().find(|k| c.iter().all(|f| k.contains(f)));
            let why = match shrunk {
                Some(k) => format!(
                    "an import cycle that is what is left of the KNOWN_CYCLES entry that starts with {}: replace \
                     that entry by this one",
                    k[0]
                ),
                None => "an import cycle not in KNOWN_CYCLES (a new one, or a known one that grew)".to_string(),
            };
            errors.push(format!("{why}:\n{}", self.describe(c)));
        }
        for k in &known {
            if !found.contains(k) {
                errors.push(format!(
                    "KNOWN_CYCLES has an entry that is no longer a cycle (remove it, or replace it by what is \
                     left of it):\n  {}\n",
                    k.join(", ")
                ));
            }
        }
        errors
    }
}

/// What is wrong with the lengths of `files` against `known`.
fn check_lengths(files: &Files, known: &[(&str, usize)]) -> Vec<String> {
    let mut errors = Vec::new();
    for (f, text) in files {
        if !BOUNDED.iter().any(|d| f.starts_with(d)) {
            continue;
        }
        let n = lines_before_tests(text);
        match known.iter().find(|(k, _)| k == f) {
            Some(&(_, max)) if n > max => {
                errors.push(format!("{f}: {n} lines before its tests, more than its KNOWN_LONG entry's {max}"))
            }
            Some(_) if n <= MAX_LINES => errors.push(format!(
                "{f}: {n} lines before its tests, no more than {MAX_LINES}: remove its KNOWN_LONG entry"
            )),
            Some(_) => {}
            None if n > MAX_LINES => {
                errors.push(format!("{f}: {n} lines before its tests, more than {MAX_LINES} (split it)"))
            }
            None => {}
        }
    }
    for (k, _) in known {
        if !files.contains_key(*k) {
            errors.push(format!("{k}: in KNOWN_LONG but not found: remove its entry"));
        }
    }
    errors
}

/// Every `.rs` file under [`SOURCES`], by its path from the workspace root.
fn read_sources() -> Files {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Files::new();
    let mut dirs: Vec<std::path::PathBuf> = SOURCES.iter().map(|d| root.join(d)).collect();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(&root).expect("under the root").to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                files.insert(rel, text);
            }
        }
    }
    files
}

fn source_graph() -> Graph {
    Graph::build(&read_sources(), CRATES).unwrap_or_else(|e| panic!("{e}"))
}

// ---- the checks --------------------------------------------------------------------------------

#[test]
fn no_import_cycles_but_the_known_ones() {
    let g = source_graph();
    let errors = g.check_cycles(KNOWN_CYCLES);
    assert!(errors.is_empty(), "{} problem(s) with import cycles:\n\n{}", errors.len(), errors.join("\n"));
}

#[test]
fn no_long_files_but_the_known_ones() {
    let errors = check_lengths(&read_sources(), KNOWN_LONG);
    assert!(errors.is_empty(), "{} problem(s) with file lengths:\n{}", errors.len(), errors.join("\n"));
}

/// The graph holds what the checks rely on: model/src has no cycle at all, and the
/// resolver found edges both within each crate and from checks into the model.
#[test]
fn the_graph_is_the_source() {
    let g = source_graph();
    assert!(g.module_of.len() > 60, "{} files", g.module_of.len());
    for c in g.cycles() {
        assert!(c.iter().all(|f| f.starts_with("checks/src/")), "a cycle in model/src:\n{}", g.describe(&c));
    }
    let has = |a: &str, b: &str| g.edges.contains_key(&(a.to_string(), b.to_string()));
    assert!(has("checks/src/recorder.rs", "model/src/ghost.rs"));
    assert!(has("model/src/platform/stateful/mod.rs", "model/src/ghost.rs"));
    // The search shell reaches down into the layers below it, never the other way.
    assert!(has("checks/src/engine/stateful/search.rs", "checks/src/engine/stateful/cluster_run.rs"));
    assert!(has("checks/src/engine/stateful/cluster_run.rs", "checks/src/engine/stateful/workers.rs"));
}

/// Prints every edge and the cycles (see the module docs).
#[test]
#[ignore = "prints the graph: run with --ignored --nocapture"]
fn print_graph() {
    let g = source_graph();
    if std::env::var_os("LAYERS_DOT").is_some() {
        println!("digraph layers {{\n  rankdir=LR;");
        for (a, b) in g.edges.keys() {
            println!("  \"{a}\" -> \"{b}\";");
        }
        println!("}}");
        return;
    }
    for ((a, b), lines) in &g.edges {
        let at: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        println!("{a}:{} -> {b}", at.join(","));
    }
    println!("\n{} files, {} edges; cycles:", g.module_of.len(), g.edges.len());
    for c in g.cycles() {
        print!("{}", g.describe(&c));
    }
}

// ---- the resolver's own tests ------------------------------------------------------------------

/// A small crate `toy` (and `other`, which it names) in memory.
fn toy(extra_b: &str) -> Files {
    let mut f = Files::new();
    let mut put = |p: &str, t: &str| {
        f.insert(p.to_string(), t.to_string());
    };
    put("toy/lib.rs", "pub mod a;\nmod b;\npub mod c;\n#[cfg(test)]\nmod toy_tests;\n");
    put("toy/toy_tests.rs", "use crate::a::*;\nuse crate::b::X;\n");
    put(
        "toy/a.rs",
        "//! Names b in a comment only: crate::b::X.\nuse crate::b::{self as bee, X};\nfn f() -> \
         &'static str { \"super::c::Y\" }\n",
    );
    put("toy/b.rs", &format!("pub struct X;\nfn g(c: char) -> bool {{ c == '\"' }}\n{extra_b}"));
    // c is a directory module with a child that lives elsewhere (#[path]) and a test module.
    put(
        "toy/c/mod.rs",
        "#[path = \"../elsewhere.rs\"]\nmod deep;\npub use self::deep::Y;\n#[cfg(test)]\nmod tests {\n    use \
         crate::a::*;\n}\n",
    );
    put("toy/elsewhere.rs", "pub struct Y;\nfn h() { let _ = other::thing::Z; }\n");
    put("other/lib.rs", "pub mod thing;\n");
    put("other/thing.rs", "pub struct Z;\n");
    f
}

const TOY: &[Krate] = &[
    Krate { name: "toy", root: "toy/lib.rs", externs: &["other"] },
    Krate { name: "other", root: "other/lib.rs", externs: &[] },
];

#[test]
fn resolver_finds_no_cycle_where_there_is_none() {
    let g = Graph::build(&toy(""), TOY).expect("builds");
    let edges: Vec<(&str, &str)> = g.edges.keys().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        edges,
        [("toy/a.rs", "toy/b.rs"), ("toy/c/mod.rs", "toy/elsewhere.rs"), ("toy/elsewhere.rs", "other/thing.rs"),],
        "comments, strings, char literals, `mod` lines and test modules are no edges"
    );
    assert_eq!(g.edges[&("toy/a.rs".into(), "toy/b.rs".into())], [2]);
    assert!(g.cycles().is_empty());
    assert!(g.check_cycles(&[]).is_empty());
    let stale = g.check_cycles(&[&["toy/a.rs", "toy/b.rs"]]);
    assert_eq!(stale.len(), 1, "a known cycle that is gone is reported: {stale:?}");
}

#[test]
fn resolver_finds_a_cycle_through_an_inline_path() {
    // b names a's function inline (not in a `use`).
    let g = Graph::build(&toy("fn k() { crate::a::f(); }\n"), TOY).expect("builds");
    assert_eq!(g.cycles(), [vec!["toy/a.rs".to_string(), "toy/b.rs".to_string()]]);
    let errors = g.check_cycles(&[]);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("toy/b.rs:3 -> toy/a.rs") && errors[0].contains("toy/a.rs:2 -> toy/b.rs"),
        "{}",
        errors[0]
    );
    assert!(g.check_cycles(&[&["toy/b.rs", "toy/a.rs"]]).is_empty(), "a known cycle passes");

    let mut files = toy("");
    files.insert("toy/elsewhere.rs".into(), "pub struct Y;\nfn h() -> super::Q { super::Q }\n".into());
    files.get_mut("toy/c/mod.rs").expect("c").push_str("pub struct Q;\n");
    // c re-exports from elsewhere.rs, which names c back with `super::` (c is its parent).
    let g = Graph::build(&files, TOY).expect("builds");
    assert_eq!(g.cycles(), [vec!["toy/c/mod.rs".to_string(), "toy/elsewhere.rs".to_string()]]);

    // A module brought in by `use` heads a path: `bee::X` in a is an edge to b.
    let mut files = toy("");
    files.insert("toy/a.rs".into(), "use crate::b as bee;\nfn f() { let _ = bee::X; }\n".into());
    files.insert("toy/b.rs".into(), "pub struct X;\nfn g() { super::a::f() }\n".into());
    let g = Graph::build(&files, TOY).expect("builds");
    assert_eq!(g.edges[&("toy/b.rs".into(), "toy/a.rs".into())], [2]);
    assert_eq!(g.cycles().len(), 1);
}

#[test]
fn lengths_count_the_lines_before_the_test_module() {
    let text = "fn a() {}\n// #[cfg(test)]\nfn b() {}\n#[cfg(test)]\nmod tests {\n    fn c() {}\n}\n";
    assert_eq!(lines_before_tests(text), 3);
    assert_eq!(lines_before_tests("fn a() {}\nfn b() {}\n"), 2);
    let long: String = "fn x() {}\n".repeat(MAX_LINES + 1);
    let files: Files = [("model/src/platform/x.rs".to_string(), long)].into();
    assert_eq!(check_lengths(&files, &[]).len(), 1);
    assert!(check_lengths(&files, &[("model/src/platform/x.rs", MAX_LINES + 1)]).is_empty());
    assert_eq!(check_lengths(&files, &[("model/src/platform/x.rs", MAX_LINES)]).len(), 1, "may not grow");
    let short: Files = [("model/src/platform/x.rs".to_string(), "fn x() {}\n".into())].into();
    assert_eq!(check_lengths(&short, &[("model/src/platform/x.rs", 700)]).len(), 1, "a stale entry fails");
}

#[test]
fn strip_keeps_lines_and_code() {
    let s = strip("a /* b\n /* c */ d */ e // f\n\"g\\\"h\" 'i' '\\'' r#\"j\"# x<'a>\n");
    assert_eq!(s.lines().count(), 3);
    for gone in ["b", "c", "d", "f", "g", "h", "i", "j"] {
        assert!(!s.split(|c: char| !is_ident(c)).any(|w| w == gone), "{gone} in {s:?}");
    }
    for kept in ["a", "e", "x", "'a"] {
        assert!(s.contains(kept), "{kept} not in {s:?}");
    }
}
