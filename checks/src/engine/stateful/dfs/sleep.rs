//! Partial-order reduction: sleep sets with state caching (Godefroid, "Partial-Order Methods
//! for the Verification of Concurrent Systems", 1996, chapter 5). A state is explored with the
//! transitions not in its sleep set; the visited table keeps the sleep set it was explored
//! with (as a mask in the canonical state's task names), and a later visit with a smaller
//! sleep set explores what the first one left asleep. Every reachable state is still visited;
//! transitions are saved. No Tarjan: a search with sleep sets checks no `progress`. The
//! independence relation is `por.rs`'s.

use std::rc::Rc;
use std::sync::Arc;

use super::{job_root, Arrival, Ctx, Explorer, PathFrame};
use crate::engine::stateful::ghost::StatefulGhost;
use crate::engine::stateful::persistent;
use crate::engine::stateful::por::{independent, inert_step, Step, TOUCH_EXIT, TOUCH_GLOBAL};
use crate::engine::stateful::space::{self, lowest, SchedPoint, Shape, TaskId};
use crate::engine::stateful::store::{revisit, Budget, Sharded};
use crate::engine::stateful::table::FpTable;
use crate::engine::types::ReductionDefect;
use crate::monitor::Checked;

/// A state on the partial-order reduced search's path.
pub(crate) struct PFrame<M: Checked> {
    /// Tasks whose transition from here is still to explore.
    todo: u32,
    chosen: u8,
    /// A yield is being tried here as a persistent set of one transition (`chosen`'s): the
    /// other transitions to explore, kept out of `todo` until that step has shown itself
    /// invisible and local and reached a state nobody had stored (the cycle proviso), then
    /// dropped; put back into `todo` otherwise ([`Sleep::backtrack`]).
    rest: u32,
    /// The state's sleep set: transitions an equivalent path has already taken.
    sleep: Vec<Rc<Step<M>>>,
    /// Transitions explored from here so far (asleep in the states their successors reach).
    done: Vec<Rc<Step<M>>>,
    /// The online monitors at this state, and the runtime's shape.
    online: M::Online,
    shape: Shape,
}

impl<M: Checked> PathFrame for PFrame<M> {
    fn chosen(&self) -> u8 {
        self.chosen
    }
    fn todo(&self) -> u32 {
        self.todo
    }
    fn todo_mut(&mut self) -> &mut u32 {
        &mut self.todo
    }
    fn returns(&self) -> bool {
        self.todo | self.rest != 0
    }
}

/// What a visit of a state with a sleep set found in the table.
enum Visit {
    /// The state is new: stored with this visit's sleep set.
    New,
    /// Explored before: the transitions earlier visits left asleep and this one does not.
    Seen(u32),
    /// No room for it.
    Full(&'static str),
}

/// Where the sleep sets are kept: one search's table, or the workers' shared one.
pub(crate) enum SleepStore {
    Own(FpTable),
    Shared(Arc<Sharded>),
}

impl SleepStore {
    /// Bring `fp`'s line into the cache while the sleep set is computed.
    #[inline]
    fn prefetch(&self, fp: u64) {
        match self {
            SleepStore::Own(table) => table.prefetch(fp),
            SleepStore::Shared(sh) => sh.prefetch(fp),
        }
    }

    fn visit(&mut self, budget: &mut Budget, stacks: u64, fp: u64, asleep: u32) -> Visit {
        match self {
            SleepStore::Own(table) => {
                let mut left = 0;
                match table.get_update(fp, |stored| left = revisit(stored, asleep)) {
                    Ok(()) => Visit::Seen(left),
                    Err(slot) => match budget.reserve(table, stacks) {
                        Err(why) => Visit::Full(why),
                        Ok(()) => {
                            table.put_at(slot, fp, asleep);
                            Visit::New
                        }
                    },
                }
            }
            SleepStore::Shared(sh) => match budget.reserve_shared(sh) {
                Err(why) => Visit::Full(why),
                Ok(()) => sh.visit_sleeping(fp, asleep).map_or(Visit::New, Visit::Seen),
            },
        }
    }
}

/// The sleep-set explorer.
pub(crate) struct Sleep<M: Checked> {
    pub store: SleepStore,
    /// The path is `frames[..depth]`; the frames past it are popped ones, kept in place for
    /// their vectors' room (a frame is a few hundred bytes: moving it in and out of the path
    /// was 4 to 5 % of the safety proof's time, `perf`).
    frames: Vec<PFrame<M>>,
    depth: usize,
    /// Steps no frame holds any more, kept for their allocation and their events' room.
    pool: Vec<Rc<Step<M>>>,
}

/// At most this many steps are kept for reuse.
const POOL: usize = 1 << 12;

impl<M: Checked> Sleep<M> {
    pub fn new(store: SleepStore) -> Self {
        Sleep { store, frames: Vec::new(), depth: 0, pool: Vec::new() }
    }

    /// Makes sure the slot past the path holds a frame (a popped one is reused in place: its
    /// vectors keep their room); its sets are empty.
    fn slot(&mut self) {
        if self.frames.len() == self.depth {
            self.frames.push(PFrame {
                todo: 0,
                chosen: 0,
                rest: 0,
                sleep: Vec::new(),
                done: Vec::new(),
                online: M::Online::default(),
                shape: Shape::default(),
            });
        }
    }

    /// The frame at `at`, no longer on the path (or never pushed): its sleeping steps let
    /// go, its explored ones that nothing else holds kept for reuse (a frame's children are
    /// retired before it, so by then the only holders of its steps are gone).
    fn retire(frame: &mut PFrame<M>, pool: &mut Vec<Rc<Step<M>>>) {
        frame.sleep.clear();
        for step in frame.done.drain(..) {
            if Rc::strong_count(&step) == 1 && pool.len() < POOL {
                pool.push(step);
            }
        }
    }

    /// The step just taken: task `task` with pending op `op`, its events and ghost
    /// bookkeeping taken from the ghost (in a pooled step's allocation when there is one).
    fn new_step(
        pool: &mut Vec<Rc<Step<M>>>,
        g: &StatefulGhost<M>,
        (task, op): (u8, Option<space::Op>),
        defect: Option<ReductionDefect>,
    ) -> (Rc<Step<M>>, u8) {
        let mut rc =
            pool.pop().unwrap_or_else(|| Rc::new(Step { task, op, events: Vec::new(), inert: false, touch: 0 }));
        let step = Rc::get_mut(&mut rc).expect("a pooled step is held by the pool alone");
        let touch = g.take_step_into(&mut step.events);
        step.inert = inert_step::<M>(&step.events, defect);
        step.task = task;
        step.op = op;
        (rc, touch)
    }

    /// What a frame keeps of its state for the independence checks: the online monitors and
    /// the runtime's shape. (The op of the step out of it is the runtime's at the next state,
    /// [`SchedPoint::last_op`]: copying every task's pending op at every state cost about 3 %
    /// of the safety proof, docs/performance.md.)
    fn snapshot(frame: &mut PFrame<M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) {
        g.online_into(&mut frame.online);
        frame.shape = Shape::of(p);
    }

    fn stacks_bytes(&self) -> u64 {
        (self.frames.capacity() * std::mem::size_of::<PFrame<M>>()) as u64
    }
}

/// A persistent set of one transition at a state, or none.
enum Persistent {
    /// The state is explored with every transition its sleep set leaves.
    None,
    /// The start of a task whose start is local ([`persistent::start_of`]): explored alone,
    /// even if asleep (then nothing is explored here: the persistent set less the sleep set).
    Start(TaskId),
    /// A yield: taken first, and the others held back until the step has shown itself local
    /// and reached a state nobody had stored (the cycle proviso).
    Yield(TaskId),
}

/// The persistent set of one transition at the state `p` (`enabled` there, `todo` left to
/// explore by this visit).
fn persistent<M: Checked>(cx: &Ctx<'_, M>, p: &SchedPoint<'_>, enabled: u32, todo: u32) -> Persistent {
    if let Some(t) = persistent::start_of(p, enabled, cx.persistent.local_starts, cx.defect) {
        return Persistent::Start(t);
    }
    if !cx.persistent.yields {
        return Persistent::None;
    }
    let mut rest = todo;
    while rest != 0 {
        let t = rest.trailing_zeros() as TaskId;
        rest &= rest - 1;
        if p.pending(t) == Some(space::Op::Yield) {
            return Persistent::Yield(t);
        }
    }
    Persistent::None
}

impl<M: Checked> Explorer<M> for Sleep<M> {
    type Frame = PFrame<M>;
    fn frames(&self) -> &[PFrame<M>] {
        &self.frames[..self.depth]
    }
    fn frames_mut(&mut self) -> &mut [PFrame<M>] {
        &mut self.frames[..self.depth]
    }

    fn arrive(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) -> Arrival {
        let (fp, image) = space::fingerprint_image(p, g);
        self.store.prefetch(fp);
        let enabled = p.enabled();
        let shape = Shape::of(p);
        self.account_arrival(cx, g);
        // The sleep set of this state: the parent's sleeping and explored transitions that are
        // independent of the one just taken.
        self.slot();
        let stacks = self.stacks_bytes();
        let depth = self.depth;
        let (path, past) = self.frames.split_at_mut(depth);
        let frame = &mut past[0];
        // The transition just taken: whether it was a yield tried as a persistent set of one
        // transition, and local (invisible, and touching nothing another task reads or writes).
        let (mut tentative, mut local) = (false, false);
        if let Some(top) = path.last_mut() {
            debug_assert_eq!(p.current(), top.chosen as TaskId, "the step into this state is the top's choice");
            let (t, before, op) = (top.chosen, top.shape, Some(p.last_op()));
            let (mut step, mut touch) = Self::new_step(&mut self.pool, g, (t, op), cx.defect);
            if (before.tasks, before.objects, before.locks) != (shape.tasks, shape.objects, shape.locks) {
                touch |= TOUCH_GLOBAL;
            }
            if shape.finished & !before.finished != 0 {
                touch |= TOUCH_EXIT;
            }
            Rc::get_mut(&mut step).expect("a new step").touch = touch;
            tentative = top.rest != 0;
            local = touch == 0 && step.events.is_empty();
            for a in top.sleep.iter().chain(&top.done) {
                if independent((a, &step), &top.online, g, (cx.defect, cx.check_inert), &mut cx.found) {
                    frame.sleep.push(Rc::clone(a));
                }
            }
            top.done.push(step);
        } else {
            // The initial state: what the body did before it is no step of the search.
            g.discard_step();
        }
        let frame = &mut self.frames[depth];
        if cx.found.halted() {
            Self::retire(frame, &mut self.pool);
            return Arrival::Known(lowest(enabled));
        }
        let asleep = frame.sleep.iter().fold(0u32, |m, a| m | 1 << a.task) & enabled;
        let canonical = cx.canon.to_canonical(asleep, image);
        let (todo, new) = match self.store.visit(&mut cx.budget, stacks, fp, canonical) {
            Visit::Full(why) => {
                cx.found.stopped_by = Some(why);
                (0, false)
            }
            Visit::New => {
                cx.began = true;
                cx.found.stored += 1;
                cx.found.slept += asleep.count_ones() as u64;
                (enabled & !asleep, true)
            }
            Visit::Seen(left) => {
                cx.found.revisits += u64::from(left != 0);
                (cx.canon.canonical_to_own(left, image) & enabled, false)
            }
        };
        // The cycle proviso for a yield: it reached a state nobody had stored, so every cycle
        // of the reduced graph has a state explored in full (each transition out of a reduced
        // state goes to a state stored after it).
        let proviso = new || cx.defect == Some(ReductionDefect::PersistentWithoutProviso);
        if tentative && local && proviso {
            // The persistent set's one transition was enough: the others are not explored.
            self.frames[depth - 1].rest = 0;
            cx.found.persistent += 1;
        }
        let persistent = persistent(cx, p, enabled, todo);
        let frame = &mut self.frames[depth];
        let (first, todo, rest) = match persistent {
            Persistent::Start(t) => {
                cx.found.persistent += u64::from(new);
                if todo & 1 << t == 0 {
                    // The persistent set is asleep (or explored at an earlier visit).
                    Self::retire(frame, &mut self.pool);
                    return Arrival::Known(lowest(enabled));
                }
                (t, 0, 0)
            }
            Persistent::Yield(t) => (t, 0, todo & !(1 << t)),
            Persistent::None if todo == 0 => {
                Self::retire(frame, &mut self.pool);
                return Arrival::Known(lowest(enabled));
            }
            Persistent::None => {
                let first = lowest(todo);
                (first, todo & !(1 << first), 0)
            }
        };
        frame.chosen = first as u8;
        frame.todo = todo;
        frame.rest = rest;
        Self::snapshot(frame, p, g);
        self.depth += 1;
        cx.found.max_depth = cx.found.max_depth.max(self.depth);
        Arrival::Explore(first)
    }

    /// A job's state, with an empty sleep set (which only explores more).
    fn arrive_root(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> TaskId {
        let todo = job_root(cx, p, g, todo);
        let first = lowest(todo);
        self.slot();
        let frame = &mut self.frames[self.depth];
        frame.rest = 0;
        frame.todo = todo & !(1 << first);
        frame.chosen = first as u8;
        Self::snapshot(frame, p, g);
        self.depth += 1;
        first
    }

    fn backtrack(&mut self, _: &mut Ctx<'_, M>) -> bool {
        while self.depth > 0 {
            let top = &mut self.frames[self.depth - 1];
            // The one transition of a persistent set did not show itself enough: the others.
            top.todo |= std::mem::take(&mut top.rest);
            if top.todo != 0 {
                let t = top.todo.trailing_zeros();
                top.todo &= !(1 << t);
                top.chosen = t as u8;
                return true;
            }
            Self::retire(top, &mut self.pool);
            self.depth -= 1;
        }
        false
    }

    fn clear(&mut self) {
        while self.depth > 0 {
            self.depth -= 1;
            Self::retire(&mut self.frames[self.depth], &mut self.pool);
        }
    }
    fn states(&self) -> u64 {
        match &self.store {
            SleepStore::Own(t) => t.len() as u64,
            SleepStore::Shared(sh) => sh.len(),
        }
    }
    fn memory_bytes(&self) -> u64 {
        let table = match &self.store {
            SleepStore::Own(t) => t.bytes(),
            SleepStore::Shared(sh) => sh.bytes(),
        };
        table + self.stacks_bytes()
    }
}
