//! Pi extraction (DESIGN.md §5 "pi"): the real sessions in
//! `shared/corpus/pi/` against hand-checked goldens, the branch tree,
//! injected blocks, parents, and bad input that must give counts or errors,
//! never a panic.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::{append, append_huge_line, garbage_lines, Scratch};
use recall_core::model::{Mark, Relation, Role, Source};
use recall_host::extract::{pi, ExtractError, SessionSource};
use std::path::Path;

fn unit(path: &Path) -> SessionSource {
    SessionSource {
        source: Source::Pi,
        unit: path.to_string_lossy().into_owned(),
        files: vec![path.to_path_buf()],
        context: serde_json::Value::Null,
    }
}

#[test]
fn corpus_sessions_match_their_goldens() {
    let shared = golden::shared_dir();
    let corpus = shared.join("corpus/pi");
    let mut failures = Vec::new();
    for (rel, name) in [
        ("real-v3/agent-history-session-01-redacted.jsonl", "real-v3"),
        ("pi-mono-v1/large-session.jsonl", "v1-large-session"),
        ("pi-mono-v1/before-compaction.jsonl", "v1-before-compaction"),
    ] {
        let x = pi::extract(&unit(&corpus.join(rel)))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
            .unwrap_or_else(|| panic!("{rel}: no session"));
        let got = golden::golden_json(&x, &shared);
        if let Some(d) = golden::check(&format!("golden/pi/{name}.json"), got) {
            failures.push(d);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"019e0000-0000-7000-8000-000000000001","timestamp":"2026-06-05T05:24:28.246Z","cwd":"/home/u/w","parentSession":"/home/u/.pi/agent/sessions/--home-u-w--/2026-06-01T00-00-00-000Z_019d0000-0000-7000-8000-00000000000f.jsonl"}"#;

/// A v3 session whose leaf moved back: entries b1/b2 are an abandoned branch.
fn branched() -> String {
    [
        HEADER,
        r#"{"type":"session_info","id":"i0","parentId":null,"timestamp":"2026-06-05T05:24:28.246Z","name":"first name"}"#,
        r#"{"type":"model_change","id":"m0","parentId":"i0","timestamp":"2026-06-05T05:24:28.250Z","provider":"x","modelId":"y"}"#,
        r#"{"type":"message","id":"u1","parentId":"m0","timestamp":"2026-06-05T05:25:00.000Z","message":{"role":"user","content":"<skill name=\"rust\" location=\"/s/SKILL.md\">\n# rust\nsecret skill body\n</skill>\n\n  keep this prompt  ","timestamp":1780637100000}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-05T05:25:05.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hidden"},{"type":"text","text":"part one"},{"type":"text","text":" and two"},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}],"timestamp":1780637105000}}"#,
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-05T05:25:06.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"a.txt"}],"isError":false,"timestamp":1780637106000}}"#,
        r#"{"type":"message","id":"b1","parentId":"r1","timestamp":"2026-06-05T05:26:00.000Z","message":{"role":"user","content":[{"type":"text","text":"abandoned prompt"}],"timestamp":1780637160000}}"#,
        r#"{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-06-05T05:26:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"abandoned answer"}],"timestamp":1780637165000}}"#,
        r#"{"type":"branch_summary","id":"s1","parentId":"r1","timestamp":"2026-06-05T05:27:00.000Z","fromId":"b2","summary":"not indexed"}"#,
        r#"{"type":"message","id":"u2","parentId":"s1","timestamp":"2026-06-05T05:27:10.000Z","message":{"role":"user","content":[{"type":"text","text":"<file name=\"src/a.rs\">\nfn a() {}\n</file>\n\nnew branch prompt"}],"timestamp":1780637230000}}"#,
        r#"{"type":"message","id":"x1","parentId":"u2","timestamp":"2026-06-05T05:27:20.000Z","message":{"role":"bashExecution","command":"git status","output":"clean","exitCode":0,"timestamp":1780637240000}}"#,
        r#"{"type":"session_info","id":"i1","parentId":"x1","timestamp":"2026-06-05T05:28:00.000Z","name":"Renamed   session"}"#,
        "",
    ]
    .join("\n")
}

#[test]
fn branches_blocks_titles_and_parent() {
    let s = Scratch::new("pi-branch");
    let root = s.path("sessions");
    s.write(
        "sessions/--home-u-w--/2026-06-05T05-24-28-246Z_019e0000.jsonl",
        branched().as_bytes(),
    );
    let units = pi::discover(&root);
    assert_eq!(units.len(), 1);
    let x = pi::extract(&units[0]).unwrap().unwrap();
    assert_eq!(x.meta.session_id, "019e0000-0000-7000-8000-000000000001");
    assert_eq!(x.meta.cwd.as_deref(), Some("/home/u/w"));
    assert_eq!(x.meta.title.as_deref(), Some("Renamed session"));
    let parent = x.meta.parent.as_ref().unwrap();
    assert_eq!(parent.key, "pi:019d0000-0000-7000-8000-00000000000f");
    assert_eq!(parent.relation, Relation::Fork);
    assert!(x
        .meta
        .resume
        .as_deref()
        .unwrap()
        .starts_with("pi --session /"));

    let active = recall_core::derive_active(&x.records, &x.marks);
    let got: Vec<(&str, &str, bool)> = x
        .records
        .iter()
        .zip(&active)
        .map(|(r, a)| (r.role.as_str(), r.text.as_str(), *a))
        .collect();
    assert_eq!(
        got,
        vec![
            ("user", "keep this prompt", true),
            ("assistant", "part one and two", true),
            ("tool", "bash {\"command\":\"ls\"}", true),
            ("tool", "a.txt", true),
            ("user", "abandoned prompt", false),
            ("assistant", "abandoned answer", false),
            ("user", "new branch prompt", true),
            ("tool", "git status\nclean", true),
        ]
    );
    assert!(matches!(&x.marks[..], [Mark::RecordIds { at: 8, reason, .. }] if reason == "branch"));
    assert_eq!(x.meta.messages, 5);
    assert_eq!(
        (x.meta.created_ms, x.meta.updated_ms),
        (Some(1780637100000), Some(1780637230000))
    );
    assert!(x
        .records
        .iter()
        .all(|r| !r.text.contains("secret") && !r.text.contains("hidden")));
}

#[test]
fn unresolvable_parent_chain_marks_nothing() {
    let s = Scratch::new("pi-chain");
    let text = branched().replace(r#""parentId":"u2""#, r#""parentId":"gone""#);
    let p = s.write("sessions/--w--/x_1.jsonl", text.as_bytes());
    let x = pi::extract(&unit(&p)).unwrap().unwrap();
    assert!(x.marks.is_empty(), "{:?}", x.marks);
}

#[test]
fn bad_lines_are_counted_never_fatal() {
    let s = Scratch::new("pi-bad");
    let p = s.write("sessions/--w--/t_1.jsonl", branched().as_bytes());
    let before = pi::extract(&unit(&p)).unwrap().unwrap();
    for g in garbage_lines(
        br#"{"type":"message","id":"g1","parentId":"x1","message":{"role":"user","content":"#,
    ) {
        append(&p, &g);
        append(&p, b"\n");
    }
    append_huge_line(&p, 100 << 20);
    append(
        &p,
        br#"{"type":"message","message":{"role":"user","content":"after the huge line"}}"#,
    );
    append(&p, b"\n");
    append(
        &p,
        br#"{"type":"message","id":"t0","parentId":"x1","message":{"role":"user","content":"tor"#,
    );
    let x = pi::extract(&unit(&p)).unwrap().unwrap();
    assert_eq!(x.diagnostics.bad_lines, 3, "{:?}", x.diagnostics);
    assert_eq!(x.diagnostics.huge_lines, 1);
    assert_eq!(x.diagnostics.torn_tails, 1);
    assert_eq!(x.records.len(), before.records.len() + 1);
    let last = x.records.last().unwrap();
    assert_eq!(
        (last.role, last.text.as_str()),
        (Role::User, "after the huge line")
    );
    assert_eq!(
        last.ts_ms, 1780637240000,
        "no timestamp ⇒ the last known one"
    );
}

#[test]
fn empty_unreadable_vanished_and_looping_files() {
    let s = Scratch::new("pi-files");
    let p = s.write("sessions/--w--/e_1.jsonl", b"");
    assert!(pi::extract(&unit(&p)).unwrap().is_none(), "empty file");
    s.write("sessions/--w--/h_2.jsonl", format!("{HEADER}\n").as_bytes());
    let only_header = s.0.join("sessions/--w--/h_2.jsonl");
    assert!(
        pi::extract(&unit(&only_header)).unwrap().is_none(),
        "header only"
    );

    std::fs::remove_file(&p).unwrap();
    assert!(
        matches!(pi::extract(&unit(&p)), Err(ExtractError::Io { .. })),
        "vanished"
    );
    std::fs::create_dir(&p).unwrap();
    assert!(
        matches!(pi::extract(&unit(&p)), Err(ExtractError::Io { .. })),
        "unreadable"
    );
    std::fs::remove_dir(&p).unwrap();
    #[cfg(unix)]
    {
        files::symlink_loop(&p);
        assert!(
            matches!(pi::extract(&unit(&p)), Err(ExtractError::Io { .. })),
            "symlink loop"
        );
        std::os::unix::fs::symlink(s.0.join("sessions"), s.0.join("sessions/loop")).unwrap();
        let found = pi::discover(&s.0.join("sessions"));
        assert!(
            found.iter().all(|u| !u.unit.ends_with("e_1.jsonl")),
            "{found:?}"
        );
    }
}

#[test]
fn odd_field_shapes_lose_the_field_not_the_line() {
    let s = Scratch::new("pi-shapes");
    let text = [
        r#"{"type":"session","version":3,"id":"019e0000-0000-7000-8000-0000000000aa","cwd":42,"parentSession":{"path":"x"}}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":{"odd":1},"message":{"role":"user","content":[{"type":"text","text":{"odd":true}},{"type":"text","text":"kept prompt"}],"timestamp":"2026-06-05T05:25:00Z"}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-05T05:25:01Z","message":{"role":"assistant","content":{"type":"text","text":"single part object"},"timestamp":[1]}}"#,
        r#"{"type":"session_info","id":"i1","parentId":"a1","name":["not","a","name"]}"#,
        "",
    ]
    .join("\n");
    let p = s.write("sessions/--w--/o_1.jsonl", text.as_bytes());
    let x = pi::extract(&unit(&p)).unwrap().unwrap();
    assert_eq!(x.diagnostics.bad_lines, 0);
    assert_eq!(x.meta.cwd, None);
    assert_eq!(x.meta.parent, None);
    assert_eq!(x.meta.title.as_deref(), Some("kept prompt"));
    let got: Vec<(&str, i64)> = x
        .records
        .iter()
        .map(|r| (r.text.as_str(), r.ts_ms))
        .collect();
    let t = |s: &str| recall_host::extract::common::iso_ms(s).unwrap();
    assert_eq!(
        got,
        vec![
            ("kept prompt", t("2026-06-05T05:25:00Z")),
            ("single part object", t("2026-06-05T05:25:01Z")),
        ]
    );
}

#[test]
fn damaged_files_never_panic() {
    let s = Scratch::new("pi-mut");
    let p = s.path("sessions/--w--/m_1.jsonl");
    let real = std::fs::read(
        golden::shared_dir().join("corpus/pi/real-v3/agent-history-session-01-redacted.jsonl"),
    )
    .unwrap();
    for original in [branched().into_bytes(), real] {
        for m in files::mutations(&original, 300) {
            std::fs::write(&p, &m).unwrap();
            let _ = pi::extract(&unit(&p));
        }
    }
}
