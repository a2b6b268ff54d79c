//! The fairness test, in one copy: when a strongly connected component of the state graph holds
//! a fair cycle (weak fairness: every task moves inside it or is disabled somewhere in it), with
//! its closure under the symmetry group; and the pass that decides `progress` and the lasso
//! invariants on a recorded graph ([`fair_components`]). One search's Tarjan
//! (`dfs/tarjan.rs`) applies the same test to each component as it closes.

use mmmodel::model::Named;

use super::findings::{decisive, Findings, Target};
use super::graph::{path_to, Graph, Stored};
use super::symmetry::Canon;
use crate::engine::types::ReductionDefect;
use crate::monitor::Checked;
use crate::spec::Spec;

/// Whether a component whose transitions move `moves`, and in which `disabled` are disabled
/// somewhere, holds a fair cycle over the tasks `tasks`.
#[inline]
pub(super) fn fair(moves: u32, disabled: u32, tasks: u32) -> bool {
    (moves | disabled) & tasks == tasks
}

/// Under symmetry the component is a component of the quotient graph, whose states were
/// explored from arbitrary members of their orbits: a real fair cycle through it moves or
/// disables, at each of its states, the image of a task the component records. Closing both
/// masks under the group never misses one; a component that passes the closed test is decided
/// again without symmetry (docs/model.md, "Symmetry": progress).
#[inline]
pub(super) fn maybe_fair_under(canon: &Canon, moves: u32, disabled: u32, tasks: u32) -> bool {
    fair(canon.close(moves), canon.close(disabled), tasks)
}

/// The recorded graph may hold a fair cycle that symmetry hid: decide it again without.
pub(super) struct Inconclusive;

/// `progress` over the graph the workers recorded: a component with a transition inside it
/// where every task moves or is disabled somewhere is a fair cycle (as in one search's Tarjan,
/// with the same closure under the symmetry group). Inside each fair component, the fair
/// cycles of the model's lasso invariants (`no-soft-lockup`): for each stuck situation of the
/// online monitors, the fair components of the states that keep it ([`Stored::class_cycles`]).
/// Every one counts; the counterexample is the first cycle of a checked lasso invariant, or
/// else the first fair cycle.
pub(super) fn fair_components<M: Checked>(
    spec: &Spec<M>,
    canon: &Canon,
    defect: Option<ReductionDefect>,
    graphs: &[Graph],
    found: &mut Findings,
) -> Result<(), Inconclusive> {
    let stored = Stored::new(graphs);
    let inv = M::PROGRESS.name();
    let checks_progress = spec.invariants.contains(&M::PROGRESS);
    let mut first: Option<Target> = None;
    for c in stored.components() {
        if !canon.is_identity() {
            if maybe_fair_under(canon, c.moves, c.disabled, c.tasks) {
                return Err(Inconclusive);
            }
            continue;
        }
        if !c.fair() {
            continue;
        }
        if checks_progress {
            found.count_violations(&[inv]);
            if first.is_none() && decisive(spec, &[inv]).is_some() {
                first = Some(Target::Cycle {
                    members: c.members.iter().copied().collect(),
                    must_move: c.tasks & !c.disabled,
                    path: Vec::new(),
                    class: None,
                });
            }
        }
        let ignore_key = defect == Some(ReductionDefect::LassoClassIgnoresKey);
        for (k, sub) in stored.class_cycles(&c, ignore_key) {
            let Some(&id) = M::LASSO.get(k.class as usize) else { continue };
            if !spec.invariants.contains(&id) {
                continue;
            }
            found.count_violations(&[id.name()]);
            if !matches!(first, Some(Target::Cycle { class: Some(_), .. })) && decisive(spec, &[id.name()]).is_some() {
                first = Some(Target::Cycle {
                    members: sub.members.iter().copied().collect(),
                    must_move: (sub.tasks & !sub.disabled) | k.must_move,
                    path: Vec::new(),
                    class: Some(k.class),
                });
            }
        }
    }
    if let Some(Target::Cycle { members, must_move, class, .. }) = first {
        let path = stored.initial.and_then(|i| path_to(graphs, i, &|fp| members.contains(&fp))).unwrap_or_default();
        found.target = Some(Target::Cycle { members, must_move, path, class });
    }
    Ok(())
}
