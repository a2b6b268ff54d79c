//! One search on one thread: its own visited table and Tarjan's algorithm along the search.
//! Every strongly connected component of the state graph is checked for a fair cycle as it
//! closes ([`super::super::fair`]), which is a `progress` violation: an execution that can go on
//! for ever.

use mmmodel::model::Named;

use super::{chooser_of, Arrival, Ctx, Explorer, Frame};
use crate::engine::stateful::fair::{fair, maybe_fair_under};
use crate::engine::stateful::findings::{decisive, Target};
use crate::engine::stateful::ghost::StatefulGhost;
use crate::engine::stateful::persistent;
use crate::engine::stateful::space::{self, lowest, tasks_mask, SchedPoint, TaskId};
use crate::engine::stateful::store::FpSet;
use crate::engine::stateful::symmetry::Census;
use crate::engine::stateful::table::{FpTable, Recent};
use crate::engine::types::ReductionDefect;
use crate::monitor::Checked;

/// A state on Tarjan's stack (its component is not complete yet). The stack holds its states
/// in the order of their indices, so whether a state is on it is a binary search; the visited
/// table keeps every state's index for good (marking a closed component's states in the table
/// was a second cache miss a state).
struct TEntry {
    index: u32,
    fp: u64,
    enabled: u32,
    moves: u32,
}

/// The one-thread explorer.
#[derive(Default)]
pub(crate) struct Tarjan {
    pub visited: FpTable,
    /// The states visited lately, with their indices (which never change once given).
    recent: Recent,
    frames: Vec<Frame>,
    tstack: Vec<TEntry>,
    next_index: u32,
    /// [`crate::engine::Options::orbit_census`] (tests only).
    pub census: Option<Census>,
    /// [`crate::engine::Options::live_census`] (tests only): the stored states' fingerprints
    /// over the tasks' shadow hashes.
    pub live_census: Option<FpSet>,
}

impl Tarjan {
    /// An explorer with an empty table; with an orbit census if `census`.
    pub fn new(census: bool, live_census: bool) -> Self {
        Tarjan {
            census: census.then(Census::default),
            live_census: live_census.then(FpSet::default),
            ..Tarjan::default()
        }
    }

    /// The key the visited set stores a state under: its orbit's least fingerprint, or under
    /// a census the state's own (the census notes its images).
    fn key<M: Checked>(&mut self, p: &SchedPoint<'_>, g: &StatefulGhost<M>) -> u64 {
        if let Some(live) = &mut self.live_census {
            let fp = space::fingerprint(p, g);
            if !self.visited.contains_key(fp) {
                live.insert(space::shadow_fingerprint(p, g));
            }
            return fp;
        }
        let Some(census) = &mut self.census else { return space::fingerprint(p, g) };
        let fp = space::identity_fingerprint(p, g);
        if !self.visited.contains_key(fp) {
            census.note(fp, (0..p.symmetry_images()).map(|k| space::image_fingerprint(p, g, k)));
        }
        fp
    }

    /// Whether the state of index `index` is on Tarjan's stack (its component is open).
    fn on_stack(&self, index: u32) -> bool {
        self.tstack.binary_search_by_key(&index, |e| e.index).is_ok()
    }

    fn stacks_bytes(&self) -> u64 {
        (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + (self.tstack.capacity() * std::mem::size_of::<TEntry>()) as u64
    }

    /// Every transition of the top state has been explored: close it (Tarjan).
    fn pop_frame<M: Checked>(&mut self, cx: &mut Ctx<'_, M>) {
        let f = self.frames.pop().expect("a frame to pop");
        self.tstack[f.tpos].moves = f.moves;
        if f.low == f.index {
            // `f` is the root of a strongly connected component: the states above it on
            // Tarjan's stack.
            let members = &self.tstack[f.tpos..];
            let mut moves = 0u32;
            let mut disabled = 0u32;
            for m in members {
                moves |= m.moves;
                disabled |= !m.enabled & cx.tasks_mask;
            }
            // A fair cycle: the component has a transition inside it, and every task either
            // moves inside it or is disabled somewhere in it (weak fairness); under symmetry,
            // decided again without it if it may hold one.
            let checks_progress = cx.spec.invariants.contains(&M::PROGRESS);
            if !cx.canon.is_identity() {
                if moves != 0 && maybe_fair_under(&cx.canon, moves, disabled, cx.tasks_mask) && checks_progress {
                    cx.inconclusive = true;
                }
            } else if moves != 0 && fair(moves, disabled, cx.tasks_mask) && checks_progress {
                let inv = M::PROGRESS.name();
                cx.found.count_violations(&[inv]);
                if cx.found.target.is_none() && decisive(cx.spec, &[inv]).is_some() {
                    cx.found.target = Some(Target::Cycle {
                        members: members.iter().map(|m| m.fp).collect(),
                        must_move: cx.tasks_mask & !disabled,
                        path: self.path(cx),
                        class: None,
                    });
                }
            }
            self.tstack.truncate(f.tpos);
        }
        if let Some(parent) = self.frames.last_mut() {
            parent.low = parent.low.min(f.low);
            if f.low != f.index {
                // `f` stays on Tarjan's stack: it is in the parent's component.
                parent.moves |= 1 << parent.mover();
            }
        }
    }
}

impl<M: Checked> Explorer<M> for Tarjan {
    type Frame = Frame;
    fn frames(&self) -> &[Frame] {
        &self.frames
    }
    fn frames_mut(&mut self) -> &mut [Frame] {
        &mut self.frames
    }

    fn arrive(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) -> Arrival {
        let fp = self.key(p, g);
        // The table's slot is almost never in the cache: its load overlaps the accounting.
        self.visited.prefetch(fp);
        let enabled = p.enabled();
        let runnable = p.runnable();
        cx.tasks_mask = tasks_mask(p);
        self.account_arrival(cx, g);
        if cx.halted() {
            return Arrival::Known(lowest(enabled));
        }
        let mut known = None;
        let ignore_key = cx.defect == Some(ReductionDefect::RecentIgnoresKey);
        let cached = self.recent.get(fp, ignore_key);
        let found = match cached {
            Some(index) => {
                known = Some(index);
                Ok(())
            }
            None => self.visited.get_update(fp, |v| known = Some(*v)),
        };
        let slot = match found {
            Ok(()) => {
                let index = known.expect("a stored state has an index");
                if cached.is_none() {
                    self.recent.put(fp, index);
                }
                if self.on_stack(index) {
                    // A state on Tarjan's stack: this transition closes a cycle inside its
                    // component.
                    if let Some(parent) = self.frames.last_mut() {
                        parent.low = parent.low.min(index);
                        parent.moves |= 1 << parent.mover();
                    }
                }
                return Arrival::Known(lowest(enabled));
            }
            Err(slot) => slot,
        };
        // The cache of recent states counts against the memory budget too.
        let stacks = self.stacks_bytes() + self.recent.bytes();
        if let Err(why) = cx.budget.reserve(&mut self.visited, stacks) {
            cx.found.stopped_by = Some(why);
            return Arrival::Known(lowest(enabled));
        }
        let index = self.next_index;
        self.next_index += 1;
        cx.began = true;
        self.visited.put_at(slot, fp, index);
        self.recent.put(fp, index);
        let tpos = self.tstack.len();
        self.tstack.push(TEntry { index, fp, enabled: runnable, moves: 0 });
        // A task's start explored alone (`persistent.rs`), or every transition.
        let (first, todo) =
            persistent::first_and_todo(p, enabled, cx.persistent.local_starts, cx.defect, &mut cx.found.persistent);
        self.frames.push(Frame {
            index,
            low: index,
            todo,
            chosen: first as u8,
            by: chooser_of(p),
            moves: 0,
            tpos,
            fp,
            split: false,
        });
        cx.found.max_depth = cx.found.max_depth.max(self.frames.len());
        Arrival::Explore(first)
    }

    fn arrive_root(&mut self, _: &mut Ctx<'_, M>, _: &SchedPoint<'_>, _: &StatefulGhost<M>, _: u32) -> TaskId {
        unreachable!("a one-thread search has no jobs")
    }

    fn backtrack(&mut self, cx: &mut Ctx<'_, M>) -> bool {
        loop {
            let Some(top) = self.frames.last_mut() else { return false };
            if top.todo != 0 {
                let t = top.todo.trailing_zeros();
                top.todo &= !(1 << t);
                top.chosen = t as u8;
                return true;
            }
            self.pop_frame(cx);
            if cx.found.target.is_some() || cx.inconclusive {
                return false;
            }
        }
    }

    fn clear(&mut self) {
        self.frames.clear();
    }
    fn states(&self) -> u64 {
        self.visited.len() as u64
    }
    fn memory_bytes(&self) -> u64 {
        self.visited.bytes() + self.recent.bytes() + self.stacks_bytes()
    }
}
