//! The fairness test, in one copy: when a strongly connected component of the state graph holds
//! a fair cycle (weak fairness: every task moves inside it or is disabled somewhere in it), with
//! its closure under the symmetry group; and the pass that decides `progress` and the lasso
//! invariants on a recorded graph ([`fair_components`]). One search's Tarjan
//! (`dfs/tarjan.rs`) applies the same test to each component as it closes.

use mmmodel::model::Named;

use super::findings::{decisive, Findings, Target};
use std::hash::BuildHasherDefault;

use super::graph::Graph;
use super::links::Label;
use super::store::{Identity, Sharded};
use super::stored::{with_stored, AnyStored, Component, Stored};
use super::symmetry::Canon;
use crate::engine::types::ReductionDefect;
use crate::monitor::online::CycleKey;
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
/// else the first fair cycle. Returns how many states the workers' threads trimmed before
/// Tarjan's search (`trim.rs`; 0 for one worker's graph).
pub(super) fn fair_components<M: Checked>(
    spec: &Spec<M>,
    canon: &Canon,
    defect: Option<ReductionDefect>,
    graphs: Vec<Graph>,
    table: Option<&Sharded>,
    found: &mut Findings,
) -> Result<u64, Inconclusive> {
    let mut any = AnyStored::new(graphs, defect);
    with_stored!(&mut any, stored => decide(spec, canon, defect, stored, table, found))
}

/// [`fair_components`] over the union, whichever form its transitions take.
fn decide<M: Checked, L: Label>(
    spec: &Spec<M>,
    canon: &Canon,
    defect: Option<ReductionDefect>,
    stored: &mut Stored<L>,
    table: Option<&Sharded>,
    found: &mut Findings,
) -> Result<u64, Inconclusive> {
    let inv = M::PROGRESS.name();
    let checks_progress = spec.invariants.contains(&M::PROGRESS);
    let mut first: Option<Target> = None;
    let (mut components, trimmed) = stored.components_trimmed();
    // A union of the workers' graphs is built before its states are named: a graph with no
    // component with a transition inside (every passing proof whose graph is acyclic) never
    // needs their names.
    if !components.is_empty() && !stored.named() {
        if let Some(table) = table {
            stored.name_from(table);
        }
        assert!(stored.named(), "an unnamed union comes with the table that names it");
        stored.name_members(&mut components);
    }
    let stored = &*stored;
    for c in components {
        if !canon.is_identity() {
            if maybe_fair_under(canon, c.moves, c.disabled, c.tasks) {
                return Err(Inconclusive);
            }
            continue;
        }
        if !fair(c.moves, c.disabled, c.tasks) {
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
        for (k, sub) in class_cycles(stored, &c, ignore_key) {
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
        let path =
            stored.initial.and_then(|i| stored.path_to(i, &|n| members.contains(&stored.fp(n)))).unwrap_or_default();
        found.target = Some(Target::Cycle { members, must_move, path, class });
    }
    Ok(trimmed)
}

/// The fair cycles of one lasso invariant inside component `c`: for each stuck situation
/// some member carries, the fair components of the members that carry it in which its
/// `must_move` tasks move (a cycle through them keeps the situation for ever).
/// `ignore_key`: the seeded defect `ReductionDefect::LassoClassIgnoresKey` (every member
/// of the component is kept).
pub(super) fn class_cycles<L: Label>(
    stored: &Stored<L>,
    c: &Component,
    ignore_key: bool,
) -> Vec<(CycleKey, Component)> {
    let mut seen: Vec<CycleKey> = c.nodes.iter().filter_map(|&n| stored.keys_of(n)).flatten().copied().collect();
    seen.sort_unstable();
    seen.dedup();
    let inside: std::collections::HashSet<u64, BuildHasherDefault<Identity>> =
        c.nodes.iter().map(|&n| u64::from(n)).collect();
    let mut out = Vec::new();
    for k in seen {
        let keep = |n: u32| {
            let n = u64::from(n);
            inside.contains(&n) && (ignore_key || stored.keys_of(n as u32).is_some_and(|v| v.binary_search(&k).is_ok()))
        };
        for sub in stored.sccs(keep) {
            if fair(sub.moves, sub.disabled, sub.tasks) && sub.moves & k.must_move == k.must_move {
                out.push((k, sub));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stateful::graph::{Edge, Node};

    fn nodes(v: &[(u64, u32, u32)]) -> Vec<Node> {
        v.iter().map(|&(fp, enabled, tasks)| Node { fp, enabled, tasks }).collect()
    }
    fn edges(v: &[(u64, u64, u8)]) -> Vec<Edge> {
        v.iter().map(|&(from, to, task)| Edge::plain(from, to, task)).collect()
    }

    /// The fair cycles of a lasso invariant inside a fair component. Two tasks; states 1-4 form
    /// one component. Key A is kept by 1 and 2, whose cycle moves task 0 only while task 1 is
    /// disabled at 2: a fair cycle of A. Key B is kept by 3 and 4, whose cycle moves task 0 only
    /// while task 1 is enabled at both: not fair (task 1 would have to move), so no cycle of
    /// B. Key C is kept by 1 alone, which has no transition to itself: no cycle. Key D is kept
    /// by 1 and 2 but must move task 1, which never moves between them: no cycle of D.
    #[test]
    fn cycles_of_a_lasso_invariant_inside_a_fair_component() {
        let key = |key, must_move| CycleKey { class: 0, key, must_move };
        let (a, b, c, d) = (key(1, 0b01), key(2, 0b01), key(3, 0b01), key(4, 0b10));
        let g = Graph {
            initial: Some(1),
            nodes: nodes(&[(1, 0b11, 0b11), (2, 0b01, 0b11), (3, 0b11, 0b11), (4, 0b11, 0b11)]),
            edges: edges(&[(1, 2, 0), (2, 1, 0), (1, 3, 1), (3, 4, 0), (4, 3, 0), (4, 1, 1)]),
            keys: vec![(1, a), (2, a), (3, b), (4, b), (1, c), (1, d), (2, d)],
            ..Graph::default()
        };
        let AnyStored::Wide(s) = AnyStored::new(vec![g], None) else { panic!("a cluster's graph is wide") };
        let comps = s.components();
        assert_eq!(comps.len(), 1);
        assert!(fair(comps[0].moves, comps[0].disabled, comps[0].tasks));
        let classed: Vec<(CycleKey, Vec<u64>)> = class_cycles(&s, &comps[0], false)
            .into_iter()
            .map(|(k, mut c)| {
                c.members.sort_unstable();
                (k, c.members)
            })
            .collect();
        assert_eq!(classed, vec![(a, vec![1, 2])]);
        // The seeded defect `ReductionDefect::LassoClassIgnoresKey` classes the whole
        // component under every key: this test sees it.
        let defective: Vec<(CycleKey, usize)> =
            class_cycles(&s, &comps[0], true).into_iter().map(|(k, c)| (k, c.members.len())).collect();
        assert_ne!(defective, vec![(a, 2)]);
        assert!(defective.contains(&(a, 4)), "{defective:?}");
    }
}
