//! Intendant extraction (DESIGN.md §5 "intendant"). There is no real sample,
//! so hand-made logs under `tests/fixtures/intendant/logs/` cover both eras,
//! the epoch marker and its mapping, a wrapper, sidecar paths escaping the
//! log dir, a rewind cut, midnight-crossing legacy dating, the meta task
//! fallback, subagent role and relationship; each has a hand-checked golden.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::{append, append_huge_line, garbage_lines, Scratch};
use recall_core::model::{Mark, Relation, Role};
use recall_host::extract::common::iso_ms;
use recall_host::extract::{intendant, ExtractError, Extracted, SessionSource};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    golden::test_path("fixtures/intendant")
}

fn unit_named(root: &Path, dir: &str) -> SessionSource {
    intendant::discover(root)
        .into_iter()
        .find(|u| u.unit.ends_with(dir))
        .unwrap_or_else(|| panic!("no unit {dir}"))
}

fn extract(dir: &str) -> Extracted {
    intendant::extract(&unit_named(&fixtures(), dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .unwrap_or_else(|| panic!("{dir}: no session"))
}

fn prose(x: &Extracted) -> Vec<(&str, &str, i64, bool)> {
    let active = recall_core::derive_active(&x.records, &x.marks);
    x.records
        .iter()
        .zip(active)
        .map(|(r, a)| (r.role.as_str(), r.text.as_str(), r.ts_ms, a))
        .collect()
}

#[test]
fn fixtures_match_their_goldens() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let units = intendant::discover(&fixtures());
    assert_eq!(units.len(), 5, "{units:?}");
    let mut failures = Vec::new();
    for u in units {
        let name = Path::new(&u.unit)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let got = intendant::extract(&u).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Some(x) = got else {
            assert_eq!(name, "wrapper", "only the wrapper yields nothing");
            continue;
        };
        let json = golden::golden_json(&x, &base);
        if let Some(d) = golden::check(&format!("golden/intendant/{name}.json"), json) {
            failures.push(d);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nothing_injected_is_prose() {
    for dir in [
        "new-era",
        "22222222-2222-4222-8222-222222222222",
        "mixed",
        "meta-task",
    ] {
        let x = extract(dir);
        for r in &x.records {
            assert!(!r.text.contains("NOT-PROSE"), "{dir}: {:?}", r.text);
        }
    }
}

#[test]
fn new_era_rewind_and_refused_sidecars() {
    let x = extract("new-era");
    let t0 = iso_ms("2026-03-01T10:00:00Z").unwrap();
    assert_eq!(
        prose(&x),
        vec![
            (
                "user",
                "Add a health check endpoint to the server.",
                t0 + 50,
                true
            ),
            (
                "assistant",
                "I'll add `GET /health` returning 200 with a JSON body.",
                t0 + 4000,
                true
            ),
            ("user", "Also add a readiness probe.", t0 + 60000, false),
            (
                "assistant",
                "Adding `/ready` next to `/health`.",
                t0 + 65000,
                false
            ),
            ("user", "Use /readyz, not /ready.", t0 + 70000, false),
            ("user", "Only the health check, please.", t0 + 120000, true),
            (
                "assistant",
                "Done: only `/health` remains, with a test.",
                t0 + 130000,
                true
            ),
            ("user", "Yes, port 8080.", t0 + 150000, true),
        ]
    );
    assert!(matches!(
        x.marks[..],
        [Mark::SeqCut {
            at: 5,
            cut_after_seq: 3
        }]
    ));
    let seqs: Vec<Option<u64>> = x.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [1, 3, 4, 5, 6, 7, 11, 14].map(Some));
    assert_eq!(
        x.diagnostics.unreadable.len(),
        3,
        "{:?}",
        x.diagnostics.unreadable
    );
    assert!(x
        .diagnostics
        .unreadable
        .iter()
        .all(|u| u.contains("refused")));
    assert_eq!(x.diagnostics.torn_tails, 1);
    assert_eq!(
        x.meta.title.as_deref(),
        Some("Add a health check endpoint to the server.")
    );
    assert!(x.records.iter().all(|r| !r.subagent));
}

#[test]
fn legacy_rows_cross_midnight() {
    let x = extract("22222222-2222-4222-8222-222222222222");
    let day1 = |t: &str| iso_ms(&format!("2026-03-01T{t}Z")).unwrap();
    let day2 = |t: &str| iso_ms(&format!("2026-03-02T{t}Z")).unwrap();
    assert_eq!(
        prose(&x),
        vec![
            (
                "user",
                "Clean up the nightly job logs.",
                day1("23:58:30"),
                true
            ),
            (
                "assistant",
                "Deleting logs older than 30 days under `/var/log/nightly`.",
                day1("23:58:41.500"),
                true
            ),
            ("user", "Keep the last 7 days.", day1("23:59:10"), true),
            (
                "assistant",
                "Now keeping 7 days of logs.",
                day2("00:00:05.250"),
                true
            ),
            (
                "user",
                "Also compress what you keep",
                day2("00:01:00"),
                true
            ),
            ("assistant", "Compressed with zstd.", day2("00:02:00"), true),
        ]
    );
    assert_eq!(
        x.meta.session_id, "22222222-2222-4222-8222-222222222222",
        "dir name"
    );
    assert_eq!(x.meta.title.as_deref(), Some("Nightly cleanup"));
    assert!(matches!(
        x.records[1].locator,
        recall_core::model::Locator::NativeSidecarSpan {
            offset: 45,
            len: 58,
            ..
        }
    ));
}

#[test]
fn mixed_log_maps_seqs_and_is_a_subagent() {
    let x = extract("mixed");
    let seqs: Vec<(Role, Option<u64>)> = x.records.iter().map(|r| (r.role, r.seq)).collect();
    assert_eq!(
        seqs,
        vec![
            (Role::User, Some(1)),
            (Role::Assistant, Some(2)),
            (Role::User, Some(3)),
            (Role::Assistant, Some(4)),
            (Role::User, Some(5)),
            (Role::Assistant, Some(6)),
        ]
    );
    assert!(
        x.records.iter().all(|r| r.subagent),
        "role in meta ⇒ subagent records"
    );
    let parent = x.meta.parent.as_ref().unwrap();
    assert_eq!(parent.key, "intendant:11111111-1111-4111-8111-111111111111");
    assert_eq!(parent.relation, Relation::Subagent);
    assert_eq!(x.meta.title.as_deref(), Some("Review the parser."));
    assert_eq!(
        x.meta.resume, None,
        "sub-agent sessions are not resumed on their own"
    );
}

/// Real metas carry the project in `project_root` (no `cwd`); the
/// relationship kinds Intendant writes are kept as written; a session that
/// is not a sub-agent resumes with `intendant --resume <id>`.
#[test]
fn project_root_relations_and_resume() {
    let s = Scratch::new("intendant-project-root");
    let src = fixtures().join("logs/new-era");
    for e in std::fs::read_dir(src.join("turns")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        s.write(
            &format!("logs/x/turns/{name}"),
            &std::fs::read(e.path()).unwrap(),
        );
    }
    let meta = r#"{"session_id":"it's $(id)","task":"Add a health check endpoint to the server.","created_at":"2026-03-01T10:00:00.000Z","created_at_ms":1772359200000,"project_root":"/home/mara/code/tiny http","status":"completed","rounds":1}"#;
    s.write("logs/x/session_meta.json", meta.as_bytes());
    let log = s.path("logs/x/session.jsonl");
    for (kind, want) in [
        ("side", Relation::Side),
        ("anchor-fork", Relation::AnchorFork),
        ("rewind", Relation::Rewind),
        ("fission", Relation::Fission),
        ("fork", Relation::Fork),
    ] {
        // The fixture ends in a torn line: the relationship goes first.
        let mut body: Vec<u8> = format!(
            "{{\"ts\":\"10:00:09.000\",\"event\":\"session_relationship\",\"data\":{{\"parent_session_id\":\"p-1\",\"relation\":\"{kind}\"}}}}\n"
        )
        .into_bytes();
        body.extend(std::fs::read(src.join("session.jsonl")).unwrap());
        std::fs::write(&log, &body).unwrap();
        let x = intendant::extract(&unit_named(&s.path(""), "x"))
            .unwrap()
            .unwrap();
        assert_eq!(x.meta.cwd.as_deref(), Some("/home/mara/code/tiny http"));
        let parent = x.meta.parent.expect("parent");
        assert_eq!(
            (parent.key.as_str(), parent.relation),
            ("intendant:p-1", want)
        );
        assert_eq!(
            serde_json::to_value(parent.relation).unwrap(),
            serde_json::json!(kind),
            "serialized as written"
        );
        // An id outside Intendant's id syntax (spaces, quotes, `$(…)`) gets no
        // resume command at all rather than a quoted one.
        assert_eq!(x.meta.resume, None, "no resume command for a hostile id");
    }
}

#[test]
fn the_model_comes_from_session_meta() {
    let x = extract("new-era");
    assert_eq!(
        x.meta.models,
        ["gpt-5.5"],
        "session_meta.json names the model"
    );
    // A model of another shape is ignored, the rest of the meta kept.
    let s = Scratch::new("intendant-model-shape");
    let root = copy_fixture(&s, "new-era");
    let dir = root.join("logs/new-era");
    let meta = std::fs::read_to_string(dir.join("session_meta.json"))
        .unwrap()
        .replace("\"gpt-5.5\"", "{\"name\": 5}");
    std::fs::write(dir.join("session_meta.json"), meta).unwrap();
    let x = intendant::extract(&unit_named(&root, "new-era"))
        .unwrap()
        .unwrap();
    assert!(x.meta.models.is_empty());
    assert_eq!(x.meta.cwd.as_deref(), Some("/home/mara/code/tiny-http"));
}

#[test]
fn meta_task_is_the_prompt_when_no_session_started() {
    let x = extract("meta-task");
    let p = prose(&x);
    assert_eq!(p[0].0, "user");
    assert_eq!(p[0].1, "Write the changelog for 0.4.");
    assert_eq!(
        p[0].2,
        iso_ms("2026-03-01T10:00:05Z").unwrap(),
        "dated created_at"
    );
    assert!(matches!(
        x.records[0].locator,
        recall_core::model::Locator::NativeEvent { line_no: 0, .. }
    ));
}

#[test]
fn wrapper_yields_nothing() {
    let u = unit_named(&fixtures(), "wrapper");
    assert!(intendant::extract(&u).unwrap().is_none());
}

/// A copy of one fixture log dir in a scratch root.
fn copy_fixture(s: &Scratch, dir: &str) -> PathBuf {
    let from = fixtures().join("logs").join(dir);
    let to = s.path(&format!("home/logs/{dir}"));
    std::fs::create_dir_all(to.join("turns")).unwrap();
    for rel in ["session.jsonl", "session_meta.json"] {
        std::fs::copy(from.join(rel), to.join(rel)).unwrap();
    }
    for e in std::fs::read_dir(from.join("turns")).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join("turns").join(e.file_name())).unwrap();
        }
    }
    s.0.join("home")
}

#[test]
fn bad_lines_are_counted_never_fatal() {
    let s = Scratch::new("intendant-bad");
    let root = copy_fixture(&s, "mixed");
    let log = root.join("logs/mixed/session.jsonl");
    let before = intendant::extract(&unit_named(&root, "mixed"))
        .unwrap()
        .unwrap();
    for g in garbage_lines(br#"{"ts":"12:00:00.000","ts_ms":1772370000000,"event":"conversation_message","data":{"role":"user","text":"#) {
        append(&log, &g);
        append(&log, b"\n");
    }
    append_huge_line(&log, 100 << 20);
    append(&log, br#"{"ts":"12:00:01.000","event":"conversation_message","data":{"message_seq":7,"role":"user","provenance":"follow_up","text":"after the huge line"}}"#);
    append(&log, b"\n");
    append(&log, br#"{"ts":"12:00:02.000","ts_ms":17723"#);
    let x = intendant::extract(&unit_named(&root, "mixed"))
        .unwrap()
        .unwrap();
    assert_eq!(x.diagnostics.bad_lines, 3, "{:?}", x.diagnostics);
    assert_eq!(x.diagnostics.huge_lines, 1);
    assert_eq!(x.diagnostics.torn_tails, 1);
    assert_eq!(x.records.len(), before.records.len() + 1);
    assert_eq!(x.records.last().unwrap().text, "after the huge line");
}

#[test]
fn empty_unreadable_vanished_and_looping_files() {
    let s = Scratch::new("intendant-files");
    let root = copy_fixture(&s, "meta-task");
    let dir = root.join("logs/meta-task");
    let unit = unit_named(&root, "meta-task");
    std::fs::write(dir.join("session.jsonl"), b"").unwrap();
    let x = intendant::extract(&unit).unwrap().unwrap();
    assert_eq!(
        x.records.len(),
        1,
        "an empty legacy log still has its meta task"
    );
    std::fs::write(dir.join("session_meta.json"), b"{not json").unwrap();
    assert!(
        intendant::extract(&unit).unwrap().is_none(),
        "nothing at all"
    );

    std::fs::remove_file(dir.join("session.jsonl")).unwrap();
    assert!(
        matches!(intendant::extract(&unit), Err(ExtractError::Io { .. })),
        "vanished"
    );
    std::fs::create_dir(dir.join("session.jsonl")).unwrap();
    assert!(
        matches!(intendant::extract(&unit), Err(ExtractError::Io { .. })),
        "unreadable"
    );
    std::fs::remove_dir(dir.join("session.jsonl")).unwrap();
    #[cfg(unix)]
    {
        files::symlink_loop(&dir.join("session.jsonl"));
        assert!(
            matches!(intendant::extract(&unit), Err(ExtractError::Io { .. })),
            "symlink loop"
        );
        std::os::unix::fs::symlink(root.join("logs"), root.join("logs/loop")).unwrap();
        assert!(
            intendant::discover(&root).is_empty(),
            "no log is readable now"
        );
    }
}

#[test]
fn damaged_logs_never_panic() {
    let s = Scratch::new("intendant-mut");
    for dir in ["new-era", "22222222-2222-4222-8222-222222222222", "mixed"] {
        let root = copy_fixture(&s, dir);
        let log = root.join("logs").join(dir).join("session.jsonl");
        let meta = root.join("logs").join(dir).join("session_meta.json");
        let unit = unit_named(&root, dir);
        let original = std::fs::read(&log).unwrap();
        let original_meta = std::fs::read(&meta).unwrap();
        for m in files::mutations(&original, 200) {
            std::fs::write(&log, &m).unwrap();
            let _ = intendant::extract(&unit);
        }
        std::fs::write(&log, &original).unwrap();
        for m in files::mutations(&original_meta, 100) {
            std::fs::write(&meta, &m).unwrap();
            let _ = intendant::extract(&unit);
        }
    }
}
