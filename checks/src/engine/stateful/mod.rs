//! The stateful engine: an explicit-state search over the protocol code itself.
//!
//! Loom and shuttle re-run whole executions and keep no state, so the same state reached by
//! two interleavings is explored twice, and every shared operation a model adds multiplies
//! their work. This engine runs the same model code on the stateful platform
//! (`mmmodel::platform::stateful`: every task a coroutine, every scheduling choice ours) and,
//! like SPIN and TLC, stores a 64-bit fingerprint of every state it has explored and prunes a
//! branch at a state it has seen: the state space is explored, not the execution tree.
//!
//! * **The state** is the runtime's fingerprint (every shared object's value, every lock's
//!   owner, every park token, every task's pending operation and local hash) combined with the
//!   ghost's ([`ghost`]: the online monitors, who has finished, who sleeps, whether the
//!   execution was ended). A task's local hash is the hash of what it has observed and done;
//!   at a loop head the model's loop summary replaces it (docs/model.md argues why this is
//!   sound).
//! * **The search** ([`search`]) is a depth-first search over every scheduling choice at every
//!   state. Since a program's stack cannot be saved, a state is reached again by replaying the
//!   choices that lead to it from the start (each execution replays a known prefix, then
//!   explores new transitions until it reaches a known state, and runs to its end with a fixed
//!   policy). Tarjan's algorithm runs along the search: every strongly connected component of
//!   the state graph is checked for a *fair* cycle (every task that is enabled in all of its
//!   states takes a step in it), which is a `progress` violation: an execution that can go on
//!   for ever. With that, `progress` is decided exactly, with no step bound.
//! * **Counterexamples** are made shortest by a breadth-first pass once the depth-first search
//!   has found a violation (for a cycle: the shortest prefix to the cycle, then the shortest
//!   fair cycle through its entry), and replayed with the recorder on to print them.
//! * **Memory model**: sequentially consistent. Every atomic operation is one step in one
//!   global order; fences order nothing more. Weak-memory outcomes are loom's job.

pub mod cluster;
pub(crate) mod ghost;
mod parallel;
mod search;
pub mod symmetry;
mod table;

pub use search::available_memory;

/// Bytes of the visited-state table per state stored, at the table's emptiest (just after it
/// doubled), for the larger of the two tables: one search's (`table.rs`: a 16-byte slot, a
/// 64-bit fingerprint beside a 32-bit index, doubling at 3/4 full: 42 bytes) and the workers'
/// shared one (a hash table slot with a control byte, doubling at 7/8 full: 29 bytes).
pub const BYTES_PER_STATE: u64 = {
    let one = table::SLOT_BYTES * 8 / 3;
    let shared = search::BYTES_PER_SLOT * 8 / 7 * 2;
    if one > shared {
        one
    } else {
        shared
    }
};

use crate::engine::{Engine, Options, Outcome, Reduce};
use crate::monitor::Checked;
use crate::spec::Spec;

/// Explore `spec` with the stateful engine.
pub fn explore<M: Checked>(spec: &Spec<M>, engine: Engine, opts: &Options) -> Outcome {
    let Engine::Stateful { max_states } = engine else { unreachable!("the stateful engine is Engine::Stateful") };
    let cycles = spec.invariants.contains(&M::PROGRESS) || M::LASSO.iter().any(|i| spec.invariants.contains(i));
    if opts.cluster.is_some() && cycles && opts.reduce.symmetry {
        // A quotient graph that may hold a fair cycle is decided again without symmetry, which
        // every process of a cluster would have to agree on: a cluster searches without it.
        let plain = Options { reduce: Reduce { symmetry: false, ..opts.reduce }, ..opts.clone() };
        let (mut out, _) = search::Search::new(spec, engine, &plain, max_states).run();
        if let Some(st) = &mut out.stats {
            st.symmetry_not_applied =
                Some("a cluster decides progress on the whole state graph, without symmetry (docs/model.md, \"Many machines\")");
        }
        return out;
    }
    let (out, refuted) = search::Search::new(spec, engine, opts, max_states).run();
    if !refuted {
        return out;
    }
    // The quotient graph may hold a fair cycle: decide `progress` on the whole graph.
    let full = Options {
        max_duration: opts.max_duration.map(|d| d.saturating_sub(std::time::Duration::from_secs_f64(out.seconds))),
        shortest_budget: opts.shortest_budget,
        replay: None,
        progress: opts.progress.clone(),
        check_online: opts.check_online,
        history_only: opts.history_only,
        reduce: Reduce { symmetry: false, ..opts.reduce },
        orbit_census: false,
        snapshot_cap: opts.snapshot_cap,
        workers: opts.workers,
        cluster: opts.cluster.clone(),
    };
    let (mut again, _) = search::Search::new(spec, engine, &full, max_states).run();
    again.executions += out.executions;
    again.seconds += out.seconds;
    if let Some(st) = &mut again.stats {
        st.symmetry_not_applied = Some(
            "a component of the quotient graph may hold a fair cycle (the masks closed under the group pass): \
             decided again without symmetry",
        );
    }
    again
}

/// A schedule as text: one character per choice (task 0–31: `0`–`9`, `a`–`v`), and for a
/// lasso the cycle after a `.`.
pub fn schedule_text(choices: &[u8], cycle: Option<usize>) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let mut s = String::with_capacity(choices.len() + 1);
    for (i, &c) in choices.iter().enumerate() {
        if cycle == Some(i) {
            s.push('.');
        }
        s.push(DIGITS[c as usize] as char);
    }
    s
}

/// The inverse of [`schedule_text`].
pub fn parse_schedule(s: &str) -> Option<(Vec<u8>, Option<usize>)> {
    let mut choices = Vec::with_capacity(s.len());
    let mut cycle = None;
    for ch in s.chars() {
        match ch {
            '.' if cycle.is_none() => cycle = Some(choices.len()),
            '0'..='9' => choices.push(ch as u8 - b'0'),
            'a'..='v' => choices.push(ch as u8 - b'a' + 10),
            _ => return None,
        }
    }
    if cycle == Some(choices.len()) {
        return None;
    }
    Some((choices, cycle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_round_trip_and_garbage_is_refused() {
        let c = vec![0, 1, 31, 10, 2];
        assert_eq!(schedule_text(&c, None), "01va2");
        assert_eq!(parse_schedule("01va2"), Some((c.clone(), None)));
        assert_eq!(schedule_text(&c, Some(3)), "01v.a2");
        assert_eq!(parse_schedule("01v.a2"), Some((c, Some(3))));
        for bad in ["01w", "0..1", "01.", "A"] {
            assert_eq!(parse_schedule(bad), None, "{bad}");
        }
    }
}
