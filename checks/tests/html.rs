//! `mmcheck check --html DIR`, `matrix --html DIR` and `--svg FILE`: the pages and drawings
//! have the race diagram's lanes and rows, the state panel's replay agrees with the model's
//! own final state, hostile names render as text, bad output paths exit 2 with nothing half
//! written, and (with chromium installed) every page loads in a real browser without a
//! console message and shows what the trace says.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use mmcheck::check::{check, Report, RunOptions};
use mmcheck::html;
use mmcheck::recorder::{Bounds, Recorder};
use mmcheck::scenario;
use mmcheck::spec::config_of;
use mmmodel::event::{Event, KernelEvent};
use mmmodel::kernel::sched::Start;
use mmmodel::model::{run, Model};
use mmmodel::platform::Std;
use mmmodel::reclaim::{self, KswapdStall};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mmcheck-html-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report(rel: &str) -> Report {
    let sc = scenario::load(&root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    check(&sc, &RunOptions::default())
}

fn mmcheck(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mmcheck")).args(args).current_dir(root()).output().unwrap()
}

/// The text race diagram's row indices (the `#n` column), from `mmcheck`'s own output.
fn text_rows(r: &Report) -> Vec<usize> {
    let text = r.counterexample(false).unwrap();
    text.lines()
        .skip(3) // the title line and the two header lines
        .filter_map(|l| {
            let rest = l.get(1..)?;
            if !rest.starts_with(' ') {
                return None;
            }
            rest.split_whitespace().next()?.parse::<usize>().ok()
        })
        .collect()
}

/// Every `data-event="N"` of the swimlane rows in `page`, in order.
fn page_rows(page: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<g class=\"row") {
        rest = &rest[i..];
        let e = rest.find("data-event=\"").unwrap() + "data-event=\"".len();
        let end = rest[e..].find('"').unwrap();
        out.push(rest[e..e + end].parse().unwrap());
        rest = &rest[e..];
    }
    out
}

const LOST_WAKEUP: &str = "scenarios/kswapd-stall/waitqueue-v1-lost-wakeup-never.toml";
const FATAL_LOOP: &str = "scenarios/compaction/finishcontend-v3-fatal-loop.toml";
/// The stateful engine's fair cycle: a lasso.
const LASSO: &str = "scenarios/compaction/finishcontend-v3-holders-killer-resched-stateful.toml";
const PASS: &str = "scenarios/kswapd-stall/recheck-2kswapd-writer.toml";

#[test]
fn a_page_has_the_race_diagrams_lanes_rows_and_words() {
    for rel in [LOST_WAKEUP, FATAL_LOOP] {
        let r = report(rel);
        let page = html::page(&r, false, None).unwrap();
        let comms = r.scenario.spec.comms();
        assert_eq!(page.matches("<g class=\"lane\"").count(), comms.len(), "{rel}: one lane per task");
        for (p, c) in comms.iter().enumerate() {
            assert!(page.contains(&format!(">T{p} {c}</text>")), "{rel}: lane of T{p} {c}");
        }
        let rows = text_rows(&r);
        assert!(!rows.is_empty());
        assert_eq!(page_rows(&page), rows, "{rel}: the rows of the text diagram, in its order");
        // The words: every row's text as the diagram writes it.
        let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
        for row in f.trace.rows(comms.len(), &f.violations, false) {
            assert!(r.counterexample(false).unwrap().contains(row.text.split_whitespace().next().unwrap()));
        }
        // The violating row is marked, with the invariant, the replay line, the version.
        let at = f.violations[0].at.unwrap();
        assert!(page.contains("<g class=\"row violating\" data-step="), "{rel}");
        assert!(page.contains(&format!("data-event=\"{at}\"")), "{rel}");
        assert!(page.contains(&format!("data-invariant=\"{}\"", f.violations[0].invariant)));
        let replay = mmcheck::term::replay_command(&r.scenario.file, &r.replay.as_ref().unwrap().to_string());
        assert!(page.contains(&replay), "{rel}: the replay command");
        assert!(page.contains(html::model_version()), "{rel}: the model version");
        // Self-contained: nothing is loaded from anywhere.
        for bad in ["<link", " src=", "http://", "https://", "@import"] {
            let n = page.matches(bad).count();
            let allowed = if bad == "http://" { page.matches("http://www.w3.org/2000/svg").count() } else { 0 };
            assert_eq!(n, allowed, "{rel}: {bad}");
        }
    }
}

#[test]
fn a_lasso_is_bracketed() {
    let r = report(LASSO);
    let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
    let c = f.cycle_from.expect("the fatal loop is a lasso");
    let svg = html::svg(&r, false).unwrap();
    assert!(svg.contains("<g class=\"cycle\">") && svg.contains("repeat for ever"), "the cycle is bracketed");
    // The band is drawn before the first row of the cycle.
    let band = svg.find("<g class=\"cycle\">").unwrap();
    let first = f.trace.rows(r.scenario.spec.tasks(), &f.violations, false).into_iter().find(|x| x.index >= c).unwrap();
    let row = svg.find(&format!("data-event=\"{}\"", first.index)).unwrap();
    assert!(band < row);
}

/// T1's soft lockup: in every state of the cycle the panel shows kcompactd0 running on cpu0 and
/// the kworker waiting for it; cpu1, which has one task, is not shown.
#[test]
fn the_soft_lockup_shows_who_runs_on_the_cpu_and_who_waits() {
    let r = report("scenarios/reclaim-throttle/v5.16-rc1-kcompactd-drain-none.toml");
    let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
    let c = f.cycle_from.expect("the soft lockup is a lasso");
    let snaps = html::state::replay(&r).unwrap();
    let value = |snap: &[html::state::Entry], obj: &str| {
        snap.iter().find(|e| e.group == "cpus" && e.object == obj).map(|e| e.value.clone())
    };
    assert_eq!(snaps.len(), f.trace.len() + 1);
    for snap in &snaps[c + 1..] {
        assert_eq!(value(snap, "cpu0 runs").as_deref(), Some("T0 kcompactd0"));
        assert_eq!(value(snap, "cpu0 waiting").as_deref(), Some("T2 kworker/0"));
        assert_eq!(value(snap, "cpu1 runs"), None);
    }
    assert_eq!(value(&snaps[0], "cpu0 runs").as_deref(), Some("nobody"));
}

const KCOMPACTD: &str = "scenarios/reclaim-throttle/v5.16-rc1-kcompactd-drain-none.toml";

/// The value of `obj` in group `group` of a panel snapshot.
fn panel_value(snap: &[html::state::Entry], group: &str, obj: &str) -> Option<String> {
    snap.iter().find(|e| e.group == group && e.object == obj).map(|e| e.value.clone())
}

/// The panel's task states follow the rows (issue 37, row 8): a task whose code returned is
/// "finished", never "running"; kswapd after "kswapd0 goes to sleep" is on its kswapd_wait and
/// asleep there once its code ends; a task that sleeps in wait_for_completion() is asleep, not
/// "not asleep yet"; a task in a CPU's waiting list says it waits for that CPU.
#[test]
fn the_panels_task_states_follow_the_rows() {
    // Complete executions (loom, shuttle; a stateful pass runs on to its end): every task
    // that finished is listed once, and at the end none is shown running.
    for rel in [
        LOST_WAKEUP,
        FATAL_LOOP,
        "scenarios/kswapd-stall/directcongest-v1-lost-wakeup-never.toml",
        "scenarios/kswapd-stall/directcongest-v1-direct-stall-after-clear.toml",
        "scenarios/kswapd-stall/waitqueue-v1-4kswapd-stateful.toml",
    ] {
        let r = report(rel);
        let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
        assert!(f.cycle_from.is_none(), "{rel}: not a lasso");
        let comms = r.scenario.spec.comms();
        let mut exited: Vec<usize> = f.exits.iter().map(|(p, _)| *p).collect();
        exited.sort();
        assert_eq!(exited, (0..comms.len()).collect::<Vec<_>>(), "{rel}: every task finished once: {:?}", f.exits);
        let snaps = html::state::replay(&r).unwrap();
        for &(p, n) in &f.exits {
            let t = format!("T{p} {}", comms[p]);
            for (i, snap) in snaps.iter().enumerate().skip(n) {
                let v = panel_value(snap, "tasks", &t).unwrap();
                assert!(!v.starts_with("running"), "{rel}: {t} finished after {n} events, shown {v:?} at step {i}");
            }
        }
        // kswapd goes to sleep: from that row on it is on its pgdat's kswapd_wait.
        if let Some(events) = f.trace.events::<reclaim::Event>() {
            for (i, (p, e)) in events.iter().enumerate() {
                if let Event::Proto(reclaim::Event::KswapdSleep { node }) = e {
                    let v = panel_value(&snaps[i + 1], "tasks", &format!("T{p} {}", comms[*p])).unwrap();
                    // (In the harness's run-out after an endless sleep it stays asleep for ever.)
                    let ok = v.contains(&format!("pgdat[{node}]->kswapd_wait")) || v.starts_with("asleep for ever");
                    assert!(ok, "{rel} #{i}: {v:?}");
                }
            }
        }
    }
    // The writer of the lost wake-up finishes early; kswapd0 ends asleep on its queue.
    let r = report(LOST_WAKEUP);
    let last = html::state::replay(&r).unwrap().pop().unwrap();
    assert_eq!(panel_value(&last, "tasks", "T2 writer").as_deref(), Some("finished"));
    assert!(panel_value(&last, "tasks", "T0 kswapd0").unwrap().starts_with("asleep on pgdat[0]->kswapd_wait"));

    // T1's soft lockup (a lasso): the isolator asleep in wait_for_completion() after its row;
    // at every step, whoever waits for a CPU says so, and whoever the CPU runs runs on it.
    let r = report(KCOMPACTD);
    let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
    let comms = r.scenario.spec.comms();
    let snaps = html::state::replay(&r).unwrap();
    let events = f.trace.events::<mmmodel::throttle::Event>().unwrap();
    let mut flush_waits = 0;
    for (i, (p, e)) in events.iter().enumerate() {
        if let Event::Proto(mmmodel::throttle::Event::FlushWaits { .. }) = e {
            let v = panel_value(&snaps[i + 1], "tasks", &format!("T{p} {}", comms[*p])).unwrap();
            assert!(v.starts_with("asleep in wait_for_completion()"), "#{i}: {v:?}");
            flush_waits += 1;
        }
    }
    assert!(flush_waits > 0);
    let mut waited = 0;
    for (i, snap) in snaps.iter().enumerate() {
        for e in snap.iter().filter(|e| e.group == "cpus") {
            let cpu = e.object.split_whitespace().next().unwrap();
            let tasks: Vec<&str> = e.value.split(", ").filter(|t| *t != "nobody").collect();
            for t in tasks {
                let v = panel_value(snap, "tasks", t).unwrap();
                if e.object.ends_with("waiting") {
                    assert!(v.contains(&format!("waits for {cpu}")), "step {i}: {t} in {} but {v:?}", e.object);
                    waited += 1;
                } else {
                    // (It may be on its way to sleep, still holding the CPU.)
                    assert!(
                        !v.contains("waits for") && !v.starts_with("finished"),
                        "step {i}: {t} runs on {cpu}: {v:?}"
                    );
                }
            }
        }
    }
    assert!(waited > 0, "the kworker waits for cpu0");
}

#[test]
fn the_replayed_state_is_the_models_final_state() {
    // Real-thread executions (any interleaving the machine gives): the panel's replay of
    // each execution's events ends where the model's own final state is.
    let mut compared = 0;
    for rel in [
        LOST_WAKEUP,
        "scenarios/kswapd-stall/directcongest-v1-lost-wakeup-never.toml",
        "scenarios/kswapd-stall/directcongest-v1-direct-stall-after-clear.toml",
        PASS,
    ] {
        let sc = scenario::load(&root().join(rel)).unwrap();
        let cfg = KswapdStall::real_time(config_of::<KswapdStall>(&*sc.spec).unwrap(), Duration::from_micros(10));
        for _ in 0..50 {
            let rec = Arc::new(Recorder::<reclaim::Event>::new(cfg.roles.len(), Bounds::default()));
            let ran = run::<KswapdStall, Std<Recorder<reclaim::Event>>>(&cfg, Arc::clone(&rec), &Start::default());
            let events = rec.take_events();
            let s = html::state::reclaim_after(&cfg, &events);
            assert_eq!(s.kswapd_exclusive, ran.fin.kswapd_exclusive, "{rel}: {events:?}");
            assert_eq!(s.congested, ran.fin.congested, "{rel}: {events:?}");
            compared += 1;
        }
    }
    assert_eq!(compared, 200);
}

#[test]
fn the_replayed_scanners_are_where_compact_zone_says() {
    // Every CompactEnd reports the scanner positions compact_zone() returns with; the replay
    // must have the compactor there, with no page left isolated.
    for rel in [FATAL_LOOP, "scenarios/compaction/norescan-v3-aborts-mid-pageblock.toml"] {
        let r = report(rel);
        let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
        let cfg = config_of::<mmmodel::compaction::Compaction>(&*r.scenario.spec).unwrap();
        let events = f.trace.events::<mmmodel::compaction::Event>().unwrap();
        let states = html::state::compaction_states(cfg, events);
        let mut ends = 0;
        for (i, (pid, e)) in events.iter().enumerate() {
            if let Event::Proto(mmmodel::compaction::Event::ScannerAt { migrate_pfn, free_pfn }) = e {
                let cc = states[i].ccs.iter().find(|c| c.pid == *pid).unwrap();
                assert_eq!((cc.migrate_pfn, cc.free_pfn), (*migrate_pfn, *free_pfn), "{rel} #{i}");
            }
            if let Event::Proto(mmmodel::compaction::Event::CompactEnd { .. }) = e {
                let cc = states[i].ccs.iter().find(|c| c.pid == *pid).unwrap();
                assert!(cc.freepages.is_empty(), "{rel} #{i}: release_freepages() ran");
                ends += 1;
            }
        }
        // A compactor that aborts mid-pageblock returns; one that loops for ever does not.
        assert_eq!(ends > 0, rel.contains("aborts-mid-pageblock"), "{rel}");
    }
}

#[test]
fn check_and_matrix_write_pages_and_an_index() {
    let dir = scratch("site");
    let d = dir.to_str().unwrap();
    let out = mmcheck(&["check", LOST_WAKEUP, FATAL_LOOP, PASS, "--html", d]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["finishcontend-v3-fatal-loop.html", "index.html", "waitqueue-v1-lost-wakeup-never.html"]);
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(index.contains("href=\"waitqueue-v1-lost-wakeup-never.html\""));
    assert!(index.contains("href=\"finishcontend-v3-fatal-loop.html\""));
    assert_eq!(index.matches("<tr id=\"s").count(), 3, "a row per scenario");
    // The pass has its coverage counts, and every row its engine, bound and memory model.
    assert!(index.contains("cmpxchg-lost="), "{index}");
    assert!(index.contains("preemption bound 3") && index.contains("c11"));
    // The link to docs/invariants.md is relative and reaches the file.
    let page = std::fs::read_to_string(dir.join("waitqueue-v1-lost-wakeup-never.html")).unwrap();
    let at = page.find("invariants.md#").unwrap();
    let start = page[..at].rfind("href=\"").unwrap() + 6;
    let href = &page[start..at + "invariants.md".len()];
    assert!(dir.join(href).is_file(), "{href}");

    let mdir = scratch("matrix");
    let out = mmcheck(&[
        "matrix",
        FATAL_LOOP,
        "scenarios/compaction/norescan-v3-aborts-mid-pageblock.toml",
        "scenarios/compaction/finishcontend-v3-finishes-pageblock.toml",
        "--html",
        mdir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let index = std::fs::read_to_string(mdir.join("index.html")).unwrap();
    assert!(index.contains("<table class=\"matrix\" data-model=\"compaction\""));
    // Every violated cell links a page that exists.
    let mut cells = 0;
    for part in index.split("<td class=\"violated\"><a href=\"").skip(1) {
        let href = &part[..part.find('"').unwrap()];
        assert!(mdir.join(href).is_file(), "{href}");
        cells += 1;
    }
    assert!(cells > 0, "the compaction matrix has violations");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&mdir);
}

#[test]
fn markup_in_names_descriptions_renders_as_text() {
    let dir = scratch("hostile");
    let text = std::fs::read_to_string(root().join(LOST_WAKEUP)).unwrap();
    let start = text.find("description = \"\"\"").unwrap();
    let end = start + 20 + text[start + 20..].find("\"\"\"").unwrap() + 3;
    let text = format!(
        "{}name = \"<script>alert('name')</script>\"\ndescription = \"<img src=x onerror=alert(1)> & </style>\"{}",
        &text[..start],
        &text[end..]
    );
    let file = dir.join("hostile.toml");
    std::fs::write(&file, &text).unwrap();
    let out_dir = dir.join("out");
    let svg = dir.join("hostile.svg");
    let out = mmcheck(&[
        "check",
        file.to_str().unwrap(),
        "--html",
        out_dir.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for f in [out_dir.join("hostile.html"), out_dir.join("index.html"), svg] {
        let page = std::fs::read_to_string(&f).unwrap();
        assert!(!page.contains("<script>alert"), "{}", f.display());
        assert!(!page.contains("<img"), "{}", f.display());
        assert!(page.contains("&lt;script&gt;alert("), "{}: the name is there, as text", f.display());
        if f.file_name().unwrap() == "hostile.html" {
            assert!(page.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &lt;/style&gt;"), "{}", f.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn assert_exit_2(out: &std::process::Output, path: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(path), "names {path}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_output_paths_exit_2_and_leave_nothing_half_written() {
    let dir = scratch("bad");
    // A file, not a folder.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = mmcheck(&["check", LOST_WAKEUP, "--html", file.to_str().unwrap()]);
    assert_exit_2(&out, file.to_str().unwrap());
    assert!(out.stdout.is_empty(), "refused before any exploration");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // A folder that cannot be made or written (under a file; /proc takes no files, even from
    // root).
    for p in [file.join("sub"), PathBuf::from("/proc/mmcheck-html-test")] {
        let out = mmcheck(&["check", LOST_WAKEUP, "--html", p.to_str().unwrap()]);
        assert_exit_2(&out, p.to_str().unwrap());
    }
    // A full disk: the temporary name of index.html leads to /dev/full.
    let full = dir.join("full");
    std::fs::create_dir(&full).unwrap();
    std::os::unix::fs::symlink("/dev/full", html::temp_name(&full.join("index.html"))).unwrap();
    let out = mmcheck(&["check", LOST_WAKEUP, "--html", full.to_str().unwrap(), "--json"]);
    assert_exit_2(&out, full.to_str().unwrap());
    let left: Vec<String> =
        std::fs::read_dir(&full).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
    // Under --json, stdout is still JSON lines only.
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{l}: {e}"));
    }
    // --svg: a special file is refused (never renamed over), a full disk fails cleanly.
    let out = mmcheck(&["check", LOST_WAKEUP, "--svg", "/dev/full"]);
    assert_exit_2(&out, "/dev/full");
    let svg = dir.join("x.svg");
    std::os::unix::fs::symlink("/dev/full", html::temp_name(&svg)).unwrap();
    // (The probe before the exploration writes nothing: it is refused at the end.)
    let out = mmcheck(&["check", LOST_WAKEUP, "--svg", svg.to_str().unwrap()]);
    assert_exit_2(&out, svg.to_str().unwrap());
    assert!(!svg.exists() && std::fs::symlink_metadata(html::temp_name(&svg)).is_err());
    // --svg of a pass: nothing to draw.
    let out = mmcheck(&["check", PASS, "--svg", svg.to_str().unwrap()]);
    assert_exit_2(&out, svg.to_str().unwrap());
    assert!(!svg.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- in a real browser

/// Chromium, if this machine has it.
fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|c| {
        let ok = Command::new(c).arg("--version").output().ok()?.status.success();
        ok.then(|| PathBuf::from(c))
    })
}

/// Load `url` headless; return the DOM after the page's script ran, and every console
/// message.
fn browse(chrome: &Path, url: &str, screenshot: Option<&Path>) -> (String, Vec<String>) {
    browse_at(chrome, url, screenshot, None)
}

/// [`browse`] in a window `size` wide and high (`"1500,1000"`; the screenshot's size if none).
fn browse_at(chrome: &Path, url: &str, screenshot: Option<&Path>, size: Option<&str>) -> (String, Vec<String>) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let profile = scratch(&format!("profile-{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let mut cmd = Command::new(chrome);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    match screenshot {
        Some(p) => {
            cmd.arg(format!("--window-size={}", size.unwrap_or("1500,1000")))
                .arg("--hide-scrollbars")
                .arg(format!("--screenshot={}", p.display()));
        }
        None => {
            if let Some(size) = size {
                cmd.arg(format!("--window-size={size}"));
            }
            cmd.arg("--dump-dom");
        }
    }
    let out = cmd.arg(url).output().expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(out.status.success(), "chromium: {}", String::from_utf8_lossy(&out.stderr));
    let console =
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.contains("CONSOLE")).map(String::from).collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// The state panel's (object, value) pairs in a dumped DOM.
fn panel(dom: &str) -> Vec<(String, String)> {
    let t = &dom[dom.find("<table id=\"state\">").expect("the panel")..];
    let t = &t[..t.find("</table>").unwrap()];
    t.split("<td class=\"obj\">")
        .skip(1)
        .map(|c| {
            let obj = &c[..c.find("</td>").unwrap()];
            let v = &c[c.find("<td class=\"val\">").unwrap() + "<td class=\"val\">".len()..];
            (unescape(obj), unescape(&v[..v.find("</td>").unwrap()]))
        })
        .collect()
}

fn attr(dom: &str, tag_start: &str, name: &str) -> Option<String> {
    let t = &dom[dom.find(tag_start)?..];
    let t = &t[..t.find('>')?];
    let a = format!("{name}=\"");
    let v = &t[t.find(&a)? + a.len()..];
    Some(v[..v.find('"')?].to_string())
}

#[test]
fn pages_work_in_headless_chromium() {
    let Some(chrome) = chromium() else {
        // CI installs it (.ci/run): there, a missing browser is a failure, not a skip.
        assert!(std::env::var_os("CI").is_none(), "CI=true but no chromium: .ci/run installs Debian's chromium");
        println!("SKIPPED: pages_work_in_headless_chromium: no chromium on this machine (apt-get install chromium; .ci/run installs it)");
        return;
    };
    let dir = scratch("browser");
    let reports: Vec<Report> = [LOST_WAKEUP, FATAL_LOOP, LASSO, PASS].iter().map(|r| report(r)).collect();
    let files = html::site(&dir, "mmcheck check", &reports, &[], false);
    html::write_all("--html", &dir, &files).unwrap();
    let (index, console) = browse(&chrome, &format!("file://{}", dir.join("index.html").display()), None);
    assert!(console.is_empty(), "index.html: {console:?}");
    assert_eq!(index.matches("<tr id=\"s").count(), reports.len());
    for r in reports.iter().filter(|r| r.shown.is_some()) {
        let (name, _) = files.iter().find(|(_, t)| t.contains(&format!("<title>{}:", r.scenario.name))).unwrap();
        let url = format!("file://{}", dir.join(name).display());
        let f = r.runs[r.shown.unwrap()].outcome.found.as_ref().unwrap();
        let comms = r.scenario.spec.comms();
        let rows = f.trace.rows(comms.len(), &f.violations, false);
        let snaps = html::state::replay(r).unwrap();

        // As opened: the violating step is highlighted and selected, the panel shows the state
        // after it.
        let (dom, console) = browse(&chrome, &url, None);
        assert!(console.is_empty(), "{name}: {console:?}");
        assert_eq!(attr(&dom, "<body", "data-ready").as_deref(), Some("yes"), "{name}: the script ran to its end");
        assert_eq!(dom.matches("<g class=\"lane\"").count(), comms.len(), "{name}: a lane per task");
        assert_eq!(page_rows(&dom), text_rows(r), "{name}: a row per row of the race diagram");
        let at = f.violations[0].at.unwrap();
        let sel = attr(&dom, "<g class=\"row violating sel\"", "data-event").expect("the violating row is selected");
        assert_eq!(sel, at.to_string(), "{name}");
        assert_eq!(panel(&dom), snaps[at + 1].iter().map(|e| (e.object.clone(), e.value.clone())).collect::<Vec<_>>());
        if r.scenario.name.contains("lost-wakeup") {
            // The lost wake-up: at the violating step the sleeper is on kswapd_contended_wait
            // and the node it waits for is no longer exclusive.
            let sleeper = rows.iter().find(|x| x.index == at).unwrap().pid;
            assert!(matches!(f.trace.kernel_events()[at].1, Some(KernelEvent::SleptForever)));
            let p = panel(&dom);
            let value = |o: &str| p.iter().find(|(k, _)| k == o).map(|(_, v)| v.clone()).unwrap();
            assert_eq!(value("kswapd_contended_wait"), format!("T{sleeper} {}", comms[sleeper]));
            assert_eq!(value("kswapd_exclusive"), html::state::node_text(mmmodel::event::NUMA_NO_NODE));
        }

        // After the last step: the panel shows the final state of the replay.
        let (dom, console) = browse(&chrome, &format!("{url}#step=last"), None);
        assert!(console.is_empty(), "{name}: {console:?}");
        assert_eq!(attr(&dom, "<body", "data-step"), Some(rows.len().to_string()));
        let last = snaps.last().unwrap().iter().map(|e| (e.object.clone(), e.value.clone())).collect::<Vec<_>>();
        assert_eq!(panel(&dom), last, "{name}: the final state");
    }
    // Lanes (issue 37, row 8): in a 1500-pixel window the three lanes of T1's soft lockup
    // are all in view (they were clipped at the third); in a narrow one the page says the
    // drawing scrolls sideways and how many lanes are in view.
    let r = report(KCOMPACTD);
    let files = html::site(&dir, "mmcheck check", std::slice::from_ref(&r), &[], false);
    html::write_all("--html", &dir, &files).unwrap();
    let (name, _) = files.iter().find(|(n, _)| n != "index.html").unwrap();
    let url = format!("file://{}", dir.join(name).display());
    let (dom, console) = browse_at(&chrome, &url, None, Some("1500,1000"));
    assert!(console.is_empty(), "{console:?}");
    assert_eq!(attr(&dom, "<body", "data-lanes-in-view").as_deref(), Some("3 of 3"), "1500 px");
    assert!(attr(&dom, "<p id=\"scroll-note\"", "hidden").is_some(), "no note when every lane is in view");
    let (dom, _) = browse_at(&chrome, &url, None, Some("900,800"));
    let seen = attr(&dom, "<body", "data-lanes-in-view").unwrap();
    assert!(seen.ends_with(" of 3") && seen != "3 of 3", "900 px: {seen}");
    assert!(attr(&dom, "<p id=\"scroll-note\"", "hidden").is_none(), "900 px: the note is shown");
    assert!(dom.contains(&format!("{seen} lanes are in view; scroll the drawing sideways")), "900 px");

    // Screenshots render (a non-empty PNG).
    let png = dir.join("shot.png");
    let (_, console) = browse(&chrome, &format!("file://{}", dir.join(&files[0].0).display()), Some(&png));
    assert!(console.is_empty(), "{console:?}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "a screenshot of {} bytes", bytes.len());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- the findings' pictures

/// Every line of docs/img/pictures.txt is the command that makes one picture of
/// docs/findings.md: run it into a scratch file and compare. A stale picture fails, with
/// the command that remakes it.
#[test]
fn the_findings_pictures_are_current() {
    let list = std::fs::read_to_string(root().join("docs/img/pictures.txt")).unwrap();
    let findings = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    let dir = scratch("pictures");
    let mut listed = Vec::new();
    let mut stale = Vec::new();
    for line in list.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..2], ["mmcheck", "check"], "{line}");
        let at = words.iter().position(|w| *w == "--svg").unwrap();
        let target = words[at + 1];
        let name = target.strip_prefix("docs/img/").unwrap();
        assert!(findings.contains(&format!("(img/{name})")), "docs/findings.md links img/{name}");
        let fresh = dir.join(name);
        let fresh_s = fresh.to_str().unwrap().to_string();
        // words[0] is the program; the file after --svg is the scratch one.
        let args: Vec<&str> =
            words[1..].iter().enumerate().map(|(i, a)| if i == at { fresh_s.as_str() } else { a }).collect();
        let out = mmcheck(&args);
        assert_eq!(out.status.code(), Some(0), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        let now = std::fs::read_to_string(&fresh).unwrap();
        let shipped = std::fs::read_to_string(root().join(target)).unwrap_or_default();
        if now != shipped {
            stale.push(line.to_string());
        }
        listed.push(name.to_string());
    }
    assert!(listed.len() >= 9, "{listed:?}");
    // Every SVG in docs/img is one of them.
    for e in std::fs::read_dir(root().join("docs/img")).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if n.ends_with(".svg") {
            assert!(listed.contains(&n), "docs/img/{n} is not made by a line of docs/img/pictures.txt");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stale.is_empty(), "stale pictures: run, from the repository's root,\n{}", stale.join("\n"));
}

#[test]
fn a_stateful_page_says_which_reductions_ran_and_why_not() {
    let r = report(LASSO);
    let page = html::page(&r, false, None).unwrap();
    let at = page.find("id=\"reductions\">").expect("a reductions row");
    let row = &page[at..at + page[at..].find("</td>").unwrap()];
    // Compaction declares no symmetric ids and not its dependencies, and the file checks progress:
    // of the three, only snapshots ran.
    assert!(row.starts_with("id=\"reductions\">snapshot;"), "{row}");
    assert!(row.contains("symmetry not applied") && row.contains("partial-order reduction not applied"), "{row}");
}
