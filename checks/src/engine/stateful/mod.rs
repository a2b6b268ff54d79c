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
//! * **Memory model**: sequentially consistent by default (every atomic operation is one step in
//!   one global order), or with `memory = "lkmm"` the kernel's memory model without load
//!   buffering (`lkmm` in the platform's stateful runtime; docs/model.md).
//!
//! # Layers
//!
//! One concern a file; imports go down this list, never up (checks/tests/layers.rs keeps it so):
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`explore`]: the search, and the search again without symmetry when it cannot decide |
//! | `search.rs` | the search shell: builds a search (space, explorer, driver), runs it on one thread, many or a cluster, reports |
//! | `cluster_run.rs`, `cluster.rs` | the cluster over timely dataflow; its connections and hostfile |
//! | `workers.rs` | the thread pool, the [`workers::Worker`] trait a worker implements, the merge of what workers found |
//! | `replay.rs`, `snapshots.rs` | the two drivers: reach a state again by replaying its schedule, or by restoring a snapshot |
//! | `dfs/` | the three explorers behind one `Explorer` trait: `tarjan.rs`, `sleep.rs`, `shared.rs` |
//! | `shortest.rs` | the breadth-first passes that make a counterexample shortest, and the report |
//! | `fair.rs`, `graph.rs` | the fairness test (one copy); the stored graph, its components, paths in it |
//! | `findings.rs` | the counters and first violations, one `merge` |
//! | `por.rs`, `persistent.rs`, `symmetry.rs` | the independence relation; where persistent sets of one start apply; the group, its canonical maps and the census |
//! | `market.rs`, `store.rs`, `table.rs` | the workers' job market; the visited tables and the memory budget |
//! | `space.rs`, `ghost.rs` | the state space: executions on the platform, fingerprints, probes, recordings; the online monitors' half of a state |
//! | `schedule.rs` | schedules as text (replay tokens) |

mod closed;
pub mod cluster;
mod cluster_fair;
mod cluster_run;
mod dfs;
mod fair;
mod findings;
pub(crate) mod ghost;
mod graph;
mod links;
mod market;
mod persistent;
mod por;
mod replay;
pub mod schedule;
mod search;
mod shortest;
mod snapshots;
mod space;
mod store;
mod stored;
pub mod symmetry;
mod table;
mod trim;
mod workers;

pub use schedule::{parse_schedule, schedule_text};
pub use store::{available_memory, BYTES_PER_STATE};

use crate::engine::types::{Engine, Options, Outcome, Reduce};
use crate::monitor::Checked;
use crate::spec::Spec;

/// Explore `spec` with the stateful engine.
pub fn explore<M: Checked>(spec: &Spec<M>, engine: Engine, opts: &Options) -> Outcome {
    let Engine::Stateful { max_states, .. } = engine else { unreachable!("the stateful engine is Engine::Stateful") };
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
        live_census: opts.live_census,
        check_inert: opts.check_inert,
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
