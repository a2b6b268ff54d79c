//! Turns every scenario file into a test: `$OUT_DIR/loom_scenarios.rs` and
//! `$OUT_DIR/shuttle_scenarios.rs` hold one `#[test]` per scenario file (per engine family),
//! included by `tests/loom_scenarios.rs` and `tests/shuttle_scenarios.rs`. Scenarios under
//! `scenarios/heavy/` become `#[ignore]`d tests (opt-in: `cargo test --release -- --ignored`).

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// The engine a scenario names (`loom` when it names none); a plain text scan, the real parse
/// happens in the test.
fn engine(text: &str) -> String {
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("engine") {
            let rest = rest.trim_start();
            if let Some(v) = rest.strip_prefix('=') {
                return v.trim().trim_matches('"').to_string();
            }
        }
    }
    "loom".to_string()
}

fn ident(rel: &str) -> String {
    let mut s: String = rel.trim_end_matches(".toml").chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let mut loom = String::new();
    let mut shuttle = String::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let text = fs::read_to_string(f).unwrap_or_default();
        let eng = engine(&text);
        let heavy = rel.starts_with("heavy/");
        let ignore = if heavy { "#[ignore = \"heavy: opt-in exploration, run with --ignored\"]\n" } else { "" };
        let name = ident(&rel);
        let body = |family: &str| format!("#[test]\n{ignore}fn {name}() {{\n    scenario_test(\"{rel}\", \"{family}\");\n}}\n\n");
        if eng == "loom" || eng == "all" {
            loom.push_str(&body("loom"));
        }
        if eng.starts_with("shuttle") || eng == "all" {
            shuttle.push_str(&body("shuttle"));
        }
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    fs::write(out.join("loom_scenarios.rs"), loom).unwrap();
    fs::write(out.join("shuttle_scenarios.rs"), shuttle).unwrap();
}
