//! Kimi, Pi and Intendant extraction against generated homes: exact
//! equality with corpus-gen's `truth.jsonl` (DESIGN.md §10).

use recall_core::model::Source;
use recall_tests::truth;

const SOURCES: [Source; 3] = [Source::Kimi, Source::Pi, Source::Intendant];

fn assert_clean(seed: u64, sessions: u32) {
    let report =
        truth::run(seed, sessions, &SOURCES).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(report.sessions > 0, "seed {seed}: truth has no sessions");
    assert!(report.records > 0, "seed {seed}: truth has no records");
    assert!(report.is_clean(), "seed {seed}: {report}");
}

#[test]
fn seed_1() {
    assert_clean(1, 48);
}

#[test]
fn seed_2() {
    assert_clean(2, 48);
}

#[test]
fn seed_3() {
    assert_clean(3, 48);
}
