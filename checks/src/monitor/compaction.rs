//! Monitors of the compaction model (cb2dcaf023 "mm, compaction: finish pageblock scanning on
//! contention" and the versions around it).
//!
//! Every monitor is a function of one execution's events; the scanner positions and the
//! compactor's `cc->contended` are reported by the model as events (`ScannerAt`,
//! `ContendedSet`, `ContendedCleared`), because `compact_control` is private to its task.
//!
//! # The online form
//!
//! [`OnlineState`] is every invariant (and `abort-at-boundary`) stepped on each event, with
//! the same verdicts as the trace monitors on every execution (`online::agree`, run on every
//! execution of the scenario tests and on each hand-written trace of the unit tests). The
//! compaction monitors only ever look back, so the online form remembers what they look back
//! for, per task:
//!
//! * `finish-pageblock`: a mask of the async compactors that recorded contention, and the kind
//!   of their block scanner's last return (none yet; 0 or aligned; inside a pageblock), which is
//!   all its `CompactEnd` is judged against besides its own pfns.
//! * `sync-not-contended`: a mask of the sync compactors that saw a fatal signal.
//! * `scanners-ordered`: a mask of the compactors whose scanners met, and each compactor's last
//!   scanner positions, which its next isolation is judged against (these are its own
//!   `cc->migrate_pfn` and `cc->free_pfn`, so they add nothing a search does not already tell
//!   apart).
//! * `contended-monotonic`, `abort-at-boundary`, `progress` and `lock-released`: single events.
//!
//! A compactor runs one `compact_zone()`, whose `CompactEnd` is its last protocol event; there
//! its part of the state is forgotten.

use std::collections::BTreeMap;

use mmmodel::compaction::{
    AbortReason, CompactResult, Compaction, Config, ContendedWhy, Coverage as C, Event as CE, Invariant, Mode, Role,
};
use mmmodel::event::Event as Ev;
use mmmodel::ghost::Pid;
use mmmodel::model::Named;

use super::online::Found;
use super::{Checked, Exec, Violation};

type Exec_<'a> = Exec<'a, Compaction>;

impl Checked for Compaction {
    const INVARIANTS: &'static [super::Invariant<Self>] = &[
        super::Invariant {
            id: Invariant::Progress,
            statement: "compact_zone() ends within the step bound in every interleaving, a fatal signal included: its loop \
                        never returns to a state it was in with nobody left to change anything.",
            exercised_by: &[C::LockContended],
            check: |e| super::progress(e, Invariant::Progress),
        },
        super::Invariant {
            id: Invariant::FinishPageblock,
            statement: "Once cc->contended is recorded, async compaction aborts (COMPACT_CONTENDED) only with the migration \
                        scanner at a pageblock-aligned pfn, or for the documented exceptions: ISOLATE_ABORT because the \
                        block scanner returned 0, -ENOMEM with the scanners not met, the scanners met, a suitable page free.",
            exercised_by: &[C::ContendedSet],
            check: finish_pageblock,
        },
        super::Invariant {
            id: Invariant::AbortAfterPageblock,
            statement: "Once an async compactor has recorded contention (cc->contended), it starts no new pageblock: the \
                        first compact_finished() with the migration scanner at a pageblock-aligned pfn ends the run \
                        (COMPACT_CONTENDED, or COMPACT_COMPLETE if the scanners met, or COMPACT_SUCCESS if a suitable page \
                        is free) instead of returning COMPACT_CONTINUE.",
            exercised_by: &[C::ContendedSet, C::AbortAtBoundary],
            check: abort_after_pageblock,
        },
        super::Invariant {
            id: Invariant::LockReleased,
            statement: "No thread ends holding lru_lock or zone->lock (on any exit path of the block scanners), or takes a \
                        lock it already holds.",
            exercised_by: &[C::LockContended],
            check: |e| super::lock_released(e, Invariant::LockReleased),
        },
        super::Invariant {
            id: Invariant::ContendedMonotonic,
            statement: "cc->contended never goes back from true to false within one compact_zone().",
            exercised_by: &[C::ContendedSet],
            check: contended_monotonic,
        },
        super::Invariant {
            id: Invariant::SyncNotContended,
            statement: "Sync and sync-light compaction never trylock and set cc->contended only for a fatal signal they saw.",
            // Sync modes never trylock, so no event marks them; see `exercised`.
            exercised_by: &[],
            check: sync_not_contended,
        },
        super::Invariant {
            id: Invariant::ScannersOrdered,
            statement: "The migration scanner isolates only below the free scanner and the free scanner only above the \
                        migration scanner's pageblock (so migrate_pfn <= free_pfn until they meet), and once they meet the \
                        next compact_finished() ends the run, with no isolation in between.",
            exercised_by: &[C::ScannersMet],
            check: scanners_ordered,
        },
    ];

    const PROGRESS: Invariant = Invariant::Progress;
    type Online = OnlineState;

    fn derived_coverage(exec: &Exec_, cov: &mut BTreeMap<&'static str, u64>) {
        let n = aborts_at_boundary(exec);
        if n > 0 {
            cov.insert(C::AbortAtBoundary.name(), n);
        }
    }

    /// `sync-not-contended` is exercised by a scenario with a compactor in a sync mode.
    fn exercised(inv: &super::Invariant<Self>, cfg: &Config, coverage: &BTreeMap<&'static str, u64>) -> bool {
        let events = inv.exercised_by.iter().all(|e| coverage.get(e.name()).is_some_and(|&n| n > 0));
        let roles = inv.id != Invariant::SyncNotContended
            || cfg.roles.iter().any(|r| matches!(r, Role::Compactor { mode, .. } if *mode != Mode::Async));
        events && roles
    }
}

fn pid_name(exec: &Exec_, pid: Pid) -> String {
    exec.pid_name(pid)
}

fn config<'a>(exec: &'a Exec_) -> Option<&'a Config> {
    Some(exec.cfg)
}

fn mode_of(cfg: &Config, pid: Pid) -> Option<Mode> {
    cfg.roles.get(pid).and_then(|r| r.mode())
}

fn finish_pageblock(exec: &Exec_) -> Vec<Violation> {
    let Some(cfg) = config(exec) else { return Vec::new() };
    let ppb = cfg.pages_per_block;
    let n = cfg.roles.len();
    let mut contended_at: Vec<Option<usize>> = vec![None; n];
    let mut last_low_pfn: Vec<Option<u32>> = vec![None; n];
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let pid = *pid;
        match *e {
            Ev::Proto(CE::ContendedSet { .. }) => {
                contended_at[pid] = contended_at[pid].or(Some(i));
            }
            Ev::Proto(CE::IsolateMigrate { low_pfn, .. }) => last_low_pfn[pid] = Some(low_pfn),
            Ev::Proto(CE::CompactEnd { result: CompactResult::Contended, reason, migrate_pfn, free_pfn }) => {
                if mode_of(cfg, pid) != Some(Mode::Async) {
                    continue;
                }
                let Some(c) = contended_at[pid] else { continue };
                let block = |pfn: u32| pfn / ppb;
                match reason {
                    Some(AbortReason::IsolateAbort) => {
                        // The documented ISOLATE_ABORT: the block scanner returned 0.
                        let low = last_low_pfn[pid].unwrap_or(migrate_pfn);
                        if low != 0 && !low.is_multiple_of(ppb) {
                            out.push(Violation::new(
                                Invariant::FinishPageblock,
                                Some(i),
                                format!(
                                    "{} aborts with ISOLATE_ABORT after contention was recorded (#{c}) while its \
                                     migration block scanner stopped at pfn {low}, inside pageblock {}: the block scanner \
                                     returned a non-zero pfn, so the pageblock was abandoned, not finished",
                                    pid_name(exec, pid),
                                    block(low)
                                ),
                            ));
                        }
                    }
                    Some(AbortReason::NoMemory) if block(free_pfn) > block(migrate_pfn) => {
                        // -ENOMEM with the scanners not met: a documented exception.
                    }
                    _ => {
                        if !migrate_pfn.is_multiple_of(ppb) {
                            out.push(Violation::new(
                                Invariant::FinishPageblock,
                                Some(i),
                                format!(
                                    "{} returns COMPACT_CONTENDED ({}) at migrate_pfn {migrate_pfn}, inside pageblock {}, \
                                     after contention was recorded (#{c}): the pageblock was not finished",
                                    pid_name(exec, pid),
                                    reason.map_or("no reason", |r| r.describe()),
                                    block(migrate_pfn)
                                ),
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `abort-after-pageblock`: per async compactor, from its first `ContendedSet` on (within one
/// `compact_zone()`), a `compact_finished()` that returns COMPACT_CONTINUE with `migrate_pfn`
/// pageblock-aligned is a violation: the next iteration would start scanning a new pageblock.
/// (Scanners met and a suitable page free end the run with COMPACT_COMPLETE and
/// COMPACT_SUCCESS, so they are never judged; an earlier end, ISOLATE_ABORT or -ENOMEM, leaves
/// no such `compact_finished()`.) The online form needs one bit per task: "this async
/// compactor has recorded contention in its current compact_zone()".
fn abort_after_pageblock(exec: &Exec_) -> Vec<Violation> {
    let Some(cfg) = config(exec) else { return Vec::new() };
    let ppb = cfg.pages_per_block;
    let mut contended_at: Vec<Option<usize>> = vec![None; cfg.roles.len()];
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let pid = *pid;
        if mode_of(cfg, pid) != Some(Mode::Async) {
            continue;
        }
        match *e {
            Ev::Proto(CE::CompactStart { .. }) => contended_at[pid] = None,
            Ev::Proto(CE::ContendedSet { .. }) => contended_at[pid] = contended_at[pid].or(Some(i)),
            Ev::Proto(CE::CompactFinished { result: CompactResult::Continue, migrate_pfn })
                if migrate_pfn.is_multiple_of(ppb) =>
            {
                let Some(c) = contended_at[pid] else { continue };
                out.push(Violation::new(
                    Invariant::AbortAfterPageblock,
                    Some(i),
                    format!(
                        "{} recorded contention (#{c}), yet compact_finished() returns COMPACT_CONTINUE at the \
                         pageblock-aligned migrate_pfn {migrate_pfn}: it goes on into pageblock {} instead of aborting \
                         after the pageblock it was scanning",
                        pid_name(exec, pid),
                        migrate_pfn / ppb
                    ),
                ));
            }
            _ => {}
        }
    }
    out
}

fn contended_monotonic(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut set_at: Vec<Option<usize>> = vec![None; exec.tasks()];
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match e {
            Ev::Proto(CE::ContendedSet { .. }) => set_at[*pid] = Some(i),
            Ev::Proto(CE::ContendedCleared) => out.push(Violation::new(
                Invariant::ContendedMonotonic,
                Some(i),
                format!(
                    "{} clears cc->contended{}: contention recorded earlier is forgotten",
                    pid_name(exec, *pid),
                    set_at[*pid].map(|s| format!(" (set at #{s})")).unwrap_or_default()
                ),
            )),
            _ => {}
        }
    }
    out
}

fn sync_not_contended(exec: &Exec_) -> Vec<Violation> {
    let Some(cfg) = config(exec) else { return Vec::new() };
    let mut out = Vec::new();
    let mut fatal_seen = vec![false; cfg.roles.len()];
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let pid = *pid;
        let Some(mode) = mode_of(cfg, pid) else { continue };
        if mode == Mode::Async {
            continue;
        }
        match *e {
            Ev::Proto(CE::FatalSeen) => fatal_seen[pid] = true,
            Ev::Proto(CE::LockContended { lock }) => out.push(Violation::new(
                Invariant::SyncNotContended,
                Some(i),
                format!(
                    "{} trylocked {lock} and recorded its contention: only async compaction trylocks",
                    pid_name(exec, pid)
                ),
            )),
            Ev::Proto(CE::ContendedSet { why }) if why != ContendedWhy::FatalSignal || !fatal_seen[pid] => {
                out.push(Violation::new(
                    Invariant::SyncNotContended,
                    Some(i),
                    format!(
                        "{} sets cc->contended for \"{why}\"{}: {} compaction records only fatal signals",
                        pid_name(exec, pid),
                        if why == ContendedWhy::FatalSignal { " without having seen a fatal signal" } else { "" },
                        mode.name()
                    ),
                ))
            }
            _ => {}
        }
    }
    out
}

fn scanners_ordered(exec: &Exec_) -> Vec<Violation> {
    let Some(cfg) = config(exec) else { return Vec::new() };
    let ppb = cfg.pages_per_block;
    let n = cfg.roles.len();
    // Per compactor: the scanner positions, and where they first met.
    let mut pos: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut met_at: Vec<Option<usize>> = vec![None; n];
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let pid = *pid;
        match *e {
            Ev::Proto(CE::ScannerAt { migrate_pfn, free_pfn }) => {
                pos[pid] = Some((migrate_pfn, free_pfn));
                let met = free_pfn / ppb <= migrate_pfn / ppb;
                if met {
                    met_at[pid] = met_at[pid].or(Some(i));
                } else if migrate_pfn > free_pfn {
                    out.push(Violation::new(
                        Invariant::ScannersOrdered,
                        Some(i),
                        format!(
                            "{}: migrate_pfn {migrate_pfn} > free_pfn {free_pfn} before the scanners met",
                            pid_name(exec, pid)
                        ),
                    ));
                }
            }
            Ev::Proto(CE::Isolated { free, pfn, .. }) => {
                let Some((migrate_pfn, free_pfn)) = pos[pid] else { continue };
                let low = (migrate_pfn / ppb + 1) * ppb;
                if !free && pfn >= free_pfn {
                    out.push(Violation::new(
                        Invariant::ScannersOrdered,
                        Some(i),
                        format!(
                            "{}: the migration scanner isolates pfn {pfn}, at or above the free scanner (free_pfn {free_pfn})",
                            pid_name(exec, pid)
                        ),
                    ));
                } else if free && pfn < low {
                    out.push(Violation::new(
                        Invariant::ScannersOrdered,
                        Some(i),
                        format!(
                            "{}: the free scanner isolates pfn {pfn}, below the end of the migration scanner's pageblock \
                             (migrate_pfn {migrate_pfn}, pageblock {}): the scanners crossed",
                            pid_name(exec, pid),
                            migrate_pfn / ppb
                        ),
                    ));
                } else if let Some(m) = met_at[pid] {
                    out.push(Violation::new(
                        Invariant::ScannersOrdered,
                        Some(i),
                        format!(
                            "{} isolates pfn {pfn} ({} scanner) after the scanners met (#{m}): meeting must end the run",
                            pid_name(exec, pid),
                            if free { "free" } else { "migration" }
                        ),
                    ));
                }
            }
            Ev::Proto(CE::CompactFinished { result: CompactResult::Continue, .. }) => {
                if let Some(m) = met_at[pid] {
                    out.push(Violation::new(
                        Invariant::ScannersOrdered,
                        Some(i),
                        format!(
                            "{}: compact_finished() returns COMPACT_CONTINUE after the scanners met (#{m})",
                            pid_name(exec, pid)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// Derived coverage: `abort-at-boundary`, compact_zone() returned COMPACT_CONTENDED from
/// `compact_finished()` with `migrate_pfn` pageblock-aligned.
pub fn aborts_at_boundary(exec: &Exec_) -> u64 {
    let Some(cfg) = config(exec) else { return 0 };
    exec.events
        .iter()
        .filter(|(_, e)| {
            matches!(*e, Ev::Proto(CE::CompactEnd { result: CompactResult::Contended, reason: Some(AbortReason::Contended), migrate_pfn, .. })
                if migrate_pfn.is_multiple_of(cfg.pages_per_block))
        })
        .count() as u64
}

// ---------------------------------------------------------------- the online form

/// The online form of every compaction invariant and of `abort-at-boundary` (module docs).
/// Masks are over pids; what a compactor's `compact_zone()` left is forgotten at its
/// `CompactEnd`, the last protocol event of its one `compact_zone()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct OnlineState {
    /// `finish-pageblock` and `abort-after-pageblock`: async compactors that recorded
    /// contention in their current `compact_zone()`.
    contended: u32,
    /// `finish-pageblock`: async compactors whose migration block scanner returned (an
    /// `IsolateMigrate`), and of those the ones whose last return was a pfn inside a
    /// pageblock (not 0 and not aligned).
    low_returned: u32,
    low_inside: u32,
    /// `sync-not-contended`: sync and sync-light compactors that saw a fatal signal.
    fatal_seen: u32,
    /// `scanners-ordered`: compactors whose scanners have met.
    met: u32,
    /// `scanners-ordered`: each task's last scanner positions (migrate_pfn, free_pfn), which
    /// its next isolation is judged against (sized to the scenario's threads at the first
    /// event). They are the compactor's own `cc->migrate_pfn` and `cc->free_pfn`.
    scanners: Vec<Option<(u32, u32)>>,
}

/// The parts of [`OnlineState`] the monitor projection may leave out (docs/model.md, "Monitor
/// projection"), each with the invariants that read it. `abort-at-boundary`, the derived
/// coverage, reads no part.
mod part {
    /// `contended`: `finish-pageblock` and `abort-after-pageblock`.
    pub const CONTENDED: u32 = 1;
    /// `low_returned` and `low_inside`: `finish-pageblock`.
    pub const LOW: u32 = 2;
    /// `fatal_seen`: `sync-not-contended`.
    pub const FATAL: u32 = 4;
    /// `met` and `scanners`: `scanners-ordered`.
    pub const SCANNERS: u32 = 8;
}

impl super::online::Online<Compaction> for OnlineState {
    fn projection(checked: &[Invariant]) -> u32 {
        super::online::projection(
            checked,
            &[
                (Invariant::FinishPageblock, part::CONTENDED | part::LOW),
                (Invariant::AbortAfterPageblock, part::CONTENDED),
                (Invariant::SyncNotContended, part::FATAL),
                (Invariant::ScannersOrdered, part::SCANNERS),
            ],
        )
    }
    fn project(&mut self, mask: u32) {
        if mask & part::CONTENDED != 0 {
            self.contended = 0;
        }
        if mask & part::LOW != 0 {
            self.low_returned = 0;
            self.low_inside = 0;
        }
        if mask & part::FATAL != 0 {
            self.fatal_seen = 0;
        }
        if mask & part::SCANNERS != 0 {
            self.met = 0;
            self.scanners.iter_mut().for_each(|s| *s = None);
        }
    }
    fn step(&mut self, cfg: &Config, pid: Pid, ev: &Ev<CE>, found: &mut Found<Compaction>) {
        super::online::step_common(ev, Some(Invariant::Progress), Some(Invariant::LockReleased), found);
        if self.scanners.len() < cfg.roles.len() {
            self.scanners.resize(cfg.roles.len(), None);
        }
        if pid >= self.scanners.len() {
            return;
        }
        let ppb = cfg.pages_per_block;
        let bit = 1u32 << pid;
        let mode = mode_of(cfg, pid);
        let is_async = mode == Some(Mode::Async);
        let is_sync = mode.is_some_and(|m| m != Mode::Async);
        let Ev::Proto(e) = ev else { return };
        match *e {
            CE::ContendedSet { why } => {
                if is_async {
                    self.contended |= bit;
                }
                if is_sync && (why != ContendedWhy::FatalSignal || self.fatal_seen & bit == 0) {
                    found.violated.push(Invariant::SyncNotContended);
                }
            }
            CE::ContendedCleared => found.violated.push(Invariant::ContendedMonotonic),
            CE::CompactStart { .. } => self.contended &= !bit,
            // One arm for both checks: with a guard on `contended` here, a compactor whose
            // scanners had met and that went on after an aligned contended pageblock was
            // judged by `abort-after-pageblock` only, and `scanners-ordered` (which the trace
            // form checks on its own) depended on `contended` (found by working out which
            // invariants read which part of this state).
            CE::CompactFinished { result: CompactResult::Continue, migrate_pfn } => {
                if is_async && self.contended & bit != 0 && migrate_pfn.is_multiple_of(ppb) {
                    found.violated.push(Invariant::AbortAfterPageblock);
                }
                if self.met & bit != 0 {
                    found.violated.push(Invariant::ScannersOrdered);
                }
            }
            CE::FatalSeen if is_sync => self.fatal_seen |= bit,
            CE::LockContended { .. } if is_sync => found.violated.push(Invariant::SyncNotContended),
            CE::IsolateMigrate { low_pfn, .. } if is_async => {
                self.low_returned |= bit;
                if low_pfn != 0 && !low_pfn.is_multiple_of(ppb) {
                    self.low_inside |= bit;
                } else {
                    self.low_inside &= !bit;
                }
            }
            CE::CompactEnd { result, reason, migrate_pfn, free_pfn } => {
                if result == CompactResult::Contended {
                    if reason == Some(AbortReason::Contended) && migrate_pfn.is_multiple_of(ppb) {
                        found.derived.push(C::AbortAtBoundary);
                    }
                    if is_async && self.contended & bit != 0 {
                        let inside = match reason {
                            Some(AbortReason::IsolateAbort) => {
                                if self.low_returned & bit != 0 {
                                    self.low_inside & bit != 0
                                } else {
                                    migrate_pfn != 0 && !migrate_pfn.is_multiple_of(ppb)
                                }
                            }
                            Some(AbortReason::NoMemory) if free_pfn / ppb > migrate_pfn / ppb => false,
                            _ => !migrate_pfn.is_multiple_of(ppb),
                        };
                        if inside {
                            found.violated.push(Invariant::FinishPageblock);
                        }
                    }
                }
                // Its compact_zone() is over: forget it.
                for mask in [&mut self.contended, &mut self.low_returned, &mut self.low_inside, &mut self.fatal_seen] {
                    *mask &= !bit;
                }
                self.met &= !bit;
                self.scanners[pid] = None;
            }
            CE::ScannerAt { migrate_pfn, free_pfn } => {
                self.scanners[pid] = Some((migrate_pfn, free_pfn));
                if free_pfn / ppb <= migrate_pfn / ppb {
                    self.met |= bit;
                } else if migrate_pfn > free_pfn {
                    // As in `scanners_ordered`; unreachable, since scanners that have not met
                    // have free_pfn in a higher pageblock than migrate_pfn.
                    found.violated.push(Invariant::ScannersOrdered);
                }
            }
            CE::Isolated { free, pfn, .. } => {
                if let Some((migrate_pfn, free_pfn)) = self.scanners[pid] {
                    let low = (migrate_pfn / ppb + 1) * ppb;
                    let crossed = if free { pfn < low } else { pfn >= free_pfn };
                    if crossed || self.met & bit != 0 {
                        found.violated.push(Invariant::ScannersOrdered);
                    }
                }
            }
            _ => {}
        }
    }

    fn end(&self, _cfg: &Config, _fin: &(), _found: &mut Found<Compaction>) {}
}

#[cfg(test)]
mod tests {
    //! Each compaction monitor on hand-written traces: a trace that violates it, and a near
    //! miss that holds.

    use mmmodel::compaction::{
        AbortReason, CompactResult, Compaction, Config, ContendedWhy, Event as CE, IsolateMigrate, Mode, Order, Role,
        Variant, LRU_LOCK,
    };
    use mmmodel::event::{Event as Ev, KernelEvent as K};

    use crate::monitor::{online, Checked, Exec, Violation};

    const LOCK_RELEASED: fn(&Exec<Compaction>) -> Vec<Violation> =
        |e| crate::monitor::lock_released(e, mmmodel::compaction::Invariant::LockReleased);

    /// T0 compacts asynchronously, T1 in sync-light mode; 2 pageblocks of 4 pages, pfns 4..12.
    fn cfg() -> Config {
        Config {
            variant: Variant::FinishcontendV3,
            mutation: None,
            roles: vec![Role::compactor(Mode::Async), Role::compactor(Mode::SyncLight)],
            pageblocks: 2,
            pages_per_block: 4,
            swap_cluster_max: 2,
            compact_cluster_max: 1,
            unmovable_per_block: 0,
        }
    }

    /// Monitor `f` on a trace; every trace a test checks is also run through the online form,
    /// which must agree with the trace form on it.
    fn check(events: Vec<(usize, Ev<CE>)>, f: fn(&Exec<Compaction>) -> Vec<Violation>) -> Vec<Violation> {
        let cfg = cfg();
        let exec = Exec { cfg: &cfg, events: &events, fin: &() };
        verdicts(&events);
        f(&exec)
    }

    /// The invariants violated by a trace and its `abort-at-boundary` count, after requiring
    /// that the online and trace forms agree on both.
    fn verdicts(events: &[(usize, Ev<CE>)]) -> (Vec<&'static str>, u64) {
        let cfg = cfg();
        let exec = Exec::<Compaction> { cfg: &cfg, events, fin: &() };
        let ids: Vec<_> = Compaction::INVARIANTS.iter().map(|i| i.id).collect();
        if let Err(e) = online::agree(&exec, &ids) {
            panic!("{e}\non {events:#?}");
        }
        let (violated, derived) = online::run(&exec, &ids);
        (violated, derived.get("abort-at-boundary").copied().unwrap_or(0))
    }

    fn p(e: CE) -> Ev<CE> {
        Ev::Proto(e)
    }

    fn end(reason: AbortReason, migrate_pfn: u32, free_pfn: u32) -> Ev<CE> {
        p(CE::CompactEnd { result: CompactResult::Contended, reason: Some(reason), migrate_pfn, free_pfn })
    }

    #[test]
    fn finish_pageblock_wants_the_abort_at_a_pageblock_boundary() {
        let contended = (0, p(CE::ContendedSet { why: ContendedWhy::Lock }));
        let mid_block = vec![contended.clone(), (0, end(AbortReason::Contended, 6, 8))];
        let v = check(mid_block, super::finish_pageblock);
        assert_eq!(v.len(), 1);
        assert!(v[0].message.contains("inside pageblock 1"), "{}", v[0].message);
        // Near miss: the same abort at the next boundary.
        assert!(
            check(vec![contended.clone(), (0, end(AbortReason::Contended, 8, 8))], super::finish_pageblock).is_empty()
        );
        // ISOLATE_ABORT: only the block scanner's 0 (the fatal-signal fix) is an exception.
        let abort_at = |low_pfn| {
            vec![
                contended.clone(),
                (0, p(CE::IsolateMigrate { result: IsolateMigrate::Abort, low_pfn })),
                (0, end(AbortReason::IsolateAbort, 4, 8)),
            ]
        };
        assert_eq!(check(abort_at(6), super::finish_pageblock).len(), 1);
        assert!(check(abort_at(0), super::finish_pageblock).is_empty());
        // Sync compaction is not constrained.
        assert!(check(
            vec![(1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal })), (1, end(AbortReason::Contended, 6, 8))],
            super::finish_pageblock
        )
        .is_empty());
    }

    #[test]
    fn abort_after_pageblock_forbids_going_on_into_a_new_pageblock_once_contended() {
        let f = super::abort_after_pageblock;
        let fin = |pid, result, migrate_pfn| (pid, p(CE::CompactFinished { result, migrate_pfn }));
        let start = |pid, mode| (pid, p(CE::CompactStart { mode, order: Order::Pageblock }));
        let contended = (0, p(CE::ContendedSet { why: ContendedWhy::Lock }));
        // Violated: contended in pageblock 1, then COMPACT_CONTINUE at the aligned pfn 8.
        let v = check(vec![start(0, Mode::Async), contended.clone(), fin(0, CompactResult::Continue, 8)], f);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].at, Some(2));
        assert!(
            v[0].message.contains("pageblock-aligned migrate_pfn 8") && v[0].message.contains("(#1)"),
            "{}",
            v[0].message
        );
        // Near misses: COMPACT_CONTINUE at an unaligned pfn (finishing the pageblock) ...
        assert!(check(vec![contended.clone(), fin(0, CompactResult::Continue, 6)], f).is_empty());
        // ... the abort at the aligned pfn, or the scanners met / a free page there ...
        for r in [CompactResult::Contended, CompactResult::Complete, CompactResult::Success] {
            assert!(check(vec![contended.clone(), fin(0, r, 8)], f).is_empty(), "{r:?}");
        }
        // ... COMPACT_CONTINUE at an aligned pfn before the contention was recorded ...
        assert!(check(
            vec![fin(0, CompactResult::Continue, 4), contended.clone(), fin(0, CompactResult::Continue, 6)],
            f
        )
        .is_empty());
        // ... a sync compactor (its cc->contended means a fatal signal; not judged) ...
        assert!(check(
            vec![(1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal })), fin(1, CompactResult::Continue, 8)],
            f
        )
        .is_empty());
        // ... another compactor's contention ...
        let mut two = cfg();
        two.roles = vec![Role::compactor(Mode::Async), Role::compactor(Mode::Async)];
        let events = vec![contended.clone(), fin(1, CompactResult::Continue, 8)];
        assert!(f(&Exec { cfg: &two, events: &events, fin: &() }).is_empty());
        // ... and contention of an earlier compact_zone() of the same task.
        assert!(check(vec![contended.clone(), start(0, Mode::Async), fin(0, CompactResult::Continue, 8)], f).is_empty());
        // A cleared cc->contended (contended-monotonic's bug) does not excuse it: it was recorded.
        let cleared = vec![contended, (0, p(CE::ContendedCleared)), fin(0, CompactResult::Continue, 8)];
        assert_eq!(check(cleared, f).len(), 1);
    }

    #[test]
    fn lock_released_catches_a_leak_and_a_recursion() {
        assert_eq!(check(vec![(0, Ev::Kernel(K::LockLeaked { lock: LRU_LOCK }))], LOCK_RELEASED).len(), 1);
        assert_eq!(check(vec![(0, Ev::Kernel(K::LockRecursion { lock: LRU_LOCK }))], LOCK_RELEASED).len(), 1);
        let paired = vec![
            (0, Ev::Kernel(K::LockAcquired { lock: LRU_LOCK, trylock: true })),
            (0, Ev::Kernel(K::LockReleased { lock: LRU_LOCK })),
        ];
        assert!(check(paired, LOCK_RELEASED).is_empty());
    }

    #[test]
    fn contended_monotonic_catches_a_cleared_contention() {
        let set = (0, p(CE::ContendedSet { why: ContendedWhy::Lock }));
        let v = check(vec![set.clone(), (0, p(CE::ContendedCleared))], super::contended_monotonic);
        assert_eq!(v.len(), 1);
        assert!(v[0].message.contains("set at #0"), "{}", v[0].message);
        assert!(check(vec![set, (0, end(AbortReason::Contended, 8, 8))], super::contended_monotonic).is_empty());
    }

    #[test]
    fn sync_not_contended_allows_only_a_fatal_signal_it_saw() {
        let trylock = vec![(1, p(CE::LockContended { lock: LRU_LOCK }))];
        assert_eq!(check(trylock, super::sync_not_contended).len(), 1);
        let unseen = vec![(1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal }))];
        assert_eq!(check(unseen, super::sync_not_contended).len(), 1);
        let resched = vec![(1, p(CE::ReschedSeen)), (1, p(CE::ContendedSet { why: ContendedWhy::NeedResched }))];
        assert_eq!(check(resched, super::sync_not_contended).len(), 1);
        let seen = vec![(1, p(CE::FatalSeen)), (1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal }))];
        assert!(check(seen, super::sync_not_contended).is_empty());
        // Async compaction may trylock and record lock contention.
        let async_ =
            vec![(0, p(CE::LockContended { lock: LRU_LOCK })), (0, p(CE::ContendedSet { why: ContendedWhy::Lock }))];
        assert!(check(async_, super::sync_not_contended).is_empty());
    }

    #[test]
    fn scanners_ordered_catches_crossing_scanners_and_going_on_after_they_met() {
        let at = |migrate_pfn, free_pfn| (0, p(CE::ScannerAt { migrate_pfn, free_pfn }));
        let iso = |free, pfn| (0, p(CE::Isolated { free, pfn, pages: 1 }));
        // The migration scanner at or above the free scanner.
        assert_eq!(check(vec![at(4, 8), iso(false, 9)], super::scanners_ordered).len(), 1);
        assert!(check(vec![at(4, 8), iso(false, 5)], super::scanners_ordered).is_empty());
        // The free scanner inside the migration scanner's pageblock.
        assert_eq!(check(vec![at(4, 8), iso(true, 6)], super::scanners_ordered).len(), 1);
        assert!(check(vec![at(4, 8), iso(true, 8)], super::scanners_ordered).is_empty());
        // After the scanners met, compact_finished() must end the run.
        let cont = (0, p(CE::CompactFinished { result: CompactResult::Continue, migrate_pfn: 8 }));
        assert_eq!(check(vec![at(8, 8), cont], super::scanners_ordered).len(), 1);
        let complete = (0, p(CE::CompactFinished { result: CompactResult::Complete, migrate_pfn: 8 }));
        assert!(check(vec![at(8, 8), complete], super::scanners_ordered).is_empty());
    }

    #[test]
    fn progress_reports_the_ghosts_livelock_only() {
        let f: fn(&Exec<Compaction>) -> Vec<Violation> =
            |e| super::super::progress(e, mmmodel::compaction::Invariant::Progress);
        assert_eq!(check(vec![(0, Ev::Kernel(K::Livelock { period: 1 }))], f).len(), 1);
        assert!(check(vec![(0, p(CE::NoProgressIteration { migrate_pfn: 6 }))], f).is_empty());
    }

    // ------------------------------------------------------------ the online form's own traces

    /// An async compactor that recorded contention, whose scanners met, and that goes on after
    /// an aligned pageblock breaks two invariants at one event: the online form judged it by
    /// `abort-after-pageblock` alone until that check and `scanners-ordered`'s were one arm
    /// (`verdicts` requires the online form to agree with the trace form, which reports both).
    #[test]
    fn going_on_after_contention_and_after_the_scanners_met_breaks_both() {
        let events = [
            (0, p(CE::ContendedSet { why: ContendedWhy::Lock })),
            (0, p(CE::ScannerAt { migrate_pfn: 8, free_pfn: 8 })),
            (0, p(CE::CompactFinished { result: CompactResult::Continue, migrate_pfn: 8 })),
        ];
        assert_eq!(verdicts(&events).0, ["abort-after-pageblock", "scanners-ordered"]);
    }

    #[test]
    fn online_finish_pageblock_and_abort_at_boundary() {
        let contended = (0, p(CE::ContendedSet { why: ContendedWhy::Lock }));
        // An abort at a boundary is counted (any compactor), and violates nothing.
        assert_eq!(verdicts(&[contended.clone(), (0, end(AbortReason::Contended, 8, 12))]), (vec![], 1));
        assert_eq!(verdicts(&[(1, end(AbortReason::Contended, 8, 12))]), (vec![], 1));
        assert_eq!(
            verdicts(&[contended.clone(), (0, end(AbortReason::Contended, 6, 12))]),
            (vec!["finish-pageblock"], 0)
        );
        // Without recorded contention nothing is claimed.
        assert_eq!(verdicts(&[(0, end(AbortReason::Contended, 6, 12))]), (vec![], 0));
        // ISOLATE_ABORT with no block-scanner return: migrate_pfn decides.
        assert_eq!(verdicts(&[contended.clone(), (0, end(AbortReason::IsolateAbort, 6, 12))]).0, ["finish-pageblock"]);
        assert!(verdicts(&[contended.clone(), (0, end(AbortReason::IsolateAbort, 8, 12))]).0.is_empty());
        // The last block-scanner return decides, not an earlier one.
        let returns = |first, last| {
            vec![
                contended.clone(),
                (0, p(CE::IsolateMigrate { result: IsolateMigrate::Success, low_pfn: first })),
                (0, p(CE::IsolateMigrate { result: IsolateMigrate::Abort, low_pfn: last })),
                (0, end(AbortReason::IsolateAbort, 6, 12)),
            ]
        };
        assert!(verdicts(&returns(6, 0)).0.is_empty());
        assert_eq!(verdicts(&returns(0, 6)).0, ["finish-pageblock"]);
        // -ENOMEM: excused while the scanners have not met, not after.
        assert!(verdicts(&[contended.clone(), (0, end(AbortReason::NoMemory, 5, 8))]).0.is_empty());
        assert_eq!(verdicts(&[contended, (0, end(AbortReason::NoMemory, 5, 4))]).0, ["finish-pageblock"]);
    }

    #[test]
    fn online_scanners_ordered_after_they_met() {
        let at = |migrate_pfn, free_pfn| (0, p(CE::ScannerAt { migrate_pfn, free_pfn }));
        let iso = |free, pfn| (0, p(CE::Isolated { free, pfn, pages: 1 }));
        // Met, then an isolation that would be in order otherwise.
        assert_eq!(verdicts(&[at(4, 8), at(8, 8), iso(true, 12)]).0, ["scanners-ordered"]);
        assert!(verdicts(&[at(4, 8), iso(true, 8), at(8, 8)]).0.is_empty());
        // No position yet: an isolation is not judged.
        assert!(verdicts(&[iso(false, 11)]).0.is_empty());
        // Another compactor's positions are its own.
        assert!(verdicts(&[
            at(8, 8),
            (1, p(CE::ScannerAt { migrate_pfn: 4, free_pfn: 8 })),
            (1, p(CE::Isolated { free: false, pfn: 5, pages: 1 }))
        ])
        .0
        .is_empty());
    }

    #[test]
    fn online_sync_not_contended_per_task() {
        // A fatal signal seen by the async compactor does not excuse the sync one.
        let ev = vec![(0, p(CE::FatalSeen)), (1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal }))];
        assert_eq!(verdicts(&ev).0, ["sync-not-contended"]);
        // Lock holders and killers are no compactors.
        let own_signal = vec![(1, p(CE::FatalSeen)), (1, p(CE::ContendedSet { why: ContendedWhy::FatalSignal }))];
        assert!(verdicts(&own_signal).0.is_empty());
    }
}
