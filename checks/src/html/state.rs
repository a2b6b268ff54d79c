//! The state panel's values: the shared objects of a counterexample, by their kernel names,
//! after each event, computed by replaying the trace's events (never by parsing its text).
//!
//! The kernel primitives' part (locks, wait queues, task states) comes from the
//! [`KernelEvent`]s every model shares; each shipped model adds its own objects:
//! kswapd-stall `kswapd_exclusive`, `pgdat[n].flags`, `nr_wb_congested`; compaction each
//! compactor's scanner positions, `cc->contended`, pending signal and `need_resched`, and the
//! state of every page of the zone as that compactor sees it; reclaim-throttle who runs on
//! each CPU and who waits for it, `nr_writeback_throttled`, and each throttled task's reason.

use std::collections::BTreeMap;

use mmmodel::compaction::{self, Compaction, PageState};
use mmmodel::event::{Event, KernelEvent, LockName, NUMA_NO_NODE};
use mmmodel::ghost::Pid;
use mmmodel::reclaim::{self, KswapdStall};
use mmmodel::throttle::{self, ReclaimThrottle};

use crate::check::Report;
use crate::spec::config_of;

/// One object of the panel and its value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The panel's section: `shared`, `locks`, `wait queues`, `tasks`, or a task's `cc`.
    pub group: String,
    /// The object's kernel name (`kswapd_exclusive`, `pgdat[0].flags`, `tree_lock`).
    pub object: String,
    pub value: String,
}

fn entry(group: &str, object: impl Into<String>, value: impl Into<String>) -> Entry {
    Entry { group: group.to_string(), object: object.into(), value: value.into() }
}

/// `T1 kswapd1`.
fn task(comms: &[String], p: Pid) -> String {
    match comms.get(p) {
        Some(c) => format!("T{p} {c}"),
        None => format!("T{p}"),
    }
}

/// What a task is doing, as far as the kernel primitives and the model's own events tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    Running,
    /// `prepare_to_wait()` set its state: it is on the queue, not yet asleep.
    Queued(&'static str),
    /// In `io_schedule_timeout(timeout)`.
    Asleep(u64),
    /// In `schedule()` with no timer; what it waits for (`wait_for_completion()` in
    /// `flush_work(cpu0)`, a kworker with no work, `lock_buffer()`).
    AsleepUntimed(String),
    Woken,
    TimedOut(u64),
    /// Runnable and waiting for its CPU (under `preempt = "none"`); `woken`: it was woken
    /// from a sleep just before.
    WaitsForCpu {
        cpu: u8,
        woken: bool,
    },
    /// Running on its CPU (under `preempt = "none"`, on a CPU it shares).
    OnCpu(u8),
    /// kswapd in `kswapd_try_to_sleep()`: on `pgdat[node]->kswapd_wait`, the node's checks of
    /// `prepare_kswapd_sleep()` still to run.
    KswapdWait(i32),
    /// The task's code ended while it was asleep on `.0` (the model ends a task there: kswapd
    /// asleep on its queue, an idle kworker); nothing in the run wakes it.
    EndedAsleep(String),
    /// The task's code returned.
    Finished,
    /// Nobody is left to wake it: the kernel task sleeps for ever (the harness runs it on).
    Forever,
    Looping(usize),
    StepBound(u64),
}

impl TaskState {
    pub fn text(&self) -> String {
        match self {
            TaskState::Running => "running".into(),
            TaskState::Queued(wq) => format!("on {wq}, state set, not asleep yet"),
            TaskState::Asleep(t) => format!("asleep in io_schedule_timeout({t})"),
            TaskState::AsleepUntimed(what) => format!("asleep in {what}"),
            TaskState::Woken => "running (woken)".into(),
            TaskState::TimedOut(j) => format!("running (timer expired after {j} jiffies)"),
            TaskState::WaitsForCpu { cpu, woken: true } => format!("woken, runnable, waits for cpu{cpu}"),
            TaskState::WaitsForCpu { cpu, woken: false } => format!("runnable, waits for cpu{cpu}"),
            TaskState::OnCpu(cpu) => format!("running on cpu{cpu}"),
            TaskState::KswapdWait(n) => {
                format!("on pgdat[{n}]->kswapd_wait (kswapd_try_to_sleep), not asleep yet")
            }
            TaskState::EndedAsleep(what) => format!("asleep {what} (its code in the model ends here)"),
            TaskState::Finished => "finished".into(),
            TaskState::Forever => "asleep for ever (the kernel task never runs again)".into(),
            TaskState::Looping(p) => format!("loops for ever (period {p})"),
            TaskState::StepBound(s) => format!("stopped by the step bound ({s} steps)"),
        }
    }

    /// The state once the task's code has returned.
    fn ended(&self) -> TaskState {
        match self {
            TaskState::KswapdWait(n) => TaskState::EndedAsleep(format!("on pgdat[{n}]->kswapd_wait")),
            TaskState::AsleepUntimed(what) => TaskState::EndedAsleep(format!("in {what}")),
            // What the checker made of it stays: the harness's run-out is not the kernel's.
            TaskState::Forever | TaskState::Looping(_) | TaskState::StepBound(_) => self.clone(),
            _ => TaskState::Finished,
        }
    }
}

fn set(tasks: &mut [TaskState], p: Pid, s: TaskState) {
    if let Some(t) = tasks.get_mut(p) {
        // A task the harness runs on after its endless sleep stays asleep in the kernel.
        if *t != TaskState::Forever {
            *t = s;
        }
    }
}

/// The kernel primitives' state: lock owners, wait-queue contents, task states.
#[derive(Debug, Clone)]
pub struct KernelState {
    comms: Vec<String>,
    locks: BTreeMap<LockName, Option<Pid>>,
    queues: BTreeMap<&'static str, Vec<Pid>>,
    tasks: Vec<TaskState>,
}

impl KernelState {
    /// Every lock and queue the trace names, free and empty.
    pub fn new(comms: &[String], events: &[(Pid, Option<KernelEvent>)]) -> Self {
        let mut locks = BTreeMap::new();
        let mut queues = BTreeMap::new();
        for (_, k) in events {
            match k {
                Some(
                    KernelEvent::LockAcquired { lock, .. }
                    | KernelEvent::TrylockFailed { lock }
                    | KernelEvent::LockReleased { lock }
                    | KernelEvent::LockLeaked { lock }
                    | KernelEvent::LockRecursion { lock },
                ) => {
                    if let LockName::WaitQueue(wq) = lock {
                        queues.entry(wq.0).or_insert_with(Vec::new);
                    }
                    locks.entry(*lock).or_insert(None);
                }
                Some(
                    KernelEvent::Enqueued { wq }
                    | KernelEvent::FinishWait { wq }
                    | KernelEvent::WakeUp { wq, .. }
                    | KernelEvent::WakeSkipped { wq }
                    | KernelEvent::WakeSkippedStale { wq },
                ) => {
                    queues.entry(wq.0).or_insert_with(Vec::new);
                }
                _ => {}
            }
        }
        KernelState { comms: comms.to_vec(), locks, queues, tasks: vec![TaskState::Running; comms.len()] }
    }

    /// Set `pid`'s state (a model's own event: a sleep the kernel primitives do not show, a
    /// CPU waited for).
    pub fn set_task(&mut self, pid: Pid, s: TaskState) {
        set(&mut self.tasks, pid, s);
    }

    /// `pid`'s code returned.
    pub fn exit(&mut self, pid: Pid) {
        if let Some(t) = self.tasks.get_mut(pid) {
            *t = t.ended();
        }
    }

    /// `pid`'s state.
    pub fn task_state(&self, pid: Pid) -> Option<&TaskState> {
        self.tasks.get(pid)
    }

    pub fn step(&mut self, pid: Pid, ev: &KernelEvent) {
        match *ev {
            KernelEvent::LockAcquired { lock, .. } => {
                self.locks.insert(lock, Some(pid));
            }
            KernelEvent::LockReleased { lock } | KernelEvent::LockLeaked { lock } => {
                self.locks.insert(lock, None);
            }
            KernelEvent::TrylockFailed { .. } | KernelEvent::LockRecursion { .. } => {}
            KernelEvent::Enqueued { wq } => {
                let q = self.queues.entry(wq.0).or_default();
                if !q.contains(&pid) {
                    q.push(pid);
                }
                set(&mut self.tasks, pid, TaskState::Queued(wq.0));
            }
            KernelEvent::FinishWait { wq } => {
                self.queues.entry(wq.0).or_default().retain(|p| *p != pid);
                set(&mut self.tasks, pid, TaskState::Running);
            }
            KernelEvent::WakeUp { wq, woken, .. } => {
                // autoremove: a task made runnable leaves the queue.
                self.queues.entry(wq.0).or_default().retain(|p| woken & (1 << p) == 0);
            }
            KernelEvent::WakeSkipped { .. } | KernelEvent::WakeSkippedStale { .. } => {}
            KernelEvent::Schedule { timeout } => set(&mut self.tasks, pid, TaskState::Asleep(timeout)),
            KernelEvent::Woken => set(&mut self.tasks, pid, TaskState::Woken),
            KernelEvent::TimedOut { jiffies } => set(&mut self.tasks, pid, TaskState::TimedOut(jiffies)),
            KernelEvent::SleptForever => set(&mut self.tasks, pid, TaskState::Forever),
            KernelEvent::Livelock { period } => set(&mut self.tasks, pid, TaskState::Looping(period)),
            KernelEvent::StepBound { steps } => set(&mut self.tasks, pid, TaskState::StepBound(steps)),
        }
    }

    /// The tasks on wait queue `wq`, in the order they queued.
    pub fn queue(&self, wq: &str) -> Option<&[Pid]> {
        self.queues.get(wq).map(|v| v.as_slice())
    }

    fn entries(&self, out: &mut Vec<Entry>) {
        for (lock, owner) in &self.locks {
            let v = match owner {
                Some(p) => format!("held by {}", task(&self.comms, *p)),
                None => "free".to_string(),
            };
            out.push(entry("locks", lock.to_string(), v));
        }
        for (wq, q) in &self.queues {
            let v = if q.is_empty() {
                "empty".to_string()
            } else {
                q.iter().map(|p| task(&self.comms, *p)).collect::<Vec<_>>().join(", ")
            };
            out.push(entry("wait queues", *wq, v));
        }
        for (p, t) in self.tasks.iter().enumerate() {
            out.push(entry("tasks", task(&self.comms, p), t.text()));
        }
    }
}

/// `-1 (NUMA_NO_NODE)` or the node id.
pub fn node_text(n: i32) -> String {
    if n == NUMA_NO_NODE {
        "-1 (NUMA_NO_NODE)".to_string()
    } else {
        n.to_string()
    }
}

/// The kswapd-stall model's shared objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReclaimState {
    pub kswapd_exclusive: i32,
    /// `PGDAT_CONGESTED` of each node's `pgdat->flags`.
    pub congested: Vec<bool>,
    /// `nr_wb_congested[BLK_RW_ASYNC]`.
    pub nr_wb_congested: i64,
    /// Per node, under `lkmm`: a clear took effect and its barrier is still to come (1), and a
    /// set has come after it since (2): the clear's own report then leaves the flag set.
    clear_pending: Vec<u8>,
}

impl ReclaimState {
    pub fn new(cfg: &reclaim::Config) -> Self {
        let bdis = cfg.roles.iter().filter(|r| matches!(r, reclaim::Role::Bdi { congested_at_start: true })).count();
        ReclaimState {
            kswapd_exclusive: NUMA_NO_NODE,
            congested: vec![false; cfg.nr_nodes()],
            nr_wb_congested: bdis as i64,
            clear_pending: vec![0; cfg.nr_nodes()],
        }
    }

    pub fn step(&mut self, ev: &reclaim::Event) {
        use reclaim::Event as R;
        let mut flag = |node: i32, v: bool| {
            if let Some(c) = usize::try_from(node).ok().and_then(|n| self.congested.get_mut(n)) {
                *c = v;
            }
        };
        match *ev {
            R::CmpxchgWon { node, .. } => self.kswapd_exclusive = node,
            R::Released { node, prev } if node == prev => self.kswapd_exclusive = NUMA_NO_NODE,
            R::CongestedSet { node } => {
                flag(node, true);
                if let Some(p @ 1) = usize::try_from(node).ok().and_then(|n| self.clear_pending.get_mut(n)) {
                    *p = 2;
                }
            }
            R::CongestedClearStored { node } => {
                flag(node, false);
                if let Some(p) = usize::try_from(node).ok().and_then(|n| self.clear_pending.get_mut(n)) {
                    *p = 1;
                }
            }
            R::CongestedCleared { node } => {
                let p = usize::try_from(node).ok().and_then(|n| self.clear_pending.get_mut(n)).map(std::mem::take);
                if p != Some(2) {
                    flag(node, false);
                }
            }
            R::WbCongested => self.nr_wb_congested += 1,
            R::WbUncongested => self.nr_wb_congested -= 1,
            _ => {}
        }
    }

    fn entries(&self, out: &mut Vec<Entry>) {
        out.push(entry("shared", "kswapd_exclusive", node_text(self.kswapd_exclusive)));
        for (n, c) in self.congested.iter().enumerate() {
            out.push(entry("shared", format!("pgdat[{n}].flags"), if *c { "PGDAT_CONGESTED" } else { "0" }));
        }
        out.push(entry("shared", "nr_wb_congested[BLK_RW_ASYNC]", self.nr_wb_congested.to_string()));
    }
}

/// One compactor's `struct compact_control` as the panel shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cc {
    pub pid: Pid,
    pub migrate_pfn: u32,
    pub free_pfn: u32,
    pub contended: bool,
    /// The zone's pages, from `zone_start_pfn`.
    pub pages: Vec<PageState>,
    /// `cc->migratepages`, newest first (as the model keeps it).
    pub migratepages: Vec<u32>,
    /// `cc->freepages`, oldest first.
    pub freepages: Vec<u32>,
}

/// The compaction model's shared objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionState {
    pub zone_start_pfn: u32,
    pub pages_per_block: u32,
    pub ccs: Vec<Cc>,
    /// Per task: `fatal_signal_pending()`, `need_resched()`.
    pub fatal: Vec<bool>,
    pub resched: Vec<bool>,
}

/// One letter per page state, for the page map.
fn page_letter(p: PageState) -> char {
    match p {
        PageState::Lru => 'L',
        PageState::Buddy => 'F',
        PageState::IsolatedMigrate => 'M',
        PageState::IsolatedFree => 'f',
        PageState::Unmovable => 'U',
    }
}

/// The legend of the page map.
pub const PAGE_LEGEND: &str =
    "one letter a page, a space between pageblocks: L on the LRU, F free (buddy), M isolated for migration, f isolated free target, U unmovable";

impl CompactionState {
    pub fn new(cfg: &compaction::Config) -> Self {
        let start = cfg.zone_start_pfn();
        let end = cfg.zone_end_pfn();
        let ppb = cfg.pages_per_block;
        let pages: Vec<PageState> = (start..end).map(|pfn| cfg.initial_page(pfn)).collect();
        let ccs = cfg
            .roles
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, compaction::Role::Compactor { .. }))
            .map(|(pid, _)| Cc {
                pid,
                migrate_pfn: start,
                free_pfn: (end - 1) & !(ppb - 1),
                contended: false,
                pages: pages.clone(),
                migratepages: Vec::new(),
                freepages: Vec::new(),
            })
            .collect();
        let n = cfg.roles.len();
        CompactionState {
            zone_start_pfn: start,
            pages_per_block: ppb,
            ccs,
            fatal: vec![false; n],
            resched: vec![false; n],
        }
    }

    fn page(&mut self, pid: Pid, pfn: u32, to: PageState) {
        let start = self.zone_start_pfn;
        if let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) {
            if let Some(p) = pfn.checked_sub(start).and_then(|i| cc.pages.get_mut(i as usize)) {
                *p = to;
            }
        }
    }

    pub fn step(&mut self, pid: Pid, ev: &compaction::Event) {
        use compaction::Event as C;
        let start = self.zone_start_pfn;
        match *ev {
            C::ScannerAt { migrate_pfn, free_pfn } => {
                if let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) {
                    cc.migrate_pfn = migrate_pfn;
                    cc.free_pfn = free_pfn;
                }
            }
            C::ContendedSet { .. } | C::ContendedCleared => {
                if let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) {
                    cc.contended = matches!(ev, C::ContendedSet { .. });
                }
            }
            C::SignalSent { target } => {
                if let Some(f) = self.fatal.get_mut(target) {
                    *f = true;
                }
            }
            C::ReschedSet { target } => {
                if let Some(f) = self.resched.get_mut(target) {
                    *f = true;
                }
            }
            C::Isolated { free, pfn, pages } => {
                for q in pfn..pfn + pages {
                    self.page(pid, q, if free { PageState::IsolatedFree } else { PageState::IsolatedMigrate });
                    if let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) {
                        if free {
                            cc.freepages.push(q);
                        } else {
                            cc.migratepages.insert(0, q);
                        }
                    }
                }
            }
            // migrate_pages(): each source, in list order, gets the oldest free target; the
            // source is freed and the target is in use. After -ENOMEM the rest are put back.
            C::Migrated { pages, enomem } => {
                let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) else { return };
                let sources = std::mem::take(&mut cc.migratepages);
                for (n, src) in sources.iter().enumerate() {
                    let idx = |pfn: u32| (pfn - start) as usize;
                    if n < pages as usize && !cc.freepages.is_empty() {
                        let dst = cc.freepages.remove(0);
                        cc.pages[idx(*src)] = PageState::Buddy;
                        cc.pages[idx(dst)] = PageState::Lru;
                    } else if enomem {
                        // putback_movable_pages()
                        cc.pages[idx(*src)] = PageState::Lru;
                    }
                }
            }
            // putback_movable_pages() of the call's isolated pages.
            C::SkipOnFailure { .. } | C::IsolateMigrate { result: compaction::IsolateMigrate::Abort, .. } => {
                let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) else { return };
                for pfn in std::mem::take(&mut cc.migratepages) {
                    cc.pages[(pfn - start) as usize] = PageState::Lru;
                }
            }
            // release_freepages(), then the scanner positions compact_zone() returns with.
            C::CompactEnd { migrate_pfn, free_pfn, .. } => {
                let Some(cc) = self.ccs.iter_mut().find(|c| c.pid == pid) else { return };
                for pfn in std::mem::take(&mut cc.freepages) {
                    cc.pages[(pfn - start) as usize] = PageState::Buddy;
                }
                cc.migrate_pfn = migrate_pfn;
                cc.free_pfn = free_pfn;
            }
            C::FatalSeen => {
                if let Some(f) = self.fatal.get_mut(pid) {
                    *f = true;
                }
            }
            _ => {}
        }
    }

    /// The page map of `cc`: one letter per page, a space between pageblocks.
    pub fn page_map(&self, cc: &Cc) -> String {
        let mut s = String::new();
        for (i, p) in cc.pages.iter().enumerate() {
            if i > 0 && (i as u32).is_multiple_of(self.pages_per_block) {
                s.push(' ');
            }
            s.push(page_letter(*p));
        }
        s
    }

    fn entries(&self, comms: &[String], out: &mut Vec<Entry>) {
        for cc in &self.ccs {
            let g = format!("cc of {}", task(comms, cc.pid));
            out.push(entry(&g, "cc->migrate_pfn", cc.migrate_pfn.to_string()));
            out.push(entry(&g, "cc->free_pfn", cc.free_pfn.to_string()));
            out.push(entry(&g, "cc->contended", if cc.contended { "true" } else { "false" }));
            out.push(entry(
                &g,
                format!("pages, pfn {}..{}", self.zone_start_pfn, self.zone_start_pfn + cc.pages.len() as u32 - 1),
                self.page_map(cc),
            ));
        }
        for (p, (f, r)) in self.fatal.iter().zip(&self.resched).enumerate() {
            if *f {
                out.push(entry("signals", format!("fatal_signal_pending(T{p})"), "true"));
            }
            if *r {
                out.push(entry("signals", format!("need_resched(T{p})"), "true"));
            }
        }
    }
}

/// reclaim-throttle's objects: who runs on each CPU and who waits for it (under
/// `preempt = "none"`; `cpu_run()` and `cpu_give_up()`), `nr_writeback_throttled`, and the reason
/// each task inside `reclaim_throttle()` throttles for.
#[derive(Debug, Clone)]
pub struct ThrottlePanel {
    /// Per CPU: the task running on it, and the tasks runnable and waiting for it, in order.
    cpus: Vec<(Option<Pid>, Vec<Pid>)>,
    nr_writeback_throttled: u32,
    throttled: BTreeMap<Pid, String>,
    /// The CPUs that arbitrate: `preempt = "none"` and more than one task bound to the CPU
    /// (a CPU with one task takes no step, and its task runs whenever it is runnable).
    shown: Vec<bool>,
}

impl ThrottlePanel {
    pub fn new(cfg: &throttle::Config) -> Self {
        ThrottlePanel {
            cpus: vec![(None, Vec::new()); cfg.cpus as usize],
            nr_writeback_throttled: 0,
            throttled: BTreeMap::new(),
            shown: cfg
                .tasks_per_cpu()
                .iter()
                .map(|&n| n > 1 && cfg.preempt == mmmodel::kernel::cpu::Preempt::None)
                .collect(),
        }
    }

    pub fn step(&mut self, pid: Pid, ev: &throttle::Event) {
        use mmmodel::kernel::cpu::CpuEvent;
        use throttle::Event as T;
        match *ev {
            T::Cpu(CpuEvent::Wait { cpu }) => {
                if let Some(c) = self.cpus.get_mut(cpu as usize) {
                    c.1.push(pid);
                }
            }
            T::Cpu(CpuEvent::Run { cpu }) => {
                if let Some(c) = self.cpus.get_mut(cpu as usize) {
                    c.1.retain(|&p| p != pid);
                    c.0 = Some(pid);
                }
            }
            T::Cpu(CpuEvent::Yield { cpu, .. }) => {
                if let Some(c) = self.cpus.get_mut(cpu as usize) {
                    c.0 = None;
                }
            }
            T::WritebackThrottledInc { now } | T::WritebackThrottledDec { now } => self.nr_writeback_throttled = now,
            T::Throttle { reason, .. } => {
                self.throttled.insert(pid, reason.to_string());
            }
            T::ThrottleEnd { .. } => {
                self.throttled.remove(&pid);
            }
            _ => {}
        }
    }

    fn entries(&self, comms: &[String], out: &mut Vec<Entry>) {
        for (i, (runs, waits)) in self.cpus.iter().enumerate() {
            if self.shown.get(i).copied().unwrap_or(false) {
                let on = runs.map_or_else(|| "nobody".to_string(), |p| task(comms, p));
                out.push(entry("cpus", format!("cpu{i} runs"), on));
                if !waits.is_empty() {
                    let w: Vec<String> = waits.iter().map(|&p| task(comms, p)).collect();
                    out.push(entry("cpus", format!("cpu{i} waiting"), w.join(", ")));
                }
            }
        }
        out.push(entry("shared", "nr_writeback_throttled", self.nr_writeback_throttled.to_string()));
        for (&p, r) in &self.throttled {
            out.push(entry("shared", format!("reclaim_throttle() of {}", task(comms, p)), r.clone()));
        }
    }
}

/// What a reclaim-throttle event says of its task's state that the kernel primitives do not:
/// a sleep in `schedule()` with no timer (no `Schedule` event, its caller says what it waits
/// for), a CPU waited for and then run on.
fn throttle_task_state(ev: &throttle::Event, now: Option<&TaskState>) -> Option<TaskState> {
    use mmmodel::kernel::cpu::CpuEvent;
    use throttle::Event as T;
    Some(match *ev {
        T::FlushWaits { cpu } => TaskState::AsleepUntimed(format!("wait_for_completion(), flush_work(cpu{cpu})")),
        T::WorkerIdle => TaskState::AsleepUntimed("worker_thread(), no work".into()),
        T::BufferWait => TaskState::AsleepUntimed("lock_buffer(), the buffer locked".into()),
        T::Cpu(CpuEvent::Wait { cpu }) => TaskState::WaitsForCpu {
            cpu,
            woken: matches!(now, Some(TaskState::Woken | TaskState::TimedOut(_) | TaskState::AsleepUntimed(_))),
        },
        T::Cpu(CpuEvent::Run { cpu }) => TaskState::OnCpu(cpu),
        _ => return None,
    })
}

/// A model's own state, if the model is one of the shipped ones.
enum ModelState {
    Reclaim(ReclaimState),
    Compaction(CompactionState),
    Throttle(ThrottlePanel),
    Other,
}

/// The panel after each event: `snapshots[0]` is the initial state, `snapshots[i + 1]` the
/// state after event `i` of the counterexample of `report` (its shown run).
pub fn replay(report: &Report) -> Option<Vec<Vec<Entry>>> {
    let run = &report.runs[report.shown?];
    let f = run.outcome.found.as_ref()?;
    let spec = &*report.scenario.spec;
    let comms = spec.comms();
    let kernel = f.trace.kernel_events();
    let mut k = KernelState::new(&comms, &kernel);
    let mut model = if let Some(cfg) = config_of::<KswapdStall>(spec) {
        ModelState::Reclaim(ReclaimState::new(cfg))
    } else if let Some(cfg) = config_of::<Compaction>(spec) {
        ModelState::Compaction(CompactionState::new(cfg))
    } else if let Some(cfg) = config_of::<ReclaimThrottle>(spec) {
        ModelState::Throttle(ThrottlePanel::new(cfg))
    } else {
        ModelState::Other
    };
    let snapshot = |k: &KernelState, m: &ModelState| {
        let mut out = Vec::new();
        match m {
            ModelState::Reclaim(r) => r.entries(&mut out),
            ModelState::Compaction(c) => c.entries(&comms, &mut out),
            ModelState::Throttle(t) => t.entries(&comms, &mut out),
            ModelState::Other => {}
        }
        k.entries(&mut out);
        out
    };
    // The tasks that finished, by the number of events before they did.
    let mut exits = f.exits.iter().peekable();
    let mut exit_upto = |k: &mut KernelState, n: usize| {
        while let Some(&&(p, _)) = exits.peek().filter(|(_, at)| *at <= n) {
            k.exit(p);
            exits.next();
        }
    };
    exit_upto(&mut k, 0);
    let mut snaps = vec![snapshot(&k, &model)];
    let reclaim_events = f.trace.events::<reclaim::Event>();
    let compaction_events = f.trace.events::<compaction::Event>();
    let throttle_events = f.trace.events::<throttle::Event>();
    for (i, (pid, kev)) in kernel.iter().enumerate() {
        if let Some(e) = kev {
            k.step(*pid, e);
        }
        match &mut model {
            ModelState::Reclaim(r) => {
                if let Some((_, Event::Proto(e))) = reclaim_events.and_then(|v| v.get(i)) {
                    r.step(e);
                    if let reclaim::Event::KswapdSleep { node } = *e {
                        k.set_task(*pid, TaskState::KswapdWait(node));
                    }
                }
            }
            ModelState::Compaction(c) => {
                if let Some((_, Event::Proto(e))) = compaction_events.and_then(|v| v.get(i)) {
                    c.step(*pid, e);
                }
            }
            ModelState::Throttle(t) => {
                if let Some((_, Event::Proto(e))) = throttle_events.and_then(|v| v.get(i)) {
                    t.step(*pid, e);
                    let now = k.task_state(*pid).cloned();
                    if let Some(s) = throttle_task_state(e, now.as_ref()) {
                        k.set_task(*pid, s);
                    }
                }
            }
            ModelState::Other => {}
        }
        exit_upto(&mut k, i + 1);
        snaps.push(snapshot(&k, &model));
    }
    Some(snaps)
}

/// [`ReclaimState`] after `events` (for tests against the model's final state).
pub fn reclaim_after(cfg: &reclaim::Config, events: &[(Pid, Event<reclaim::Event>)]) -> ReclaimState {
    let mut s = ReclaimState::new(cfg);
    for (_, e) in events {
        if let Event::Proto(p) = e {
            s.step(p);
        }
    }
    s
}

/// [`CompactionState`] after each of `events` (for tests against the events' own positions).
pub fn compaction_states(cfg: &compaction::Config, events: &[(Pid, Event<compaction::Event>)]) -> Vec<CompactionState> {
    let mut s = CompactionState::new(cfg);
    let mut out = Vec::new();
    for (pid, e) in events {
        if let Event::Proto(p) = e {
            s.step(*pid, p);
        }
        out.push(s.clone());
    }
    out
}

/// [`KernelState`] after `events` (for tests).
pub fn kernel_after(comms: &[String], events: &[(Pid, Option<KernelEvent>)]) -> KernelState {
    let mut k = KernelState::new(comms, events);
    for (p, e) in events {
        if let Some(e) = e {
            k.step(*p, e);
        }
    }
    k
}
