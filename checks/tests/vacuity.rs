//! A pass is only worth something if the explored executions reached what the scenario is
//! about: a scenario whose critical section cannot be contended is `vacuous`, not `pass`; and
//! every shipped pass scenario declares what it reaches, including the contended path.

mod common;

use std::path::Path;

use mmcheck::check::{check, RunOptions, Verdict};
use mmcheck::scenario::{self, ExpectVerdict};

#[test]
fn an_uncontended_scenario_is_vacuous_not_pass() {
    // One kswapd and nothing else: its trylock can never fail.
    let text = r#"model = "kswapd-stall"
variant = "recheck"
[[thread]]
role = "kswapd"
node = 0
[explore]
engine = "loom"
[expect]
verdict = "pass"
reaches = ["trylock-failed", "cmpxchg-lost"]
"#;
    let sc = scenario::parse(Path::new("lonely.toml"), text).unwrap();
    let r = check(&sc, &RunOptions::default());
    assert_eq!(r.verdict, Verdict::Vacuous(vec!["trylock-failed", "cmpxchg-lost"]));
    assert!(!r.matched);
}

#[test]
fn every_shipped_pass_scenario_declares_and_reaches_the_contended_path() {
    let mut n = 0;
    for (f, sc) in scenario::collect_files(&common::scenarios_dir()).unwrap().into_iter().flat_map(|f| {
        scenario::load_each(&f).unwrap_or_else(|e| panic!("{e}")).into_iter().map(move |s| (f.clone(), s))
    }) {
        if sc.expect.verdict != ExpectVerdict::Pass {
            continue;
        }
        n += 1;
        let contended = sc.model().contended_path();
        assert!(
            sc.expect.reaches.iter().any(|r| contended.contains(r)),
            "{}: a pass scenario must list in expect.reaches at least one contended-path event of its model ({})",
            f.display(),
            contended.join(", ")
        );
    }
    assert!(n > 0);
}
