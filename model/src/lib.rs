//! # mmcheck model
//!
//! Two Linux memory-management synchronisation protocols by Mel Gorman, written once as Rust
//! code generic over a [`platform::Platform`], so that the code the checkers explore (loom,
//! shuttle) is the code that runs on real threads:
//!
//! * [`reclaim`] ([`reclaim::KswapdStall`]): the 2016 tree_lock series: `kswapd_exclusive`,
//!   `kswapd_contended_wait`, PGDAT_CONGESTED and `wait_iff_congested()`;
//! * [`compaction`] ([`compaction::Compaction`]): "mm, compaction: finish pageblock scanning
//!   on contention" (5.1) and the versions around it.
//!
//! Each protocol implements [`model::Model`], everything the checker needs to know about it.
//! Kernel primitives (`current`, task states, spinlocks, wait queues, atomics and bitops) are
//! in [`kernel`], named as the kernel names them. What the checker sees of a run is reported
//! through [`ghost::Ghost`] as [`event::Event`]s.

pub mod compaction;
pub mod event;
pub mod ghost;
pub mod kernel;
pub mod model;
pub mod platform;
pub mod reclaim;
pub mod throttle;

/// `f()`, in a thread of its own, or a panic if it takes over `seconds`: for unit tests that
/// run a model to its end on real threads, so that a mutant that makes the run loop for ever
/// fails the test at once instead of hanging it (cargo-mutants runs these tests, docs/mutants.md).
#[cfg(test)]
pub(crate) fn within_seconds<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(seconds)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("still running after {seconds} s"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the run panicked"),
    }
}
