//! The monitors' vocabulary, what every other file of `monitor/` and the engines name: a
//! model with its monitors ([`Checked`], its [`Invariant`]s), one execution as they see it
//! ([`Exec`]), what they report ([`Violation`]), and the online form's trait ([`Online`],
//! with [`Found`] and [`CycleKey`]). Re-exported at `mmcheck::monitor` (the first four) and
//! `mmcheck::monitor::online` (the last three).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

use mmmodel::event::Event;
use mmmodel::ghost::Pid;
use mmmodel::model::{Model, Named, Perm};

/// One invariant violated in one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The invariant's id.
    pub invariant: &'static str,
    pub message: String,
    /// Index of the event at which the violation shows.
    pub at: Option<usize>,
    /// Jiffies slept for nothing (a bounded lost wakeup), if any.
    pub wasted_jiffies: u64,
    /// The trace only makes sense with a load that read a stale value (a weak-memory
    /// outcome). The shortest-counterexample search prefers traces without one, which read as
    /// plain interleavings.
    pub weak_memory: bool,
}

impl Violation {
    pub fn new(invariant: impl Named, at: Option<usize>, message: String) -> Self {
        Violation { invariant: invariant.name(), message, at, wasted_jiffies: 0, weak_memory: false }
    }
}

/// One execution of model `M` as the monitors see it.
pub struct Exec<'a, M: Model> {
    pub cfg: &'a M::Config,
    pub events: &'a [(Pid, Event<M::Event>)],
    pub fin: &'a M::Final,
}

impl<M: Model> Exec<'_, M> {
    pub fn tasks(&self) -> usize {
        M::roles(self.cfg).len()
    }
    /// `T2 (kswapd1)`.
    pub fn pid_name(&self, pid: Pid) -> String {
        match M::roles(self.cfg).get(pid) {
            Some(r) => format!("T{pid} ({})", M::comm(r)),
            None => format!("T{pid}"),
        }
    }
}

/// An invariant of model `M`: its id, a one-line statement, the coverage events an
/// exploration must reach for its pass to say anything about it, and its monitor.
pub struct Invariant<M: Model> {
    pub id: M::Invariant,
    pub statement: &'static str,
    /// The situation the invariant constrains, as coverage events: a pass that never reached
    /// all of them is `unexercised` in the matrix, not `holds`.
    pub exercised_by: &'static [M::Coverage],
    pub check: fn(&Exec<M>) -> Vec<Violation>,
}

/// A model with its monitors: what the checker needs beyond [`Model`].
pub trait Checked: Model {
    /// Every invariant, in documentation order.
    const INVARIANTS: &'static [Invariant<Self>];
    /// The invariant an execution that does not end violates.
    const PROGRESS: Self::Invariant;
    /// The online form of every invariant (and of the derived coverage): a small hashable
    /// state stepped on each event, part of the stateful engine's state fingerprint. It must
    /// agree with the trace monitors on every execution (`online::agree`).
    type Online: Online<Self>;

    /// Coverage that only the whole trace can tell (added to the per-event counts).
    fn derived_coverage(_exec: &Exec<Self>, _cov: &mut BTreeMap<&'static str, u64>) {}

    /// Whether an exploration of `cfg` that reached `coverage` exercised `inv`. By default:
    /// it reached every event of [`Invariant::exercised_by`].
    fn exercised(inv: &Invariant<Self>, _cfg: &Self::Config, coverage: &BTreeMap<&'static str, u64>) -> bool {
        inv.exercised_by.iter().all(|e| coverage.get(e.name()).is_some_and(|&n| n > 0))
    }

    /// Invariants decided only on lassos: classes of fair cycles. Their online form is
    /// [`Online::cycle_keys`], which the stateful engine reads at every state it stores
    /// and decides on the whole state graph (a fair cycle that keeps one stuck situation for
    /// ever); their trace form is [`Checked::lasso`]. A search cannot aim at them as at a
    /// safety invariant, so the registry makes none of them a search target.
    const LASSO: &'static [Self::Invariant] = &[];

    /// The trace form of the lasso invariants: the violations of a lasso (an infinite
    /// execution: the events before `cycle_from` lead into a cycle that repeats for ever),
    /// besides `progress`, which every fair cycle violates. The stateful engine checks that
    /// each cycle it classed under a lasso invariant is one by this form too, and a replayed
    /// lasso is judged by it. None by default.
    fn lasso(_cfg: &Self::Config, _events: &[(Pid, Event<Self::Event>)], _cycle_from: usize) -> Vec<Violation> {
        Vec::new()
    }

    /// Runtime mode: counters made from one iteration's violations (none by default).
    fn violation_counters(_violations: &[Violation], _out: &mut mmmodel::model::Counters) {}

    fn invariant(id: Self::Invariant) -> &'static Invariant<Self> {
        Self::INVARIANTS.iter().find(|i| i.id == id).expect("every invariant id has a monitor")
    }
}

/// What one step (or the end) of an online monitor found.
#[derive(Debug)]
pub struct Found<M: Model> {
    /// Invariants violated (an invariant may be reported more than once).
    pub violated: Vec<M::Invariant>,
    /// Derived coverage events (the ones [`Checked::derived_coverage`] counts from a trace).
    pub derived: Vec<M::Coverage>,
}

impl<M: Model> Default for Found<M> {
    fn default() -> Self {
        Found { violated: Vec::new(), derived: Vec::new() }
    }
}

/// The online form of model `M`'s invariants.
pub trait Online<M: Model>: Clone + Eq + Hash + Debug + Default + Send + Sync + 'static {
    /// Task `pid` did `ev`.
    fn step(&mut self, cfg: &M::Config, pid: Pid, ev: &Event<M::Event>, found: &mut Found<M>);
    /// Every task has finished, in final state `fin`.
    fn end(&self, cfg: &M::Config, fin: &M::Final, found: &mut Found<M>);
    /// The state with its nodes and pids renamed by `perm` (a symmetry reduction hashes every
    /// image of a state: docs/model.md, "Symmetry"); `None` (the default): this monitor cannot,
    /// and symmetry is not applied.
    fn permuted(&self, _perm: &Perm) -> Option<Self> {
        None
    }
    /// [`Online::permuted`] into `out`, whose room it may reuse (the search hashes every image
    /// of every state it reaches); `false` where this monitor cannot.
    fn permute_into(&self, perm: &Perm, out: &mut Self) -> bool {
        match self.permuted(perm) {
            Some(s) => {
                *out = s;
                true
            }
            None => false,
        }
    }
    /// The online form of the model's lasso invariants ([`Checked::LASSO`]): the stuck
    /// situations this state is in, each as a [`CycleKey`]. A fair cycle every state of which
    /// carries the same key, and in which the key's `must_move` tasks move, violates the key's
    /// invariant; the stateful engine looks for such cycles among the fair cycles it finds
    /// (docs/model.md, "no-soft-lockup: a class of fair cycles"). None by default.
    fn cycle_keys(&self, _out: &mut Vec<CycleKey>) {}
    /// The monitor projection (docs/model.md, "Monitor projection"): the parts of this state
    /// that nothing a search of `checked` reports depends on, as a mask of this monitor's own
    /// parts for [`Online::project`] to clear. A part may be in it only if, with every
    /// invariant of `checked` alone, its value changes no violation of one of them, no
    /// derived coverage event and no [`Online::cycle_keys`] (the lasso invariants are in
    /// `checked` when checked), and no part outside the mask is computed from it: then two
    /// states that differ only there have the same future as far as the search can tell, and
    /// the search may store them as one. 0 (the default): nothing is left out.
    fn projection(_checked: &[M::Invariant]) -> u32 {
        0
    }
    /// Clear the parts of `mask` (a [`Online::projection`]) back to their initial values.
    /// The stateful engine calls it after every step, so that a part left out never splits a
    /// state.
    fn project(&mut self, _mask: u32) {}
    /// Whether `ev` is inert on these monitors: from every state, [`Online::step`] on it
    /// reports nothing and changes nothing that another event's step reads or writes, so it
    /// commutes with every event, whichever task's (the same state and the same reports in
    /// either order). The partial-order reduction then takes a step whose events are all
    /// inert as commuting on the monitors without running both orders (docs/model.md,
    /// "Inert events"). It may say `false` of an inert event (only time is lost), never
    /// `true` of one that is not: a test checks every answer on every shipped stateful
    /// configuration (`checks/tests/por_soundness.rs`). `false` for every event by default.
    fn inert(_ev: &Event<M::Event>) -> bool {
        false
    }
}

/// One stuck situation of a state, for a lasso invariant (see [`Online::cycle_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CycleKey {
    /// The invariant: an index into [`Checked::LASSO`].
    pub class: u8,
    /// Which situation (non-zero): a cycle must keep the same one in every state.
    pub key: u64,
    /// Tasks that must move in such a cycle.
    pub must_move: u32,
}
