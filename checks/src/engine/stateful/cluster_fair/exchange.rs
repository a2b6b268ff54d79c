//! The distributed fair-cycle pass's phases over timely dataflow: each a loop of messages
//! that ends when timely's progress tracking says none is left (`mod.rs` says how the pass
//! works).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Capability, Concat, ConnectLoop, Feedback, Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};

use super::msg::{Msg, Phase, What};
use super::pass::Pass;

/// Run one phase: this worker starts with `start`, and the phase is over when no message is
/// left anywhere.
pub(super) fn phase(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, start: Vec<Msg>) {
    let mut input: InputHandle<u64, CapacityContainerBuilder<Vec<Msg>>> = InputHandle::new();
    let probe = ProbeHandle::new();
    let p = Rc::clone(pass);
    let (peers, local_bits) = (worker.peers(), pass.borrow().local_bits);
    worker.dataflow::<u64, _, _>(|scope| {
        let begin = scope.input_from(&mut input);
        let (handle, cycle) = scope.feedback::<Vec<Msg>>(1u64);
        begin
            .concat(cycle)
            .unary_frontier::<CapacityContainerBuilder<Vec<Msg>>, _, _, _>(
                Exchange::new(move |m: &Msg| m.to(peers, local_bits)),
                "fair-pass",
                move |_, _| {
                    // The messages of a time are handled together once no more of that time can
                    // come (one batch a time and worker, not one per message that arrived).
                    let mut stash: BTreeMap<u64, (Capability<u64>, Vec<Msg>)> = BTreeMap::new();
                    move |(input, frontier), output| {
                        input.for_each(|cap, data| {
                            let Some(&t) = cap.least() else { return };
                            // A worker's own fan-out goes on at once.
                            let (mut out, mut rest) = (Vec::new(), Vec::new());
                            {
                                let mut p = p.borrow_mut();
                                for m in data.drain(..) {
                                    match m {
                                        What::Seed(..) => p.handle(m, &mut out),
                                        _ => rest.push(m),
                                    }
                                }
                            }
                            if !out.is_empty() {
                                output.session(&cap).give_iterator(out.into_iter());
                            }
                            if !rest.is_empty() {
                                stash.entry(t).or_insert_with(|| (cap.delayed(&t, 0), Vec::new())).1.append(&mut rest);
                            }
                        });
                        while let Some(t) = stash.first_key_value().map(|(&t, _)| t) {
                            if frontier.less_equal(&t) {
                                break;
                            }
                            let (cap, mut msgs) = stash.remove(&t).expect("the first time");
                            // In the order of the states they are about (this worker's states are
                            // sorted by fingerprint, and numbered in that order): the arrays are
                            // then walked, not jumped through. The messages of one time commute.
                            msgs.sort_unstable_by_key(What::order);
                            let mut out: Vec<Msg> = Vec::new();
                            let mut p = p.borrow_mut();
                            for m in msgs {
                                p.handle(m, &mut out);
                            }
                            if !out.is_empty() {
                                output.session(&cap).give_iterator(out.into_iter());
                            }
                        }
                    }
                },
            )
            .probe_with(&probe)
            .connect_loop(handle);
    });
    for m in start {
        input.send(m);
    }
    drop(input);
    while !probe.done() {
        worker.step_or_park(None);
    }
}

/// The sum over every worker of `v`.
pub(super) fn sum(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, v: u64) -> u64 {
    let peers = worker.peers() as u64;
    {
        let mut p = pass.borrow_mut();
        p.sum = 0;
        p.phase = None;
    }
    phase(worker, pass, (0..peers).map(|to| What::Sum(to as u32, v)).collect());
    pass.borrow().sum
}

/// Run a fan-out phase through every state of every worker still in the graph.
pub(super) fn fan_out(worker: &mut timely::worker::Worker, pass: &Rc<RefCell<Pass>>, p: Phase) {
    let me = worker.index() as u64;
    pass.borrow_mut().phase = Some(p);
    phase(worker, pass, vec![What::Seed(0, me as u32)]);
}
