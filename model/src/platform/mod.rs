//! The platform seam: everything the protocol code needs from the machine.
//!
//! Protocol code (`crate::reclaim`, `crate::compaction`) is written once, generic over
//! [`Platform`]. Three implementations sit below the seam:
//!
//! * [`Std`]: real threads and `std::sync::atomic`. This is the runtime build; it has no
//!   dependency on loom or shuttle and, with the default [`NoGhost`], the checking hooks
//!   compile to nothing.
//! * `Loom` (cargo feature `loom`): loom's atomics, mutex and threads, so loom can explore
//!   every interleaving and the C11 weak-memory behaviours it models.
//! * `Shuttle` (cargo feature `shuttle`): shuttle's atomics, mutex and threads, for
//!   randomised (PCT, random) and bounded DFS exploration of larger configurations.
//! * `Stateful` (cargo feature `stateful`): a deterministic single-thread coroutine runtime
//!   whose every scheduling decision is a caller's choice and which exposes pending ops,
//!   shared values and a state fingerprint: the substrate of a stateful search
//!   ([`stateful`] describes it).
//!
//! The kernel's `smp_mb()` is written `P::fence(SeqCst)` (never as SeqCst loads/stores,
//! which loom treats as AcqRel). Kernel spinlocks are [`RawSpinLock`]s that *block* under
//! loom and shuttle (a mutex), because a spin loop explodes loom's search while mutual
//! exclusion is all the verdicts depend on.
//!
//! Each platform is also parameterised by a [`Ghost`]: the checker's view of an
//! execution (protocol events, lock ownership, sleepers, loop bounds). Ghost state is kept
//! outside the explored memory: it adds no interleavings and is updated atomically with the
//! explored operation next to it.
//!
//! [`Ghost`]: crate::ghost::Ghost
//! [`NoGhost`]: crate::ghost::NoGhost

mod traits;
pub(crate) use self::traits::{atomics_for, fetch_apply_by_update, forward_atomic, forward_atomic_int};
pub use self::traits::{load_half, Atomic, AtomicInt, Join, KernelFence, Platform, RawSpinLock, SymTag};

mod std_impl;
pub use std_impl::{Std, StdSpinLock};

#[cfg(feature = "loom")]
mod loom_impl;
#[cfg(feature = "loom")]
pub use loom_impl::{Loom, LoomSpinLock};

#[cfg(feature = "shuttle")]
mod shuttle_impl;
#[cfg(feature = "shuttle")]
pub use shuttle_impl::{Shuttle, ShuttleSpinLock};

#[cfg(feature = "stateful")]
pub mod stateful;
#[cfg(feature = "stateful")]
pub use stateful::Stateful;
