//! Finite states under `lkmm`: message collection, and the hash of the memory
//! (the [`Memory::collect`] and [`Memory::hash`] halves of the module docs' "Finite states").

use super::view::{mix, View};
use super::{Defect, Memory, Msg, Task};

impl Memory {
    /// Drop the messages no live task can read or store before any more, and round every view
    /// entry below the first kept message up to it. A task waiting to join others is left out:
    /// it accesses nothing until it has joined every task it waits for, and the join raises
    /// its bounds to theirs ([`Self::join`]), which only grow; so a message dropped while it
    /// waited lay below the bounds of a task it will have joined (or, with none of them live,
    /// below the last store, which the task that made it has in its coherence view).
    pub fn collect(&mut self) {
        let wrong = Defect::CollectDropsReadable.on();
        for x in 0..self.locs.len() {
            let last = self.last_rank(x);
            let bounds = self.tasks.iter().filter(|k| k.live && !k.joining).map(|k| k.lb_read(x).min(k.lb_write(x)));
            // (Seeded defect: the most advanced task's bound, not the least advanced one's.)
            let k = if wrong { bounds.max() } else { bounds.min() }.unwrap_or(last).min(last);
            if k == 0 {
                continue;
            }
            self.locs[x].drain(..k as usize);
            for msgs in &mut self.locs {
                for m in msgs.iter_mut() {
                    m.view.drop_below(x, k);
                    if let Some(o) = &mut m.own {
                        o.drop_below(x, k);
                    }
                }
            }
            self.g.drop_below(x, k);
            for t in &mut self.tasks {
                t.for_each_view(|v| v.drop_below(x, k));
            }
        }
    }

    /// About the bytes it holds (for the snapshot budget: a deep execution under `lkmm` keeps
    /// a copy of the memory at every snapshot, and the messages pile up while tasks loop).
    pub fn bytes(&self) -> usize {
        let opt = |v: &Option<View>| v.as_ref().map_or(0, View::bytes);
        let msgs: usize =
            self.locs.iter().flatten().map(|m| core::mem::size_of::<Msg>() + m.view.bytes() + opt(&m.own)).sum();
        let tasks: usize = self
            .tasks
            .iter()
            .map(|k| {
                core::mem::size_of::<Task>()
                    + [&k.coh, &k.rd, &k.wr, &k.rv, &k.seen, &k.own, &k.carry, &k.token]
                        .iter()
                        .map(|v| v.bytes())
                        .sum::<usize>()
                    + opt(&k.before)
                    + opt(&k.last_rmw)
                    + opt(&k.last_lock)
                    + k.last_unlock.as_ref().map_or(0, |(a, b)| a.bytes() + b.bytes())
            })
            .sum();
        core::mem::size_of::<Self>() + msgs + tasks + self.g.bytes()
    }

    /// The memory as one word: every location's messages with their views, `g`, and every
    /// task's views. A finished task's local hash is dropped from the fingerprint, but its
    /// views are not: the task that joins it takes them ([`Memory::join`]), so two states
    /// that differ only there have different futures. They are kept in the canonical form of
    /// [`Memory::finish`] until the join, and emptied by it.
    pub fn hash(&self) -> u64 {
        let mut h = 0x243f_6a88_85a3_08d3u64;
        for msgs in &self.locs {
            h = mix(h, msgs.len() as u64);
            for m in msgs {
                h = mix(h, m.val ^ (m.glued as u64) << 63);
                m.view.hash_into(&mut h);
                if let Some(o) = &m.own {
                    o.hash_into(&mut h);
                }
            }
        }
        self.g.hash_into(&mut h);
        for (i, k) in self.tasks.iter().enumerate() {
            // A finished task's views are what a join of it will take (kept in the canonical
            // form of [`Memory::finish`], and emptied by the join).
            h = mix(h, (i as u64) << 1 | k.live as u64);
            let opt = |v: &Option<View>, h: &mut u64| match v {
                Some(v) => {
                    *h = mix(*h, 1);
                    v.hash_into(h);
                }
                None => *h = mix(*h, 2),
            };
            for v in [&k.coh, &k.rd, &k.wr, &k.rv, &k.seen, &k.own, &k.carry, &k.token] {
                v.hash_into(&mut h);
            }
            opt(&k.before, &mut h);
            opt(&k.last_rmw, &mut h);
            opt(&k.last_lock, &mut h);
            match &k.last_unlock {
                Some((a, b)) => {
                    a.hash_into(&mut h);
                    b.hash_into(&mut h);
                }
                None => h = mix(h, 3),
            }
        }
        h
    }
}

impl Task {
    pub(super) fn for_each_view(&mut self, mut f: impl FnMut(&mut View)) {
        for v in [&mut self.coh, &mut self.rd, &mut self.wr, &mut self.rv, &mut self.seen, &mut self.own] {
            f(v);
        }
        f(&mut self.carry);
        f(&mut self.token);
        for v in [&mut self.before, &mut self.last_rmw, &mut self.last_lock].into_iter().flatten() {
            f(v);
        }
        if let Some((a, b)) = &mut self.last_unlock {
            f(a);
            f(b);
        }
    }
}
