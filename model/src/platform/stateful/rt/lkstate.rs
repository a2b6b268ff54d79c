//! The kernel memory model's part of the runtime state (the rules are in
//! [`crate::platform::stateful::lkmm`], what the runtime does with them in `memory.rs`).

use super::types::TaskId;
use crate::platform::stateful::lkmm::{self, Loc};

/// The memory model an execution runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Memory {
    /// Sequential consistency.
    #[default]
    Sc,
    /// The Linux-kernel memory model, operationally (no load buffering).
    Lkmm,
}

/// A task's hint for its next read-modify-write (a [`KernelFence`] that is no fence).
pub(super) const HINT_FULL: u8 = 1;
pub(super) const HINT_VOID: u8 = 2;

/// The kernel memory model's part of the runtime state.
#[derive(Clone, Default)]
pub(crate) struct Lk {
    pub(super) mem: lkmm::Memory,
    /// Each object's and each lock's location.
    pub(super) obj_loc: Vec<Loc>,
    pub(super) lock_loc: Vec<Loc>,
    /// Each task's hints for its next RMW.
    pub(super) hints: Vec<u8>,
    /// At a choice point: the task in the middle of its operation, and its alternatives.
    pub(super) choosing: Option<(TaskId, u32)>,
    /// The alternative the chooser took at the last choice point.
    pub(super) alt: u32,
    /// The last transition read a store that a later one had superseded.
    pub(super) stale: bool,
}

impl Lk {
    /// About the bytes it holds (the memory's, and the per-object tables).
    pub(crate) fn bytes(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.mem.bytes()
            + (self.obj_loc.capacity() + self.lock_loc.capacity()) * core::mem::size_of::<Loc>()
            + self.hints.capacity()
    }

    pub(super) fn clear(&mut self) {
        self.mem = lkmm::Memory::default();
        self.obj_loc.clear();
        self.lock_loc.clear();
        self.hints.clear();
        self.choosing = None;
        self.alt = 0;
        self.stale = false;
    }
}
