//! Reclaim throttling as 5.16 introduced it (Mel Gorman's "Remove dependency on congestion_wait
//! in mm/", merged for 5.16-rc1) and the fixes the variants are named after, up to 4fbbb3fde3c6
//! (6.5), as a model: model name `reclaim-throttle`. The per-CPU drain is that of the kernels
//! before 443c2accd1b6 (6.0), which drains remote per-CPU lists without waiting for work, in
//! every variant but `remote-drain`, which adds 443c2accd1b6 to `kthread-resched`.
//!
//! * [`vmscan`]: `reclaim_throttle()` with its reasons (WRITEBACK, ISOLATED, NOPROGRESS,
//!   CONGESTED) and timeouts, `nr_writeback_throttled` and `nr_reclaim_start`,
//!   `acct_reclaim_writeback()`, `wake_throttle_isolated()`, both `too_many_isolated()`
//!   (vmscan's, and compaction's loop in `isolate_migratepages_block()`),
//!   `consider_reclaim_throttle()`, `skip_throttle_noprogress()`, `__drain_all_pages()` with
//!   `flush_work()`, and the roles.
//!
//! The node (`pgdat`) is one: its LRU and isolated page counts, the four queues, the
//! throttled count and the writeback counters are explored memory. CPUs are
//! [`crate::kernel::cpu`]: under `preempt = "none"` a task holds its CPU while it runs.
//! Kernel sources: docs/kernel-source.md, Part 3 ("the reclaim-throttle model"); how the model
//! follows them and what it leaves out: docs/model.md, Part 4 ("the reclaim-throttle model").

pub mod event;
pub mod vmscan;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use self::event::{Coverage, Event, Reason, Site, SkipWhy};
use crate::event::{Event as Ev, Wq};
use crate::ghost::{Ghost, Pid, MAX_TASKS};
use crate::kernel::cpu::{cpu_give_up, cpu_run, Cpus, Preempt, YieldWhy, MAX_CPUS, MAX_QUEUED_TASKS, QUEUE_SLOTS};
use crate::kernel::sched::{Current, Sched, TimerModel};
use crate::kernel::wait::{WaitList, WaitQueueHead};
use crate::model::{count, Counters, FieldError, Fields, Model, PlatformFor, RoleKind, Seeded};
use crate::platform::{Atomic, Platform, RawSpinLock};

crate::named! {
    /// The versions of reclaim throttling the model knows, each naming its commits.
    pub enum Variant {
        /// 5.16-rc1: the series (8cd7c588decf, d818fca1cac3, 69392a403f49, c3f4a9a2b082,
        /// a19594ca4a8b, 66ce520bb7c2). A congested direct reclaimer throttles on WRITEBACK;
        /// NOPROGRESS waits up to HZ/2; kthreads other than kswapd return from
        /// `reclaim_throttle()` at once, without rescheduling.
        V516Rc1 = "v5.16-rc1",
        /// 1b4e3f26f9f7 (5.16-rc8) with its -fix 8008293888: CONGESTED for congested direct
        /// reclaimers; CONGESTED and NOPROGRESS wait one jiffy, or not at all if
        /// `skip_throttle_noprogress()`.
        NoprogressFix = "noprogress-fix",
        /// b485c6f1f9f5 on top (5.17, stable 5.16.10): the kthread early return calls
        /// `cond_resched()`.
        KthreadResched = "kthread-resched",
        /// 4fbbb3fde3c6 on top (6.5-rc1, "mm: compaction: avoid GFP_NOFS ABBA deadlock"):
        /// compaction's `too_many_isolated()` gives __GFP_FS compactors an eighth of the LRU, so
        /// that GFP_NOFS ones have headroom.
        NofsHeadroom = "nofs-headroom",
        /// 443c2accd1b6 (6.0, "mm/page_alloc: remotely drain per-cpu lists") on top of
        /// kthread-resched: `__drain_all_pages()` drains every CPU's per-cpu lists from the
        /// calling CPU, under the lists' new spinlocks, and queues no work, so it waits for
        /// no kworker. A branch off kthread-resched: nofs-headroom keeps the drain of the
        /// kernels before 6.0 (docs/model.md, Part 4, "Variants").
        RemoteDrain = "remote-drain",
    }
}

impl crate::model::Variant for Variant {
    fn description(self) -> &'static str {
        match self {
            Variant::V516Rc1 => "5.16-rc1: the series as merged; kthreads return from reclaim_throttle() at once",
            Variant::NoprogressFix => {
                "1b4e3f26f9f7 + 8008293888: CONGESTED reason, 1-jiffy NOPROGRESS, skip_throttle_noprogress()"
            }
            Variant::KthreadResched => "b485c6f1f9f5 on top: cond_resched() on the kthread early return",
            Variant::NofsHeadroom => "4fbbb3fde3c6 on top: compaction's too_many_isolated() gives GFP_NOFS headroom",
            Variant::RemoteDrain => {
                "443c2accd1b6 on kthread-resched: __drain_all_pages() drains remote per-cpu lists itself, no flush_work()"
            }
        }
    }
}

impl Variant {
    /// A congested direct reclaimer's reason (1b4e3f26f9f7 added CONGESTED).
    pub fn congested_reason(self) -> Reason {
        if self == Variant::V516Rc1 {
            Reason::Writeback
        } else {
            Reason::Congested
        }
    }
    /// 1b4e3f26f9f7: `skip_throttle_noprogress()` and a one-jiffy timeout.
    pub fn skip_noprogress(self) -> bool {
        self != Variant::V516Rc1
    }
    /// b485c6f1f9f5: `cond_resched()` on the kthread early return.
    pub fn kthread_resched(self) -> bool {
        matches!(self, Variant::KthreadResched | Variant::NofsHeadroom | Variant::RemoteDrain)
    }
    /// 4fbbb3fde3c6.
    pub fn nofs_headroom(self) -> bool {
        self == Variant::NofsHeadroom
    }
    /// 443c2accd1b6: `__drain_all_pages()` drains remote per-cpu lists itself.
    pub fn remote_drain(self) -> bool {
        self == Variant::RemoteDrain
    }
}

crate::named! {
    /// A task's allocation context, as far as throttling reads it.
    pub enum Gfp {
        /// GFP_KERNEL: __GFP_IO | __GFP_FS.
        Kernel = "GFP_KERNEL",
        /// GFP_NOFS: __GFP_IO only (a filesystem holding its locks).
        Nofs = "GFP_NOFS",
    }
}

crate::named! {
    /// A compactor's `migrate_mode`.
    pub enum Mode {
        Async = "async",
        SyncLight = "sync-light",
    }
}

crate::named! {
    /// A compactor and the filesystem buffer lock of the ABBA deadlock.
    pub enum Buffer {
        /// It has nothing to do with it.
        None = "none",
        /// It holds the buffer lock for the whole compaction (a GFP_NOFS allocation inside
        /// the filesystem).
        Holds = "holds",
        /// Migrating its pages needs the buffer lock (`lock_buffer()`).
        Needs = "needs",
    }
}

crate::named! {
    /// The reclaim-throttle model's invariants (docs/invariants.md, Part 3).
    pub enum Invariant {
        NoSoftLockup = "no-soft-lockup",
        Progress = "progress",
        ThrottleBounded = "throttle-bounded",
        WritebackWakesAll = "writeback-wakes-all",
        ThrottledCount = "throttled-count",
        IsolatedWakesAll = "isolated-wakes-all",
        PagesConserved = "pages-conserved",
    }
}

crate::named! {
    /// Seeded bugs.
    pub enum Mutation {
        ReschedNoop = "resched-noop",
        NoPutback = "no-putback",
        ThrottleUntilWoken = "throttle-until-woken",
        WakeOneWriteback = "wake-one-writeback",
        DecBeforeSleep = "dec-before-sleep",
        IsolatedWakesNobody = "isolated-wakes-nobody",
        PutbackForgetsLru = "putback-forgets-lru",
    }
}

impl Seeded<ReclaimThrottle> for Mutation {
    fn targets(self) -> Invariant {
        match self {
            Mutation::ReschedNoop => Invariant::NoSoftLockup,
            Mutation::NoPutback => Invariant::Progress,
            Mutation::ThrottleUntilWoken => Invariant::ThrottleBounded,
            Mutation::WakeOneWriteback => Invariant::WritebackWakesAll,
            Mutation::DecBeforeSleep => Invariant::ThrottledCount,
            Mutation::IsolatedWakesNobody => Invariant::IsolatedWakesAll,
            Mutation::PutbackForgetsLru => Invariant::PagesConserved,
        }
    }
    fn description(self) -> &'static str {
        match self {
            Mutation::ReschedNoop => {
                "cond_resched() never gives the CPU up, as if need_resched() were never set."
            }
            Mutation::NoPutback => "Isolated pages are never put back on the LRU (NR_ISOLATED never falls).",
            Mutation::ThrottleUntilWoken => {
                "reclaim_throttle() sleeps again after its timeout expires, as if it waited for its condition."
            }
            Mutation::WakeOneWriteback => {
                "__acct_reclaim_writeback() wakes only the first WRITEBACK waiter (wake_up_nr(wq, 1)) when the threshold is crossed."
            }
            Mutation::DecBeforeSleep => {
                "reclaim_throttle() decrements nr_writeback_throttled before it sleeps instead of after finish_wait()."
            }
            Mutation::IsolatedWakesNobody => {
                "wake_throttle_isolated() never wakes reclaim_wait[ISOLATED]: every ISOLATED sleeper sleeps its full HZ/50."
            }
            Mutation::PutbackForgetsLru => {
                "The putback takes the pages off NR_ISOLATED but never adds them back to the LRU: they are lost."
            }
        }
    }
    fn applies(self, cfg: &Config) -> Result<(), String> {
        let has = |f: fn(&Role) -> bool| cfg.roles.iter().any(f);
        match self {
            Mutation::ReschedNoop if cfg.preempt != Preempt::None => {
                Err("cond_resched() hands a CPU over only under preempt = \"none\"".into())
            }
            Mutation::ReschedNoop if !cfg.variant.kthread_resched() => {
                Err("the variant's kthread early return has no cond_resched() (it comes with b485c6f1f9f5)".into())
            }
            Mutation::NoPutback if !has(|r| matches!(r, Role::Isolator { .. })) => {
                Err("it changes the putback of an isolator, and this file has none".into())
            }
            Mutation::PutbackForgetsLru if !has(Role::puts_back) => {
                Err("it changes the putback, and no thread of this file isolates pages".into())
            }
            Mutation::ThrottleUntilWoken | Mutation::DecBeforeSleep | Mutation::WakeOneWriteback
                if !has(|r| {
                    matches!(r, Role::Kswapd { immediate: true, .. } | Role::DirectReclaimer { congested: true, .. })
                }) =>
            {
                Err("it changes the WRITEBACK throttle, and no thread of this file throttles on it".into())
            }
            Mutation::IsolatedWakesNobody
                if !has(|r| {
                    matches!(
                        r,
                        Role::DirectReclaimer { batch: 1.., .. }
                            | Role::Kcompactd { .. }
                            | Role::Compactor { mode: Mode::SyncLight, .. }
                    )
                }) =>
            {
                Err("it changes the wake of the ISOLATED throttle, and no thread of this file throttles on it".into())
            }
            _ => Ok(()),
        }
    }
}

/// A thread of a reclaim-throttle scenario.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Role {
    /// kswapd: shrinks `batch` pages (it is exempt from `too_many_isolated()`; 0: it isolates
    /// nothing, the shrink is left out), then, with
    /// `immediate` (pages under writeback marked for immediate reclaim), throttles on
    /// WRITEBACK.
    Kswapd { cpu: Option<u8>, batch: u32, immediate: bool },
    /// A direct reclaimer: `shrink_inactive_list()` of `batch` pages (ISOLATED at most once; 0:
    /// the shrink is left out),
    /// with `congested` a throttle for a congested node, then `consider_reclaim_throttle()`
    /// with or without `progress`.
    DirectReclaimer { cpu: Option<u8>, gfp: Gfp, batch: u32, congested: bool, progress: bool },
    /// kcompactd (a kthread, GFP_KERNEL, MIGRATE_SYNC_LIGHT): one block of compaction.
    Kcompactd { cpu: Option<u8>, batch: u32 },
    /// A direct compactor: one block of compaction.
    Compactor { cpu: Option<u8>, gfp: Gfp, mode: Mode, batch: u32, buffer: Buffer },
    /// Writeback completion: `end_page_writeback()` of `pages` pages.
    Writeback { cpu: Option<u8>, pages: u32 },
    /// A task holding `pages` isolated pages (the report's cpuset migration worker in
    /// `migrate_pages()`): its allocation drains every CPU's per-CPU lists
    /// (`__drain_all_pages()`, `flush_work()` of each CPU's work), then it puts them back.
    Isolator { cpu: Option<u8>, pages: u32 },
    /// The per-CPU worker of CPU `cpu` (mm_percpu_wq): runs the drain work queued on it.
    Kworker { cpu: u8 },
}

impl Role {
    pub fn cpu(&self) -> Option<u8> {
        match *self {
            Role::Kswapd { cpu, .. }
            | Role::DirectReclaimer { cpu, .. }
            | Role::Kcompactd { cpu, .. }
            | Role::Compactor { cpu, .. }
            | Role::Writeback { cpu, .. }
            | Role::Isolator { cpu, .. } => cpu,
            Role::Kworker { cpu } => Some(cpu),
        }
    }
    /// PF_KTHREAD.
    pub fn is_kthread(&self) -> bool {
        matches!(self, Role::Kswapd { .. } | Role::Kcompactd { .. } | Role::Kworker { .. })
    }
    /// The pages the role isolates from the LRU (and puts back).
    fn batch(&self) -> u32 {
        match *self {
            Role::Kswapd { batch, .. }
            | Role::DirectReclaimer { batch, .. }
            | Role::Kcompactd { batch, .. }
            | Role::Compactor { batch, .. } => batch,
            Role::Isolator { .. } | Role::Writeback { .. } | Role::Kworker { .. } => 0,
        }
    }
    /// The role puts pages back on the LRU: its own isolations, or an isolator's pages.
    fn puts_back(&self) -> bool {
        self.batch() > 0 || matches!(self, Role::Isolator { .. })
    }
    /// Pages the role holds isolated at the start.
    pub fn isolated_at_start(&self) -> u32 {
        match *self {
            Role::Isolator { pages, .. } => pages,
            _ => 0,
        }
    }
}

/// reclaim-throttle's final state: the node's pages on the LRU and isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pages {
    pub lru: u32,
    pub isolated: u32,
}

impl Config {
    /// The pages there are: on the LRU and held isolated at the start (`lru` plus the
    /// isolators' pages), which no execution makes or loses.
    pub fn pages(&self) -> u32 {
        self.lru + self.isolated_at_start()
    }
    /// The pages the isolators hold at the start.
    pub fn isolated_at_start(&self) -> u32 {
        self.roles.iter().map(Role::isolated_at_start).sum()
    }
}

/// One run's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    pub variant: Variant,
    pub mutation: Option<Mutation>,
    pub roles: Vec<Role>,
    pub preempt: Preempt,
    pub cpus: u8,
    /// Pages on the node's LRU at the start (isolators' pages excluded).
    pub lru: u32,
    /// Pages under writeback at the start (`NR_ZONE_WRITE_PENDING`); at least the writeback
    /// completions' pages.
    pub write_pending: u32,
    /// `SWAP_CLUSTER_MAX`.
    pub swap_cluster_max: u32,
    /// `[params] queued_locks`: CPU run queues joined in order, as the kernel's `rq->lock`
    /// (a queued spinlock) serves them ([`Cpus::queued_joins`]), and wait-queue spinlocks
    /// that serve their waiters in turn ([`crate::kernel::spinlock::SpinLock::new_queued`]);
    /// off, a task joins a run queue with a compare-and-swap it retries and takes a wait
    /// queue's lock as the other models do (every file before issue 36 checks that).
    pub queued_locks: bool,
}

impl Config {
    /// The CPU task `pid` is bound to: its `cpu`, or `pid % cpus`.
    pub fn cpu_of(&self, pid: Pid) -> u8 {
        self.roles[pid].cpu().unwrap_or((pid % self.cpus.max(1) as usize) as u8)
    }
    /// How many tasks are bound to each CPU.
    pub fn tasks_per_cpu(&self) -> Vec<usize> {
        let mut n = vec![0; self.cpus as usize];
        for pid in 0..self.roles.len() {
            n[self.cpu_of(pid) as usize] += 1;
        }
        n
    }
    /// CPUs with a kworker, in order.
    pub fn kworker_cpus(&self) -> Vec<u8> {
        let mut v: Vec<u8> =
            self.roles.iter().filter_map(|r| if let Role::Kworker { cpu } = r { Some(*cpu) } else { None }).collect();
        v.sort_unstable();
        v
    }
}

/// The per-CPU drain work of one CPU.
pub struct Work<P: Platform> {
    pub pending: P::AtomicBool,
    pub done: P::AtomicBool,
    /// The kworker waits here for work.
    pub wq: WaitQueueHead<P>,
    /// `flush_work()`'s completion.
    pub done_wq: WaitQueueHead<P>,
}

const WORKER_WQ: [Wq; MAX_CPUS] =
    [Wq("worklist(cpu0)"), Wq("worklist(cpu1)"), Wq("worklist(cpu2)"), Wq("worklist(cpu3)")];
const DONE_WQ: [Wq; MAX_CPUS] = [Wq("flush(cpu0)"), Wq("flush(cpu1)"), Wq("flush(cpu2)"), Wq("flush(cpu3)")];

pub struct Kernel<P: Platform> {
    pub sched: Sched<P>,
    pub cfg: Config,
    pub cpus: Cpus<P>,
    /// `pgdat->reclaim_wait[NR_VMSCAN_THROTTLE]`, indexed by [`Reason`].
    pub reclaim_wait: [WaitQueueHead<P>; 4],
    pub nr_writeback_throttled: P::AtomicU32,
    pub nr_reclaim_start: P::AtomicU32,
    /// `NR_THROTTLED_WRITTEN`.
    pub nr_throttled_written: P::AtomicU32,
    /// The node's LRU pages (inactive and active together).
    pub lru: P::AtomicU32,
    /// `NR_ISOLATED_ANON + NR_ISOLATED_FILE`.
    pub isolated: P::AtomicU32,
    /// `NR_ZONE_WRITE_PENDING`.
    pub write_pending: P::AtomicU32,
    pub work: Vec<Work<P>>,
    /// The filesystem's buffer lock (a sleeping lock).
    pub buffer: P::SpinLock,
    /// Ghost (checker builds): `lru` and `isolated` as the last operation on each left them,
    /// each written right after that operation from what it returned (so with it: no other
    /// task runs between the two). Plain memory, no step of any explorer; read by
    /// [`Model::final_state`] for `pages-conserved`.
    pub ghost_pages: [std::sync::atomic::AtomicU32; 2],
}

impl<P: PlatformFor<Event>> Kernel<P> {
    pub fn new(cfg: Config, ghost: Arc<P::Ghost>) -> Self {
        let sched = Sched::new(cfg.roles.len(), TimerModel::AnyTime, ghost);
        let resched_noop = P::Ghost::ENABLED && cfg.mutation == Some(Mutation::ReschedNoop);
        let isolated = cfg.isolated_at_start();
        // With queued_locks, the wait queues' spinlocks serve their waiters in turn.
        let queued = cfg.queued_locks;
        let wq = |name| if queued { WaitQueueHead::new_queued(name) } else { WaitQueueHead::new(name) };
        Kernel {
            sched,
            cpus: {
                let cpus = Cpus::new(cfg.preempt, &cfg.tasks_per_cpu(), resched_noop);
                if cfg.queued_locks {
                    cpus.queued_joins(&(0..cfg.roles.len()).map(|pid| cfg.cpu_of(pid)).collect::<Vec<_>>())
                } else {
                    cpus
                }
            },
            reclaim_wait: [Reason::Writeback, Reason::Isolated, Reason::Noprogress, Reason::Congested]
                .map(|r| wq(r.wq_name())),
            nr_writeback_throttled: P::AtomicU32::new(0),
            nr_reclaim_start: P::AtomicU32::new(0),
            nr_throttled_written: P::AtomicU32::new(0),
            lru: P::AtomicU32::new(cfg.lru),
            isolated: P::AtomicU32::new(isolated),
            write_pending: P::AtomicU32::new(cfg.write_pending),
            work: (0..cfg.cpus as usize)
                .map(|c| Work {
                    pending: P::AtomicBool::new(false),
                    done: P::AtomicBool::new(false),
                    wq: wq(WORKER_WQ[c]),
                    done_wq: wq(DONE_WQ[c]),
                })
                .collect(),
            buffer: P::SpinLock::new(true),
            ghost_pages: [std::sync::atomic::AtomicU32::new(cfg.lru), std::sync::atomic::AtomicU32::new(isolated)],
            cfg,
        }
    }

    #[inline(always)]
    pub fn mutated(&self, cur: &Current<P>, m: Mutation) -> bool {
        let on = P::Ghost::ENABLED && self.cfg.mutation == Some(m);
        if on {
            cur.mutation_reached();
        }
        on
    }

    pub fn run_task(&self, pid: Pid) {
        let cur = self.sched.enter(pid);
        let cpu = self.cfg.cpu_of(pid);
        cpu_run::<P, Event>(&cur, &self.cpus, cpu);
        self.run_role(&cur);
        cpu_give_up::<P, Event>(&cur, &self.cpus, cpu, YieldWhy::Exit);
        cur.exit();
    }
}

pub struct ReclaimThrottle;

/// Keys every role takes besides its own.
const CPU: &str = "cpu";

impl Model for ReclaimThrottle {
    const NAME: &'static str = "reclaim-throttle";
    const ROLES: &'static [RoleKind] = &[
        RoleKind { name: "kswapd", keys: &[CPU, "batch", "immediate"] },
        RoleKind { name: "direct-reclaimer", keys: &[CPU, "gfp", "batch", "congested", "progress"] },
        RoleKind { name: "kcompactd", keys: &[CPU, "batch"] },
        RoleKind { name: "compactor", keys: &[CPU, "gfp", "mode", "batch", "buffer"] },
        RoleKind { name: "writeback", keys: &[CPU, "pages"] },
        RoleKind { name: "isolator", keys: &[CPU, "pages"] },
        RoleKind { name: "kworker", keys: &[CPU] },
    ];
    const PARAMS: &'static [&'static str] =
        &["preempt", "cpus", "lru", "write_pending", "swap_cluster_max", "queued_locks"];
    const CONTENDED_PATH: &'static [Coverage] = &[
        Coverage::ThrottledWriteback,
        Coverage::ThrottledIsolated,
        Coverage::ThrottledNoprogress,
        Coverage::ThrottledCongested,
        Coverage::KthreadNotThrottled,
        Coverage::BufferContended,
    ];

    type Variant = Variant;
    type Event = Event;
    type Coverage = Coverage;
    type Invariant = Invariant;
    type Mutation = Mutation;
    type Role = Role;
    type Config = Config;
    type Final = Option<Pages>;
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
            Role::Kswapd { .. } => "kswapd",
            Role::DirectReclaimer { .. } => "direct-reclaimer",
            Role::Kcompactd { .. } => "kcompactd",
            Role::Compactor { .. } => "compactor",
            Role::Writeback { .. } => "writeback",
            Role::Isolator { .. } => "isolator",
            Role::Kworker { .. } => "kworker",
        }
    }
    fn comm(role: &Role) -> String {
        match role {
            Role::Kswapd { .. } => "kswapd0".into(),
            Role::DirectReclaimer { gfp, .. } => format!("reclaim({gfp})"),
            Role::Kcompactd { .. } => "kcompactd0".into(),
            Role::Compactor { gfp, .. } => format!("compact({gfp})"),
            Role::Writeback { .. } => "writeback".into(),
            Role::Isolator { .. } => "isolator".into(),
            Role::Kworker { cpu } => format!("kworker/{cpu}"),
        }
    }

    fn parse_role(kind: &str, f: &mut Fields, _kinds: &[&str]) -> Result<Role, FieldError> {
        let cpu = f.int::<u8>(CPU, 0..=MAX_CPUS as i64 - 1)?;
        let batch = |f: &mut Fields| f.int_or("batch", 0..=8, 1u32);
        Ok(match kind {
            "kswapd" => Role::Kswapd { cpu, batch: batch(f)?, immediate: f.bool_or("immediate", true)? },
            "direct-reclaimer" => Role::DirectReclaimer {
                cpu,
                gfp: f.named("gfp", &[])?.unwrap_or(Gfp::Kernel),
                batch: batch(f)?,
                congested: f.bool_or("congested", false)?,
                progress: f.bool_or("progress", true)?,
            },
            "kcompactd" => Role::Kcompactd { cpu, batch: batch(f)? },
            "compactor" => Role::Compactor {
                cpu,
                gfp: f.named("gfp", &[])?.unwrap_or(Gfp::Kernel),
                mode: f.named("mode", &[])?.unwrap_or(Mode::SyncLight),
                batch: batch(f)?,
                buffer: f.named("buffer", &[])?.unwrap_or(Buffer::None),
            },
            "writeback" => Role::Writeback { cpu, pages: f.int_or("pages", 1..=8, 1)? },
            "isolator" => Role::Isolator { cpu, pages: f.int_or("pages", 1..=16, 2)? },
            "kworker" => {
                Role::Kworker { cpu: cpu.ok_or_else(|| f.error(CPU, "a kworker is bound to a CPU: give its cpu"))? }
            }
            _ => unreachable!("the checker passes only this model's role kinds"),
        })
    }

    fn configure(
        variant: Variant,
        mutation: Option<Mutation>,
        roles: Vec<Role>,
        params: &mut Fields,
    ) -> Result<Config, FieldError> {
        let preempt = params.named("preempt", &[])?.unwrap_or(Preempt::Full);
        let default_cpus = roles.len().clamp(1, MAX_CPUS) as u8;
        let cpus = params.int_or("cpus", 1..=MAX_CPUS as i64, default_cpus)?;
        for (i, r) in roles.iter().enumerate() {
            if let Some(c) = r.cpu() {
                if c >= cpus {
                    return Err(FieldError {
                        field: format!("thread[{i}].cpu"),
                        message: format!(
                            "cpu {c} does not exist: the scenario has {cpus} CPU(s), cpu0..cpu{} ([params] cpus)",
                            cpus - 1
                        ),
                    });
                }
            }
        }
        let lru = params.int_or("lru", 0..=64, 4u32)?;
        let completions: u32 =
            roles.iter().map(|r| if let Role::Writeback { pages, .. } = r { *pages } else { 0 }).sum();
        let write_pending = params.int_or("write_pending", completions as i64..=64, completions)?;
        let swap_cluster_max = params.int_or("swap_cluster_max", 1..=32, 1u32)?;
        let queued_locks = params.bool_or("queued_locks", false)?;
        if queued_locks {
            let per_cpu = (0..cpus).map(|c| {
                (0..roles.len()).filter(|&p| roles[p].cpu().unwrap_or((p % cpus as usize) as u8) == c).count()
            });
            if per_cpu.clone().any(|n| n > MAX_QUEUED_TASKS) {
                return Err(params.error(
                    "queued_locks",
                    format!("queued run queues hold at most {MAX_QUEUED_TASKS} tasks a CPU (one announce bit each)"),
                ));
            }
        }
        let cfg =
            Config { variant, mutation, roles, preempt, cpus, lru, write_pending, swap_cluster_max, queued_locks };
        Self::validate(&cfg).map_err(|m| FieldError { field: "thread".into(), message: m })?;
        Ok(cfg)
    }

    fn validate(cfg: &Config) -> Result<(), String> {
        if cfg.roles.is_empty() || cfg.roles.len() > MAX_TASKS {
            return Err(format!("1..={MAX_TASKS} threads"));
        }
        // Any of the threads may sleep on one of the wait queues, whose list holds
        // WaitList::CAPACITY entries.
        if cfg.roles.len() > WaitList::CAPACITY {
            return Err(format!(
                "{} threads: at most {} (they can all sleep on one wait queue, and the model's wait-queue list \
                 holds {} entries)",
                cfg.roles.len(),
                WaitList::CAPACITY,
                WaitList::CAPACITY
            ));
        }
        if cfg.cpus == 0 || cfg.cpus as usize > MAX_CPUS {
            return Err(format!("cpus = {} is out of range 1..={MAX_CPUS}", cfg.cpus));
        }
        let batches: u32 = cfg.roles.iter().map(Role::batch).sum();
        if batches > cfg.lru {
            return Err(format!(
                "the threads isolate up to {batches} pages together but the LRU has lru = {} ([params] lru)",
                cfg.lru
            ));
        }
        let mut kworkers = Vec::new();
        for (pid, r) in cfg.roles.iter().enumerate() {
            let cpu = cfg.cpu_of(pid);
            if cpu >= cfg.cpus {
                return Err(format!("thread {pid} is bound to cpu{cpu}, which does not exist ({} CPUs)", cfg.cpus));
            }
            if let Role::Kworker { cpu } = *r {
                if kworkers.contains(&cpu) {
                    return Err(format!("thread {pid}: cpu{cpu} has a kworker already (one per CPU)"));
                }
                kworkers.push(cpu);
            }
            if let Role::Compactor { gfp: Gfp::Kernel, buffer: Buffer::Holds, .. } = *r {
                return Err(format!(
                    "thread {pid}: a compactor that holds the buffer lock allocates inside the filesystem: gfp = \"GFP_NOFS\""
                ));
            }
        }
        if cfg.preempt == Preempt::None {
            if let Some((cpu, n)) = cfg.tasks_per_cpu().into_iter().enumerate().find(|&(_, n)| n > QUEUE_SLOTS) {
                return Err(format!(
                    "cpu{cpu} has {n} threads, and under preempt = \"none\" a CPU's run queue holds {QUEUE_SLOTS}"
                ));
            }
        }
        let holders = cfg.roles.iter().filter(|r| matches!(r, Role::Compactor { buffer: Buffer::Holds, .. })).count();
        if holders > 1 {
            return Err("at most one compactor holds the buffer lock".into());
        }
        if !kworkers.is_empty() && !cfg.roles.iter().any(|r| matches!(r, Role::Isolator { .. })) {
            return Err("a kworker runs work an isolator queues: the scenario has kworkers and no isolator".into());
        }
        let completions: u32 =
            cfg.roles.iter().map(|r| if let Role::Writeback { pages, .. } = r { *pages } else { 0 }).sum();
        if cfg.write_pending < completions {
            return Err(format!("write_pending = {} is below the {completions} pages written back", cfg.write_pending));
        }
        Ok(())
    }

    fn coverage(ev: &Ev<Event>) -> Option<Coverage> {
        Coverage::of(ev)
    }

    fn boot<P: PlatformFor<Event>>(cfg: &Config, ghost: Arc<P::Ghost>) -> Kernel<P> {
        Kernel::new(cfg.clone(), ghost)
    }
    fn run_task<P: PlatformFor<Event>>(k: &Kernel<P>, pid: Pid) {
        k.run_task(pid)
    }
    /// The pages on the LRU and isolated once every task has finished (checker builds; `None`
    /// in the runtime build), which `pages-conserved` compares with those at the start. The
    /// values are the ghost's (`Kernel::ghost_pages`), so that reading them is no step of the
    /// explored execution and changes no state count. (No monitor could check it as the tasks
    /// run: the two counters are never read together.)
    fn final_state<P: PlatformFor<Event>>(k: &Kernel<P>) -> Option<Pages> {
        let relaxed = core::sync::atomic::Ordering::Relaxed;
        P::Ghost::ENABLED
            .then(|| Pages { lru: k.ghost_pages[0].load(relaxed), isolated: k.ghost_pages[1].load(relaxed) })
    }

    fn scale(cfg: &Config, k: usize, _work: u32, _hold_spins: u32) -> Result<Config, String> {
        if k <= 1 {
            return Ok(cfg.clone());
        }
        Err("the reclaim-throttle model does not scale: its roles share one node's counters".into())
    }
    fn real_time(cfg: &Config, _jiffy: Duration) -> Config {
        cfg.clone()
    }
    const COUNTERS: &'static [&'static str] = &["elapsed-us", "throttled", "throttle-timed-out"];
    const RATIOS: &'static [(&'static str, &'static str)] = &[];
    fn counters(_cfg: &Config, events: &[(Pid, Ev<Event>)], _times: &[Instant], out: &mut Counters) {
        for (_, e) in events {
            match e {
                Ev::Proto(Event::Throttle { .. }) => count(out, "throttled", 1.0),
                Ev::Proto(Event::ThrottleEnd { timeout, slept, .. }) if slept >= timeout => {
                    count(out, "throttle-timed-out", 1.0)
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `reclaim_throttle()`'s timeouts, as docs/kernel-source.md (Part 3, "reclaim_throttle()")
    /// gives them: WRITEBACK HZ/10 and ISOLATED HZ/50 throughout; NOPROGRESS HZ/2 in 5.16-rc1
    /// (a19594ca4a8b), then one jiffy, as CONGESTED, from 1b4e3f26f9f7 on.
    #[test]
    fn the_throttle_timeouts_are_the_kernels() {
        use crate::kernel::HZ;
        use vmscan::throttle_timeout as t;
        for v in [
            Variant::V516Rc1,
            Variant::NoprogressFix,
            Variant::KthreadResched,
            Variant::NofsHeadroom,
            Variant::RemoteDrain,
        ] {
            assert_eq!(t(v, Reason::Writeback), HZ / 10, "{v:?}");
            assert_eq!(t(v, Reason::Isolated), HZ / 50, "{v:?}");
            let later = if v == Variant::V516Rc1 { HZ / 2 } else { 1 };
            assert_eq!(t(v, Reason::Noprogress), later, "{v:?}");
            if v != Variant::V516Rc1 {
                assert_eq!(t(v, Reason::Congested), 1, "{v:?}");
            }
        }
    }

    fn cfg(roles: Vec<Role>) -> Config {
        Config {
            variant: Variant::V516Rc1,
            mutation: None,
            roles,
            preempt: Preempt::None,
            cpus: 2,
            lru: 4,
            write_pending: 2,
            swap_cluster_max: 32,
            queued_locks: false,
        }
    }
    fn direct(batch: u32) -> Role {
        Role::DirectReclaimer { cpu: None, gfp: Gfp::Kernel, batch, congested: false, progress: true }
    }
    fn compactor(gfp: Gfp, buffer: Buffer) -> Role {
        Role::Compactor { cpu: None, gfp, mode: Mode::Async, batch: 0, buffer }
    }
    fn refused(c: &Config, why: &str) {
        let e = ReclaimThrottle::validate(c).expect_err(why);
        assert!(e.contains(why), "{e:?} does not say {why:?}");
    }

    /// Each limit at its edge: the last value accepted and the first refused.
    #[test]
    fn validation_refuses_what_the_kernel_cannot_have() {
        assert!(ReclaimThrottle::validate(&cfg(vec![direct(4)])).is_ok(), "batches = lru");
        refused(&cfg(vec![direct(3), direct(2)]), "the threads isolate up to 5 pages");
        refused(&cfg(vec![]), "threads");
        let full = |c: Config| Config { preempt: Preempt::Full, ..c };
        let most = WaitList::CAPACITY;
        assert!(
            ReclaimThrottle::validate(&full(cfg(vec![direct(0); most]))).is_ok(),
            "a wait queue's worth of threads"
        );
        refused(&full(cfg(vec![direct(0); most + 1])), "the model's wait-queue list holds 12 entries");
        refused(&cfg(vec![direct(0); MAX_TASKS + 1]), "threads");
        refused(&Config { cpus: 0, ..cfg(vec![direct(1)]) }, "cpus = 0 is out of range");
        assert!(ReclaimThrottle::validate(&Config { cpus: MAX_CPUS as u8, ..cfg(vec![direct(1)]) }).is_ok());
        refused(&Config { cpus: MAX_CPUS as u8 + 1, ..cfg(vec![direct(1)]) }, "out of range");
        let on = |cpu| Role::Writeback { cpu: Some(cpu), pages: 1 };
        assert!(ReclaimThrottle::validate(&cfg(vec![direct(1), on(1)])).is_ok(), "the last CPU");
        refused(&cfg(vec![direct(1), on(2)]), "bound to cpu2, which does not exist");
        let isolator = Role::Isolator { cpu: None, pages: 1 };
        let kworker = |cpu| Role::Kworker { cpu };
        assert!(ReclaimThrottle::validate(&cfg(vec![isolator.clone(), kworker(0), kworker(1)])).is_ok());
        refused(&cfg(vec![isolator.clone(), kworker(1), kworker(1)]), "cpu1 has a kworker already");
        refused(&cfg(vec![direct(1), kworker(0)]), "no isolator");
        refused(&cfg(vec![compactor(Gfp::Kernel, Buffer::Holds)]), "GFP_NOFS");
        assert!(ReclaimThrottle::validate(&cfg(vec![compactor(Gfp::Nofs, Buffer::Holds)])).is_ok(), "one holder");
        refused(
            &cfg(vec![compactor(Gfp::Nofs, Buffer::Holds), compactor(Gfp::Nofs, Buffer::Holds)]),
            "at most one compactor holds",
        );
        let wb = |pages| Role::Writeback { cpu: None, pages };
        assert!(ReclaimThrottle::validate(&cfg(vec![wb(2)])).is_ok(), "write_pending = completions");
        refused(&cfg(vec![wb(3)]), "write_pending = 2 is below the 3 pages");
        // Under preempt = "none" a CPU's run queue holds ten tasks (six bits a slot).
        let on0 = Role::DirectReclaimer { cpu: Some(0), gfp: Gfp::Kernel, batch: 0, congested: false, progress: true };
        assert!(ReclaimThrottle::validate(&cfg(vec![on0.clone(); 10])).is_ok(), "ten threads on cpu0");
        refused(&cfg(vec![on0.clone(); 11]), "cpu0 has 11 threads");
        assert!(ReclaimThrottle::validate(&Config { preempt: Preempt::Full, ..cfg(vec![on0; 11]) }).is_ok());
    }

    /// Each seeded mutation is refused where its code cannot run (a file that names it there
    /// is an error, not a survivor) and accepted where it can: every shipped mutant file is one
    /// of the second kind, so no scenario checks the first.
    #[test]
    fn each_mutation_applies_only_where_its_code_runs() {
        use Mutation as M;
        let applies = |m: M, c: &Config| m.applies(c);
        let full = |c: Config| Config { preempt: Preempt::Full, ..c };
        let resched = Config { variant: Variant::KthreadResched, ..cfg(vec![direct(1)]) };
        assert!(applies(M::ReschedNoop, &resched).is_ok());
        assert!(applies(M::ReschedNoop, &full(resched.clone())).unwrap_err().contains("preempt"));
        assert!(applies(M::ReschedNoop, &cfg(vec![direct(1)])).unwrap_err().contains("b485c6f1f9f5"));
        let isolator = Role::Isolator { cpu: None, pages: 1 };
        assert!(applies(M::NoPutback, &cfg(vec![isolator])).is_ok());
        assert!(applies(M::NoPutback, &cfg(vec![direct(1)])).unwrap_err().contains("has none"));
        let kswapd = |immediate| Role::Kswapd { cpu: None, batch: 0, immediate };
        let congested =
            |congested| Role::DirectReclaimer { cpu: None, gfp: Gfp::Kernel, batch: 0, congested, progress: true };
        for m in [M::ThrottleUntilWoken, M::DecBeforeSleep, M::WakeOneWriteback] {
            assert!(applies(m, &cfg(vec![kswapd(true)])).is_ok(), "{m:?}");
            assert!(applies(m, &cfg(vec![congested(true)])).is_ok(), "{m:?}");
            for no in [kswapd(false), congested(false)] {
                assert!(applies(m, &cfg(vec![no])).unwrap_err().contains("WRITEBACK"), "{m:?}");
            }
        }
        let kcompactd = Role::Kcompactd { cpu: None, batch: 0 };
        let sync =
            Role::Compactor { cpu: None, gfp: Gfp::Kernel, mode: Mode::SyncLight, batch: 0, buffer: Buffer::None };
        for yes in [direct(1), kcompactd, sync] {
            assert!(applies(M::IsolatedWakesNobody, &cfg(vec![yes.clone()])).is_ok(), "{yes:?}");
        }
        for no in [direct(0), compactor(Gfp::Kernel, Buffer::None)] {
            assert!(applies(M::IsolatedWakesNobody, &cfg(vec![no])).unwrap_err().contains("ISOLATED"));
        }
        // The putback runs for a thread that isolates a batch, and for an isolator's pages.
        for yes in
            [direct(1), Role::Kswapd { cpu: None, batch: 2, immediate: false }, Role::Isolator { cpu: None, pages: 1 }]
        {
            assert!(applies(M::PutbackForgetsLru, &cfg(vec![yes.clone()])).is_ok(), "{yes:?}");
        }
        for no in [direct(0), kswapd(false), Role::Kcompactd { cpu: None, batch: 0 }] {
            assert!(applies(M::PutbackForgetsLru, &cfg(vec![no])).unwrap_err().contains("isolates"));
        }
    }

    /// `[params] queued_locks` with more tasks on one CPU than its queue word announces is
    /// refused, and a CPU at the limit accepted, whether the tasks name their CPU or are spread
    /// by pid (no shipped file comes near the limit).
    #[test]
    fn queued_locks_refuse_more_tasks_a_cpu_than_the_queue_holds() {
        use crate::model::Value;
        let configure = |cpus: i64, tasks: usize| {
            let mut params = Fields::new(
                "params",
                vec![("cpus".to_string(), Value::Int(cpus)), ("queued_locks".to_string(), Value::Bool(true))],
            );
            ReclaimThrottle::configure(Variant::V516Rc1, None, vec![direct(0); tasks], &mut params)
        };
        assert!(configure(1, MAX_QUEUED_TASKS).is_ok(), "one CPU at the limit");
        assert_eq!(configure(1, MAX_QUEUED_TASKS + 1).unwrap_err().field, "params.queued_locks");
        assert!(configure(2, 2 * MAX_QUEUED_TASKS).is_ok(), "spread by pid, each CPU at the limit");
        assert_eq!(configure(2, 2 * MAX_QUEUED_TASKS + 1).unwrap_err().field, "params.queued_locks");
    }

    /// A task's CPU: its own, or its pid modulo the CPU count; and the count of tasks per CPU.
    #[test]
    fn tasks_are_bound_to_their_cpu_or_spread_by_pid() {
        let c = Config {
            cpus: 3,
            ..cfg(vec![direct(0), direct(0), Role::Writeback { cpu: Some(0), pages: 0 }, direct(0)])
        };
        let cpus: Vec<u8> = (0..4).map(|p| c.cpu_of(p)).collect();
        assert_eq!(cpus, vec![0, 1, 0, 0]);
        assert_eq!(c.tasks_per_cpu(), vec![3, 1, 0]);
        let k = cfg(vec![Role::Kworker { cpu: 1 }, Role::Kworker { cpu: 0 }, Role::Isolator { cpu: None, pages: 1 }]);
        assert_eq!(k.kworker_cpus(), vec![0, 1]);
    }
}
