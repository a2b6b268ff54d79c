//! The symmetry group's tables: the elements as the checker gives them ([`SymImage`]) and in
//! the runtime's terms, the objects' families and value kinds, and each element's map of the
//! objects. What the runtime does with them (the images' local hashes and fingerprints) is in
//! `symmetry.rs`, above the runtime state; these tables are below it (the state holds them).

use super::types::{Op, TaskId, MAX_TASKS, NO_TASK};
use crate::kernel::wait::WaitList;

/// One element of a symmetry group, as the checker gives it ([`StackPool::set_symmetry`]): where
/// it maps each node, each pid and each task of the runtime (ids past a map's end map to
/// themselves).
///
/// [`StackPool::set_symmetry`]: crate::platform::stateful::StackPool::set_symmetry
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymImage {
    pub node: Vec<u8>,
    pub pid: Vec<u8>,
    pub task: Vec<u8>,
}

/// Which ids an object belongs to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Family {
    #[default]
    Global,
    Node(u8),
    Pid(u8),
}

/// What an object's values are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Kind {
    #[default]
    Plain,
    NodeValue,
    PidMask,
    PidList,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct ObjMeta {
    pub(super) family: Family,
    pub(super) kind: Kind,
}

/// An element of the group in the runtime's terms.
pub(super) struct Image {
    pub(super) node: [u8; 32],
    pub(super) pid: [u8; 32],
    pub(super) task: [u8; MAX_TASKS],
    /// The task whose image is the task at each index.
    pub(super) task_inv: [u8; MAX_TASKS],
    /// A seeded defect (tests only): a wait queue's list is renamed into pid order.
    pub(super) sort_lists: bool,
    /// Each object's image (valid for the first `Sym::mapped` objects).
    pub(super) obj: Vec<u32>,
}

/// The symmetry state of the runtime: the group (kept from one execution to the next) and, for
/// the running execution, the objects' tags, the images' object maps, each task's local hash
/// under each image, and the contexts [`local`] handed out.
pub(crate) struct Sym {
    pub(super) images: Vec<Image>,
    pub(super) family: Family,
    pub(super) kind: Kind,
    pub(super) meta: Vec<ObjMeta>,
    pub(super) family_locks: bool,
    pub(super) mapped: usize,
    /// The objects some element of the group moves to another object or whose values it
    /// renames (valid with `mapped`): the others hash alike in every image.
    pub(super) moving: Vec<u32>,
    /// `locals[t * images.len() + k]`: task `t`'s local hash under image `k`.
    pub(super) locals: Vec<u64>,
    /// Saved contexts, `2 + images.len()` words each: task, context, its image under each element.
    pub(super) ctx: Vec<u64>,
    /// A seeded defect (tests only): node objects are left where they are by every image.
    pub(super) forget_node_objects: bool,
    /// A seeded defect (tests only): every image puts a wait queue's list in pid order.
    pub(super) sort_lists: bool,
    /// The task that has joined every other, which has finished ([`join_all`]): it runs to
    /// its end with no scheduling point (`NO_TASK`: none).
    pub(super) solo: usize,
    /// A seeded defect (tests only): [`join_all`] joins one task after another, as without
    /// symmetry.
    pub(super) join_in_order: bool,
    /// The orbits of the tasks under the group (each of two tasks or more, in increasing
    /// order), for the sorted canonical form (`symmetry.rs`, [`SchedPoint::canonical_candidates`]).
    ///
    /// [`SchedPoint::canonical_candidates`]: super::state::SchedPoint::canonical_candidates
    pub(super) task_orbits: Vec<Vec<u8>>,
    /// The canonical form is the least fingerprint over every element of the group, not only
    /// over the elements that sort the orbits (the comparison the sorted form is tested by).
    pub(super) all_images: bool,
    /// A seeded defect in a task's signature (tests only).
    pub(super) signature_defect: Option<SignatureDefect>,
}

/// A seeded defect in the sorted canonical form's task signature: one half of it taken as the
/// task has it, which a renaming changes, instead of its least over the group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SignatureDefect {
    /// The task's own local hash.
    OwnLocal,
    /// The pending operation's own code (an unpark of a renamed task, an access to a renamed
    /// node's object).
    RawOp,
}

/// What a snapshot keeps of an execution's symmetry state ([`Sym::save_into`]): each task's
/// local hash under each image, the contexts handed out, and the task that runs alone.
#[derive(Default)]
pub(super) struct SymSave {
    locals: Vec<u64>,
    ctx: Vec<u64>,
    solo: usize,
}

impl SymSave {
    /// The bytes its vectors hold.
    pub(super) fn bytes(&self) -> usize {
        (self.locals.len() + self.ctx.len()) * 8
    }
}

impl Default for Sym {
    fn default() -> Self {
        Sym {
            images: Vec::new(),
            family: Family::Global,
            kind: Kind::Plain,
            meta: Vec::new(),
            family_locks: false,
            mapped: 0,
            moving: Vec::new(),
            locals: Vec::new(),
            ctx: Vec::new(),
            forget_node_objects: false,
            sort_lists: false,
            solo: NO_TASK,
            join_in_order: false,
            task_orbits: Vec::new(),
            all_images: false,
            signature_defect: None,
        }
    }
}

impl Sym {
    pub(super) fn clear_execution(&mut self) {
        self.family = Family::Global;
        self.kind = Kind::Plain;
        self.meta.clear();
        self.family_locks = false;
        self.mapped = 0;
        self.moving.clear();
        self.locals.clear();
        self.ctx.clear();
        self.solo = NO_TASK;
    }

    /// Keeps what a snapshot needs of the running execution's symmetry state (nothing without
    /// symmetry).
    pub(super) fn save_into(&self, into: &mut SymSave) {
        if self.images.is_empty() {
            return;
        }
        into.locals.clone_from(&self.locals);
        into.ctx.clone_from(&self.ctx);
        into.solo = self.solo;
    }

    /// Puts back what [`Sym::save_into`] kept, in an execution restored to `objects` objects:
    /// the tags and the images' maps of objects made since are dropped and the maps rebuilt.
    /// `keep_locals`: a seeded defect (`SnapshotForgetsImageLocals`), the local hashes under
    /// each image are left as they are.
    pub(super) fn restore_from(&mut self, s: &SymSave, objects: usize, keep_locals: bool) {
        if self.images.is_empty() {
            return;
        }
        if !keep_locals {
            self.locals.clone_from(&s.locals);
        }
        self.ctx.clone_from(&s.ctx);
        self.solo = s.solo;
        self.meta.truncate(objects);
        if self.mapped != objects {
            self.map_objects();
        }
    }

    /// Builds the images' object maps for every object created so far.
    #[cold]
    pub(super) fn map_objects(&mut self) {
        assert!(
            !self.family_locks,
            "stateful runtime: symmetry: a lock was created inside a node's or a task's family (locks are not permuted)"
        );
        let n = self.meta.len();
        // The members of each family, in creation order, and each object's rank in its family.
        let mut members: Vec<(Family, Vec<u32>)> = Vec::new();
        let mut rank = vec![0usize; n];
        for (i, m) in self.meta.iter().enumerate() {
            if m.family == Family::Global {
                continue;
            }
            let pos = match members.iter().position(|(f, _)| *f == m.family) {
                Some(p) => p,
                None => {
                    members.push((m.family, Vec::new()));
                    members.len() - 1
                }
            };
            rank[i] = members[pos].1.len();
            members[pos].1.push(i as u32);
        }
        for img in &mut self.images {
            img.obj.clear();
            for (i, m) in self.meta.iter().enumerate() {
                let target = match m.family {
                    Family::Node(_) if self.forget_node_objects => {
                        img.obj.push(i as u32);
                        continue;
                    }
                    Family::Global => {
                        img.obj.push(i as u32);
                        continue;
                    }
                    Family::Node(x) => Family::Node(img.node[x as usize]),
                    Family::Pid(x) => Family::Pid(img.pid[x as usize]),
                };
                let image = members.iter().find(|(f, _)| *f == target).and_then(|(_, v)| v.get(rank[i]).copied());
                match image {
                    Some(o) => img.obj.push(o),
                    None => panic!(
                        "stateful runtime: symmetry: object {i} of {:?} has no image in {target:?} (the families differ)",
                        m.family
                    ),
                }
            }
        }
        self.moving.clear();
        for (i, m) in self.meta.iter().enumerate() {
            if m.kind != Kind::Plain || self.images.iter().any(|img| img.obj[i] != i as u32) {
                self.moving.push(i as u32);
            }
        }
        self.mapped = n;
    }

    #[inline(always)]
    pub(super) fn value(img: &Image, kind: Kind, v: u64) -> u64 {
        match kind {
            Kind::Plain => v,
            Kind::NodeValue => {
                let x = v as u32 as i32;
                if (0..32).contains(&x) {
                    img.node[x as usize] as u32 as u64
                } else {
                    v
                }
            }
            Kind::PidMask => {
                let (mut m, mut out) = (v as u32, 0u32);
                while m != 0 {
                    let p = m.trailing_zeros();
                    m &= m - 1;
                    out |= 1 << img.pid[p as usize];
                }
                (v & !0xffff_ffff) | out as u64
            }
            Kind::PidList => {
                let list = WaitList(v).renamed(|p| img.pid[p as usize] as u32);
                if img.sort_lists {
                    let mut pids: Vec<u32> = list.iter().collect();
                    pids.sort_unstable();
                    return pids.into_iter().fold(WaitList(0), |l, p| l.push_head(p)).0;
                }
                list.0
            }
        }
    }

    #[inline(always)]
    pub(super) fn op(img: &Image, op: Op) -> Op {
        match op {
            Op::Load(o) => Op::Load(img.obj[o as usize]),
            Op::Store(o) => Op::Store(img.obj[o as usize]),
            Op::Rmw(o) => Op::Rmw(img.obj[o as usize]),
            Op::Unpark(t) => Op::Unpark(img.task[t] as TaskId),
            Op::Join(t) => Op::Join(img.task[t] as TaskId),
            Op::JoinAll(m) => {
                let (mut m, mut out) = (m, 0u32);
                while m != 0 {
                    let t = m.trailing_zeros() as usize;
                    m &= m - 1;
                    out |= 1 << img.task[t];
                }
                Op::JoinAll(out)
            }
            other => other,
        }
    }
}
