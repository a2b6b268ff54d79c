//! One of several workers (`--workers N`, or a cluster's): the visited table is shared, there is
//! no Tarjan; when a cycle invariant is checked the worker records its part of the state graph
//! instead (`graph.rs`), for the fair-cycle pass once the search is complete. In a cluster a
//! state another worker owns is not stored here: it goes to the outbox with the schedule that
//! leads to it, for its owner (cluster.rs).

use std::sync::Arc;

use mmmodel::kernel::sched::explorer_task;

use super::{chooser_of, job_root, Arrival, Ctx, Explorer, Frame};
use crate::engine::stateful::closed::Closed;
use crate::engine::stateful::cluster;
use crate::engine::stateful::ghost::StatefulGhost;
use crate::engine::stateful::graph::{Edge, Graph};
use crate::engine::stateful::links::{Link, Marks, Numbering};
use crate::engine::stateful::persistent;
use crate::engine::stateful::space::{self, lowest, tasks_mask, SchedPoint, TaskId};
use crate::engine::stateful::store::Sharded;
use crate::engine::stateful::table::Recent;
use crate::engine::types::ReductionDefect;
use crate::monitor::Checked;

/// What became of a state a worker arrived at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// The search must stop, or has no room: the state was not looked up.
    Stopped,
    /// Another worker owns it: sent to it.
    Sent,
    /// Stored before.
    Known,
    /// Stored now, by this worker.
    New,
}

/// A worker's explorer.
pub(crate) struct Shared {
    pub table: Arc<Sharded>,
    frames: Vec<Frame>,
    /// Its part of the state graph, when a cycle invariant is checked.
    pub graph: Option<Graph>,
    /// In a cluster: this worker's index and the number of workers over every process, and
    /// the states it found that other workers own, with the schedules that lead to them.
    pub owner: Option<(usize, usize)>,
    pub outbox: Vec<(u64, Vec<u8>)>,
    /// With a numbered graph: the transitions taken out of each state on the path so far.
    rows: Vec<Vec<Link>>,
    /// The bytes of its graph last counted in the shared table's budget.
    graph_bytes: u64,
    /// States this worker found stored lately, and their numbers (direct-mapped by
    /// fingerprint; a number never changes once given): a hit needs no lock of a shard,
    /// whose line the other workers write at every lookup. Empty without a numbered graph.
    recent: Recent,
    /// With a numbered graph: the states every worker closed on the fly (`closed.rs`), and
    /// how many this worker closed.
    closed: Option<Arc<Closed>>,
    pub closed_here: u64,
    /// `ReductionDefect::WorkersCloseSkipsEarlierStates`, `WorkersCloseSplitStates`.
    close_skips_earlier: bool,
    close_split: bool,
}

impl Shared {
    pub fn new(
        table: Arc<Sharded>,
        graph: Option<Graph>,
        owner: Option<(usize, usize)>,
        closed: Option<Arc<Closed>>,
        defect: Option<ReductionDefect>,
    ) -> Self {
        let closed = closed.filter(|_| owner.is_none() && graph.as_ref().is_some_and(|g| g.numbering.is_some()));
        Shared {
            table,
            frames: Vec::new(),
            graph,
            owner,
            outbox: Vec::new(),
            rows: Vec::new(),
            graph_bytes: 0,
            recent: Recent::default(),
            closed,
            closed_here: 0,
            close_skips_earlier: defect == Some(ReductionDefect::WorkersCloseSkipsEarlierStates),
            close_split: defect == Some(ReductionDefect::WorkersCloseSplitStates),
        }
    }

    /// A state goes on the path.
    fn push(&mut self, frame: Frame) {
        self.frames.push(frame);
        if self.rows.len() < self.frames.len() {
            self.rows.push(Vec::new());
        }
    }

    /// The state on top of the path is left: its transitions become its row, but for those
    /// into states closed by now; with none left, and every transition out of it taken here,
    /// it is closed instead (`closed.rs`).
    fn pop(&mut self) {
        let Some(top) = self.frames.pop() else { return };
        let row = &mut self.rows[self.frames.len()];
        if let (Some(closed), Some(numbering)) = (&self.closed, self.graph.as_ref().and_then(|g| g.numbering)) {
            let earlier = |to: u32| {
                let (w, i) = Numbering::split(numbering.bits, to);
                w == numbering.worker as usize && i <= Numbering::split(numbering.bits, top.index).1
            };
            row.retain(|l| !(closed.get(l.to) || (self.close_skips_earlier && earlier(l.to))));
            if row.is_empty() && (!top.split || self.close_split) && top.todo == 0 {
                // The transition into it, last in its parent's row, goes too.
                if let Some(parent) = self.frames.len().checked_sub(1).map(|d| &mut self.rows[d]) {
                    if parent.last().is_some_and(|l| l.to == top.index) {
                        parent.pop();
                    }
                }
                // A chunk of bits allocated counts against the memory budget, as the graph does
                // (written only then: the counter shares its line with what every lookup reads).
                let grew = closed.close(top.index);
                if grew > 0 {
                    self.table.graph_bytes.fetch_add(grew, std::sync::atomic::Ordering::Relaxed);
                }
                self.closed_here += 1;
                return;
            }
        }
        if let Some(graph) = &mut self.graph {
            graph.row(top.index, row.drain(..));
        }
        row.clear();
    }

    /// Where the state `fp` goes, and whether this worker explores it; with a numbered graph,
    /// also the state's number.
    fn place<M: Checked>(&mut self, cx: &mut Ctx<'_, M>, fp: u64) -> (Fate, u32) {
        if cx.found.halted() {
            return (Fate::Stopped, 0);
        }
        if let Some(g) = &self.graph {
            // The graph counts against the memory budget as it grows (its vectors grow by
            // doubling, so this changes rarely).
            let now = g.bytes();
            if now != self.graph_bytes {
                self.table
                    .graph_bytes
                    .fetch_add(now.wrapping_sub(self.graph_bytes), std::sync::atomic::Ordering::Relaxed);
                self.graph_bytes = now;
            }
        }
        if let Err(why) = cx.budget.reserve_shared(&self.table) {
            cx.found.stopped_by = Some(why);
            return (Fate::Stopped, 0);
        }
        if let Some((me, peers)) = self.owner {
            if cluster::owner(fp, peers) != me {
                // Another worker's state: its owner decides whether it is new.
                self.outbox.push((fp, self.path(cx)));
                return (Fate::Sent, 0);
            }
        }
        let numbering = self.graph.as_ref().and_then(|g| Some((g.numbering?, g.marks.len())));
        let Some((numbering, stored)) = numbering else {
            return (if self.table.insert(fp, 0) { Fate::New } else { Fate::Known }, 0);
        };
        let ignore_key = cx.defect == Some(ReductionDefect::WorkersRecentIgnoresKey);
        if let Some(known) = self.recent.get(fp, ignore_key) {
            return (Fate::Known, known);
        }
        let Some(number) = numbering.number(stored) else {
            cx.found.stopped_by = Some("graph (more states for one worker than its node numbers hold)");
            return (Fate::Stopped, 0);
        };
        match self.table.insert_or_get(fp, number) {
            None => {
                self.recent.put(fp, number);
                (Fate::New, number)
            }
            Some(known) => {
                self.recent.put(fp, known);
                (Fate::Known, known)
            }
        }
    }
}

impl<M: Checked> Explorer<M> for Shared {
    type Frame = Frame;
    fn frames(&self) -> &[Frame] {
        &self.frames
    }
    fn frames_mut(&mut self) -> &mut [Frame] {
        &mut self.frames
    }

    fn arrive(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>) -> Arrival {
        let fp = space::fingerprint(p, g);
        // The shared table's line is almost never in the cache: its load overlaps the
        // accounting.
        self.table.prefetch(fp);
        let enabled = p.enabled();
        cx.tasks_mask = tasks_mask(p);
        if std::mem::take(&mut cx.job.skip_arrival) {
            // A state another worker sent: it counted the transition into it.
            g.drain_found(|_, _| ());
            g.discard_step();
            cx.began = true;
        } else {
            self.account_arrival(cx, g);
        }
        let initial = cx.job.prefix.is_empty() && self.frames.is_empty();
        let (fate, number) = self.place(cx, fp);
        if fate == Fate::Stopped {
            // A transition not followed: the state it leaves is not closed.
            if let Some(top) = self.frames.last_mut() {
                top.split = true;
            }
        }
        if let Some(graph) = &mut self.graph {
            let top = self.frames.last();
            if top.is_none() && initial {
                graph.initial = Some(fp);
            }
            let keep = match cx.defect {
                Some(ReductionDefect::WorkersRecordTreeEdgesOnly) => fate == Fate::New,
                Some(ReductionDefect::ClusterRecordsOwnEdgesOnly) => fate != Fate::Sent,
                _ => fate != Fate::Stopped,
            };
            match (top, keep) {
                // Into a state closed already: not recorded (`closed.rs`).
                (Some(_), true) if fate == Fate::Known && self.closed.as_ref().is_some_and(|c| c.get(number)) => {}
                (Some(top), true) if graph.numbering.is_some() => {
                    // Out of the state on top of the path: recorded as its row when it is
                    // left.
                    let link = Link { to: number, task: top.mover(), choice: top.chosen, stale: p.stale() };
                    self.rows[self.frames.len() - 1].push(link);
                }
                (Some(top), true) => graph.edges.push(Edge {
                    from: top.fp,
                    to: fp,
                    task: top.mover(),
                    choice: top.chosen,
                    stale: p.stale(),
                }),
                _ => {}
            }
        }
        if fate != Fate::New {
            return Arrival::Known(lowest(enabled));
        }
        cx.began = true;
        cx.found.stored += 1;
        if let Some(graph) = &mut self.graph {
            graph.state(fp, Marks { enabled: p.runnable(), tasks: cx.tasks_mask });
            if !M::LASSO.is_empty() {
                let mut keys = Vec::new();
                g.cycle_keys(&mut keys);
                // The monitors name tasks by pid, the runtime by its own task numbers.
                let n = M::roles(&cx.spec.cfg).len();
                let at = if graph.numbering.is_some() { u64::from(number) } else { fp };
                graph.keys.extend(keys.into_iter().map(|mut k| {
                    k.must_move = (0..n.min(32))
                        .filter(|p| k.must_move & (1 << p) != 0)
                        .fold(0, |m, p| m | 1 << explorer_task(n, p));
                    (at, k)
                }));
            }
        }
        // A task's start explored alone (`persistent.rs`), or every transition.
        let (first, todo) =
            persistent::first_and_todo(p, enabled, cx.persistent.local_starts, cx.defect, &mut cx.found.persistent);
        let mut frame = Frame::plain(todo, first as u8, chooser_of(p), fp);
        frame.index = number;
        self.push(frame);
        cx.found.max_depth = cx.found.max_depth.max(cx.job.prefix.len() + self.frames.len());
        Arrival::Explore(first)
    }

    fn arrive_root(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> TaskId {
        let todo = job_root(cx, p, g, todo);
        let first = lowest(todo);
        let fp = space::fingerprint(p, g);
        let mut frame = Frame::plain(todo & !(1 << first), first as u8, chooser_of(p), fp);
        // Another worker stored the job's state, and numbered it.
        frame.index = self.table.get(fp).unwrap_or(0);
        // Its giver took the other transitions out of it.
        frame.split = true;
        self.push(frame);
        first
    }

    fn backtrack(&mut self, _: &mut Ctx<'_, M>) -> bool {
        loop {
            let Some(top) = self.frames.last_mut() else { return false };
            if top.todo != 0 {
                let t = top.todo.trailing_zeros();
                top.todo &= !(1 << t);
                top.chosen = t as u8;
                return true;
            }
            self.pop();
        }
    }

    fn take_todo(&mut self, i: usize) -> u32 {
        // Given away: the state is not closed on the fly.
        self.frames[i].split = true;
        std::mem::take(&mut self.frames[i].todo)
    }

    fn clear(&mut self) {
        while !self.frames.is_empty() {
            self.pop();
        }
    }
    fn states(&self) -> u64 {
        self.table.len()
    }
    fn memory_bytes(&self) -> u64 {
        self.table.bytes()
            + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + self.graph.as_ref().map_or(0, Graph::bytes)
            + self.rows.iter().map(|r| r.capacity() * std::mem::size_of::<Link>()).sum::<usize>() as u64
    }
}
