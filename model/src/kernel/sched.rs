//! `current`, task states, `try_to_wake_up` and `io_schedule_timeout`
//! (kernel/sched/core.c, include/linux/sched.h, kernel/time/timer.c).
//!
//! A task's state is an atomic. `set_current_state()` is a store plus a full barrier
//! (`smp_store_mb`); `try_to_wake_up()` issues a full barrier, then moves a sleeping task to
//! `TASK_RUNNING` if its state matches the wake mode, and unparks it. The timer of
//! `schedule_timeout()` expires through the same transition, so a wake and an expiry race
//! exactly as in the kernel: whoever moves the state first wins.
//!
//! Time is not modelled by loom or shuttle, so *when* the timer expires is an explorer choice
//! ([`TimerModel`]).

use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, SeqCst};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::event::{Event, KernelEvent};
pub use crate::ghost::Summary;
use crate::ghost::{Ghost, LoopVerdict, Pid, SleepDecision};
use crate::platform::{Atomic, Platform, SymTag};

pub const TASK_RUNNING: u32 = 0;
pub const TASK_INTERRUPTIBLE: u32 = 1;
pub const TASK_UNINTERRUPTIBLE: u32 = 2;
/// The wake mode of `wake_up()`: both sleeping states.
pub const TASK_NORMAL: u32 = TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE;

/// When a sleeping task's timer expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimerModel {
    /// Never: the sleeper waits only for a wake-up. A sleeper that nobody will wake is a lost
    /// wakeup (reported by the checker, never as a bare deadlock).
    Never,
    /// At any point the explorer chooses: the expiry is a separate explored step that races
    /// with every waker. A timed sleeper is never deadlocked.
    AnyTime,
    /// Real time (the `std` runtime): a jiffy lasts `jiffy`.
    Real { jiffy: Duration },
}

/// The model's `task_struct`: what a waker needs to reach a task.
pub struct Task<P: Platform> {
    pub pid: Pid,
    /// `task->state`.
    pub state: P::AtomicU32,
    /// The sleeping state the task last set for itself (owner-only bookkeeping, so that the
    /// timer's expiry can be the single compare-and-swap the kernel's is).
    sleep_state: std::sync::atomic::AtomicU32,
    /// The thread to unpark; registered by the task itself when it starts.
    thread: OnceLock<P::Thread>,
}

impl<P: Platform> Task<P> {
    pub fn new(pid: Pid) -> Self {
        Task {
            pid,
            state: P::tagged(SymTag::Pid(pid as u8), || P::AtomicU32::new(TASK_RUNNING)),
            sleep_state: std::sync::atomic::AtomicU32::new(TASK_RUNNING),
            thread: OnceLock::new(),
        }
    }
    /// Kick the task's thread (it may be parked).
    pub(crate) fn unpark(&self) {
        if let Some(t) = self.thread.get() {
            P::unpark(t);
        }
    }
}

/// The scheduler side of one run: every task, the timer model and the checker's ghost.
pub struct Sched<P: Platform> {
    pub tasks: Vec<Task<P>>,
    pub timer: TimerModel,
    pub ghost: Arc<P::Ghost>,
}

impl<P: Platform> Sched<P> {
    /// The scheduler of `tasks` tasks (pids `0..tasks`).
    pub fn new(tasks: usize, timer: TimerModel, ghost: Arc<P::Ghost>) -> Self {
        let tasks = (0..tasks).map(Task::new).collect();
        Sched { tasks, timer, ghost }
    }

    /// `current` for task `pid`; call it on the task's own thread (it registers the thread).
    pub fn enter(&self, pid: Pid) -> Current<'_, P> {
        let task = &self.tasks[pid];
        let _ = task.thread.set(P::current());
        if P::STALE_READS && P::Ghost::ENABLED {
            P::fresh_reads(false);
        }
        Current { sched: self, task }
    }

    fn unpark_mask(&self, mask: u32) {
        for t in &self.tasks {
            if mask & (1 << t.pid) != 0 {
                t.unpark();
            }
        }
    }
}

/// The kernel's `current`: the running task, and the run it belongs to.
pub struct Current<'a, P: Platform> {
    pub sched: &'a Sched<P>,
    pub task: &'a Task<P>,
}

impl<'a, P: Platform> Current<'a, P> {
    #[inline(always)]
    pub fn pid(&self) -> Pid {
        self.task.pid
    }
    /// Report an event, the kernel's or the protocol's (a no-op in the runtime build).
    #[inline(always)]
    pub fn emit(&self, ev: impl Into<Event<<P::Ghost as Ghost>::Proto>>) {
        if P::Ghost::ENABLED {
            self.sched.ghost.emit(self.task.pid, ev.into())
        }
    }
    /// The configuration's seeded mutation is running here (see [`Ghost::mutation_reached`]).
    #[inline(always)]
    pub fn mutation_reached(&self) {
        if P::Ghost::ENABLED {
            self.sched.ghost.mutation_reached(self.task.pid)
        }
    }
    /// A loop head: `false` means the checker stopped this loop (see [`Ghost::loop_head`]).
    #[inline(always)]
    pub fn loop_head(&self, summary: Summary) -> bool {
        if !P::Ghost::ENABLED {
            return true;
        }
        if P::STALE_READS && self.sched.ghost.others_finished(self.task.pid) {
            // Every other task has finished: from now on this task's loads read the newest
            // stores (see `Platform::STALE_READS`).
            P::fresh_reads(true);
        }
        match self.sched.ghost.loop_head(self.task.pid, summary) {
            LoopVerdict::Continue => true,
            LoopVerdict::Yield => {
                P::yield_now();
                true
            }
            LoopVerdict::Stop => false,
        }
    }
    /// A checkpoint with the model's summary of this task's state (see [`Ghost::checkpoint`]);
    /// a no-op in the runtime build and under every engine but the stateful one.
    #[inline(always)]
    pub fn checkpoint(&self, summary: Summary) {
        if P::Ghost::ENABLED {
            self.sched.ghost.checkpoint(self.task.pid, summary)
        }
    }
    /// A declaration of the live locals here (see [`Ghost::live_locals`]); a no-op in the
    /// runtime build and under every engine but the stateful one.
    #[inline(always)]
    pub fn live_locals(&self, summary: Summary) {
        if P::Ghost::ENABLED {
            self.sched.ghost.live_locals(self.task.pid, summary)
        }
    }
    /// The context a loop starts in (see [`Ghost::loop_context`]); 0 in the runtime build.
    #[inline(always)]
    pub fn loop_context(&self) -> u64 {
        if !P::Ghost::ENABLED {
            return 0;
        }
        self.sched.ghost.loop_context(self.task.pid)
    }
    /// `do_exit()`: the task is done. Lets the checker settle sleepers nobody can wake.
    pub fn exit(&self) {
        if P::Ghost::ENABLED {
            let unpark = self.sched.ghost.task_exit(self.task.pid);
            self.sched.unpark_mask(unpark);
        }
    }
}

/// The summary of a loop head or checkpoint (see [`Summary`]).
#[inline(always)]
pub fn loop_summary(context: u64, location: u64, locals: u64) -> Summary {
    Summary { context, location, locals }
}

/// `set_current_state(state)`: `smp_store_mb(current->state, state)`.
#[inline(always)]
pub fn set_current_state<P: Platform>(cur: &Current<P>, state: u32) {
    cur.task.sleep_state.store(state, Relaxed);
    cur.task.state.store(state, Relaxed);
    P::fence(SeqCst);
}

/// `__set_current_state(state)`: a plain store, no barrier.
#[inline(always)]
pub fn __set_current_state<P: Platform>(cur: &Current<P>, state: u32) {
    cur.task.state.store(state, Relaxed);
}

/// `try_to_wake_up(p, state)`: if `p` sleeps in a state in `mode`, make it runnable and
/// kick it. Returns whether it did. Full barrier before reading `p->state` (it pairs with
/// the one in `set_current_state`).
pub fn try_to_wake_up<P: Platform>(sched: &Sched<P>, p: &Task<P>, mode: u32) -> bool {
    P::fence(SeqCst);
    let mut expected = TASK_INTERRUPTIBLE;
    loop {
        if expected & mode == 0 {
            return false;
        }
        match p.state.compare_exchange(expected, TASK_RUNNING, AcqRel, Relaxed) {
            Ok(_) => break,
            // A sleeper in the other sleeping state: try that one (at most once more).
            Err(s) if s != TASK_RUNNING && s != expected => expected = s,
            Err(_) => return false,
        }
    }
    if P::Ghost::ENABLED {
        sched.ghost.woken(p.pid);
    }
    p.unpark();
    true
}

/// `io_schedule_timeout(timeout)` (and `schedule_timeout`): sleep until woken or until
/// `timeout` jiffies pass, unless a waker already made the task runnable. Returns the
/// jiffies left (0 when the timer expired).
pub fn io_schedule_timeout<P: Platform>(cur: &Current<P>, timeout: u64) -> u64 {
    let task = cur.task;
    let sleep_state = task.sleep_state.load(Relaxed);
    cur.emit(KernelEvent::Schedule { timeout });
    match cur.sched.timer {
        TimerModel::AnyTime => {
            // The timer's expiry is this one explored step; the explorer decides whether a
            // waker's try_to_wake_up comes before it (woken) or after it (timed out).
            match task.state.compare_exchange(sleep_state, TASK_RUNNING, AcqRel, Acquire) {
                Ok(_) => {
                    cur.emit(KernelEvent::TimedOut { jiffies: timeout });
                    0
                }
                Err(_) => {
                    cur.emit(KernelEvent::Woken);
                    timeout
                }
            }
        }
        TimerModel::Never => loop {
            if task.state.load(Acquire) == TASK_RUNNING {
                cur.emit(KernelEvent::Woken);
                return timeout;
            }
            if P::Ghost::ENABLED {
                let ghost = &cur.sched.ghost;
                if ghost.aborted() {
                    return slept_forever(cur);
                }
                match ghost.untimed_sleep(task.pid) {
                    SleepDecision::Park => {}
                    SleepDecision::Abort { unpark } => {
                        cur.sched.unpark_mask(unpark);
                        return slept_forever(cur);
                    }
                }
            }
            P::park();
        },
        TimerModel::Real { jiffy } => {
            let deadline = Instant::now() + jiffy * timeout as u32;
            loop {
                if task.state.load(Acquire) == TASK_RUNNING {
                    cur.emit(KernelEvent::Woken);
                    let left = deadline.saturating_duration_since(Instant::now());
                    return (left.as_nanos() / jiffy.as_nanos().max(1)) as u64;
                }
                let now = Instant::now();
                if now >= deadline {
                    // process_timeout(): wake_up_process(), racing with any waker.
                    return match task.state.compare_exchange(sleep_state, TASK_RUNNING, AcqRel, Acquire) {
                        Ok(_) => {
                            cur.emit(KernelEvent::TimedOut { jiffies: timeout });
                            0
                        }
                        Err(_) => {
                            cur.emit(KernelEvent::Woken);
                            0
                        }
                    };
                }
                P::park_timeout(deadline - now);
            }
        }
    }
}

/// `schedule()` with no timer (`wait_for_completion()`, a worker waiting for work): sleep
/// until a waker makes the task runnable, whatever the run's timer model. A sleeper nobody can
/// wake any more is reported (`SleptForever`) exactly as under timer model `never`.
pub fn schedule<P: Platform>(cur: &Current<P>) {
    let task = cur.task;
    // No `Schedule` event: its timeout is a number of jiffies; the caller says what it waits for.
    loop {
        if task.state.load(Acquire) == TASK_RUNNING {
            cur.emit(KernelEvent::Woken);
            return;
        }
        if P::Ghost::ENABLED {
            let ghost = &cur.sched.ghost;
            if ghost.aborted() {
                slept_forever(cur);
                return;
            }
            match ghost.untimed_sleep(task.pid) {
                SleepDecision::Park => {}
                SleepDecision::Abort { unpark } => {
                    cur.sched.unpark_mask(unpark);
                    slept_forever(cur);
                    return;
                }
            }
        }
        P::park();
    }
}

/// Timer model `never`: the checker found that nobody can wake this task. Record it and let
/// the task run on as if woken, so the execution can end.
fn slept_forever<P: Platform>(cur: &Current<P>) -> u64 {
    cur.emit(KernelEvent::SleptForever);
    cur.task.state.store(TASK_RUNNING, Relaxed);
    0
}

/// How the tasks of a run start. Under an explorer they all start at once and the explorer
/// decides who runs; on real threads they wait at a gate until all exist (nothing else would
/// make them overlap), then each waits its own delay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// Real threads only: per pid, how long after the gate the task begins.
    pub delays: Vec<Duration>,
}

/// The stateful platform's task id of pid `pid` in [`run_tasks`] of `n` tasks: the body (task 0)
/// runs the last pid, the others are spawned in pid order.
pub fn explorer_task(n: usize, pid: Pid) -> usize {
    if pid + 1 == n {
        0
    } else {
        pid + 1
    }
}

/// Run `n` tasks to completion: tasks `0..n-1` on spawned threads and the last one on the
/// calling thread (which is itself an explored thread under loom and shuttle, so a scenario
/// may have as many tasks as the explorer has threads), then join them. On real threads every
/// task starts behind a gate, after its delay in `start`, and the CPU time the tasks used
/// (summed over them) is returned when the platform can measure it.
pub fn run_tasks<P: Platform, F: Fn(Pid) + Send + Sync + 'static>(
    n: usize,
    name: &dyn Fn(Pid) -> String,
    start: &Start,
    task: Arc<F>,
) -> Option<u64> {
    if n == 0 {
        return Some(0);
    }
    let real = P::REAL_THREADS.then(|| {
        (Arc::new(std::sync::Barrier::new(n)), Arc::new(std::sync::Mutex::new(Some(0u64))), start.delays.clone())
    });
    // The body of task `pid` on its thread.
    let body = {
        let real = real.clone();
        move |pid: Pid| match &real {
            None => task(pid),
            Some((gate, cpu, delays)) => {
                gate.wait();
                let delay = delays.get(pid).copied().unwrap_or_default();
                if !delay.is_zero() {
                    // Sleeping would round up to the timer slack (50 us or more); spin, but
                    // give the CPU away while waiting: threads outnumber cores.
                    let until = Instant::now() + delay;
                    while Instant::now() < until {
                        P::yield_now();
                    }
                }
                let t0 = P::thread_cpu_ns();
                task(pid);
                let used = P::thread_cpu_ns().zip(t0).map(|(b, a)| b.saturating_sub(a));
                let mut total = cpu.lock().unwrap_or_else(|e| e.into_inner());
                *total = total.zip(used).map(|(a, b)| a + b);
            }
        }
    };
    let body = Arc::new(body);
    // Only real threads have names (the explorers' tasks are named by their pid in traces).
    let handles: Vec<P::JoinHandle> = (0..n - 1)
        .map(|pid| {
            let body = Arc::clone(&body);
            let name = if P::REAL_THREADS { name(pid) } else { String::new() };
            P::spawn(name, move || body(pid))
        })
        .collect();
    body(n - 1);
    P::join_all(handles);
    real.and_then(|(_, cpu, _)| *cpu.lock().unwrap_or_else(|e| e.into_inner()))
}
