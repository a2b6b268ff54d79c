//! Running a litmus test: every thread a task of the stateful platform interpreting its code
//! (the same platform, and the same memory model, that the protocols run on under
//! `memory = "lkmm"`), every reachable final state found by an exhaustive depth-first search
//! over the platform's scheduling and memory choices with its states stored, and the
//! condition judged on them: `Always`, `Sometimes` or `Never`, as herd7 reports it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release, SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mmmodel::ghost::NoGhost;
use mmmodel::platform::stateful::{self, Memory as RtMemory, SchedPoint, StackPool, TaskId};
use mmmodel::platform::{Atomic, AtomicInt, KernelFence, Platform, RawSpinLock, Stateful};

use super::ast::*;

type P = Stateful<NoGhost<()>>;
type Cell = <P as Platform>::AtomicU64;
type Lock = <P as Platform>::SpinLock;

/// The memory model a test runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Sequential consistency (the stateful engine's default for the protocols).
    Sc,
    /// The Linux-kernel memory model, operationally (no load buffering).
    Lkmm,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Sc => "sc",
            Model::Lkmm => "lkmm",
        }
    }
}

/// One final state: every thread's registers, then every location's value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Final {
    pub regs: Vec<BTreeMap<String, i64>>,
    pub locs: BTreeMap<String, i64>,
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The condition's proposition over the final states.
    pub result: Expect,
    pub finals: BTreeSet<Final>,
    pub states: u64,
    pub executions: u64,
    pub seconds: f64,
    /// A schedule that ends in a final state satisfying the proposition (for `Sometimes` and
    /// `Always`), and the execution it runs, one row per step.
    pub witness: Option<Witness>,
}

/// One execution, as rows: the thread, and what it did.
#[derive(Debug, Clone)]
pub struct Witness {
    pub schedule: Vec<u8>,
    pub rows: Vec<(usize, String)>,
    pub last: Final,
}

/// What the threads of one execution left behind (outside the explored memory).
#[derive(Default)]
struct Results {
    regs: Vec<Option<BTreeMap<String, i64>>>,
    locs: BTreeMap<String, i64>,
    /// With `log`: the rows of the execution.
    log: Option<Vec<(usize, String)>>,
}

/// The shared objects of a test, by name.
struct Mem {
    cells: HashMap<String, Cell>,
    locks: HashMap<String, Lock>,
}

fn ord(o: Order) -> Ordering {
    match o {
        Order::Full => SeqCst,
        Order::Relaxed => Relaxed,
        Order::Acquire => Acquire,
        Order::Release => Release,
    }
}

/// One thread's interpreter.
struct Interp<'a> {
    thread: usize,
    mem: &'a Mem,
    regs: BTreeMap<String, i64>,
    out: &'a Mutex<Results>,
}

impl Interp<'_> {
    fn log(&self, row: impl FnOnce() -> String) {
        let mut r = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(log) = &mut r.log {
            log.push((self.thread, row()));
        }
    }

    fn cell(&self, a: &Arg) -> &Cell {
        let name = a.loc().expect("the parser checked the location argument");
        &self.mem.cells[name]
    }

    fn lock(&self, a: &Arg) -> &Lock {
        let name = a.loc().expect("the parser checked the lock argument");
        &self.mem.locks[name]
    }

    fn val(&mut self, a: &Arg) -> i64 {
        self.eval(a.val().expect("the parser checked the value argument"))
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Decl { reg, init, .. } => {
                    let v = init.as_ref().map_or(0, |e| self.eval(e));
                    self.regs.insert(reg.clone(), v);
                }
                Stmt::Assign { reg, expr, .. } => {
                    let v = self.eval(expr);
                    self.regs.insert(reg.clone(), v);
                }
                Stmt::Do { expr, .. } => {
                    self.eval(expr);
                }
                Stmt::If { cond, then, els, .. } => {
                    if self.eval(cond) != 0 {
                        self.block(then)
                    } else {
                        self.block(els)
                    }
                }
            }
        }
    }

    fn eval(&mut self, e: &Expr) -> i64 {
        match e {
            Expr::Int(v) => *v,
            Expr::Reg(r) => self.regs.get(r).copied().unwrap_or(0),
            Expr::Unary(op, a) => {
                let a = self.eval(a);
                match op {
                    UnOp::Not => (a == 0) as i64,
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::BitNot => !a,
                }
            }
            Expr::Binary(op, a, b) => {
                // `&&` and `||` short-circuit: a call on their right runs only when needed.
                let a = self.eval(a);
                match op {
                    BinOp::And if a == 0 => return 0,
                    BinOp::Or if a != 0 => return 1,
                    _ => {}
                }
                let b = self.eval(b);
                match op {
                    BinOp::Add => a.wrapping_add(b),
                    BinOp::Sub => a.wrapping_sub(b),
                    BinOp::BitAnd => a & b,
                    BinOp::BitOr => a | b,
                    BinOp::BitXor => a ^ b,
                    BinOp::And | BinOp::Or => (b != 0) as i64,
                    BinOp::Eq => (a == b) as i64,
                    BinOp::Ne => (a != b) as i64,
                    BinOp::Lt => (a < b) as i64,
                    BinOp::Le => (a <= b) as i64,
                    BinOp::Gt => (a > b) as i64,
                    BinOp::Ge => (a >= b) as i64,
                }
            }
            Expr::Call { prim, args, .. } => self.call(*prim, args),
        }
    }

    fn call(&mut self, prim: Prim, args: &[Arg]) -> i64 {
        let name = |a: &Arg| a.loc().unwrap_or("?").to_string();
        match prim {
            Prim::ReadOnce | Prim::AtomicRead | Prim::LoadAcquire | Prim::AtomicReadAcquire => {
                let o = if matches!(prim, Prim::LoadAcquire | Prim::AtomicReadAcquire) { Acquire } else { Relaxed };
                let v = self.cell(&args[0]).load(o) as i64;
                let stale = stateful::last_read_stale();
                self.log(|| {
                    format!(
                        "{} {} = {v}{}",
                        if o == Acquire { "load-acquire" } else { "read" },
                        name(&args[0]),
                        if stale { " (a later store is already in memory)" } else { "" }
                    )
                });
                v
            }
            Prim::WriteOnce | Prim::AtomicSet | Prim::StoreRelease | Prim::AtomicSetRelease => {
                let o = if matches!(prim, Prim::StoreRelease | Prim::AtomicSetRelease) { Release } else { Relaxed };
                let v = self.val(&args[1]);
                self.cell(&args[0]).store(v as u64, o);
                self.log(|| {
                    format!("{} {} = {v}", if o == Release { "store-release" } else { "write" }, name(&args[0]))
                });
                0
            }
            Prim::Mb
            | Prim::Rmb
            | Prim::Wmb
            | Prim::MbBeforeAtomic
            | Prim::MbAfterAtomic
            | Prim::MbAfterSpinlock
            | Prim::MbAfterUnlockLock => {
                let (f, text) = match prim {
                    Prim::Mb => (KernelFence::Mb, "smp_mb()"),
                    Prim::Rmb => (KernelFence::Rmb, "smp_rmb()"),
                    Prim::Wmb => (KernelFence::Wmb, "smp_wmb()"),
                    Prim::MbBeforeAtomic => (KernelFence::BeforeAtomic, "smp_mb__before_atomic()"),
                    Prim::MbAfterAtomic => (KernelFence::AfterAtomic, "smp_mb__after_atomic()"),
                    Prim::MbAfterSpinlock => (KernelFence::AfterSpinlock, "smp_mb__after_spinlock()"),
                    _ => (KernelFence::AfterUnlockLock, "smp_mb__after_unlock_lock()"),
                };
                P::kernel_fence(f);
                self.log(|| text.to_string());
                0
            }
            Prim::Xchg(o) | Prim::AtomicXchg(o) => {
                let v = self.val(&args[1]);
                let old = self.cell(&args[0]).swap(v as u64, ord(o)) as i64;
                self.log(|| format!("xchg {} {old} -> {v}", name(&args[0])));
                old
            }
            Prim::Cmpxchg(o) | Prim::AtomicCmpxchg(o) => {
                let (old, new) = (self.val(&args[1]), self.val(&args[2]));
                let found = match self.cell(&args[0]).compare_exchange(old as u64, new as u64, ord(o), Relaxed) {
                    Ok(x) | Err(x) => x as i64,
                };
                self.log(|| {
                    if found == old {
                        format!("cmpxchg {} {found} -> {new}", name(&args[0]))
                    } else {
                        format!("cmpxchg {} fails: {found} != {old}", name(&args[0]))
                    }
                });
                found
            }
            Prim::AtomicRmw { op, ret, order } => {
                let v = match op {
                    RmwOp::Inc | RmwOp::Dec => 1,
                    _ => self.val(&args[0]),
                };
                let c = self.cell(args.last().expect("the parser checked the location"));
                let o = if ret == Ret::Void {
                    P::kernel_fence(KernelFence::VoidRmw);
                    Relaxed
                } else {
                    ord(order)
                };
                let old = match op {
                    RmwOp::Add | RmwOp::Inc => c.fetch_add(v as u64, o),
                    RmwOp::Sub | RmwOp::Dec => c.fetch_sub(v as u64, o),
                    RmwOp::And => c.fetch_and(v as u64, o),
                    RmwOp::AndNot => c.fetch_and(!(v as u64), o),
                    RmwOp::Or => c.fetch_or(v as u64, o),
                    RmwOp::Xor => c.fetch_xor(v as u64, o),
                } as i64;
                let new = match op {
                    RmwOp::Add | RmwOp::Inc => old.wrapping_add(v),
                    RmwOp::Sub | RmwOp::Dec => old.wrapping_sub(v),
                    RmwOp::And => old & v,
                    RmwOp::AndNot => old & !v,
                    RmwOp::Or => old | v,
                    RmwOp::Xor => old ^ v,
                };
                self.log(|| format!("atomic {:?} {} {old} -> {new}", op, name(args.last().unwrap_or(&args[0]))));
                match ret {
                    Ret::Void => 0,
                    Ret::New => new,
                    Ret::Old => old,
                }
            }
            Prim::SpinLock => {
                self.lock(&args[0]).lock();
                self.log(|| format!("spin_lock({})", name(&args[0])));
                0
            }
            Prim::SpinUnlock => {
                self.lock(&args[0]).unlock();
                self.log(|| format!("spin_unlock({})", name(&args[0])));
                0
            }
            Prim::SpinTrylock => {
                let ok = self.lock(&args[0]).try_lock();
                self.log(|| format!("spin_trylock({}) {}", name(&args[0]), if ok { "ok" } else { "fails" }));
                ok as i64
            }
        }
    }
}

/// The execution body (task 0): make the locations and locks, run every thread as a task of
/// its own, wait for them, read the final values.
fn body(t: Arc<Litmus>, out: Arc<Mutex<Results>>) -> impl FnOnce() + 'static {
    move || {
        let locks: BTreeSet<&str> = t
            .threads
            .iter()
            .flat_map(|th| th.params.iter().filter(|p| p.kind == ParamKind::SpinLock).map(|p| p.name.as_str()))
            .collect();
        let init =
            |name: &str| t.init.iter().find(|i| i.target == InitTarget::Loc(name.to_string())).map_or(0, |i| i.value);
        let mem = Arc::new(Mem {
            cells: t
                .locations
                .iter()
                .filter(|l| !locks.contains(l.as_str()))
                .map(|l| (l.clone(), Cell::new(init(l) as u64)))
                .collect(),
            locks: locks.iter().map(|l| (l.to_string(), Lock::new(true))).collect(),
        });
        let handles: Vec<_> = t
            .threads
            .iter()
            .map(|th| {
                let (t, mem, out) = (Arc::clone(&t), Arc::clone(&mem), Arc::clone(&out));
                let i = th.index;
                P::spawn(String::new(), move || {
                    let th = t.threads.iter().find(|x| x.index == i).expect("the thread");
                    let regs = t
                        .init
                        .iter()
                        .filter_map(|x| match &x.target {
                            InitTarget::Reg { thread, reg } if *thread == i => Some((reg.clone(), x.value)),
                            _ => None,
                        })
                        .collect();
                    let mut it = Interp { thread: i, mem: &mem, regs, out: &out };
                    it.block(&th.body);
                    let regs = std::mem::take(&mut it.regs);
                    out.lock().unwrap_or_else(|e| e.into_inner()).regs[i] = Some(regs);
                })
            })
            .collect();
        P::join_all(handles);
        let mut finals = BTreeMap::new();
        for (name, c) in &mem.cells {
            finals.insert(name.clone(), c.load(Relaxed) as i64);
        }
        out.lock().unwrap_or_else(|e| e.into_inner()).locs = finals;
    }
}

/// Whether the final state satisfies the condition's proposition.
pub fn holds(p: &Prop, f: &Final) -> bool {
    match p {
        Prop::True => true,
        Prop::False => false,
        Prop::Not(a) => !holds(a, f),
        Prop::And(a, b) => holds(a, f) && holds(b, f),
        Prop::Or(a, b) => holds(a, f) || holds(b, f),
        Prop::Atom { var, negated, value } => {
            let v = match var {
                CondVar::Reg { thread, reg } => f.regs.get(*thread).and_then(|r| r.get(reg)).copied().unwrap_or(0),
                CondVar::Loc(l) => f.locs.get(l).copied().unwrap_or(0),
            };
            (v == *value) != *negated
        }
    }
}

/// A search frame: the choices left at a state, and the one taken.
struct Frame {
    todo: u32,
    chosen: u8,
}

/// Every final state of `t` under `model`, by a depth-first search over the stateful
/// platform's choices that stores the states it has explored.
pub fn explore(t: &Litmus, model: Model, max_states: u64) -> Result<Outcome, String> {
    let start = Instant::now();
    let t = Arc::new(t.clone());
    let threads = t.threads.iter().map(|th| th.index).max().map_or(0, |m| m + 1);
    let mut pool = StackPool::new();
    pool.set_memory(match model {
        Model::Sc => RtMemory::Sc,
        Model::Lkmm => RtMemory::Lkmm,
    });
    let mut visited: HashSet<u64> = HashSet::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut finals = BTreeSet::new();
    let mut witness_schedule: Option<Vec<u8>> = None;
    let mut executions = 0u64;
    loop {
        let replay: Vec<u8> = frames.iter().map(|f| f.chosen).collect();
        let out = Arc::new(Mutex::new(Results { regs: vec![None; threads], ..Results::default() }));
        let mut step = 0usize;
        let mut schedule: Vec<u8> = Vec::new();
        let mut known = false;
        let mut full = false;
        let mut chooser = |p: &SchedPoint<'_>| -> TaskId {
            let i = step;
            step += 1;
            let enabled = p.enabled();
            let c = if i < replay.len() {
                replay[i]
            } else if known {
                enabled.trailing_zeros() as u8
            } else if !visited.insert(p.fingerprint_keeping_finished()) {
                known = true;
                enabled.trailing_zeros() as u8
            } else if visited.len() as u64 > max_states {
                full = true;
                known = true;
                enabled.trailing_zeros() as u8
            } else {
                let first = enabled.trailing_zeros() as u8;
                frames.push(Frame { todo: enabled & !(1 << first), chosen: first });
                first
            };
            schedule.push(c);
            c as TaskId
        };
        executions += 1;
        let end = stateful::run(&mut pool, body(Arc::clone(&t), Arc::clone(&out)), &mut chooser);
        if full {
            return Err(format!("more than {max_states} states"));
        }
        match end {
            stateful::RunEnd::AllFinished => {}
            stateful::RunEnd::Deadlock { .. } => {
                return Err("the test deadlocks (a lock is never released, or taken twice)".into())
            }
            stateful::RunEnd::Panicked { task, message } => return Err(format!("task {task} panicked: {message}")),
        }
        let r = out.lock().unwrap_or_else(|e| e.into_inner());
        let f = Final { regs: r.regs.iter().map(|x| x.clone().unwrap_or_default()).collect(), locs: r.locs.clone() };
        drop(r);
        if witness_schedule.is_none() && holds(&t.cond.prop, &f) {
            witness_schedule = Some(schedule.clone());
        }
        finals.insert(f);
        // Backtrack.
        while let Some(top) = frames.last_mut() {
            if top.todo != 0 {
                let c = top.todo.trailing_zeros();
                top.todo &= !(1 << c);
                top.chosen = c as u8;
                break;
            }
            frames.pop();
        }
        if frames.is_empty() {
            break;
        }
    }
    let sat = finals.iter().filter(|f| holds(&t.cond.prop, f)).count();
    let result = match sat {
        0 => Expect::Never,
        n if n == finals.len() => Expect::Always,
        _ => Expect::Sometimes,
    };
    let witness = witness_schedule.map(|s| record(&t, model, threads, s));
    Ok(Outcome {
        result,
        finals,
        states: visited.len() as u64,
        executions,
        seconds: start.elapsed().as_secs_f64(),
        witness,
    })
}

/// Replay `schedule` with the log on.
fn record(t: &Arc<Litmus>, model: Model, threads: usize, schedule: Vec<u8>) -> Witness {
    let mut pool = StackPool::new();
    pool.set_memory(match model {
        Model::Sc => RtMemory::Sc,
        Model::Lkmm => RtMemory::Lkmm,
    });
    let out = Arc::new(Mutex::new(Results { regs: vec![None; threads], log: Some(Vec::new()), ..Results::default() }));
    let mut i = 0usize;
    let mut chooser = |p: &SchedPoint<'_>| -> TaskId {
        let c = schedule.get(i).copied().unwrap_or(p.enabled().trailing_zeros() as u8);
        i += 1;
        c as TaskId
    };
    stateful::run(&mut pool, body(Arc::clone(t), Arc::clone(&out)), &mut chooser);
    let r = out.lock().unwrap_or_else(|e| e.into_inner());
    let last = Final { regs: r.regs.iter().map(|x| x.clone().unwrap_or_default()).collect(), locs: r.locs.clone() };
    Witness { schedule, rows: r.log.clone().unwrap_or_default(), last }
}

// ---------------------------------------------------------------- load buffering

/// Whether the proposition can only hold in an execution whose reads-from and program order
/// form a cycle (load buffering, which this model never runs): a conjunction of register
/// atoms, each naming a value that one store of another thread writes, and those stores, the
/// loads into the registers and program order closing a cycle.
pub fn needs_load_buffering(t: &Litmus) -> bool {
    // Every access in program order: (thread, position, location, load into reg | store of value).
    #[derive(Clone)]
    enum Acc {
        Load { reg: String },
        Store { value: Option<i64> },
    }
    let mut accs: Vec<(usize, usize, String, Acc)> = Vec::new();
    fn walk(th: usize, body: &[Stmt], out: &mut Vec<(usize, usize, String, Acc)>) {
        fn expr(th: usize, e: &Expr, into: Option<&str>, out: &mut Vec<(usize, usize, String, Acc)>) {
            match e {
                Expr::Call { prim, args, .. } => {
                    let loc = args.iter().find_map(|a| a.loc()).unwrap_or("").to_string();
                    for a in args {
                        if let Some(v) = a.val() {
                            expr(th, v, None, out);
                        }
                    }
                    let n = out.len();
                    if prim.returns_value() {
                        if let Some(r) = into {
                            out.push((th, n, loc.clone(), Acc::Load { reg: r.to_string() }));
                        }
                    }
                    let stored = match prim {
                        Prim::WriteOnce | Prim::StoreRelease | Prim::AtomicSet | Prim::AtomicSetRelease => {
                            Some(args.get(1).and_then(|a| match a.val() {
                                Some(Expr::Int(v)) => Some(*v),
                                _ => None,
                            }))
                        }
                        Prim::Xchg(_) | Prim::AtomicXchg(_) | Prim::Cmpxchg(_) | Prim::AtomicCmpxchg(_) => {
                            Some(args.last().and_then(|a| match a.val() {
                                Some(Expr::Int(v)) => Some(*v),
                                _ => None,
                            }))
                        }
                        _ => None,
                    };
                    if let Some(value) = stored {
                        let n = out.len();
                        out.push((th, n, loc, Acc::Store { value }));
                    }
                }
                Expr::Unary(_, a) => expr(th, a, None, out),
                Expr::Binary(_, a, b) => {
                    expr(th, a, None, out);
                    expr(th, b, None, out);
                }
                _ => {}
            }
        }
        for s in body {
            match s {
                Stmt::Decl { reg, init: Some(e), .. } | Stmt::Assign { reg, expr: e, .. } => {
                    expr(th, e, Some(reg), out)
                }
                Stmt::Do { expr: e, .. } => expr(th, e, None, out),
                Stmt::If { cond, then, els, .. } => {
                    expr(th, cond, None, out);
                    walk(th, then, out);
                    walk(th, els, out);
                }
                Stmt::Decl { .. } => {}
            }
        }
    }
    for th in &t.threads {
        walk(th.index, &th.body, &mut accs);
    }
    // The register atoms the proposition requires (a conjunction at the top).
    fn atoms(p: &Prop, out: &mut Vec<(usize, String, i64)>) -> bool {
        match p {
            Prop::And(a, b) => atoms(a, out) && atoms(b, out),
            Prop::Atom { var: CondVar::Reg { thread, reg }, negated: false, value } => {
                out.push((*thread, reg.clone(), *value));
                true
            }
            Prop::Atom { .. } | Prop::True => true,
            _ => false,
        }
    }
    let mut need = Vec::new();
    if !atoms(&t.cond.prop, &mut need) {
        return false;
    }
    // Edges: program order within a thread, and store -> load for each required read of a
    // value that exactly one store (of another thread) writes.
    let n = accs.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        if let Some(j) = (i + 1..n).find(|&j| accs[j].0 == accs[i].0) {
            edges[i].push(j);
        }
    }
    for (thread, reg, value) in &need {
        let Some(l) = accs.iter().position(|a| a.0 == *thread && matches!(&a.3, Acc::Load { reg: r } if r == reg))
        else {
            continue;
        };
        let writers: Vec<usize> = (0..n)
            .filter(|&s| accs[s].2 == accs[l].2 && matches!(accs[s].3, Acc::Store { value: Some(v) } if v == *value))
            .collect();
        if let [s] = writers[..] {
            if accs[s].0 != *thread {
                edges[s].push(l);
            }
        }
    }
    // A cycle?
    let mut state = vec![0u8; n];
    fn dfs(v: usize, edges: &[Vec<usize>], state: &mut [u8]) -> bool {
        state[v] = 1;
        for &w in &edges[v] {
            if state[w] == 1 || (state[w] == 0 && dfs(w, edges, state)) {
                return true;
            }
        }
        state[v] = 2;
        false
    }
    (0..n).any(|v| state[v] == 0 && dfs(v, &edges, &mut state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "exploration printout"]
    fn print_ours() {
        let dir = std::env::var("LITMUS_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/litmus"));
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
            .collect();
        files.sort();
        for f in files {
            let t = match super::super::parse_file(&f) {
                Ok(t) => t,
                Err(e) => {
                    println!("{e}");
                    continue;
                }
            };
            let o = explore(&t, Model::Lkmm, 1_000_000);
            match o {
                Ok(o) => println!(
                    "{:50} {:10} want {:10} {} states {} lb {}",
                    t.name,
                    o.result.to_string(),
                    t.result.map(|r| r.to_string()).unwrap_or_default(),
                    if Some(o.result) == t.result { "ok" } else { "DIFF" },
                    o.states,
                    needs_load_buffering(&t)
                ),
                Err(e) => println!("{:50} error {e}", t.name),
            }
        }
    }
}
