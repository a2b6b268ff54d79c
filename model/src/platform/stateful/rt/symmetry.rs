//! Symmetry in the runtime: setting the group, each task's local hash under each element of
//! the group, and the fingerprint of a state's image (the group's tables are in `group.rs`).

use core::ptr::NonNull;

use super::group::{Image, Kind, SignatureDefect, Sym, SymImage};
use super::hash::{fmix64, lock_term, mix, obj_term, P2, TAG_INIT, TAG_RESET};
use super::state::{Rt, SchedPoint, StackPool};
use super::types::{Op, TaskId, FINISHED_CODE, MAX_TASKS, NO_OWNER};
use crate::kernel::sched::Summary;

impl StackPool {
    /// The symmetry group the next executions canonicalise over: its elements other than the
    /// identity (none: no symmetry, the default).
    pub fn set_symmetry(&mut self, images: &[SymImage]) {
        let rt = self.rt.get_or_insert_with(|| {
            // SAFETY: a fresh allocation, owned by the pool from here on.
            unsafe { NonNull::new_unchecked(Box::into_raw(Box::new(Rt::new(self.stack_size)))) }
        });
        let ident = |v: &[u8], i: usize| v.get(i).copied().unwrap_or(i as u8);
        // SAFETY: the pool owns the block; no execution is running.
        let sort_lists = unsafe { rt.as_ref().sym.sort_lists };
        let images: Vec<Image> = images
            .iter()
            .map(|s| {
                let mut img = Image {
                    node: core::array::from_fn(|i| ident(&s.node, i)),
                    pid: core::array::from_fn(|i| ident(&s.pid, i)),
                    task: core::array::from_fn(|i| ident(&s.task, i)),
                    task_inv: [0; MAX_TASKS],
                    sort_lists,
                    obj: Vec::new(),
                };
                for (t, &u) in img.task.iter().enumerate() {
                    img.task_inv[u as usize] = t as u8;
                }
                img
            })
            .collect();
        let task_orbits = task_orbits(&images);
        // SAFETY: the pool owns the block; no execution is running (`run` borrows the pool).
        unsafe {
            let sym = &mut rt.as_mut().sym;
            sym.images = images;
            sym.task_orbits = task_orbits;
        }
    }

    /// Whether a state's canonical form is the least fingerprint over every element of the
    /// group (`true`) or only over the elements that sort its orbits of tasks (`false`, the
    /// default): the two are the same reduction, and the second costs a few images a state
    /// instead of one per element ([`SchedPoint::canonical_candidates`]).
    pub fn set_symmetry_all_images(&mut self, all: bool) {
        self.set_symmetry_flag(|sym| sym.all_images = all);
    }

    fn set_symmetry_flag(&mut self, set: impl FnOnce(&mut Sym)) {
        if self.rt.is_none() {
            self.set_symmetry(&[]);
        }
        // SAFETY: as in `set_symmetry`.
        unsafe { set(&mut self.rt.expect("set_symmetry allocates the runtime").as_mut().sym) };
    }

    /// Seeds a defect in the sorted canonical form, for the test that shows the exact oracle
    /// catches it: a task's signature is its own local hash, which a renaming of the values it
    /// read changes, so two states of one orbit may sort differently and be stored twice.
    #[doc(hidden)]
    pub fn seed_symmetry_defect_signature_own_local(&mut self) {
        self.set_symmetry_flag(|sym| sym.signature_defect = Some(SignatureDefect::OwnLocal));
    }

    /// Seeds a defect in the sorted canonical form, for the test that shows the exact oracle
    /// catches it: a task's signature takes its pending operation's own code, which a renaming
    /// changes (an unpark of a renamed task, an access to a renamed node's object), so two
    /// states of one orbit may sort differently and be stored twice.
    #[doc(hidden)]
    pub fn seed_symmetry_defect_signature_raw_op(&mut self) {
        self.set_symmetry_flag(|sym| sym.signature_defect = Some(SignatureDefect::RawOp));
    }

    /// Seeds a defect in the symmetry reduction, for the test that shows the soundness tests
    /// catch one: every image leaves the nodes' objects (`pgdat[n]`) where they are.
    #[doc(hidden)]
    pub fn seed_symmetry_defect_forget_node_objects(&mut self) {
        self.set_symmetry_flag(|sym| sym.forget_node_objects = true);
    }
}

impl StackPool {
    /// Seeds a defect in the symmetry reduction, for the test that shows the exact oracle
    /// catches it: every image puts a wait queue's list in pid order instead of renaming each
    /// entry in its place (the wake order the model had before its lists kept list order).
    #[doc(hidden)]
    pub fn seed_symmetry_defect_sort_wait_lists(&mut self) {
        self.set_symmetry_flag(|sym| sym.sort_lists = true);
    }

    /// Seeds a defect in the symmetry reduction, for the test that shows the exact oracle
    /// catches it: under symmetry the body joins the other tasks one after another, in a fixed
    /// order no renaming keeps (what the runtime did before `join_all`).
    #[doc(hidden)]
    pub fn seed_symmetry_defect_join_in_order(&mut self) {
        self.set_symmetry_flag(|sym| sym.join_in_order = true);
    }
}

impl SchedPoint<'_> {
    /// Elements of the symmetry group besides the identity (0: no symmetry).
    pub fn symmetry_images(&self) -> usize {
        self.rt.sym.images.len()
    }
    /// The fingerprint of this state's image under element `k` of the symmetry group (with
    /// [`SchedPoint::fingerprint`]'s rules: finished tasks' histories left out).
    pub fn fingerprint_image(&self, k: usize) -> u64 {
        self.image_with(k, self.fixed_part())
    }

    /// [`SchedPoint::fingerprint_image`] of the elements `ks`, into `out[..ks.len()]`: the
    /// objects no element moves or renames are hashed once, not once an image.
    pub fn fingerprint_images_of(&self, ks: &[usize], out: &mut [u64]) {
        let fixed = self.fixed_part();
        for (&k, o) in ks.iter().zip(out.iter_mut()) {
            *o = self.image_with(k, fixed);
        }
    }

    /// The elements of the group (indices of [`SchedPoint::fingerprint_image`]) whose images
    /// of this state its canonical form is the least fingerprint of: their indices go into
    /// `out`, and the answer is whether the identity is one and how many others there are.
    ///
    /// The sorted canonical form. Each task of an orbit has a signature that every renaming
    /// keeps: in the image of a state under an element `h`, the task `h(t)` has the signature
    /// `t` has (below). The candidates are the elements whose image lists each orbit's tasks
    /// in order of their signatures, ties in every order. For a state `s` and an image
    /// `s' = g(s)`, `h` sorts `s'` exactly when `h∘g` sorts `s`, and `h(s') = (h∘g)(s)`: the
    /// two states have the same set of candidate images, so the least of their fingerprints is
    /// the same. Each orbit's every order is in the group (the group is a product of full
    /// symmetric groups), so a sorting element always exists. Where the tasks' signatures
    /// differ, that is one image instead of one per element (120 with five kswapds).
    ///
    /// A task's signature: whether it exists and has finished, and otherwise the least over
    /// the group (the identity included) of its pending operation's image and, apart, of its
    /// local hash under each image. The set of a task's images over the group is the same for
    /// `t` in `s` and for `h(t)` in `h(s)` (the group is closed), so their least is too.
    pub fn canonical_candidates(&self, out: &mut [usize]) -> (bool, usize) {
        let r = self.rt;
        let sym = &r.sym;
        let g = sym.images.len();
        let all = |out: &mut [usize]| {
            for (k, o) in out.iter_mut().enumerate().take(g) {
                *o = k;
            }
            (true, g)
        };
        if sym.all_images || sym.task_orbits.is_empty() {
            return all(out);
        }
        let mut sig = [0u64; MAX_TASKS];
        for orbit in &sym.task_orbits {
            for &t in orbit {
                sig[t as usize] = self.task_signature(t as usize);
            }
        }
        let sorts = |inv: &dyn Fn(usize) -> usize| {
            sym.task_orbits.iter().all(|o| o.windows(2).all(|w| sig[inv(w[0] as usize)] <= sig[inv(w[1] as usize)]))
        };
        let identity = sorts(&|pos| pos);
        let mut n = 0;
        for (k, img) in sym.images.iter().enumerate() {
            if sorts(&|pos| img.task_inv[pos] as usize) {
                out[n] = k;
                n += 1;
            }
        }
        if !identity && n == 0 {
            // Not reached when the group holds every order of each orbit. It would still be
            // canonical: `h` sorts `g(s)` exactly when `h∘g` sorts `s`, so every state of this
            // orbit comes here, and all of them take the least over every element (the form
            // `all_images` asks for), only more slowly.
            return all(out);
        }
        (identity, n)
    }

    /// A task's signature for the sorted canonical form ([`SchedPoint::canonical_candidates`]).
    fn task_signature(&self, t: usize) -> u64 {
        let r = self.rt;
        let sym = &r.sym;
        if t >= r.tasks.len() {
            return u64::MAX;
        }
        if r.finished & (1 << t) != 0 {
            return FINISHED_CODE;
        }
        let g = sym.images.len();
        let s = &r.tasks[t];
        let mut op = s.op.code();
        if sym.signature_defect != Some(SignatureDefect::RawOp) {
            for img in &sym.images {
                op = op.min(Sym::op(img, s.op).code());
            }
        }
        let mut local = s.local;
        if sym.signature_defect != Some(SignatureDefect::OwnLocal) {
            for &l in &sym.locals[t * g..t * g + g] {
                local = local.min(l);
            }
        }
        mix(mix(op, s.token as u64), local)
    }

    /// The objects' and locks' part of the fingerprint without the objects some element moves
    /// or renames and without the held locks (whose owners the elements rename).
    fn fixed_part(&self) -> u64 {
        let r = self.rt;
        assert!(r.sym.mapped == r.objs.len(), "stateful runtime: symmetry: objects created after the last yield point");
        let mut fixed = r.shared;
        for &i in &r.sym.moving {
            fixed ^= obj_term(i as usize, r.objs[i as usize]);
        }
        for (l, &o) in r.locks.iter().enumerate() {
            if o != NO_OWNER {
                fixed ^= lock_term(l, o as usize);
            }
        }
        fixed
    }

    fn image_with(&self, k: usize, fixed: u64) -> u64 {
        let r = self.rt;
        let sym = &r.sym;
        let img = &sym.images[k];
        let mut shared = fixed;
        for &i in &sym.moving {
            let i = i as usize;
            shared ^= obj_term(img.obj[i] as usize, Sym::value(img, sym.meta[i].kind, r.objs[i]));
        }
        for (l, &o) in r.locks.iter().enumerate() {
            if o != NO_OWNER {
                shared ^= lock_term(l, img.task[o as usize] as usize);
            }
        }
        let g = sym.images.len();
        let n = r.tasks.len();
        let mut h = shared ^ (n as u64).wrapping_mul(P2);
        for pos in 0..n {
            let t = img.task_inv[pos] as usize;
            let s = &r.tasks[t];
            let (status, local) = if r.finished & (1 << t) != 0 {
                (FINISHED_CODE, 0)
            } else {
                (Sym::op(img, s.op).code() ^ (s.token as u64) << 4, sym.locals[t * g + k])
            };
            h = mix(h ^ status, local);
        }
        fmix64(h)
    }
}

/// The orbits of two tasks or more under the group whose elements but the identity are
/// `images`, each in increasing order.
fn task_orbits(images: &[Image]) -> Vec<Vec<u8>> {
    let mut orbits: Vec<Vec<u8>> = Vec::new();
    for t in 0..MAX_TASKS as u8 {
        if orbits.iter().any(|o| o.contains(&t)) {
            continue;
        }
        let mut orbit: Vec<u8> = images.iter().map(|img| img.task[t as usize]).collect();
        orbit.push(t);
        orbit.sort_unstable();
        orbit.dedup();
        if orbit.len() >= 2 {
            orbits.push(orbit);
        }
    }
    orbits
}

#[inline]
unsafe fn sym_ready(rt: *mut Rt) -> &'static mut Sym {
    let r = &mut *rt;
    if r.sym.mapped != r.objs.len() {
        r.sym.map_objects();
    }
    // SAFETY (of the lifetime): the caller's borrow ends before any switch.
    &mut *(&mut r.sym as *mut Sym)
}

#[inline(never)]
pub(super) unsafe fn sym_fold_op(rt: *mut Rt, t: TaskId, op: Op) {
    let sym = sym_ready(rt);
    let g = sym.images.len();
    for k in 0..g {
        let code = Sym::op(&sym.images[k], op).code();
        let l = &mut sym.locals[t * g + k];
        *l = mix(*l, code);
    }
}

#[inline(never)]
pub(super) unsafe fn sym_fold(rt: *mut Rt, t: TaskId, v: u64, kind: Kind) {
    let sym = sym_ready(rt);
    let g = sym.images.len();
    for k in 0..g {
        let w = Sym::value(&sym.images[k], kind, v);
        let l = &mut sym.locals[t * g + k];
        *l = mix(*l, w);
    }
}

/// Task `id` was created: its local hash under each image starts as the image task's would.
pub(super) unsafe fn sym_spawned(rt: *mut Rt, id: TaskId) {
    let sym = &mut (&mut *rt).sym;
    let g = sym.images.len();
    if g == 0 {
        return;
    }
    debug_assert_eq!(sym.locals.len(), id * g);
    for k in 0..g {
        let image = sym.images[k].task[id] as u64;
        sym.locals.push(mix(TAG_INIT, image));
    }
}

pub(super) unsafe fn sym_save_context(rt: *mut Rt, t: TaskId) {
    let r = &mut *rt;
    let g = r.sym.images.len();
    let local = r.tasks[t].local;
    r.sym.ctx.push(t as u64);
    r.sym.ctx.push(local);
    let (ctx, locals) = (&mut r.sym.ctx, &r.sym.locals);
    ctx.extend_from_slice(&locals[t * g..t * g + g]);
}

pub(super) unsafe fn sym_reset(rt: *mut Rt, t: TaskId, summary: Summary) {
    let sym = &mut (&mut *rt).sym;
    let g = sym.images.len();
    let w = 2 + g;
    let at = sym.ctx.chunks_exact(w).rposition(|e| e[0] == t as u64 && e[1] == summary.context).unwrap_or_else(|| {
        panic!("stateful runtime: symmetry: a summary's context was not taken by loop_context in this task")
    });
    for k in 0..g {
        let ctx = sym.ctx[at * w + 2 + k];
        sym.locals[t * g + k] = mix(TAG_RESET, summary.hash_with(ctx));
    }
}
