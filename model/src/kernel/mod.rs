//! Kernel primitives, each as the kernel names it, generic over the platform.
//!
//! These are the pieces the two protocols are built from: `current` and the task state
//! machine (`sched`), spinlocks (`spinlock`), wait queues (`wait`), and the atomic and
//! bit operations with the kernel's ordering rules (`atomic`).

pub mod atomic;
pub mod sched;
pub mod spinlock;
pub mod wait;

/// The model's HZ: jiffies per second. Timeouts are written as the kernel writes them
/// (`HZ/100`, `HZ/10`) and reported in jiffies.
pub const HZ: u64 = 1000;
pub mod cpu;
