//! The 2016 "Reduce tree_lock contention during swap and reclaim of a single file" series
//! (Mel Gorman, RFC v1, 9 Sep 2016), patches 3/4 and 4/4, as a model: [`KswapdStall`].
//!
//! * [`vmscan`]: `remove_mapping_list()`'s contended path (trylock, the cmpxchg on
//!   `kswapd_exclusive`, the one bounded stall on `kswapd_contended_wait`), `zone_balanced()`'s
//!   release, `wakeup_kswapd()`, and the roles that drive them.
//! * [`backing_dev`]: `wait_iff_congested()`, `set_wb_congested()`, `clear_wb_congested()`.
//!
//! The state below is the kernel's: file-scope statics of mm/vmscan.c, the nodes' `pglist_data`,
//! the one heavily written `address_space`, and the backing devices. Kernel sources are in
//! docs/kernel-source.md.

pub mod backing_dev;
pub mod event;
pub mod mutation;
mod types;
pub mod vmscan;

use std::sync::Arc;
use std::time::{Duration, Instant};

use core::sync::atomic::Ordering::Relaxed;

pub use self::event::{Coverage, Event, CONGESTION_WQH, KSWAPD_CONTENDED_WAIT, TREE_LOCK};
pub use self::mutation::Mutation;
pub use self::types::{
    AddressSpace, BackingDev, Config, Invariant, Kernel, KswapdStall, Pgdat, Role, Variant, MAX_NODE, PGDAT_CONGESTED,
    WB_ASYNC_CONGESTED,
};
use crate::event::{Event as Ev, KernelEvent, Wq, NUMA_NO_NODE};
use crate::ghost::{Ghost, Pid, MAX_TASKS};
use crate::kernel::sched::{loop_summary, Current, Sched, TimerModel};
use crate::kernel::spinlock::SpinLock;
use crate::kernel::wait::{WaitList, WaitQueueHead};
use crate::model::{count, Counters, FieldError, Fields, Model, PlatformFor, RoleKind, Symmetry};
use crate::platform::{Atomic, SymTag};

/// What the state looks like when every thread has finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalState {
    pub kswapd_exclusive: i32,
    /// PGDAT_CONGESTED per node.
    pub congested: Vec<bool>,
}

/// Initial page count of the file (large enough that removals never underflow).
const INITIAL_NRPAGES: u64 = 1 << 20;

impl<P: PlatformFor<Event>> Kernel<P> {
    pub fn new(cfg: Config, ghost: Arc<P::Ghost>) -> Self {
        let sched = Sched::new(cfg.roles.len(), cfg.timer, ghost);
        let pgdat = (0..cfg.nr_nodes() as i32)
            .map(|node_id| {
                P::tagged(SymTag::Node(node_id as u8), || Pgdat {
                    node_id,
                    flags: P::AtomicU32::new(0),
                    kswapd_asleep: P::AtomicBool::new(false),
                })
            })
            .collect();
        let mut congested = 0;
        let bdi = cfg
            .roles
            .iter()
            .filter_map(|r| match r {
                Role::Bdi { congested_at_start } => {
                    congested += *congested_at_start as i32;
                    Some(BackingDev { state: P::AtomicU32::new((*congested_at_start as u32) << WB_ASYNC_CONGESTED) })
                }
                _ => None,
            })
            .collect();
        Kernel {
            sched,
            kswapd_exclusive: P::tagged(SymTag::NodeValue, || P::AtomicI32::new(NUMA_NO_NODE)),
            kswapd_contended_wait: WaitQueueHead::new(KSWAPD_CONTENDED_WAIT),
            pgdat,
            mapping: AddressSpace { tree_lock: SpinLock::new(TREE_LOCK), nrpages: P::AtomicU64::new(INITIAL_NRPAGES) },
            bdi,
            nr_wb_congested: P::AtomicI32::new(congested),
            congestion_wqh: WaitQueueHead::new(CONGESTION_WQH),
            cfg,
        }
    }

    /// Is seeded bug `m` active? Always false in the runtime build. When it is, the mutated
    /// code is about to run, and the checker is told so.
    #[inline(always)]
    pub fn mutated(&self, cur: &Current<P>, m: Mutation) -> bool {
        let on = P::Ghost::ENABLED && self.cfg.mutation == Some(m);
        if on {
            cur.mutation_reached();
        }
        on
    }

    /// Run task `pid`'s role to completion on the calling thread.
    pub fn run_task(&self, pid: Pid) {
        let cur = self.sched.enter(pid);
        // What this task's future depends on at the checkpoints below, besides the shared
        // state: its role (fixed by `pid`) and the locals named there.
        let context = cur.loop_context();
        let bdi_index = self.cfg.roles[..pid].iter().filter(|r| matches!(r, Role::Bdi { .. })).count();
        match self.cfg.roles[pid] {
            Role::Kswapd { node, batches, balances, .. } if self.mutated(&cur, Mutation::KswapdInfiniteLoop) => {
                // The liveness self-test: each batch of reclaim is a loop that never ends and
                // never changes anything. (When the checker stops it, kswapd goes on to sleep.)
                for _ in 0..batches {
                    let context = cur.loop_context();
                    while cur.loop_head(loop_summary(context, 0, 0)) {
                        P::yield_now(); // cond_resched()
                    }
                }
                vmscan::kswapd_try_to_sleep(self, &cur, node, balances);
            }
            Role::Kswapd { node, batches, pages, balances } => {
                vmscan::kswapd(self, &cur, node, batches, pages, balances)
            }
            Role::Writer { holds, spins } => vmscan::writer(self, &cur, holds, spins),
            Role::Allocator { node, attempts } => {
                for attempt in 0..attempts {
                    cur.checkpoint(loop_summary(context, 14, attempt as u64));
                    vmscan::wakeup_kswapd(self, &cur, node);
                }
            }
            Role::DirectReclaim { node, batches, pages, tags_congested } => {
                vmscan::direct_reclaim(self, &cur, node, batches, pages, tags_congested)
            }
            Role::Bdi { congested_at_start } => backing_dev::bdi(self, &cur, bdi_index, congested_at_start),
        }
        // The role is done: nothing of how it went is left in its locals.
        cur.checkpoint(loop_summary(context, 15, 0));
        // do_exit(): no lock may be held any more.
        for lock in [&self.mapping.tree_lock, &self.kswapd_contended_wait.lock, &self.congestion_wqh.lock] {
            lock.release_if_leaked(&cur);
        }
        cur.exit();
    }

    /// Read the final state (call after every thread has been joined).
    pub fn final_state(&self) -> FinalState {
        FinalState {
            kswapd_exclusive: self.kswapd_exclusive.load(Relaxed),
            congested: self.pgdat.iter().map(|p| p.flags.load(Relaxed) & (1 << PGDAT_CONGESTED) != 0).collect(),
        }
    }
}

impl Model for KswapdStall {
    const NAME: &'static str = "kswapd-stall";
    const ROLES: &'static [RoleKind] = &[
        RoleKind { name: "kswapd", keys: &["node", "batches", "pages", "balances"] },
        RoleKind { name: "writer", keys: &["holds"] },
        RoleKind { name: "allocator", keys: &["node", "attempts"] },
        RoleKind { name: "direct-reclaim", keys: &["node", "batches", "pages", "tags_congested"] },
        RoleKind { name: "bdi", keys: &["congested_at_start"] },
    ];
    const PARAMS: &'static [&'static str] = &["timeout"];
    const CONTENDED_PATH: &'static [Coverage] =
        &[Coverage::TrylockFailed, Coverage::CmpxchgLost, Coverage::DirectStall];
    /// `remove_mapping_list()`'s contended path declares them (reclaim/vmscan.rs).
    const LIVE_LOCALS: bool = true;

    type Variant = Variant;
    type Event = Event;
    type Coverage = Coverage;
    type Invariant = Invariant;
    type Mutation = Mutation;
    type Role = Role;
    type Config = Config;
    type Final = FinalState;
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
            Role::Writer { .. } => "writer",
            Role::Allocator { .. } => "allocator",
            Role::DirectReclaim { .. } => "direct-reclaim",
            Role::Bdi { .. } => "bdi",
        }
    }
    fn comm(role: &Role) -> String {
        match role {
            Role::Kswapd { node, .. } => format!("kswapd{node}"),
            Role::Writer { .. } => "writer".into(),
            Role::Allocator { node, .. } => format!("alloc(n{node})"),
            Role::DirectReclaim { node, .. } => format!("direct(n{node})"),
            Role::Bdi { .. } => "bdi".into(),
        }
    }

    fn parse_role(kind: &str, f: &mut Fields, _kinds: &[&str]) -> Result<Role, FieldError> {
        let node = |f: &mut Fields| -> Result<i32, FieldError> {
            f.int("node", 0..=MAX_NODE as i64)?
                .ok_or_else(|| f.error("node", format!("role \"{kind}\" needs a node (0..={MAX_NODE})")))
        };
        Ok(match kind {
            "kswapd" => Role::Kswapd {
                node: node(f)?,
                batches: f.int_or("batches", 1..=8, 1)?,
                pages: f.int_or("pages", 1..=64, 1)?,
                balances: f.bool_or("balances", true)?,
            },
            "writer" => Role::Writer { holds: f.int_or("holds", 1..=8, 1)?, spins: 0 },
            "allocator" => Role::Allocator { node: node(f)?, attempts: f.int_or("attempts", 1..=8, 1)? },
            "direct-reclaim" => Role::DirectReclaim {
                node: node(f)?,
                batches: f.int_or("batches", 1..=8, 1)?,
                pages: f.int_or("pages", 1..=64, 1)?,
                tags_congested: f.bool_or("tags_congested", false)?,
            },
            "bdi" => Role::Bdi { congested_at_start: f.bool_or("congested_at_start", true)? },
            _ => unreachable!("the checker passes only this model's role kinds"),
        })
    }

    fn configure(
        variant: Variant,
        mutation: Option<Mutation>,
        roles: Vec<Role>,
        params: &mut Fields,
    ) -> Result<Config, FieldError> {
        let timer = match params.string("timeout")?.as_deref() {
            None | Some("never") => TimerModel::Never,
            Some("any-time") => TimerModel::AnyTime,
            Some(other) => {
                return Err(
                    params.error("timeout", format!("unknown value \"{other}\"; expected one of: never, any-time"))
                )
            }
        };
        let cfg = Config { variant, mutation, roles, timer };
        Self::validate_threads(&cfg).map_err(|m| FieldError { field: "thread".into(), message: m })?;
        // At the allocator's own line, on its node.
        Self::allocators_have_kswapds(&cfg)
            .map_err(|(pid, m)| FieldError { field: format!("thread[{pid}].node"), message: m })?;
        Ok(cfg)
    }

    fn validate(cfg: &Config) -> Result<(), String> {
        Self::validate_threads(cfg)?;
        Self::allocators_have_kswapds(cfg).map_err(|(_, m)| m)
    }

    /// Every dependency between two tasks' steps goes through the platform or the ghost: the
    /// tasks share only platform objects (`kswapd_exclusive`, `pgdat[]`, the wait queues,
    /// `tree_lock`, the bdis, each `task_struct`'s state), and the model state outside the
    /// platform is owner-only (`sleep_state`, the spinlock's owner, read only as "do I hold
    /// it") or set once before the tasks start (the thread handles). The loop summaries hash
    /// only the task's own locals.
    fn partial_order(_cfg: &Config) -> Result<(), &'static str> {
        Ok(())
    }

    /// Kswapds of different nodes are interchangeable when they have the same keys, no other
    /// role names their node, and neither runs on the body task (which also boots the kernel
    /// and joins the others). Every object of a node is created under `SymTag::Node`, every
    /// task's under `SymTag::Pid`, `kswapd_exclusive` holds a node and the wait queues' entries
    /// pids; the mutations are the same on every node.
    ///
    /// With more than two kswapds, two losers of `kswapd_exclusive` can wait on
    /// `kswapd_contended_wait` together, and `__wake_up()` wakes them in the list's order.
    /// The wait queue keeps that order (`WaitList`, head first, as `prepare_to_wait()` adds
    /// at the head) and a renaming renames the list entry by entry, so the renaming maps the
    /// state graph onto itself (the exact oracle of checks/tests/reduction_soundness.rs checks
    /// it on three kswapds; the seeded defect `SymmetrySortsWaitLists`, a list renamed into
    /// pid order, is what the model's pid-order wake-ups once needed and the oracle catches).
    fn symmetry(cfg: &Config) -> Result<Symmetry, &'static str> {
        let nodes = cfg.nr_nodes();
        let last = cfg.roles.len() - 1;
        let mut pid_of_node = vec![None; nodes];
        let mut keys: Vec<Option<(u32, u32, bool)>> = vec![None; nodes];
        for (pid, r) in cfg.roles.iter().enumerate() {
            if let Role::Kswapd { node, batches, pages, balances } = *r {
                if pid != last {
                    pid_of_node[node as usize] = Some(pid as u8);
                    keys[node as usize] = Some((batches, pages, balances));
                }
            }
        }
        for r in &cfg.roles {
            if let Role::Allocator { node, .. } | Role::DirectReclaim { node, .. } = *r {
                keys[node as usize] = None;
            }
        }
        let mut orbits: Vec<Vec<u8>> = Vec::new();
        let mut seen: Vec<(u32, u32, bool)> = Vec::new();
        for k in keys.iter().flatten() {
            if seen.contains(k) {
                continue;
            }
            seen.push(*k);
            let orbit: Vec<u8> = (0..nodes).filter(|&n| keys[n] == Some(*k)).map(|n| n as u8).collect();
            if orbit.len() >= 2 {
                orbits.push(orbit);
            }
        }
        if orbits.is_empty() {
            return Err(
                "no two kswapds are interchangeable (same keys, no other role naming their node, not the last thread)",
            );
        }
        Ok(Symmetry { nodes, tasks: cfg.roles.len(), orbits, pid_of_node })
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
    fn final_state<P: PlatformFor<Event>>(k: &Kernel<P>) -> FinalState {
        k.final_state()
    }

    fn scale(cfg: &Config, k: usize, work: u32, hold_spins: u32) -> Result<Config, String> {
        if k <= 1 && work <= 1 && hold_spins == 0 {
            return Ok(cfg.clone());
        }
        // Every copy of a thread works on fresh nodes.
        let nodes = cfg.nr_nodes() as i32;
        let mut roles = Vec::new();
        for i in 0..k.max(1) as i32 {
            for r in &cfg.roles {
                roles.push(match r.clone() {
                    Role::Kswapd { node, batches, pages, balances } => {
                        Role::Kswapd { node: node + i * nodes, batches: batches * work, pages, balances }
                    }
                    Role::Allocator { node, attempts } => {
                        Role::Allocator { node: node + i * nodes, attempts: attempts * work }
                    }
                    Role::DirectReclaim { node, batches, pages, tags_congested } => {
                        Role::DirectReclaim { node: node + i * nodes, batches: batches * work, pages, tags_congested }
                    }
                    Role::Writer { holds, .. } => Role::Writer { holds: holds * work, spins: hold_spins },
                    other => other,
                });
            }
        }
        let c = Config { roles, ..cfg.clone() };
        Self::validate(&c)?;
        Ok(c)
    }

    fn real_time(cfg: &Config, jiffy: Duration) -> Config {
        Config { timer: TimerModel::Real { jiffy }, ..cfg.clone() }
    }

    const COUNTERS: &'static [&'static str] = &[
        "elapsed-us",
        "cpu-us",
        "trylock-failed",
        "cmpxchg-won",
        "cmpxchg-lost",
        "stalls",
        "stalls-full-timeout",
        "stall-us",
        "lost-wakeups",
        "congested-set",
        "congested-cleared",
        "direct-stall",
        "direct-stall-us",
        "stall-us-total",
        "lock-hold-us",
        "lock-wait-us",
    ];
    const RATIOS: &'static [(&'static str, &'static str)] = &[
        ("cpu-us", "elapsed-us"),
        ("stall-us", "stalls"),
        ("direct-stall-us", "direct-stall"),
        ("lock-wait-us", "trylock-failed"),
    ];

    fn counters(cfg: &Config, events: &[(Pid, Ev<Event>)], times: &[Instant], out: &mut Counters) {
        let us = |a: Instant, b: Instant| b.saturating_duration_since(a).as_secs_f64() * 1e6;
        let tasks = cfg.roles.len();
        // Per task: the queue it last enqueued on, and when it started to sleep.
        let mut last_wq: Vec<Option<Wq>> = vec![None; tasks];
        let mut slept_at: Vec<Option<Instant>> = vec![None; tasks];
        for (i, (p, e)) in events.iter().enumerate() {
            let Some(&t) = times.get(i) else { break };
            let Ev::Kernel(k) = e else { continue };
            match *k {
                KernelEvent::Enqueued { wq } => last_wq[*p] = Some(wq),
                KernelEvent::Schedule { .. } => {
                    slept_at[*p] = Some(t);
                    if last_wq[*p] == Some(KSWAPD_CONTENDED_WAIT) {
                        count(out, "stalls", 1.0);
                    }
                }
                KernelEvent::Woken | KernelEvent::TimedOut { .. } | KernelEvent::SleptForever => {
                    if let Some(a) = slept_at[*p].take() {
                        let key = if last_wq[*p] == Some(CONGESTION_WQH) { "direct-stall-us" } else { "stall-us" };
                        count(out, key, us(a, t));
                        if matches!(k, KernelEvent::TimedOut { .. }) && last_wq[*p] == Some(KSWAPD_CONTENDED_WAIT) {
                            count(out, "stalls-full-timeout", 1.0);
                        }
                    }
                }
                KernelEvent::Livelock { .. } | KernelEvent::StepBound { .. } => count(out, "loops-stopped", 1.0),
                _ => {}
            }
        }
        crate::model::lock_times(events, times, tasks, |_| false, out);
        // Time asleep in either stall: kswapd's on kswapd_contended_wait, direct reclaim's in
        // wait_iff_congested (4/4 trades the one for the other).
        let total = out.get("stall-us").copied().unwrap_or(0.0) + out.get("direct-stall-us").copied().unwrap_or(0.0);
        out.insert("stall-us-total".into(), total);
    }
}

impl KswapdStall {
    /// Everything [`Model::validate`] requires of the threads but that each allocator's node
    /// has a kswapd.
    fn validate_threads(cfg: &Config) -> Result<(), String> {
        if cfg.roles.is_empty() {
            return Err("a scenario needs at least one thread".into());
        }
        if cfg.roles.len() > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} threads"));
        }
        let mut kswapd_nodes = Vec::new();
        for r in &cfg.roles {
            if let Some(n) = r.node() {
                if !(0..=MAX_NODE).contains(&n) {
                    return Err(format!("node {n} out of range 0..={MAX_NODE}"));
                }
            }
            if let Role::Kswapd { node, .. } = r {
                if kswapd_nodes.contains(node) {
                    return Err(format!("two kswapd threads for node {node}: the kernel runs one kswapd per node"));
                }
                kswapd_nodes.push(*node);
            }
        }
        // Direct reclaimers sleep on congestion_wqh, whose list holds WaitList::CAPACITY
        // entries (kswapd_contended_wait's losers are kswapds, one a node, fewer than that).
        let direct = cfg.roles.iter().filter(|r| matches!(r, Role::DirectReclaim { .. })).count();
        if direct > WaitList::CAPACITY {
            return Err(format!(
                "{direct} direct-reclaim threads: at most {} (they can all sleep on congestion_wqh, and the model's \
                 wait-queue list holds {} entries)",
                WaitList::CAPACITY,
                WaitList::CAPACITY
            ));
        }
        // The protocol's code runs in a kswapd's or a direct reclaimer's
        // remove_mapping_list(); writers, allocators and backing devices only race with it.
        if !cfg.roles.iter().any(|r| matches!(r, Role::Kswapd { .. } | Role::DirectReclaim { .. })) {
            return Err("a kswapd-stall scenario needs a kswapd or a direct-reclaim thread: the protocol runs in \
                        them (writers, allocators and bdis only race with it)"
                .into());
        }
        Ok(())
    }

    /// wakeup_kswapd(node) runs zone_balanced() only when that node's kswapd is asleep: every
    /// allocator's node needs a kswapd. The error names the allocator's thread index.
    fn allocators_have_kswapds(cfg: &Config) -> Result<(), (usize, String)> {
        for (pid, r) in cfg.roles.iter().enumerate() {
            if let Role::Allocator { node, .. } = r {
                if !cfg.roles.iter().any(|k| matches!(k, Role::Kswapd { node: n, .. } if n == node)) {
                    return Err((
                        pid,
                        format!(
                            "thread {pid} is an allocator for node {node}, which has no kswapd: its wakeup_kswapd() \
                             can never find a sleeping kswapd; add a kswapd with node = {node}, or give the \
                             allocator the node of a kswapd"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ghost::NoGhost;
    use crate::kernel::sched::{io_schedule_timeout, set_current_state, try_to_wake_up, TASK_INTERRUPTIBLE};
    use crate::platform::Std;

    type P = Std<NoGhost<Event>>;

    fn kswapd(node: i32) -> Role {
        Role::Kswapd { node, batches: 1, pages: 1, balances: true }
    }
    fn cfg(roles: Vec<Role>) -> Config {
        Config { variant: Variant::Recheck, mutation: None, roles, timer: TimerModel::Never }
    }

    #[test]
    fn validation_refuses_what_the_kernel_cannot_have() {
        assert!(KswapdStall::validate(&cfg(vec![kswapd(0), kswapd(1)])).is_ok());
        assert!(KswapdStall::validate(&cfg(vec![])).unwrap_err().contains("at least one thread"));
        assert!(KswapdStall::validate(&cfg(vec![kswapd(0), kswapd(0)])).unwrap_err().contains("one kswapd per node"));
        assert!(KswapdStall::validate(&cfg(vec![kswapd(8)])).unwrap_err().contains("out of range"));
        assert!(KswapdStall::validate(&cfg(vec![Role::Writer { holds: 1, spins: 0 }; MAX_TASKS + 1]))
            .unwrap_err()
            .contains("at most"));
        // Each limit at its edge: the last value accepted.
        let mut full = vec![Role::Writer { holds: 1, spins: 0 }; MAX_TASKS - 1];
        full.push(kswapd(MAX_NODE));
        assert!(KswapdStall::validate(&cfg(full)).is_ok(), "MAX_TASKS threads, a kswapd of MAX_NODE");
        assert!(KswapdStall::validate(&cfg(vec![kswapd(-1)])).unwrap_err().contains("out of range"));
        // The protocol runs in a kswapd or a direct reclaimer; an allocator's node needs a kswapd.
        let writer = Role::Writer { holds: 1, spins: 0 };
        assert!(KswapdStall::validate(&cfg(vec![writer.clone()])).unwrap_err().contains("needs a kswapd or a direct"));
        let direct = Role::DirectReclaim { node: 0, batches: 1, pages: 1, tags_congested: false };
        assert!(KswapdStall::validate(&cfg(vec![direct.clone(), writer])).is_ok());
        // Direct reclaimers all sleep on congestion_wqh: a wait-queue list's worth, not one more.
        assert!(KswapdStall::validate(&cfg(vec![direct.clone(); WaitList::CAPACITY])).is_ok());
        assert!(KswapdStall::validate(&cfg(vec![direct; WaitList::CAPACITY + 1]))
            .unwrap_err()
            .contains("wait-queue list holds 12 entries"));
        let allocator = |node| Role::Allocator { node, attempts: 1 };
        assert!(KswapdStall::validate(&cfg(vec![kswapd(1), allocator(1)])).is_ok());
        assert!(KswapdStall::validate(&cfg(vec![kswapd(1), allocator(0)])).is_err());
    }

    #[test]
    fn the_initial_state_is_the_kernels() {
        let c = cfg(vec![
            kswapd(2),
            Role::Bdi { congested_at_start: true },
            Role::Bdi { congested_at_start: false },
            Role::Bdi { congested_at_start: true },
        ]);
        let k = Kernel::<P>::new(c, Arc::new(NoGhost::default()));
        assert_eq!(k.kswapd_exclusive.load(Relaxed), NUMA_NO_NODE);
        assert_eq!(k.pgdat.len(), 3, "nodes 0..=2");
        assert!(k.pgdat.iter().all(|p| p.flags.load(Relaxed) == 0 && !p.kswapd_asleep.load(Relaxed)));
        assert_eq!(k.nr_wb_congested.load(Relaxed), 2, "two devices start congested");
        let states: Vec<u32> = k.bdi.iter().map(|b| b.state.load(Relaxed)).collect();
        assert_eq!(states, vec![1 << WB_ASYNC_CONGESTED, 0, 1 << WB_ASYNC_CONGESTED]);
        assert!(k.kswapd_contended_wait.list().is_empty());
    }

    #[test]
    fn a_wake_and_a_timer_expiry_race_for_the_same_transition() {
        // any-time timer: the expiry is the sleeper's own compare-and-swap, so whoever moves the
        // state out of TASK_INTERRUPTIBLE first wins, and the other sees it already running.
        let c = Config { timer: TimerModel::AnyTime, ..cfg(vec![kswapd(0), kswapd(1)]) };
        let k = Kernel::<P>::new(c, Arc::new(NoGhost::default()));
        // The waker first: the sleeper is woken, not timed out.
        let sleeper = k.sched.enter(0);
        set_current_state(&sleeper, TASK_INTERRUPTIBLE);
        assert!(try_to_wake_up(&k.sched, &k.sched.tasks[0], TASK_INTERRUPTIBLE));
        assert_eq!(io_schedule_timeout(&sleeper, 10), 10, "woken: the whole timeout is left");
        // The timer first: the later wake finds the task running and does nothing.
        set_current_state(&sleeper, TASK_INTERRUPTIBLE);
        assert_eq!(io_schedule_timeout(&sleeper, 10), 0, "timed out");
        assert!(!try_to_wake_up(&k.sched, &k.sched.tasks[0], TASK_INTERRUPTIBLE));
    }
}
