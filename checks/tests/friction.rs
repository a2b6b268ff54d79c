//! Issue 37's friction list, the rows a test can show: a progress line on standard error for a
//! search that is not drawn on a terminal, and none on standard output under `--json` (row 2);
//! `--engine all` names the invariant the file expects (row 4); a bad number names its field
//! and is echoed as written (row 10); a refused `--svg` prints nothing on standard output
//! (row 11); a binary run where there is no `scenarios/` says which folder it reads (row 12).
//! And the scale targets' measurement script (`checks/scale/run`) refuses bad arguments with
//! exit 2 and a message that names what is wrong, before it runs anything; the SPIN runner's
//! `--only` (which that script uses) keeps the rows it names and refuses a pattern that names
//! none.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn mmcheck(args: &[&str], progress: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(args)
        .current_dir(root())
        .env("MMCHECK_PROGRESS", progress)
        .output()
        .expect("run mmcheck")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mmcheck-friction-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_long_search_reports_progress_on_stderr_and_json_stays_json() {
    let files = [
        "scenarios/reclaim-throttle/kthread-resched-kcompactd-drain-none.toml",
        "scenarios/reclaim-throttle/nofs-headroom-kcompactd-drain-none.toml",
    ];
    let mut args = vec!["check"];
    args.extend(files);
    args.extend(["--engine", "stateful", "--json"]);
    let start = Instant::now();
    // MMCHECK_PROGRESS=0: a line at every report of the engine (every 200 ms), not after 5 s.
    let o = mmcheck(&args, "0");
    let took = start.elapsed().as_secs_f64();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for line in out.lines() {
        assert!(serde_json::from_str::<serde_json::Value>(line).is_ok(), "not a JSON line on stdout: {line}");
    }
    assert_eq!(out.lines().count(), 2);
    let err = text(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("mmcheck: progress: ")).collect();
    if took >= 1.5 {
        assert!(!lines.is_empty(), "{took:.1} s of search and no progress line on stderr:\n{err}");
    }
    for l in &lines {
        assert!(l.contains(" states (") && l.contains("/s), depth ") && l.contains(" executions, "), "{l}");
    }
    // Off: nothing.
    let o = mmcheck(&args, "off");
    assert!(!text(&o.stderr).contains("progress:"), "{}", text(&o.stderr));
}

#[test]
fn engine_all_names_the_expected_invariant() {
    let o = mmcheck(
        &["check", "scenarios/reclaim-throttle/v5.16-rc1-kcompactd-drain-none.toml", "--engine", "all", "--json"],
        "off",
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(v["verdict"], "violation");
    assert_eq!(v["invariant"], "no-soft-lockup", "{v}");
}

/// The table's engine column of `--engine all` names the memory models its engines ran, as
/// `--json`'s `memory_model` does: with `--memory lkmm` the stateful engine's is `lkmm`.
#[test]
fn engine_all_names_its_memory_models_in_the_table_as_in_json() {
    let file = "scenarios/kswapd-stall/waitqueue-v1-4kswapd-stateful.toml";
    for (memory, models) in [("sc", "c11+sc"), ("lkmm", "c11+sc+lkmm")] {
        let o = mmcheck(&["check", file, "--engine", "all", "--memory", memory, "--json"], "off");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
        assert_eq!(v["memory_model"], models, "{v}");
        let o = mmcheck(&["check", file, "--engine", "all", "--memory", memory], "off");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let table = text(&o.stdout);
        assert!(table.contains(&format!(" all {models} ")), "{table}");
    }
}

#[test]
fn a_bad_number_names_its_field_and_is_echoed_as_written() {
    let src = std::fs::read_to_string(root().join("scenarios/reclaim-throttle/remote-drain-kcompactd-drain-none.toml"))
        .unwrap();
    let d = temp_dir("numbers");
    let big = d.join("big.toml");
    std::fs::write(
        &big,
        src.replace("engine = \"stateful\"", "engine = \"loom\"\npreemption_bound = 99999999999999999999"),
    )
    .unwrap();
    let o = mmcheck(&["check", big.to_str().unwrap()], "off");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains(": explore.preemption_bound: "), "{err}");
    let far = d.join("far.toml");
    std::fs::write(&far, src.replace("engine = \"stateful\"", "engine = \"stateful\"\nmax_seconds = 1e300")).unwrap();
    let o = mmcheck(&["check", far.to_str().unwrap()], "off");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("explore.max_seconds: 1e300 is out of range"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_refused_svg_prints_nothing_on_stdout() {
    let d = temp_dir("svg");
    let svg = d.join("x.svg");
    for json in [true, false] {
        let mut args = vec![
            "check",
            "scenarios/reclaim-throttle/remote-drain-kcompactd-drain-none.toml",
            "--svg",
            svg.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        let o = mmcheck(&args, "off");
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(text(&o.stdout), "", "--json {json}");
        assert!(text(&o.stderr).contains("has no counterexample to draw"), "{}", text(&o.stderr));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn run_elsewhere_the_binary_names_the_scenarios_folder_it_reads() {
    let d = temp_dir("elsewhere");
    // A replay token that is not one ends the command right after the files are read.
    let o = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(["check", "--replay", "garbage"])
        .current_dir(&d)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("litmus"), "the default set reads scenarios/litmus/: {err}");
    assert!(err.contains("no scenarios/ folder in the current folder") && err.contains("scenarios"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `checks/scale/run` (docs/performance.md, "The scale targets in one command"): no rounds, a
/// binary that is not there, an unknown flag: exit 2, the reason on standard error, nothing on
/// standard output.
#[test]
fn the_scale_script_refuses_bad_arguments() {
    let script = root().join("checks/scale/run");
    let missing = temp_dir("scale").join("no-such-mmcheck");
    let missing = missing.to_str().expect("a UTF-8 path");
    for (args, says) in [
        (vec!["--rounds", "0"], "--rounds must be at least 1".to_string()),
        (vec!["--bin", missing, "--no-spin"], format!("no mmcheck binary at {missing}")),
        (vec!["--no-such-flag"], "unrecognized arguments: --no-such-flag".to_string()),
    ] {
        let o = Command::new("python3").arg(&script).args(&args).current_dir(root()).output().expect("python3 runs");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(&says), "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{args:?}: {}", text(&o.stdout));
    }
}

/// `checks/spin/run --only RE` keeps the configurations whose name matches (the two 3-kswapd
/// rows `checks/scale/run` times), and refuses a pattern that matches none or is missing (exit
/// 2). The runner needs spin (`.ci/run` installs it before the tests); without it the test
/// says so and checks nothing.
#[test]
fn the_spin_runner_keeps_only_the_rows_it_is_asked_for() {
    let has_spin = Command::new("sh").arg("-c").arg("command -v spin").output().is_ok_and(|o| o.status.success());
    if !has_spin {
        eprintln!("spin is not installed: checks/spin/run --only not tested here");
        return;
    }
    let run = root().join("checks/spin/run");
    let o = Command::new("bash").arg(&run).args(["--only", "recheck-3kswapd", "--list"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows: Vec<String> =
        text(&o.stdout).lines().map(|l| l.split_whitespace().next().unwrap_or("").to_string()).collect();
    assert_eq!(
        rows,
        ["recheck-3kswapd-2batches-writer-allocator-never", "recheck-3kswapd-2batches-writer-allocator-anytime"]
    );
    for (args, says) in
        [(vec!["--only", "no-such-row"], "matches no configuration"), (vec!["--only"], "needs a regular expression")]
    {
        let o = Command::new("bash").arg(&run).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(says), "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
