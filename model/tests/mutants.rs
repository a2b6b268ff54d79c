//! cargo-mutants' test for this crate (`.cargo/mutants.toml`, docs/mutants.md). cargo-mutants
//! tests the package it mutates, and this crate's own tests check the platforms, not the
//! protocols; so this test hands the mutated tree to the checker's: it runs the checker
//! package's ignored `mutants` test (checks/tests/mutants.rs: the shipped scenarios but the
//! slow ones must give their expected verdicts) with the same cargo and profile, and passes
//! when that passes. Ignored in a plain `cargo test` (and so in .ci/run).

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "cargo-mutants' test (docs/mutants.md): runs the checker's fast scenario set"]
fn the_checkers_fast_scenarios_give_their_expected_verdicts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The profile this test was built with (`target/<profile>/deps/mutants-*`): cargo-mutants
    // builds with the `mutants` profile (.cargo/mutants.toml), and the checker must be built
    // with the same one to reuse its incremental build.
    let exe = std::env::current_exe().expect("the test's own path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .map(|p| if p == "debug" { "dev" } else { p })
        .expect("target/<profile>/deps")
        .to_string();
    let status = Command::new(env!("CARGO"))
        .args([
            "test",
            "--profile",
            &profile,
            "-q",
            "-p",
            "mmcheck",
            "--test",
            "mutants",
            "--",
            "--ignored",
            "--test-threads",
            "1",
        ])
        .current_dir(root)
        .status()
        .expect("run cargo");
    assert!(status.success(), "the checker's fast scenario set: {status}");
}
