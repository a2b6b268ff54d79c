//! Hostile input (issue 13): symbolic-link loops, FIFOs and devices named `*.toml`, huge
//! files, dangling links, files named twice, control characters in names. `mmcheck` must
//! finish (every run of the binary here is killed and fails the test after 20 s), refuse what
//! it cannot use with exit status 2 and a message naming the path, check each file once, and
//! never put a raw control character on the terminal.
//!
//! And the rest of the command line: a mutant outside its mutation's reach, replays (past
//! the end, under another engine, with `--json`), `--json` output that must be JSON on every
//! line, a full disk or a closed pipe on stdout, bad flags of `run` and `compare`, and
//! `matrix` and `selftest` with nothing to decide.

#![cfg(unix)]

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mmcheck::files::{self, FileErrorKind, MAX_BYTES};
use mmcheck::term::{escape_control, replay_command, shell_quote};

/// A scenario that parses, runs in milliseconds and passes.
const QUICK: &str = r#"model = "compaction"
variant = "fatal-fix"
[[thread]]
role = "compactor"
mode = "sync-light"
[[thread]]
role = "killer"
[explore]
engine = "shuttle-pct"
iterations = 10
[expect]
verdict = "pass"
reaches = ["scanners-met"]
"#;

/// A scenario whose expected violation is found in milliseconds (a seeded mutant), so that a
/// counterexample and its replay line are printed.
const VIOLATION: &str = r#"model = "compaction"
variant = "fatal-fix"
mutation = "sync-sets-contended"
[[thread]]
role = "compactor"
mode = "sync-light"
[[thread]]
role = "lock-holder"
lock = "lru_lock"
[params]
pageblocks = 2
pages_per_block = 2
swap_cluster_max = 1
compact_cluster_max = 1
[explore]
engine = "loom"
[expect]
verdict = "violation"
invariant = "sync-not-contended"
"#;

/// A fresh folder under the system temporary folder, removed (without following links) on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "mmcheck-hostile-{}-{}-{nanos}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
    fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.0.join(rel)
    }
    /// Write `text` to `rel`, creating folders.
    fn file(&self, rel: impl AsRef<Path>, text: impl AsRef<[u8]>) -> PathBuf {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    }
    fn link(&self, target: impl AsRef<Path>, rel: impl AsRef<Path>) -> PathBuf {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(target, &p).unwrap();
        p
    }
    fn fifo(&self, rel: impl AsRef<Path>) -> PathBuf {
        let p = self.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        let st = Command::new("mkfifo").arg(&p).status().expect("mkfifo(1) runs");
        assert!(st.success(), "mkfifo {}", p.display());
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `mmcheck ARGS` in `dir`; killed, and the test failed, if it has not exited within 20 s.
fn mmcheck<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    mmcheck_to(dir, args, None)
}

/// [`mmcheck`] with its standard output sent to `stdout` instead of captured (then the
/// output's `stdout` is empty).
fn mmcheck_to<I, S>(dir: &Path, args: I, stdout: Option<Stdio>) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_os_string()).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout.unwrap_or_else(Stdio::piped))
        .stderr(Stdio::piped())
        .spawn()
        .expect("mmcheck starts");
    let out = child.stdout.take();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut out) = out {
            let _ = out.read_to_end(&mut v);
        }
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = wait_20s(&mut child, &args, dir);
    Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() }
}

/// Wait for `child`; kill it and fail the test if it has not exited after 20 s.
fn wait_20s(child: &mut std::process::Child, args: &[std::ffi::OsString], dir: &Path) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mmcheck {args:?} (in {}) has not exited after 20 s: killed", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit status 2, and stderr names `name`; returns stderr.
fn refused(o: &Output, name: &str) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "exit status; stdout:\n{}\nstderr:\n{err}", text(&o.stdout));
    assert!(err.contains(name), "stderr does not name {name}:\n{err}");
    err
}

/// Exit status 0 and `n` scenarios checked; returns stdout.
fn checked(o: &Output, n: usize) -> String {
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "exit status; stdout:\n{out}\nstderr:\n{}", text(&o.stderr));
    assert!(out.contains(&format!("\n{n} scenario(s), {n} as expected, 0 not")), "not {n} scenario(s):\n{out}");
    out
}

fn no_raw_controls(b: &[u8], what: &str) {
    let s = text(b);
    assert!(
        !s.chars().any(|c| c.is_control() && c != '\n'),
        "{what} carries a raw control character:\n{}",
        escape_control(&s)
    );
}

// ---------------------------------------------------------------- loops and second routes

#[test]
fn a_symlink_loop_is_refused_naming_the_link_and_finishes() {
    let t = TempDir::new("loop");
    t.file("scn/sub/q.toml", QUICK);
    t.link("..", "scn/sub/up");
    let e = files::collect(&[t.join("scn")]).unwrap_err();
    assert_eq!(e.kind, FileErrorKind::Loop, "{e}");
    assert_eq!(e.path, t.join("scn/sub/up"));
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn/sub/up");
    assert!(err.contains("loop"), "{err}");

    // A link to the folder itself, at the top.
    let t = TempDir::new("selfloop");
    t.file("scn/q.toml", QUICK);
    t.link(".", "scn/again");
    refused(&mmcheck(t.path(), ["check", "scn"]), "scn/again");
}

#[test]
fn a_second_route_to_a_folder_is_walked_once_and_each_file_checked_once() {
    let t = TempDir::new("route");
    t.file("scn/b/q.toml", QUICK);
    t.link("../b", "scn/a/link");
    t.link("b", "scn/c");
    // Folders are walked in name order: b is first reached as a/link.
    assert_eq!(files::collect(&[t.join("scn")]).unwrap(), vec![t.join("scn/a/link/q.toml")]);
    checked(&mmcheck(t.path(), ["check", "scn"]), 1);
}

#[test]
fn a_chain_of_links_that_never_ends_is_a_loop() {
    let t = TempDir::new("chain");
    t.link("y.toml", "x.toml");
    t.link("x.toml", "y.toml");
    let e = files::collect(&[t.join("x.toml")]).unwrap_err();
    assert_eq!(e.kind, FileErrorKind::Loop, "{e}");
    refused(&mmcheck(t.path(), ["check", "x.toml"]), "x.toml");
    let t = TempDir::new("chain-dir");
    t.file("scn/q.toml", QUICK);
    t.link("self.toml", "scn/self.toml");
    refused(&mmcheck(t.path(), ["check", "scn"]), "scn/self.toml");
}

// ---------------------------------------------------------------- special files

#[test]
fn a_fifo_named_toml_does_not_hang() {
    let t = TempDir::new("fifo");
    t.file("scn/q.toml", QUICK);
    t.fifo("scn/x.toml");
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn/x.toml");
    assert!(err.contains("FIFO"), "{err}");
    refused(&mmcheck(t.path(), ["check", "scn/x.toml"]), "scn/x.toml");
    let o = mmcheck(t.path(), ["check", "--json", "scn/x.toml"]);
    refused(&o, "scn/x.toml");
    assert!(o.stdout.is_empty(), "--json stdout: {}", text(&o.stdout));
    let e = files::collect(&[t.join("scn")]).unwrap_err();
    assert_eq!((e.kind, e.path.clone()), (FileErrorKind::NotRegular, t.join("scn/x.toml")), "{e}");

    // read_scenario looks before it opens: it returns at once, with no writer on the FIFO.
    let p = t.join("scn/x.toml");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(files::read_scenario(&p).map_err(|e| e.kind)));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(20)).expect("read_scenario returns"),
        Err(FileErrorKind::NotRegular)
    );
}

#[test]
fn a_fifo_not_called_toml_in_a_folder_is_skipped() {
    let t = TempDir::new("fifo-other");
    t.file("scn/q.toml", QUICK);
    t.fifo("scn/pipe");
    checked(&mmcheck(t.path(), ["check", "scn"]), 1);
}

#[test]
fn a_toml_link_to_dev_zero_is_refused() {
    let t = TempDir::new("zero");
    t.file("scn/q.toml", QUICK);
    t.link("/dev/zero", "scn/z.toml");
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn/z.toml");
    assert!(err.contains("/dev/zero"), "{err}");
    refused(&mmcheck(t.path(), ["check", "scn/z.toml"]), "z.toml");
    assert_eq!(files::read_scenario(Path::new("/dev/zero")).unwrap_err().kind, FileErrorKind::NotRegular);
}

// ---------------------------------------------------------------- size, encoding, absence

#[test]
fn a_file_above_the_size_cap_is_refused_naming_it_and_its_size() {
    let t = TempDir::new("big");
    t.file("scn/q.toml", QUICK);
    t.file("scn/big.toml", vec![b'#'; 2 << 20]);
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn/big.toml");
    assert!(err.contains("2097152 bytes"), "{err}");
    refused(&mmcheck(t.path(), ["check", "scn/big.toml"]), "big.toml");

    // The cap itself is allowed.
    let mut at_cap = QUICK.as_bytes().to_vec();
    at_cap.resize(MAX_BYTES as usize, b'\n');
    let p = t.file("at-cap.toml", &at_cap);
    assert_eq!(files::read_scenario(&p).unwrap().len(), MAX_BYTES as usize);
    at_cap.push(b'\n');
    let p = t.file("over.toml", &at_cap);
    assert_eq!(files::read_scenario(&p).unwrap_err().kind, FileErrorKind::TooLarge);
}

#[test]
fn a_file_that_is_not_utf8_is_refused() {
    let t = TempDir::new("utf8");
    t.file("bad.toml", b"model = \"compaction\"\n# \xff\xfe\n");
    let e = files::read_scenario(&t.join("bad.toml")).unwrap_err();
    assert_eq!(e.kind, FileErrorKind::NotUtf8);
    assert!(e.message.contains("line 2"), "{e}");
    refused(&mmcheck(t.path(), ["check", "bad.toml"]), "bad.toml");
}

#[test]
fn dangling_links_are_refused_naming_them() {
    let t = TempDir::new("dangling");
    t.file("scn/q.toml", QUICK);
    t.link("nowhere.toml", "scn/gone.toml");
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn/gone.toml");
    assert!(err.contains("dangling"), "{err}");
    refused(&mmcheck(t.path(), ["check", "scn/gone.toml"]), "gone.toml");
    assert_eq!(files::collect(&[t.join("scn/gone.toml")]).unwrap_err().kind, FileErrorKind::Missing);
    refused(&mmcheck(t.path(), ["check", "missing.toml"]), "missing.toml");

    // A dangling link not called *.toml is not a scenario: skipped like any other file.
    let t = TempDir::new("dangling-other");
    t.file("scn/q.toml", QUICK);
    t.link("nowhere", "scn/old-notes");
    checked(&mmcheck(t.path(), ["check", "scn"]), 1);
}

// ---------------------------------------------------------------- which files

#[test]
fn the_same_file_named_twice_is_checked_once() {
    let t = TempDir::new("twice");
    t.file("scn/q.toml", QUICK);
    t.link("scn/q.toml", "alias.toml");
    checked(&mmcheck(t.path(), ["check", "scn/q.toml", "scn/q.toml", "./scn/q.toml", "alias.toml", "scn"]), 1);
    checked(&mmcheck(t.path(), ["check", "scn", "scn"]), 1);
    assert_eq!(files::collect(&[t.join("alias.toml"), t.join("scn")]).unwrap(), vec![t.join("alias.toml")]);
}

#[test]
fn a_folder_with_no_scenario_file_is_refused() {
    let t = TempDir::new("readme");
    t.file("scn/README", "not a scenario\n");
    t.file("scn/sub/notes.md", "nor this\n");
    let err = refused(&mmcheck(t.path(), ["check", "scn"]), "scn");
    assert!(err.contains("scn: no *.toml scenario files"), "{err}");
    assert_eq!(files::collect(&[t.join("scn")]).unwrap_err().kind, FileErrorKind::Empty);
}

#[test]
fn non_toml_files_are_skipped_at_the_top_of_a_named_folder_too() {
    let t = TempDir::new("top");
    t.file("scn/q.toml", QUICK);
    t.file("scn/README.md", "model = = not toml\n");
    t.file("scn/notes.txt", b"\xff\xff");
    t.file("scn/sub/README", "[[[\n");
    checked(&mmcheck(t.path(), ["check", "scn"]), 1);
    // A file named on the command line is taken whatever its extension.
    t.file("scenario.txt", QUICK);
    checked(&mmcheck(t.path(), ["check", "scenario.txt"]), 1);
}

#[test]
fn files_are_sorted_per_named_path_in_the_order_given() {
    let t = TempDir::new("order");
    for f in ["b/z.toml", "b/a.toml", "b/m/k.toml", "a/y.toml", "a/c.toml"] {
        t.file(f, QUICK);
    }
    let got = files::collect(&[t.join("b"), t.join("a")]).unwrap();
    let want: Vec<PathBuf> =
        ["b/a.toml", "b/m/k.toml", "b/z.toml", "a/c.toml", "a/y.toml"].iter().map(|f| t.join(f)).collect();
    assert_eq!(got, want);
    // A folder inside an earlier named folder is not empty, and adds nothing.
    assert_eq!(files::collect(&[t.join("b"), t.join("b/m")]).unwrap().len(), 3);
    assert_eq!(files::collect(&[t.join("b/m"), t.join("b")]).unwrap()[0], t.join("b/m/k.toml"));
}

// ---------------------------------------------------------------- terminal output

#[test]
fn escape_control_shows_controls_and_leaves_unicode_alone() {
    assert_eq!(escape_control("compaction/fatal-fix ✓ é"), "compaction/fatal-fix ✓ é");
    assert_eq!(escape_control("a\x1b]0;pwned\x07b"), "a\\x1b]0;pwned\\x07b");
    assert_eq!(escape_control("l1\nl2\r\tx\x7f\u{85}\u{9b}2J"), "l1\\nl2\\r\\tx\\x7f\\u{85}\\u{9b}2J");
    assert_eq!(escape_control("abc\u{202e}fdp.toml"), "abc\\u{202e}fdp.toml");
}

/// What `sh -c "printf %s WORD"` prints.
fn sh_printf(shell: &str, word: &str) -> Vec<u8> {
    let o = Command::new(shell).arg("-c").arg(format!("printf %s {word}")).output().expect("the shell runs");
    assert!(o.status.success(), "{shell} -c printf %s {word}: {}", text(&o.stderr));
    o.stdout
}

#[test]
fn shell_quote_round_trips_through_sh() {
    let nasty = [
        "plain/path-1.toml",
        "with space.toml",
        "it's",
        "'",
        "''\\'",
        "\"double\" quotes",
        "$(touch /tmp/mmcheck-hostile-pwned)",
        "`id` ${HOME} $HOME",
        "semi;colon&amp|pipe>redir<in",
        "new\nline\n",
        "tab\tand\x1besc",
        "*?[glob]~",
        "-starts-with-dash",
        "",
        "ünïcödé ✓",
    ];
    for s in nasty {
        let q = shell_quote(s);
        assert_eq!(text(&sh_printf("sh", &q)), s, "sh printf of {q}");
    }
    assert_eq!(shell_quote("scenarios/a_b-c.toml"), "scenarios/a_b-c.toml");
    assert_eq!(shell_quote("a b"), "'a b'");
    assert!(!Path::new("/tmp/mmcheck-hostile-pwned").exists());
}

#[test]
fn replay_command_is_one_safe_line_that_names_the_exact_file() {
    assert_eq!(
        replay_command(Path::new("scenarios/x.toml"), "loom-3-ab12cd34"),
        "mmcheck check scenarios/x.toml --replay loom-3-ab12cd34"
    );
    assert_eq!(replay_command(Path::new("my dir/it's.toml"), "t"), "mmcheck check 'my dir/it'\\''s.toml' --replay t");
    let cases: [&[u8]; 3] = [b"e\x1b[31mvil\n.toml", b"bidi\xe2\x80\xaeslmx.toml", b"not-utf8-\xff\xfe.toml"];
    let has_bash = Command::new("bash").arg("-c").arg("true").status().is_ok_and(|s| s.success());
    for bytes in cases {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(OsStr::from_bytes(bytes));
        let line = replay_command(p, "loom-1-00");
        assert!(!line.chars().any(mmcheck::term::is_hazard), "{}", escape_control(&line));
        let word = line.strip_prefix("mmcheck check ").and_then(|l| l.strip_suffix(" --replay loom-1-00")).unwrap();
        if has_bash {
            assert_eq!(sh_printf("bash", word), bytes, "bash printf of {word}");
        }
    }
}

#[test]
fn a_file_name_with_esc_reaches_the_terminal_escaped() {
    let t = TempDir::new("esc");
    let name = "e\x1b[2Jvil.toml";
    t.file(format!("scn/{name}"), QUICK);
    let o = mmcheck(t.path(), ["check", "scn"]);
    let out = checked(&o, 1);
    assert!(out.contains("e\\x1b[2Jvil "), "{}", escape_control(&out));
    no_raw_controls(&o.stdout, "stdout");
    no_raw_controls(&o.stderr, "stderr");

    // Errors name it escaped too.
    t.file(format!("bad/{name}"), "model = 3\n\x1b[2J = 1\n");
    let o = mmcheck(t.path(), ["check", "bad"]);
    refused(&o, "e\\x1b[2Jvil.toml");
    no_raw_controls(&o.stderr, "stderr");

    // --json: one JSON object per line on stdout, nothing else.
    let o = mmcheck(t.path(), ["check", "--json", "scn"]);
    assert_eq!(o.status.code(), Some(0));
    for line in text(&o.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(v["file"].as_str(), Some(format!("scn/{name}").as_str()));
    }
    no_raw_controls(&o.stdout, "--json stdout");
}

#[test]
fn the_printed_replay_line_can_be_pasted_into_sh() {
    let t = TempDir::new("replay");
    let file = "my dir/it's $(echo pwned).toml";
    t.file(file, VIOLATION);
    let o = mmcheck(t.path(), ["check", "--traces", "my dir"]);
    let out = checked(&o, 1);
    let line = out.lines().find_map(|l| l.strip_prefix("replay: ")).unwrap_or_else(|| panic!("no replay line:\n{out}"));
    assert!(line.starts_with("mmcheck check 'my dir/it'\\''s $(echo pwned).toml' --replay "), "{line}");
    let cmd = line.replacen("mmcheck", &shell_quote(env!("CARGO_BIN_EXE_mmcheck")), 1);
    let o = Command::new("sh").arg("-c").arg(&cmd).current_dir(t.path()).output().unwrap();
    let replayed = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{cmd}:\n{replayed}\n{}", text(&o.stderr));
    assert!(replayed.contains("violated sync-not-contended"), "{replayed}");

    // The JSON replay field is the same command.
    let o = mmcheck(t.path(), ["check", "--json", "my dir"]);
    let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(v["replay"].as_str(), Some(line));
}

// ---------------------------------------------------------------- more scenarios

/// A loom scenario that passes in a few executions: a matrix cell ("holds").
const LOOM_PASS: &str = r#"model = "compaction"
variant = "fatal-fix"
[[thread]]
role = "compactor"
mode = "sync-light"
[[thread]]
role = "killer"
[explore]
engine = "loom"
[expect]
verdict = "pass"
reaches = ["fatal-seen"]
"#;

/// Two kswapds on nodes 0 and 1 and a writer, under `variant`, with `extra` top-level lines.
fn kswapd(variant: &str, extra: &str) -> String {
    format!(
        "model = \"kswapd-stall\"\nvariant = \"{variant}\"\n{extra}\n[[thread]]\nrole = \"kswapd\"\nnode = 0\n\n\
         [[thread]]\nrole = \"kswapd\"\nnode = 1\n\n[[thread]]\nrole = \"writer\"\n\n[params]\ntimeout = \"never\"\n\n\
         [explore]\nengine = \"loom\"\npreemption_bound = 2\n\n[expect]\nverdict = \"violation\"\n\
         invariant = \"no-lost-wakeup\"\n"
    )
}

/// Every line of `out` is one JSON object; returns them.
fn json_lines(out: &[u8], what: &str) -> Vec<serde_json::Value> {
    let s = text(out);
    assert!(!s.is_empty(), "{what}: no output");
    s.lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: a stdout line is not JSON ({e}): {l}"));
            assert!(v.is_object(), "{what}: not a JSON object: {l}");
            v
        })
        .collect()
}

/// Nothing on stderr but `mmcheck: ` lines, and no panic.
fn stderr_is_messages(o: &Output, what: &str) {
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{what}: a panic:\n{err}");
    for l in err.lines() {
        assert!(l.starts_with("mmcheck: "), "{what}: a stderr line that is not a message: {l}\n{err}");
    }
}

/// The replay token `check --json FILE` prints for a violating `file`.
fn token_of(dir: &Path, file: &str) -> String {
    token_in(&mmcheck(dir, ["check", "--json", file]))
}

/// The same, made by the stateful engine (`--engine stateful`).
fn stateful_token_of(dir: &Path, file: &str) -> String {
    token_in(&mmcheck(dir, ["check", "--json", file, "--engine", "stateful"]))
}

/// The replay token of the first line a `check --json` printed.
fn token_in(o: &Output) -> String {
    let v = &json_lines(&o.stdout, "check --json")[0];
    let replay = v["replay"].as_str().unwrap_or_else(|| panic!("no replay in {v}"));
    replay.rsplit(' ').next().unwrap().to_string()
}

// ---------------------------------------------------------------- mutant applicability

#[test]
fn a_mutant_outside_its_mutations_applicability_is_refused_naming_file_and_mutation() {
    let t = TempDir::new("applies");
    // recheck-before-enqueue changes code only the recheck variant has.
    t.file("m/enqueue.toml", kswapd("waitqueue-v1", "mutation = \"recheck-before-enqueue\""));
    let err = refused(&mmcheck(t.path(), ["check", "m/enqueue.toml"]), "m/enqueue.toml");
    assert!(err.contains(": mutation: recheck-before-enqueue cannot run in this scenario"), "{err}");
    assert!(err.contains("only variant recheck has"), "{err}");
    // The same file under recheck is accepted.
    t.file("ok/enqueue.toml", kswapd("recheck", "mutation = \"recheck-before-enqueue\""));
    assert!(mmcheck_model_ok(&t, "ok/enqueue.toml"));

    // sync-sets-contended changes the sync modes' locking: an async compactor never runs it.
    t.file("m/async.toml", VIOLATION.replace("mode = \"sync-light\"", "mode = \"async\""));
    let err = refused(&mmcheck(t.path(), ["check", "m/async.toml"]), "m/async.toml");
    assert!(err.contains(": mutation: sync-sets-contended cannot run in this scenario"), "{err}");
    // Both at once, and selftest on the folder: every error, one line each, exit 2.
    let o = mmcheck(t.path(), ["selftest", "--dir", "m"]);
    let err = refused(&o, "m/async.toml");
    assert!(err.contains("m/enqueue.toml"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
}

/// The file parses (its check may take a while, so only `--replay garbage` is run: the token
/// is refused after the file was parsed).
fn mmcheck_model_ok(t: &TempDir, file: &str) -> bool {
    let o = mmcheck(t.path(), ["check", file, "--replay", "garbage"]);
    text(&o.stderr).contains("is not a replay token")
}

#[test]
fn selftest_json_reports_whether_the_mutation_ran_and_what_the_unmutated_scenario_does() {
    let t = TempDir::new("selftest-json");
    t.file("m/sync-sets-contended.toml", VIOLATION);
    let o = mmcheck(t.path(), ["selftest", "--json", "--dir", "m"]);
    // The other mutants have no scenario here: they survive, so the exit status is 1.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    stderr_is_messages(&o, "selftest --json");
    let lines = json_lines(&o.stdout, "selftest --json");
    let mine = lines.iter().find(|v| v["mutant"] == "sync-sets-contended").expect("its line");
    assert_eq!(mine["mutation_ran"], true, "{mine}");
    assert_eq!(mine["unmutated_violates"], false, "{mine}");
    assert_eq!(mine["killed"], true, "{mine}");
    assert_eq!(mine["caught_by"], "sync-not-contended", "{mine}");
    for v in lines.iter().filter(|v| v["mutant"] != "sync-sets-contended") {
        assert_eq!((v["scenario"].is_null(), &v["killed"], &v["mutation_ran"]), (true, &false.into(), &false.into()));
        assert!(v["unmutated_violates"].is_null(), "{v}");
    }
}

// ---------------------------------------------------------------- replays

#[test]
fn a_replay_index_past_the_end_is_exit_2_with_no_verdict() {
    let t = TempDir::new("replay-end");
    t.file("v.toml", VIOLATION);
    let token = token_of(t.path(), "v.toml");
    let (_, rest) = token.split_once('-').unwrap();
    let (_, fp) = rest.split_once('-').unwrap();
    let past = format!("loom-99999-{fp}");
    for json in [false, true] {
        let mut args = vec!["check", "v.toml", "--replay", &past];
        if json {
            args.push("--json");
        }
        let o = mmcheck(t.path(), &args);
        let err = refused(&o, "v.toml");
        assert!(err.contains("there is no execution 99999"), "{err}");
        assert!(o.stdout.is_empty(), "--json {json}: stdout:\n{}", text(&o.stdout));
        stderr_is_messages(&o, "a replay past the end");
    }
}

#[test]
fn a_replay_with_json_puts_only_json_on_stdout() {
    let t = TempDir::new("replay-json");
    t.file("v.toml", VIOLATION);
    let token = token_of(t.path(), "v.toml");
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", &token, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines = json_lines(&o.stdout, "--replay --json");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["verdict"], "violation");
    assert_eq!(lines[0]["engine"], "loom", "the scenario's engine, once");

    // Execution 0 runs the threads one after the other: no contention, no violation. Its
    // replay says so on stderr, and stdout is still only JSON.
    let zero = token.replacen(token.split('-').nth(1).unwrap(), "0", 1);
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", &zero, "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(json_lines(&o.stdout, "--replay of a pass --json").len(), 1);
    assert!(text(&o.stderr).contains("execution 0 violates no invariant"), "{}", text(&o.stderr));
    stderr_is_messages(&o, "--replay of a pass");
}

/// A file that expects a pass but violates: its check is a MISMATCH (exit 1), and so is the
/// replay of the counterexample it prints, in the table and in JSON, for loom's token and for
/// the stateful engine's.
#[test]
fn a_replay_of_a_mismatch_exits_1_as_the_check_does() {
    let t = TempDir::new("replay-mismatch");
    let pass = kswapd("waitqueue-v1", "").replace(
        "verdict = \"violation\"\ninvariant = \"no-lost-wakeup\"",
        "verdict = \"pass\"\nreaches = [\"trylock-failed\"]",
    );
    assert!(pass.contains("verdict = \"pass\""), "{pass}");
    t.file("p.toml", pass);
    for engine in [None, Some("stateful")] {
        let mut args = vec!["check", "--json", "p.toml"];
        args.extend(engine.map(|e| ["--engine", e]).into_iter().flatten());
        let o = mmcheck(t.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        let v = &json_lines(&o.stdout, "check --json")[0];
        assert_eq!(v["matched"], false, "{v}");
        let token = v["replay"].as_str().unwrap_or_else(|| panic!("no replay in {v}")).rsplit(' ').next().unwrap();
        let o = mmcheck(t.path(), ["check", "p.toml", "--replay", token]);
        let out = text(&o.stdout);
        assert!(out.contains("MISMATCH") && out.contains("0 as expected, 1 not"), "{out}");
        assert_eq!(o.status.code(), Some(1), "--replay {token}:\n{out}\n{}", text(&o.stderr));
        let o = mmcheck(t.path(), ["check", "p.toml", "--replay", token, "--json"]);
        assert_eq!(json_lines(&o.stdout, "--replay --json")[0]["matched"], false);
        assert_eq!(o.status.code(), Some(1), "--replay {token} --json: {}", text(&o.stderr));
    }
}

/// A stateful replay runs one schedule; its coverage line counts the events of that schedule
/// (it printed zeros, although the diagram showed them).
#[test]
fn a_stateful_replay_counts_the_coverage_of_its_execution() {
    let t = TempDir::new("replay-stateful-coverage");
    t.file("v.toml", kswapd("waitqueue-v1", ""));
    let token = &stateful_token_of(t.path(), "v.toml");
    assert!(token.starts_with("stateful-"), "{token}");
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", token, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let r = &json_lines(&o.stdout, "--replay --json")[0];
    // A lost wake-up needs a loser: a failed trylock, a lost cmpxchg, a queued task.
    for event in ["trylock-failed", "cmpxchg-lost", "enqueued"] {
        assert!(r["coverage"][event].as_u64().is_some_and(|n| n > 0), "{event} not counted: {r}");
    }
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", token]);
    let out = text(&o.stdout);
    let line = out.lines().find(|l| l.trim_start().starts_with("coverage:")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("trylock-failed=") && !line.contains("trylock-failed=0 "), "{line}");
}

/// A stateful token carries its schedule, and its last word hashes the scenario, not the
/// schedule: a token edited to name a task that cannot move (first choice, or one choice more
/// at the end), or to have more choices than its execution, is refused with exit 2, naming the
/// file, `--replay` and the choice. (The runtime panicked on it.)
#[test]
fn an_edited_stateful_schedule_is_exit_2_naming_the_choice() {
    let t = TempDir::new("replay-edited-schedule");
    t.file("v.toml", kswapd("waitqueue-v1", ""));
    let token = stateful_token_of(t.path(), "v.toml");
    let (schedule, fp) = token.strip_prefix("stateful-").and_then(|r| r.rsplit_once('-')).expect(&token);
    let n = schedule.chars().filter(|&c| c != '.').count();
    // Task 31 (`v`): the scenario has fewer tasks.
    let first = format!("stateful-v{}-{fp}", &schedule[1..]);
    let last = format!("stateful-{schedule}v-{fp}");
    for (edited, choice) in [(first, 1), (last, n + 1)] {
        for json in [false, true] {
            let mut args = vec!["check", "v.toml", "--replay", &edited];
            if json {
                args.push("--json");
            }
            let o = mmcheck(t.path(), &args);
            let err = refused(&o, "v.toml");
            assert!(err.contains("--replay") && err.contains("not an execution of this scenario"), "{err}");
            assert!(err.contains(&format!("choice {choice} (counting from 1) names task 31")), "{err}");
            assert!(o.stdout.is_empty(), "--json {json}: stdout:\n{}", text(&o.stdout));
            stderr_is_messages(&o, "an edited schedule");
        }
    }
    // Following the refusals (each names the tasks that could move) to the execution's end:
    // a schedule with one choice more than the execution has is refused too.
    let mut longer = schedule.to_string();
    let ended = (0..500).find_map(|_| {
        let o = mmcheck(t.path(), ["check", "v.toml", "--replay", &format!("stateful-{longer}v-{fp}")]);
        let err = refused(&o, "v.toml");
        stderr_is_messages(&o, "a longer schedule");
        if err.contains("the execution ended after") {
            return Some(err);
        }
        let can = err.split("(the tasks that can: ").nth(1).unwrap_or_else(|| panic!("{err}"));
        let task: u8 = can.split([',', ')']).next().and_then(|t| t.parse().ok()).unwrap_or_else(|| panic!("{err}"));
        longer.push(b"0123456789abcdefghijklmnopqrstuv"[task as usize] as char);
        None
    });
    let err = ended.expect("the execution did not end within 500 choices more");
    let m = longer.chars().filter(|&c| c != '.').count();
    assert!(err.contains(&format!("the execution ended after {m} of its {} choices", m + 1)), "{err}");
}

#[test]
fn a_loom_token_replayed_under_another_engine_is_refused_naming_both() {
    let t = TempDir::new("replay-engine");
    t.file("v.toml", VIOLATION);
    let token = token_of(t.path(), "v.toml");
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", &token, "--engine", "shuttle-pct"]);
    let err = refused(&o, "v.toml");
    assert!(err.contains("made by the loom engine") && err.contains("--engine shuttle-pct cannot replay it"), "{err}");
    assert!(o.stdout.is_empty());
    // --engine loom (the token's own) is fine.
    let o = mmcheck(t.path(), ["check", "v.toml", "--replay", &token, "--engine", "loom"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

// ---------------------------------------------------------------- the table

/// The wide table's (`--wide`) columns are sized to its rows: a scenario name over 40
/// characters and a variant+mutation over 22 do not shift the columns after them.
#[test]
fn the_tables_columns_line_up_whatever_the_lengths_of_names_and_variants() {
    let t = TempDir::new("table-widths");
    let long = "a-scenario-name-much-longer-than-forty-characters-to-shift-columns";
    t.file(
        "t/a.toml",
        VIOLATION.replace("variant = \"fatal-fix\"", &format!("name = \"{long}\"\nvariant = \"fatal-fix\"")),
    );
    t.file("t/b.toml", LOOM_PASS);
    let o = mmcheck(t.path(), ["check", "t", "--wide"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines = out.lines();
    let header = lines.next().unwrap_or_default();
    let rows: Vec<&str> = lines.filter(|l| !l.starts_with(' ') && !l.is_empty()).take(2).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].contains("fatal-fix+sync-sets-contended"), "{out}");
    for (col, cells) in
        [("model", ["compaction", "compaction"]), ("verdict", ["violation(", "pass"]), ("ok?", ["ok", "ok"])]
    {
        let at = header.find(col).unwrap_or_else(|| panic!("no {col} in {header}"));
        for (row, cell) in rows.iter().zip(cells) {
            assert!(row.get(at..).is_some_and(|r| r.starts_with(cell)), "column {col} at {at}:\n{header}\n{row}");
        }
    }
}

/// The default table fits 120 columns (issue 37, row 7; it was 356-362 wide): its columns
/// sized to their contents (`reclaim-throttle` shifts nothing), a name too long for its column
/// on a line of its own, the numbers and the folded coverage counts under the row, a
/// mismatch's expectation in the last column. `--wide` has every column on one line, and the
/// coverage counts too. `selftest --list` fits 120 columns, its descriptions folded.
#[test]
fn the_default_table_fits_120_columns_and_wide_has_every_column() {
    let t = TempDir::new("table-120");
    let long = "a-scenario-name-much-longer-than-forty-characters-to-shift-columns";
    t.file(
        "t/a.toml",
        VIOLATION.replace("variant = \"fatal-fix\"", &format!("name = \"{long}\"\nvariant = \"fatal-fix\"")),
    );
    t.file("t/b.toml", LOOM_PASS);
    // A reclaim-throttle file (the model name over 12 characters) that fails its expectation.
    let throttle = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reclaim-throttle/v5.16-rc1-kcompactd-drain-none.toml"),
    )
    .unwrap();
    let c = throttle.replace("verdict = \"violation\"\ninvariant = \"no-soft-lockup\"", "verdict = \"pass\"");
    assert_ne!(c, throttle);
    t.file("t/c.toml", c);
    let o = mmcheck(t.path(), ["check", "t"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let all = text(&o.stdout);
    // The table: up to the first empty line (the mismatch's race diagram follows).
    let out = all.split("\n\n").next().unwrap().to_string();
    assert!(out.lines().count() >= 9, "{all}");
    for l in out.lines() {
        assert!(l.chars().count() <= 120, "a line of {} characters:\n{l}\n{out}", l.chars().count());
    }
    let header = out.lines().next().unwrap();
    let rows: Vec<&str> = out.lines().filter(|l| l.ends_with(" ok") || l.ends_with(" MISMATCH")).collect();
    assert_eq!(rows.len(), 3, "{out}");
    for (col, cells) in [
        ("model", ["compaction", "compaction", "reclaim-throttle"]),
        ("verdict", ["violation(", "pass", "violation(no-soft-lockup)"]),
        ("ok?", ["ok", "ok", "MISMATCH"]),
    ] {
        let at = header.find(col).unwrap_or_else(|| panic!("no {col} in {header}"));
        for (row, cell) in rows.iter().zip(cells) {
            assert!(
                row.get(at..).is_some_and(|r| r.starts_with(cell)),
                "column {col} at {at}:\n{header}\n{row}\n{out}"
            );
        }
    }
    assert!(out.lines().any(|l| l == long), "the long name on a line of its own:\n{out}");
    assert!(out.contains("seeded mutation sync-sets-contended; "), "{out}");
    assert!(out.contains("\n    expected pass; "), "a mismatch's expectation under its row: {out}");
    // Every coverage count is there, folded.
    let wide = text(&mmcheck(t.path(), ["check", "t", "--wide"]).stdout);
    let counts = |s: &str| s.split_whitespace().filter(|w| w.contains('=')).count();
    assert_eq!(counts(&out), counts(&wide), "{out}\n{wide}");
    // --wide: the expected column and every coverage count of a row on one line.
    assert!(wide.lines().next().unwrap().contains("expected"), "{wide}");
    assert!(wide.lines().any(|l| l.chars().count() > 120 && l.trim_start().starts_with("coverage:")), "{wide}");

    let o = mmcheck(t.path(), ["selftest", "--list"]);
    let list = text(&o.stdout);
    assert!(list.lines().count() > 30, "{list}");
    for l in list.lines() {
        assert!(l.chars().count() <= 120, "selftest --list: a line of {}:\n{l}", l.chars().count());
    }
    let o = mmcheck(t.path(), ["selftest", "--list", "--json"]);
    for v in json_lines(&o.stdout, "selftest --list --json") {
        // The description, folded, is all there (its words in order, from the mutant's line on).
        let name = v["name"].as_str().unwrap();
        let from = list.lines().position(|l| l.starts_with(&format!("{name} "))).unwrap();
        let joined = list.lines().skip(from).take(6).collect::<Vec<_>>().join(" ");
        let joined = joined.split_whitespace().collect::<Vec<_>>().join(" ");
        let want = v["description"].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(joined.contains(&want), "{name}: {want}\n{joined}");
    }
}

/// `--json --traces` puts the race diagram into the JSON object (field `diagram`); without
/// `--traces` there is no such field.
#[test]
fn json_with_traces_carries_the_race_diagram() {
    let t = TempDir::new("json-traces");
    t.file("v.toml", VIOLATION);
    let o = mmcheck(t.path(), ["check", "v.toml", "--json", "--traces"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v = &json_lines(&o.stdout, "--json --traces")[0];
    let d = v["diagram"].as_str().unwrap_or_else(|| panic!("no diagram: {v}"));
    assert!(d.contains("violated sync-not-contended") && d.contains("replay: mmcheck check v.toml --replay"), "{d}");
    let o = mmcheck(t.path(), ["check", "v.toml", "--json"]);
    assert!(json_lines(&o.stdout, "--json")[0].get("diagram").is_none());
}

// ---------------------------------------------------------------- logging

/// `mmcheck check FILE` in `dir` with `RUST_LOG=filter`; its standard error (a pipe).
fn logged(dir: &Path, file: &str, filter: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(["check", file])
        .current_dir(dir)
        .env("RUST_LOG", filter)
        .env_remove("NO_COLOR")
        .output()
        .expect("mmcheck runs");
    assert_eq!(o.status.code(), Some(0), "RUST_LOG={filter} {file}:\n{}", text(&o.stderr));
    text(&o.stderr)
}

/// `RUST_LOG=info` shows mmcheck's own lines but keeps loom's and shuttle's per-execution
/// lines at `warn`, unless the filter names them; with standard error not a terminal, no
/// ANSI colour is written.
#[test]
fn rust_log_info_shows_mmchecks_lines_without_the_checkers_internals_or_colour() {
    let t = TempDir::new("rust-log");
    t.file("loom.toml", VIOLATION);
    t.file("shuttle.toml", VIOLATION.replace("engine = \"loom\"", "engine = \"shuttle-pct\"\niterations = 50"));
    for file in ["loom.toml", "shuttle.toml"] {
        let err = logged(t.path(), file, "info");
        assert!(!err.contains('\x1b'), "RUST_LOG=info {file}: ANSI escapes on a pipe:\n{err}");
        assert!(err.contains("mmcheck: checking"), "RUST_LOG=info {file}: mmcheck's own lines are missing:\n{err}");
        let internal: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("loom::") || l.contains("shuttle_engine::") || l.contains(" shuttle::"))
            .collect();
        assert!(internal.is_empty(), "RUST_LOG=info {file}: checker internals:\n{}", internal.join("\n"));
    }
    // Named, loom's lines come back (here: one per thread of each execution).
    let err = logged(t.path(), "loom.toml", "info,loom=info");
    assert!(err.lines().filter(|l| l.contains("loom::")).count() > 10, "RUST_LOG=info,loom=info:\n{err}");
}

// ---------------------------------------------------------------- output

#[test]
fn under_json_every_stdout_line_is_a_json_object_for_every_command() {
    let t = TempDir::new("json");
    t.file("s/quick.toml", QUICK);
    t.file("s/loom-pass.toml", LOOM_PASS);
    t.file("m/sync-sets-contended.toml", VIOLATION);
    let runs: [&[&str]; 7] = [
        &["check", "--json", "s", "m"],
        &["check", "--json", "--traces", "--verbose", "s"],
        &["check", "--json", "--engine", "stateful", "s"],
        &["matrix", "--json", "s"],
        &["selftest", "--json", "--dir", "m"],
        &["selftest", "--list", "--json"],
        &["run", "--json", "s/quick.toml", "--iterations", "3"],
    ];
    for args in runs {
        let o = mmcheck(t.path(), args);
        let what = args.join(" ");
        assert!(matches!(o.status.code(), Some(0 | 1)), "{what}: {:?}\n{}", o.status, text(&o.stderr));
        let lines = json_lines(&o.stdout, &what);
        stderr_is_messages(&o, &what);
        match args[0] {
            "check" => assert!(lines.iter().all(|v| v["verdict"].is_string()), "{what}"),
            "matrix" => assert_eq!(lines[0]["model"], "compaction", "{what}"),
            "run" => assert_eq!(lines[0]["iterations"], 3, "{what}"),
            _ if args.contains(&"--list") => {
                for v in &lines {
                    for k in ["name", "model", "targets", "description"] {
                        assert!(v[k].is_string(), "{what}: no {k} in {v}");
                    }
                }
            }
            _ => assert!(lines.iter().all(|v| v["killed"].is_boolean()), "{what}"),
        }
    }
    // An error under --json: nothing on stdout, the message on stderr.
    t.file("bad/b.toml", "model = \"kswapd-stall\"\n");
    for args in [
        &["check", "--json", "bad"][..],
        &["matrix", "--json", "bad"],
        &["selftest", "--json", "--dir", "bad"],
        &["run", "--json", "bad/b.toml"],
    ] {
        let o = mmcheck(t.path(), args);
        refused(&o, "b.toml");
        assert!(o.stdout.is_empty(), "{args:?}: {}", text(&o.stdout));
        stderr_is_messages(&o, &args.join(" "));
    }
}

fn dev_full() -> Stdio {
    Stdio::from(fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full opens"))
}

#[test]
fn a_full_disk_on_stdout_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let t = TempDir::new("full");
    t.file("s/quick.toml", QUICK);
    t.file("s/loom-pass.toml", LOOM_PASS);
    for args in [
        &["check", "s"][..],
        &["check", "--json", "s"],
        &["matrix", "s"],
        &["matrix", "--json", "s"],
        &["selftest", "--list"],
        &["selftest", "--list", "--json"],
        &["run", "s/quick.toml", "--iterations", "3"],
        &["run", "--json", "s/quick.toml", "--iterations", "3"],
        &["compare", "s/quick.toml", "--variants", "fatal-fix,norescan-v3", "--iterations", "3"],
    ] {
        let o = mmcheck_to(t.path(), args, Some(dev_full()));
        let what = args.join(" ");
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {:?}\n{err}", o.status);
        assert!(err.contains("mmcheck: cannot write to standard output: No space left on device"), "{what}: {err}");
        stderr_is_messages(&o, &what);
    }
}

#[test]
fn a_closed_pipe_on_stdout_ends_quietly_not_in_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let t = TempDir::new("pipe");
    t.file("s/quick.toml", QUICK);
    for args in [&["check", "s"][..], &["selftest", "--list"], &["check", "--json", "s"]] {
        // A pipe whose reading end is closed before mmcheck starts: its first write fails.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let o = mmcheck_to(t.path(), args, Some(Stdio::from(writer)));
        let err = text(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // Killed by SIGPIPE, as Unix tools are; or, with SIGPIPE blocked, exit 2 with a message.
        let quiet = o.status.signal() == Some(13) && err.is_empty();
        let reported = o.status.code() == Some(2) && err.contains("cannot write to standard output");
        assert!(quiet || reported, "{args:?}: {:?}\n{err}", o.status);
    }
}

// ---------------------------------------------------------------- flags of run and compare

#[test]
fn out_of_range_run_flags_are_named_one_per_line_with_their_values() {
    let t = TempDir::new("flags");
    t.file("q.toml", QUICK);
    let o = mmcheck(
        t.path(),
        ["run", "q.toml", "--iterations", "0", "--threads-scale", "9", "--jiffy-us", "0", "--work", "100001"],
    );
    let err = refused(&o, "--iterations 0: out of range 1..=10000000");
    let want = [
        "mmcheck: --iterations 0: out of range 1..=10000000",
        "mmcheck: --threads-scale 9: out of range 1..=8",
        "mmcheck: --jiffy-us 0: out of range 1..=1000000",
        "mmcheck: --work 100001: out of range 1..=100000",
    ];
    assert_eq!(err.lines().collect::<Vec<_>>(), want, "{err}");
    let o = mmcheck(t.path(), ["compare", "q.toml", "--variants", "fatal-fix,norescan-v3", "--iteration-cap", "0"]);
    let err = refused(&o, "--iteration-cap 0: out of range 0.001..=86400");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn a_node_out_of_range_through_threads_scale_names_the_file() {
    let t = TempDir::new("scale");
    t.file("k/two-nodes.toml", kswapd("recheck", ""));
    let o = mmcheck(t.path(), ["run", "k/two-nodes.toml", "--threads-scale", "8", "--iterations", "1"]);
    let err = refused(&o, "k/two-nodes.toml: --threads-scale 8");
    assert!(err.contains("node 8 out of range 0..=7"), "{err}");
    stderr_is_messages(&o, "--threads-scale 8");
}

#[test]
fn a_delay_for_a_kind_the_files_lack_or_given_twice_is_refused() {
    let t = TempDir::new("delay");
    t.file("q.toml", QUICK);
    t.file("lp.toml", LOOM_PASS.replace("role = \"killer\"", "role = \"lock-holder\"\nlock = \"lru_lock\""));
    let err = refused(&mmcheck(t.path(), ["run", "q.toml", "--delay", "bdi=300", "--iterations", "1"]), "bdi");
    assert!(err.contains("q.toml has no thread of kind \"bdi\" (its kinds: compactor, killer)"), "{err}");
    // compare: any of the files lacking it is enough.
    let err = refused(
        &mmcheck(t.path(), ["compare", "q.toml", "lp.toml", "--delay", "killer=10", "--iterations", "1"]),
        "killer",
    );
    assert!(err.contains("lp.toml has no thread of kind \"killer\" (its kinds: compactor, lock-holder)"), "{err}");
    assert!(!err.contains("q.toml has no"), "{err}");
    // Twice for one kind.
    let err = refused(
        &mmcheck(t.path(), ["run", "q.toml", "--delay", "killer=10", "--delay", "killer=20", "--iterations", "1"]),
        "killer",
    );
    assert!(err.contains("--delay killer=20: kind \"killer\" is given twice"), "{err}");
    let err = refused(&mmcheck(t.path(), ["run", "q.toml", "--delay", "killer=10,killer=10"]), "given twice");
    assert_eq!(err.lines().count(), 1, "{err}");
    // A kind the file has runs.
    let o = mmcheck(t.path(), ["run", "q.toml", "--delay", "killer=10", "--iterations", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn run_and_compare_on_a_folder_are_refused() {
    let t = TempDir::new("run-folder");
    t.file("s/q.toml", QUICK);
    for cmd in ["run", "compare"] {
        let o = mmcheck(t.path(), [cmd, "s"]);
        let err = refused(&o, "s: a folder");
        assert!(err.contains("name a file in it"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn compare_across_models_or_of_a_file_with_itself_is_refused() {
    let t = TempDir::new("compare");
    t.file("q.toml", QUICK);
    t.file("k.toml", kswapd("recheck", ""));
    t.link("q.toml", "alias.toml");
    let err = refused(&mmcheck(t.path(), ["compare", "q.toml", "k.toml", "--iterations", "1"]), "q.toml");
    assert!(err.contains("q.toml is a compaction scenario and k.toml a kswapd-stall scenario"), "{err}");
    for other in ["q.toml", "./q.toml", "alias.toml"] {
        let err = refused(&mmcheck(t.path(), ["compare", "q.toml", other, "--iterations", "1"]), "the same file");
        assert!(err.contains(&format!("q.toml and {other} are the same file")), "{err}");
    }
    // One file under two variants is the way to compare a file with itself.
    let o = mmcheck(t.path(), ["compare", "q.toml", "--variants", "fatal-fix,norescan-v3", "--iterations", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

// ---------------------------------------------------------------- nothing to decide

#[test]
fn matrix_and_selftest_with_nothing_to_decide_exit_2() {
    let t = TempDir::new("nothing");
    t.file("pct/quick.toml", QUICK);
    t.file("m/v.toml", VIOLATION);
    t.file("k/k.toml", kswapd("recheck", ""));
    // A shuttle pass decides no cell: every cell would be "-".
    let o = mmcheck(t.path(), ["matrix", "pct"]);
    let err = refused(&o, "every cell is empty");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    stderr_is_messages(&o, "matrix pct");
    assert_eq!(err.lines().count(), 1);
    // Only mutants (left out of the matrix), or only another model's files.
    refused(
        &mmcheck(t.path(), ["matrix", "m"]),
        "no kswapd-stall or compaction or reclaim-throttle scenario without a mutation",
    );
    refused(&mmcheck(t.path(), ["matrix", "--model", "compaction", "k"]), "no compaction scenario");
    refused(&mmcheck(t.path(), ["matrix", "--json", "pct"]), "nothing to decide");
    // selftest on a folder with no mutant.
    let o = mmcheck(t.path(), ["selftest", "--dir", "pct"]);
    refused(&o, "pct: nothing to decide: no mutant scenario");
    assert!(o.stdout.is_empty());
    refused(&mmcheck(t.path(), ["selftest", "--json", "--dir", "pct"]), "no mutant scenario");
    t.file("empty/README", "no scenarios\n");
    refused(&mmcheck(t.path(), ["selftest", "--dir", "empty"]), "no *.toml scenario files");
}

// ---------------------------------------------------------------- engines and threads

#[test]
fn one_thread_under_pct_is_refused_not_a_panic() {
    let t = TempDir::new("one-thread");
    let one = QUICK.replace("[[thread]]\nrole = \"killer\"\n", "");
    t.file("one.toml", &one);
    let o = mmcheck(t.path(), ["check", "one.toml"]);
    let err = refused(&o, "one.toml:3: thread: 1 thread, but shuttle-pct needs at least two");
    assert!(err.contains("use loom or stateful"), "{err}");
    stderr_is_messages(&o, "one thread under pct");
    t.file("all.toml", one.replace("engine = \"shuttle-pct\"\niterations = 10", "engine = \"all\""));
    refused(&mmcheck(t.path(), ["check", "all.toml"]), "engine = \"all\" runs shuttle-pct");
    // The same file under loom runs; --engine shuttle-pct on it is refused.
    t.file("loom.toml", one.replace("engine = \"shuttle-pct\"\niterations = 10", "engine = \"loom\""));
    assert_eq!(mmcheck(t.path(), ["check", "loom.toml"]).status.code(), Some(0));
    let o = mmcheck(t.path(), ["check", "loom.toml", "--engine", "shuttle-pct"]);
    refused(&o, "loom.toml: --engine shuttle-pct: 1 thread, but shuttle-pct needs at least two");
    stderr_is_messages(&o, "--engine shuttle-pct");
    assert!(o.stdout.is_empty());
}

#[test]
fn the_engine_flag_names_every_engine_of_the_registry() {
    // The help of --engine is written by hand; the engines come from one enum. A new engine
    // that the help forgets is caught here.
    let t = TempDir::new("engine-help");
    let o = mmcheck(t.path(), ["check", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = text(&o.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    let line = help.split("--engine <ENGINE>").nth(1).expect("--engine in check --help");
    let line = line.split(" --").next().unwrap();
    for e in mmcheck::engine::EngineName::ALL {
        assert!(line.contains(e.name()), "check --help does not name engine {}: {line}", e.name());
    }
}

// ---------------------------------------------------------------- the stateful engine's budgets

const BIG_STATEFUL: &str = r#"model = "kswapd-stall"
variant = "recheck"
[[thread]]
role = "kswapd"
node = 0
[[thread]]
role = "kswapd"
node = 1
[[thread]]
role = "direct-reclaim"
node = 1
[[thread]]
role = "bdi"
[params]
timeout = "any-time"
[explore]
engine = "stateful"
[expect]
verdict = "pass"
"#;

/// `mmcheck check --json FILE` with the environment `env`; the one JSON object it printed.
fn stateful_run(t: &TempDir, file: &str, env: &[(&str, &str)]) -> (Output, serde_json::Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mmcheck"));
    cmd.args(["check", "--json", file]).current_dir(t.path()).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("mmcheck runs");
    let lines = json_lines(&o.stdout, file);
    assert_eq!(lines.len(), 1, "{}", text(&o.stdout));
    (o, lines.into_iter().next().unwrap())
}

/// A stop before the end is `incomplete` (exit 1), never a pass, with how far it got.
fn assert_stopped(o: &Output, v: &serde_json::Value, by: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(v["verdict"], "incomplete", "{v}");
    let e = &v["engines"][0];
    assert_eq!(e["stopped_by"], by, "{v}");
    assert_eq!(e["memory_model"], "sc", "{v}");
    for k in ["states", "transitions", "max_depth", "memory_bytes"] {
        assert!(e[k].as_u64().is_some_and(|n| n > 0), "{k} in {v}");
    }
}

#[test]
fn a_state_budget_that_is_hit_is_incomplete_with_the_states_and_depth() {
    let t = TempDir::new("max-states");
    t.file("s.toml", BIG_STATEFUL.replace("engine = \"stateful\"", "engine = \"stateful\"\nmax_states = 500"));
    let (o, v) = stateful_run(&t, "s.toml", &[]);
    assert_stopped(&o, &v, "state budget (max_states)");
    assert_eq!(v["engines"][0]["states"], 500, "{v}");
    // The table says it too.
    let o = mmcheck(t.path(), ["check", "s.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("incomplete: stopped by the state budget (max_states) after 500 states"), "{out}");
    assert!(out.contains("depth") && out.contains("not a pass"), "{out}");
}

#[test]
fn a_time_limit_that_is_hit_is_incomplete() {
    let t = TempDir::new("max-seconds");
    t.file("s.toml", BIG_STATEFUL.replace("engine = \"stateful\"", "engine = \"stateful\"\nmax_seconds = 0.05"));
    let (o, v) = stateful_run(&t, "s.toml", &[]);
    assert_stopped(&o, &v, "time limit");
}

/// The workers' shared table counts the bytes its shards hold as they grow, and a `progress`
/// search the graph its workers record: two workers stop as `incomplete` (memory), their
/// table within the limit. The safety search stores more states than the old estimate (42
/// bytes a state) let it: the budget is the bytes held.
#[test]
fn workers_out_of_memory_stop_within_the_limit() {
    let t = TempDir::new("memory-workers");
    t.file("progress.toml", BIG_STATEFUL);
    t.file("safety.toml", BIG_STATEFUL.replace("[expect]", "[check]\ninvariants = [\"single-exclusive\"]\n[expect]"));
    for (file, mib) in [("progress.toml", 2u64), ("safety.toml", 1)] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mmcheck"));
        cmd.args(["check", "--json", "--workers", "2", file]).current_dir(t.path()).stdin(Stdio::null());
        let o = cmd.env("MMCHECK_MEMORY_MIB", mib.to_string()).output().expect("mmcheck runs");
        let v = json_lines(&o.stdout, file).into_iter().next().expect("one line");
        assert_stopped(&o, &v, "memory");
        let e = &v["engines"][0];
        assert!(e["memory_bytes"].as_u64().unwrap() <= mib << 20, "{v}");
        if file == "safety.toml" {
            assert!(e["states"].as_u64().unwrap() > (1 << 20) / 42, "{v}");
        }
    }
}

#[test]
fn running_out_of_memory_mid_search_is_incomplete_with_the_figures_not_an_abort() {
    let t = TempDir::new("memory");
    t.file("s.toml", BIG_STATEFUL);
    // 1 MiB holds the first tables (about 80,000 slots), not the 181,397 states this needs.
    let (o, v) = stateful_run(&t, "s.toml", &[("MMCHECK_MEMORY_MIB", "1")]);
    assert_stopped(&o, &v, "memory");
    assert!(v["engines"][0]["memory_bytes"].as_u64().unwrap() <= 1 << 20, "{v}");
    // A budget the limit cannot hold is refused before the search starts, naming the field.
    t.file("b.toml", BIG_STATEFUL.replace("engine = \"stateful\"", "engine = \"stateful\"\nmax_states = 1000000"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mmcheck"));
    let o = cmd.args(["check", "b.toml"]).current_dir(t.path()).env("MMCHECK_MEMORY_MIB", "1").output().unwrap();
    refused(&o, "b.toml:18: explore.max_states: 1000000 states need about");
}

/// Under `--memory lkmm` two compactors that loop keep storing new messages, so one execution
/// descends through new states for as long as it is let: the time limit must still stop it
/// (it was checked only on the way back, and this run went past 20 s), with an honest
/// `incomplete`, never a pass.
#[test]
fn a_search_that_only_descends_keeps_its_time_limit() {
    let root = env!("CARGO_MANIFEST_DIR").to_string() + "/..";
    let toml = fs::read_to_string(format!(
        "{root}/scenarios/compaction/fatal-fix-two-compactors-too-many-isolated-stateful.toml"
    ))
    .unwrap();
    assert!(toml.contains("[explore]\n"), "the file has an [explore] table");
    let d = TempDir::new("descends");
    let f = d.file("two.toml", toml.replace("[explore]\n", "[explore]\nmax_seconds = 2\n"));
    let o = mmcheck(
        d.path(),
        [OsStr::new("check"), OsStr::new("--json"), OsStr::new("--memory"), OsStr::new("lkmm"), f.as_os_str()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text_of(&o));
    let out = text(&o.stdout);
    assert!(out.contains("\"verdict\":\"incomplete\"") && out.contains("time limit"), "{out}");
}

fn text_of(o: &Output) -> String {
    format!("{}\n{}", text(&o.stdout), text(&o.stderr))
}

/// `matrix --memory`: the stateful cells run under the model named, and say so; an unknown
/// model is refused with exit status 2.
#[test]
fn matrix_memory_runs_the_stateful_cells_under_that_model() {
    let root = env!("CARGO_MANIFEST_DIR").to_string() + "/..";
    let file = format!("{root}/scenarios/kswapd-stall/recheck-congestion-tagged-lkmm.toml");
    let d = TempDir::new("matrix-memory");
    let cells = |memory: &str| {
        let o = mmcheck(d.path(), ["matrix", "--json", "--memory", memory, file.as_str()]);
        assert_eq!(o.status.code(), Some(0), "{}", text_of(&o));
        let out = text(&o.stdout);
        (out.matches("\"memory_model\":\"lkmm\"").count(), out.matches("\"memory_model\":\"sc\"").count())
    };
    let (lkmm, sc) = cells("lkmm");
    assert!(lkmm > 0 && sc == 0, "{lkmm} lkmm cells, {sc} sc cells");
    let (lkmm, sc) = cells("sc");
    assert!(lkmm == 0 && sc > 0, "{lkmm} lkmm cells, {sc} sc cells");
    let o = mmcheck(d.path(), ["matrix", "--memory", "tso", file.as_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", text_of(&o));
    assert!(text(&o.stderr).contains("--memory: unknown memory model \"tso\""), "{}", text_of(&o));
}
