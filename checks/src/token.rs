//! Replay tokens: which engine, what to replay (an execution number, or for the stateful
//! engine the schedule itself), and a fingerprint of the scenario it belongs to.

use crate::engine::stateful::schedule::{parse_schedule, schedule_text};
use crate::engine::types::{Engine, EngineName, Replay};
use crate::spec::AnySpec;

/// A replay token: which engine, what to replay (an execution number, or for the stateful
/// engine the schedule itself), and a fingerprint of the scenario it belongs to (a token
/// applied to a different scenario is refused, not misread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayToken {
    pub engine_tag: String,
    pub replay: Replay,
    pub fingerprint: u32,
}

impl ReplayToken {
    pub fn new(spec: &dyn AnySpec, engine: Engine, replay: Replay) -> Self {
        ReplayToken { engine_tag: engine_tag(engine), replay, fingerprint: fingerprint(spec, engine) }
    }

    pub fn parse(s: &str) -> Option<Self> {
        let mut it = s.trim().rsplitn(3, '-');
        let fp = it.next()?;
        if fp.len() != 8 {
            return None;
        }
        let fp = u32::from_str_radix(fp, 16).ok()?;
        let payload = it.next()?;
        let engine_tag = it.next()?.to_string();
        if engine_tag.is_empty() || !engine_tag.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let replay = if engine_tag == "stateful" {
            let (choices, cycle) = parse_schedule(payload)?;
            Replay::Schedule { choices, cycle }
        } else {
            Replay::Execution(payload.parse().ok()?)
        };
        Some(ReplayToken { engine_tag, replay, fingerprint: fp })
    }

    /// The engine that made it.
    pub fn engine_name(&self) -> Option<EngineName> {
        Some(match self.engine_tag.as_str() {
            t if t.starts_with("loom") => EngineName::Loom,
            "pct" => EngineName::ShuttlePct,
            "random" => EngineName::ShuttleRandom,
            "dfs" => EngineName::ShuttleDfs,
            "stateful" => EngineName::Stateful,
            _ => return None,
        })
    }

    /// What it replays, in words: `execution 12`, `the schedule 0120…`.
    pub fn replay_label(&self) -> String {
        match &self.replay {
            Replay::Execution(i) => format!("execution {i}"),
            Replay::Schedule { choices, cycle } => format!("the schedule {}", schedule_text(choices, *cycle)),
        }
    }

    /// Does this token belong to `spec` explored by `engine`?
    pub fn fits(&self, spec: &dyn AnySpec, engine: Engine) -> bool {
        self.engine_tag == engine_tag(engine) && self.fingerprint == fingerprint(spec, engine)
    }
}

impl std::fmt::Display for ReplayToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.replay {
            Replay::Execution(i) => write!(f, "{}-{i}-{:08x}", self.engine_tag, self.fingerprint),
            Replay::Schedule { choices, cycle } => {
                write!(f, "{}-{}-{:08x}", self.engine_tag, schedule_text(choices, *cycle), self.fingerprint)
            }
        }
    }
}

fn engine_tag(e: Engine) -> String {
    match e {
        Engine::Loom { preemption_bound: None } => "loom".into(),
        Engine::Loom { preemption_bound: Some(b) } => format!("loompb{b}"),
        Engine::ShuttlePct { .. } => "pct".into(),
        Engine::ShuttleRandom { .. } => "random".into(),
        Engine::ShuttleDfs { .. } => "dfs".into(),
        Engine::Stateful { .. } => "stateful".into(),
    }
}

/// FNV-1a of everything that decides the exploration order and the monitors, code included.
fn fingerprint(spec: &dyn AnySpec, engine: Engine) -> u32 {
    // The code hash (checks/build.rs) ties a token to the model, monitors and engines that made it.
    let text = format!("mmcheck-replay-v2|{}|{}|{:?}", env!("MMCHECK_CODE_HASH"), spec.replay_text(), engine);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_reject_garbage() {
        let t = ReplayToken { engine_tag: "loompb3".into(), replay: Replay::Execution(4711), fingerprint: 0xdead_beef };
        assert_eq!(t.to_string(), "loompb3-4711-deadbeef");
        assert_eq!(ReplayToken::parse(&t.to_string()), Some(t));
        for bad in [
            "",
            "loom",
            "loom-1",
            "loom-x-deadbeef",
            "lo om-1-deadbeef",
            "-1-deadbeef",
            "loom-1-nothex",
            "stateful-0w1-deadbeef",
        ] {
            assert_eq!(ReplayToken::parse(bad), None, "{bad}");
        }
        let s = ReplayToken {
            engine_tag: "stateful".into(),
            replay: Replay::Schedule { choices: vec![0, 2, 1, 1], cycle: Some(2) },
            fingerprint: 7,
        };
        assert_eq!(s.to_string(), "stateful-02.11-00000007");
        assert_eq!(ReplayToken::parse(&s.to_string()), Some(s));
    }
}
