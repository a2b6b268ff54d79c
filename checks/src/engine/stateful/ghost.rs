//! The stateful engine's ghost: the checker's side of one execution on the stateful platform.
//!
//! It keeps what the recorder keeps for loom and shuttle (who has finished, who sleeps with no
//! timer, whether the execution was ended because a sleeper can never be woken), steps the
//! model's online monitors on every event, counts coverage, and optionally records the events
//! (to print a counterexample). All of it is part of the state: [`StatefulGhost::state_hash`]
//! goes into the state fingerprint next to the runtime's own.
//!
//! Every answer model code branches on is folded into the asking task's local hash
//! ([`stateful::observe`]), and a loop head replaces the task's history by the model's loop
//! summary ([`stateful::reset_local`]); see `mmmodel::platform::stateful` for why both are
//! needed for the local hashes to stand for the tasks' local states.

use std::cell::{RefCell, RefMut};
use std::hash::{Hash, Hasher};

use mmmodel::event::Event;
use mmmodel::ghost::{Ghost, LoopVerdict, Pid, SleepDecision};
use mmmodel::kernel::sched::Summary;
use mmmodel::model::Perm;
use mmmodel::platform::stateful;
use mmmodel::platform::stateful::arena;

use crate::monitor::online::{Found, Online};
use crate::monitor::Checked;

/// What the ghost does with an execution's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Step the monitors (their state is part of the fingerprint) and count coverage: the
    /// transitions being run are new.
    Explore,
    /// Step the monitors, count nothing: a known prefix is being replayed.
    Replay,
    /// The rest of an execution whose state was already explored, run only to let its tasks
    /// end: no monitors, and every loop stopped after a few iterations.
    FastForward,
}

/// Loop iterations a task may make in [`Mode::FastForward`] before its loop is stopped.
const FAST_FORWARD_LOOPS: u32 = 64;

/// A small fast hasher (FxHash) for the ghost's state.
#[derive(Default)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
}

struct Inner<M: Checked> {
    mode: Mode,
    online: M::Online,
    /// Violations and derived coverage found since the engine last took them.
    found: Found<M>,
    /// Coverage events (by the model's own mapping) since the engine last took them.
    coverage: Vec<M::Coverage>,
    finished: u32,
    sleeping: u32,
    aborted: bool,
    mutation_reached: bool,
    loops: Vec<u32>,
    record: Option<Vec<(Pid, Event<M::Event>)>>,
    /// With recording on: each task that finished, with the number of events recorded before.
    exits: Vec<(Pid, usize)>,
    /// Partial-order reduction: what the transition being explored did to the ghost (its
    /// events, and [`TOUCH_SLEEPERS`] / [`TOUCH_WOKEN`]), kept only in [`Mode::Explore`].
    por: bool,
    step_events: StepEvents<M>,
    step_touch: u8,
}

/// A step read or wrote the ghost's sleep and exit bookkeeping as a whole (`untimed_sleep`,
/// `task_exit`, `aborted`: they read every task's bit).
pub(crate) const TOUCH_SLEEPERS: u8 = 1;
/// A step woke a sleeper (`woken`: clears one task's bit).
pub(crate) const TOUCH_WOKEN: u8 = 2;

/// The events one step emitted, each with its task.
pub(crate) type StepEvents<M> = Vec<(Pid, Event<<M as mmmodel::model::Model>::Event>)>;

/// What a step's events report on the online monitors from one state: the invariants and
/// derived coverage (sorted names). The state they reach is left in a scratch state.
type Effect = (Vec<&'static str>, Vec<&'static str>);

/// The part of the ghost that is part of the state, saved with a snapshot of the execution.
pub(crate) struct GhostSave<M: Checked> {
    online: M::Online,
    finished: u32,
    sleeping: u32,
    aborted: bool,
    mutation_reached: bool,
    loops: Vec<u32>,
}

/// Interior mutability for state that only one OS thread ever touches.
struct OneThread<T>(RefCell<T>);

// SAFETY: the stateful runtime runs every task and the chooser of an execution on the one OS
// thread that called `stateful::run`, one at a time (it panics if a platform object is used
// from another thread), and the search that owns the ghost runs on that thread too. So the
// ghost's state is never touched from two threads, and `RefCell` catches any re-entrant use.
unsafe impl<T: Send> Sync for OneThread<T> {}

/// The ghost of one execution (reused: [`StatefulGhost::reset`] starts the next).
pub(crate) struct StatefulGhost<M: Checked> {
    cfg: M::Config,
    tasks: usize,
    /// Loop heads replace a task's history by the model's loop summary (off: the fingerprint
    /// keeps every task's whole history, the reference the summaries are checked against).
    summaries: bool,
    /// What the model's live-locals declarations do ([`Ghost::live_locals`]).
    live: LiveLocals,
    /// The symmetry group's elements but the identity (empty: no symmetry reduction).
    perms: Vec<Perm>,
    /// The monitor projection: the online monitors' parts cleared after every step
    /// ([`crate::monitor::online::Online::projection`]; 0: none).
    project: u32,
    /// The two monitor states the commute test steps in place, one for each order (kept
    /// between tests, so that their vectors keep their room: a clone a test allocated).
    scratch: OneThread<(M::Online, M::Online)>,
    /// The monitors' state renamed by one element of the symmetry group, to hash it (kept, so
    /// that its vectors keep their room).
    image_scratch: OneThread<M::Online>,
    inner: OneThread<Inner<M>>,
}

/// The reduction `live-locals`: whether a declaration of a task's live locals replaces its
/// history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LiveLocals {
    /// Ignored: the history runs on to the next checkpoint or loop head.
    Off,
    /// Applied (when loop summaries are: never in the history-only reference search).
    On,
    /// The seeded defect `ReductionDefect::LiveLocalsForgetContext`: applied with the context
    /// left out, as if nothing the task did before the enclosing function were live.
    ForgetContext,
    /// The live-locals census ([`crate::engine::Options::live_census`]): applied to the tasks'
    /// shadow hashes only (with the context left out if `true`: the seeded defect).
    Census(bool),
}

impl<M: Checked> StatefulGhost<M> {
    pub fn new(cfg: M::Config, summaries: bool, perms: Vec<Perm>) -> Self {
        let tasks = M::roles(&cfg).len();
        let inner = Inner {
            mode: Mode::Explore,
            online: M::Online::default(),
            found: Found::default(),
            coverage: Vec::new(),
            finished: 0,
            sleeping: 0,
            aborted: false,
            mutation_reached: false,
            loops: vec![0; tasks],
            record: None,
            exits: Vec::new(),
            por: false,
            step_events: Vec::new(),
            step_touch: 0,
        };
        StatefulGhost {
            cfg,
            tasks,
            summaries,
            live: LiveLocals::Off,
            perms,
            project: 0,
            scratch: OneThread(RefCell::new(Default::default())),
            image_scratch: OneThread(RefCell::new(Default::default())),
            inner: OneThread(RefCell::new(inner)),
        }
    }

    /// Whether the model's live-locals declarations replace the tasks' histories in this search
    /// (not under the census, which applies them to the shadows only, nor in the history-only
    /// search).
    pub fn live_locals_applied(&self) -> bool {
        self.summaries && matches!(self.live, LiveLocals::On | LiveLocals::ForgetContext)
    }

    /// The ghost with the model's live-locals declarations treated as `live` says.
    pub fn with_live_locals(mut self, live: LiveLocals) -> Self {
        self.live = live;
        self
    }

    /// The ghost with the online monitors' parts of `mask` cleared after every step (the
    /// reduction `projection`).
    pub fn with_projection(mut self, mask: u32) -> Self {
        self.project = mask;
        self
    }

    /// The monitor projection's mask (0: nothing is left out).
    pub fn projection(&self) -> u32 {
        self.project
    }

    fn lock(&self) -> RefMut<'_, Inner<M>> {
        self.inner.0.borrow_mut()
    }

    /// Start a new execution.
    pub fn reset(&self, mode: Mode, record: bool) {
        let mut g = self.lock();
        g.mode = mode;
        g.online = M::Online::default();
        g.found = Found::default();
        g.coverage.clear();
        g.finished = 0;
        g.sleeping = 0;
        g.aborted = false;
        g.mutation_reached = false;
        g.loops.iter_mut().for_each(|l| *l = 0);
        g.record = record.then(Vec::new);
        g.exits.clear();
        g.step_events.clear();
        g.step_touch = 0;
    }

    /// The ghost as it stands, for a snapshot of the execution (taken where the engine has
    /// taken its findings and the last step's footprint).
    pub fn save(&self) -> GhostSave<M> {
        let g = self.lock();
        GhostSave {
            online: g.online.clone(),
            finished: g.finished,
            sleeping: g.sleeping,
            aborted: g.aborted,
            mutation_reached: g.mutation_reached,
            loops: g.loops.clone(),
        }
    }

    /// [`StatefulGhost::save`] into an earlier save no longer wanted (its vectors keep their
    /// room).
    pub fn save_into(&self, into: &mut GhostSave<M>) {
        let g = self.lock();
        into.online.clone_from(&g.online);
        into.finished = g.finished;
        into.sleeping = g.sleeping;
        into.aborted = g.aborted;
        into.mutation_reached = g.mutation_reached;
        into.loops.clone_from(&g.loops);
    }

    /// Back to a saved ghost, exploring (with nothing found and no footprint yet).
    pub fn restore(&self, s: &GhostSave<M>) {
        let mut g = self.lock();
        g.mode = Mode::Explore;
        g.online.clone_from(&s.online);
        g.found = Found::default();
        g.coverage.clear();
        g.finished = s.finished;
        g.sleeping = s.sleeping;
        g.aborted = s.aborted;
        g.mutation_reached = s.mutation_reached;
        g.loops.clone_from(&s.loops);
        g.step_events.clear();
        g.step_touch = 0;
    }

    /// Partial-order reduction: keep what each explored step does to the ghost.
    pub fn set_por(&self, on: bool) {
        self.lock().por = on;
    }

    /// Whether what each explored step does to the ghost is kept ([`Self::set_por`]).
    pub fn keeps_steps(&self) -> bool {
        self.lock().por
    }

    /// The events and ghost bookkeeping of the step explored since the last call.
    /// The events go into `into` (emptied first), which gives its room to the next step's.
    pub fn take_step_into(&self, into: &mut StepEvents<M>) -> u8 {
        let mut g = self.lock();
        into.clear();
        std::mem::swap(&mut g.step_events, into);
        std::mem::take(&mut g.step_touch)
    }

    /// Forget the events and ghost bookkeeping of the step explored since the last call (the
    /// room of its events is kept).
    pub fn discard_step(&self) {
        let mut g = self.lock();
        g.step_events.clear();
        g.step_touch = 0;
    }

    /// The stuck situations of the online monitors' state now (for the lasso invariants).
    pub fn cycle_keys(&self, out: &mut Vec<crate::monitor::online::CycleKey>) {
        self.lock().online.cycle_keys(out);
    }

    /// Copy the online monitors' state now into `into` (reusing its room).
    pub fn online_into(&self, into: &mut M::Online) {
        into.clone_from(&self.lock().online);
    }

    fn effect(
        &self,
        s: &mut M::Online,
        from: &M::Online,
        first: &[(Pid, Event<M::Event>)],
        then: &[(Pid, Event<M::Event>)],
    ) -> Effect {
        use mmmodel::model::Named;
        s.clone_from(from);
        let mut found = Found::<M>::default();
        for (pid, ev) in first.iter().chain(then) {
            s.step(&self.cfg, *pid, ev, &mut found);
            if self.project != 0 {
                s.project(self.project);
            }
        }
        let mut v: Vec<&'static str> = found.violated.iter().map(|i| i.name()).collect();
        let mut d: Vec<&'static str> = found.derived.iter().map(|c| c.name()).collect();
        v.sort_unstable();
        d.sort_unstable();
        (v, d)
    }

    /// Whether two steps' events commute on the online monitors from state `from`: either
    /// order reaches the same monitor state and reports the same violations and derived
    /// coverage (what the partial-order reduction's independence needs of the ghost).
    pub fn commute(&self, from: &M::Online, a: &[(Pid, Event<M::Event>)], b: &[(Pid, Event<M::Event>)]) -> bool {
        if a.is_empty() || b.is_empty() {
            return true;
        }
        let mut scratch = self.scratch.0.borrow_mut();
        let (ab, ba) = &mut *scratch;
        self.effect(ab, from, a, b) == self.effect(ba, from, b, a) && ab == ba
    }

    /// Whether loop heads and checkpoints replace histories (off: the history-only reference,
    /// which also keeps finished tasks' histories in the fingerprint).
    pub fn summaries(&self) -> bool {
        self.summaries
    }

    pub fn set_mode(&self, mode: Mode) {
        self.lock().mode = mode;
    }

    /// The ghost's part of the state fingerprint.
    pub fn state_hash(&self) -> u64 {
        let g = self.lock();
        let mut h = Fx::default();
        g.online.hash(&mut h);
        h.write_u32(g.finished);
        h.write_u32(g.sleeping);
        h.write_u8(g.aborted as u8 | (g.mutation_reached as u8) << 1);
        h.finish()
    }

    /// The ghost's part of the fingerprint of the state's image under element `k` of the
    /// symmetry group (as [`StatefulGhost::state_hash`], over the renamed state).
    pub fn state_hash_image(&self, k: usize) -> u64 {
        let g = self.lock();
        let p = &self.perms[k];
        let mut online = self.image_scratch.0.borrow_mut();
        assert!(g.online.permute_into(p, &mut online), "symmetry is applied only to monitors that permute");
        let mut h = Fx::default();
        online.hash(&mut h);
        h.write_u32(p.pids(g.finished));
        h.write_u32(p.pids(g.sleeping));
        h.write_u8(g.aborted as u8 | (g.mutation_reached as u8) << 1);
        h.finish()
    }

    /// Take the violations, derived and plain coverage found since the last call.
    pub fn take(&self) -> (Found<M>, Vec<M::Coverage>) {
        let mut g = self.lock();
        (std::mem::take(&mut g.found), std::mem::take(&mut g.coverage))
    }

    /// What the last transition found, handed to `f` in place and then cleared (the vectors
    /// keep their room: no allocation per transition, as [`StatefulGhost::take`] costs).
    pub fn drain_found<R>(&self, f: impl FnOnce(&Found<M>, &[M::Coverage]) -> R) -> R {
        let mut g = self.lock();
        let r = f(&g.found, &g.coverage);
        g.found.violated.clear();
        g.found.derived.clear();
        g.coverage.clear();
        r
    }

    /// The end-of-execution checks (every task finished in final state `fin`).
    pub fn end(&self, fin: &M::Final) -> Found<M> {
        let mut g = self.lock();
        let mut found = std::mem::take(&mut g.found);
        if g.mode != Mode::FastForward {
            g.online.end(&self.cfg, fin, &mut found);
        }
        found
    }

    pub fn mutation_reached(&self) -> bool {
        self.lock().mutation_reached
    }

    /// Events recorded so far (with recording on).
    pub fn recorded_len(&self) -> usize {
        self.lock().record.as_ref().map_or(0, Vec::len)
    }

    pub fn take_record(&self) -> Vec<(Pid, Event<M::Event>)> {
        self.lock().record.take().unwrap_or_default()
    }

    /// With recording on: the tasks that finished, each with the events recorded before it.
    pub fn take_exits(&self) -> Vec<(Pid, usize)> {
        std::mem::take(&mut self.lock().exits)
    }

    fn all(&self) -> u32 {
        if self.tasks >= 32 {
            u32::MAX
        } else {
            (1u32 << self.tasks) - 1
        }
    }

    /// Nobody can wake the sleepers any more: end the execution (as the recorder does).
    fn settle(&self, g: &mut Inner<M>) -> u32 {
        if g.sleeping != 0 && (g.finished | g.sleeping) == self.all() {
            g.aborted = true;
            let unpark = g.sleeping;
            g.sleeping = 0;
            return unpark;
        }
        0
    }
}

impl<M: Checked> Ghost for StatefulGhost<M> {
    const ENABLED: bool = true;
    type Proto = M::Event;

    fn emit(&self, pid: Pid, ev: Event<M::Event>) {
        let _off = arena::off();
        let mut g = self.lock();
        let g = &mut *g;
        if g.mode != Mode::FastForward {
            g.online.step(&self.cfg, pid, &ev, &mut g.found);
            if self.project != 0 {
                g.online.project(self.project);
            }
            if g.mode == Mode::Explore {
                if let Some(c) = M::coverage(&ev) {
                    g.coverage.push(c);
                }
                if g.por {
                    g.step_events.push((pid, ev.clone()));
                }
            }
        }
        if let Some(r) = &mut g.record {
            r.push((pid, ev));
        }
    }

    fn loop_head(&self, pid: Pid, summary: Summary) -> LoopVerdict {
        let _off = arena::off();
        let mut g = self.lock();
        if g.mode == Mode::FastForward {
            g.loops[pid] += 1;
            if g.loops[pid] > FAST_FORWARD_LOOPS {
                return LoopVerdict::Stop;
            }
            return LoopVerdict::Continue;
        }
        // The loop summary replaces the task's history: iterations that reach the same loop
        // state are the same state, and a loop that can run for ever closes a cycle.
        if self.summaries {
            stateful::reset_local_summary(summary);
        }
        LoopVerdict::Continue
    }

    fn loop_context(&self, _pid: Pid) -> u64 {
        stateful::local()
    }

    fn checkpoint(&self, _pid: Pid, summary: Summary) {
        let _off = arena::off();
        // As at a loop head: the summary replaces the history (never stops or yields).
        if self.summaries && self.lock().mode != Mode::FastForward {
            stateful::reset_local_summary(summary);
        }
    }

    fn live_locals(&self, _pid: Pid, summary: Summary) {
        let summary = match self.live {
            LiveLocals::Off => return,
            LiveLocals::On => summary,
            LiveLocals::ForgetContext => Summary { context: 0, ..summary },
            LiveLocals::Census(forget) => {
                let _off = arena::off();
                if self.summaries && self.lock().mode != Mode::FastForward {
                    if forget {
                        // The defect's summary, whose context no task took: as it is.
                        stateful::reset_shadow_summary(Summary { context: 0, ..summary }, true);
                    } else {
                        stateful::reset_shadow_summary(summary, false);
                    }
                }
                return;
            }
        };
        let _off = arena::off();
        // As at a checkpoint: the declared live state replaces the history.
        if self.summaries && self.lock().mode != Mode::FastForward {
            stateful::reset_local_summary(summary);
        }
    }

    fn untimed_sleep(&self, pid: Pid) -> SleepDecision {
        let _off = arena::off();
        if stateful::lkmm_token_set() {
            // Under lkmm the task may have read its own state before its waker's store reached
            // it; it was unparked, so its park returns at once and it reads again (the wake-up
            // is an acquire: this time it sees the store). It does not sleep.
            stateful::observe(u64::MAX);
            return SleepDecision::Park;
        }
        let mut g = self.lock();
        g.step_touch |= TOUCH_SLEEPERS;
        g.sleeping |= 1 << pid;
        let d = match self.settle(&mut g) {
            0 => SleepDecision::Park,
            unpark => SleepDecision::Abort { unpark: unpark & !(1 << pid) },
        };
        match d {
            SleepDecision::Park => stateful::observe(u64::MAX),
            SleepDecision::Abort { unpark } => stateful::observe_pids(unpark),
        }
        d
    }

    fn woken(&self, pid: Pid) {
        let _off = arena::off();
        let mut g = self.lock();
        g.sleeping &= !(1 << pid);
        g.step_touch |= TOUCH_WOKEN;
    }

    fn task_exit(&self, pid: Pid) -> u32 {
        let _off = arena::off();
        let mut g = self.lock();
        g.step_touch |= TOUCH_SLEEPERS;
        g.finished |= 1 << pid;
        if let Some(n) = g.record.as_ref().map(Vec::len) {
            g.exits.push((pid, n));
        }
        let unpark = self.settle(&mut g);
        stateful::observe_pids(unpark);
        unpark
    }

    fn aborted(&self) -> bool {
        let _off = arena::off();
        let mut g = self.lock();
        g.step_touch |= TOUCH_SLEEPERS;
        let a = g.aborted;
        drop(g);
        stateful::observe(a as u64);
        a
    }

    fn mutation_reached(&self, _pid: Pid) {
        let _off = arena::off();
        self.lock().mutation_reached = true;
    }
}
