//! Monitors of the compaction model (cb2dcaf023 "mm, compaction: finish pageblock scanning on
//! contention" and the versions around it).
//!
//! Every monitor is a function of one execution's events; the scanner positions and the
//! compactor's `cc->contended` are reported by the model as events (`ScannerAt`,
//! `ContendedSet`, `ContendedCleared`), because `compact_control` is private to its task.

use mmmodel::compaction::{Config, Mode};
use mmmodel::event::{AbortReason, CompactResult, Event};
use mmmodel::ghost::Pid;
use mmmodel::mutation::ModelKind;

use super::{pid_name, Exec, Invariant, Violation};
use crate::spec::ModelSpec;

pub static INVARIANTS: &[Invariant] = &[
    Invariant {
        id: "progress",
        model: ModelKind::Compaction,
        statement: "compact_zone() ends within the step bound in every interleaving, a fatal signal included: its loop \
                    never returns to a state it was in with nobody left to change anything.",
        check: super::progress,
    },
    Invariant {
        id: "finish-pageblock",
        model: ModelKind::Compaction,
        statement: "Once cc->contended is recorded, async compaction aborts (COMPACT_CONTENDED) only with the migration \
                    scanner at a pageblock-aligned pfn, or for the documented exceptions: ISOLATE_ABORT because the \
                    block scanner returned 0, -ENOMEM with the scanners not met, the scanners met, a suitable page free.",
        check: finish_pageblock,
    },
    Invariant {
        id: "lock-released",
        model: ModelKind::Compaction,
        statement: "No thread ends holding lru_lock or zone->lock (on any exit path of the block scanners), or takes a \
                    lock it already holds.",
        check: super::lock_released,
    },
    Invariant {
        id: "contended-monotonic",
        model: ModelKind::Compaction,
        statement: "cc->contended never goes back from true to false within one compact_zone().",
        check: contended_monotonic,
    },
    Invariant {
        id: "sync-not-contended",
        model: ModelKind::Compaction,
        statement: "Sync and sync-light compaction never trylock and set cc->contended only for a fatal signal they saw.",
        check: sync_not_contended,
    },
    Invariant {
        id: "scanners-ordered",
        model: ModelKind::Compaction,
        statement: "The migration scanner isolates only below the free scanner and the free scanner only above the \
                    migration scanner's pageblock (so migrate_pfn <= free_pfn until they meet), and once they meet the \
                    next compact_finished() ends the run, with no isolation in between.",
        check: scanners_ordered,
    },
];

fn config<'a>(exec: &'a Exec) -> Option<&'a Config> {
    match exec.model {
        ModelSpec::Compaction(c) => Some(c),
        _ => None,
    }
}

fn mode_of(cfg: &Config, pid: Pid) -> Option<Mode> {
    cfg.roles.get(pid).and_then(|r| r.mode())
}

fn finish_pageblock(exec: &Exec) -> Vec<Violation> {
    let Some(cfg) = config(exec) else { return Vec::new() };
    let ppb = cfg.pages_per_block;
    let n = cfg.roles.len();
    let mut contended_at: Vec<Option<usize>> = vec![None; n];
    let mut last_low_pfn: Vec<Option<u32>> = vec![None; n];
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let pid = *pid;
        match *e {
            Event::ContendedSet { .. } => {
                contended_at[pid] = contended_at[pid].or(Some(i));
            }
            Event::IsolateMigrate { low_pfn, .. } => last_low_pfn[pid] = Some(low_pfn),
            Event::CompactEnd { result: CompactResult::Contended, reason, migrate_pfn, free_pfn } => {
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
                                "finish-pageblock",
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
                                "finish-pageblock",
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

fn contended_monotonic(exec: &Exec) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut set_at: Vec<Option<usize>> = vec![None; exec.model.tasks()];
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match e {
            Event::ContendedSet { .. } => set_at[*pid] = Some(i),
            Event::ContendedCleared => out.push(Violation::new(
                "contended-monotonic",
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

fn sync_not_contended(exec: &Exec) -> Vec<Violation> {
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
            Event::FatalSeen => fatal_seen[pid] = true,
            Event::LockContended { lock } => out.push(Violation::new(
                "sync-not-contended",
                Some(i),
                format!("{} trylocked {lock:?} and recorded its contention: only async compaction trylocks", pid_name(exec, pid)),
            )),
            Event::ContendedSet { why } if why != "fatal signal" || !fatal_seen[pid] => out.push(Violation::new(
                "sync-not-contended",
                Some(i),
                format!(
                    "{} sets cc->contended for \"{why}\"{}: {} compaction records only fatal signals",
                    pid_name(exec, pid),
                    if why == "fatal signal" { " without having seen a fatal signal" } else { "" },
                    mode.name()
                ),
            )),
            _ => {}
        }
    }
    out
}

fn scanners_ordered(exec: &Exec) -> Vec<Violation> {
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
            Event::ScannerAt { migrate_pfn, free_pfn } => {
                pos[pid] = Some((migrate_pfn, free_pfn));
                let met = free_pfn / ppb <= migrate_pfn / ppb;
                if met {
                    met_at[pid] = met_at[pid].or(Some(i));
                } else if migrate_pfn > free_pfn {
                    out.push(Violation::new(
                        "scanners-ordered",
                        Some(i),
                        format!("{}: migrate_pfn {migrate_pfn} > free_pfn {free_pfn} before the scanners met", pid_name(exec, pid)),
                    ));
                }
            }
            Event::Isolated { free, pfn, .. } => {
                let Some((migrate_pfn, free_pfn)) = pos[pid] else { continue };
                let low = (migrate_pfn / ppb + 1) * ppb;
                if !free && pfn >= free_pfn {
                    out.push(Violation::new(
                        "scanners-ordered",
                        Some(i),
                        format!(
                            "{}: the migration scanner isolates pfn {pfn}, at or above the free scanner (free_pfn {free_pfn})",
                            pid_name(exec, pid)
                        ),
                    ));
                } else if free && pfn < low {
                    out.push(Violation::new(
                        "scanners-ordered",
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
                        "scanners-ordered",
                        Some(i),
                        format!(
                            "{} isolates pfn {pfn} ({} scanner) after the scanners met (#{m}): meeting must end the run",
                            pid_name(exec, pid),
                            if free { "free" } else { "migration" }
                        ),
                    ));
                }
            }
            Event::CompactFinished { result: CompactResult::Continue, .. } => {
                if let Some(m) = met_at[pid] {
                    out.push(Violation::new(
                        "scanners-ordered",
                        Some(i),
                        format!("{}: compact_finished() returns COMPACT_CONTINUE after the scanners met (#{m})", pid_name(exec, pid)),
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
pub fn aborts_at_boundary(exec: &Exec) -> u64 {
    let Some(cfg) = config(exec) else { return 0 };
    exec.events
        .iter()
        .filter(|(_, e)| {
            matches!(*e, Event::CompactEnd { result: CompactResult::Contended, reason: Some(AbortReason::Contended), migrate_pfn, .. }
                if migrate_pfn.is_multiple_of(cfg.pages_per_block))
        })
        .count() as u64
}
