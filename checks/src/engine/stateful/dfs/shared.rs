//! One of several workers (`--workers N`, or a cluster's): the visited table is shared, there is
//! no Tarjan; when a cycle invariant is checked the worker records its part of the state graph
//! instead (`graph.rs`), for the fair-cycle pass once the search is complete. In a cluster a
//! state another worker owns is not stored here: it goes to the outbox with the schedule that
//! leads to it, for its owner (cluster.rs).

use std::sync::Arc;

use mmmodel::kernel::sched::explorer_task;

use super::{chooser_of, job_root, Arrival, Ctx, Explorer, Frame};
use crate::engine::stateful::cluster;
use crate::engine::stateful::ghost::StatefulGhost;
use crate::engine::stateful::graph::{Edge, Graph, Node};
use crate::engine::stateful::space::{self, lowest, tasks_mask, SchedPoint, TaskId};
use crate::engine::stateful::store::Sharded;
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
}

impl Shared {
    pub fn new(table: Arc<Sharded>, graph: Option<Graph>, owner: Option<(usize, usize)>) -> Self {
        Shared { table, frames: Vec::new(), graph, owner, outbox: Vec::new() }
    }

    /// Where the state `fp` goes, and whether this worker explores it.
    fn place<M: Checked>(&mut self, cx: &mut Ctx<'_, M>, fp: u64) -> Fate {
        if cx.found.halted() {
            return Fate::Stopped;
        }
        if let Err(why) = cx.budget.reserve_shared(&self.table) {
            cx.found.stopped_by = Some(why);
            return Fate::Stopped;
        }
        if let Some((me, peers)) = self.owner {
            if cluster::owner(fp, peers) != me {
                // Another worker's state: its owner decides whether it is new.
                self.outbox.push((fp, self.path(cx)));
                return Fate::Sent;
            }
        }
        if self.table.insert(fp, 0) {
            Fate::New
        } else {
            Fate::Known
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
        let enabled = p.enabled();
        cx.tasks_mask = tasks_mask(p);
        if std::mem::take(&mut cx.job.skip_arrival) {
            // A state another worker sent: it counted the transition into it.
            let _ = g.take();
            let _ = g.take_step();
            cx.began = true;
        } else {
            self.account_arrival(cx, g);
        }
        let initial = cx.job.prefix.is_empty() && self.frames.is_empty();
        let edge = self.frames.last().map(|top| Edge {
            from: top.fp,
            to: fp,
            task: top.mover(),
            choice: top.chosen,
            stale: p.stale(),
        });
        let fate = self.place(cx, fp);
        if let Some(graph) = &mut self.graph {
            if edge.is_none() && initial {
                graph.initial = Some(fp);
            }
            let keep = match cx.defect {
                Some(ReductionDefect::WorkersRecordTreeEdgesOnly) => fate == Fate::New,
                Some(ReductionDefect::ClusterRecordsOwnEdgesOnly) => fate != Fate::Sent,
                _ => true,
            };
            if let (Some(e), true) = (edge, keep) {
                graph.edges.push(e);
            }
        }
        if fate != Fate::New {
            return Arrival::Known(lowest(enabled));
        }
        cx.began = true;
        cx.found.stored += 1;
        if let Some(graph) = &mut self.graph {
            graph.nodes.push(Node { fp, enabled: p.runnable(), tasks: cx.tasks_mask });
            if !M::LASSO.is_empty() {
                let mut keys = Vec::new();
                g.cycle_keys(&mut keys);
                // The monitors name tasks by pid, the runtime by its own task numbers.
                let n = M::roles(&cx.spec.cfg).len();
                graph.keys.extend(keys.into_iter().map(|mut k| {
                    k.must_move = (0..n.min(32))
                        .filter(|p| k.must_move & (1 << p) != 0)
                        .fold(0, |m, p| m | 1 << explorer_task(n, p));
                    (fp, k)
                }));
            }
        }
        let first = lowest(enabled);
        self.frames.push(Frame::plain(enabled & !(1 << first), first as u8, chooser_of(p), fp));
        cx.found.max_depth = cx.found.max_depth.max(cx.job.prefix.len() + self.frames.len());
        Arrival::Explore(first)
    }

    fn arrive_root(&mut self, cx: &mut Ctx<'_, M>, p: &SchedPoint<'_>, g: &StatefulGhost<M>, todo: u32) -> TaskId {
        let todo = job_root(cx, p, g, todo);
        let first = lowest(todo);
        let fp = space::fingerprint(p, g);
        self.frames.push(Frame::plain(todo & !(1 << first), first as u8, chooser_of(p), fp));
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
            self.frames.pop();
        }
    }

    fn clear(&mut self) {
        self.frames.clear();
    }
    fn states(&self) -> u64 {
        self.table.len()
    }
    fn memory_bytes(&self) -> u64 {
        self.table.bytes() + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
    }
}
