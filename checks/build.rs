//! Turns every scenario file into a test: `$OUT_DIR/{loom,shuttle,stateful}_scenarios.rs` hold
//! one `#[test]` per scenario file (per engine family), included by the test binaries of the
//! same names. Scenarios under
//! `scenarios/heavy/` become ignored tests, each with its reason (opt-in: `cargo test --release -- --ignored`).

use std::fs;
use std::path::{Path, PathBuf};

// The engine names and the test binary each runs in, as the crate defines them.
#[allow(dead_code)]
mod names {
    include!("src/engine/names.rs");
}
use names::EngineName;

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
/// happens in the test (an unknown name places the file in no binary; the parser test of the
/// shipped files reports it).
fn engine(text: &str) -> Option<EngineName> {
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("engine") {
            let rest = rest.trim_start();
            if let Some(v) = rest.strip_prefix('=') {
                return EngineName::from_name(v.trim().trim_matches('"'));
            }
        }
    }
    Some(EngineName::Loom)
}

fn ident(rel: &str) -> String {
    let mut s: String = rel
        .trim_end_matches(".toml")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// FNV-1a over every `.rs` file under `dirs` (sorted), for the replay-token fingerprint: a
/// token made by one version of the model, monitors or engines is refused by another.
fn code_hash(dirs: &[PathBuf]) -> u64 {
    let mut files = Vec::new();
    for d in dirs {
        collect_rs(d, &mut files);
        println!("cargo:rerun-if-changed={}", d.display());
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        for b in fs::read(&f).unwrap_or_default() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            println!("cargo:rerun-if-changed={}", p.display());
            out.push(p);
        }
    }
}

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hash = code_hash(&[
        here.join("../model/src"),
        here.join("src/monitor"),
        here.join("src/engine"),
        here.join("src/recorder.rs"),
        here.join("src/spec.rs"),
        here.join("src/registry.rs"),
    ]);
    println!("cargo:rustc-env=MMCHECK_CODE_HASH={hash:016x}");
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
    let mut stateful = String::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let text = fs::read_to_string(f).unwrap_or_default();
        let eng = engine(&text);
        let heavy = rel.starts_with("heavy/");
        let ignore = if heavy { "#[ignore = \"heavy: opt-in exploration, run with --ignored\"]\n" } else { "" };
        let name = ident(&rel);
        let body = |family: &str| {
            format!("#[test]\n{ignore}fn {name}() {{\n    scenario_test(\"{rel}\", \"{family}\");\n}}\n\n")
        };
        let families = eng.map_or(&[][..], |e| e.test_families());
        if families.contains(&"loom") {
            loom.push_str(&body("loom"));
        }
        if families.contains(&"shuttle") {
            shuttle.push_str(&body("shuttle"));
        }
        if families.contains(&"stateful") {
            stateful.push_str(&body("stateful"));
        }
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    fs::write(out.join("loom_scenarios.rs"), loom).unwrap();
    fs::write(out.join("shuttle_scenarios.rs"), shuttle).unwrap();
    fs::write(out.join("stateful_scenarios.rs"), stateful).unwrap();
}
