//! A cluster search (`--processes`, `--local-cluster`; docs/model.md, "Many machines"): the
//! stateful engine over several processes on timely dataflow changes no verdict of a shipped
//! file of the stateful engine and, where the search completes, stores exactly the states one
//! process stores; `progress` and the lasso invariants are decided on the union of the graphs
//! the workers record.
//!
//! The processes of the library-level tests are threads of this test, each with its own timely
//! instance and its own sockets on loopback (what a process is to timely); the command-line
//! tests start real processes. Two seeded defects show the comparison can fail: states sent
//! to another process that are lost on the way (`ClusterLosesSentStates`), and workers that
//! record only the transitions into states they own (`ClusterRecordsOwnEdgesOnly`: livelocks
//! pass). The fault tests end with exit status 2 and a message that names the process.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mmcheck::engine::stateful::cluster::Cluster;
use mmcheck::engine::{Engine, Explore, Memory, Options, Outcome, Reduce, ReductionDefect};
use mmcheck::scenario::{self, Scenario};

mod common;

/// Free ports on loopback, one per process.
fn addresses(n: usize) -> Vec<String> {
    let held: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free port")).collect();
    held.iter().map(|l| format!("127.0.0.1:{}", l.local_addr().unwrap().port())).collect()
}

fn stateful_engine(sc: &Scenario) -> Engine {
    sc.engines.iter().copied().find(|e| matches!(e, Engine::Stateful { .. })).expect("a stateful file")
}

/// `sc` searched by `n` processes of `threads` workers each (threads of this test): process 0's
/// outcome.
fn cluster(sc: &Scenario, n: usize, threads: usize, defect: Option<ReductionDefect>) -> Outcome {
    cluster_with(stateful_engine(sc), sc, n, threads, defect)
}

/// [`cluster`] with `engine` (its memory model) instead of the file's.
fn cluster_with(engine: Engine, sc: &Scenario, n: usize, threads: usize, defect: Option<ReductionDefect>) -> Outcome {
    let addrs = addresses(n);
    let reduce = Reduce { defect, ..sc.reduce.unwrap_or_default() };
    let outs: Vec<Outcome> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|i| {
                let c = Arc::new(Cluster::new(i, addrs.clone(), threads, Duration::from_secs(60)));
                s.spawn(move || sc.spec.explore(engine, &Options { cluster: Some(c), reduce, ..Options::default() }))
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("a process")).collect()
    });
    for (i, o) in outs.iter().enumerate().skip(1) {
        let st = o.stats.expect("stats");
        assert!(st.cluster_follower && !o.complete && o.error.is_none(), "process {i}: {:?}", o.error);
    }
    outs.into_iter().next().expect("process 0")
}

fn one(sc: &Scenario, defect: Option<ReductionDefect>) -> Outcome {
    let reduce = Reduce { defect, ..sc.reduce.unwrap_or_default() };
    let single = sc.spec.explore(stateful_engine(sc), &Options { reduce, ..Options::default() });
    // Symmetry is not used by a cluster where fair cycles are decided: compare with the same
    // search on one process.
    let cycles_checked = ["progress", "no-soft-lockup"].iter().any(|i| sc.spec.invariants().contains(i));
    if cycles_checked && single.stats.is_some_and(|s| s.symmetry_group > 1) {
        let reduce = Reduce { symmetry: false, ..reduce };
        return sc.spec.explore(stateful_engine(sc), &Options { reduce, ..Options::default() });
    }
    single
}

/// Why the cluster's outcome is not one process's, if it is not.
fn differ(many: &Outcome, one: &Outcome) -> Option<String> {
    if many.error.is_some() || one.error.is_some() {
        return Some(format!("errors: {:?} / {:?}", many.error, one.error));
    }
    if common::found_invariants(many) != common::found_invariants(one) {
        return Some(format!("invariants: {:?} / {:?}", common::found_invariants(many), common::found_invariants(one)));
    }
    if many.complete != one.complete {
        return Some(format!("complete: {} / {}", many.complete, one.complete));
    }
    let (m, o) = (many.stats.expect("stats"), one.stats.expect("stats"));
    if many.complete && (m.states != o.states || common::reached(many) != common::reached(one)) {
        return Some(format!(
            "states {} / {}, coverage {:?} / {:?}",
            m.states,
            o.states,
            common::reached(many),
            common::reached(one)
        ));
    }
    None
}

/// Every shipped file of the stateful engine.
fn stateful_files() -> Vec<(String, Scenario)> {
    common::shipped_small(32)
        .into_iter()
        .filter(|(_, sc)| sc.engines.iter().any(|e| matches!(e, Engine::Stateful { .. })))
        .collect()
}

#[test]
fn three_processes_change_no_verdict_and_store_the_same_states() {
    let (mut compared, mut complete, mut cycles, mut sent, mut found, mut snapshotted) = (0, 0, 0, 0u64, 0, 0);
    let mut distributed = 0;
    for (rel, sc) in stateful_files() {
        let single = one(&sc, None);
        let cycles_checked = ["progress", "no-soft-lockup"].iter().any(|i| sc.spec.invariants().contains(i));
        let many = cluster(&sc, 3, 1, None);
        if let Some(why) = differ(&many, &single) {
            panic!("{rel}: 3 processes: {why}");
        }
        let st = many.stats.expect("stats");
        assert_eq!((st.processes, st.workers), (3, 3), "{rel}");
        if many.complete {
            assert!(st.worker_states_min > 0, "{rel}: a process stored no state");
            // The processes searched the states they were sent by snapshots (docs/model.md,
            // "Snapshots").
            snapshotted += usize::from(st.reductions.contains("snapshot") && st.restores > 0);
        }
        // A proof of `progress` (or of a lasso invariant) is decided by the processes together,
        // with no graph gathered (cluster_fair.rs).
        if cycles_checked && many.complete && many.found.is_none() {
            assert!(st.cycle_pass_distributed && st.graph_bytes > 0, "{rel}: the graph was gathered for a proof");
            distributed += 1;
        }
        // A violation is reported once, with a schedule that replays on one machine.
        if let Some(f) = &many.found {
            assert!(!f.violations.is_empty(), "{rel}: the counterexample violates nothing");
            found += 1;
        }
        compared += 1;
        complete += usize::from(many.complete);
        cycles += usize::from(cycles_checked);
        sent += st.states_sent;
    }
    eprintln!(
        "{compared} files, {complete} complete ({snapshotted} by snapshots), {cycles} deciding fair cycles \
         ({distributed} proofs by the distributed pass), {found} violations; {sent} states sent"
    );
    assert!(distributed >= 5, "only {distributed} proofs of a cycle invariant");
    // One per configuration: a file with `variants` counts once per variant.
    assert_eq!(compared, 88, "every shipped configuration of the stateful engine is compared");
    assert!(snapshotted >= 15, "only {snapshotted} complete cluster searches took snapshots");
    assert!(complete >= 15 && cycles >= 15 && found >= 5 && sent > 0, "{complete} {cycles} {found} {sent}");
}

/// Two threads in each of two processes: the workers of one process share nothing but the
/// network's loop with each other, and agree too.
#[test]
fn two_processes_of_two_workers_agree() {
    let path = common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    let single = one(&sc, None);
    assert!(single.complete);
    let many = cluster(&sc, 2, 2, None);
    assert_eq!(differ(&many, &single), None);
    assert_eq!(many.stats.expect("stats").workers, 4);
}

/// Under the kernel's memory model, three processes store the states one process stores, on a
/// file whose `lkmm` states depend on the views of finished tasks that a join takes (its count
/// depended on the order of the search while the memory's hash left them out: docs/model.md,
/// "What `lkmm` leaves out"); the files written for `lkmm` are compared in the sweep above.
#[test]
fn under_lkmm_three_processes_store_the_states_one_process_stores() {
    let path = common::scenarios_dir().join("kswapd-stall/waitqueue-v1-untagged-no-stall-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    let engine = Engine::Stateful { max_states: Some(2_000_000), memory: Memory::Lkmm };
    let reduce = sc.reduce.unwrap_or_default();
    let single = sc.spec.explore(engine, &Options { reduce, ..Options::default() });
    assert!(single.complete && single.found.is_none());
    let many = cluster_with(engine, &sc, 3, 1, None);
    assert_eq!(differ(&many, &single), None);
    assert!(many.stats.expect("stats").states_sent > 0);
}

/// A state budget stops every worker of every process: `incomplete`, never a pass.
#[test]
fn a_state_budget_stops_a_cluster_incomplete() {
    let path = common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    let addrs = addresses(3);
    let outs: Vec<Outcome> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let c = Arc::new(Cluster::new(i, addrs.clone(), 1, Duration::from_secs(60)));
                let sc = &sc;
                s.spawn(move || {
                    sc.spec.explore(
                        Engine::Stateful { max_states: Some(6_000), memory: Memory::Sc },
                        &Options { cluster: Some(c), ..Options::default() },
                    )
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("a process")).collect()
    });
    let o = &outs[0];
    assert!(!o.complete && o.found.is_none() && o.error.is_none(), "{:?}", o.error);
    let st = o.stats.expect("stats");
    assert_eq!(st.stopped_by, Some("state budget (max_states)"));
    // Each of the 3 workers stops at its share, 2,000 states.
    assert!(st.states >= 6_000 && st.states < 6_300, "{}", st.states);
    // A stopped search decides no fair cycle, and gathers no graph on process 0.
    assert!(!st.cycle_pass_distributed && st.graph_bytes > 0, "{st:?}");
    assert!(st.graph_bytes_max_process < st.graph_bytes, "the graph was gathered: {st:?}");
}

/// States lost between processes are missed states: the comparison catches it.
#[test]
fn states_lost_between_processes_are_caught() {
    let path = common::scenarios_dir().join("kswapd-stall/recheck-direct-reclaim-bdi-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    let single = one(&sc, None);
    assert!(single.complete);
    let good = cluster(&sc, 3, 1, None);
    assert_eq!(differ(&good, &single), None);
    let bad = cluster(&sc, 3, 1, Some(ReductionDefect::ClusterLosesSentStates));
    let why = differ(&bad, &single).expect("the seeded defect went unnoticed");
    assert!(why.contains("states"), "{why}");
}

/// Processes whose restores leave the online monitors as the last execution left them (the
/// seeded snapshot defect) store other states: the comparison with one process catches it.
#[test]
fn processes_whose_restores_forget_the_ghost_are_caught() {
    let path = common::scenarios_dir().join("kswapd-stall/recheck-direct-reclaim-bdi-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    let single = one(&sc, None);
    assert!(single.complete);
    let bad = cluster(&sc, 3, 1, Some(ReductionDefect::SnapshotForgetsGhost));
    assert!(bad.stats.expect("stats").restores > 0, "the processes took no snapshot");
    differ(&bad, &single).expect("the seeded defect went unnoticed");
}

/// A `progress` proof over three processes: the processes decide the fair cycles together, and
/// none of them holds more than half the graph the search recorded (its part of the graph and
/// the pass's arrays, against the whole graph's bytes). A livelock is gathered on process 0,
/// which makes the counterexample.
#[test]
fn no_process_holds_more_than_half_the_graph_of_a_progress_proof() {
    let path = common::scenarios_dir().join("kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml");
    let sc = scenario::load(&path).unwrap();
    assert!(sc.spec.invariants().contains(&"progress"));
    let many = cluster(&sc, 3, 1, None);
    assert!(many.complete && many.found.is_none(), "{:?}", many.error);
    let st = many.stats.expect("stats");
    assert!(st.cycle_pass_distributed, "the graph was gathered");
    assert!(st.graph_bytes > 1_000_000, "{}", st.graph_bytes);
    assert!(
        st.graph_bytes_max_process * 2 < st.graph_bytes,
        "a process held {} bytes of a graph of {}",
        st.graph_bytes_max_process,
        st.graph_bytes
    );
    let rel = "compaction/finishcontend-v3-holders-killer-resched-stateful.toml";
    let sc = scenario::load(&common::scenarios_dir().join(rel)).unwrap();
    let livelock = cluster(&sc, 3, 1, None);
    assert!(common::found_invariants(&livelock).contains("progress"), "{rel}");
    let st = livelock.stats.expect("stats");
    assert!(!st.cycle_pass_distributed && st.cycle_pass_rounds > 0, "{rel}: {st:?}");
}

/// The seeded defect `ClusterPassDropsRemoteBack`: a distributed pass that cuts components
/// where their cycles cross workers misses the livelocks of shipped scenarios, and the
/// comparison with one process catches it.
#[test]
fn a_distributed_pass_that_cuts_cycles_between_workers_is_caught() {
    let caught = livelocks_missed_under(ReductionDefect::ClusterPassDropsRemoteBack);
    assert_eq!(caught.len(), 2, "{caught:?}");
}

/// A graph without the transitions between workers has no cycle through two of them: the
/// livelocks of shipped scenarios pass, and the comparison catches it.
#[test]
fn a_graph_without_the_edges_between_workers_is_caught() {
    let caught = livelocks_missed_under(ReductionDefect::ClusterRecordsOwnEdgesOnly);
    assert_eq!(caught.len(), 2, "{caught:?}");
}

/// The two compaction livelocks, each searched by one process and by 3 processes with and
/// without `defect`: the cluster agrees without it; where it differs with it, why (the
/// livelock missed: the invariants differ).
fn livelocks_missed_under(defect: ReductionDefect) -> Vec<String> {
    let mut caught = Vec::new();
    for rel in [
        "compaction/finishcontend-v3-holders-killer-resched-stateful.toml",
        "compaction/resched-not-contention-holders-killer-resched-stateful.toml",
    ] {
        let sc = scenario::load(&common::scenarios_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let single = one(&sc, None);
        assert!(common::found_invariants(&single).contains("progress"), "{rel}");
        assert_eq!(differ(&cluster(&sc, 3, 1, None), &single), None, "{rel}");
        if let Some(why) = differ(&cluster(&sc, 3, 1, Some(defect)), &single) {
            assert!(why.starts_with("invariants"), "{rel}: {why}");
            caught.push(format!("{rel}: {why}"));
        }
    }
    caught
}

// ------------------------------------------------------------------ the command line

fn mmcheck() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mmcheck"));
    c.current_dir(common::scenarios_dir().join(".."));
    c
}

fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line: {l:?}: {e}")))
        .collect()
}

/// `--local-cluster 3` starts two more processes of itself; process 0 prints one JSON line per
/// file (nothing else on stdout), with the verdicts and states of one process.
#[test]
fn a_local_cluster_prints_what_one_process_prints() {
    let files = [
        "scenarios/kswapd-stall/recheck-3kswapd-writer-anytime-stateful.toml",
        "scenarios/kswapd-stall/waitqueue-v1-4kswapd-stateful.toml",
        "scenarios/compaction/norescan-v3-holders-killer-resched-stateful.toml",
        "scenarios/reclaim-throttle/resched-noop-v5.16-rc1-stateful.toml",
    ];
    let files: Vec<&str> = files.into_iter().filter(|f| common::scenarios_dir().join("..").join(f).exists()).collect();
    assert!(files.len() >= 3, "{files:?}");
    let single = mmcheck().arg("check").arg("--json").args(&files).output().unwrap();
    let many = mmcheck().args(["check", "--json", "--local-cluster", "3"]).args(&files).output().unwrap();
    assert_eq!(many.status.code(), single.status.code(), "{}", String::from_utf8_lossy(&many.stderr));
    let (one, three) = (json_lines(&single.stdout), json_lines(&many.stdout));
    assert_eq!(one.len(), files.len());
    assert_eq!(three.len(), files.len(), "{}", String::from_utf8_lossy(&many.stdout));
    for (a, b) in one.iter().zip(&three) {
        let f = &a["file"];
        assert_eq!(a["verdict"], b["verdict"], "{f}");
        assert_eq!(a["invariant"], b["invariant"], "{f}");
        assert_eq!(b["processes"], 3, "{f}");
        // One process may reduce by symmetry where a cluster does not (fair cycles: see `one`).
        if a["complete"] == true && a["symmetry_group"] == b["symmetry_group"] {
            assert_eq!(a["states"], b["states"], "{f}");
        }
        let reached = |j: &serde_json::Value| -> BTreeSet<String> {
            j["coverage"].as_object().map_or_else(BTreeSet::new, |m| {
                m.iter().filter(|(_, v)| v.as_u64() > Some(0)).map(|(k, _)| k.clone()).collect()
            })
        };
        if a["complete"] == true {
            assert_eq!(reached(a), reached(b), "{f}");
        }
        // The token replays on one machine.
        if let Some(tok) = b["replay"].as_str() {
            let args: Vec<&str> = tok.split_whitespace().skip(1).collect();
            let r = mmcheck().args(&args).arg("--json").output().unwrap();
            let j = json_lines(&r.stdout);
            assert_eq!(j[0]["verdict"], b["verdict"], "{f}: {tok}");
            assert_eq!(j[0]["invariant"], b["invariant"], "{f}: {tok}");
        }
    }
}

fn hostfile(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("hosts");
    std::fs::write(&f, text).unwrap();
    f
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("mmcheck-cluster-test-{}-{name}", std::process::id()))
}

const SMALL: &str = "scenarios/kswapd-stall/recheck-2kswapd-writer-stateful.toml";

/// Bad cluster flags and hostfiles: exit status 2, a message that names the file, the line or
/// the flag, nothing on stdout.
#[test]
fn bad_cluster_input_is_refused() {
    let dir = tmp("bad");
    let two = hostfile(&dir, "127.0.0.1:1\n127.0.0.1:2\n").display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--processes".into(), "2".into(), "--process".into(), "0".into()], "all three of --processes"),
        (
            vec!["--processes".into(), "2".into(), "--process".into(), "2".into(), "--hostfile".into(), two.clone()],
            "--process 2: processes are numbered 0 to 1",
        ),
        (
            vec!["--processes".into(), "3".into(), "--process".into(), "0".into(), "--hostfile".into(), two.clone()],
            "names 2 process addresses, and --processes says 3",
        ),
        (vec!["--local-cluster".into(), "2".into(), "--hostfile".into(), two.clone()], "does not go with"),
        (vec!["--local-cluster".into(), "2".into(), "--replay".into(), "stateful-0-0".into()], "--replay follows"),
    ];
    for (args, want) in cases {
        let o = mmcheck().args(["check", "--json", SMALL]).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // A malformed hostfile: the file and the line.
    let bad = hostfile(&dir.join("m"), "127.0.0.1:4000\n\nnode-two\n");
    let o = mmcheck()
        .args(["check", "--json", SMALL, "--processes", "2", "--process", "1", "--hostfile"])
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:3: hostfile", bad.display())) && err.contains("has no :port"), "{err}");
    // A file of another engine.
    let o = mmcheck()
        .args(["check", "--json", "--local-cluster", "2", "scenarios/kswapd-stall/recheck-2kswapd-writer.toml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a cluster runs the stateful engine only"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process that cannot reach the others gives up after the connect timeout: exit status 2,
/// naming the process it could not reach and its address.
#[test]
fn a_process_that_cannot_connect_ends_with_an_error() {
    let addrs = addresses(2);
    let dir = tmp("connect");
    let f = hostfile(&dir, &format!("{}\n{}\n", addrs[0], addrs[1]));
    let start = Instant::now();
    let o = mmcheck()
        .args(["check", "--json", SMALL, "--processes", "2", "--process", "1", "--connect-timeout", "2", "--hostfile"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("could not connect to process 0 ({})", addrs[0])), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hostfile that gives this process a port in use: exit status 2, naming the address.
#[test]
fn a_port_in_use_is_refused() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("127.0.0.1:{}", busy.local_addr().unwrap().port());
    let other = addresses(1).remove(0);
    let dir = tmp("busy");
    let f = hostfile(&dir, &format!("{addr}\n{other}\n"));
    let o = mmcheck()
        .args(["check", "--json", SMALL, "--processes", "2", "--process", "0", "--connect-timeout", "2", "--hostfile"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot listen on {addr}")), "{err}");
    drop(busy);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Process `i` of a two-process cluster on hostfile `f`, searching `file`, its output piped.
fn spawn_process(file: &str, f: &std::path::Path, i: &str, extra: &[&str]) -> std::process::Child {
    mmcheck()
        .args(["check", "--json", file, "--processes", "2", "--process", i])
        .args(extra)
        .arg("--hostfile")
        .arg(f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A process that dies in the middle of a run ends the others within seconds: exit status 2,
/// naming the process that was lost and its address; never a verdict.
#[test]
fn a_process_that_dies_ends_the_run_with_an_error() {
    let addrs = addresses(2);
    let dir = tmp("dies");
    let f = hostfile(&dir, &format!("{}\n{}\n", addrs[0], addrs[1]));
    // A search of minutes, so that it is still running when process 1 is killed.
    let long = "scenarios/heavy/recheck-3kswapd-2batches-writer-allocator-never-stateful.toml";
    let p0 = spawn_process(long, &f, "0", &[]);
    let mut p1 = spawn_process(long, &f, "1", &[]);
    // Long enough for both to connect and start searching on a loaded machine.
    std::thread::sleep(Duration::from_secs(6));
    p1.kill().unwrap();
    let _ = p1.wait();
    let killed = Instant::now();
    let o = p0.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("lost its connection to process 1 ({})", addrs[1])), "{err}");
    assert!(killed.elapsed() < Duration::from_secs(20), "{:?}", killed.elapsed());
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two processes started with different files: refused by name, exit status 2.
#[test]
fn processes_that_run_different_things_are_refused() {
    let addrs = addresses(2);
    let dir = tmp("differ");
    let f = hostfile(&dir, &format!("{}\n{}\n", addrs[0], addrs[1]));
    let other = "scenarios/kswapd-stall/recheck-2kswapd-writer-allocator-never-stateful.toml";
    let p0 = spawn_process(SMALL, &f, "0", &["--connect-timeout", "10"]);
    let p1 = spawn_process(other, &f, "1", &["--connect-timeout", "10"]);
    let (o0, o1) = (p0.wait_with_output().unwrap(), p1.wait_with_output().unwrap());
    for o in [&o0, &o1] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("runs another scenario or other options"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
