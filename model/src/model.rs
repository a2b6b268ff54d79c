//! The seam between a protocol and the checker: [`Model`], everything the checker needs to
//! know about one protocol, as associated types and functions.
//!
//! A protocol lives in one folder of this crate (`reclaim/`, `compaction/`) and implements
//! [`Model`] there: its configuration and final state, its roles (with the keys a scenario
//! file gives them and their names in traces), its variants, its events and the coverage
//! events derived from them, its invariant ids, its seeded mutations (with where each one
//! applies and which invariant must catch it), its runtime counters, and how to boot its
//! kernel state and run one task of it on any [`Platform`]. The checker (`checks/`) is
//! generic over this trait; its registry is the one place that lists the models.
//!
//! The model crate has no file format of its own: a scenario file's tables reach a model as
//! [`Fields`] (key, typed value), and a model's errors name the key ([`FieldError`]); the
//! checker turns that into `FILE:LINE: table.key: message`.

use core::fmt::{self, Debug, Display};
use core::hash::Hash;
use core::ops::RangeInclusive;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::event::ProtoEvent;
use crate::event::{Event, KernelEvent, LockName};
use crate::ghost::{Ghost, Pid};
use crate::kernel::sched::{run_tasks, Start};
use crate::platform::Platform;

/// A platform whose ghost records events of protocol `E` (the bound every protocol function
/// that emits an event carries).
pub trait PlatformFor<E>: Platform<Ghost: Ghost<Proto = E>> {}
impl<E, P: Platform<Ghost: Ghost<Proto = E>>> PlatformFor<E> for P {}

/// A value with a stable name: variants, role kinds, coverage events, invariant ids,
/// mutations. Names are what scenario files, reports and JSON use.
pub trait Named: Copy + Eq + Ord + Hash + Debug + Send + Sync + 'static {
    /// Every value, in documentation order.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|x| x.name() == s)
    }
    fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|x| x.name()).collect()
    }
}

/// Defines a [`Named`] enum: `named! { pub enum Mode { Async = "async", Sync = "sync" } }`.
#[macro_export]
macro_rules! named {
    ($(#[$m:meta])* $vis:vis enum $E:ident { $( $(#[$vm:meta])* $V:ident = $name:literal ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $E { $( $(#[$vm])* $V, )* }
        impl $crate::model::Named for $E {
            const ALL: &'static [Self] = &[ $( $E::$V, )* ];
            fn name(self) -> &'static str { match self { $( $E::$V => $name, )* } }
        }
        impl core::fmt::Display for $E {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str($crate::model::Named::name(*self))
            }
        }
    };
}

/// A seeded bug of model `M`: a small named change that breaks one invariant, compiled out
/// of the runtime build. The model's `mutated()` check tells the ghost
/// ([`Ghost::mutation_reached`]) each time the mutated code runs, so that a kill can be
/// shown to come from the mutation.
pub trait Seeded<M: Model>: Named {
    /// The invariant whose check must catch it.
    fn targets(self) -> M::Invariant;
    /// One line saying what the mutant changes.
    fn description(self) -> &'static str;
    /// Where the mutated code can run: `Err` (saying why not) for a configuration in which it
    /// never runs (a variant that lacks the code, no role that reaches it).
    fn applies(self, cfg: &M::Config) -> Result<(), String>;
}

/// A variant with its one-line description.
pub trait Variant: Named {
    fn description(self) -> &'static str;
}

/// A role kind as scenario files name it, with the keys a `[[thread]]` of it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleKind {
    pub name: &'static str,
    pub keys: &'static [&'static str],
}

/// The interchangeable ids of one configuration, as a model declares them (Murphi's
/// scalarsets, TLC's `SYMMETRY`): sets of nodes such that swapping any two of a set, together
/// with the one task bound to each, maps every state to a state with the same future. See
/// docs/model.md, "Symmetry", for what a model must make sure of before it declares one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Symmetry {
    /// Nodes of the configuration (`0..nodes`).
    pub nodes: usize,
    /// Tasks (pids `0..tasks`).
    pub tasks: usize,
    /// Sets of interchangeable nodes, each of two or more.
    pub orbits: Vec<Vec<u8>>,
    /// For each node of an orbit, the pid of the task bound to it.
    pub pid_of_node: Vec<Option<u8>>,
}

/// One element of a symmetry group: where it sends each node and each pid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Perm {
    pub node: Vec<u8>,
    pub pid: Vec<u8>,
}

impl Perm {
    /// The image of node `n` (`NUMA_NO_NODE` and nodes past the map are their own).
    #[inline]
    pub fn node(&self, n: i32) -> i32 {
        usize::try_from(n).ok().and_then(|i| self.node.get(i)).map_or(n, |&m| m as i32)
    }
    /// The image of pid `p`.
    #[inline]
    pub fn pid(&self, p: usize) -> usize {
        self.pid.get(p).map_or(p, |&q| q as usize)
    }
    /// The image of a mask of pids.
    pub fn pids(&self, mask: u32) -> u32 {
        let (mut m, mut out) = (mask, 0u32);
        while m != 0 {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            out |= 1 << self.pid(p);
        }
        out
    }
    /// The image of a mask of nodes (bit `n + 1` for node `n`, bit 0 for `NUMA_NO_NODE`, as
    /// the monitors keep them) given as `bit(n)`.
    pub fn nodes(&self, mask: u32, bit: impl Fn(i32) -> u32) -> u32 {
        let (mut rest, mut out) = (mask, 0);
        for n in -1..31 {
            if rest == 0 {
                break;
            }
            let b = bit(n);
            if rest & b != 0 {
                rest &= !b;
                out |= bit(self.node(n));
            }
        }
        out
    }
}

/// A protocol.
pub trait Model: Sized + Send + Sync + 'static {
    /// The model's name in scenario files (`model = "..."`).
    const NAME: &'static str;
    /// Role kinds, in documentation order.
    const ROLES: &'static [RoleKind];
    /// Keys the model takes in `[params]` (the checker adds its own: `step_bound`).
    const PARAMS: &'static [&'static str];

    type Variant: Variant;
    type Event: ProtoEvent;
    type Coverage: Named;
    type Invariant: Named;
    type Mutation: Seeded<Self>;
    type Role: Clone + Debug + PartialEq + Eq + Hash + Send + Sync + 'static;
    type Config: Clone + Debug + PartialEq + Eq + Hash + Send + Sync + 'static;
    /// What the checker reads after every task has finished.
    type Final: Clone + Debug + PartialEq + Eq + Send + Sync + 'static;
    /// The kernel state of one run on platform `P`.
    type Kernel<P: PlatformFor<Self::Event>>: Send + Sync + 'static;

    /// Coverage events that mean "the contended path was explored": a pass scenario must
    /// reach one of them.
    const CONTENDED_PATH: &'static [Self::Coverage];

    /// Whether the model's code declares its tasks' live locals anywhere
    /// ([`crate::ghost::Ghost::live_locals`]): the stateful search reports the reduction
    /// `live-locals` only for a model that does.
    const LIVE_LOCALS: bool = false;

    fn variant(cfg: &Self::Config) -> Self::Variant;
    fn with_variant(cfg: &Self::Config, v: Self::Variant) -> Self::Config;
    fn mutation(cfg: &Self::Config) -> Option<Self::Mutation>;
    fn without_mutation(cfg: &Self::Config) -> Self::Config;
    fn roles(cfg: &Self::Config) -> &[Self::Role];
    /// The role's kind (one of [`Model::ROLES`]).
    fn role_kind(role: &Self::Role) -> &'static str;
    /// The thread's name in traces (`kswapd0`, `compactor(async)`).
    fn comm(role: &Self::Role) -> String;

    /// One `[[thread]]` of kind `kind` (its keys already checked against [`RoleKind::keys`]);
    /// `kinds` are the kinds of every thread of the file, by index.
    fn parse_role(kind: &str, f: &mut Fields, kinds: &[&str]) -> Result<Self::Role, FieldError>;
    /// The configuration from the parsed roles and `[params]`.
    fn configure(
        variant: Self::Variant,
        mutation: Option<Self::Mutation>,
        roles: Vec<Self::Role>,
        params: &mut Fields,
    ) -> Result<Self::Config, FieldError>;
    /// Whether the kernel (scaled down) could have this configuration.
    fn validate(cfg: &Self::Config) -> Result<(), String>;
    /// The configuration's interchangeable ids, or why there are none (see [`Symmetry`]). The
    /// default declares none.
    fn symmetry(_cfg: &Self::Config) -> Result<Symmetry, &'static str> {
        Err("the model declares no symmetric ids")
    }
    /// Whether the stateful engine's partial-order reduction may apply to this configuration,
    /// or why not. It may only if every dependency between two tasks' steps goes through the
    /// platform (an object, a lock, a park token, a join) or the ghost (events, sleep and exit
    /// bookkeeping), so that the engine sees it; model state that one task writes outside the
    /// platform and another reads (or that a loop summary reads) would hide a dependency.
    /// The default declares nothing, and the reduction is not applied.
    fn partial_order(_cfg: &Self::Config) -> Result<(), &'static str> {
        Err("the model does not declare that every dependency between tasks goes through the platform")
    }

    /// The coverage event `ev` counts as, if any.
    fn coverage(ev: &Event<Self::Event>) -> Option<Self::Coverage>;

    /// Build the kernel state of one run.
    fn boot<P: PlatformFor<Self::Event>>(cfg: &Self::Config, ghost: Arc<P::Ghost>) -> Self::Kernel<P>;
    /// Run task `pid` to completion on the calling thread (`do_exit()` included).
    fn run_task<P: PlatformFor<Self::Event>>(k: &Self::Kernel<P>, pid: Pid);
    /// Read the final state (every task has finished).
    fn final_state<P: PlatformFor<Self::Event>>(k: &Self::Kernel<P>) -> Self::Final;

    // ---- the runtime mode (real threads) ----

    /// `cfg` with every thread run `k` times over, each doing `work` times its work, and
    /// `hold_spins` spin-loop hints inside each hold of a lock-holding role.
    fn scale(cfg: &Self::Config, k: usize, work: u32, hold_spins: u32) -> Result<Self::Config, String>;
    /// `cfg` with real time (a jiffy of `jiffy`) instead of an explorer-chosen timer.
    fn real_time(cfg: &Self::Config, jiffy: Duration) -> Self::Config;
    /// Counters a run always reports (even when zero), in print order.
    const COUNTERS: &'static [&'static str];
    /// Ratios a comparison shows, as (numerator, denominator) counters.
    const RATIOS: &'static [(&'static str, &'static str)];
    /// The model's own counters of one iteration, from its timestamped trace (the checker
    /// adds coverage counts, elapsed and CPU time, and lock hold/wait times).
    fn counters(cfg: &Self::Config, events: &[(Pid, Event<Self::Event>)], times: &[Instant], out: &mut Counters);
}

/// One iteration's counters, by name.
pub type Counters = BTreeMap<String, f64>;

/// Add `v` to counter `k`.
pub fn count(c: &mut Counters, k: &str, v: f64) {
    *c.entry(k.to_string()).or_insert(0.0) += v;
}

/// What a run on a platform gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran<F> {
    pub fin: F,
    /// Real threads only: the CPU time the tasks used, summed over threads.
    pub cpu_ns: Option<u64>,
}

/// Run one execution of `cfg` on platform `P`: boot the kernel state, run every role to
/// completion, read the final state. The same function under loom, shuttle, the stateful
/// explorer and real threads (where `start` may delay tasks).
pub fn run<M: Model, P: PlatformFor<M::Event>>(cfg: &M::Config, ghost: Arc<P::Ghost>, start: &Start) -> Ran<M::Final> {
    let k = Arc::new(M::boot::<P>(cfg, ghost));
    let roles = M::roles(cfg);
    let kk = Arc::clone(&k);
    let cpu_ns =
        run_tasks::<P, _>(roles.len(), &|pid| M::comm(&roles[pid]), start, Arc::new(move |pid| M::run_task(&kk, pid)));
    Ran { fin: M::final_state(&k), cpu_ns }
}

/// Lock hold and wait times (`lock-hold-us`, `lock-wait-us`) from a timestamped trace; the
/// kernel events are the same for every model. `waits` says which protocol events start a
/// wait for a lock besides a failed trylock.
pub fn lock_times<E: ProtoEvent>(
    events: &[(Pid, Event<E>)],
    times: &[Instant],
    tasks: usize,
    waits: impl Fn(&E) -> bool,
    out: &mut Counters,
) {
    let us = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e6;
    let mut waiting_since: Vec<Option<Instant>> = vec![None; tasks];
    let mut held_since: Vec<BTreeMap<LockName, Instant>> = vec![BTreeMap::new(); tasks];
    for (i, (p, e)) in events.iter().enumerate() {
        let Some(&t) = times.get(i) else { break };
        match e {
            Event::Kernel(KernelEvent::TrylockFailed { .. }) => {
                waiting_since[*p].get_or_insert(t);
            }
            Event::Proto(pe) if waits(pe) => {
                waiting_since[*p].get_or_insert(t);
            }
            Event::Kernel(KernelEvent::LockAcquired { lock, .. }) => {
                if let Some(a) = waiting_since[*p].take() {
                    count(out, "lock-wait-us", us(a, t));
                }
                held_since[*p].insert(*lock, t);
            }
            Event::Kernel(KernelEvent::LockReleased { lock }) => {
                if let Some(a) = held_since[*p].remove(lock) {
                    count(out, "lock-hold-us", us(a, t));
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- scenario fields

/// A value a scenario file gives a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Float(f64),
    /// Any other type (an array, a table, a date), by its name.
    Other(&'static str),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Bool(_) => "a boolean",
            Value::Str(_) => "a string",
            Value::Float(_) => "a float",
            Value::Other(t) => t,
        }
    }
}

/// A model's error in one field of a scenario file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field with its table: `thread[2].node`, `params.pageblocks`, or a table (`thread`).
    pub field: String,
    pub message: String,
}

impl Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The keys of one table of a scenario file (one `[[thread]]`, or `[params]`), as a model
/// reads them. Every read marks its key used.
#[derive(Debug, Clone)]
pub struct Fields {
    table: String,
    entries: Vec<(String, Value)>,
    used: Vec<bool>,
}

impl Fields {
    /// `table` is how errors name it: `thread[2]`, `params`.
    pub fn new(table: impl Into<String>, entries: Vec<(String, Value)>) -> Self {
        let used = vec![false; entries.len()];
        Fields { table: table.into(), entries, used }
    }
    pub fn table(&self) -> &str {
        &self.table
    }
    /// `table.key`.
    pub fn field(&self, key: &str) -> String {
        format!("{}.{key}", self.table)
    }
    pub fn error(&self, key: &str, message: impl Into<String>) -> FieldError {
        FieldError { field: self.field(key), message: message.into() }
    }
    /// An error about the table as a whole.
    pub fn table_error(&self, message: impl Into<String>) -> FieldError {
        FieldError { field: self.table.clone(), message: message.into() }
    }
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }
    /// Keys given, in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }
    fn take(&mut self, key: &str) -> Option<Value> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        self.used[i] = true;
        Some(self.entries[i].1.clone())
    }
    fn type_error(&self, key: &str, want: &str, got: &Value) -> FieldError {
        self.error(key, format!("expected {want}, found {}", got.type_name()))
    }

    /// An integer in `range`, if given.
    pub fn int<T: TryFrom<i64>>(&mut self, key: &str, range: RangeInclusive<i64>) -> Result<Option<T>, FieldError> {
        let Some(v) = self.take(key) else { return Ok(None) };
        let Value::Int(x) = v else { return Err(self.type_error(key, "an integer", &v)) };
        if !range.contains(&x) {
            return Err(self.error(key, format!("{x} is out of range {}..={}", range.start(), range.end())));
        }
        T::try_from(x).map(Some).map_err(|_| self.error(key, format!("{x} is out of range")))
    }
    /// An integer in `range`, `default` if not given.
    pub fn int_or<T: TryFrom<i64>>(
        &mut self,
        key: &str,
        range: RangeInclusive<i64>,
        default: T,
    ) -> Result<T, FieldError> {
        Ok(self.int(key, range)?.unwrap_or(default))
    }
    pub fn bool_or(&mut self, key: &str, default: bool) -> Result<bool, FieldError> {
        match self.take(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(v) => Err(self.type_error(key, "a boolean", &v)),
        }
    }
    /// A string, if given.
    pub fn string(&mut self, key: &str) -> Result<Option<String>, FieldError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s)),
            Some(v) => Err(self.type_error(key, "a string", &v)),
        }
    }
    /// One of `N`'s names (or one of `aliases`, spellings kept for old files), if given.
    pub fn named<N: Named>(&mut self, key: &str, aliases: &[(&str, N)]) -> Result<Option<N>, FieldError> {
        let Some(s) = self.string(key)? else { return Ok(None) };
        if let Some(n) = N::from_name(&s).or_else(|| aliases.iter().find(|(a, _)| *a == s).map(|(_, n)| *n)) {
            return Ok(Some(n));
        }
        Err(self.error(key, format!("unknown value \"{s}\"; expected one of: {}", N::names().join(", "))))
    }
    /// Keys given but never read.
    pub fn unread(&self) -> Vec<&str> {
        self.entries.iter().zip(&self.used).filter(|(_, u)| !**u).map(|((k, _), _)| k.as_str()).collect()
    }
}
