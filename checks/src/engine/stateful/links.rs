//! How the workers of one process encode what they record of the state graph (`graph.rs`):
//! the numbers of their states ([`Numbering`]), a transition in four bytes ([`Packed`]) or
//! eight ([`Link`]), a state's task masks in four bytes or eight ([`MarksVec`]), and what the
//! pass reads of a transition in either form ([`Label`]). A worker's record is packed until
//! something does not fit, then widened (docs/model.md, "Many workers": how the graph is
//! stored).

/// A transition out of a state, as the stored graph keeps it: to (a node number), the task that
/// moved, the choice that took it, and whether it read a store a later one had superseded.
/// Eight bytes, against a cluster's `graph::Edge`'s 24: a worker records its transitions out
/// of a state together, when it leaves the state (`graph::Graph::row`), so the source is said
/// once a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Link {
    pub to: u32,
    pub task: u8,
    pub choice: u8,
    pub stale: bool,
}

/// Bits of a [`Packed`] transition's target.
pub(super) const TO_BITS: u32 = 27;

/// A transition in four bytes: its target in the low 27 bits, the task that moved in the next
/// four, whether it read a superseded store in the top bit. Only a transition whose choice is
/// its task (every transition under `memory = "sc"`) packs; a worker's transitions are packed
/// until one does not fit, and then all of them are widened to [`Link`]s (`Links::push`).
/// The pass holds them packed when every worker's are and the states' places fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Packed(u32);

impl Packed {
    /// `l` with its target `to` (already in packed form), if it packs.
    #[inline]
    pub(super) fn of(l: Link, to: Option<u32>) -> Option<Self> {
        let to = to?;
        (l.choice == l.task && l.task < 16 && to < 1 << TO_BITS)
            .then(|| Packed(to | u32::from(l.task) << TO_BITS | u32::from(l.stale) << 31))
    }
}

/// What the pass reads of a transition, in either form.
pub(super) trait Label: Copy + Send + Sync {
    fn to(self) -> u32;
    fn task(self) -> u8;
    fn choice(self) -> u8;
    fn stale(self) -> bool;
    /// The same transition to `to`.
    fn with_to(self, to: u32) -> Self;
    /// The worker and the index of the state a worker recorded as the target `to`, in this
    /// form (workers numbered with `bits`).
    fn split(bits: u32, to: u32) -> (usize, usize);
    /// A worker's transitions, if they are in this form (taken: `links` is left empty).
    fn take(links: &mut Links) -> Option<Vec<Self>>;
}

impl Label for Link {
    #[inline]
    fn to(self) -> u32 {
        self.to
    }
    #[inline]
    fn task(self) -> u8 {
        self.task
    }
    #[inline]
    fn choice(self) -> u8 {
        self.choice
    }
    #[inline]
    fn stale(self) -> bool {
        self.stale
    }
    #[inline]
    fn with_to(self, to: u32) -> Self {
        Link { to, ..self }
    }
    #[inline]
    fn split(bits: u32, to: u32) -> (usize, usize) {
        Numbering::split(bits, to)
    }
    fn take(links: &mut Links) -> Option<Vec<Self>> {
        match std::mem::take(links) {
            Links::Wide(v) => Some(v),
            other => {
                *links = other;
                None
            }
        }
    }
}

impl Label for Packed {
    #[inline]
    fn to(self) -> u32 {
        self.0 & ((1 << TO_BITS) - 1)
    }
    #[inline]
    fn task(self) -> u8 {
        (self.0 >> TO_BITS & 15) as u8
    }
    #[inline]
    fn choice(self) -> u8 {
        self.task()
    }
    #[inline]
    fn stale(self) -> bool {
        self.0 >> 31 != 0
    }
    #[inline]
    fn with_to(self, to: u32) -> Self {
        debug_assert!(to < 1 << TO_BITS);
        Packed(self.0 & !((1 << TO_BITS) - 1) | to)
    }
    #[inline]
    fn split(bits: u32, to: u32) -> (usize, usize) {
        Numbering::split_packed(bits, to)
    }
    fn take(links: &mut Links) -> Option<Vec<Self>> {
        match std::mem::take(links) {
            Links::Packed(v) => Some(v),
            other => {
                *links = other;
                None
            }
        }
    }
}

/// A worker's transitions: packed while they all pack, else wide.
#[derive(Debug, Clone)]
pub(super) enum Links {
    Packed(Vec<Packed>),
    Wide(Vec<Link>),
}

impl Default for Links {
    fn default() -> Self {
        Links::Packed(Vec::new())
    }
}

impl Links {
    pub(super) fn bytes(&self) -> usize {
        match self {
            Links::Packed(v) => v.capacity() * std::mem::size_of::<Packed>(),
            Links::Wide(v) => v.capacity() * std::mem::size_of::<Link>(),
        }
    }

    /// Record `l`, whose target is a state number of workers numbered with `bits`; the first
    /// transition that does not pack widens every one recorded before it.
    #[inline]
    pub(super) fn push(&mut self, l: Link, bits: u32) {
        if let Links::Packed(v) = self {
            match Packed::of(l, Numbering::pack(bits, l.to)) {
                Some(p) => return v.push(p),
                None => self.widen(bits),
            }
        }
        if let Links::Wide(v) = self {
            v.push(l);
        }
    }

    /// The transitions as [`Link`]s, their targets state numbers.
    pub(super) fn widen(&mut self, bits: u32) {
        if let Links::Packed(v) = self {
            let wide = v
                .iter()
                .map(|&p| Link {
                    to: Numbering::unpack(bits, p.to()),
                    task: p.task(),
                    choice: p.task(),
                    stale: p.stale(),
                })
                .collect();
            *self = Links::Wide(wide);
        }
    }
}

/// What the fair-cycle test needs of a state: the tasks enabled there, and the tasks that
/// exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Marks {
    pub enabled: u32,
    pub tasks: u32,
}

/// States' [`Marks`], in the order of their numbers: both masks in two bytes while every
/// task's bit fits in 8, in four while it fits in 16, else eight (every mark recorded before
/// widened when the first does not fit). Two bytes a state took 15 MB off the two-worker
/// 3-kswapd `progress` proof's peak (docs/performance.md, "The two workers' pass in less memory").
#[derive(Debug, Clone)]
pub(super) enum MarksVec {
    Tiny(Vec<u16>),
    Narrow(Vec<u32>),
    Wide(Vec<Marks>),
}

impl Default for MarksVec {
    fn default() -> Self {
        MarksVec::Tiny(Vec::new())
    }
}

impl MarksVec {
    pub fn len(&self) -> usize {
        match self {
            MarksVec::Tiny(v) => v.len(),
            MarksVec::Narrow(v) => v.len(),
            MarksVec::Wide(v) => v.len(),
        }
    }

    pub(super) fn bytes(&self) -> usize {
        match self {
            MarksVec::Tiny(v) => v.capacity() * std::mem::size_of::<u16>(),
            MarksVec::Narrow(v) => v.capacity() * std::mem::size_of::<u32>(),
            MarksVec::Wide(v) => v.capacity() * std::mem::size_of::<Marks>(),
        }
    }

    /// The narrowest form that holds `m`: 0, 1 or 2.
    fn width_of(m: Marks) -> u8 {
        match (m.enabled | m.tasks) >> 8 {
            0 => 0,
            x if x >> 8 == 0 => 1,
            _ => 2,
        }
    }

    fn width(&self) -> u8 {
        match self {
            MarksVec::Tiny(_) => 0,
            MarksVec::Narrow(_) => 1,
            MarksVec::Wide(_) => 2,
        }
    }

    #[inline]
    pub fn push(&mut self, m: Marks) {
        if Self::width_of(m) > self.width() {
            self.widen_to(Self::width_of(m));
        }
        self.put(m);
    }

    /// Append `m`, which this form holds.
    #[inline]
    fn put(&mut self, m: Marks) {
        match self {
            MarksVec::Tiny(v) => v.push((m.enabled | m.tasks << 8) as u16),
            MarksVec::Narrow(v) => v.push(m.enabled | m.tasks << 16),
            MarksVec::Wide(v) => v.push(m),
        }
    }

    /// Every mark in the form of width `w` (0 two bytes, 1 four, 2 eight), if it is narrower.
    fn widen_to(&mut self, w: u8) {
        if w <= self.width() {
            return;
        }
        let n = self.len();
        let mut wide =
            if w == 1 { MarksVec::Narrow(Vec::with_capacity(n)) } else { MarksVec::Wide(Vec::with_capacity(n)) };
        for i in 0..n {
            wide.put(self.get(i));
        }
        *self = wide;
    }

    /// The marks of the `i`-th state.
    #[inline]
    pub fn get(&self, i: usize) -> Marks {
        match self {
            MarksVec::Tiny(v) => Marks { enabled: u32::from(v[i] & 0xff), tasks: u32::from(v[i] >> 8) },
            MarksVec::Narrow(v) => Marks { enabled: v[i] & 0xffff, tasks: v[i] >> 16 },
            MarksVec::Wide(v) => v[i],
        }
    }

    /// `other`'s marks after these (`other` is left empty), in the wider of the two forms.
    pub(super) fn append(&mut self, other: &mut MarksVec) {
        let w = self.width().max(other.width());
        self.widen_to(w);
        other.widen_to(w);
        match (&mut *self, &mut *other) {
            (MarksVec::Tiny(a), MarksVec::Tiny(b)) => a.append(b),
            (MarksVec::Narrow(a), MarksVec::Narrow(b)) => a.append(b),
            (MarksVec::Wide(a), MarksVec::Wide(b)) => a.append(b),
            _ => unreachable!("both widened to one form"),
        }
        *other = MarksVec::default();
    }

    pub(super) fn reserve_exact(&mut self, n: usize) {
        match self {
            MarksVec::Tiny(v) => v.reserve_exact(n),
            MarksVec::Narrow(v) => v.reserve_exact(n),
            MarksVec::Wide(v) => v.reserve_exact(n),
        }
    }
}

/// How the workers of one process number the states they store: worker `w`'s `i`-th state is
/// `w << (32 - bits) | i`, the number the shared visited table keeps beside its fingerprint
/// (so a worker that reaches a state another stored knows its number without asking it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Numbering {
    pub worker: u32,
    /// Bits of the worker's index: enough for every worker of the search.
    pub bits: u32,
}

impl Numbering {
    pub fn new(worker: usize, workers: usize) -> Self {
        let bits = usize::BITS - (workers.max(1) - 1).leading_zeros();
        Numbering { worker: worker as u32, bits }
    }

    /// The number of this worker's `i`-th state, if it has one.
    #[inline]
    pub fn number(&self, i: usize) -> Option<u32> {
        let local = 32 - self.bits;
        (local == 32 || (i as u64) < 1u64 << local).then(|| Self::join(self.bits, self.worker, i as u32))
    }

    /// The number of worker `w`'s state of index `i` (which fits), the inverse of
    /// [`Numbering::split`].
    #[inline]
    fn join(bits: u32, w: u32, i: u32) -> u32 {
        if bits == 0 {
            i
        } else {
            w << (32 - bits) | i
        }
    }

    /// The worker that numbered `n`, and its index among that worker's states.
    #[inline]
    pub fn split(bits: u32, n: u32) -> (usize, usize) {
        if bits == 0 {
            (0, n as usize)
        } else {
            let local = 32 - bits;
            ((n >> local) as usize, (n & ((1u32 << local) - 1)) as usize)
        }
    }

    /// The state number `n` in a [`Packed`] transition's 27 bits (the worker's index in the
    /// top `bits` of them), if its index fits.
    #[inline]
    pub(super) fn pack(bits: u32, n: u32) -> Option<u32> {
        let (w, i) = Self::split(bits, n);
        let local = TO_BITS.checked_sub(bits)?;
        ((i as u64) < 1u64 << local).then(|| ((w as u32) << local) | i as u32)
    }

    /// The packed form's worker and index.
    #[inline]
    pub(super) fn split_packed(bits: u32, p: u32) -> (usize, usize) {
        let local = TO_BITS - bits;
        ((p >> local) as usize, (p & ((1u32 << local) - 1)) as usize)
    }

    /// The state number of the packed form `p`.
    #[inline]
    pub(super) fn unpack(bits: u32, p: u32) -> u32 {
        let (w, i) = Self::split_packed(bits, p);
        Self::join(bits, w as u32, i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks at each width's limits (every task's bit from the first to the thirty-second, as
    /// enabled and as existing) read back unchanged, whatever widening happened after them:
    /// pushed in growing order, so that the vector widens from two bytes to four, then eight,
    /// and appended across forms.
    #[test]
    fn marks_keep_every_mask_through_each_widening() {
        let all: Vec<Marks> = (0..32)
            .flat_map(|b| [Marks { enabled: 1 << b, tasks: 1 << b }, Marks { enabled: 1, tasks: 1 << b | 1 }])
            .collect();
        let mut v = MarksVec::default();
        let mut widths = Vec::new();
        for (i, &m) in all.iter().enumerate() {
            v.push(m);
            widths.push(v.width());
            assert!((0..=i).all(|j| v.get(j) == all[j]), "after pushing {m:?}");
        }
        // Two bytes up to the eighth task's bit, four up to the sixteenth, then eight.
        assert_eq!(widths[15], 0);
        assert_eq!(widths[16], 1);
        assert_eq!(widths[31], 1);
        assert_eq!(widths[32], 2);
        // Two bytes then four, two then eight, four then eight, and each the other way round.
        for (split, end) in [(4, 32), (16, 64), (20, 64), (16, 32)] {
            for first_wider in [false, true] {
                let (lo, hi) = (&all[..split], &all[split..end]);
                let (first, second) = if first_wider { (hi, lo) } else { (lo, hi) };
                let (mut a, mut b) = (MarksVec::default(), MarksVec::default());
                first.iter().for_each(|&m| a.push(m));
                second.iter().for_each(|&m| b.push(m));
                a.append(&mut b);
                assert_eq!(b.len(), 0);
                let want: Vec<Marks> = first.iter().chain(second).copied().collect();
                assert!((0..want.len()).all(|j| a.get(j) == want[j]), "appended at {split}, {first_wider}");
            }
        }
    }
}
