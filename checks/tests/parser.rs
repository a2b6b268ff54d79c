//! Bad scenario input gets a clear error (file, line, field with its table), never a panic;
//! every error of a file is reported, one line each; the command exits 2 on it. Random text,
//! mutated scenarios and random folders of files (given to the binary) never panic or hang.

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

/// A second compactor is accepted, not refused: seven shipped `*-pct-large*` files have two.
/// Each compactor compacts its own private view of the zone, and with two the model keeps the
/// node's LRU and isolated counts, so each one's isolations count against the other's
/// `too_many_isolated()` limit (docs/model.md, "What the compaction model leaves out").
/// Targets may name either compactor; a target that is no compactor is still refused, naming
/// its file, line and field with its table.
#[test]
fn a_second_compactor_is_accepted_and_either_can_be_a_target() {
    let text = |second_target: &str| {
        format!(
            "model = \"compaction\"\nvariant = \"fatal-fix\"\n[[thread]]\nrole = \"compactor\"\nmode = \"async\"\n\
             [[thread]]\nrole = \"compactor\"\nmode = \"sync-light\"\n[[thread]]\nrole = \"lock-holder\"\n\
             lock = \"lru_lock\"\n[[thread]]\nrole = \"killer\"\ntarget = 0\n[[thread]]\nrole = \"killer\"\n\
             target = {second_target}\n[params]\npageblocks = 4\npages_per_block = 4\nswap_cluster_max = 2\n\
             compact_cluster_max = 2\n[explore]\nengine = \"shuttle-pct\"\niterations = 10\ndepth = 3\n\
             [expect]\nverdict = \"pass\"\n"
        )
    };
    let sc = parse(Path::new("two.toml"), &text("1")).expect("two compactors are a valid compaction file");
    assert_eq!(sc.spec.tasks(), 5);
    assert_eq!(
        sc.spec.comms(),
        ["compactor(async)", "compactor(sync-light)", "lru-holder", "killer(T0)", "killer(T1)"].map(String::from)
    );
    let e = err(&text("2"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("thread[4].target")));
    assert!(e.message.contains("thread 2 is not a compactor"), "{e}");
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

// ---------------------------------------------------------------- every error, with its table

fn errs(text: &str) -> Vec<mmcheck::scenario::ScenarioError> {
    mmcheck::scenario::parse_all(Path::new("bad.toml"), text).expect_err("must be rejected")
}

/// (line, field) of each error.
fn places(es: &[mmcheck::scenario::ScenarioError]) -> Vec<(Option<usize>, String)> {
    es.iter().map(|e| (e.line, e.field.clone().unwrap_or_default())).collect()
}

#[test]
fn unknown_keys_and_wrong_types_name_their_field_with_its_table() {
    let e = err(&GOOD.replace("preemption_bound = 2", "max_secnds = 3"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("explore.max_secnds")), "{e}");
    assert!(e.message.contains("did you mean max_seconds?"), "{e}");
    let e = err(&GOOD.replace("verdict = \"pass\"", "verdict = \"pass\"\nverdicts = \"pass\""));
    assert_eq!(e.field.as_deref(), Some("expect.verdicts"), "{e}");
    let e =
        err(&GOOD.replace("[expect]", "[check]\ninvariants = [\"progress\"]\ninvariant = \"progress\"\n\n[expect]"));
    assert_eq!(e.field.as_deref(), Some("check.invariant"), "{e}");
    let e = err(&GOOD.replace("model = ", "modle = \"x\"\nmodel = "));
    assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("modle")), "{e}");
    assert!(e.message.contains("did you mean model?"), "{e}");

    // Types name the field.
    let e = err(&GOOD
        .replace("engine = \"loom\"", "engine = \"shuttle-pct\"\niterations = \"ten\"")
        .replace("preemption_bound = 2\n", ""));
    assert_eq!(e.field.as_deref(), Some("explore.iterations"), "{e}");
    assert_eq!(e.message, "expected an integer, found a string");
    let e = err(&GOOD.replace("engine = \"loom\"", "engine = 3"));
    assert_eq!(
        (e.field.as_deref(), e.message.as_str()),
        (Some("explore.engine"), "expected a string, found an integer")
    );
    let e = err(&GOOD.replace("reaches = [\"trylock-failed\"]", "reaches = \"trylock-failed\""));
    assert_eq!(e.field.as_deref(), Some("expect.reaches"), "{e}");
    assert!(e.message.starts_with("expected an array of strings"), "{e}");
    let e = err(&GOOD.replace("reaches = [\"trylock-failed\"]", "reaches = [\"trylock-failed\", 7]"));
    assert_eq!(e.field.as_deref(), Some("expect.reaches[1]"), "{e}");
    let e = err(&GOOD.replace("[explore]\n", "explore = 5\n[explore2]\n"));
    assert!(e.field.is_some(), "{e}");
    let e = err(&GOOD.replace("variant = \"recheck\"", "variant = 2"));
    assert_eq!((e.field.as_deref(), e.message.as_str()), (Some("variant"), "expected a string, found an integer"));
    let e = err(&GOOD.replace("[[thread]]\nrole = \"writer\"", "[[thread]]\nrole = [\"writer\"]"));
    assert_eq!((e.line, e.field.as_deref()), (Some(9), Some("thread[1].role")), "{e}");
    let e = err(&GOOD.replace("[params]\ntimeout = \"any-time\"", "[params]\nstep_bound = 1.5"));
    assert_eq!(e.field.as_deref(), Some("params.step_bound"), "{e}");
    let e = err(
        "model = \"kswapd-stall\"\nvariant = \"recheck\"\n[thread]\nrole = \"kswapd\"\n[expect]\nverdict = \"pass\"\n",
    );
    assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("thread")), "{e}");
    assert!(e.message.contains("[[thread]]"), "{e}");
    // A date is a type like any other.
    let e = err(&GOOD.replace("holds = 2", "holds = 1979-05-27"));
    assert_eq!(e.field.as_deref(), Some("thread[1].holds"), "{e}");
    // A syntax error is one line.
    let e = err("model = \"kswapd-stall\"\nvariant = ");
    assert!(!e.message.contains('\n'), "{e}");
    // Inline tables and dotted keys are tables too.
    let inline = GOOD.replace("[explore]\nengine = \"loom\"\npreemption_bound = 2\n", "").replacen(
        "[[thread]]",
        "explore = { engine = \"loom\", max_secnds = 2 }\n\n[[thread]]",
        1,
    );
    let e = err(&inline);
    assert_eq!(e.field.as_deref(), Some("explore.max_secnds"), "{e}");
    let dotted = GOOD.replace("[explore]\nengine = \"loom\"\npreemption_bound = 2\n", "").replacen(
        "[[thread]]",
        "explore.engine = \"loom\"\nexplore.preemptoin_bound = 2\n\n[[thread]]",
        1,
    );
    let e = err(&dotted);
    assert_eq!((e.line, e.field.as_deref()), (Some(5), Some("explore.preemptoin_bound")), "{e}");
}

#[test]
fn every_error_of_a_file_is_reported_in_line_order() {
    let text = GOOD
        .replace("model = \"kswapd-stall\"", "modle = 1\nmodel = \"kswapd-stall\"")
        .replace("node = 0", "node = 0\nholds = 3")
        .replace("holds = 2", "holds = 99")
        .replace("timeout = \"any-time\"", "timout = \"never\"")
        .replace("preemption_bound = 2", "preemption_bound = 2\nmax_secnds = 1\niterations = \"ten\"")
        .replace("[expect]", "[check]\ninvariants = [\"progress\", \"progress\", \"nope\"]\n\n[expect]")
        .replace("verdict = \"pass\"", "verdicts = \"pass\"")
        .replace("reaches = [\"trylock-failed\"]", "reaches = [\"trylock-failed\", \"trylock-failed\"]");
    let es = errs(&text);
    let fields: Vec<String> = places(&es).into_iter().map(|(_, f)| f).collect();
    assert_eq!(
        fields,
        [
            "modle",
            "thread[0].holds",
            "thread[1].holds",
            "params.timout",
            "explore.max_secnds",
            "explore.iterations",
            "check.invariants",
            "check.invariants",
            "expect.verdict",
            "expect.verdicts",
            "expect.reaches",
        ],
        "{}",
        es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
    );
    let lines: Vec<usize> = es.iter().map(|e| e.line.expect("each has a line")).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    // The first one is what parse() returns.
    assert_eq!(err(&text), es[0]);

    // The command prints every one, one line each.
    let dir = std::env::temp_dir().join(format!("mmcheck-parser-all-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("many.toml");
    std::fs::write(&bad, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck")).arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), es.len(), "{stderr}");
    for (l, e) in stderr.lines().zip(&es) {
        let e = mmcheck::scenario::ScenarioError { file: bad.clone(), ..e.clone() };
        assert_eq!(l, format!("mmcheck: {e}"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn duplicates_in_invariants_and_reaches_are_refused_naming_the_duplicate() {
    let e = err(
        &GOOD.replace("[expect]", "[check]\ninvariants = [\"progress\", \"stall-once\", \"progress\"]\n\n[expect]")
    );
    assert_eq!((e.line, e.field.as_deref()), (Some(20), Some("check.invariants")), "{e}");
    assert_eq!(e.message, "\"progress\" is listed twice; name each once");
    let e = err(&GOOD.replace("[\"trylock-failed\"]", "[\"trylock-failed\", \"cmpxchg-lost\", \"trylock-failed\"]"));
    assert_eq!(e.field.as_deref(), Some("expect.reaches"), "{e}");
    assert!(e.message.starts_with("\"trylock-failed\" is listed twice"), "{e}");
}

/// A kswapd-stall file with these threads (after the model and variant lines).
fn kswapd_threads(threads: &str) -> String {
    format!(
        "model = \"kswapd-stall\"\nvariant = \"recheck\"\n{threads}[explore]\nengine = \"loom\"\n\
         [expect]\nverdict = \"pass\"\n"
    )
}

#[test]
fn a_kswapd_stall_file_needs_a_protocol_thread_and_an_allocator_needs_its_nodes_kswapd() {
    for threads in [
        "[[thread]]\nrole = \"writer\"\n[[thread]]\nrole = \"writer\"\n",
        "[[thread]]\nrole = \"bdi\"\n",
        "[[thread]]\nrole = \"writer\"\n[[thread]]\nrole = \"bdi\"\n",
    ] {
        let e = err(&kswapd_threads(threads));
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("thread")), "{e}");
        assert!(e.message.contains("needs a kswapd or a direct-reclaim thread"), "{e}");
    }
    let e =
        err(&kswapd_threads("[[thread]]\nrole = \"kswapd\"\nnode = 0\n[[thread]]\nrole = \"allocator\"\nnode = 1\n"));
    // At the allocator's own `node` line (8), not at the first [[thread]].
    assert_eq!((e.line, e.field.as_deref()), (Some(8), Some("thread[1].node")), "{e}");
    assert!(e.message.contains("thread 1 is an allocator for node 1, which has no kswapd"), "{e}");
    assert!(e.message.contains("add a kswapd with node = 1"), "{e}");
    // With a direct reclaimer and no kswapd at all, an allocator still has nobody to wake.
    let e = err(&kswapd_threads(
        "[[thread]]\nrole = \"direct-reclaim\"\nnode = 0\n[[thread]]\nrole = \"allocator\"\nnode = 0\n",
    ));
    assert!(e.message.contains("allocator for node 0, which has no kswapd"), "{e}");
    assert_eq!((e.line, e.field.as_deref()), (Some(8), Some("thread[1].node")), "{e}");
    // The fourth thread, after two kswapds and a writer: line 13 is its `node`.
    let e = err(&kswapd_threads(
        "[[thread]]\nrole = \"kswapd\"\nnode = 0\n[[thread]]\nrole = \"kswapd\"\nnode = 1\n[[thread]]\nrole = \"writer\"\n\
         [[thread]]\nrole = \"allocator\"\nnode = 2\n",
    ));
    assert_eq!((e.line, e.field.as_deref()), (Some(13), Some("thread[3].node")), "{e}");
    // What is accepted.
    for threads in [
        "[[thread]]\nrole = \"kswapd\"\nnode = 0\n[[thread]]\nrole = \"allocator\"\nnode = 0\n",
        "[[thread]]\nrole = \"direct-reclaim\"\nnode = 0\n[[thread]]\nrole = \"bdi\"\n",
        "[[thread]]\nrole = \"kswapd\"\nnode = 2\n",
    ] {
        parse(Path::new("ok.toml"), &kswapd_threads(threads)).unwrap_or_else(|e| panic!("{threads}: {e}"));
    }
}

#[test]
fn the_thread_limit_is_each_engines_own_and_pct_needs_two_threads() {
    let writers = |n: usize| "[[thread]]\nrole = \"writer\"\n".repeat(n);
    let file = |engine: &str, n: usize| {
        kswapd_threads(&format!("[[thread]]\nrole = \"kswapd\"\nnode = 0\n{}", writers(n - 1)))
            .replace("engine = \"loom\"", &format!("engine = \"{engine}\""))
    };
    let es = errs(&file("loom", 6));
    assert_eq!(places(&es), [(Some(14), "thread".to_string())], "{es:?}");
    assert!(es[0].message.starts_with("6 threads, but loom runs at most 5 (loom::MAX_THREADS is 5"), "{}", es[0]);
    let es = errs(&file("all", 6));
    assert!(es[0].message.starts_with("6 threads, but loom runs at most 5"), "{}", es[0]);
    assert!(es[0].message.ends_with("(engine = \"all\" runs loom)"), "{}", es[0]);
    // 33 threads: the engine's limit, once (not the model's "at most 32 threads" besides).
    for engine in ["stateful", "shuttle-random", "loom"] {
        let es = errs(&file(engine, 33));
        assert_eq!(es.len(), 1, "{engine}: {es:?}");
        let max = if engine == "loom" { 5 } else { 32 };
        assert!(es[0].message.starts_with(&format!("33 threads, but {engine} runs at most {max} (")), "{}", es[0]);
    }
    parse(Path::new("ok.toml"), &file("stateful", 32)).expect("32 threads fit the stateful engine");

    // One thread under PCT: refused at parse time (shuttle's PCT scheduler panics on it).
    let one = file("shuttle-pct", 1);
    let e = err(&one);
    assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("thread")), "{e}");
    assert!(e.message.contains("shuttle-pct needs at least two") && e.message.contains("use loom or stateful"), "{e}");
    for engine in ["shuttle-random", "shuttle-dfs", "stateful", "loom"] {
        parse(Path::new("one.toml"), &file(engine, 1)).unwrap_or_else(|e| panic!("{engine}: {e}"));
    }
    parse(Path::new("two.toml"), &file("shuttle-pct", 2)).expect("two threads under PCT");
}

// ---------------------------------------------------------------- whole folders

/// A compaction scenario that passes in milliseconds under shuttle-pct.
const QUICK: &str = r#"model = "compaction"
variant = "fatal-fix"
[[thread]]
role = "compactor"
mode = "sync-light"
[[thread]]
role = "killer"
[explore]
engine = "shuttle-pct"
iterations = 5
[expect]
verdict = "pass"
reaches = ["fatal-seen"]
"#;

/// An item of a generated folder.
#[derive(Debug, Clone)]
enum Item {
    /// `*.toml` text.
    Toml(String),
    /// `*.toml` bytes (usually not UTF-8, or not TOML).
    Bytes(Vec<u8>),
    /// A file that is not `*.toml`: skipped inside folders.
    Other(Vec<u8>),
    Folder(Vec<Item>),
}

/// Lines of `base` with a few replaced (the edits of [`mutated_text`], for any base).
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    let lines: Vec<String> = base.lines().map(str::to_string).collect();
    let n = lines.len();
    let replacement = prop_oneof![
        Just(String::new()),
        Just("[[thread]]".to_string()),
        Just("role = 7".to_string()),
        Just("iterations = 0".to_string()),
        Just("engine = \"all\"".to_string()),
        Just("mode = \"async\"".to_string()),
        Just("reaches = [\"fatal-seen\", \"fatal-seen\"]".to_string()),
        Just("mutation = \"sync-sets-contended\"".to_string()),
        Just("verdict = \"violation\"".to_string()),
        Just("\u{0}\u{feff}".to_string()),
        "[ -~]{0,30}".prop_map(|s| s),
    ];
    (Just(lines), proptest::collection::vec((0..n, replacement), 1..3)).prop_map(|(mut lines, edits)| {
        for (i, r) in edits {
            lines[i] = r;
        }
        lines.join("\n")
    })
}

fn item() -> impl Strategy<Value = Item> {
    let leaf = prop_oneof![
        8 => Just(Item::Toml(QUICK.to_string())),
        2 => Just(Item::Toml(QUICK.replace("verdict = \"pass\"", "verdict = \"violation\"\ninvariant = \"progress\""))),
        2 => mutated(QUICK).prop_map(Item::Toml),
        1 => proptest::collection::vec(any::<u8>(), 0..48).prop_map(Item::Bytes),
        4 => proptest::collection::vec(any::<u8>(), 0..48).prop_map(Item::Other),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| proptest::collection::vec(inner, 0..4).prop_map(Item::Folder))
}

fn write_items(dir: &Path, items: &[Item]) {
    std::fs::create_dir_all(dir).unwrap();
    for (i, it) in items.iter().enumerate() {
        match it {
            Item::Toml(t) => std::fs::write(dir.join(format!("s{i}.toml")), t).unwrap(),
            Item::Bytes(b) => std::fs::write(dir.join(format!("b{i}.toml")), b).unwrap(),
            Item::Other(b) => {
                std::fs::write(dir.join(if i % 2 == 0 { format!("n{i}.txt") } else { "README".into() }), b).unwrap()
            }
            Item::Folder(sub) => write_items(&dir.join(format!("d{i}")), sub),
        }
    }
}

/// `mmcheck ARGS` in `dir`: (exit status, stdout, stderr); the test fails if it runs 30 s.
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mmcheck {args:?} in {} ran 30 s: killed", dir.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    (status.code(), out_t.join().unwrap(), err_t.join().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random folders of scenario files (good ones, broken ones, bytes, non-toml files,
    /// nested folders) given to the binary: it never panics or hangs, every stderr line is a
    /// message, `--json` stdout is JSON, and the exit status is what the library predicts:
    /// 2 when a file (or the folder) is unusable, naming every bad file; else 0 or 1.
    #[test]
    fn random_folders_never_panic_and_exit_consistently(items in proptest::collection::vec(item(), 0..6), json in any::<bool>()) {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "mmcheck-folders-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        write_items(&root.join("scn"), &items);

        // What the library says of the same folder (and whether every file is QUICK, which
        // passes).
        let mut all_quick = true;
        let bad: Result<Vec<String>, String> = match mmcheck::files::collect(&[root.join("scn")]) {
            Err(e) => Err(e.to_string()),
            Ok(files) => Ok(files
                .iter()
                .inspect(|f| all_quick &= std::fs::read_to_string(f).is_ok_and(|t| t == QUICK))
                .filter(|f| mmcheck::scenario::load_each(f).is_err())
                .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
                .collect()),
        };
        let mut args = vec!["check", "scn"];
        if json {
            args.push("--json");
        }
        let (code, out, err) = run_in(&root, &args);
        let _ = std::fs::remove_dir_all(&root);

        prop_assert!(!err.contains("panicked"), "a panic:\n{}", err);
        for l in err.lines() {
            prop_assert!(l.starts_with("mmcheck: "), "a stderr line that is not a message: {}\n{}", l, err);
        }
        match &bad {
            Err(e) => {
                prop_assert_eq!(code, Some(2), "collect refused the folder ({}):\n{}", e, err);
                prop_assert!(out.is_empty());
            }
            Ok(files) if !files.is_empty() => {
                prop_assert_eq!(code, Some(2), "{:?} do not parse:\n{}", files, err);
                for f in files {
                    prop_assert!(err.contains(&format!("mmcheck: {f}")), "{} is not named:\n{}", f, err);
                }
                prop_assert!(out.is_empty(), "stdout after a refusal:\n{}", out);
            }
            Ok(_) if all_quick => prop_assert_eq!(code, Some(0), "only passing files:\n{}", err),
            Ok(_) => prop_assert!(matches!(code, Some(0 | 1)), "exit {:?}:\n{}", code, err),
        }
        if json {
            for l in out.lines() {
                prop_assert!(serde_json::from_str::<serde_json::Value>(l).is_ok(), "not JSON: {}", l);
            }
        }
    }
}

#[test]
fn a_file_of_many_errors_reports_the_first_fifty_and_counts_the_rest() {
    let keys: String = (0..500).map(|i| format!("k{i} = {i}\n")).collect();
    // 500 unknown keys in [expect].
    let es = errs(&format!("{GOOD}{keys}"));
    assert_eq!(es[0].field.as_deref(), Some("expect.k0"), "{}", es[0]);
    assert_eq!(es.len(), mmcheck::scenario::MAX_ERRORS + 1);
    let last = es.last().unwrap();
    assert_eq!((last.line, last.field.as_deref()), (None, None));
    assert_eq!(last.message, "and 450 more errors (is this a scenario file?)");
}

#[test]
fn the_stateful_engines_keys_are_checked_and_named_with_their_table() {
    let stateful = GOOD.replace("engine = \"loom\"\npreemption_bound = 2", "engine = \"stateful\"");
    parse(Path::new("s.toml"), &stateful).expect("a stateful scenario");
    let with = |key: &str| stateful.replace("engine = \"stateful\"", &format!("engine = \"stateful\"\n{key}"));
    parse(Path::new("s.toml"), &with("max_states = 1000")).expect("a state budget");
    // A budget of zero is refused, on its line, naming the field with its table.
    let e = err(&with("max_states = 0"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("explore.max_states")), "{e}");
    // One that cannot fit in this machine's memory (10^10 states, about 130 GB of table).
    let e = err(&with("max_states = 10000000000"));
    assert_eq!(e.field.as_deref(), Some("explore.max_states"), "{e}");
    assert!(e.message.contains("more than this machine can give"), "{e}");
    let e = err(&with("max_states = 10000000001"));
    assert!(e.message.contains("out of range"), "{e}");
    // Keys of other engines are not silently ignored.
    let e = err(&with("iterations = 10"));
    assert_eq!(e.field.as_deref(), Some("explore.iterations"), "{e}");
    assert!(e.message.contains("stateful explores exhaustively"), "{e}");
    assert_eq!(err(&with("seed = 3")).field.as_deref(), Some("explore.seed"));
    assert_eq!(err(&with("preemption_bound = 3")).field.as_deref(), Some("explore.preemption_bound"));
    assert_eq!(err(&with("depth = 3")).field.as_deref(), Some("explore.depth"));
    let e = err(&with("shortest_budget = 10"));
    assert_eq!(e.field.as_deref(), Some("explore.shortest_budget"), "{e}");
    assert!(e.message.contains("breadth-first search of its own"), "{e}");
    // And max_states is the stateful engine's only.
    let e = err(&GOOD.replace("preemption_bound = 2", "max_states = 10"));
    assert_eq!(e.field.as_deref(), Some("explore.max_states"), "{e}");
    assert!(e.message.contains("only the stateful engine stores states"), "{e}");
}

#[test]
fn reduce_entries_are_checked_and_named_with_their_table() {
    let stateful = GOOD.replace("engine = \"loom\"\npreemption_bound = 2", "engine = \"stateful\"");
    let with = |key: &str| stateful.replace("engine = \"stateful\"", &format!("engine = \"stateful\"\n{key}"));
    for ok in ["reduce = []", "reduce = [\"symmetry\"]", "reduce = [\"por\"]", "reduce = [\"por\", \"symmetry\"]"] {
        parse(Path::new("s.toml"), &with(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    // An unknown reduction, on its line, naming the field with its table and the known ones.
    let e = err(&with("reduce = [\"symmetry\", \"ample\"]"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("explore.reduce")), "{e}");
    assert!(e.message.contains("unknown reduction \"ample\"") && e.message.contains("symmetry, por"), "{e}");
    // One named twice.
    let e = err(&with("reduce = [\"por\", \"por\"]"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("explore.reduce")), "{e}");
    assert!(e.message.contains("\"por\" is listed twice"), "{e}");
    // The sorted canonical form is a way of computing symmetry's: alone it is refused.
    parse(Path::new("s.toml"), &with("reduce = [\"symmetry\", \"sorted-symmetry\"]")).expect("both");
    let e = err(&with("reduce = [\"por\", \"sorted-symmetry\"]"));
    assert_eq!((e.line, e.field.as_deref()), (Some(17), Some("explore.reduce")), "{e}");
    assert!(e.message.contains("name \"symmetry\" too"), "{e}");
    // Persistent sets of starts apply with or without the partial-order reduction.
    for ok in ["reduce = [\"persistent\"]", "reduce = [\"por\", \"persistent\"]"] {
        parse(Path::new("s.toml"), &with(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    // Only the stateful engine reduces.
    let e = err(&GOOD.replace("preemption_bound = 2", "preemption_bound = 2\nreduce = [\"por\"]"));
    assert_eq!(e.field.as_deref(), Some("explore.reduce"), "{e}");
    assert!(e.message.contains("only the stateful engine reduces"), "{e}");
}

/// The reclaim-throttle model's bad input: an unknown `preempt`, a task bound to a CPU that
/// does not exist, and a role of this model in another model's file (and the other way round)
/// are each refused with file, line and field.
#[test]
fn reclaim_throttle_bad_input_names_file_line_and_field() {
    let text = |params: &str, cpu: &str| {
        format!(
            "model = \"reclaim-throttle\"\nvariant = \"v5.16-rc1\"\n\n[[thread]]\nrole = \"kcompactd\"\n{cpu}\n\
             [[thread]]\nrole = \"isolator\"\n\n[params]\n{params}\n[expect]\nverdict = \"pass\"\n"
        )
    };
    parse(Path::new("ok.toml"), &text("preempt = \"none\"\ncpus = 2", "cpu = 1")).expect("a valid file");
    let e = err(&text("preempt = \"voluntary\"", ""));
    assert_eq!((e.line, e.field.as_deref()), (Some(11), Some("params.preempt")), "{e}");
    assert!(e.message.contains("expected one of: none, full"), "{e}");
    let e = err(&text("cpus = 2", "cpu = 3"));
    assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("thread[0].cpu")), "{e}");
    assert!(e.to_string().starts_with("bad.toml:6:"), "{e}");
    let e = err(&text("cpus = 1", "cpu = 1"));
    assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("thread[0].cpu")), "{e}");
    assert!(e.message.contains("does not exist"), "{e}");
    // A role of this model in a compaction file, and a compaction role in this model's file.
    let e = err(
        "model = \"compaction\"\nvariant = \"fatal-fix\"\n[[thread]]\nrole = \"compactor\"\n[[thread]]\nrole = \"kcompactd\"\n\
         [expect]\nverdict = \"pass\"\n",
    );
    assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("thread[1].role")), "{e}");
    let e =
        err("model = \"reclaim-throttle\"\nvariant = \"v5.16-rc1\"\n[[thread]]\nrole = \"kcompactd\"\n[[thread]]\n\
         role = \"lock-holder\"\n[expect]\nverdict = \"pass\"\n");
    assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("thread[1].role")), "{e}");
}

// ---------------------------------------------------------------- a configuration under several variants

/// One configuration under two variants of its model, the verdict per variant.
const MULTI: &str = r#"model = "reclaim-throttle"
variants = ["v5.16-rc1", "nofs-headroom"]

[[thread]]
role = "kswapd"
batch = 0

[[thread]]
role = "writeback"
pages = 1

[explore]
engine = "stateful"

[expect]
by_variant = { "v5.16-rc1" = "violation(throttle-bounded)", "nofs-headroom" = "pass" }
reaches = ["throttled-writeback"]
"#;

#[test]
fn a_file_with_variants_is_one_scenario_per_variant() {
    use mmcheck::scenario::{parse_each, ExpectVerdict};
    let each = parse_each(Path::new("multi.toml"), MULTI).expect("valid");
    let names: Vec<&str> = each.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["multi@v5.16-rc1", "multi@nofs-headroom"]);
    assert_eq!(each[0].spec.variant(), "v5.16-rc1");
    assert_eq!(
        (each[0].expect.verdict, each[0].expect.invariant),
        (ExpectVerdict::Violation, Some("throttle-bounded"))
    );
    assert_eq!((each[1].expect.verdict, each[1].expect.invariant), (ExpectVerdict::Pass, None));
    // `reaches` is every variant's; the spec's target is its own variant's invariant.
    assert!(each.iter().all(|s| s.expect.reaches == ["throttled-writeback"]));
    assert_eq!(each[0].spec.target(), Some("throttle-bounded"));
    assert_eq!(each[1].spec.target(), None);
    // Each its own replay fingerprint.
    assert_ne!(each[0].spec.replay_text(), each[1].spec.replay_text());
    // "all": every variant of the model, in the model's order; `name` names them.
    // (by_variant as a table of its own, after the keys of [expect].)
    let all = MULTI.replace("variants = [\"v5.16-rc1\", \"nofs-headroom\"]", "variants = \"all\"\nname = \"w\"").replace(
        "by_variant = { \"v5.16-rc1\" = \"violation(throttle-bounded)\", \"nofs-headroom\" = \"pass\" }\nreaches = [\"throttled-writeback\"]",
        "reaches = [\"throttled-writeback\"]\n\n[expect.by_variant]\n\"v5.16-rc1\" = \"pass\"\n\"noprogress-fix\" = \"pass\"\n\
         \"kthread-resched\" = \"pass\"\n\"nofs-headroom\" = \"pass\"\n\"remote-drain\" = \"pass\"",
    );
    let each = parse_each(Path::new("all.toml"), &all).unwrap_or_else(|e| panic!("{e}\n{all}"));
    let names: Vec<&str> = each.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["w@v5.16-rc1", "w@noprogress-fix", "w@kthread-resched", "w@nofs-headroom", "w@remote-drain"]);
    // A caller that takes one configuration refuses the file on its `variants`.
    let e = err(MULTI);
    assert_eq!((e.line, e.field.as_deref()), (None, Some("variants")), "{e}");
    assert!(e.message.contains("2 configurations"), "{e}");
    // A file of one variant is read by both as before.
    assert_eq!(parse_each(Path::new("good.toml"), GOOD).expect("valid").len(), 1);
}

/// Every wrong `variants` or `by_variant` is refused with file, line and field (with its table).
#[test]
fn variants_and_by_variant_errors_name_file_line_and_field() {
    let by = "by_variant = { \"v5.16-rc1\" = \"violation(throttle-bounded)\", \"nofs-headroom\" = \"pass\" }";
    let cases: Vec<(String, Option<usize>, &str, &str)> = vec![
        (MULTI.replace("variants = [", "variant = \"v5.16-rc1\"\nvariants = ["), Some(3), "variants", "not both"),
        (
            MULTI.replace("[\"v5.16-rc1\", \"nofs-headroom\"]", "\"recheck\""),
            Some(2),
            "variants",
            "variant = \"recheck\"",
        ),
        (MULTI.replace("[\"v5.16-rc1\", \"nofs-headroom\"]", "[]"), Some(2), "variants", "empty list"),
        (
            MULTI.replace("\"nofs-headroom\"]", "\"nofs-hedroom\"]"),
            Some(2),
            "variants",
            "unknown value \"nofs-hedroom\"",
        ),
        (MULTI.replace("\"nofs-headroom\"]", "\"v5.16-rc1\"]"), Some(2), "variants", "listed twice"),
        (MULTI.replace("[\"v5.16-rc1\", \"nofs-headroom\"]", "3"), Some(2), "variants", "found an integer"),
        (
            MULTI.replace("[\"v5.16-rc1\", \"nofs-headroom\"]", "[\"recheck\"]"),
            Some(2),
            "variants",
            "expected one of: v5.16-rc1",
        ),
        (MULTI.replace(by, ""), Some(15), "expect.by_variant", "missing"),
        (
            MULTI.replace(", \"nofs-headroom\" = \"pass\"", ""),
            Some(16),
            "expect.by_variant",
            "no verdict for variant nofs-headroom",
        ),
        (
            MULTI.replace(
                "\"nofs-headroom\" = \"pass\"",
                "\"nofs-headroom\" = \"pass\", \"kthread-resched\" = \"pass\"",
            ),
            Some(16),
            "expect.by_variant.kthread-resched",
            "not among the file's variants",
        ),
        (
            MULTI.replace("\"nofs-headroom\" = \"pass\"", "\"nofs-headroom\" = \"pass\", \"recheck\" = \"pass\""),
            Some(16),
            "expect.by_variant.recheck",
            "unknown variant \"recheck\"",
        ),
        (
            MULTI.replace("= \"pass\" }", "= \"maybe\" }"),
            Some(16),
            "expect.by_variant.nofs-headroom",
            "found \"maybe\"",
        ),
        (
            MULTI.replace("= \"pass\" }", "= \"violation()\" }"),
            Some(16),
            "expect.by_variant.nofs-headroom",
            "INVARIANT",
        ),
        (
            MULTI.replace("= \"pass\" }", "= \"violation(no-lost-wakeup)\" }"),
            Some(16),
            "expect.by_variant.nofs-headroom",
            "unknown invariant \"no-lost-wakeup\"",
        ),
        (MULTI.replace("= \"pass\" }", "= true }"), Some(16), "expect.by_variant.nofs-headroom", "found a boolean"),
        (
            MULTI.replace("[expect]\n", "[check]\ninvariants = [\"progress\"]\n\n[expect]\n"),
            Some(19),
            "expect.by_variant.v5.16-rc1",
            "throttle-bounded is not among check.invariants",
        ),
        (MULTI.replace(by, "by_variant = \"pass\""), Some(16), "expect.by_variant", "expected a table"),
        (MULTI.replace("[expect]\n", "[expect]\nverdict = \"pass\"\n"), Some(16), "expect.verdict", "per variant"),
        (
            GOOD.replace("reaches", "by_variant = { \"recheck\" = \"pass\" }\nreaches"),
            Some(21),
            "expect.by_variant",
            "names one variant",
        ),
        (MULTI.replace("variants =", "mutation = \"no-putback\"\nvariants ="), Some(2), "mutation", "one variant"),
    ];
    for (text, line, field, msg) in cases {
        let es = errs(&text);
        let e = es.iter().find(|e| e.field.as_deref() == Some(field)).unwrap_or_else(|| {
            panic!("no error on {field}: {:?}\n{text}", es.iter().map(|e| e.to_string()).collect::<Vec<_>>())
        });
        assert_eq!(e.line, line, "{e}\n{text}");
        assert!(e.message.contains(msg), "{e}: wanted {msg:?}");
        assert!(
            e.to_string()
                .starts_with(&format!("bad.toml{}: {field}: ", line.map(|l| format!(":{l}")).unwrap_or_default())),
            "{e}"
        );
    }
    // The command refuses such a file with exit status 2, one line an error, nothing on stdout.
    let dir = std::env::temp_dir().join(format!("mmcheck-variants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        MULTI
            .replace(", \"nofs-headroom\" = \"pass\"", "")
            .replace("\"nofs-headroom\"]", "\"nofs-headroom\", \"nofs-headroom\"]"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mmcheck")).arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml:2: variants: \"nofs-headroom\" is listed twice"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
