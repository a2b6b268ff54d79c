//! The job market of `--workers N` (stateright's and SPIN's hand-off): a worker with nothing to
//! do says so, and a busy one gives away the transitions left to explore at the shallowest
//! state of its search path, as the schedule that leads there plus a task mask ([`Job`]). The
//! receiver replays the schedule and searches on from there. A state's schedule is all a job
//! needs: states are never serialised. The market also carries the stop signal: the first
//! decisive violation, budget or error stops every worker.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};

use crate::engine::types::ReductionDefect;

/// Transitions left to explore at one state: the schedule that leads there, and the tasks.
#[derive(Debug, Clone)]
pub(super) struct Job {
    pub prefix: Vec<u8>,
    pub todo: u32,
}

#[derive(Default)]
struct Stall {
    jobs: Vec<Job>,
    idle: usize,
    done: bool,
}

/// What the workers of one search trade in, and their stop signal.
pub(super) struct Market {
    /// Set when any worker found a decisive violation, hit a budget or failed: every worker
    /// stops at its next scheduling point.
    pub stop: AtomicBool,
    /// Workers waiting for a job, and jobs offered and not taken yet.
    hungry: AtomicUsize,
    offered: AtomicUsize,
    stall: Mutex<Stall>,
    wake: Condvar,
    workers: usize,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Market {
    pub fn new(workers: usize) -> Self {
        Market {
            stop: AtomicBool::new(false),
            hungry: AtomicUsize::new(0),
            offered: AtomicUsize::new(0),
            stall: Mutex::new(Stall::default()),
            wake: Condvar::new(),
            workers,
        }
    }

    /// How many workers search.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether the search was stopped.
    pub fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// Whether a worker waits for a job that nobody has offered yet (cheap: two loads).
    pub fn wanted(&self) -> bool {
        self.hungry.load(Relaxed) > self.offered.load(Relaxed)
    }

    /// Offer a job to a waiting worker.
    pub fn give(&self, job: Job) {
        let mut m = lock(&self.stall);
        self.offered.fetch_add(1, Relaxed);
        m.jobs.push(job);
        drop(m);
        self.wake.notify_one();
    }

    /// Stop every worker (a violation, a budget, an error).
    pub fn halt(&self) {
        self.stop.store(true, Relaxed);
        let mut m = lock(&self.stall);
        m.done = true;
        drop(m);
        self.wake.notify_all();
    }

    /// Wait for a job; `None` once every worker is waiting and no job is left (the search is
    /// complete) or the search was stopped.
    pub fn take(&self) -> Option<Job> {
        let mut m = lock(&self.stall);
        m.idle += 1;
        self.hungry.fetch_add(1, Relaxed);
        loop {
            if m.done || self.stop.load(Relaxed) {
                return None;
            }
            if let Some(job) = m.jobs.pop() {
                m.idle -= 1;
                self.hungry.fetch_sub(1, Relaxed);
                self.offered.fetch_sub(1, Relaxed);
                return Some(job);
            }
            if m.idle == self.workers {
                m.done = true;
                drop(m);
                self.wake.notify_all();
                return None;
            }
            m = self.wake.wait(m).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Market {
    /// Give `job` (the transitions left at the shallowest state of a worker's path that has
    /// some) to a waiting worker.
    pub fn give_away(&self, mut job: Job, defect: Option<ReductionDefect>) {
        if defect == Some(ReductionDefect::WorkersLoseGivenTransition) {
            job.todo &= job.todo - 1; // the seeded defect: the first transition of the job is lost
        }
        if job.todo != 0 {
            self.give(job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_market_ends_when_every_worker_waits() {
        let s = Market::new(2);
        std::thread::scope(|sc| {
            let a = sc.spawn(|| s.take().map(|j| j.todo));
            // Give the job only once the other worker waits (or right away: either way it gets it).
            s.give(Job { prefix: vec![0], todo: 0b10 });
            assert_eq!(a.join().unwrap(), Some(0b10));
        });
        std::thread::scope(|sc| {
            let a = sc.spawn(|| s.take().is_none());
            let b = sc.spawn(|| s.take().is_none());
            assert!(a.join().unwrap() && b.join().unwrap());
        });
    }
}
