//! Claude Code and Codex extraction against generated homes: exact equality
//! with corpus-gen's `truth.jsonl` (DESIGN.md §10). Seed 1 checks the
//! generator's default output, the others its `--intendant-project-root` one.

use recall_core::model::Source;
use recall_tests::truth;

const SOURCES: [Source; 2] = [Source::ClaudeCode, Source::Codex];

fn assert_clean(seed: u64, sessions: u32, flags: truth::Flags) {
    let report = truth::run_with(seed, sessions, &SOURCES, flags)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(report.sessions > 0, "seed {seed}: truth has no sessions");
    assert!(report.is_clean(), "seed {seed}: {report}");
}

#[test]
fn seed_1() {
    assert_clean(1, 80, truth::Flags::DEFAULT);
}

#[test]
fn seed_2() {
    assert_clean(2, 80, truth::Flags::WIDE);
}

#[test]
fn seed_3() {
    assert_clean(3, 80, truth::Flags::WIDE);
}

#[test]
fn seed_7_larger() {
    assert_clean(7, 200, truth::Flags::WIDE);
}
