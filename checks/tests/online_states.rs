//! How many distinct online monitor states a scenario's executions reach: the factor the
//! online state can multiply a stateful search's stored states by. A measurement, not a
//! check (ignored by default):
//!
//! ```text
//! cargo test --release --test online_states -- --ignored --nocapture
//! ```
//!
//! Every execution of the scenario's loom exploration is replayed through the model's online
//! monitor; the distinct states after every step, at the end of each execution, and the
//! distinct (step number, state) pairs are counted.

mod common;

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use mmcheck::engine::Engine;
use mmcheck::monitor::online::{Found, Online};
use mmcheck::monitor::Checked;
use mmcheck::recorder::Recorder;
use mmcheck::scenario;
use mmcheck::spec::Spec;
use mmmodel::compaction::Compaction;
use mmmodel::kernel::sched::Start;
use mmmodel::model::run;
use mmmodel::platform::Loom;
use mmmodel::reclaim::KswapdStall;

#[derive(Default)]
struct Counts<S> {
    executions: u64,
    steps: u64,
    /// Every state after a step (and the initial one).
    states: HashSet<S>,
    /// The state at the end of each execution.
    ends: HashSet<S>,
    /// (events so far, state): the states a search would store at the same depth.
    at_depth: HashSet<(usize, S)>,
}

fn measure<M: Checked>(rel: &str)
where
    M::Online: Hash + Eq,
{
    let sc = scenario::load(&common::scenarios_dir().join(rel)).unwrap_or_else(|e| panic!("{e}"));
    let spec = sc.spec.as_any().downcast_ref::<Spec<M>>().expect("the scenario's model").clone();
    let Some(Engine::Loom { preemption_bound }) = sc.engines.iter().copied().find(|e| matches!(e, Engine::Loom { .. }))
    else {
        panic!("{rel}: no loom engine")
    };
    let counts = Arc::new(Mutex::new(Counts::<M::Online>::default()));
    let c = Arc::clone(&counts);
    let mut b = loom::model::Builder::new();
    b.preemption_bound = preemption_bound;
    b.max_branches = mmcheck::engine::loom::MAX_BRANCHES;
    b.max_permutations = None;
    b.max_duration = None;
    b.checkpoint_file = None;
    b.check(move || {
        let rec = Arc::new(Recorder::new(M::roles(&spec.cfg).len(), spec.bounds));
        let ran = run::<M, Loom<Recorder<M::Event>>>(&spec.cfg, Arc::clone(&rec), &Start::default());
        let events = rec.take_events();
        let mut s = M::Online::default();
        let mut found = Found::<M>::default();
        let mut c = c.lock().unwrap();
        c.executions += 1;
        c.states.insert(s.clone());
        c.at_depth.insert((0, s.clone()));
        for (i, (pid, ev)) in events.iter().enumerate() {
            s.step(&spec.cfg, *pid, ev, &mut found);
            c.steps += 1;
            c.states.insert(s.clone());
            c.at_depth.insert((i + 1, s.clone()));
        }
        s.end(&spec.cfg, &ran.fin, &mut found);
        c.ends.insert(s);
    });
    let c = counts.lock().unwrap();
    println!(
        "{rel}: {} executions, {} steps; distinct online states: {} over all steps, {} at the ends of executions, {} \
         (depth, state) pairs",
        c.executions,
        c.steps,
        c.states.len(),
        c.ends.len(),
        c.at_depth.len()
    );
}

#[test]
#[ignore = "measurement: prints the number of distinct online states of some loom scenarios"]
fn distinct_online_states() {
    measure::<KswapdStall>("kswapd-stall/recheck-2kswapd-writer.toml");
    measure::<KswapdStall>("kswapd-stall/waitqueue-v1-keeps-the-rest.toml");
    measure::<KswapdStall>("kswapd-stall/directcongest-v1-keeps-the-rest.toml");
    measure::<KswapdStall>("kswapd-stall/recheck-congestion-tagged.toml");
    measure::<Compaction>("compaction/finishcontend-v3-4pages-finishes-pageblock.toml");
}
