//! The execution arena: where a snapshotting search's task code allocates.
//!
//! A snapshot of an execution (see [`super::rt::Snapshot`]) is its runtime tables, its tasks'
//! stacks and the heap blocks its task code allocated (the protocol's shared structures,
//! their reference counts). For the last to be copyable, the task code of a snapshotting
//! execution allocates from one contiguous region per thread, by bumping a pointer: the region
//! up to the bump pointer is the execution's heap, a snapshot copies it, a restore copies it
//! back and resets the pointer. A block freed there is never reused (free is a no-op), so a
//! block a restored stack still points to is never someone else's.
//!
//! [`ArenaAlloc`] is the global allocator that does this (the checker installs it): on a thread
//! whose arena is switched on ([`ArenaOn`], by the runtime around the code of a task) it bumps;
//! everywhere else, and for every block outside the region, it is the system allocator. The
//! runtime switches the arena off ([`off`]) around everything it and the checker's ghost do on
//! a task's behalf (their tables outlive the execution's heap). Runs that never snapshot never
//! switch it on and pay one thread-local read per allocation.

use core::cell::Cell;
use std::alloc::{GlobalAlloc, Layout, System};

/// The region's size (virtual: only the pages the bump pointer passed are ever touched).
const REGION: usize = 1 << 30;

thread_local! {
    /// The region's base (0: none mapped yet on this thread).
    static BASE: Cell<usize> = const { Cell::new(0) };
    /// Bytes of the region in use.
    static BUMP: Cell<usize> = const { Cell::new(0) };
    /// Whether allocations on this thread go to the region now.
    static ON: Cell<bool> = const { Cell::new(false) };
}

/// The global allocator of a binary whose searches may snapshot executions: the system
/// allocator, except on a thread whose arena is switched on.
pub struct ArenaAlloc;

#[inline(always)]
fn in_region(p: *mut u8) -> bool {
    let base = BASE.with(Cell::get);
    base != 0 && (p as usize).wrapping_sub(base) < REGION
}

#[inline(always)]
fn on() -> bool {
    ON.with(Cell::get)
}

unsafe fn bump(layout: Layout) -> *mut u8 {
    let base = BASE.with(Cell::get);
    let used = BUMP.with(Cell::get);
    let start = (base + used).next_multiple_of(layout.align());
    let end = start + layout.size();
    if end - base > REGION {
        return core::ptr::null_mut();
    }
    BUMP.with(|b| b.set(end - base));
    start as *mut u8
}

// SAFETY: blocks of the region are handed out once (the bump pointer only moves back when the
// runtime restores a snapshot or resets the arena, both of which make every block past it
// unreachable: see the module docs); everything else is the system allocator's.
unsafe impl GlobalAlloc for ArenaAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if on() {
            bump(layout)
        } else {
            System.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if on() {
            let p = bump(layout);
            if !p.is_null() {
                core::ptr::write_bytes(p, 0, layout.size());
            }
            p
        } else {
            System.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if !in_region(p) {
            System.dealloc(p, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_region(p) {
            return System.realloc(p, layout, new_size);
        }
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let q = self.alloc(new_layout);
        if !q.is_null() {
            core::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
        }
        q
    }
}

/// Switches this thread's arena on for the guard's lifetime (mapping the region on first use).
/// Panics if the checker did not install [`ArenaAlloc`]: a snapshot would then miss the heap.
pub(crate) struct ArenaOn(bool);

impl ArenaOn {
    pub(crate) fn new() -> Self {
        ensure_region();
        ArenaOn(ON.with(|c| c.replace(true)))
    }
}

impl Drop for ArenaOn {
    fn drop(&mut self) {
        ON.with(|c| c.set(self.0));
    }
}

/// Switches this thread's arena off until the guard drops.
pub struct ArenaOff(bool);

impl Drop for ArenaOff {
    #[inline]
    fn drop(&mut self) {
        ON.with(|c| c.set(self.0));
    }
}

/// Allocations until the guard drops go to the system allocator (for the runtime's and the
/// checker's own tables, which outlive an execution's heap).
#[inline]
pub fn off() -> ArenaOff {
    ArenaOff(ON.with(|c| c.replace(false)))
}

fn ensure_region() {
    if BASE.with(Cell::get) != 0 {
        return;
    }
    // SAFETY: a plain allocation, never freed (one per thread that snapshots), big enough that
    // the system allocator maps it lazily.
    let base = unsafe { System.alloc(Layout::from_size_align(REGION, 4096).expect("layout")) };
    assert!(!base.is_null(), "stateful runtime: cannot reserve the execution arena");
    BASE.with(|b| b.set(base as usize));
    BUMP.with(|b| b.set(0));
    // A block allocated in the region right now must come back from it: this is how a missing
    // `#[global_allocator]` is detected.
    let probe = ArenaOn(ON.with(|c| c.replace(true)));
    let b = Box::new(0u64);
    drop(probe);
    let inside = in_region(&*b as *const u64 as *mut u8);
    drop(b);
    BUMP.with(|b| b.set(0));
    assert!(inside, "stateful runtime: snapshots need mmmodel's ArenaAlloc as the global allocator");
}

/// The arena's used bytes: `(base, len)`.
pub(crate) fn used() -> (usize, usize) {
    (BASE.with(Cell::get), BUMP.with(Cell::get))
}

/// Sets the bump pointer back to `len` (a restore, after copying the snapshot's bytes back, or
/// 0 when a snapshotting execution ends).
pub(crate) fn reset(len: usize) {
    BUMP.with(|b| b.set(len));
}
