//! The runtime of the stateful platform: tasks as coroutines on pooled stacks, the object,
//! lock and park-token tables, scheduling points, local hashes and the state fingerprint.
//! The design is described in the parent module's docs.
//!
//! # Memory discipline
//!
//! The runtime state ([`Rt`](state::Rt)) is a heap block owned by the [`StackPool`] and
//! reached, for the duration of [`run`], through a thread-local raw pointer. The scheduler loop
//! and the task code (running on coroutine stacks, but on the same OS thread) both access it
//! through that pointer, only ever in short borrows that never span a context switch or a call
//! into the chooser that could re-enter the runtime. A task's coroutine is moved out of its
//! slot while it runs, so a task that spawns (pushes a slot) never aliases the coroutine being
//! resumed.
//!
//! # Files
//!
//! One concern a file, in layers: a file uses only files below it, and this one (which
//! declares them and re-exports their names to the platform) is used by none of them.
//!
//! | file | holds | uses |
//! |---|---|---|
//! | `types.rs` | ids, [`Op`], [`RunEnd`], [`MAX_TASKS`] | nothing |
//! | `hash.rs` | the mixer, the finaliser, the fingerprint's object and lock terms | nothing |
//! | `group.rs` | the symmetry group's tables ([`SymImage`], the object maps) | types |
//! | `state.rs` | `Rt`, the task slots, [`StackPool`], the thread-local pointer, [`Chooser`], [`SchedPoint`] | types, group |
//! | `symmetry.rs` | the images' local hashes and fingerprints, [`StackPool::set_symmetry`] | state, group, hash, types |
//! | `shadow.rs` | the live-locals census's shadow hashes and fingerprint, [`StackPool::set_live_census`] | state, hash, types |
//! | `point.rs` | [`SchedPoint`]'s methods, the fingerprint, the enabled set, the yield point | state, symmetry, shadow, group, hash, types |
//! | `run.rs` | task coroutines, [`run`] and its scheduler loop, the teardown | point, state, symmetry, shadow, hash, types |
//! | `ops.rs` | the operations the platform's objects call, the ghost's entries ([`reset_local`], [`observe`], ..) | run, point, state, symmetry, shadow, group, hash, types |
//! | `snapshot.rs` | [`Snapshot`], [`run_snapshots`] and its scheduler loop, the restore | run, point, state, types |
//!
//! The cycle of types that the runtime is (the state holds the chooser, which is handed a
//! view of the state) is one file, `state.rs`; the methods on those types live in the file of
//! their concern. `crate::platform::stateful::arena` (the execution heap) is below all of them.

mod group;
mod hash;
mod lkstate;
mod memory;
mod ops;
mod point;
mod run;
mod shadow;
mod snapshot;
mod state;
mod symmetry;
mod types;

pub use self::group::SymImage;
pub use self::lkstate::Memory;
pub(crate) use self::memory::kernel_fence_of;
pub(crate) use self::ops::{
    current, join, join_all, kernel_fence, lock_lock, lock_new, lock_try, lock_unlock, obj_cas, obj_load, obj_new,
    obj_rmw, obj_store, park, spawn, unpark, yield_now,
};
pub use self::ops::{
    last_read_stale, lkmm_on, lkmm_token_set, local, observe, observe_pids, reset_local, reset_local_summary, tagged,
};
pub use self::run::run;
pub use self::shadow::reset_shadow_summary;
pub use self::snapshot::{run_snapshots, Decision, SnapChooser, Snapshot};
pub use self::state::{current_task, in_execution, Chooser, SchedPoint, StackPool};
pub use self::types::{LockId, ObjId, Op, RunEnd, TaskId, MAX_TASKS};
