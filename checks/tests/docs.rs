//! The docs are checked against the code: every invariant, variant and seeded mutant the
//! code knows is documented, and every command quoted in docs/ runs as written and prints
//! the `violated ...` lines the docs quote under it.

use std::path::{Path, PathBuf};
use std::process::Command;

use mmcheck::registry::SHIPPED;

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(docs().join(name)).unwrap_or_else(|e| panic!("docs/{name}: {e}"))
}

#[test]
fn every_invariant_has_a_section_in_invariants_md() {
    let text = read("invariants.md");
    for model in SHIPPED {
        for inv in model.invariants() {
            let heading = format!("## {}", inv.id);
            assert!(
                text.lines().any(|l| l.trim() == heading || l.trim().starts_with(&format!("{heading} "))),
                "docs/invariants.md has no section `{heading}` ({} model)",
                model.name()
            );
        }
    }
}

#[test]
fn every_variant_and_mutant_is_documented() {
    let inv = read("invariants.md");
    let model = read("model.md");
    for m in SHIPPED {
        for v in m.variants() {
            assert!(inv.contains(v), "docs/invariants.md never mentions variant {v}");
            assert!(model.contains(v), "docs/model.md never mentions variant {v}");
        }
        for mu in m.mutations() {
            assert!(inv.contains(mu.name), "docs/invariants.md never mentions mutant {}", mu.name);
        }
    }
}

/// `$ ` command lines inside fenced blocks, with the lines quoted under each: the lines that
/// follow it in the same fenced block, up to the next `$ ` line. Lines of a later block (say
/// a `text` block quoting a command shown without a prompt) belong to no quoted command.
fn quoted_commands(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_fence = false;
    let mut current: Option<usize> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            current = None;
            continue;
        }
        if !in_fence {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push((cmd.trim().to_string(), Vec::new()));
            current = Some(out.len() - 1);
        } else if let Some(i) = current {
            out[i].1.push(line.to_string());
        }
    }
    out
}

/// Run a quoted command from the repository root. `cargo run --release --` and `mmcheck` are
/// the binary this test was built with (no nested cargo).
fn run_quoted(cmd: &str) -> (i32, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let rest = cmd
        .strip_prefix("cargo run --release -- ")
        .or_else(|| cmd.strip_prefix("mmcheck "))
        .or_else(|| cmd.strip_prefix("./target/release/mmcheck "))
        .unwrap_or_else(|| panic!("docs quote a command the test cannot run: {cmd}"));
    let args: Vec<&str> = rest.split_whitespace().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck")).args(&args).current_dir(root).output().expect("run mmcheck");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Commands that are opt-in (long) or not mmcheck runs are documented but not run here.
fn skipped(cmd: &str) -> bool {
    cmd.contains("heavy/")
        || cmd.starts_with("cargo test")
        || cmd.starts_with("cargo bench")
        || cmd.contains(" matrix")
        || cmd.starts_with("cargo build")
        || cmd.starts_with("checks/spin/")
}

#[test]
fn commands_in_the_docs_run_and_print_what_the_docs_quote() {
    let mut ran = 0;
    for name in ["findings.md", "invariants.md", "scenarios.md", "model.md"] {
        let path = docs().join(name);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (cmd, quoted) in quoted_commands(&text) {
            if skipped(&cmd) {
                continue;
            }
            let (code, out) = run_quoted(&cmd);
            let expect_fail = quoted.iter().any(|l| l.contains("exit status 1") || l.contains("exit status 2"));
            if !expect_fail {
                assert_eq!(code, 0, "docs/{name}: `{cmd}` exited {code}:\n{out}");
            }
            for q in quoted.iter().filter(|l| l.starts_with("violated ")) {
                assert!(out.contains(q.as_str()), "docs/{name}: `{cmd}` no longer prints:\n{q}\nit printed:\n{out}");
            }
            ran += 1;
        }
    }
    assert!(ran > 0, "no commands found in docs/");
}
