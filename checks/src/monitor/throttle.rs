//! Monitors of the reclaim-throttle model (reclaim throttling, 5.16 to today).
//!
//! # One state machine, two forms
//!
//! Every invariant but `no-soft-lockup` is a safety property that looks back only a little,
//! so [`ThrottleState`] steps it on each event: the trace monitors run it over a whole
//! execution and keep the index and message of each violation; the online form is the same
//! state (part of the stateful engine's fingerprint), keeping only which invariants were
//! violated. The state, per task and per queue, is small:
//!
//! * `throttle-bounded`: the mask of tasks inside `reclaim_throttle()` and of those whose
//!   sleep there has already timed out (a second sleep is the violation);
//! * `writeback-wakes-all`: the mask of tasks asleep on `reclaim_wait[WRITEBACK]` (queued and
//!   not yet woken nor timed out), and of wakers that crossed the threshold and owe a wake;
//! * `throttled-count`: `nr_writeback_throttled` as last reported, and the mask of tasks on
//!   the WRITEBACK queue;
//! * `isolated-wakes-all`: the mask of tasks asleep on `reclaim_wait[ISOLATED]`, and of tasks
//!   whose `too_many_isolated()` found not too many and that owe `wake_throttle_isolated()`;
//! * the derived coverage: the reason each throttled task waits for and whether its condition
//!   cleared while it slept (`slept-full-timeout`), and who runs on each CPU (`cpu-contended`).
//!
//! `no-soft-lockup` is a property of infinite executions: [`lasso`] judges the fair cycle the
//! stateful engine found (`Checked::lasso`). On a finite execution it never fails.

use mmmodel::event::{Event as Ev, KernelEvent};
use mmmodel::ghost::Pid;
use mmmodel::kernel::cpu::{CpuEvent, MAX_CPUS};
use mmmodel::model::Named;
use mmmodel::throttle::event::{WQ_ISOLATED, WQ_WRITEBACK};
use mmmodel::throttle::{Config, Coverage as C, Event as TE, Invariant, Pages, Reason, ReclaimThrottle};

use super::online::{CycleKey, Found};
use super::{Checked, Exec, Violation};

type Exec_<'a> = Exec<'a, ReclaimThrottle>;

impl Checked for ReclaimThrottle {
    const INVARIANTS: &'static [super::Invariant<Self>] = &[
        super::Invariant {
            id: Invariant::NoSoftLockup,
            statement:
                "No task keeps a CPU for ever while another task is runnable on that CPU and waits for it (under \
                        preempt = \"none\"; decided on the fair cycles the stateful engine finds).",
            exercised_by: &[C::CpuContended],
            check: |_| Vec::new(),
        },
        super::Invariant {
            id: Invariant::Progress,
            statement: "Every task ends: no fair cycle, no deadlock, no task asleep with nobody left to wake it.",
            // Exercised once any of the model's contended paths is reached (`exercised` below).
            exercised_by: &[C::ThrottledIsolated],
            check: progress,
        },
        super::Invariant {
            id: Invariant::ThrottleBounded,
            statement:
                "Every task that reclaim_throttle() puts to sleep returns within its timeout: it sleeps once, and \
                        never again after its timer expired.",
            exercised_by: &[C::ThrottleTimedOut],
            check: |e| by_state(e, Invariant::ThrottleBounded),
        },
        super::Invariant {
            id: Invariant::WritebackWakesAll,
            statement:
                "A writeback completion wakes reclaim_wait[WRITEBACK] exactly when it finds NR_THROTTLED_WRITTEN - \
                        nr_reclaim_start above SWAP_CLUSTER_MAX * nr_writeback_throttled (nr_reclaim_start being what \
                        the waiter that took nr_writeback_throttled from 0 to 1 recorded), and then wakes every task \
                        asleep there.",
            exercised_by: &[C::WritebackWake, C::ThrottledWriteback],
            check: |e| by_state(e, Invariant::WritebackWakesAll),
        },
        super::Invariant {
            id: Invariant::ThrottledCount,
            statement: "nr_writeback_throttled is never below the number of tasks queued on reclaim_wait[WRITEBACK], \
                        and each increment and decrement moves it by one.",
            exercised_by: &[C::ThrottledWriteback],
            check: |e| by_state(e, Invariant::ThrottledCount),
        },
        super::Invariant {
            id: Invariant::IsolatedWakesAll,
            statement: "A too_many_isolated() that finds the isolated pages within its limit calls \
                        wake_throttle_isolated(), which wakes every task asleep on reclaim_wait[ISOLATED].",
            exercised_by: &[C::IsolatedWake, C::ThrottledIsolated],
            check: |e| by_state(e, Invariant::IsolatedWakesAll),
        },
        super::Invariant {
            id: Invariant::PagesConserved,
            statement: "Once every task has finished, the pages on the LRU and those isolated add up to the pages \
                        there were at the start: an isolation takes pages off the LRU and its putback returns them, \
                        none made or lost.",
            exercised_by: &[C::TooManyIsolated],
            check: pages_conserved,
        },
    ];
    const PROGRESS: Invariant = Invariant::Progress;
    const LASSO: &'static [Invariant] = &[Invariant::NoSoftLockup];
    type Online = ThrottleState;

    /// `progress` is exercised by any contended path (a throttle of any reason, a kthread's
    /// early return, a sleep on the buffer lock): each is a place where a task may wait on
    /// another. The other invariants need all of their `exercised_by`.
    fn exercised(
        inv: &super::Invariant<Self>,
        _cfg: &Config,
        coverage: &std::collections::BTreeMap<&'static str, u64>,
    ) -> bool {
        use mmmodel::model::Model;
        let reached = |c: &C| coverage.get(c.name()).is_some_and(|&n| n > 0);
        if inv.id == Invariant::Progress {
            return Self::CONTENDED_PATH.iter().any(reached);
        }
        inv.exercised_by.iter().all(reached)
    }

    fn derived_coverage(exec: &Exec_, cov: &mut std::collections::BTreeMap<&'static str, u64>) {
        let mut s = ThrottleState::default();
        let mut out = Vec::new();
        let mut derived = Vec::new();
        for (pid, e) in exec.events {
            s.walk(exec.cfg, *pid, e, &mut out, &mut derived);
        }
        for c in derived {
            *cov.entry(c.name()).or_insert(0) += 1;
        }
    }

    fn lasso(cfg: &Config, events: &[(Pid, Ev<TE>)], cycle_from: usize) -> Vec<Violation> {
        lasso(cfg, events, cycle_from)
    }
}

/// `progress`: the ghost's livelock and step-bound reports, and a task that sleeps with
/// nobody left to wake it (it never ends).
fn progress(exec: &Exec_) -> Vec<Violation> {
    let mut out = super::progress(exec, Invariant::Progress);
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        if let Ev::Kernel(KernelEvent::SleptForever) = e {
            out.push(Violation::new(
                Invariant::Progress,
                Some(i),
                format!("{} sleeps with nobody left to wake it: it never ends", exec.pid_name(*pid)),
            ));
        }
    }
    out
}

/// `pages-conserved`: the final state's pages against the configuration's (nothing to judge
/// without a final state: an execution that did not end, or the runtime build).
fn pages_conserved(exec: &Exec_) -> Vec<Violation> {
    let message = pages_lost(exec.cfg, exec.fin);
    message.map(|m| Violation::new(Invariant::PagesConserved, None, m)).into_iter().collect()
}

fn pages_lost(cfg: &Config, fin: &Option<Pages>) -> Option<String> {
    let Pages { lru, isolated } = (*fin)?;
    (lru.wrapping_add(isolated) != cfg.pages()).then(|| {
        format!(
            "pages made or lost: {lru} on the LRU and {isolated} isolated at the end, {} in all at the start",
            cfg.pages()
        )
    })
}

fn by_state(exec: &Exec_, id: Invariant) -> Vec<Violation> {
    let mut s = ThrottleState::default();
    let mut out = Vec::new();
    let mut derived = Vec::new();
    let mut violations = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        s.walk(exec.cfg, *pid, e, &mut out, &mut derived);
        for (inv, msg) in out.drain(..) {
            if inv == id {
                violations.push(Violation::new(inv, Some(i), format!("{}: {msg}", exec.pid_name(*pid))));
            }
        }
    }
    violations
}

const NOBODY: u8 = u8::MAX;

/// The state of every safety monitor of the model (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ThrottleState {
    /// Tasks inside `reclaim_throttle()` (between `Throttle` and `ThrottleEnd`).
    in_throttle: u32,
    /// ... whose sleep there timed out.
    timed_out: u32,
    /// ... whose condition cleared since they started throttling.
    cleared: u32,
    /// Each task's reason while it throttles.
    reason: [u8; 32],
    /// Tasks queued on the WRITEBACK queue.
    wb_queued: u32,
    /// Tasks asleep on it: queued, neither woken nor timed out.
    wb_asleep: u32,
    /// Wakers that crossed the threshold and have not woken the queue yet.
    owe_wake: u32,
    /// The WRITEBACK waiter that took `nr_writeback_throttled` from 0 to 1 and has not yet
    /// recorded `nr_reclaim_start` (the only task that may record it).
    first_waiter: u32,
    /// `nr_writeback_throttled` as last reported.
    count: u32,
    /// Tasks asleep on the ISOLATED queue: queued, neither woken nor timed out.
    iso_asleep: u32,
    /// Tasks whose `too_many_isolated()` found not too many and that have not called
    /// `wake_throttle_isolated()` yet.
    owe_iso_wake: u32,
    /// The task running on each CPU.
    holder: [u8; MAX_CPUS],
    /// The tasks runnable and waiting for each CPU (between their `Wait` and `Run`).
    waiting: [u32; MAX_CPUS],
}

impl Default for ThrottleState {
    fn default() -> Self {
        ThrottleState {
            in_throttle: 0,
            timed_out: 0,
            cleared: 0,
            reason: [NOBODY; 32],
            wb_queued: 0,
            wb_asleep: 0,
            owe_wake: 0,
            first_waiter: 0,
            count: 0,
            iso_asleep: 0,
            owe_iso_wake: 0,
            holder: [NOBODY; MAX_CPUS],
            waiting: [0; MAX_CPUS],
        }
    }
}

impl ThrottleState {
    /// Step on task `pid`'s event `ev`: the violations it shows (invariant, message) and the
    /// derived coverage events.
    fn walk(&mut self, cfg: &Config, pid: Pid, ev: &Ev<TE>, out: &mut Vec<(Invariant, String)>, derived: &mut Vec<C>) {
        let bit = 1u32 << pid;
        // A waker that crossed the threshold must wake the queue at its next event.
        let lock_step = matches!(ev, Ev::Kernel(KernelEvent::LockAcquired { .. } | KernelEvent::LockReleased { .. }));
        if self.owe_wake & bit != 0 && !lock_step {
            self.owe_wake &= !bit;
            match ev {
                Ev::Kernel(KernelEvent::WakeUp { wq, woken, .. }) if *wq == WQ_WRITEBACK => {
                    let missed = self.wb_asleep & !woken;
                    if missed != 0 {
                        out.push((
                            Invariant::WritebackWakesAll,
                            format!(
                                "the threshold is crossed, but the wake leaves {} asleep on reclaim_wait[WRITEBACK]",
                                mmmodel::event::pids(missed)
                            ),
                        ));
                    }
                }
                _ => out.push((
                    Invariant::WritebackWakesAll,
                    "the threshold is crossed, but the completion does not wake reclaim_wait[WRITEBACK]".into(),
                )),
            }
        }
        // A too_many_isolated() that found not too many must call wake_throttle_isolated() at
        // its next event: a wake of the ISOLATED queue that wakes every sleeper there, or a
        // skipped wake when waitqueue_active() saw nobody.
        if self.owe_iso_wake & bit != 0 && !lock_step {
            self.owe_iso_wake &= !bit;
            let (missed, what) = match ev {
                Ev::Kernel(KernelEvent::WakeUp { wq, woken, .. }) if *wq == WQ_ISOLATED => {
                    (self.iso_asleep & !woken, "the wake leaves")
                }
                Ev::Kernel(KernelEvent::WakeSkipped { wq }) if *wq == WQ_ISOLATED => {
                    (self.iso_asleep, "waitqueue_active() found the queue empty with")
                }
                // Under `lkmm`, a lockless read that missed a queueing nothing ordered before it:
                // the same as a read that came first (the sleeper does not re-check the count
                // after prepare_to_wait(), so no barrier pair could order it), which leaves the
                // sleeper to its timeout (`throttle-bounded`), a fair race.
                Ev::Kernel(KernelEvent::WakeSkippedStale { wq }) if *wq == WQ_ISOLATED => (0, ""),
                _ => (self.iso_asleep, "nothing wakes reclaim_wait[ISOLATED], which leaves"),
            };
            if missed != 0 {
                out.push((
                    Invariant::IsolatedWakesAll,
                    format!(
                        "too_many_isolated() found not too many, but {what} {} asleep on reclaim_wait[ISOLATED]",
                        mmmodel::event::pids(missed)
                    ),
                ));
            }
        }
        match ev {
            Ev::Proto(TE::Throttle { reason, .. }) => {
                self.in_throttle |= bit;
                self.timed_out &= !bit;
                self.cleared &= !bit;
                self.reason[pid] = *reason as u8;
            }
            Ev::Proto(TE::ThrottleEnd { timeout, slept, .. }) => {
                if slept >= timeout && self.cleared & bit != 0 {
                    derived.push(C::SleptFullTimeout);
                }
                self.in_throttle &= !bit;
                self.timed_out &= !bit;
                self.cleared &= !bit;
                self.reason[pid] = NOBODY;
            }
            Ev::Kernel(KernelEvent::Schedule { .. }) if self.in_throttle & self.timed_out & bit != 0 => out.push((
                Invariant::ThrottleBounded,
                "sleeps again in reclaim_throttle() after its timeout expired: it does not return within its timeout"
                    .into(),
            )),
            Ev::Kernel(KernelEvent::SleptForever) if self.in_throttle & bit != 0 => out.push((
                Invariant::ThrottleBounded,
                "sleeps in reclaim_throttle() with no timer left to end the sleep".into(),
            )),
            Ev::Kernel(KernelEvent::TimedOut { .. }) => {
                if self.in_throttle & bit != 0 {
                    self.timed_out |= bit;
                }
                self.wb_asleep &= !bit;
                self.iso_asleep &= !bit;
            }
            Ev::Kernel(KernelEvent::Woken) => {
                self.wb_asleep &= !bit;
                self.iso_asleep &= !bit;
            }
            Ev::Kernel(KernelEvent::Enqueued { wq }) if *wq == WQ_ISOLATED => self.iso_asleep |= bit,
            Ev::Kernel(KernelEvent::FinishWait { wq }) if *wq == WQ_ISOLATED => self.iso_asleep &= !bit,
            Ev::Kernel(KernelEvent::WakeUp { wq, woken, .. }) if *wq == WQ_ISOLATED => self.iso_asleep &= !woken,
            Ev::Kernel(KernelEvent::Enqueued { wq }) if *wq == WQ_WRITEBACK => {
                self.wb_queued |= bit;
                self.wb_asleep |= bit;
            }
            Ev::Kernel(KernelEvent::FinishWait { wq }) if *wq == WQ_WRITEBACK => {
                self.wb_queued &= !bit;
                self.wb_asleep &= !bit;
            }
            Ev::Kernel(KernelEvent::WakeUp { wq, woken, .. }) if *wq == WQ_WRITEBACK => {
                self.wb_queued &= !woken;
                self.wb_asleep &= !woken;
            }
            // Each increment and decrement is reported right after its read-modify-write, so
            // in trace order the count moves by one at each.
            Ev::Proto(TE::WritebackThrottledInc { now } | TE::WritebackThrottledDec { now }) => {
                let inc = matches!(ev, Ev::Proto(TE::WritebackThrottledInc { .. }));
                let want = if inc { self.count.wrapping_add(1) } else { self.count.wrapping_sub(1) };
                if *now != want {
                    out.push((
                        Invariant::ThrottledCount,
                        format!(
                            "nr_writeback_throttled {} to {now}, from {}",
                            if inc { "incremented" } else { "decremented" },
                            self.count
                        ),
                    ));
                }
                self.count = *now;
                if inc && *now == 1 {
                    self.first_waiter |= bit;
                }
            }
            // The threshold is counted from the NR_THROTTLED_WRITTEN that the first waiter
            // recorded: nobody else moves nr_reclaim_start (kernel-source.md, Part 3).
            Ev::Proto(TE::ReclaimStart { written }) => {
                if self.first_waiter & bit == 0 {
                    out.push((
                        Invariant::WritebackWakesAll,
                        format!(
                            "nr_reclaim_start set to {written} by a waiter that did not take nr_writeback_throttled \
                             from 0 to 1"
                        ),
                    ));
                }
                self.first_waiter &= !bit;
            }
            // A completion wakes the queue exactly when the pages written since nr_reclaim_start
            // exceed SWAP_CLUSTER_MAX times the waiters it counted.
            Ev::Proto(TE::WritebackDone { throttled, written, start, crossed }) if *throttled != 0 => {
                let since = written.wrapping_sub(*start);
                let threshold = cfg.swap_cluster_max * throttled;
                if *crossed != (since > threshold) {
                    out.push((
                        Invariant::WritebackWakesAll,
                        format!(
                            "a completion finds {since} page(s) written since nr_reclaim_start against \
                             SWAP_CLUSTER_MAX * nr_writeback_throttled = {threshold}, and {}",
                            if *crossed { "wakes the queue" } else { "does not wake it" }
                        ),
                    ));
                }
                if *crossed {
                    self.owe_wake |= bit;
                    self.clear_waiting(Reason::Writeback);
                }
            }
            Ev::Proto(TE::TooManyIsolated { too_many: false, .. }) => {
                self.owe_iso_wake |= bit;
                self.clear_waiting(Reason::Isolated)
            }
            Ev::Proto(TE::Putback { .. }) => self.clear_waiting(Reason::Isolated),
            Ev::Proto(TE::ConsiderThrottle { progress: true }) => self.clear_waiting(Reason::Noprogress),
            Ev::Proto(TE::Cpu(CpuEvent::Wait { cpu })) => {
                let h = self.holder[*cpu as usize];
                if h != NOBODY && h as usize != pid {
                    derived.push(C::CpuContended);
                }
                self.waiting[*cpu as usize] |= bit;
            }
            Ev::Proto(TE::Cpu(CpuEvent::Run { cpu })) => {
                self.holder[*cpu as usize] = pid as u8;
                self.waiting[*cpu as usize] &= !bit;
            }
            Ev::Proto(TE::Cpu(CpuEvent::Yield { cpu, .. })) => self.holder[*cpu as usize] = NOBODY,
            _ => {}
        }
        let queued = self.wb_queued.count_ones();
        if self.count < queued {
            out.push((
                Invariant::ThrottledCount,
                format!(
                    "nr_writeback_throttled is {} with {queued} task(s) queued on reclaim_wait[WRITEBACK] ({})",
                    self.count,
                    mmmodel::event::pids(self.wb_queued)
                ),
            ));
        }
    }

    /// The condition of every task throttled on `reason` has cleared.
    fn clear_waiting(&mut self, reason: Reason) {
        for p in 0..32 {
            if self.in_throttle & (1 << p) != 0 && self.reason[p] == reason as u8 {
                self.cleared |= 1 << p;
            }
        }
    }
}

/// The parts of [`ThrottleState`] the monitor projection may leave out (docs/model.md, "Monitor
/// projection"), each with the invariants that read it. `in_throttle`, `cleared`, `reason`
/// and `holder` are always kept: the derived coverage events `slept-full-timeout` and
/// `cpu-contended` are computed from them.
mod part {
    /// `timed_out`: `throttle-bounded`.
    pub const TIMED_OUT: u32 = 1;
    /// `wb_queued` and `count`: `throttled-count`.
    pub const COUNT: u32 = 2;
    /// `wb_asleep`, `owe_wake` and `first_waiter`: `writeback-wakes-all`.
    pub const WRITEBACK: u32 = 4;
    /// `iso_asleep` and `owe_iso_wake`: `isolated-wakes-all`.
    pub const ISOLATED: u32 = 8;
    /// `waiting`: `no-soft-lockup`'s cycle keys.
    pub const WAITING: u32 = 16;
}

impl super::online::Online<ReclaimThrottle> for ThrottleState {
    fn projection(checked: &[Invariant]) -> u32 {
        super::online::projection(
            checked,
            &[
                (Invariant::ThrottleBounded, part::TIMED_OUT),
                (Invariant::ThrottledCount, part::COUNT),
                (Invariant::WritebackWakesAll, part::WRITEBACK),
                (Invariant::IsolatedWakesAll, part::ISOLATED),
                (Invariant::NoSoftLockup, part::WAITING),
            ],
        )
    }
    fn project(&mut self, mask: u32) {
        if mask & part::TIMED_OUT != 0 {
            self.timed_out = 0;
        }
        if mask & part::COUNT != 0 {
            self.wb_queued = 0;
            self.count = 0;
        }
        if mask & part::WRITEBACK != 0 {
            self.wb_asleep = 0;
            self.owe_wake = 0;
            self.first_waiter = 0;
        }
        if mask & part::ISOLATED != 0 {
            self.iso_asleep = 0;
            self.owe_iso_wake = 0;
        }
        if mask & part::WAITING != 0 {
            self.waiting = [0; MAX_CPUS];
        }
    }
    fn step(&mut self, cfg: &Config, pid: Pid, ev: &Ev<TE>, found: &mut Found<ReclaimThrottle>) {
        super::online::step_common(ev, Some(Invariant::Progress), None, found);
        if let Ev::Kernel(KernelEvent::SleptForever) = ev {
            found.violated.push(Invariant::Progress);
        }
        let mut out = Vec::new();
        self.walk(cfg, pid, ev, &mut out, &mut found.derived);
        found.violated.extend(out.into_iter().map(|(i, _)| i));
    }
    fn end(&self, cfg: &Config, fin: &Option<Pages>, found: &mut Found<ReclaimThrottle>) {
        if pages_lost(cfg, fin).is_some() {
            found.violated.push(Invariant::PagesConserved);
        }
    }

    /// `no-soft-lockup`'s online form: for each CPU that a task runs on while another task
    /// waits for it, the key (CPU, running task). A fair cycle that keeps one such key in every
    /// state, and in which the running task moves, is a soft lockup: the running task never
    /// gives the CPU up (the key would go) and no waiter runs there (the running task would
    /// change).
    fn cycle_keys(&self, out: &mut Vec<CycleKey>) {
        for (cpu, (&h, &w)) in self.holder.iter().zip(&self.waiting).enumerate() {
            if h != NOBODY && w & !(1u32 << h) != 0 {
                out.push(CycleKey { class: 0, key: 1 + ((cpu as u64) << 8 | h as u64), must_move: 1 << h });
            }
        }
    }
}

/// `no-soft-lockup` on a lasso: the events before `cycle_from` lead into a cycle that repeats
/// for ever (a fair cycle of the stateful engine). It is a soft lockup if, when the cycle
/// starts, some task waits for a CPU that another task runs on, and in the cycle the running
/// task takes steps, never gives that CPU up, and the waiting task never gets it.
pub fn lasso(cfg: &Config, events: &[(Pid, Ev<TE>)], cycle_from: usize) -> Vec<Violation> {
    let exec = Exec::<ReclaimThrottle> { cfg, events, fin: &None };
    let mut holder = [NOBODY; MAX_CPUS];
    let mut waiting = [0u32; MAX_CPUS];
    let (prefix, cycle) = exec.events.split_at(cycle_from.min(exec.events.len()));
    for (pid, e) in prefix {
        match e {
            Ev::Proto(TE::Cpu(CpuEvent::Wait { cpu })) => waiting[*cpu as usize] |= 1 << pid,
            Ev::Proto(TE::Cpu(CpuEvent::Run { cpu })) => {
                waiting[*cpu as usize] &= !(1 << pid);
                holder[*cpu as usize] = *pid as u8;
            }
            Ev::Proto(TE::Cpu(CpuEvent::Yield { cpu, .. })) => holder[*cpu as usize] = NOBODY,
            _ => {}
        }
    }
    let mut out = Vec::new();
    for cpu in 0..MAX_CPUS {
        let h = holder[cpu];
        let waiters = waiting[cpu] & !(if h == NOBODY { 0 } else { 1 << h });
        if h == NOBODY || waiters == 0 {
            continue;
        }
        let h = h as usize;
        let moves = cycle.iter().any(|(p, _)| *p == h);
        let gives_up = cycle.iter().any(|(p, e)| {
            *p == h && matches!(e, Ev::Proto(TE::Cpu(CpuEvent::Yield { cpu: c, .. })) if *c as usize == cpu)
        });
        let served = cycle.iter().any(|(p, e)| {
            waiters & (1 << p) != 0 && matches!(e, Ev::Proto(TE::Cpu(CpuEvent::Run { cpu: c })) if *c as usize == cpu)
        });
        if moves && !gives_up && !served {
            let why = cycle
                .iter()
                .rev()
                .find_map(|(p, e)| match e {
                    Ev::Proto(ev @ TE::ThrottleSkipped { .. }) if *p == h => Some(format!(" (its loop: {ev})")),
                    _ => None,
                })
                .unwrap_or_default();
            out.push(Violation::new(
                Invariant::NoSoftLockup,
                Some(cycle_from),
                format!(
                    "a soft lockup: {} runs on cpu{cpu} for ever{why}, never sleeping nor giving cpu{cpu} up, while {} \
                     waits for cpu{cpu}",
                    exec.pid_name(h),
                    (0..32)
                        .filter(|p| waiters & (1 << p) != 0)
                        .map(|p| exec.pid_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use mmmodel::event::{Event as Ev, KernelEvent};
    use mmmodel::kernel::cpu::Preempt;
    use mmmodel::throttle::event::{Site, WQ_ISOLATED};
    use mmmodel::throttle::{Config, Event as TE, Invariant, Variant};

    use super::ThrottleState;

    fn config() -> Config {
        Config {
            variant: Variant::V516Rc1,
            mutation: None,
            roles: Vec::new(),
            preempt: Preempt::Full,
            cpus: 1,
            lru: 8,
            write_pending: 0,
            swap_cluster_max: 32,
            queued_locks: false,
        }
    }

    /// The violations of a walk over `events`.
    fn walk(events: &[(usize, Ev<TE>)]) -> Vec<(Invariant, String)> {
        let cfg = config();
        let mut s = ThrottleState::default();
        let (mut out, mut derived) = (Vec::new(), Vec::new());
        for (pid, ev) in events {
            s.walk(&cfg, *pid, ev, &mut out, &mut derived);
        }
        out
    }

    /// T0 queued on reclaim_wait[ISOLATED]; T1's too_many_isolated() finds not too many and its
    /// wake_throttle_isolated() ends in `skip`: the violations of the walk.
    fn walk_to(skip: KernelEvent) -> Vec<(Invariant, String)> {
        walk(&[
            (0, Ev::Kernel(KernelEvent::Enqueued { wq: WQ_ISOLATED })),
            (1, Ev::Proto(TE::TooManyIsolated { site: Site::Compaction, isolated: 2, limit: 4, too_many: false })),
            (1, Ev::Kernel(skip)),
        ])
    }

    /// `writeback-wakes-all` counts the threshold itself: from the start the first waiter
    /// recorded, SWAP_CLUSTER_MAX (32 here) times the waiters the completion counted.
    #[test]
    fn the_writeback_threshold_is_counted_from_the_first_waiters_start() {
        let inc = |now| Ev::Proto(TE::WritebackThrottledInc { now });
        let done = |throttled, written, crossed| Ev::Proto(TE::WritebackDone { throttled, written, start: 5, crossed });
        // T0 takes the count from 0 to 1 and records the start; T1 is the second waiter.
        let ok = walk(&[(0, inc(1)), (0, Ev::Proto(TE::ReclaimStart { written: 5 })), (1, inc(2))]);
        assert!(ok.is_empty(), "{ok:?}");
        let second = walk(&[(0, inc(1)), (1, inc(2)), (1, Ev::Proto(TE::ReclaimStart { written: 5 }))]);
        assert_eq!(second.len(), 1, "{second:?}");
        assert!(second[0].1.contains("did not take nr_writeback_throttled from 0 to 1"), "{second:?}");
        // 2 waiters: 64 pages since the start do not cross, 65 do.
        assert!(walk(&[(2, done(2, 69, false))]).is_empty());
        let early = walk(&[(2, done(2, 69, true))]);
        assert!(
            early.len() == 1 && early[0].1.contains("64 page(s)") && early[0].1.contains("= 64, and wakes"),
            "{early:?}"
        );
        let late = walk(&[(2, done(2, 70, false))]);
        // The count moves by one: 0, 1, 2, 1 is right; a decrement reported as 3 is not.
        let dec = |now| Ev::Proto(TE::WritebackThrottledDec { now });
        assert!(walk(&[(0, inc(1)), (1, inc(2)), (1, dec(1))]).is_empty());
        let wrong = walk(&[(0, inc(1)), (1, inc(2)), (1, dec(3))]);
        assert!(wrong.len() == 1 && wrong[0].1.contains("decremented to 3, from 2"), "{wrong:?}");
        assert!(late.len() == 1 && late[0].1.contains("does not wake it"), "{late:?}");
    }

    /// A skip that found the queue empty with T0 on it is a missed wake-up; under `lkmm`, where
    /// the lockless read was stale (nothing ordered T0's queueing before it), it is the fair race
    /// of a read that came first.
    #[test]
    fn a_stale_waitqueue_active_is_the_fair_race_and_a_plain_one_a_miss() {
        let plain = walk_to(KernelEvent::WakeSkipped { wq: WQ_ISOLATED });
        assert_eq!(plain.len(), 1, "{plain:?}");
        assert_eq!(plain[0].0, Invariant::IsolatedWakesAll);
        assert!(plain[0].1.contains("found the queue empty with T0"), "{plain:?}");
        let stale = walk_to(KernelEvent::WakeSkippedStale { wq: WQ_ISOLATED });
        assert!(stale.is_empty(), "{stale:?}");
    }

    /// `pages-conserved` compares the final pages with the configuration's (an isolator's
    /// pages count from the start), in either direction, and judges nothing without a final
    /// state.
    #[test]
    fn pages_conserved_counts_the_isolators_pages_and_judges_no_missing_final_state() {
        use mmmodel::throttle::{Pages, Role};
        let cfg = Config { roles: vec![Role::Isolator { cpu: None, pages: 2 }], ..config() };
        let at = |lru, isolated| super::pages_lost(&cfg, &Some(Pages { lru, isolated }));
        assert_eq!(at(10, 0), None);
        assert_eq!(at(7, 3), None);
        assert!(at(8, 0).unwrap().contains("8 on the LRU and 0 isolated at the end, 10 in all"));
        assert!(at(9, 2).is_some(), "a page made");
        assert_eq!(super::pages_lost(&cfg, &None), None);
    }
}
