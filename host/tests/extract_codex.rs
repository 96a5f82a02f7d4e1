//! Codex extraction (DESIGN.md §5 "codex"): every rollout in
//! `shared/corpus/codex/` against a hand-checked golden, discovery
//! (`sessions/`, `archived_sessions/`, `.jsonl.zst` twins, `session_index`
//! titles), rollbacks, and bad input that must give counts or errors, never
//! a panic.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::{append, append_huge_line, garbage_lines, Scratch};
use recall_core::model::{Mark, Relation, Role, Source};
use recall_host::extract::{codex, common::walk_files, ExtractError, SessionSource};
use std::path::Path;

fn unit(path: &Path) -> SessionSource {
    SessionSource {
        source: Source::Codex,
        unit: path.to_string_lossy().into_owned(),
        files: vec![path.to_path_buf()],
        context: serde_json::Value::Null,
    }
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn corpus_rollouts_match_their_goldens() {
    let shared = golden::shared_dir();
    let corpus = shared.join("corpus/codex");
    let rollouts = walk_files(&corpus, 8, &|n| n.ends_with(".jsonl"));
    assert_eq!(rollouts.len(), 6, "{rollouts:?}");
    let mut failures = Vec::new();
    for path in &rollouts {
        let x = codex::extract(&unit(path))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .unwrap_or_else(|| panic!("{}: no session", path.display()));
        let name = rel(&corpus, path).replace(".jsonl", ".json");
        if let Some(d) = golden::check(
            &format!("golden/codex/{name}"),
            golden::golden_json(&x, &shared),
        ) {
            failures.push(d);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_synthetic_home_is_discovered() {
    let home = golden::shared_dir().join("corpus/codex/synthetic");
    let units = codex::discover(&home);
    let got: Vec<String> = units.iter().map(|u| rel(&home, &u.files[0])).collect();
    assert_eq!(
        got,
        [
            "sessions/2026/01/02/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
            "sessions/2026/01/03/rollout-2026-01-03T04-05-10-33333333-3333-4333-8333-333333333333.jsonl",
            "sessions/rollout-44444444-4444-4444-8444-444444444444.jsonl",
        ]
    );
    let sub = codex::extract(&units[1]).unwrap().unwrap();
    let parent = sub.meta.parent.expect("subagent parent");
    assert_eq!(parent.key, "codex:22222222-2222-4222-8222-222222222222");
    assert_eq!(parent.relation, Relation::Subagent);
}

fn line(ts: &str, ty: &str, payload: serde_json::Value) -> String {
    serde_json::json!({"timestamp": ts, "type": ty, "payload": payload}).to_string() + "\n"
}

fn meta(id: &str, ts: &str) -> String {
    line(
        ts,
        "session_meta",
        serde_json::json!({"id": id, "cwd": "/w", "git": {"branch": "main"}, "source": "cli"}),
    )
}

fn user(ts: &str, text: &str) -> String {
    line(
        ts,
        "event_msg",
        serde_json::json!({"type": "user_message", "message": text}),
    )
}

fn answer(ts: &str, id: &str, text: &str) -> String {
    line(
        ts,
        "response_item",
        serde_json::json!({"type": "message", "role": "assistant", "id": id,
                           "content": [{"type": "output_text", "text": text}]}),
    )
}

const ID: &str = "019a0000-0000-7000-8000-000000000001";

#[test]
fn discovery_titles_twins_and_archives() {
    let s = Scratch::new("codex-discover");
    let home = s.path("codex");
    let body = meta(ID, "2026-01-01T00:00:00Z") + &user("2026-01-01T00:00:01Z", "plain text wins");
    let plain = s.write(
        &format!("codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-{ID}.jsonl"),
        body.as_bytes(),
    );
    let zbody = meta(ID, "2026-01-01T00:00:00Z") + &user("2026-01-01T00:00:01Z", "compressed twin");
    let twin = zstd::encode_all(zbody.as_bytes(), 3).unwrap();
    s.write(
        &format!("codex/sessions/2026/01/01/rollout-2026-01-01T00-00-00-{ID}.jsonl.zst"),
        &twin,
    );
    let id2 = "019a0000-0000-7000-8000-000000000002";
    let cold =
        meta(id2, "2026-01-02T00:00:00Z") + &user("2026-01-02T00:00:01Z", "from the archive");
    s.write(
        &format!("codex/archived_sessions/rollout-2026-01-02T00-00-00-{id2}.jsonl.zst"),
        &zstd::encode_all(cold.as_bytes(), 3).unwrap(),
    );
    s.write(
        "codex/session_index.jsonl",
        format!(
            "{{\"id\":\"{ID}\",\"thread_name\":\"First name\"}}\n{{\"id\":\"{ID}\",\"thread_name\":\"Renamed\"}}\nnot json\n"
        )
        .as_bytes(),
    );
    std::fs::create_dir_all(s.path("codex/sessions/2026/dir.jsonl/x")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(s.path("codex/sessions"), s.path("codex/sessions/2026/loop"))
        .unwrap();

    let units = codex::discover(&home);
    let got: Vec<String> = units.iter().map(|u| rel(&home, &u.files[0])).collect();
    assert_eq!(
        got,
        [
            format!("sessions/2026/01/01/rollout-2026-01-01T00-00-00-{ID}.jsonl"),
            format!("archived_sessions/rollout-2026-01-02T00-00-00-{id2}.jsonl.zst"),
        ],
        "plain twin wins, the directory loop ends, archives are found"
    );
    let x = codex::extract(&units[0]).unwrap().unwrap();
    assert_eq!(
        x.meta.title.as_deref(),
        Some("Renamed"),
        "last session_index entry wins"
    );
    assert_eq!(x.records[0].text, "plain text wins");
    assert_eq!(x.meta.paths, [plain.to_string_lossy().into_owned()]);
    let x = codex::extract(&units[1]).unwrap().unwrap();
    assert_eq!(x.meta.session_id, id2);
    assert_eq!(
        x.meta.title.as_deref(),
        Some("from the archive"),
        "no index entry ⇒ first prompt"
    );
    assert_eq!(
        x.meta.resume.as_deref(),
        Some(&*format!("codex resume {id2}"))
    );
}

#[test]
fn rollback_marks_supersede_the_rolled_back_turns_only() {
    let s = Scratch::new("codex-rollback");
    let mut body = meta(ID, "2026-01-01T00:00:00Z");
    body += &user("2026-01-01T00:00:01Z", "one");
    body += &answer("2026-01-01T00:00:02Z", "m1", "answer one");
    body += &user("2026-01-01T00:00:03Z", "two");
    body += &answer("2026-01-01T00:00:04Z", "m2", "answer two");
    body += &line(
        "2026-01-01T00:00:05Z",
        "event_msg",
        serde_json::json!({"type": "thread_rolled_back", "num_turns": 1,
                           "anchor": {"item_id": "m1", "position": "after"}}),
    );
    body += &user("2026-01-01T00:00:06Z", "three");
    let path = s.write("rollout.jsonl", body.as_bytes());
    let x = codex::extract(&unit(&path)).unwrap().unwrap();
    assert!(
        matches!(
            x.marks[0],
            Mark::TurnCount {
                at: 4,
                num_turns: 1
            }
        ),
        "{:?}",
        x.marks
    );
    assert!(
        matches!(x.marks[1], Mark::ItemAnchor { at: 4, .. }),
        "{:?}",
        x.marks
    );
    let active = recall_core::derive_active(&x.records, &x.marks);
    let got: Vec<(&str, bool)> = x
        .records
        .iter()
        .map(|r| r.text.as_str())
        .zip(active)
        .collect();
    assert_eq!(
        got,
        [
            ("one", true),
            ("answer one", true),
            ("two", false),
            ("answer two", false),
            ("three", true)
        ]
    );
}

#[test]
fn bad_lines_are_counted_and_skipped() {
    let s = Scratch::new("codex-bad");
    let path = s.path("rollout.jsonl");
    append(&path, meta(ID, "2026-01-01T00:00:00Z").as_bytes());
    append(&path, user("2026-01-01T00:00:01Z", "before").as_bytes());
    for g in garbage_lines(br#"{"timestamp":"2026-01-01T00:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"#) {
        append(&path, &g);
        append(&path, b"\n");
    }
    append_huge_line(&path, 100 << 20);
    append(&path, user("2026-01-01T00:00:03Z", "after").as_bytes());
    append(
        &path,
        br#"{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"user_mes"#,
    );
    let x = codex::extract(&unit(&path)).unwrap().unwrap();
    let texts: Vec<&str> = x.records.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["before", "after"]);
    let d = &x.diagnostics;
    assert_eq!(
        (d.bad_lines, d.huge_lines, d.torn_tails),
        (3, 1, 1),
        "{d:?}"
    );
}

#[test]
fn empty_missing_and_odd_files_give_errors_or_nothing() {
    let s = Scratch::new("codex-odd");
    let empty = s.write("codex/sessions/empty.jsonl", b"");
    assert!(
        codex::extract(&unit(&empty)).unwrap().is_none(),
        "no session_meta ⇒ no session"
    );

    let gone = s.write(
        "codex/sessions/gone.jsonl",
        meta(ID, "2026-01-01T00:00:00Z").as_bytes(),
    );
    let units = codex::discover(&s.path("codex"));
    std::fs::remove_file(&gone).unwrap();
    let vanished = units
        .iter()
        .find(|u| u.files[0] == gone)
        .expect("discovered");
    assert!(matches!(
        codex::extract(vanished),
        Err(ExtractError::Io { ref source, .. }) if source.kind() == std::io::ErrorKind::NotFound
    ));

    let dir = s.path("codex/sessions/adir.jsonl/x");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.parent().unwrap();
    assert!(matches!(
        codex::extract(&unit(dir)),
        Err(ExtractError::Io { .. })
    ));

    let corrupt = s.write("codex/sessions/bad.jsonl.zst", b"not zstd at all\n");
    match codex::extract(&unit(&corrupt)) {
        Err(ExtractError::Io { .. }) | Ok(None) => {}
        other => panic!("corrupt zstd: {other:?}"),
    }

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = s.write(
            "codex/sessions/locked.jsonl",
            meta(ID, "2026-01-01T00:00:00Z").as_bytes(),
        );
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::File::open(&locked).is_ok() {
            eprintln!(
                "note: running privileged, chmod 000 does not make the file unreadable; skipped"
            );
        } else {
            assert!(matches!(
                codex::extract(&unit(&locked)),
                Err(ExtractError::Io { .. })
            ));
        }
        files::symlink_loop(&s.path("codex/sessions/self.jsonl"));
        assert!(matches!(
            codex::extract(&unit(&s.path("codex/sessions/self.jsonl"))),
            Err(ExtractError::Io { .. })
        ));
    }
}

#[test]
fn injections_and_twins_are_not_indexed_twice() {
    let s = Scratch::new("codex-twins");
    let mut body = meta(ID, "2026-01-01T00:00:00Z");
    let item = |role: &str, text: &str| serde_json::json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]});
    body += &line(
        "2026-01-01T00:00:00Z",
        "response_item",
        item("developer", "<permissions instructions>x"),
    );
    body += &line(
        "2026-01-01T00:00:00Z",
        "response_item",
        item("user", "  <environment_context>\n<cwd>/w</cwd>"),
    );
    body += &line(
        "2026-01-01T00:00:01Z",
        "response_item",
        item("user", "real prompt"),
    );
    body += &user("2026-01-01T00:00:01Z", "real prompt");
    body += &user(
        "2026-01-01T00:00:02Z",
        "<user_shell_command>\nls\n</user_shell_command>",
    );
    body += &line(
        "2026-01-01T00:00:03Z",
        "event_msg",
        serde_json::json!({"type": "agent_message", "message": "hi"}),
    );
    body += &answer("2026-01-01T00:00:03Z", "m1", "hi");
    body += &line(
        "2026-01-01T00:00:04Z",
        "response_item",
        serde_json::json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"}),
    );
    body += &line(
        "2026-01-01T00:00:05Z",
        "compacted",
        serde_json::json!({"message": "summary", "replacement_history": [item("user", "real prompt")]}),
    );
    let path = s.write("rollout.jsonl", body.as_bytes());
    let x = codex::extract(&unit(&path)).unwrap().unwrap();
    let got: Vec<(Role, &str)> = x
        .records
        .iter()
        .map(|r| (r.role, r.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Role::User, "real prompt"),
            (Role::Assistant, "hi"),
            (Role::Tool, "exec_command {\"cmd\":\"ls\"}")
        ]
    );
    assert_eq!(x.meta.messages, 2);
}
