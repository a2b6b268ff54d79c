//! The visibility condition of persistent sets (docs/model.md, "Persistent sets"): a task's
//! start is taken alone only if it emits no event. No start of a shipped model emits one, so
//! the shipped scenarios cannot show that the condition is needed; this test model can.
//!
//! The model ("announce", defined here and not shipped): three tasks each announce themselves
//! (an event of their start, before their first operation), then read a shared flag and end.
//! The invariant `zero-first` says task 0 announces before task 1, which the schedule that
//! starts task 1 first violates. (Task 2 runs on the body's own thread, as the last task of
//! every model does, and announces before the others start.) The search with persistent sets
//! must find that schedule. With the seeded defect `ReductionDefect::PersistentIgnoresVisibility`
//! (a start that emits events counts as local all the same), both starts are local, the lower
//! one is taken alone, task 0 always announces first, and the violation is missed.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use core::sync::atomic::Ordering::Relaxed;

use mmcheck::engine::{Engine, Explore, Memory, Options, Reduce, ReductionDefect};
use mmcheck::monitor::{self, online, Checked, Exec, Invariant as Inv, Violation};
use mmcheck::registry::{Entry, Registry};
use mmcheck::scenario;
use mmmodel::event::Event as Ev;
use mmmodel::ghost::{Pid, MAX_TASKS};
use mmmodel::kernel::sched::{Sched, TimerModel};
use mmmodel::model::{Counters, FieldError, Fields, Model, PlatformFor, ProtoEvent, RoleKind, Seeded};
use mmmodel::platform::{Atomic, Platform};

mmmodel::named! {
    pub enum Variant {
        Plain = "plain",
    }
}

impl mmmodel::model::Variant for Variant {
    fn description(self) -> &'static str {
        "each task announces itself, then reads a flag"
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Announced,
}

impl ProtoEvent for Event {}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("announced")
    }
}

mmmodel::named! {
    pub enum Coverage {
        Announced = "announced",
    }
}

mmmodel::named! {
    pub enum Invariant {
        ZeroFirst = "zero-first",
        Progress = "progress",
    }
}

mmmodel::named! {
    pub enum Mutation {
        None = "none",
    }
}

impl Seeded<Announce> for Mutation {
    fn targets(self) -> Invariant {
        Invariant::ZeroFirst
    }
    fn description(self) -> &'static str {
        "no mutation"
    }
    fn applies(self, _cfg: &Config) -> Result<(), String> {
        Err("the model has no mutation".into())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub tasks: usize,
}

pub struct Kernel<P: Platform> {
    sched: Sched<P>,
    flag: P::AtomicBool,
}

pub struct Announce;

impl Model for Announce {
    const NAME: &'static str = "announce";
    const ROLES: &'static [RoleKind] = &[RoleKind { name: "announcer", keys: &[] }];
    const PARAMS: &'static [&'static str] = &[];
    const CONTENDED_PATH: &'static [Coverage] = &[Coverage::Announced];
    type Variant = Variant;
    type Event = Event;
    type Coverage = Coverage;
    type Invariant = Invariant;
    type Mutation = Mutation;
    type Role = ();
    type Config = Config;
    type Final = ();
    type Kernel<P: PlatformFor<Event>> = Kernel<P>;

    fn variant(_cfg: &Config) -> Variant {
        Variant::Plain
    }
    fn with_variant(cfg: &Config, _variant: Variant) -> Config {
        cfg.clone()
    }
    fn mutation(_cfg: &Config) -> Option<Mutation> {
        None
    }
    fn without_mutation(cfg: &Config) -> Config {
        cfg.clone()
    }
    fn roles(cfg: &Config) -> &[()] {
        const ROLES: [(); MAX_TASKS] = [(); MAX_TASKS];
        &ROLES[..cfg.tasks]
    }
    fn role_kind(_role: &()) -> &'static str {
        "announcer"
    }
    fn comm(_role: &()) -> String {
        "announcer".into()
    }
    fn parse_role(_kind: &str, _f: &mut Fields, _kinds: &[&str]) -> Result<(), FieldError> {
        Ok(())
    }
    fn configure(_v: Variant, _m: Option<Mutation>, roles: Vec<()>, _p: &mut Fields) -> Result<Config, FieldError> {
        let cfg = Config { tasks: roles.len() };
        Self::validate(&cfg).map_err(|message| FieldError { field: "thread".into(), message })?;
        Ok(cfg)
    }
    fn validate(cfg: &Config) -> Result<(), String> {
        if cfg.tasks == 0 || cfg.tasks > MAX_TASKS {
            return Err(format!("1..={MAX_TASKS} threads"));
        }
        Ok(())
    }
    /// Every dependency between two tasks goes through the platform (the flag) or the ghost
    /// (the events): the partial-order reduction and persistent sets may apply.
    fn partial_order(_cfg: &Config) -> Result<(), &'static str> {
        Ok(())
    }
    fn coverage(ev: &Ev<Event>) -> Option<Coverage> {
        matches!(ev, Ev::Proto(Event::Announced)).then_some(Coverage::Announced)
    }
    fn boot<P: PlatformFor<Event>>(cfg: &Config, ghost: Arc<P::Ghost>) -> Kernel<P> {
        Kernel { sched: Sched::new(cfg.tasks, TimerModel::Never, ghost), flag: P::AtomicBool::new(false) }
    }
    fn run_task<P: PlatformFor<Event>>(k: &Kernel<P>, pid: Pid) {
        let cur = k.sched.enter(pid);
        // The start: up to the first operation, the load below.
        cur.emit(Event::Announced);
        let _ = k.flag.load(Relaxed);
        cur.exit();
    }
    fn final_state<P: PlatformFor<Event>>(_k: &Kernel<P>) {}
    fn scale(cfg: &Config, _k: usize, _work: u32, _hold_spins: u32) -> Result<Config, String> {
        Ok(cfg.clone())
    }
    fn real_time(cfg: &Config, _jiffy: Duration) -> Config {
        cfg.clone()
    }
    const COUNTERS: &'static [&'static str] = &["elapsed-us"];
    const RATIOS: &'static [(&'static str, &'static str)] = &[];
    fn counters(_cfg: &Config, _events: &[(Pid, Ev<Event>)], _times: &[Instant], _out: &mut Counters) {}
}

/// Task 1's announcement, if task 0 has not announced before it.
fn zero_first(exec: &Exec<Announce>) -> Vec<Violation> {
    let first =
        exec.events.iter().enumerate().find(|(_, (pid, e))| *pid < 2 && matches!(e, Ev::Proto(Event::Announced)));
    match first {
        Some((i, (1, _))) => {
            vec![Violation::new(Invariant::ZeroFirst, Some(i), format!("{} announces before task 0", exec.pid_name(1)))]
        }
        _ => Vec::new(),
    }
}

impl Checked for Announce {
    const INVARIANTS: &'static [Inv<Self>] = &[
        Inv {
            id: Invariant::ZeroFirst,
            statement: "Task 0 announces before task 1.",
            exercised_by: &[Coverage::Announced],
            check: zero_first,
        },
        Inv {
            id: Invariant::Progress,
            statement: "Every thread ends.",
            exercised_by: &[Coverage::Announced],
            check: |e| monitor::progress(e, Invariant::Progress),
        },
    ];
    const PROGRESS: Invariant = Invariant::Progress;
    type Online = AnnounceOnline;
}

/// Whether task 0 has announced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AnnounceOnline {
    announced: bool,
}

impl online::Online<Announce> for AnnounceOnline {
    fn step(&mut self, _cfg: &Config, pid: Pid, ev: &Ev<Event>, found: &mut online::Found<Announce>) {
        online::step_common(ev, Some(Invariant::Progress), None, found);
        if let Ev::Proto(Event::Announced) = ev {
            if pid == 1 && !self.announced {
                found.violated.push(Invariant::ZeroFirst);
            }
            self.announced |= pid == 0;
        }
    }
    fn end(&self, _cfg: &Config, _fin: &(), _found: &mut online::Found<Announce>) {}
}

static ANNOUNCE: Entry<Announce> = Entry::NEW;

fn spec(invariants: &str) -> Arc<dyn mmcheck::spec::AnySpec> {
    let registry = Registry::default().with(&ANNOUNCE);
    let text = format!(
        "model = \"announce\"\nvariant = \"plain\"\n\n[[thread]]\nrole = \"announcer\"\n\n[[thread]]\nrole = \"announcer\"\n\n[[thread]]\nrole = \"announcer\"\n\n\
         [check]\ninvariants = [{invariants}]\n\n[explore]\nengine = \"stateful\"\n\n[expect]\nverdict = \"violation\"\ninvariant = \"zero-first\"\n"
    );
    scenario::parse_with(&registry, Path::new("announce.toml"), &text).unwrap_or_else(|e| panic!("{e}")).spec
}

const ENGINE: Engine = Engine::Stateful { max_states: Some(10_000), memory: Memory::Sc };

fn violated(reduce: Reduce, invariants: &str) -> (bool, u64) {
    let out = spec(invariants).explore(ENGINE, &Options { reduce, ..Options::default() });
    assert!(out.error.is_none() && (out.complete || out.found.is_some()), "{:?}", out.error);
    let st = out.stats.expect("stateful stats");
    (out.found.is_some(), st.persistent_states)
}

/// Safety (sleep sets and persistent sets) and `progress` (persistent sets alone): the search
/// with persistent sets finds the schedule that starts task 1 first, as the search without
/// them does, and takes no start alone; with the visibility condition forgotten, it takes
/// task 0's start alone and misses the violation.
#[test]
fn a_persistent_set_that_ignores_visibility_is_caught() {
    for invariants in ["\"zero-first\"", "\"zero-first\", \"progress\""] {
        let plain = Reduce { por: true, ..Reduce::NONE };
        let persistent = Reduce { persistent: true, ..plain };
        let seeded = Reduce { defect: Some(ReductionDefect::PersistentIgnoresVisibility), ..persistent };
        assert!(violated(plain, invariants).0, "{invariants}: the search without persistent sets");
        let (found, by_one) = violated(persistent, invariants);
        assert!(found, "{invariants}: persistent sets missed the violation");
        assert_eq!(by_one, 0, "{invariants}: a start that emits an event was taken alone");
        let (found, by_one) = violated(seeded, invariants);
        assert!(by_one > 0, "{invariants}: the seeded defect took no start alone");
        assert!(!found, "{invariants}: the seeded defect did not change the outcome");
    }
}
