//! Monitors of the kswapd-stall model (docs/invariants.md, part 1).

use std::collections::BTreeMap;

use mmmodel::event::{Event as Ev, KernelEvent as K, Wq, NUMA_NO_NODE};
use mmmodel::ghost::Pid;
use mmmodel::model::Named;
use mmmodel::reclaim::{
    Coverage as C, Event as R, Invariant, KswapdStall, Role, CONGESTION_WQH, KSWAPD_CONTENDED_WAIT, TREE_LOCK,
};

use super::{Checked, Exec, Violation};

type Exec_<'a> = Exec<'a, KswapdStall>;

impl Checked for KswapdStall {
    const INVARIANTS: &'static [super::Invariant<Self>] = &[
        super::Invariant {
            id: Invariant::SingleExclusive,
            statement: "At most one kswapd is exclusive; kswapd_exclusive is set only by a winning cmpxchg from \
                        NUMA_NO_NODE and cleared only by its own node's balanced path.",
            exercised_by: &[C::CmpxchgWon, C::CmpxchgLost],
            check: single_exclusive,
        },
        super::Invariant {
            id: Invariant::ExclusiveNeverWaits,
            statement: "The exclusive kswapd never queues itself on kswapd_contended_wait.",
            exercised_by: &[C::CmpxchgWon, C::Enqueued],
            check: exclusive_never_waits,
        },
        super::Invariant {
            id: Invariant::StallOnce,
            statement:
                "A kswapd whose trylock failed stalls at most once, then takes tree_lock with a blocking spin_lock.",
            exercised_by: &[C::CmpxchgLost, C::Enqueued],
            check: stall_once,
        },
        super::Invariant {
            id: Invariant::NoLostWakeup,
            statement:
                "No sleeper misses the wake-up it waits for: none sleeps when the release (or un-congestion) it \
                        waits for happened before it queued itself, none stays asleep through a release that happened \
                        while it was queued, and (timer `never`) none sleeps with nobody left to wake it.",
            exercised_by: &[C::Enqueued, C::WakeEmptyQueue],
            check: no_lost_wakeup,
        },
        super::Invariant {
            id: Invariant::ExclusiveReleased,
            statement:
                "Every claim of kswapd_exclusive is released: no kswapd sleeps for an owner that never releases, and \
                        kswapd_exclusive is NUMA_NO_NODE once every thread has finished.",
            exercised_by: &[C::CmpxchgWon, C::Released],
            check: exclusive_released,
        },
        super::Invariant {
            id: Invariant::Progress,
            statement:
                "Every thread finishes within the step bound: no loop repeats a state with nobody left to change it.",
            exercised_by: &[C::TrylockFailed],
            check: |e| super::progress(e, Invariant::Progress),
        },
        super::Invariant {
            id: Invariant::CongestedCleared,
            statement: "No direct reclaimer sleeps in a congestion stall for a node that it queued for (on \
                        congestion_wqh) after that node's balanced path cleared PGDAT_CONGESTED with no new set in \
                        between; and once every thread has finished, PGDAT_CONGESTED is clear on every node whose last \
                        balanced path came after its last set. A stall queued before the clear is not covered: clearing \
                        the tag wakes nobody.",
            exercised_by: &[C::CongestedSet, C::CongestedCleared, C::DirectStall],
            check: congested_cleared,
        },
        super::Invariant {
            id: Invariant::LockReleased,
            statement: "No thread ends holding a lock, or takes a lock it already holds.",
            exercised_by: &[C::TrylockFailed],
            check: |e| super::lock_released(e, Invariant::LockReleased),
        },
    ];

    const PROGRESS: Invariant = Invariant::Progress;
    type Online = super::online::Pending;

    /// `lost-wakeups`: the iteration's lost wake-ups.
    fn violation_counters(violations: &[Violation], out: &mut mmmodel::model::Counters) {
        let n = violations.iter().filter(|v| v.invariant == Invariant::NoLostWakeup.name()).count();
        out.insert("lost-wakeups".into(), n as f64);
    }

    fn derived_coverage(exec: &Exec_, cov: &mut BTreeMap<&'static str, u64>) {
        let n = slept_after_release(exec);
        if n > 0 {
            cov.insert(C::SleptAfterRelease.name(), n);
        }
    }
}

fn pid_name(exec: &Exec_, pid: Pid) -> String {
    exec.pid_name(pid)
}

fn roles<'a>(exec: &'a Exec_) -> &'a [Role] {
    &exec.cfg.roles
}

fn node_of(exec: &Exec_, pid: Pid) -> Option<i32> {
    roles(exec).get(pid).and_then(Role::node)
}

/// The exclusive owner before each event (index-aligned), as the trace says it changed.
fn owners(exec: &Exec_) -> Vec<i32> {
    let mut owner = NUMA_NO_NODE;
    let mut v = Vec::with_capacity(exec.events.len());
    for (_, e) in exec.events {
        v.push(owner);
        match *e {
            Ev::Proto(R::CmpxchgWon { node, .. }) => owner = node,
            Ev::Proto(R::Released { node, prev }) if node == prev => owner = NUMA_NO_NODE,
            _ => {}
        }
    }
    v
}

fn single_exclusive(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut owner = NUMA_NO_NODE;
    let mut balanced_by: Vec<(Pid, i32)> = Vec::new(); // (pid, node) inside zone_balanced
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        match *e {
            Ev::Proto(R::ZoneBalanced { node, .. }) => balanced_by.push((*pid, node)),
            Ev::Proto(R::CmpxchgWon { node, prev }) => {
                if prev != NUMA_NO_NODE || owner != NUMA_NO_NODE {
                    let other = if prev != NUMA_NO_NODE { prev } else { owner };
                    out.push(Violation::new(
                        Invariant::SingleExclusive,
                        Some(i),
                        format!(
                            "{} claims kswapd_exclusive for node {node} while node {other} is exclusive: two kswapds \
                             both believe they are exclusive",
                            pid_name(exec, *pid)
                        ),
                    ));
                }
                owner = node;
            }
            Ev::Proto(R::Released { node, prev }) if node == prev => {
                if !balanced_by.contains(&(*pid, node)) {
                    out.push(Violation::new(
                        Invariant::SingleExclusive,
                        Some(i),
                        format!("{} resets kswapd_exclusive outside node {node}'s balanced path", pid_name(exec, *pid)),
                    ));
                }
                owner = NUMA_NO_NODE;
            }
            _ => {}
        }
    }
    let fin = exec.fin;
    if out.is_empty() && fin.kswapd_exclusive != owner {
        out.push(Violation::new(
            Invariant::SingleExclusive,
            None,
            format!(
                "kswapd_exclusive ends as {} but the trace's claims and releases leave {}: it was changed by \
                 something other than a cmpxchg",
                fin.kswapd_exclusive, owner
            ),
        ));
    }
    out
}

fn exclusive_never_waits(exec: &Exec_) -> Vec<Violation> {
    let own = owners(exec);
    let mut out = Vec::new();
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        if let Ev::Kernel(K::Enqueued { wq: KSWAPD_CONTENDED_WAIT }) = e {
            if let Some(n) = node_of(exec, *pid) {
                if own[i] == n {
                    out.push(Violation::new(
                        Invariant::ExclusiveNeverWaits,
                        Some(i),
                        format!(
                            "{} is the exclusive kswapd (node {n}) and queues itself on kswapd_contended_wait: it waits \
                             for its own release",
                            pid_name(exec, *pid)
                        ),
                    ));
                }
            }
        }
    }
    out
}

fn stall_once(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    for pid in 0..exec.tasks() {
        // (index of the failed trylock, stalls since)
        let mut open: Option<(usize, u32)> = None;
        for (i, (p, e)) in exec.events.iter().enumerate() {
            if *p != pid {
                continue;
            }
            match e {
                Ev::Kernel(K::TrylockFailed { lock: TREE_LOCK }) => open = Some((i, 0)),
                Ev::Kernel(K::Enqueued { wq: KSWAPD_CONTENDED_WAIT }) => {
                    if let Some((at, n)) = open.as_mut() {
                        *n += 1;
                        if *n == 2 {
                            out.push(Violation::new(
                                Invariant::StallOnce,
                                Some(i),
                                format!(
                                    "{} stalls a second time for the tree_lock acquisition that failed at #{}",
                                    pid_name(exec, pid),
                                    *at
                                ),
                            ));
                        }
                    }
                }
                Ev::Kernel(K::LockAcquired { lock: TREE_LOCK, trylock }) => {
                    if let Some((at, _)) = open.take() {
                        if *trylock {
                            out.push(Violation::new(
                                Invariant::StallOnce,
                                Some(i),
                                format!(
                                    "{} trylocks again after the failure at #{at} instead of spinning",
                                    pid_name(exec, pid)
                                ),
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some((at, _)) = open {
            out.push(Violation::new(
                Invariant::StallOnce,
                Some(at),
                format!("{} never takes tree_lock after its trylock failed at #{at}", pid_name(exec, pid)),
            ));
        }
    }
    out
}

/// One sleep of one task: where it decided, queued, slept and how it ended.
struct Sleep {
    pid: Pid,
    wq: Wq,
    /// The event that made it wait: its failed cmpxchg (with the owner) or its congestion check.
    decided: usize,
    owner: i32,
    enqueued: usize,
    /// `Schedule` (it slept).
    slept: usize,
    /// `TimedOut`, `Woken` or `SleptForever`, with the index.
    end: Option<(usize, SleepEnd)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SleepEnd {
    Woken,
    TimedOut(u64),
    Forever,
}

fn sleeps(exec: &Exec_) -> Vec<Sleep> {
    let mut out = Vec::new();
    for pid in 0..exec.tasks() {
        let mut decided: Option<(usize, i32)> = None;
        let mut enqueued: Option<(usize, Wq)> = None;
        let mut current: Option<Sleep> = None;
        for (i, (p, e)) in exec.events.iter().enumerate() {
            if *p != pid {
                continue;
            }
            match *e {
                Ev::Proto(R::CmpxchgLost { owner, .. }) => decided = Some((i, owner)),
                Ev::Proto(R::CongestionCheck { congested: true, .. }) => decided = Some((i, NUMA_NO_NODE)),
                Ev::Kernel(K::Enqueued { wq }) => enqueued = Some((i, wq)),
                Ev::Kernel(K::Schedule { .. }) => {
                    if let (Some((d, owner)), Some((q, wq))) = (decided, enqueued) {
                        current = Some(Sleep { pid, wq, decided: d, owner, enqueued: q, slept: i, end: None });
                    }
                }
                Ev::Kernel(K::Woken) | Ev::Kernel(K::TimedOut { .. }) | Ev::Kernel(K::SleptForever) => {
                    if let Some(mut s) = current.take() {
                        let end = match *e {
                            Ev::Kernel(K::Woken) => SleepEnd::Woken,
                            Ev::Kernel(K::TimedOut { jiffies }) => SleepEnd::TimedOut(jiffies),
                            _ => SleepEnd::Forever,
                        };
                        s.end = Some((i, end));
                        out.push(s);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The first event after `from` that ends what `s` waits for: the owner's release
/// (kswapd_contended_wait) or the un-congestion that brings `nr_wb_congested` to zero
/// (congestion_wqh). With `any_uncongest`, every un-congestion counts (each one wakes the queue).
fn release_after(exec: &Exec_, s: &Sleep, from: usize, any_uncongest: bool) -> Option<(usize, Pid)> {
    match s.wq {
        KSWAPD_CONTENDED_WAIT => exec.events.iter().enumerate().skip(from + 1).find_map(|(i, (p, e))| match *e {
            Ev::Proto(R::Released { node, prev }) if node == prev && node == s.owner => Some((i, *p)),
            _ => None,
        }),
        _ => {
            let mut count = initial_congested(exec);
            for (i, (p, e)) in exec.events.iter().enumerate() {
                match e {
                    Ev::Proto(R::WbCongested) => count += 1,
                    Ev::Proto(R::WbUncongested) => {
                        count -= 1;
                        if i > from && (count == 0 || any_uncongest) {
                            return Some((i, *p));
                        }
                    }
                    _ => {}
                }
            }
            None
        }
    }
}

/// The release `s` waits for, if it happened before `s` queued itself: for the kswapd queue,
/// the owner's release after the failed cmpxchg; for the congestion queue, the last
/// un-congestion before the enqueue that left no backing device congested.
fn released_before_enqueue(exec: &Exec_, s: &Sleep) -> Option<(usize, Pid)> {
    match s.wq {
        KSWAPD_CONTENDED_WAIT => release_after(exec, s, s.decided, false).filter(|(r, _)| *r < s.enqueued),
        _ => {
            let mut count = initial_congested(exec);
            let mut last_zero = None;
            for (i, (p, e)) in exec.events.iter().enumerate().take(s.enqueued) {
                match e {
                    Ev::Proto(R::WbCongested) => {
                        count += 1;
                        last_zero = None;
                    }
                    Ev::Proto(R::WbUncongested) => {
                        count -= 1;
                        if count == 0 {
                            last_zero = Some((i, *p));
                        }
                    }
                    _ => {}
                }
            }
            last_zero
        }
    }
}

/// `nr_wb_congested` just before event `at`, in trace order.
fn wb_congested_before(exec: &Exec_, at: usize) -> i64 {
    initial_congested(exec)
        + exec.events[..at]
            .iter()
            .map(|(_, e)| match e {
                Ev::Proto(R::WbCongested) => 1,
                Ev::Proto(R::WbUncongested) => -1,
                _ => 0,
            })
            .sum::<i64>()
}

fn initial_congested(exec: &Exec_) -> i64 {
    roles(exec).iter().filter(|r| matches!(r, Role::Bdi { congested_at_start: true })).count() as i64
}

/// The releaser's wake-queue scan after `at` (its `wake_up*` or a skipped one), if any.
fn wake_scan_after(exec: &Exec_, waker: Pid, wq: Wq, at: usize) -> Option<(usize, u32)> {
    exec.events.iter().enumerate().skip(at + 1).find_map(|(i, (p, e))| match *e {
        Ev::Kernel(K::WakeUp { wq: w, woken, .. }) if *p == waker && w == wq => Some((i, woken)),
        Ev::Kernel(K::WakeSkipped { wq: w }) if *p == waker && w == wq => Some((i, 0)),
        _ => None,
    })
}

fn what_released(s: &Sleep) -> String {
    match s.wq {
        KSWAPD_CONTENDED_WAIT => format!("node {}'s release of kswapd_exclusive", s.owner),
        _ => "the backing device's un-congestion".to_string(),
    }
}

fn wq_name(w: Wq) -> &'static str {
    w.0
}

/// Classify one sleep: `Some(message)` if it was a lost wakeup.
fn lost(exec: &Exec_, s: &Sleep) -> Option<(String, bool)> {
    let (end_at, end) = s.end?;
    let who = pid_name(exec, s.pid);
    let wq = wq_name(s.wq);
    // Rule 1: what it waits for happened before it queued itself (after its decision, or, for
    // the congestion count read with a plain load, even before it: a stale read).
    if end != SleepEnd::Woken {
        if let Some((r, _)) = released_before_enqueue(exec, s) {
            let rechecks = exec.cfg.variant.rechecks();
            let stale = if r < s.decided {
                format!(
                    " (its check at #{}{} still read the old value: the store was not yet visible to it, a \
                     store-buffering outcome that needs a full barrier on both sides)",
                    s.decided,
                    if rechecks { " and its re-check" } else { "" }
                )
            } else {
                String::new()
            };
            let weak = r < s.decided;
            return Some((
                format!(
                    "{who} decided to wait at #{}, {} came at #{r}, then {who} queued itself on {wq} at #{} and slept at \
                     #{}{stale}: the wake-up went to an empty queue and {}",
                    s.decided,
                    what_released(s),
                    s.enqueued,
                    s.slept,
                    ending(end, end_at)
                ),
                weak,
            ));
        }
    }
    // Rule 2: it happened while the task was queued, and the waker's scan missed it.
    if end != SleepEnd::Woken {
        if let Some((r, waker)) = release_after(exec, s, s.enqueued, true) {
            if r < end_at || end == SleepEnd::Forever {
                match wake_scan_after(exec, waker, s.wq, r) {
                    Some((w, woken)) if w > end_at && end != SleepEnd::Forever => {
                        // The timer expired first: a fair race, not a lost wake-up.
                        let _ = woken;
                    }
                    Some((w, woken)) if woken & (1 << s.pid) == 0 => {
                        return Some((
                            format!(
                            "{who} was queued on {wq} (#{}) when {} came at #{r}, but the waker's scan at #{w} did not \
                             wake it, and {}",
                            s.enqueued,
                            what_released(s),
                            ending(end, end_at)
                        ),
                            false,
                        ))
                    }
                    None => {
                        return Some((
                            format!(
                                "{who} was queued on {wq} (#{}) when {} came at #{r}, and nobody woke the queue: {}",
                                s.enqueued,
                                what_released(s),
                                ending(end, end_at)
                            ),
                            false,
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    if end == SleepEnd::Forever {
        if never_released(exec, s) {
            // Nothing was lost: the release it waits for never happens (`exclusive-released`).
            return None;
        }
        let why = match s.wq {
            KSWAPD_CONTENDED_WAIT => {
                format!("node {}'s release of kswapd_exclusive came before it could be seen", s.owner)
            }
            _ => "no backing device un-congests".to_string(),
        };
        return Some((format!("{who} sleeps on {wq} from #{} and {why}: nobody will ever wake it", s.slept), false));
    }
    None
}

/// A sleeper on kswapd_contended_wait whose owner never releases kswapd_exclusive at all.
fn never_released(exec: &Exec_, s: &Sleep) -> bool {
    s.wq == KSWAPD_CONTENDED_WAIT && release_after(exec, s, s.decided, false).is_none()
}

fn exclusive_released(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    for s in sleeps(exec) {
        if let Some((at, SleepEnd::Forever)) = s.end {
            if never_released(exec, &s) {
                out.push(Violation::new(
                    Invariant::ExclusiveReleased,
                    Some(at),
                    format!(
                        "{} sleeps on kswapd_contended_wait for node {}'s release of kswapd_exclusive, which never comes \
                         (node {}'s kswapd never finds its node balanced, and no allocation's wakeup_kswapd() runs its \
                         balanced path after it sleeps)",
                        pid_name(exec, s.pid),
                        s.owner,
                        s.owner
                    ),
                ));
            }
        }
    }
    let fin = exec.fin;
    if out.is_empty() && fin.kswapd_exclusive != NUMA_NO_NODE {
        out.push(Violation::new(
            Invariant::ExclusiveReleased,
            None,
            format!(
                "kswapd_exclusive is still node {} when every thread has finished: every other kswapd will pay a stall \
                 on each contended trylock until node {} is balanced",
                fin.kswapd_exclusive, fin.kswapd_exclusive
            ),
        ));
    }
    out
}

fn ending(end: SleepEnd, at: usize) -> String {
    match end {
        SleepEnd::TimedOut(j) => format!("it slept until its timer expired at #{at} ({j} jiffies wasted)"),
        SleepEnd::Forever => format!("it sleeps forever (#{at}: nobody is left to wake it)"),
        SleepEnd::Woken => format!("it was woken at #{at}"),
    }
}

fn no_lost_wakeup(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    for s in sleeps(exec) {
        if let Some((msg, weak)) = lost(exec, &s) {
            let (at, end) = s.end.expect("classified sleeps have ended");
            let mut v = Violation::new(Invariant::NoLostWakeup, Some(at), msg);
            v.weak_memory = weak;
            if let SleepEnd::TimedOut(j) = end {
                v.wasted_jiffies = j;
            }
            out.push(v);
        }
    }
    out
}

/// Derived coverage: sleeps that began after the release they waited for.
pub fn slept_after_release(exec: &Exec_) -> u64 {
    sleeps(exec).iter().filter(|s| released_before_enqueue(exec, s).is_some()).count() as u64
}

fn congested_cleared(exec: &Exec_) -> Vec<Violation> {
    let mut out = Vec::new();
    // (a) no direct reclaimer starts a stall for a node whose balanced path already cleared it.
    for (i, (pid, e)) in exec.events.iter().enumerate() {
        let Ev::Proto(R::DirectStall { node }) = *e else { continue };
        let Some(enq) = exec.events[..i]
            .iter()
            .rposition(|(p, e)| *p == *pid && matches!(e, Ev::Kernel(K::Enqueued { wq: CONGESTION_WQH })))
        else {
            continue;
        };
        let last_set = exec.events[..enq].iter().rposition(|(_, e)| *e == Ev::Proto(R::CongestedSet { node }));
        let last_clear = exec.events[..enq].iter().rposition(|(_, e)| *e == Ev::Proto(R::CongestedCleared { node }));
        if let Some(c) = last_clear {
            if last_set.is_none_or(|s| s < c) {
                // Plain form: the reclaimer tested before the clear and queued after it. If its
                // test (or its re-check, which always follows the enqueue) came after the clear
                // in the trace and still saw the bit, it read a stale value.
                let check = exec.events[..enq].iter().rposition(|(p, e)| {
                    *p == *pid && matches!(e, Ev::Proto(R::CongestionCheck { node: n, .. }) if *n == node)
                });
                let stale_check = check.filter(|&k| k > c || wb_congested_before(exec, k) <= 0);
                let stale_recheck = exec.events[enq..i]
                    .iter()
                    .position(|(p, e)| {
                        *p == *pid && matches!(e, Ev::Proto(R::Recheck { wq: CONGESTION_WQH, sleeps: true }))
                    })
                    .map(|k| k + enq);
                let what = |k: usize| if k > c { "PGDAT_CONGESTED set" } else { "the backing device congested" };
                let stale = match (stale_check, stale_recheck) {
                    (Some(k), Some(r)) => format!(
                        " (its check at #{k} still read {} and its re-check at #{r} still read PGDAT_CONGESTED set: \
                         the stores were not yet visible to it, a weak-memory outcome)",
                        what(k)
                    ),
                    (Some(k), None) => format!(
                        " (its check at #{k} still read {}: the store was not yet visible to it, a weak-memory \
                         outcome)",
                        what(k)
                    ),
                    (None, Some(r)) => format!(
                        " (its re-check at #{r} still read PGDAT_CONGESTED set: the clear was not yet visible to it, \
                         a weak-memory outcome)"
                    ),
                    (None, None) => String::new(),
                };
                let mut v = Violation::new(
                    Invariant::CongestedCleared,
                    Some(enq),
                    format!(
                        "{} starts a congestion stall for node {node} (queued at #{enq}) after node {node}'s balanced \
                         path cleared PGDAT_CONGESTED at #{c}{stale}",
                        pid_name(exec, *pid)
                    ),
                );
                v.weak_memory = !stale.is_empty();
                out.push(v);
            }
        }
    }
    // (b) after the node's last balanced path (with no later set) the bit is clear.
    let fin = exec.fin;
    for (n, &set) in fin.congested.iter().enumerate() {
        let node = n as i32;
        let last_bal = exec
            .events
            .iter()
            .rposition(|(_, e)| matches!(e, Ev::Proto(R::ZoneBalanced { node: x, .. }) if *x == node));
        let last_set = exec.events.iter().rposition(|(_, e)| *e == Ev::Proto(R::CongestedSet { node }));
        if let Some(b) = last_bal {
            if set && last_set.is_none_or(|s| s < b) {
                out.push(Violation::new(
                    Invariant::CongestedCleared,
                    Some(b),
                    format!("PGDAT_CONGESTED is still set on node {node} after its balanced path at #{b}"),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The monitors on hand-written traces: what must and must not count as a violation.

    use mmmodel::event::{Event as Ev, KernelEvent as K, Wq, NUMA_NO_NODE};
    use mmmodel::kernel::sched::TimerModel;
    use mmmodel::reclaim::{
        Config, Event as R, FinalState, KswapdStall, Role, Variant, CONGESTION_WQH, KSWAPD_CONTENDED_WAIT,
    };

    use crate::monitor::{Exec, Violation};

    fn cfg() -> Config {
        Config {
            variant: Variant::WaitqueueV1,
            mutation: None,
            roles: vec![
                Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true },
                Role::Kswapd { node: 1, batches: 1, pages: 1, balances: true },
                Role::DirectReclaim { node: 1, batches: 1, pages: 1, tags_congested: false },
                Role::Bdi { congested_at_start: true },
            ],
            timer: TimerModel::AnyTime,
        }
    }

    fn check(events: Vec<(usize, Ev<R>)>, f: fn(&Exec<KswapdStall>) -> Vec<Violation>) -> Vec<Violation> {
        let cfg = cfg();
        let fin = FinalState { kswapd_exclusive: NUMA_NO_NODE, congested: vec![false, false] };
        let exec = Exec { cfg: &cfg, events: &events, fin: &fin };
        f(&exec)
    }

    /// kswapd1 lost to kswapd0; `between` happens after the loss.
    fn loser(between: Vec<(usize, Ev<R>)>) -> Vec<(usize, Ev<R>)> {
        let mut v = vec![
            (0, Ev::Proto(R::CmpxchgWon { node: 0, prev: NUMA_NO_NODE })),
            (1, Ev::Proto(R::CmpxchgLost { node: 1, owner: 0 })),
        ];
        v.extend(between);
        v
    }

    const Q: Wq = KSWAPD_CONTENDED_WAIT;

    #[test]
    fn release_before_enqueue_then_timeout_is_a_lost_wakeup() {
        let ev = loser(vec![
            (0, Ev::Proto(R::ZoneBalanced { node: 0, by_kswapd: true })),
            (0, Ev::Proto(R::Released { node: 0, prev: 0 })),
            (0, Ev::Kernel(K::WakeUp { wq: Q, queued: 0, woken: 0, interruptible: true })),
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (1, Ev::Kernel(K::TimedOut { jiffies: 10 })),
        ]);
        let v = check(ev, super::no_lost_wakeup);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].wasted_jiffies, 10);
        assert_eq!(v[0].at, Some(7));
    }

    #[test]
    fn a_timer_that_beats_the_wake_scan_is_a_fair_race() {
        // Enqueued, then the release, then the timer expires before the waker's scan.
        let ev = loser(vec![
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (0, Ev::Proto(R::ZoneBalanced { node: 0, by_kswapd: true })),
            (0, Ev::Proto(R::Released { node: 0, prev: 0 })),
            (1, Ev::Kernel(K::TimedOut { jiffies: 10 })),
            (0, Ev::Kernel(K::WakeUp { wq: Q, queued: 0b10, woken: 0, interruptible: true })),
        ]);
        assert!(check(ev, super::no_lost_wakeup).is_empty());
    }

    #[test]
    fn a_timeout_before_any_release_is_no_violation() {
        let ev = loser(vec![
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (1, Ev::Kernel(K::TimedOut { jiffies: 10 })),
        ]);
        assert!(check(ev, super::no_lost_wakeup).is_empty());
    }

    #[test]
    fn a_release_while_queued_that_wakes_nobody_is_a_lost_wakeup() {
        let ev = loser(vec![
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (0, Ev::Proto(R::ZoneBalanced { node: 0, by_kswapd: true })),
            (0, Ev::Proto(R::Released { node: 0, prev: 0 })),
            (1, Ev::Kernel(K::TimedOut { jiffies: 10 })),
        ]);
        let v = check(ev, super::no_lost_wakeup);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].message.contains("nobody woke the queue"), "{}", v[0].message);
    }

    #[test]
    fn sleeping_forever_after_the_release_is_a_lost_wakeup() {
        let ev = loser(vec![
            (0, Ev::Proto(R::ZoneBalanced { node: 0, by_kswapd: true })),
            (0, Ev::Proto(R::Released { node: 0, prev: 0 })),
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (1, Ev::Kernel(K::SleptForever)),
        ]);
        assert_eq!(check(ev.clone(), super::no_lost_wakeup).len(), 1);
        assert!(check(ev, super::exclusive_released).is_empty());
    }

    #[test]
    fn sleeping_forever_for_an_owner_that_never_releases_is_a_sticky_owner() {
        let ev = loser(vec![
            (1, Ev::Kernel(K::Enqueued { wq: Q })),
            (1, Ev::Kernel(K::Schedule { timeout: 10 })),
            (1, Ev::Kernel(K::SleptForever)),
        ]);
        assert!(check(ev.clone(), super::no_lost_wakeup).is_empty());
        let v = check(ev, super::exclusive_released);
        assert_eq!(v.len(), 1);
        assert!(v[0].message.contains("never comes"), "{}", v[0].message);
    }

    #[test]
    fn two_owners_break_single_exclusive_and_the_real_protocol_does_not() {
        let two = vec![
            (0, Ev::Proto(R::CmpxchgWon { node: 0, prev: NUMA_NO_NODE })),
            (1, Ev::Proto(R::CmpxchgWon { node: 1, prev: 0 })),
        ];
        assert_eq!(check(two, super::single_exclusive).len(), 1);
        let ok = vec![
            (0, Ev::Proto(R::CmpxchgWon { node: 0, prev: NUMA_NO_NODE })),
            (0, Ev::Proto(R::ZoneBalanced { node: 0, by_kswapd: true })),
            (0, Ev::Proto(R::Released { node: 0, prev: 0 })),
            (1, Ev::Proto(R::CmpxchgWon { node: 1, prev: NUMA_NO_NODE })),
            (1, Ev::Proto(R::ZoneBalanced { node: 1, by_kswapd: true })),
            (1, Ev::Proto(R::Released { node: 1, prev: 1 })),
        ];
        assert!(check(ok, super::single_exclusive).is_empty());
    }

    #[test]
    fn a_congestion_stall_queued_after_the_clear_is_a_stale_stall() {
        let base = vec![
            (1, Ev::Proto(R::CongestedSet { node: 1 })),
            (2, Ev::Proto(R::CongestionCheck { node: 1, congested: true })),
            (1, Ev::Proto(R::CongestedCleared { node: 1 })),
            (2, Ev::Kernel(K::Enqueued { wq: CONGESTION_WQH })),
            (2, Ev::Proto(R::DirectStall { node: 1 })),
        ];
        let v = check(base.clone(), super::congested_cleared);
        assert_eq!(v.len(), 1);
        assert!(!v[0].weak_memory, "tested before the clear, queued after it: a plain interleaving");
        // Tagged again before the enqueue: a fresh congestion, no violation.
        let mut again = base;
        again.insert(3, (1, Ev::Proto(R::CongestedSet { node: 1 })));
        assert!(check(again, super::congested_cleared).is_empty());
    }

    #[test]
    fn a_test_that_reads_the_tag_after_its_clear_is_a_stale_read() {
        // The device is congested (congested_at_start) throughout; the reclaimer's test comes
        // after the clear in trace order and still sees the tag: only a stale load can do that.
        let after_clear = vec![
            (1, Ev::Proto(R::CongestedSet { node: 1 })),
            (1, Ev::Proto(R::CongestedCleared { node: 1 })),
            (2, Ev::Proto(R::CongestionCheck { node: 1, congested: true })),
            (2, Ev::Kernel(K::Enqueued { wq: CONGESTION_WQH })),
            (2, Ev::Proto(R::DirectStall { node: 1 })),
        ];
        let v = check(after_clear, super::congested_cleared);
        assert_eq!(v.len(), 1);
        assert!(v[0].weak_memory && v[0].message.contains("PGDAT_CONGESTED set"), "{}", v[0].message);
        // Tested before the clear but after the device un-congested: the count it read was stale.
        let after_uncongest = vec![
            (3, Ev::Proto(R::WbUncongested)),
            (1, Ev::Proto(R::CongestedSet { node: 1 })),
            (2, Ev::Proto(R::CongestionCheck { node: 1, congested: true })),
            (1, Ev::Proto(R::CongestedCleared { node: 1 })),
            (2, Ev::Kernel(K::Enqueued { wq: CONGESTION_WQH })),
            (2, Ev::Proto(R::DirectStall { node: 1 })),
        ];
        let v = check(after_uncongest, super::congested_cleared);
        assert_eq!(v.len(), 1);
        assert!(v[0].weak_memory && v[0].message.contains("backing device congested"), "{}", v[0].message);
        // A re-check after the clear that still says "sleep" read the tag stale too.
        let recheck = vec![
            (1, Ev::Proto(R::CongestedSet { node: 1 })),
            (2, Ev::Proto(R::CongestionCheck { node: 1, congested: true })),
            (1, Ev::Proto(R::CongestedCleared { node: 1 })),
            (2, Ev::Kernel(K::Enqueued { wq: CONGESTION_WQH })),
            (2, Ev::Proto(R::Recheck { wq: CONGESTION_WQH, sleeps: true })),
            (2, Ev::Proto(R::DirectStall { node: 1 })),
        ];
        let v = check(recheck, super::congested_cleared);
        assert!(v[0].weak_memory && v[0].message.contains("re-check"), "{}", v[0].message);
    }

    #[test]
    fn the_exclusive_kswapd_queueing_itself_is_caught() {
        let ev = vec![
            (0, Ev::Proto(R::CmpxchgWon { node: 0, prev: NUMA_NO_NODE })),
            (0, Ev::Proto(R::CmpxchgLost { node: 0, owner: 0 })),
            (0, Ev::Kernel(K::Enqueued { wq: Q })),
        ];
        assert_eq!(check(ev, super::exclusive_never_waits).len(), 1);
    }
}
