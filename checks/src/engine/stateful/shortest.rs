//! Counterexamples: made shortest by a breadth-first pass once the depth-first search has found
//! a violation (for a cycle: the shortest prefix to the cycle, then the shortest fair cycle
//! through its entry), and replayed with the recorder on to print them.

use std::collections::{HashSet, VecDeque};

use mmmodel::model::Named;

use super::findings::{Findings, Target};
use super::space::{Divergence, Probe, Recorded, Runner};
use crate::engine::types::{Found, Replay};
use crate::monitor::{Checked, Violation};
use crate::spec::Spec;

/// Probes of one spec's state space.
pub(super) struct Shortest<'r, 'a, M: Checked> {
    pub runner: &'r mut Runner<M>,
    pub spec: &'a Spec<M>,
    /// States are named by their own fingerprints (an orbit census), not their orbits'.
    pub identity: bool,
}

impl<M: Checked> Shortest<'_, '_, M> {
    fn probe(&mut self, choices: &[u8]) -> Probe {
        self.runner.probe(self.spec, self.identity, choices)
    }

    /// Breadth-first from the state `start` leads to, over states `allowed` admits, carrying
    /// the mask of the tasks that have moved since: the shortest schedule (after `start`, at
    /// most `max_len` long) whose last transition satisfies `goal`; with `fresh`, only over
    /// transitions that read nothing stale (a cycle must be fair to memory too).
    fn bfs(
        &mut self,
        start: &[u8],
        max_len: usize,
        budget: u64,
        fresh: bool,
        allowed: &dyn Fn(u64) -> bool,
        goal: &dyn Fn(&Probe, u32) -> bool,
    ) -> Option<Vec<u8>> {
        let limit = self.runner.executions.saturating_add(budget);
        let first = self.probe(start);
        let (fp0, en0) = first.state?;
        let mut seen: HashSet<(u64, u32)> = HashSet::new();
        let mut queue: VecDeque<(u32, Option<u8>, u32, Vec<u8>)> = VecDeque::new();
        seen.insert((fp0, 0));
        queue.push_back((en0, first.by, 0, Vec::new()));
        while let Some((enabled, by, moved, path)) = queue.pop_front() {
            if path.len() >= max_len {
                continue;
            }
            if self.runner.executions >= limit {
                return None;
            }
            let mut e = enabled;
            while e != 0 {
                let t = e.trailing_zeros() as u8;
                e &= !(1 << t);
                let mut next = path.clone();
                next.push(t);
                let mut full = start.to_vec();
                full.extend_from_slice(&next);
                let probe = self.probe(&full);
                if fresh && probe.stale {
                    continue;
                }
                let moved = moved | 1 << by.unwrap_or(t);
                if goal(&probe, moved) {
                    return Some(next);
                }
                if let Some((fp, en)) = probe.state {
                    if allowed(fp) && seen.insert((fp, moved)) {
                        queue.push_back((en, probe.by, moved, next));
                    }
                }
            }
        }
        None
    }

    /// The shortest counterexample for what the depth-first search found: a breadth-first
    /// pass, given as many executions as the depth-first search took transitions (and at least
    /// 20,000); if it runs out, the depth-first search's own schedule (not always the shortest).
    pub fn shortest(&mut self, found: &mut Findings, error: &mut Option<String>) -> Option<Found> {
        let budget = found.transitions.max(20_000);
        match found.target.take()? {
            Target::Safety { invariant, path } => {
                let short =
                    self.bfs(&[], path.len(), budget, false, &|_| true, &|p, _| p.violated.contains(&invariant));
                let path = short.unwrap_or(path);
                let r = self.runner.record(self.spec, &path, None);
                if let Some(d) = r.diverged {
                    *error = Some(diverged_error(d));
                    return None;
                }
                Some(report(self.spec, found, error, r, path, None, None))
            }
            Target::Cycle { members, must_move, path, class } => {
                let inside = |fp: u64| members.contains(&fp);
                // The shortest way into the component.
                let prefix = self
                    .bfs(&[], path.len() + 1, budget, false, &|_| true, &|p, _| {
                        p.state.is_some_and(|(fp, _)| inside(fp))
                    })
                    .unwrap_or(path);
                let entry = match self.probe(&prefix) {
                    Probe { diverged: Some(d), .. } => {
                        *error = Some(diverged_error(d));
                        return None;
                    }
                    p => p.state?.0,
                };
                // The shortest fair cycle through the entry: back to it, every task that must
                // move having moved (inside the component, which is small).
                let cycle = self.bfs(&prefix, members.len() * 32 + 32, u64::MAX, true, &inside, &|p, moved| {
                    p.state.is_some_and(|(fp, _)| fp == entry) && moved & must_move == must_move
                })?;
                let mut choices = prefix.clone();
                choices.extend_from_slice(&cycle);
                let r = self.runner.record(self.spec, &choices, Some(prefix.len()));
                if let Some(d) = r.diverged {
                    *error = Some(diverged_error(d));
                    return None;
                }
                Some(report(self.spec, found, error, r, choices, Some(prefix.len()), Some(class)))
            }
        }
    }
}

/// The error of a counterexample whose schedule does not replay: the search's graph named a
/// path that is not an execution (two states shared a fingerprint: a collision, or an engine
/// bug).
fn diverged_error(d: Divergence) -> String {
    format!(
        "the search's counterexample does not replay: {d} (two different states shared a fingerprint in the \
         search: a hash collision, or an engine bug)"
    )
}

/// The violation of a lasso (the engine's own: no monitor sees an infinite execution).
fn lasso_violation<M: Checked>(at: usize) -> Violation {
    Violation::new(
        M::PROGRESS,
        Some(at),
        format!(
            "the execution can go on for ever: from #{at} on, the steps marked ~ bring it back to the state it was \
             in at #{at}, and repeat; every task that can move at every step of the cycle moves in it (a fair \
             cycle, found with no step bound)"
        ),
    )
}

/// A recorded schedule as a counterexample. `class`: for a cycle the search found, the
/// lasso invariant it classed it under (`Some(None)`: none); `None` for a replay.
///
/// A lasso is also judged by the trace form of the lasso invariants ([`Checked::lasso`]),
/// whose violations come first (they name the verdict). A cycle the search classed under
/// an invariant must be one the trace form names too: if not, the two forms disagree and
/// the outcome is an error. A cycle the search did not class keeps its verdict (the
/// search decided on the whole graph that no fair cycle of a lasso invariant exists; the
/// shortest lasso through a fair component is not always fair itself). A replay takes
/// the trace form's word.
pub(super) fn report<M: Checked>(
    spec: &Spec<M>,
    found: &mut Findings,
    error: &mut Option<String>,
    r: Recorded,
    choices: Vec<u8>,
    cycle: Option<usize>,
    class: Option<Option<u8>>,
) -> Found {
    let mut violations = r.violations;
    if cycle.is_some() {
        let from = r.cycle_from.unwrap_or(0);
        let invariants = &spec.invariants;
        let judged: Vec<Violation> = r
            .trace
            .events::<M::Event>()
            .map(|events| M::lasso(&spec.cfg, events, from))
            .unwrap_or_default()
            .into_iter()
            .filter(|v| invariants.iter().any(|i| i.name() == v.invariant))
            .collect();
        let keep: Vec<Violation> = match class {
            None => {
                for v in &judged {
                    *found.violated.entry(v.invariant).or_insert(0) += 1;
                    found.first_violation.entry(v.invariant).or_insert(found.transitions);
                }
                judged
            }
            Some(None) => Vec::new(),
            Some(Some(c)) => {
                let want = M::LASSO.get(c as usize).map(|i| i.name()).unwrap_or("?");
                let (named, _): (Vec<Violation>, Vec<Violation>) =
                    judged.into_iter().partition(|v| v.invariant == want);
                if named.is_empty() && error.is_none() {
                    *error = Some(format!(
                        "the search found a fair cycle of {want} (its online form), but the lasso it reports is not \
                         one by the trace form of {want} (an engine or monitor bug)"
                    ));
                }
                named
            }
        };
        violations.splice(0..0, keep);
        violations.push(lasso_violation::<M>(from));
    } else if r.deadlock {
        violations.push(Violation::new(
            M::PROGRESS,
            r.trace.len().checked_sub(1),
            "no task can move and some have not finished: they never will (a deadlock)".into(),
        ));
    }
    Found {
        replay: Replay::Schedule { choices, cycle },
        trace: r.trace,
        violations,
        mutation_reached: r.mutation_reached,
        cycle_from: r.cycle_from,
        exits: r.exits,
    }
}

#[cfg(test)]
mod tests {
    use mmmodel::reclaim::KswapdStall;

    use super::*;
    use crate::engine::stateful::store::FpSet;
    use crate::engine::types::{Memory, Options};

    fn spec() -> Spec<KswapdStall> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/kswapd-stall/recheck-2kswapd-writer-stateful.toml");
        let sc = crate::scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
        let spec = sc.spec.as_any().downcast_ref::<Spec<KswapdStall>>().expect("a kswapd-stall spec");
        spec.clone()
    }

    /// The outcome of making `target` shortest: a target as the search leaves it, whose
    /// schedule may name a task that cannot move (as one read off a graph whose states a
    /// defect merged can).
    fn shortest_of(target: Target) -> (Option<Found>, Option<String>) {
        let spec = spec();
        let mut runner = Runner::new(&spec, &Options::default(), &[], Vec::new(), false, Memory::Sc);
        let mut found = Findings { target: Some(target), ..Findings::default() };
        let mut error = None;
        let out = Shortest { runner: &mut runner, spec: &spec, identity: false }.shortest(&mut found, &mut error);
        (out, error)
    }

    /// A task that can move at the scenario's initial state, and one that cannot move at the
    /// state `before` leads to.
    fn choices(before: &[u8]) -> (u8, u8) {
        let spec = spec();
        let mut runner = Runner::new(&spec, &Options::default(), &[], Vec::new(), false, Memory::Sc);
        let (_, first) = runner.probe(&spec, false, &[]).state.expect("the initial state");
        let (_, there) = runner.probe(&spec, false, before).state.expect("a state");
        let cannot = (0..32u8).find(|t| there & 1 << t == 0).expect("a task that cannot move");
        (first.trailing_zeros() as u8, cannot)
    }

    #[test]
    fn a_safety_counterexample_that_does_not_replay_is_an_error_not_a_panic() {
        let (can, _) = choices(&[]);
        let (_, cannot) = choices(&[can]);
        // The schedule replays up to its second choice, which cannot be taken.
        let (out, error) = shortest_of(Target::Safety { invariant: "stall-once", path: vec![can, cannot] });
        assert!(out.is_none());
        let e = error.expect("an error");
        assert!(e.starts_with("the search's counterexample does not replay"), "{e}");
        assert!(e.contains(&format!("choice 2 (counting from 1) names task {cannot}, which cannot move")), "{e}");
    }

    #[test]
    fn a_cycle_whose_path_does_not_replay_is_an_error_not_a_panic() {
        let (_, cannot) = choices(&[]);
        // No state is a member: the way into the component is the search's own path, whose
        // first choice cannot be taken.
        let target = Target::Cycle { members: FpSet::default(), must_move: 0, path: vec![cannot], class: None };
        let (out, error) = shortest_of(target);
        assert!(out.is_none());
        let e = error.expect("an error");
        assert!(e.starts_with("the search's counterexample does not replay"), "{e}");
    }

    #[test]
    fn a_safety_counterexample_that_replays_is_reported() {
        // The control: a schedule of the scenario's executions replays, with no error (the
        // breadth-first pass finds no violation of a passing scenario: the path stays).
        let (can, _) = choices(&[]);
        let (out, error) = shortest_of(Target::Safety { invariant: "stall-once", path: vec![can] });
        assert_eq!(error, None);
        assert_eq!(out.expect("a counterexample").replay, Replay::Schedule { choices: vec![can], cycle: None });
    }
}
