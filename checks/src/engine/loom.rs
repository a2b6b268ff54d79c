//! The loom engine: exhaustive exploration (DPOR), optionally preemption-bounded.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use mmmodel::platform::Loom;

use super::collect::{execute_one, install_quiet_panic_hook, settle_panic, Collector, StopExploring};
use super::types::{Engine, Options, Outcome};
use crate::monitor::Checked;
use crate::recorder::Recorder;
use crate::spec::Spec;

/// Loom's per-execution branch limit. The model's own step bound (`Bounds::step_bound`)
/// ends a runaway loop long before this.
pub const MAX_BRANCHES: usize = 200_000;

pub fn explore<M: Checked>(spec: &Spec<M>, preemption_bound: Option<usize>, opts: &Options, engine: Engine) -> Outcome {
    let c = Collector::new(spec.clone(), opts.clone());
    let mut b = loom::model::Builder::new();
    // Builder::new() reads LOOM_* environment variables; the scenario decides instead.
    b.preemption_bound = preemption_bound;
    b.max_branches = MAX_BRANCHES;
    b.max_permutations = None;
    b.max_duration = None;
    b.checkpoint_file = None;
    b.log = false;
    b.location = false;
    let body = Arc::clone(&c);
    install_quiet_panic_hook();
    let r = catch_unwind(AssertUnwindSafe(|| {
        b.check(move || {
            if body.should_stop() {
                std::panic::panic_any(StopExploring);
            }
            execute_one::<M, Loom<Recorder<M::Event>>>(&body);
        })
    }));
    match r {
        Ok(()) => c.outcome(engine, true, None),
        Err(p) => settle_panic(&c, engine, p),
    }
}
