//! DeepSeek Harness extraction against generated homes (`gen.py --dsh`):
//! exact equality with corpus-gen's `truth.jsonl` (DESIGN.md §10), on
//! DSH-only homes (every DSH feature: versions 0–4, generations, forks and
//! subagents, compaction, torn and corrupt frames, odd ids) and on one home
//! of all six sources with real-shaped Intendant metas.

use recall_core::model::Source;
use recall_tests::truth::{self, Flags};

fn assert_clean(seed: u64, sessions: u32, sources: &[Source]) {
    let report = truth::run_with(seed, sessions, sources, Flags::WIDE)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(report.sessions > 0, "seed {seed}: truth has no sessions");
    assert!(report.records > 0, "seed {seed}: truth has no records");
    assert!(report.is_clean(), "seed {seed}: {report}");
}

#[test]
fn dsh_seed_1() {
    assert_clean(1, 40, &[Source::Dsh]);
}

#[test]
fn dsh_seed_2() {
    assert_clean(2, 40, &[Source::Dsh]);
}

#[test]
fn all_six_sources_seed_5() {
    assert_clean(5, 100, &Source::ALL);
}
