//! `mmcheck check --processes N --process I --hostfile FILE` and `--local-cluster N`: the
//! command line's side of a cluster search (the search is in the engine:
//! `mmcheck::engine::stateful::cluster`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mmcheck::check::engines_named;
use mmcheck::engine::stateful::cluster::{install_panic_hook, read_hostfile, Cluster};
use mmcheck::engine::{Engine, EngineName};
use mmcheck::scenario::Scenario;
use mmcheck::term::show_path;

use super::output::{CliError, Done};

/// The stateful engine's search over several processes, on timely dataflow (docs/model.md,
/// "Many machines"; docs/scenarios.md, "A cluster").
#[derive(clap::Args, Debug, Default)]
pub struct ClusterArgs {
    /// Search over N processes (with --process and --hostfile), each with --workers threads.
    /// Every process is started with the same files and options; process 0 prints the result.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    processes: Option<u16>,
    /// This process's index, 0 to N-1.
    #[arg(long, value_name = "I")]
    process: Option<u16>,
    /// One host:port per line, process 0 first (lines starting with # are comments).
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
    /// Start N processes on 127.0.0.1 (this one is process 0) and search over them: a cluster
    /// on one machine, for trying it and for the tests.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    local_cluster: Option<u16>,
    /// How long a cluster process waits for the others to be reachable before it gives up.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    connect_timeout: u64,
}

/// A cluster this process takes part in, and (with `--local-cluster`) the processes it started.
pub struct Started {
    pub cluster: Arc<Cluster>,
    children: Arc<Mutex<Vec<Child>>>,
    /// Set once this process's own runs are over: a child that exits after that is not a fault.
    over: Arc<AtomicBool>,
    dir: Option<PathBuf>,
}

/// Check the cluster flags and, with `--local-cluster N`, start processes 1 to N-1.
pub fn start(a: &ClusterArgs, workers: u16, replay: bool) -> Result<Option<Started>, CliError> {
    let timeout = Duration::from_secs(a.connect_timeout);
    let distributed = a.processes.is_some() || a.process.is_some() || a.hostfile.is_some();
    if a.local_cluster.is_some() && distributed {
        return Err(CliError::Usage(
            "--local-cluster starts its own processes: it does not go with --processes, --process or --hostfile".into(),
        ));
    }
    if (distributed || a.local_cluster.is_some()) && replay {
        return Err(CliError::Usage(
            "--replay follows one schedule on this machine: leave out --processes and --local-cluster".into(),
        ));
    }
    if distributed {
        let (Some(n), Some(i), Some(file)) = (a.processes, a.process, a.hostfile.as_ref()) else {
            return Err(CliError::Usage(
                "a cluster needs all three of --processes N, --process I and --hostfile FILE".into(),
            ));
        };
        if i >= n {
            return Err(CliError::Usage(format!(
                "--process {i}: processes are numbered 0 to {} (--processes {n})",
                n - 1
            )));
        }
        let addresses = read_hostfile(file, n as usize).map_err(CliError::Usage)?;
        install_panic_hook(i as usize, addresses.clone());
        let cluster = Arc::new(Cluster::new(i as usize, addresses, workers as usize, timeout));
        return Ok(Some(Started { cluster, children: Arc::default(), over: Arc::default(), dir: None }));
    }
    let Some(n) = a.local_cluster else { return Ok(None) };
    let n = n as usize;
    // Free ports on loopback: bound together (so they differ), then let go for the processes.
    let mut addresses = Vec::with_capacity(n);
    {
        let mut held = Vec::with_capacity(n);
        for _ in 0..n {
            let l = std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| CliError::Usage(format!("--local-cluster: cannot find a free port on 127.0.0.1: {e}")))?;
            addresses.push(format!("127.0.0.1:{}", l.local_addr().map_err(|e| CliError::Usage(e.to_string()))?.port()));
            held.push(l);
        }
    }
    let dir = std::env::temp_dir().join(format!("mmcheck-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
    let hostfile = dir.join("hostfile");
    std::fs::write(&hostfile, addresses.join("\n") + "\n")
        .map_err(|e| CliError::Usage(format!("{}: {e}", hostfile.display())))?;
    let exe = std::env::current_exe().map_err(|e| CliError::Usage(format!("--local-cluster: {e}")))?;
    // The same command line, without --local-cluster, with this process's cluster flags.
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let mut skip = false;
    for arg in std::env::args_os().skip(1) {
        if std::mem::take(&mut skip) {
            continue;
        }
        let s = arg.to_string_lossy();
        if s == "--local-cluster" {
            skip = true;
            continue;
        }
        if s.starts_with("--local-cluster=") {
            continue;
        }
        args.push(arg);
    }
    let mut children = Vec::with_capacity(n - 1);
    for i in 1..n {
        let err = std::fs::File::create(dir.join(format!("process-{i}.stderr")))
            .map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
        let child = Command::new(&exe)
            .args(&args)
            .args(["--processes", &n.to_string(), "--process", &i.to_string()])
            .arg("--hostfile")
            .arg(&hostfile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| CliError::Usage(format!("--local-cluster: cannot start process {i}: {e}")))?;
        children.push(child);
    }
    install_panic_hook(0, addresses.clone());
    let started = Started {
        cluster: Arc::new(Cluster::new(0, addresses, workers as usize, timeout)),
        children: Arc::new(Mutex::new(children)),
        over: Arc::default(),
        dir: Some(dir),
    };
    started.watch();
    Ok(Some(started))
}

impl Started {
    /// A process started here that fails before this one is done ends the run at once (exit
    /// status 2, naming it and its address): otherwise this one could wait for it for ever.
    fn watch(&self) {
        let (children, over, addresses, dir) =
            (Arc::clone(&self.children), Arc::clone(&self.over), self.cluster.addresses.clone(), self.dir.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            if over.load(Ordering::SeqCst) {
                return;
            }
            let mut kids = children.lock().unwrap_or_else(|e| e.into_inner());
            let failed = kids.iter_mut().enumerate().find_map(|(k, c)| match c.try_wait() {
                Ok(Some(status)) if !status.success() => Some((k + 1, status.to_string())),
                _ => None,
            });
            if let Some((i, status)) = failed {
                if over.load(Ordering::SeqCst) {
                    return;
                }
                for c in kids.iter_mut() {
                    let _ = c.kill();
                }
                eprintln!(
                    "mmcheck: error: cluster process {i} ({}) ended with {status} before the run was over{}",
                    addresses[i],
                    stderr_tail(dir.as_ref(), i)
                );
                std::process::exit(2);
            }
        });
    }

    /// This process's runs are over: wait for the processes it started, and fail if one did.
    pub fn finish(self, done: Done) -> Done {
        self.over.store(true, Ordering::SeqCst);
        let mut kids = std::mem::take(&mut *self.children.lock().unwrap_or_else(|e| e.into_inner()));
        if done.is_err() {
            for c in kids.iter_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
            self.cleanup();
            return done;
        }
        let deadline = Instant::now() + self.cluster.connect_timeout + Duration::from_secs(30);
        let mut failures = Vec::new();
        for (k, c) in kids.iter_mut().enumerate() {
            let i = k + 1;
            let status = loop {
                match c.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                    _ => {
                        let _ = c.kill();
                        let _ = c.wait();
                        break None;
                    }
                }
            };
            match status {
                Some(s) if s.success() => {}
                Some(s) => failures.push(format!(
                    "cluster process {i} ({}) ended with {s}{}",
                    self.cluster.addresses[i],
                    stderr_tail(self.dir.as_ref(), i)
                )),
                None => failures.push(format!(
                    "cluster process {i} ({}) did not end after the run was over",
                    self.cluster.addresses[i]
                )),
            }
        }
        self.cleanup();
        if !failures.is_empty() {
            return Err(CliError::Flags(failures));
        }
        done
    }

    fn cleanup(&self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// The last lines a started process wrote to its standard error, for the message about it.
fn stderr_tail(dir: Option<&PathBuf>, i: usize) -> String {
    let Some(text) = dir.and_then(|d| std::fs::read_to_string(d.join(format!("process-{i}.stderr"))).ok()) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = &lines[lines.len().saturating_sub(5)..];
    format!("; its last words:\n    {}", tail.join("\n    "))
}

/// A cluster runs the stateful engine only: every file that would run another is refused, one
/// line each.
pub fn refuse_files(scenarios: &[Scenario], engine: Option<EngineName>) -> Result<(), CliError> {
    let mut refused = Vec::new();
    for sc in scenarios {
        let engines = match engine {
            Some(e) => engines_named(sc, e),
            None => sc.engines.clone(),
        };
        if let Some(e) = engines.iter().find(|e| !matches!(e, Engine::Stateful { .. })) {
            refused.push(format!(
                "{}: a cluster runs the stateful engine only, and this file runs {} (give --engine stateful, or \
                 leave the file out)",
                show_path(&sc.file),
                e.name()
            ));
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(CliError::Flags(refused))
    }
}
