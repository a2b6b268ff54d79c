//! Many machines (`--processes N --process I --hostfile FILE`, `--local-cluster N`): the
//! stateful search on timely dataflow.
//!
//! Every worker of every process owns the states whose remixed fingerprint falls to it
//! ([`owner`]). A worker runs the depth-first search of [`super::search`] from the states it is
//! given, over its own visited table. When a transition reaches a state another worker owns,
//! the worker does not look it up: it sends the owner the state's fingerprint and the schedule
//! that leads to it (timely's `Exchange` on the owner's index), and goes on as if the state
//! were known. The owner drops a state it has stored; otherwise it stores it, replays the
//! schedule, and searches on from there. States are never serialised: a schedule is all a
//! state needs, since the runtime rebuilds it by replaying (docs/model.md, "Many machines").
//!
//! The candidates travel round a timely loop, one timestamp per hop between workers, so the
//! search is over when timely's progress tracking says no candidate is left anywhere. A
//! violation, a budget or an error in any worker sends every worker a halt. When `progress` or
//! a lasso invariant is checked, the workers then decide together whether their parts of the
//! state graph may hold a fair cycle (`cluster_fair/`). Every worker sends its counts (and,
//! if a fair cycle may be there, its part of the graph) to worker 0 of process 0, which
//! decides the fair cycles on the union and makes and prints the counterexample, exactly as
//! with `--workers N` on one machine.
//!
//! The connections are made here, not by timely's `initialize_networking` (which retries for
//! ever and prints to stdout): each process listens on its own address, connects to every
//! process of a lower index, and both sides exchange a header that names the process, the
//! number of processes and the run (a hash of the scenario and the options that shape the
//! search), so a process started with another `--processes` or another file is refused by name.
//! A process that cannot be reached within the connect timeout, or that closes its connection
//! in the middle of a run, ends the run with an error naming it and its address.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The start of the error of a cluster that could not run (the command line ends with exit
/// status 2 on it, as on bad input).
pub const ERROR: &str = "cluster: ";

/// The header both ends of a connection send first: magic, process index, processes, run key.
const MAGIC: &[u8; 8] = b"mmcheck1";
const HEADER: usize = 8 + 8 + 8 + 8;

/// How this process takes part in a cluster.
#[derive(Debug)]
pub struct Cluster {
    /// This process's index (0 prints the result).
    pub process: usize,
    /// Every process's `host:port`, in index order.
    pub addresses: Vec<String>,
    /// Worker threads per process (`--workers`).
    pub threads: usize,
    /// How long to wait for the other processes to be reachable.
    pub connect_timeout: Duration,
    /// The listening socket, bound at the first run and kept for the next files of the same
    /// command (a process busy with its last file is then still reachable: the connection
    /// waits in its backlog).
    listener: Mutex<Option<TcpListener>>,
}

/// The worker (over every process) that owns the state with fingerprint `fp`.
pub fn owner(fp: u64, peers: usize) -> usize {
    // The visited tables cut by the top bits; timely routes by the low ones: remix first.
    let r = (fp ^ (fp >> 31)).wrapping_mul(0x7fb5_d329_728e_a185);
    ((r ^ (r >> 27)) % peers as u64) as usize
}

impl Cluster {
    pub fn new(process: usize, addresses: Vec<String>, threads: usize, connect_timeout: Duration) -> Self {
        Cluster { process, addresses, threads: threads.max(1), connect_timeout, listener: Mutex::new(None) }
    }

    pub fn processes(&self) -> usize {
        self.addresses.len()
    }

    fn name(&self, p: usize) -> String {
        format!("process {p} ({})", self.addresses[p])
    }

    /// Connect to every other process for one run: `sockets[p]` is the connection to process
    /// `p` (`None` for this one), in the order timely wants.
    pub fn connect(&self, key: u64) -> Result<Vec<Option<TcpStream>>, String> {
        let me = self.process;
        let n = self.processes();
        let deadline = Instant::now() + self.connect_timeout;
        let mut guard = self.listener.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() && me + 1 < n {
            // A name that does not resolve yet (a pod's DNS record) is tried again until the
            // deadline; an address in use is refused at once.
            let l = loop {
                match TcpListener::bind(&self.addresses[me]) {
                    Ok(l) => break l,
                    Err(e) if e.kind() == std::io::ErrorKind::AddrInUse || Instant::now() >= deadline => {
                        return Err(format!("{}: cannot listen on {}: {e}", self.name(me), self.addresses[me]));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(200)),
                }
            };
            *guard = Some(l);
        }
        let mut sockets: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        // Connect to the processes of lower index.
        for (p, slot) in sockets.iter_mut().enumerate().take(me) {
            let mut stream = loop {
                match TcpStream::connect(&self.addresses[p]) {
                    Ok(s) => break s,
                    Err(e) if Instant::now() >= deadline => {
                        return Err(format!(
                            "{} could not connect to {} within {} s: {e}",
                            self.name(me),
                            self.name(p),
                            self.connect_timeout.as_secs()
                        ));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(50)),
                }
            };
            self.handshake(&mut stream, key, Some(p))?;
            *slot = Some(stream);
        }
        // Accept the processes of higher index.
        if let Some(l) = guard.as_ref() {
            l.set_nonblocking(true).map_err(|e| format!("{}: {e}", self.name(me)))?;
            let mut missing = n - me - 1;
            while missing > 0 {
                match l.accept() {
                    Ok((mut stream, _)) => {
                        stream.set_nonblocking(false).map_err(|e| format!("{}: {e}", self.name(me)))?;
                        let p = self.handshake(&mut stream, key, None)?;
                        if p <= me || sockets[p].is_some() {
                            return Err(format!(
                                "{}: a second connection claims to be {} (are two processes started with \
                                 --process {p}?)",
                                self.name(me),
                                self.name(p)
                            ));
                        }
                        sockets[p] = Some(stream);
                        missing -= 1;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if Instant::now() >= deadline {
                            let absent: Vec<String> =
                                (me + 1..n).filter(|&p| sockets[p].is_none()).map(|p| self.name(p)).collect();
                            return Err(format!(
                                "{}: no connection from {} within {} s",
                                self.name(me),
                                absent.join(", "),
                                self.connect_timeout.as_secs()
                            ));
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(e) => return Err(format!("{}: accepting a connection: {e}", self.name(me))),
                }
            }
        }
        for s in sockets.iter().flatten() {
            let _ = s.set_nodelay(true);
        }
        Ok(sockets)
    }

    /// Send this process's header, read the peer's, and check that both run the same thing;
    /// the peer's index. `expect`: the index the peer must have (when this end connected).
    fn handshake(&self, stream: &mut TcpStream, key: u64, expect: Option<usize>) -> Result<usize, String> {
        let me = self.process;
        let n = self.processes();
        let who = expect.map_or_else(|| "a connecting process".to_string(), |p| self.name(p));
        let mut out = Vec::with_capacity(HEADER);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(me as u64).to_be_bytes());
        out.extend_from_slice(&(n as u64).to_be_bytes());
        out.extend_from_slice(&key.to_be_bytes());
        stream.write_all(&out).map_err(|e| format!("{}: sending to {who}: {e}", self.name(me)))?;
        // The peer may be busy with its previous file: no timeout on its answer, but a
        // process that died closes the connection and the read fails at once.
        let mut h = [0u8; HEADER];
        stream.read_exact(&mut h).map_err(|e| format!("{}: no header from {who}: {e}", self.name(me)))?;
        let word = |i: usize| u64::from_be_bytes(h[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        if &h[..8] != MAGIC {
            return Err(format!("{}: {who} is not an mmcheck process of this version", self.name(me)));
        }
        let (p, theirs, their_key) = (word(1) as usize, word(2) as usize, word(3));
        if theirs != n {
            return Err(format!(
                "{}: {who} runs with --processes {theirs}, this one with --processes {n}",
                self.name(me)
            ));
        }
        if p >= n || expect.is_some_and(|e| e != p) {
            return Err(format!("{}: {who} says it is process {p}", self.name(me)));
        }
        if their_key != key {
            return Err(format!(
                "{}: {} runs another scenario or other options (every process must be given the same \
                 files and options)",
                self.name(me),
                self.name(p)
            ));
        }
        Ok(p)
    }
}

/// Read a hostfile: one `host:port` per line, process 0 first; blank lines and lines starting
/// with `#` are skipped. Errors name the file and the line.
pub fn read_hostfile(path: &std::path::Path, processes: usize) -> Result<Vec<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the hostfile: {e}", path.display()))?;
    let mut addresses: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = |why: &str| format!("{}:{}: hostfile: \"{}\" {why}", path.display(), i + 1, l.escape_debug());
        if l.split_whitespace().count() != 1 {
            return Err(bad("is not one host:port"));
        }
        let Some((host, port)) = l.rsplit_once(':') else {
            return Err(bad("has no :port"));
        };
        if host.is_empty() {
            return Err(bad("has no host"));
        }
        match port.parse::<u16>() {
            Ok(p) if p > 0 => {}
            _ => return Err(bad("has no port number (1 to 65535) after the last ':'")),
        }
        if addresses.iter().any(|a| a == l) {
            return Err(bad("names the same address as an earlier line"));
        }
        addresses.push(l.to_string());
    }
    if addresses.len() != processes {
        return Err(format!(
            "{}: the hostfile names {} process address{}, and --processes says {processes}",
            path.display(),
            addresses.len(),
            if addresses.len() == 1 { "" } else { "es" }
        ));
    }
    Ok(addresses)
}

/// A panic in one of timely's communication threads (a connection lost in the middle of a
/// run) ends this process at once with exit status 2 and a message naming the process that
/// was lost; the default hook runs for every other panic.
pub fn install_panic_hook(me: usize, addresses: Vec<String>) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("");
        let peer = name.strip_prefix("timely:recv-").or_else(|| name.strip_prefix("timely:send-"));
        if let Some(p) = peer.and_then(|p| p.parse::<usize>().ok()) {
            let addr = addresses.get(p).map_or("?", String::as_str);
            let msg = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            eprintln!(
                "mmcheck: error: cluster process {me} lost its connection to process {p} ({addr}): {msg}; the \
                 run ends without a verdict"
            );
            std::process::exit(2);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_are_read_and_bad_ones_named() {
        let dir = std::env::temp_dir().join(format!("mmcheck-hostfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("hosts");
        std::fs::write(&f, "# cluster\n10.0.0.1:4000\n\nnode2:4001\n").unwrap();
        assert_eq!(read_hostfile(&f, 2).unwrap(), vec!["10.0.0.1:4000", "node2:4001"]);
        let e = read_hostfile(&f, 3).unwrap_err();
        assert!(e.contains("names 2 process addresses, and --processes says 3"), "{e}");
        for (text, why, line) in [
            ("a:1\nb\n", "has no :port", 2),
            ("a:0\n", "has no port number", 1),
            ("a:1 b:2\n", "is not one host:port", 1),
            ("a:1\na:1\n", "same address", 2),
            (":5\n", "has no host", 1),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = read_hostfile(&f, 2).unwrap_err();
            assert!(e.contains(why) && e.contains(&format!("hosts:{line}:")), "{text:?}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_worker_owns_a_share_of_the_states() {
        let mut count = [0u32; 3];
        for i in 0..30_000u64 {
            count[owner(i.wrapping_mul(0x9e37_79b9_7f4a_7c15), 3)] += 1;
        }
        assert!(count.iter().all(|&c| (9_000..11_000).contains(&c)), "{count:?}");
    }
}
