//! The checker's ghost: records one execution's events and keeps the bookkeeping that lets
//! the model tell a lost wakeup or a livelock from a bare deadlock.
//!
//! Everything here is plain `std` state, invisible to loom and shuttle: it adds no
//! interleavings, and because the explorers run one model thread at a time and switch only
//! at their own operations, each hook is atomic with the explored operation next to it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use mmmodel::event::{Event, KernelEvent};
use mmmodel::ghost::{Ghost, LoopVerdict, Pid, SleepDecision};
use mmmodel::kernel::sched::Summary;

/// Limits for one execution.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Loop heads one task may pass before the run is reported as not making progress.
    pub step_bound: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { step_bound: 200 }
    }
}

#[derive(Debug)]
struct Inner<E> {
    events: Vec<(Pid, Event<E>)>,
    /// With a clock (the runtime mode): when each event happened.
    times: Vec<Instant>,
    /// Tasks that have finished.
    finished: u32,
    /// Each task that finished, with the number of events recorded before it did (in order).
    exits: Vec<(Pid, usize)>,
    /// Tasks asleep with no timer and not yet woken.
    sleeping: u32,
    aborted: bool,
    steps: Vec<u64>,
    /// Per task, while every other task has finished: loop fingerprints seen, with the
    /// iteration number and event index where each was first seen.
    alone_history: Vec<HashMap<u64, (u64, usize)>>,
    /// The seeded mutation's code ran.
    mutation_reached: bool,
}

/// One execution's recorder, for a protocol with events `E`.
#[derive(Debug)]
pub struct Recorder<E> {
    inner: Mutex<Inner<E>>,
    tasks: usize,
    bounds: Bounds,
    clock: bool,
}

impl<E> Recorder<E> {
    pub fn new(tasks: usize, bounds: Bounds) -> Self {
        let inner = Inner {
            events: Vec::new(),
            times: Vec::new(),
            finished: 0,
            exits: Vec::new(),
            sleeping: 0,
            aborted: false,
            steps: vec![0; tasks],
            alone_history: vec![HashMap::new(); tasks],
            mutation_reached: false,
        };
        Recorder { inner: Mutex::new(inner), tasks, bounds, clock: false }
    }

    /// A recorder that also timestamps every event (for runs on real threads).
    pub fn with_clock(tasks: usize, bounds: Bounds) -> Self {
        Recorder { clock: true, ..Recorder::new(tasks, bounds) }
    }

    /// The timestamps of the events (empty without a clock).
    pub fn take_times(&self) -> Vec<Instant> {
        std::mem::take(&mut self.lock().times)
    }

    fn lock(&self) -> MutexGuard<'_, Inner<E>> {
        // A panic in model code must not make the recorder unusable for the report.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn all(&self) -> u32 {
        if self.tasks >= 32 {
            u32::MAX
        } else {
            (1u32 << self.tasks) - 1
        }
    }

    /// The events recorded so far.
    pub fn events(&self) -> Vec<(Pid, Event<E>)>
    where
        E: Clone,
    {
        self.lock().events.clone()
    }

    /// Take the events (at the end of an execution).
    pub fn take_events(&self) -> Vec<(Pid, Event<E>)> {
        std::mem::take(&mut self.lock().events)
    }

    /// Take the tasks that finished, each with the number of events recorded before it did.
    pub fn take_exits(&self) -> Vec<(Pid, usize)> {
        std::mem::take(&mut self.lock().exits)
    }

    /// Whether the seeded mutation's code ran in this execution.
    pub fn mutation_reached(&self) -> bool {
        self.lock().mutation_reached
    }

    fn push(&self, g: &mut Inner<E>, pid: Pid, ev: Event<E>) {
        if self.clock {
            g.times.push(Instant::now());
        }
        g.events.push((pid, ev));
    }

    /// Nobody can wake the sleepers any more: record one `SleptForever`-causing abort.
    fn settle(&self, g: &mut Inner<E>) -> u32 {
        if g.sleeping != 0 && (g.finished | g.sleeping) == self.all() {
            g.aborted = true;
            let unpark = g.sleeping;
            g.sleeping = 0;
            return unpark;
        }
        0
    }
}

impl<E: Send + 'static> Ghost for Recorder<E> {
    const ENABLED: bool = true;
    type Proto = E;

    fn emit(&self, pid: Pid, ev: Event<E>) {
        let mut g = self.lock();
        self.push(&mut g, pid, ev);
    }

    fn loop_head(&self, pid: Pid, summary: Summary) -> LoopVerdict {
        let fingerprint = summary.hash();
        let mut g = self.lock();
        g.steps[pid] += 1;
        let step = g.steps[pid];
        if step > self.bounds.step_bound {
            self.push(&mut g, pid, Event::Kernel(KernelEvent::StepBound { steps: step - 1 }));
            return LoopVerdict::Stop;
        }
        let others = self.all() & !(1 << pid);
        if g.finished & others == others {
            let at = g.events.len();
            if let Some(&(first, _)) = g.alone_history[pid].get(&fingerprint) {
                self.push(&mut g, pid, Event::Kernel(KernelEvent::Livelock { period: (step - first) as usize }));
                return LoopVerdict::Stop;
            }
            g.alone_history[pid].insert(fingerprint, (step, at));
        } else {
            g.alone_history[pid].clear();
            if step > self.bounds.step_bound / 2 {
                return LoopVerdict::Yield;
            }
        }
        LoopVerdict::Continue
    }

    fn others_finished(&self, pid: Pid) -> bool {
        let others = self.all() & !(1 << pid);
        self.lock().finished & others == others
    }

    fn untimed_sleep(&self, pid: Pid) -> SleepDecision {
        let mut g = self.lock();
        g.sleeping |= 1 << pid;
        match self.settle(&mut g) {
            0 => SleepDecision::Park,
            unpark => SleepDecision::Abort { unpark: unpark & !(1 << pid) },
        }
    }

    fn woken(&self, pid: Pid) {
        self.lock().sleeping &= !(1 << pid);
    }

    fn task_exit(&self, pid: Pid) -> u32 {
        let mut g = self.lock();
        g.finished |= 1 << pid;
        let n = g.events.len();
        g.exits.push((pid, n));
        self.settle(&mut g)
    }

    fn aborted(&self) -> bool {
        self.lock().aborted
    }

    fn mutation_reached(&self, _pid: Pid) {
        self.lock().mutation_reached = true;
    }
}
