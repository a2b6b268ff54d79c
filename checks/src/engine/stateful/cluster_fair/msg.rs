//! The distributed fair-cycle pass's messages and phases (`mod.rs` says how the pass works).

use serde::{Deserialize, Serialize};

use super::super::cluster::owner;

/// What a message says.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(super) enum What {
    /// Go on with worker `.1`'s fan-out of the current phase from its state `.0`.
    Seed(u32, u32),
    /// State `.0` has one more predecessor.
    Pred(u64),
    /// State `.0` has the predecessor numbered `.1` (see `Pass::id` (`pass.rs`)).
    Rev(u64, u32),
    /// A predecessor of state `.0` has left; a successor of the state numbered `.0` has.
    LostPred(u64),
    LostSucc(u32),
    /// A state that reaches state `.0` has color `.1`.
    Color(u64, u64),
    /// The state numbered `.0` has a transition to `.1`, a member of the component of root
    /// `.2`.
    Back(u32, u64, u64),
    /// For the component of root `.0`: tasks that move inside it, tasks disabled at a member,
    /// tasks that exist at a member.
    Agg(u64, u32, u32, u32),
    /// A number worker `.0` adds up.
    Sum(u32, u64),
}

/// A message: what it says names the state it is about, and so the worker it goes to.
pub(super) type Msg = What;

impl What {
    /// Where the message's state is in its worker's arrays: fingerprint or number, after the
    /// kind of message.
    pub(super) fn order(&self) -> (u8, u64) {
        match *self {
            What::Seed(from, _) => (0, u64::from(from)),
            What::Pred(fp) | What::Rev(fp, _) | What::LostPred(fp) | What::Color(fp, _) => (1, fp),
            What::LostSucc(id) | What::Back(id, ..) => (2, u64::from(id)),
            What::Agg(c, ..) => (3, c),
            What::Sum(..) => (4, 0),
        }
    }

    /// The worker the message goes to, of `peers`; `local_bits`: `Pass::local_bits` (`pass.rs`).
    pub(super) fn to(&self, peers: usize, local_bits: u32) -> u64 {
        match *self {
            What::Seed(_, w) | What::Sum(w, _) => u64::from(w),
            What::Pred(fp) | What::Rev(fp, _) | What::LostPred(fp) | What::Color(fp, _) | What::Agg(fp, ..) => {
                owner(fp, peers) as u64
            }
            What::LostSucc(id) | What::Back(id, ..) => u64::from(id) >> local_bits,
        }
    }
}

/// The phases whose fan-out goes through every state.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Pred,
    Rev,
    /// The trim before the reverse transitions are known: states with no predecessor left.
    Forward,
    Trim,
    Color,
    Back,
}
