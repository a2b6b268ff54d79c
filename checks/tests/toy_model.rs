//! Adding a protocol is a one-folder change: a toy third protocol, defined entirely in this
//! test (it is not shipped), goes through everything a shipped model does: its scenario text
//! is parsed, checked with loom, put in the matrix, and its seeded mutant is killed by the
//! self-test. docs/model.md walks through it.
//!
//! The toy: a waiter sleeps on a wait queue until a flag is set; a setter sets the flag and
//! wakes the queue. `check-then-sleep` tests the flag only before `prepare_to_wait()` (the
//! lost wake-up of the kswapd-stall series in miniature); `recheck` tests it again after.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use core::sync::atomic::Ordering::Relaxed;

use mmcheck::check::{check, RunOptions, Verdict};
use mmcheck::monitor::{self, online, Checked, Exec, Invariant as Inv, Violation};
use mmcheck::registry::{AnyModel, Entry, Registry};
use mmcheck::{matrix, scenario, selftest};
use mmmodel::event::{Event as Ev, KernelEvent, Wq};
use mmmodel::ghost::{Pid, MAX_TASKS};
use mmmodel::kernel::sched::{io_schedule_timeout, Sched, TimerModel, TASK_UNINTERRUPTIBLE};
use mmmodel::kernel::wait::{finish_wait, prepare_to_wait, wake_up, WaitQueueHead};
use mmmodel::model::{Counters, FieldError, Fields, Model, PlatformFor, ProtoEvent, RoleKind, Seeded};
use mmmodel::platform::{Atomic, Platform};

// ---------------------------------------------------------------- the model (model/src/toy/)

mmmodel::named! {
    pub enum Variant {
        CheckThenSleep = "check-then-sleep",
        Recheck = "recheck",
    }
}

impl mmmodel::model::Variant for Variant {
    fn description(self) -> &'static str {
        match self {
            Variant::CheckThenSleep => "test the flag, then prepare_to_wait() and sleep",
            Variant::Recheck => "test the flag again after prepare_to_wait()",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    FlagTested { set: bool },
    FlagSet,
}

impl ProtoEvent for Event {}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::FlagTested { set } => write!(f, "flag is {}", if *set { "set" } else { "clear" }),
            Event::FlagSet => write!(f, "flag = 1"),
        }
    }
}

mmmodel::named! {
    pub enum Coverage {
        Enqueued = "enqueued",
        FlagSet = "flag-set",
    }
}

mmmodel::named! {
    pub enum Invariant {
        NoLostWakeup = "no-lost-wakeup",
        Progress = "progress",
    }
}

mmmodel::named! {
    pub enum Mutation {
        SkipWake = "skip-wake",
    }
}

impl Seeded<Toy> for Mutation {
    fn targets(self) -> Invariant {
        Invariant::NoLostWakeup
    }
    fn description(self) -> &'static str {
        "The setter sets the flag and never wakes the queue."
    }
    fn applies(self, cfg: &Config) -> Result<(), String> {
        if cfg.roles.contains(&Role::Setter) {
            Ok(())
        } else {
            Err("it changes the setter, and this file has none".into())
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    Waiter,
    Setter,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub mutation: Option<Mutation>,
    pub roles: Vec<Role>,
}

pub struct Kernel<P: Platform> {
    sched: Sched<P>,
    cfg: Config,
    flag: P::AtomicBool,
    wq: WaitQueueHead<P>,
}

impl<P: PlatformFor<Event>> Kernel<P> {
    fn run_task(&self, pid: Pid) {
        let cur = self.sched.enter(pid);
        match self.cfg.roles[pid] {
            Role::Waiter => {
                let set = self.flag.load(Relaxed);
                cur.emit(Event::FlagTested { set });
                if !set {
                    prepare_to_wait(&cur, &self.wq, TASK_UNINTERRUPTIBLE);
                    let again = self.cfg.variant == Variant::Recheck && self.flag.load(Relaxed);
                    if !again {
                        io_schedule_timeout(&cur, 1);
                    }
                    finish_wait(&cur, &self.wq);
                }
            }
            Role::Setter => {
                self.flag.store(true, Relaxed);
                cur.emit(Event::FlagSet);
                let skip = self.cfg.mutation == Some(Mutation::SkipWake);
                if skip {
                    cur.mutation_reached();
                } else {
                    wake_up(&cur, &self.wq);
                }
            }
        }
        cur.exit();
    }
}

pub struct Toy;

impl Model for Toy {
    const NAME: &'static str = "toy";
    const ROLES: &'static [RoleKind] =
        &[RoleKind { name: "waiter", keys: &[] }, RoleKind { name: "setter", keys: &[] }];
    const PARAMS: &'static [&'static str] = &[];
    const CONTENDED_PATH: &'static [Coverage] = &[Coverage::Enqueued];
    type Variant = Variant;
    type Event = Event;
    type Coverage = Coverage;
    type Invariant = Invariant;
    type Mutation = Mutation;
    type Role = Role;
    type Config = Config;
    type Final = ();
    type Kernel<P: PlatformFor<Event>> = Kernel<P>;

    fn variant(cfg: &Config) -> Variant {
        cfg.variant
    }
    fn with_variant(cfg: &Config, variant: Variant) -> Config {
        Config { variant, ..cfg.clone() }
    }
    fn mutation(cfg: &Config) -> Option<Mutation> {
        cfg.mutation
    }
    fn without_mutation(cfg: &Config) -> Config {
        Config { mutation: None, ..cfg.clone() }
    }
    fn roles(cfg: &Config) -> &[Role] {
        &cfg.roles
    }
    fn role_kind(role: &Role) -> &'static str {
        match role {
            Role::Waiter => "waiter",
            Role::Setter => "setter",
        }
    }
    fn comm(role: &Role) -> String {
        Self::role_kind(role).to_string()
    }
    fn parse_role(kind: &str, _f: &mut Fields, _kinds: &[&str]) -> Result<Role, FieldError> {
        Ok(if kind == "waiter" { Role::Waiter } else { Role::Setter })
    }
    fn configure(
        variant: Variant,
        mutation: Option<Mutation>,
        roles: Vec<Role>,
        _p: &mut Fields,
    ) -> Result<Config, FieldError> {
        let cfg = Config { variant, mutation, roles };
        Self::validate(&cfg).map_err(|message| FieldError { field: "thread".into(), message })?;
        Ok(cfg)
    }
    fn validate(cfg: &Config) -> Result<(), String> {
        if cfg.roles.is_empty() || cfg.roles.len() > MAX_TASKS {
            return Err(format!("1..={MAX_TASKS} threads"));
        }
        Ok(())
    }
    fn coverage(ev: &Ev<Event>) -> Option<Coverage> {
        match ev {
            Ev::Kernel(KernelEvent::Enqueued { .. }) => Some(Coverage::Enqueued),
            Ev::Proto(Event::FlagSet) => Some(Coverage::FlagSet),
            _ => None,
        }
    }
    fn boot<P: PlatformFor<Event>>(cfg: &Config, ghost: Arc<P::Ghost>) -> Kernel<P> {
        Kernel {
            sched: Sched::new(cfg.roles.len(), TimerModel::Never, ghost),
            cfg: cfg.clone(),
            flag: P::AtomicBool::new(false),
            wq: WaitQueueHead::new(Wq("toy_wait")),
        }
    }
    fn run_task<P: PlatformFor<Event>>(k: &Kernel<P>, pid: Pid) {
        k.run_task(pid)
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

// ---------------------------------------------------------------- its monitors (checks/src/monitor/toy.rs)

fn no_lost_wakeup(exec: &Exec<Toy>) -> Vec<Violation> {
    exec.events
        .iter()
        .enumerate()
        .filter(|(_, (_, e))| matches!(e, Ev::Kernel(KernelEvent::SleptForever)))
        .map(|(i, (pid, _))| {
            Violation::new(
                Invariant::NoLostWakeup,
                Some(i),
                format!("{} sleeps for ever with the flag set", exec.pid_name(*pid)),
            )
        })
        .collect()
}

impl Checked for Toy {
    const INVARIANTS: &'static [Inv<Self>] = &[
        Inv {
            id: Invariant::NoLostWakeup,
            statement: "No waiter sleeps for ever once the flag is set.",
            exercised_by: &[Coverage::Enqueued, Coverage::FlagSet],
            check: no_lost_wakeup,
        },
        Inv {
            id: Invariant::Progress,
            statement: "Every thread ends.",
            exercised_by: &[Coverage::FlagSet],
            check: |e| monitor::progress(e, Invariant::Progress),
        },
    ];
    const PROGRESS: Invariant = Invariant::Progress;
    type Online = ToyOnline;
}

/// The toy's online monitors: both invariants are verdicts of single events (`SleptForever`;
/// the ghost's `Livelock` and `StepBound`), so the state is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ToyOnline;

impl online::Online<Toy> for ToyOnline {
    fn step(&mut self, _cfg: &Config, _pid: Pid, ev: &Ev<Event>, found: &mut online::Found<Toy>) {
        online::step_common(ev, Some(Invariant::Progress), None, found);
        if let Ev::Kernel(KernelEvent::SleptForever) = ev {
            found.violated.push(Invariant::NoLostWakeup);
        }
    }
    fn end(&self, _cfg: &Config, _fin: &(), _found: &mut online::Found<Toy>) {}
}

// ---------------------------------------------------------------- its registry line

static TOY: Entry<Toy> = Entry::NEW;

fn registry() -> Registry {
    Registry::default().with(&TOY)
}

fn scenario(variant: &str, mutation: Option<&str>, verdict: &str) -> scenario::Scenario {
    let mutation = mutation.map(|m| format!("mutation = \"{m}\"\n")).unwrap_or_default();
    let expect = if verdict == "pass" {
        "verdict = \"pass\"\nreaches = [\"enqueued\", \"flag-set\"]".to_string()
    } else {
        "verdict = \"violation\"\ninvariant = \"no-lost-wakeup\"".to_string()
    };
    let text = format!(
        "model = \"toy\"\nvariant = \"{variant}\"\n{mutation}\n[[thread]]\nrole = \"waiter\"\n\n[[thread]]\nrole = \"setter\"\n\n\
         [explore]\nengine = \"loom\"\n\n[expect]\n{expect}\n"
    );
    let name = format!("toy-{variant}{}.toml", if mutation.is_empty() { "" } else { "-mutant" });
    scenario::parse_with(&registry(), Path::new(&name), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// Every toy execution is also checked by the toy's online monitors.
fn checked_online() -> RunOptions {
    RunOptions { check_online: true, ..RunOptions::default() }
}

#[test]
fn the_toy_parses_checks_and_its_errors_name_their_field() {
    let buggy = check(&scenario("check-then-sleep", None, "violation"), &checked_online());
    assert!(buggy.matched, "{:?}", buggy.verdict);
    assert_eq!(buggy.verdict, Verdict::Violation("no-lost-wakeup"));
    let fixed = check(&scenario("recheck", None, "pass"), &checked_online());
    assert!(fixed.matched, "{:?}", fixed.verdict);
    // A scenario error in the toy is as precise as in a shipped model.
    let e = scenario::parse_with(
        &registry(),
        Path::new("bad.toml"),
        "model = \"toy\"\nvariant = \"recheck\"\n[[thread]]\nrole = \"waiter\"\nnode = 1\n[expect]\nverdict = \"pass\"\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (Some(5), Some("thread[0].node")), "{e}");
    // The shipped registry does not know the toy.
    assert!(scenario::parse(
        Path::new("t.toml"),
        "model = \"toy\"\nvariant = \"recheck\"\n[expect]\nverdict = \"pass\"\n"
    )
    .is_err());
}

#[test]
fn the_toy_has_a_matrix() {
    let reports = vec![
        check(&scenario("check-then-sleep", None, "violation"), &checked_online()),
        check(&scenario("recheck", None, "pass"), &checked_online()),
    ];
    let m = matrix::build(&TOY, &reports);
    assert_eq!(m.cell("no-lost-wakeup", "check-then-sleep").map(|c| c.verdict), Some("violated"));
    assert_eq!(m.cell("no-lost-wakeup", "recheck").map(|c| c.verdict), Some("holds"));
    assert!(matrix::render(&m).contains("toy model"));
    assert_eq!(TOY.name(), "toy");
}

#[test]
fn the_toys_mutant_is_killed_by_the_self_test() {
    let reg = registry();
    let mutants = vec![scenario("recheck", Some("skip-wake"), "violation")];
    let results = selftest::run(&reg, &mutants, &checked_online());
    let toy: Vec<_> = results.iter().filter(|r| r.mutation.model == "toy").collect();
    assert_eq!(toy.len(), 1);
    assert!(toy[0].killed, "{:?}", toy[0]);
    assert!(toy[0].mutation_ran && toy[0].unmutated_violates == Some(false));
    // The shipped models' mutants have no scenario here: they survive, as they should.
    assert!(results.iter().filter(|r| r.mutation.model != "toy").all(|r| !r.killed));
}
