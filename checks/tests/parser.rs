//! Bad scenario input gets a clear error (file, line, field), never a panic; the command
//! exits 2 on it.

use std::path::Path;
use std::process::Command;

use mmcheck::scenario::parse;
use proptest::prelude::*;

const GOOD: &str = r#"model = "kswapd-stall"
variant = "recheck"

[[thread]]
role = "kswapd"
node = 0

[[thread]]
role = "writer"
holds = 2

[params]
timeout = "any-time"

[explore]
engine = "loom"
preemption_bound = 2

[expect]
verdict = "pass"
reaches = ["trylock-failed"]
"#;

fn err(text: &str) -> mmcheck::scenario::ScenarioError {
    parse(Path::new("bad.toml"), text).expect_err("must be rejected")
}

#[test]
fn the_reference_text_parses() {
    let sc = parse(Path::new("good.toml"), GOOD).expect("valid");
    assert_eq!(sc.name, "good");
    assert_eq!(sc.spec.tasks(), 2);
}

#[test]
fn the_first_drafts_lock_spellings_still_parse() {
    for (spelling, canonical) in [("lru", "lru_lock"), ("zone", "zone_lock"), ("zone->lock", "zone_lock")] {
        let text = |lock: &str| {
            format!(
                "model = \"compaction\"\nvariant = \"fatal-fix\"\n[[thread]]\nrole = \"compactor\"\nmode = \"async\"\n\
                 [[thread]]\nrole = \"lock-holder\"\nlock = \"{lock}\"\n[explore]\nengine = \"loom\"\n\
                 [expect]\nverdict = \"pass\"\nreaches = [\"lock-contended\"]\n"
            )
        };
        let a = parse(Path::new("a.toml"), &text(spelling)).unwrap_or_else(|e| panic!("{spelling}: {e}"));
        let b = parse(Path::new("a.toml"), &text(canonical)).expect("canonical spelling");
        assert_eq!(a.spec.replay_text(), b.spec.replay_text(), "{spelling} is {canonical}");
    }
}

#[test]
fn a_compact_memory_compactor_is_sync_and_a_fragmented_zone_is_a_param() {
    let text = |mode: &str, unmovable: &str| {
        format!(
            "model = \"compaction\"\nvariant = \"fatal-fix\"\n[[thread]]\nrole = \"compactor\"\n\
             order = \"compact-memory\"\n{mode}[[thread]]\nrole = \"killer\"\n[params]\npages_per_block = 4\n\
             {unmovable}[explore]\nengine = \"loom\"\n[expect]\nverdict = \"pass\"\nreaches = [\"fatal-seen\"]\n"
        )
    };
    let sc = parse(Path::new("m.toml"), &text("", "unmovable_per_block = 3\n")).expect("compact-memory, sync");
    assert_eq!(sc.spec.comms()[0], "compact_memory(sync)");
    parse(Path::new("m.toml"), &text("mode = \"sync\"\n", "")).expect("an explicit sync mode");
    let e = err(&text("mode = \"async\"\n", ""));
    assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("thread[0].mode")));
    assert!(e.message.contains("MIGRATE_SYNC") && e.message.contains("\"async\""), "{e}");
    let e = err(&text("", "unmovable_per_block = 4\n"));
    assert_eq!((e.line, e.field.as_deref()), (Some(10), Some("params.unmovable_per_block")));
    assert!(e.message.contains("out of range 0..=3"), "{e}");
}

#[test]
fn errors_name_file_line_and_field() {
    let e = err(&GOOD.replace("variant = \"recheck\"", "variant = \"recheck-v9\""));
    assert_eq!(e.line, Some(2));
    assert_eq!(e.field.as_deref(), Some("variant"));
    assert!(e.to_string().starts_with("bad.toml:2: variant: unknown value \"recheck-v9\""), "{e}");

    let e = err(&GOOD.replace("role = \"writer\"", "role = \"reader\""));
    assert_eq!((e.line, e.field.as_deref()), (Some(9), Some("thread[1].role")));

    let e = err(&GOOD.replace("holds = 2", "holds = 99"));
    assert_eq!((e.line, e.field.as_deref()), (Some(10), Some("thread[1].holds")));
    assert!(e.message.contains("out of range"), "{e}");

    let e = err(&GOOD.replace("preemption_bound = 2", "preemption_bound = -1"));
    assert_eq!(e.field.as_deref(), Some("explore.preemption_bound"));

    let e = err(&GOOD.replace("holds = 2", "node = 3"));
    assert_eq!(e.field.as_deref(), Some("thread[1].node"), "{e}");

    let e = err(&GOOD.replace("timeout = \"any-time\"", "timeout = \"sometimes\""));
    assert_eq!((e.line, e.field.as_deref()), (Some(13), Some("params.timeout")));

    let e = err(&GOOD.replace("[expect]\nverdict = \"pass\"", "[expect]\nverdict = \"violation\""));
    assert_eq!(e.field.as_deref(), Some("expect.invariant"));

    let e = err(&GOOD.replace("\"trylock-failed\"", "\"tried-hard\""));
    assert_eq!(e.field.as_deref(), Some("expect.reaches"));

    let e = err(&GOOD.replace("model = \"kswapd-stall\"", "modle = \"kswapd-stall\""));
    assert_eq!(e.line, Some(1), "{e}");

    let e = err("model = \"kswapd-stall\"\nvariant = ");
    assert_eq!(e.line, Some(2), "{e}");

    // Six threads do not fit loom (loom::MAX_THREADS is 5).
    let six = GOOD.replace("[params]", "[[thread]]\nrole = \"writer\"\n\n[[thread]]\nrole = \"writer\"\n\n[[thread]]\nrole = \"writer\"\n\n[[thread]]\nrole = \"writer\"\n\n[params]");
    let e = err(&six);
    assert_eq!(e.field.as_deref(), Some("thread"));
    assert!(e.message.contains("at most 5"), "{e}");
}

#[test]
fn the_command_exits_2_with_one_line_per_error() {
    let dir = std::env::temp_dir().join(format!("mmcheck-parser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, GOOD.replace("node = 0", "node = 12")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck")).arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.toml:6: thread[0].node: 12 is out of range"), "{stderr}");

    let missing = dir.join("missing.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck")).arg("check").arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2));

    let good = dir.join("good.toml");
    std::fs::write(&good, GOOD).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(["check", "--replay", "loom-1-deadbeef"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not fit"));
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(["check", "--replay", "not a token"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// Lines of the reference text with one of these substituted in: the mutations that find
/// parser corners (wrong types, missing pieces, stray tables, odd numbers, odd bytes).
fn mutated_text() -> impl Strategy<Value = String> {
    let lines: Vec<String> = GOOD.lines().map(str::to_string).collect();
    let n = lines.len();
    let replacement = prop_oneof![
        Just(String::new()),
        Just("[[thread]]".to_string()),
        Just("role = 7".to_string()),
        Just("node = 4294967296".to_string()),
        Just("node = -9223372036854775808".to_string()),
        Just("iterations = 0".to_string()),
        Just("max_seconds = nan".to_string()),
        Just("seed = 18446744073709551615".to_string()),
        Just("engine = \"all\"".to_string()),
        Just("depth = 3".to_string()),
        Just("[check]\ninvariants = []".to_string()),
        Just("mutation = \"stall-twice\"".to_string()),
        Just("mutation = \"fatal\"".to_string()),
        Just("\u{0}\u{feff}".to_string()),
        "[ -~]{0,30}".prop_map(|s| s),
    ];
    (Just(lines), proptest::collection::vec((0..n, replacement), 1..4)).prop_map(|(mut lines, edits)| {
        for (i, r) in edits {
            lines[i] = r;
        }
        lines.join("\n")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse(Path::new("fuzz.toml"), &text);
    }

    #[test]
    fn mutated_scenarios_never_panic_and_errors_say_where(text in mutated_text()) {
        match parse(Path::new("fuzz.toml"), &text) {
            Ok(_) => {}
            Err(e) => {
                prop_assert_eq!(e.file.to_str(), Some("fuzz.toml"));
                prop_assert!(!e.message.is_empty());
                prop_assert!(e.line.is_some() || e.field.is_some(), "no location: {}", e);
            }
        }
    }
}
