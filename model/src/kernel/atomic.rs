//! Atomic and bit operations with the kernel's ordering rules (Documentation/atomic_t.txt,
//! Documentation/atomic_bitops.txt), written on the platform's C11 atomics:
//!
//! * non-value-returning operations (`set_bit`, `clear_bit`, `atomic_inc`, `atomic_dec`) and
//!   plain reads (`test_bit`, `atomic_read`, `READ_ONCE`) are unordered: `Relaxed`;
//! * value-returning read-modify-writes (`cmpxchg`, `test_and_set_bit`,
//!   `test_and_clear_bit`) are fully ordered: a full barrier before and after;
//! * `smp_mb__after_atomic()` is `fence(SeqCst)` (no model calls a bare `smp_mb()`; the
//!   barriers of `set_current_state()` and `try_to_wake_up()` are in kernel/sched.rs).
//!
//! The fences are [`KernelFence`]s: the stateful platform under `memory = "lkmm"` reads each by
//! its kernel name (a failed `cmpxchg()` is then unordered, as atomic_t.txt says); every other
//! platform runs the C11 fence above.

use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

use crate::platform::{Atomic, AtomicInt, KernelFence, Platform};

/// `smp_mb__after_atomic()`: a full barrier after a non-value-returning atomic.
#[allow(non_snake_case)]
#[inline(always)]
pub fn smp_mb__after_atomic<P: Platform>() {
    P::kernel_fence(KernelFence::AfterAtomic)
}

/// `cmpxchg(ptr, old, new)`: fully ordered when it succeeds, unordered when it fails; returns
/// the value found.
#[inline(always)]
pub fn cmpxchg<P: Platform>(v: &P::AtomicI32, old: i32, new: i32) -> i32 {
    P::kernel_fence(KernelFence::FullRmwBegin);
    let found = match v.compare_exchange(old, new, AcqRel, Acquire) {
        Ok(x) | Err(x) => x,
    };
    P::kernel_fence(KernelFence::FullRmwEnd);
    found
}

/// `READ_ONCE(x)` / a plain racy read of an int.
#[inline(always)]
pub fn read_once<P: Platform>(v: &P::AtomicI32) -> i32 {
    v.load(Relaxed)
}

/// `atomic_read()`.
#[inline(always)]
pub fn atomic_read<P: Platform>(v: &P::AtomicI32) -> i32 {
    v.load(Relaxed)
}

/// `atomic_inc()` (unordered).
#[inline(always)]
pub fn atomic_inc<P: Platform>(v: &P::AtomicI32) {
    v.fetch_add(1, Relaxed);
}

/// `atomic_dec()` (unordered).
#[inline(always)]
pub fn atomic_dec<P: Platform>(v: &P::AtomicI32) {
    v.fetch_sub(1, Relaxed);
}

/// `atomic_dec_return_relaxed()`: `atomic_dec()` that also returns the new value, with the same
/// (lack of) ordering. A model calls it where the kernel calls `atomic_dec()` only to check the
/// count in checker builds: the same single read-modify-write, so no exploration changes.
#[inline(always)]
pub fn atomic_dec_return_relaxed<P: Platform>(v: &P::AtomicI32) -> i32 {
    v.fetch_sub(1, Relaxed) - 1
}

/// `set_bit(nr, addr)` (unordered).
#[inline(always)]
pub fn set_bit<P: Platform>(nr: u32, addr: &P::AtomicU32) {
    addr.fetch_or(1 << nr, Relaxed);
}

/// `clear_bit(nr, addr)` (unordered).
#[inline(always)]
pub fn clear_bit<P: Platform>(nr: u32, addr: &P::AtomicU32) {
    addr.fetch_and(!(1 << nr), Relaxed);
}

/// `test_bit(nr, addr)` (a plain read).
#[inline(always)]
pub fn test_bit<P: Platform>(nr: u32, addr: &P::AtomicU32) -> bool {
    addr.load(Relaxed) & (1 << nr) != 0
}

/// `test_and_set_bit(nr, addr)`: fully ordered.
#[inline(always)]
pub fn test_and_set_bit<P: Platform>(nr: u32, addr: &P::AtomicU32) -> bool {
    P::kernel_fence(KernelFence::FullRmwBegin);
    let old = addr.fetch_or(1 << nr, AcqRel);
    P::kernel_fence(KernelFence::FullRmwEnd);
    old & (1 << nr) != 0
}

/// `test_and_clear_bit(nr, addr)`: fully ordered.
#[inline(always)]
pub fn test_and_clear_bit<P: Platform>(nr: u32, addr: &P::AtomicU32) -> bool {
    P::kernel_fence(KernelFence::FullRmwBegin);
    let old = addr.fetch_and(!(1 << nr), AcqRel);
    P::kernel_fence(KernelFence::FullRmwEnd);
    old & (1 << nr) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ghost::NoGhost;
    use crate::platform::Std;

    type S = Std<NoGhost<()>>;

    /// `atomic_dec_return_relaxed()` returns the count it leaves, as the kernel's does: the check
    /// of `nr_wb_congested` in `clear_wb_congested()` reads it.
    #[test]
    fn atomic_dec_return_relaxed_returns_the_new_value() {
        let v = <S as Platform>::AtomicI32::new(1);
        assert_eq!(atomic_dec_return_relaxed::<S>(&v), 0);
        assert_eq!(atomic_dec_return_relaxed::<S>(&v), -1);
        assert_eq!(atomic_read::<S>(&v), -1);
    }
}
