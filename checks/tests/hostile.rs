//! Hostile input (issue 13): symbolic-link loops, FIFOs and devices named `*.toml`, huge
//! files, dangling links, files named twice, control characters in names. `mmcheck` must
//! finish (every run of the binary here is killed and fails the test after 20 s), refuse what
//! it cannot use with exit status 2 and a message naming the path, check each file once, and
//! never put a raw control character on the terminal.

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
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_os_string()).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmcheck"))
        .args(&args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mmcheck starts");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mmcheck {args:?} (in {}) has not exited after 20 s: killed", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() }
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
