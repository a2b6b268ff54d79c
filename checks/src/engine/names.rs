// The engine names, defined once. Plain Rust with no `use` lines: checks/build.rs reads this
// file with `include!` to place each scenario's test in the test binary of its engine.

/// An engine as scenario files (`[explore] engine`) and `--engine` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineName {
    Loom,
    ShuttlePct,
    ShuttleRandom,
    ShuttleDfs,
    /// The stateful engine (state caching, fair-cycle detection; SC, or the LKMM under `lkmm`).
    Stateful,
    /// A cross-check: loom, both randomised shuttle schedulers and the stateful engine must
    /// agree (weak-memory-only findings of loom excepted: see `check::judge`).
    All,
}

impl EngineName {
    pub const ALL: [EngineName; 6] = [
        EngineName::Loom,
        EngineName::ShuttlePct,
        EngineName::ShuttleRandom,
        EngineName::ShuttleDfs,
        EngineName::Stateful,
        EngineName::All,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineName::Loom => "loom",
            EngineName::ShuttlePct => "shuttle-pct",
            EngineName::ShuttleRandom => "shuttle-random",
            EngineName::ShuttleDfs => "shuttle-dfs",
            EngineName::Stateful => "stateful",
            EngineName::All => "all",
        }
    }

    pub fn from_name(s: &str) -> Option<EngineName> {
        EngineName::ALL.into_iter().find(|e| e.name() == s)
    }

    /// Every name, comma-separated (for error messages).
    pub fn names() -> String {
        let v: Vec<&str> = EngineName::ALL.iter().map(|e| e.name()).collect();
        v.join(", ")
    }

    /// The test binaries (`tests/<family>_scenarios.rs`) that run a scenario of this engine:
    /// loom and shuttle install process-wide state, so each has its own binary.
    pub fn test_families(self) -> &'static [&'static str] {
        match self {
            EngineName::Loom => &["loom"],
            EngineName::ShuttlePct | EngineName::ShuttleRandom | EngineName::ShuttleDfs => &["shuttle"],
            EngineName::Stateful => &["stateful"],
            EngineName::All => &["loom", "shuttle", "stateful"],
        }
    }
}
