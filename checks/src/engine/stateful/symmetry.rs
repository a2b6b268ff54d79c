//! Symmetry reduction for the stateful engine: the group of permutations of a configuration's
//! interchangeable nodes (as the model declares them, [`mmmodel::model::Symmetry`]) and when it
//! may be applied. The search stores, for every state, the least fingerprint over the state's
//! images under the group (docs/model.md, "Symmetry", argues why that is sound for safety).

use mmmodel::kernel::sched::explorer_task;
use mmmodel::model::{Perm, Symmetry};

use super::space::SymImage;
use super::store::FpSet;
use super::table::FpTable;
use crate::engine::types::{Memory, Options, OrbitCensus};
use crate::monitor::online::Online;
use crate::monitor::Checked;
use crate::spec::Spec;

/// Most elements of the group the search canonicalises over (5! = 120: one running hash per
/// element per task, one fingerprint per element per state). Larger orbits are cut to a
/// subgroup, which is sound, only less of a reduction.
pub const MAX_GROUP: usize = 120;

/// The group the search runs with.
pub(super) struct Group {
    /// Its elements but the identity, in the model's terms and in the runtime's.
    pub perms: Vec<Perm>,
    pub images: Vec<SymImage>,
    /// Why there is none, if there is none.
    pub not_applied: Option<&'static str>,
}

impl Group {
    pub fn size(&self) -> usize {
        self.perms.len() + 1
    }
    fn none(why: &'static str) -> Group {
        Group { perms: Vec::new(), images: Vec::new(), not_applied: Some(why) }
    }
}

/// The group for `spec` under `opts`, or why none applies.
pub(super) fn group<M: Checked>(spec: &Spec<M>, opts: &Options, memory: Memory) -> Group {
    if !opts.reduce.symmetry {
        return Group::none("not asked for (reduce = [] or --no-reduce)");
    }
    if memory == Memory::Lkmm {
        return Group::none(
            "memory = \"lkmm\": the stores and views of the memory are not canonicalised under the group",
        );
    }
    if opts.history_only {
        return Group::none("the history-only reference search keeps every task's history");
    }
    if opts.live_census {
        return Group::none("a live-locals census keeps one shadow hash a task, not one per image");
    }
    if opts.replay.is_some() {
        return Group::none("a replay follows one schedule");
    }
    let sym = match M::symmetry(&spec.cfg) {
        Ok(s) => s,
        Err(why) => return Group::none(why),
    };
    let perms = elements(&sym);
    if perms.is_empty() {
        return Group::none("no two kswapds are interchangeable");
    }
    if M::Online::default().permuted(&perms[0]).is_none() {
        return Group::none("the model's monitors do not say how to permute their state");
    }
    let images = perms
        .iter()
        .map(|p| {
            let mut task: Vec<u8> = (0..sym.tasks as u8).collect();
            for pid in 0..sym.tasks {
                task[explorer_task(sym.tasks, pid)] = explorer_task(sym.tasks, p.pid(pid)) as u8;
            }
            SymImage { node: p.node.clone(), pid: p.pid.clone(), task }
        })
        .collect();
    Group { perms, images, not_applied: None }
}

/// Every element of the product of the symmetric groups of `sym`'s orbits (cut to at most
/// [`MAX_GROUP`] elements), but the identity.
pub fn elements(sym: &Symmetry) -> Vec<Perm> {
    let mut orbits = sym.orbits.clone();
    orbits.sort_by_key(|o| std::cmp::Reverse(o.len()));
    let mut size = 1usize;
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for o in orbits {
        let mut k = o.len();
        while k >= 2 && size * factorial(k) > MAX_GROUP {
            k -= 1;
        }
        if k >= 2 {
            size *= factorial(k);
            kept.push(o[..k].to_vec());
        }
    }
    let ident = Perm { node: (0..sym.nodes as u8).collect(), pid: (0..sym.tasks as u8).collect() };
    let mut all = vec![ident.clone()];
    for orbit in &kept {
        let mut next = Vec::new();
        for p in &all {
            for order in permutations(orbit) {
                let mut q = p.clone();
                for (i, &n) in orbit.iter().enumerate() {
                    q.node[n as usize] = order[i];
                }
                next.push(q);
            }
        }
        all = next;
    }
    for p in &mut all {
        p.pid = ident.pid.clone();
        for n in 0..sym.nodes {
            if let (Some(from), Some(to)) = (sym.pid_of_node[n], sym.pid_of_node[p.node[n] as usize]) {
                p.pid[from as usize] = to;
            }
        }
    }
    all.retain(|p| *p != ident);
    all
}

fn factorial(k: usize) -> usize {
    (1..=k).product()
}

fn permutations(items: &[u8]) -> Vec<Vec<u8>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// The image of a mask of tasks under a map of the tasks.
pub(super) fn map_mask(map: &[u8], mask: u32) -> u32 {
    let (mut m, mut out) = (mask, 0u32);
    while m != 0 {
        let t = m.trailing_zeros() as usize;
        m &= m - 1;
        out |= 1 << map.get(t).map_or(t as u32, |&u| u as u32);
    }
    out
}

/// The group's maps of the runtime's tasks, and their inverses: how a task mask of a state
/// reads in the names of its orbit's canonical state, and back. Empty: no symmetry.
#[derive(Default)]
pub(super) struct Canon {
    task_maps: Vec<Vec<u8>>,
    inv_maps: Vec<Vec<u8>>,
}

impl Canon {
    pub fn new(images: &[SymImage]) -> Self {
        let task_maps: Vec<Vec<u8>> = images.iter().map(|i| i.task.clone()).collect();
        let inv_maps = task_maps
            .iter()
            .map(|m| {
                let mut inv: Vec<u8> = (0..m.len() as u8).collect();
                for (t, &u) in m.iter().enumerate() {
                    inv[u as usize] = t as u8;
                }
                inv
            })
            .collect();
        Canon { task_maps, inv_maps }
    }

    /// No symmetry: every map is the identity.
    pub fn is_identity(&self) -> bool {
        self.task_maps.is_empty()
    }

    /// A task mask in the canonical state's task names (`k`: the element whose image the
    /// canonical state is), and back.
    pub fn to_canonical(&self, mask: u32, k: Option<usize>) -> u32 {
        k.map_or(mask, |k| map_mask(&self.task_maps[k], mask))
    }
    pub fn canonical_to_own(&self, mask: u32, k: Option<usize>) -> u32 {
        k.map_or(mask, |k| map_mask(&self.inv_maps[k], mask))
    }

    /// A mask with its images under every element of the group.
    pub fn close(&self, mask: u32) -> u32 {
        self.task_maps.iter().fold(mask, |c, map| c | map_mask(map, mask))
    }
}

/// What [`Options::orbit_census`] collects: the visited set holds every state, and this the
/// least fingerprint over each one's images and the images themselves.
#[derive(Default)]
pub(super) struct Census {
    canonical: FpSet,
    images: Vec<u64>,
}

impl Census {
    /// A state stored for the first time: its own fingerprint and those of its images.
    pub fn note(&mut self, fp: u64, images: impl Iterator<Item = u64>) {
        let mut canonical = fp;
        for image in images {
            canonical = canonical.min(image);
            self.images.push(image);
        }
        self.canonical.insert(canonical);
    }

    /// The census's findings, once the search is over.
    pub fn report(&self, group: usize, visited: &FpTable) -> OrbitCensus {
        OrbitCensus {
            group,
            orbits: self.canonical.len() as u64,
            images_unreached: self.images.iter().filter(|fp| !visited.contains_key(**fp)).count() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(orbits: Vec<Vec<u8>>, nodes: usize) -> Symmetry {
        let pid_of_node = (0..nodes as u8).map(Some).collect();
        Symmetry { nodes, tasks: nodes + 1, orbits, pid_of_node }
    }

    #[test]
    fn groups_are_products_of_the_orbits_cut_to_120() {
        assert_eq!(elements(&sym(vec![vec![1, 2]], 3)).len() + 1, 2);
        assert_eq!(elements(&sym(vec![vec![0, 1, 2]], 3)).len() + 1, 6);
        assert_eq!(elements(&sym(vec![vec![0, 1, 2, 3]], 4)).len() + 1, 24);
        assert_eq!(elements(&sym(vec![vec![0, 1, 2, 3, 4]], 5)).len() + 1, 120);
        // 6! = 720 is cut to the subgroup of 5 of the nodes.
        assert_eq!(elements(&sym(vec![vec![0, 1, 2, 3, 4, 5]], 6)).len() + 1, 120);
        // 4! x 2! = 48 fits; 5! x 2! does not, and the smaller orbit is cut.
        assert_eq!(elements(&sym(vec![vec![0, 1, 2, 3], vec![4, 5]], 6)).len() + 1, 48);
        assert_eq!(elements(&sym(vec![vec![0, 1, 2, 3, 4], vec![5, 6]], 7)).len() + 1, 120);
        assert_eq!(elements(&sym(vec![vec![0, 1], vec![2, 3]], 4)).len() + 1, 4);
        // Every element is a bijection that moves pids with their nodes.
        for p in elements(&sym(vec![vec![0, 1, 2]], 3)) {
            let mut seen = p.node.clone();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2]);
            for n in 0..3 {
                assert_eq!(p.pid[n], p.node[n]);
            }
            assert_eq!(p.pid[3], 3, "the task with no node stays");
        }
    }
}
