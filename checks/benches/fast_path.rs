//! What being checkable costs at run time.
//!
//! (a) `fast_path`: `remove_mapping_list()` for a kswapd whose `spin_trylock(tree_lock)`
//!     succeeds (no cmpxchg, no stall), as the model runs on the `std` platform with the
//!     runtime ghost (`NoGhost`), against a hand-written std-only twin of the same function.
//!     Both run in the same process, same run. Target: within 5 %.
//! (b) `contended`: one whole run of a contended configuration (2 kswapds and a writer on real
//!     threads, real HZ/100 timeouts with a 10 us jiffy), per variant: the contended path end to
//!     end, thread start-up included.
//!
//! Run: `cargo bench -p mmcheck --bench fast_path`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use mmmodel::ghost::NoGhost;
use mmmodel::kernel::sched::{Start, TimerModel};
use mmmodel::model::{run, Named};
use mmmodel::platform::Std;
use mmmodel::reclaim::vmscan::{remove_mapping_list, MappingList};
use mmmodel::reclaim::{self, Event, Kernel, KswapdStall, Role, Variant};

/// The runtime build of the model: real threads, no checking.
type Runtime = Std<NoGhost<Event>>;

/// The twin: the same fast path written directly on std atomics, with no platform, no
/// ghost, no events.
struct Twin {
    kswapd_exclusive: AtomicI32,
    tree_lock: AtomicBool,
    nrpages: AtomicU64,
}

impl Twin {
    #[inline(never)]
    fn remove_mapping_list(&self, nid: i32, is_kswapd: bool, nr_pages: u32) {
        if !is_kswapd || nid == self.kswapd_exclusive.load(Relaxed) {
            self.lock();
        } else if !self.trylock() {
            // Contended path (not taken in this benchmark): claim or stall, then spin.
            let _ = self.kswapd_exclusive.compare_exchange(-1, nid, AcqRel, Acquire);
            self.lock();
        }
        self.nrpages.fetch_sub(nr_pages as u64, Relaxed);
        self.tree_lock.store(false, Release);
    }
    #[inline(always)]
    fn trylock(&self) -> bool {
        !self.tree_lock.load(Relaxed) && self.tree_lock.compare_exchange(false, true, Acquire, Relaxed).is_ok()
    }
    #[inline(always)]
    fn lock(&self) {
        while self.tree_lock.compare_exchange_weak(false, true, Acquire, Relaxed).is_err() {
            std::hint::spin_loop();
        }
    }
}

#[inline(never)]
fn model_fast_path(k: &Kernel<Runtime>, cur: &mmmodel::kernel::sched::Current<'_, Runtime>) {
    remove_mapping_list(k, cur, MappingList { nid: 0, nr_pages: 1 }, true);
}

fn fast_path(c: &mut Criterion) {
    let cfg = reclaim::Config {
        variant: Variant::Recheck,
        mutation: None,
        roles: vec![Role::Kswapd { node: 0, batches: 1, pages: 1, balances: true }],
        timer: TimerModel::Real { jiffy: Duration::from_micros(10) },
    };
    let k = Kernel::<Runtime>::new(cfg, Arc::new(NoGhost::default()));
    let cur = k.sched.enter(0);
    let twin = Twin {
        kswapd_exclusive: AtomicI32::new(-1),
        tree_lock: AtomicBool::new(false),
        nrpages: AtomicU64::new(1 << 40),
    };
    let mut g = c.benchmark_group("fast_path");
    g.bench_function("model_on_std", |b| b.iter(|| model_fast_path(black_box(&k), black_box(&cur))));
    g.bench_function("hand_written_twin", |b| b.iter(|| black_box(&twin).remove_mapping_list(black_box(0), true, 1)));
    g.finish();
}

fn contended(c: &mut Criterion) {
    let mut g = c.benchmark_group("contended_run");
    g.sample_size(30);
    for &v in Variant::ALL {
        let cfg = reclaim::Config {
            variant: v,
            mutation: None,
            roles: vec![
                Role::Kswapd { node: 0, batches: 20, pages: 1, balances: true },
                Role::Kswapd { node: 1, batches: 20, pages: 1, balances: true },
                Role::Writer { holds: 20, spins: 100 },
            ],
            timer: TimerModel::Real { jiffy: Duration::from_micros(10) },
        };
        g.bench_function(v.name(), |b| {
            b.iter(|| run::<KswapdStall, Runtime>(black_box(&cfg), Arc::new(NoGhost::default()), &Start::default()))
        });
    }
    g.finish();
}

criterion_group!(benches, fast_path, contended);
criterion_main!(benches);
