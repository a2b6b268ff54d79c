//! CPUs as a resource: which task runs on which CPU, and `cond_resched()`
//! (kernel/sched/core.c, reduced to what a non-preemptive kernel promises).
//!
//! Under `preempt = "full"` (the default, and what the kswapd-stall and compaction models
//! assume) a CPU constrains nothing: the explorer may switch tasks at any step, as a
//! `CONFIG_PREEMPT` kernel may. Every function here is then a no-op.
//!
//! Under `preempt = "none"` (`CONFIG_PREEMPT_NONE`) every task is bound to one CPU and a CPU
//! is a lock that the task running on it holds (a first-come first-served queue): a task keeps its CPU until it sleeps
//! (`schedule()`), calls `cond_resched()` while another task of that CPU is runnable, or
//! ends. A task that becomes runnable (it starts, a waker or its timer makes it runnable)
//! waits for its CPU, and only then goes on. Per-CPU work (a kworker bound to the CPU) is such
//! a task: it runs only when the CPU is given up.
//!
//! A CPU's run queue is first come, first served (a queue of pids): a task that becomes runnable waits until the tasks that were already waiting
//! for the CPU have run, and `cond_resched()` with another task runnable gives the CPU up and
//! queues behind it. A plain lock would let the explorer always pick the same task again, and
//! weak fairness (which the stateful engine assumes) would not stop that, since the waiter is
//! not runnable at the steps where the CPU is held: the model would then report starvation
//! the kernel's scheduler does not have (a task that sleeps and wakes in a loop would keep
//! its CPU from a task that has been runnable all along). The seeded mutation `resched-noop`
//! makes `cond_resched()` keep the CPU; the `no-soft-lockup` check kills it.
//!
//! Interrupts, the tick, and time slices are not modelled: under `none` a task that never
//! sleeps or calls `cond_resched()` keeps its CPU for ever, which is what the kernel's
//! soft-lockup watchdog reports.

use core::fmt;
use core::sync::atomic::Ordering::{AcqRel, Acquire};

use super::sched::{loop_summary, Current};
use crate::ghost::Ghost;
use crate::model::{PlatformFor, ProtoEvent};
use crate::platform::{Atomic, AtomicInt, Platform};

crate::named! {
    /// `[params] preempt`: the kernel's preemption model.
    pub enum Preempt {
        /// `CONFIG_PREEMPT_NONE`: a task gives its CPU up only when it sleeps, calls
        /// `cond_resched()` with another task of that CPU runnable, or ends.
        None = "none",
        /// `CONFIG_PREEMPT`: any task may be preempted at any point (CPUs constrain nothing).
        Full = "full",
    }
}

/// CPUs a scenario may have.
pub const MAX_CPUS: usize = 4;

/// Why a task gives its CPU up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YieldWhy {
    /// It sleeps (`schedule()`).
    Sleep,
    /// `cond_resched()` with another task of the CPU runnable.
    Resched,
    /// It ends (`do_exit()`).
    Exit,
}

/// What the CPU layer reports (a protocol that uses CPUs carries these among its events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuEvent {
    /// The task is runnable and waits for CPU `cpu` (under `none`).
    Wait { cpu: u8 },
    /// The task runs on CPU `cpu`.
    Run { cpu: u8 },
    /// The task gives CPU `cpu` up.
    Yield { cpu: u8, why: YieldWhy },
    /// `cond_resched()` found no other task runnable on CPU `cpu`: it returns at once.
    NoResched { cpu: u8 },
}

impl CpuEvent {
    /// Only for reading a trace: taking a CPU that was free, giving it up to sleep or exit,
    /// and a `cond_resched()` that returns at once.
    pub fn is_detail(self) -> bool {
        matches!(self, CpuEvent::Yield { why: YieldWhy::Sleep | YieldWhy::Exit, .. } | CpuEvent::NoResched { .. })
    }
}

impl fmt::Display for CpuEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CpuEvent::Wait { cpu } => write!(f, "runnable, waits for cpu{cpu}"),
            CpuEvent::Run { cpu } => write!(f, "runs on cpu{cpu}"),
            CpuEvent::Yield { cpu, why: YieldWhy::Sleep } => write!(f, "schedule(): gives cpu{cpu} up"),
            CpuEvent::Yield { cpu, why: YieldWhy::Resched } => {
                write!(f, "cond_resched(): another task runnable, gives cpu{cpu} up")
            }
            CpuEvent::Yield { cpu, why: YieldWhy::Exit } => write!(f, "exits, cpu{cpu} free"),
            CpuEvent::NoResched { cpu } => write!(f, "cond_resched(): nothing else runnable on cpu{cpu}"),
        }
    }
}

/// Bits of one slot of a run queue (a pid plus one; 0 is an empty slot).
const SLOT: u32 = 6;
const SLOT_MASK: u64 = (1 << SLOT) - 1;
/// Tasks one CPU's run queue can hold.
pub const QUEUE_SLOTS: usize = (64 / SLOT) as usize;
/// With queued joins ([`Cpus::queued_joins`]), the bits above the slots: one per task bound to
/// the CPU (by its rank among them), set while that task is runnable and announced but not yet
/// in the queue.
const ANNOUNCED: u32 = SLOT * QUEUE_SLOTS as u32;
const SLOTS: u64 = (1 << ANNOUNCED) - 1;
/// Tasks one CPU may have with queued joins.
pub const MAX_QUEUED_TASKS: usize = (64 - ANNOUNCED) as usize;

// The run queue word, checked at build time: the slots lie below the announce bits, the announce
// bits within the word, and every task a CPU may have with queued joins fits in its queue.
const _: () = {
    assert!(QUEUE_SLOTS as u32 * SLOT <= ANNOUNCED, "slots overlap the announce bits");
    assert!(ANNOUNCED as usize + MAX_QUEUED_TASKS <= 64, "announce bits past the word");
    assert!(MAX_QUEUED_TASKS <= QUEUE_SLOTS, "more announced tasks than slots");
};

struct Cpu<P: Platform> {
    /// More than one task is bound to the CPU. A CPU with one task has nothing to arbitrate:
    /// its task runs whenever it is runnable, and the CPU takes no explored step at all.
    shared: bool,
    /// The run queue, first come first served: slots of [`SLOT`] bits, the front in the low
    /// bits, each a pid plus one. The task at the front runs on the CPU (or may run: it is
    /// the next to); the others wait, in the order they became runnable.
    queue: P::AtomicU64,
}

/// The machine's CPUs.
pub struct Cpus<P: Platform> {
    pub preempt: Preempt,
    cpus: Vec<Cpu<P>>,
    /// `cond_resched()` never gives the CPU up (the seeded mutation `resched-noop`; always
    /// false in a shipped configuration).
    resched_noop: bool,
    /// Queued joins ([`Cpus::queued_joins`]): each CPU's tasks by rank, and each pid's rank.
    queued: Option<(Vec<Vec<usize>>, Vec<u8>)>,
}

/// Locations of the loop summary and checkpoints of this module.
const QUEUE_LOOP: u64 = 0xc0_4e5c;
const RAN: u64 = 0xc0_4e5d;
const GAVE_UP: u64 = 0xc0_4e5e;
const NO_RESCHED: u64 = 0xc0_4e5f;
const JOIN_LOOP: u64 = 0xc0_4e60;

impl<P: Platform> Cpus<P> {
    /// `n` CPUs; `tasks[c]` tasks are bound to CPU `c`.
    pub fn new(preempt: Preempt, tasks: &[usize], resched_noop: bool) -> Self {
        let cpus = tasks.iter().map(|&t| Cpu { shared: t > 1, queue: P::AtomicU64::new(0) }).collect();
        Cpus { preempt, cpus, resched_noop, queued: None }
    }

    /// Queued joins: a task that becomes runnable announces itself in one atomic step (a bit of
    /// the queue word), and the next change of the queue, by any task, appends it, as the
    /// kernel's `ttwu` enqueues a task under `rq->lock`, a queued spinlock that serves its
    /// waiters in order. Without them a task joins with a compare-and-swap it retries, and
    /// under the stateful engine's weak fairness another task of the CPU that sleeps and wakes
    /// in a loop can make every retry fail for ever (`[params] queued_locks` of the
    /// reclaim-throttle model; docs/model.md, Part 4, "CPUs as a resource"). `cpu_of[pid]` is
    /// each task's CPU; at most [`MAX_QUEUED_TASKS`] a CPU.
    pub fn queued_joins(mut self, cpu_of: &[u8]) -> Self {
        let mut members = vec![Vec::new(); self.cpus.len()];
        let mut rank = Vec::new();
        for (pid, &c) in cpu_of.iter().enumerate() {
            rank.push(members[c as usize].len() as u8);
            members[c as usize].push(pid);
        }
        assert!(members.iter().all(|m| m.len() <= MAX_QUEUED_TASKS), "more than {MAX_QUEUED_TASKS} tasks on one CPU");
        self.queued = Some((members, rank));
        self
    }

    /// With queued joins: `slots` (the queue without its announce bits) with every task that
    /// `announced` names appended, in rank order.
    fn absorb(&self, cpu: u8, slots: u64, announced: u64) -> u64 {
        let Some((members, _)) = &self.queued else { return slots };
        let mut len = queue_len(slots);
        let mut out = slots;
        for (r, &pid) in members[cpu as usize].iter().enumerate() {
            if announced & (1 << r) != 0 {
                assert!(len < QUEUE_SLOTS, "more tasks runnable on cpu{cpu} than its run queue holds");
                out |= (pid as u64 + 1) << (len as u32 * SLOT);
                len += 1;
            }
        }
        out
    }
    /// Whether CPU `cpu` arbitrates between tasks.
    fn bound(&self, cpu: u8) -> bool {
        self.preempt == Preempt::None && self.cpus[cpu as usize].shared
    }
}

/// Slot `i` of run queue word `q`: a pid plus one, or 0.
fn slot(q: u64, i: usize) -> u64 {
    (q >> (i as u32 * SLOT)) & SLOT_MASK
}

/// The tasks in run queue word `q` (the index of its first empty slot).
fn queue_len(q: u64) -> usize {
    (0..QUEUE_SLOTS).find(|&i| slot(q, i) == 0).unwrap_or(QUEUE_SLOTS)
}

/// Where `me` (a pid plus one) is in run queue word `q`, if it is.
fn queued_at(q: u64, me: u64) -> Option<usize> {
    (0..queue_len(q)).find(|&i| slot(q, i) == me)
}

fn emit<P: PlatformFor<E>, E: ProtoEvent + From<CpuEvent>>(cur: &Current<P>, ev: CpuEvent) {
    if P::Ghost::ENABLED {
        cur.emit(E::from(ev));
    }
}

/// The task becomes runnable on `cpu` and waits until it runs there (it starts, it comes
/// back from `schedule()`, or `cond_resched()` gave the CPU to another task). The CPU's run
/// queue is first come, first served: the tasks that were already waiting run first.
pub fn cpu_run<P: PlatformFor<E>, E: ProtoEvent + From<CpuEvent>>(cur: &Current<P>, cpus: &Cpus<P>, cpu: u8) {
    if !cpus.bound(cpu) {
        return;
    }
    let c = &cpus.cpus[cpu as usize];
    let me = cur.pid() as u64 + 1;
    // What the caller's future depends on: its history so far. Nothing read here matters
    // after the task runs (see the checkpoint at the end).
    let context = cur.loop_context();
    if let Some((_, rank)) = &cpus.queued {
        // Announce, then make sure some change of the queue (this task's own, or any other
        // task's, which appends every announced task) has put it in.
        c.queue.fetch_or(1 << (ANNOUNCED + rank[cur.pid()] as u32), AcqRel);
        loop {
            if !cur.loop_head(loop_summary(context, JOIN_LOOP, 0)) {
                break;
            }
            let q = c.queue.load(Acquire);
            if queued_at(q, me).is_some()
                || c.queue.compare_exchange(q, cpus.absorb(cpu, q & SLOTS, q >> ANNOUNCED), AcqRel, Acquire).is_ok()
            {
                break;
            }
        }
    }
    // Join the end of the queue.
    while cpus.queued.is_none() {
        let q = c.queue.load(Acquire);
        let len = queue_len(q);
        assert!(len < QUEUE_SLOTS, "more tasks runnable on cpu{cpu} than its run queue holds");
        if c.queue.compare_exchange(q, q | (me << (len as u32 * SLOT)), AcqRel, Acquire).is_ok() {
            break;
        }
    }
    emit::<P, E>(cur, CpuEvent::Wait { cpu });
    // Wait, runnable, until the tasks ahead have run and given the CPU up: the one that
    // gives it up kicks the next (`cpu_give_up`).
    while c.queue.load(Acquire) & SLOT_MASK != me {
        if !cur.loop_head(loop_summary(context, QUEUE_LOOP, 0)) {
            break;
        }
        P::park();
    }
    emit::<P, E>(cur, CpuEvent::Run { cpu });
    // Which tasks were queued when it joined, how often it was kicked: none of it is left
    // in the task's locals, so its history is the caller's again (without this, every task
    // would carry the queue it once saw to its next loop head, and the states multiply).
    cur.checkpoint(loop_summary(context, RAN, 0));
}

/// The task gives `cpu` up (it is about to sleep, or it ends): the next task of the queue
/// runs.
pub fn cpu_give_up<P: PlatformFor<E>, E: ProtoEvent + From<CpuEvent>>(
    cur: &Current<P>,
    cpus: &Cpus<P>,
    cpu: u8,
    why: YieldWhy,
) {
    if !cpus.bound(cpu) {
        return;
    }
    let c = &cpus.cpus[cpu as usize];
    let context = cur.loop_context();
    emit::<P, E>(cur, CpuEvent::Yield { cpu, why });
    // Only the task at the front pops it; others only append behind it (or, with queued
    // joins, announce themselves, and the pop appends them).
    loop {
        let q = c.queue.load(Acquire);
        debug_assert_eq!(q & SLOT_MASK, cur.pid() as u64 + 1, "only the running task gives its CPU up");
        let popped =
            if cpus.queued.is_some() { cpus.absorb(cpu, (q & SLOTS) >> SLOT, q >> ANNOUNCED) } else { q >> SLOT };
        if c.queue.compare_exchange(q, popped, AcqRel, Acquire).is_ok() {
            let next = popped & SLOT_MASK;
            if next != 0 {
                cur.sched.tasks[next as usize - 1].unpark();
            }
            break;
        }
    }
    cur.checkpoint(loop_summary(context, GAVE_UP, 0));
}

/// `cond_resched()`: under `none`, if another task is runnable on `cpu`, let it run first.
pub fn cond_resched<P: PlatformFor<E>, E: ProtoEvent + From<CpuEvent>>(cur: &Current<P>, cpus: &Cpus<P>, cpu: u8) {
    if !cpus.bound(cpu) {
        return;
    }
    let c = &cpus.cpus[cpu as usize];
    let context = cur.loop_context();
    let others = c.queue.load(Acquire) >> SLOT;
    if others == 0 {
        emit::<P, E>(cur, CpuEvent::NoResched { cpu });
        cur.checkpoint(loop_summary(context, NO_RESCHED, 0));
        return;
    }
    if cpus.resched_noop {
        // Seeded bug: need_resched() is never set, so cond_resched() keeps the CPU.
        cur.mutation_reached();
        emit::<P, E>(cur, CpuEvent::NoResched { cpu });
        cur.checkpoint(loop_summary(context, NO_RESCHED, 0));
        return;
    }
    cpu_give_up::<P, E>(cur, cpus, cpu, YieldWhy::Resched);
    cpu_run::<P, E>(cur, cpus, cpu);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits the docs give (scenarios.md: ten threads a CPU under `preempt = "none"`, four
    /// with `queued_locks`).
    #[test]
    fn a_run_queue_holds_ten_tasks_and_four_with_queued_joins() {
        assert_eq!((QUEUE_SLOTS, MAX_QUEUED_TASKS), (10, 4));
    }

    /// A run queue word's slots: its length, and where a task is in it.
    #[test]
    fn a_run_queue_word_says_who_is_queued_where() {
        let word = |pids: &[u64]| pids.iter().enumerate().fold(0, |q, (i, p)| q | (p + 1) << (i as u32 * SLOT));
        assert_eq!(queue_len(0), 0);
        let q = word(&[4, 0, 31]);
        assert_eq!(queue_len(q), 3);
        assert_eq!((slot(q, 0), slot(q, 1), slot(q, 2), slot(q, 3)), (5, 1, 32, 0));
        assert_eq!([5, 1, 32, 2].map(|me| queued_at(q, me)), [Some(0), Some(1), Some(2), None]);
        let full = word(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!((queue_len(full), queued_at(full, 10)), (QUEUE_SLOTS, Some(9)));
        // An announce bit above the slots is no task of the queue.
        assert_eq!((queue_len(q | 1 << ANNOUNCED), queued_at(q | 1 << ANNOUNCED, 32)), (3, Some(2)));
    }

    /// Queued joins append the announced tasks after the last task already queued, in rank
    /// order (no shipped file has three tasks on one CPU with queued joins, where a queue of two
    /// takes a third).
    #[test]
    fn announced_tasks_join_the_queue_after_its_last_task() {
        type P = crate::platform::Std<crate::ghost::NoGhost<()>>;
        let cpus = Cpus::<P>::new(Preempt::None, &[0, 4], false).queued_joins(&[1, 1, 1, 1]);
        let slot = |i: u32, pid: u64| (pid + 1) << (i * SLOT);
        // pids 0 and 1 queued; pids 3 and 2 (ranks 3 and 2) announced.
        let joined = cpus.absorb(1, slot(0, 0) | slot(1, 1), 0b1100);
        assert_eq!(joined, slot(0, 0) | slot(1, 1) | slot(2, 2) | slot(3, 3));
        assert_eq!(cpus.absorb(1, 0, 0b0010), slot(0, 1), "an empty queue");
    }
}
