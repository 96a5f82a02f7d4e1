//! Kimi extraction (DESIGN.md §5 "kimi"): the real and synthetic sessions in
//! `shared/corpus/kimi/` against hand-checked goldens, discovery in both
//! layouts, and bad input that must give counts or errors, never a panic.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::{append, append_huge_line, garbage_lines, Scratch};
use recall_core::model::{Role, Source};
use recall_host::extract::{kimi, ExtractError, SessionSource};
use std::path::{Path, PathBuf};

fn code_unit(dir: &Path) -> SessionSource {
    let mut files = vec![dir.join("agents/main/wire.jsonl")];
    if dir.join("state.json").is_file() {
        files.push(dir.join("state.json"));
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir.join("agents"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    subs.sort();
    files.extend(
        subs.into_iter()
            .filter(|p| !p.ends_with("main"))
            .map(|p| p.join("wire.jsonl"))
            .filter(|p| p.is_file()),
    );
    SessionSource {
        source: Source::Kimi,
        unit: dir.to_string_lossy().into_owned(),
        files,
        context: serde_json::json!({"flavor": "code"}),
    }
}

fn legacy_unit(dir: &Path) -> SessionSource {
    SessionSource {
        source: Source::Kimi,
        unit: dir.to_string_lossy().into_owned(),
        files: vec![dir.join("wire.jsonl"), dir.join("state.json")],
        context: serde_json::json!({"flavor": "legacy", "cwd": null}),
    }
}

#[test]
fn corpus_sessions_match_their_goldens() {
    let shared = golden::shared_dir();
    let corpus = shared.join("corpus/kimi");
    let mut units = Vec::new();
    for name in ["sample-main", "sample-compaction"] {
        units.push((name, code_unit(&corpus.join("kimi-code-v1x").join(name))));
    }
    for name in [
        "large-100msgs",
        "legacy-protocol-1.3",
        "with-subagent-collapsed",
    ] {
        units.push((
            name,
            legacy_unit(&corpus.join("legacy-kimi-cli").join(name)),
        ));
    }
    let mut failures = Vec::new();
    for (name, unit) in units {
        let x = kimi::extract(&unit)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: no session"));
        let got = golden::golden_json(&x, &shared);
        if let Some(d) = golden::check(&format!("golden/kimi/{name}.json"), got) {
            failures.push(d);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Lays out a Kimi Code home the way the agent does, with an index whose
/// `sessionDir` points at another machine.
fn code_home(s: &Scratch) -> PathBuf {
    let root = s.path("kimi-code");
    let dir = "sessions/wd_work_0123456789ab/session_1";
    s.write(
        "kimi-code/session_index.jsonl",
        b"{\"sessionId\":\"session_1\",\"sessionDir\":\"/home/other/.kimi-code/sessions/x/session_1\",\"workDir\":\"/from/index\"}\n",
    );
    s.write(
        &format!("kimi-code/{dir}/state.json"),
        br#"{"title":"","agents":{}}"#,
    );
    s.write(
        &format!("kimi-code/{dir}/agents/main/wire.jsonl"),
        concat!(
            r#"{"type":"metadata","protocol_version":"1.4","created_at":1000}"#, "\n",
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"first   prompt\nhere"}],"origin":{"kind":"user"},"time":1779256802000}"#, "\n",
            r#"{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"text","text":"answer one"}},"time":1779256803000}"#, "\n",
            r#"{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"think","think":"hidden"}},"time":1779256803100}"#, "\n",
            r#"{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"text","text":"answer two"}},"time":1779256803200}"#, "\n",
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"second prompt"}],"origin":{"kind":"user"},"time":1779256804000}"#, "\n",
            r#"{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"c1","toolCallId":"t1","name":"Shell","args":{"command":"ls"}},"time":1779256804100}"#, "\n",
            r#"{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"t1","result":{"output":"a.txt","isError":false}},"time":1779256804200}"#, "\n",
            r#"{"type":"turn.steer","input":[{"type":"text","text":"also this"}],"origin":{"kind":"user"},"time":1779256804300}"#, "\n",
            r#"{"type":"context.undo","count":1,"time":1779256805000}"#, "\n",
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"third prompt"}],"origin":{"kind":"user"},"time":1779256806000}"#, "\n",
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"<system>bg done</system>"}],"origin":{"kind":"system_trigger"},"time":1779256806100}"#, "\n",
        )
        .as_bytes(),
    );
    s.write(
        &format!("kimi-code/{dir}/agents/agent-0/wire.jsonl"),
        concat!(
            r#"{"type":"turn.prompt","input":[{"type":"text","text":"sub task"}],"time":1779256804150}"#, "\n",
        )
        .as_bytes(),
    );
    root
}

#[test]
fn code_discovery_undo_steps_and_subagents() {
    let s = Scratch::new("kimi-code");
    let root = code_home(&s);
    let units = kimi::discover_code(&root);
    assert_eq!(units.len(), 1, "{units:?}");
    let x = kimi::extract(&units[0]).unwrap().unwrap();
    assert_eq!(x.meta.session_id, "session_1");
    assert_eq!(x.meta.cwd.as_deref(), Some("/from/index"));
    assert_eq!(
        x.meta.title.as_deref(),
        Some("first prompt here"),
        "empty state title ⇒ first prompt"
    );
    assert_eq!(x.meta.resume.as_deref(), Some("kimi --session session_1"));
    let prose: Vec<(&str, &str, bool)> = x
        .records
        .iter()
        .filter(|r| r.role != Role::Tool)
        .map(|r| (r.role.as_str(), r.text.as_str(), r.subagent))
        .collect();
    assert_eq!(
        prose,
        vec![
            ("user", "first   prompt\nhere", false),
            ("assistant", "answer one\nanswer two", false),
            ("user", "second prompt", false),
            ("user", "also this", false),
            ("user", "third prompt", false),
            ("user", "sub task", true),
        ]
    );
    let active = recall_core::derive_active(&x.records, &x.marks);
    let by_text = |t: &str| {
        let i = x.records.iter().position(|r| r.text == t).unwrap();
        active[i]
    };
    assert!(by_text("first   prompt\nhere") && by_text("answer one\nanswer two"));
    assert!(!by_text("second prompt") && !by_text("also this") && !by_text("a.txt"));
    assert!(by_text("third prompt") && by_text("sub task"));
    assert_eq!(x.meta.messages, 6);
    assert_eq!(
        (x.meta.created_ms, x.meta.updated_ms),
        (Some(1779256802000), Some(1779256806000))
    );
}

#[test]
fn legacy_discovery_maps_md5_dirs_to_cwd() {
    let s = Scratch::new("kimi-legacy");
    let root = s.path("kimi");
    // md5("/tmp/work") = a70cd606fdf06596dff816f4b9b8bc27
    s.write(
        "kimi/kimi.json",
        br#"{"work_dirs":[{"path":"/tmp/work","kaos":"local","last_session_id":null}]}"#,
    );
    let dir = "kimi/sessions/a70cd606fdf06596dff816f4b9b8bc27/3f0e1c2d-0000-4000-8000-000000000001";
    s.write(
        &format!("{dir}/state.json"),
        br#"{"custom_title":"Legacy title"}"#,
    );
    s.write(
        &format!("{dir}/wire.jsonl"),
        concat!(
            r#"{"type": "metadata", "protocol_version": "1.4"}"#, "\n",
            r#"{"timestamp": 1773723366.25, "message": {"type": "TurnBegin", "payload": {"user_input": "hello legacy"}}}"#, "\n",
            r#"{"timestamp": 1773723367.5, "message": {"type": "ContentPart", "payload": {"type": "text", "text": "hi back"}}}"#, "\n",
        )
        .as_bytes(),
    );
    s.write(
        &format!("{dir}/subagents/ab12/wire.jsonl"),
        concat!(
            r#"{"timestamp": 1773723368.0, "message": {"type": "TurnBegin", "payload": {"user_input": "sub prompt"}}}"#, "\n",
        )
        .as_bytes(),
    );
    let units = kimi::discover_legacy(&root);
    assert_eq!(units.len(), 1);
    let x = kimi::extract(&units[0]).unwrap().unwrap();
    assert_eq!(x.meta.session_id, "3f0e1c2d-0000-4000-8000-000000000001");
    assert_eq!(x.meta.cwd.as_deref(), Some("/tmp/work"));
    assert_eq!(x.meta.title.as_deref(), Some("Legacy title"));
    let got: Vec<(&str, i64, bool)> = x
        .records
        .iter()
        .map(|r| (r.text.as_str(), r.ts_ms, r.subagent))
        .collect();
    assert_eq!(
        got,
        vec![
            ("hello legacy", 1773723366250, false),
            ("hi back", 1773723367500, false),
            ("sub prompt", 1773723368000, true),
        ]
    );
}

#[test]
fn bad_lines_are_counted_never_fatal() {
    let s = Scratch::new("kimi-bad");
    let root = code_home(&s);
    let wire = root.join("sessions/wd_work_0123456789ab/session_1/agents/main/wire.jsonl");
    let before = kimi::extract(&kimi::discover_code(&root)[0])
        .unwrap()
        .unwrap();
    for g in garbage_lines(br#"{"type":"turn.prompt","origin":{"kind":"user"},"input":"#) {
        append(&wire, &g);
        append(&wire, b"\n");
    }
    append_huge_line(&wire, 100 << 20);
    append(
        &wire,
        br#"{"type":"turn.prompt","input":"after the huge line","time":1779256807000}"#,
    );
    append(&wire, b"\n");
    append(&wire, br#"{"type":"turn.prompt","input":[{"type":"te"#); // torn tail
    let x = kimi::extract(&kimi::discover_code(&root)[0])
        .unwrap()
        .unwrap();
    assert_eq!(x.diagnostics.bad_lines, 3, "{:?}", x.diagnostics);
    assert_eq!(x.diagnostics.huge_lines, 1);
    assert_eq!(x.diagnostics.torn_tails, 1);
    assert_eq!(x.records.len(), before.records.len() + 1);
    assert!(x.records.iter().any(|r| r.text == "after the huge line"));
}

#[test]
fn empty_unreadable_vanished_and_looping_files() {
    let s = Scratch::new("kimi-files");
    let root = code_home(&s);
    let dir = root.join("sessions/wd_work_0123456789ab/session_1");
    let unit = kimi::discover_code(&root).remove(0);
    let wire = dir.join("agents/main/wire.jsonl");

    std::fs::write(&wire, b"").unwrap();
    assert!(
        kimi::extract(&unit).unwrap().is_some(),
        "sub-agent records remain"
    );
    std::fs::remove_file(dir.join("agents/agent-0/wire.jsonl")).unwrap();
    let empty = kimi::extract(&unit).unwrap();
    assert!(empty.is_none(), "an empty session yields nothing");

    std::fs::remove_file(&wire).unwrap();
    assert!(
        matches!(kimi::extract(&unit), Err(ExtractError::Io { .. })),
        "vanished file"
    );

    std::fs::create_dir(&wire).unwrap(); // a directory where the file was: reads fail
    assert!(
        matches!(kimi::extract(&unit), Err(ExtractError::Io { .. })),
        "unreadable file"
    );
    std::fs::remove_dir(&wire).unwrap();

    #[cfg(unix)]
    {
        files::symlink_loop(&wire);
        assert!(
            matches!(kimi::extract(&unit), Err(ExtractError::Io { .. })),
            "symlink loop"
        );
        std::os::unix::fs::symlink(&root, root.join("sessions/loop")).unwrap();
        let _ = kimi::discover_code(&root); // terminates
    }
}

#[test]
fn damaged_wires_never_panic() {
    let s = Scratch::new("kimi-mut");
    let root = code_home(&s);
    let unit = kimi::discover_code(&root).remove(0);
    let wire = root.join("sessions/wd_work_0123456789ab/session_1/agents/main/wire.jsonl");
    let shared = golden::shared_dir();
    let mut originals = vec![std::fs::read(&wire).unwrap()];
    originals.push(
        std::fs::read(shared.join("corpus/kimi/kimi-code-v1x/sample-main/agents/main/wire.jsonl"))
            .unwrap(),
    );
    for original in &originals {
        for m in files::mutations(original, 300) {
            std::fs::write(&wire, &m).unwrap();
            let _ = kimi::extract(&unit);
        }
    }
    let legacy = shared.join("corpus/kimi/legacy-kimi-cli/with-subagent-collapsed/wire.jsonl");
    let lw = s.path("legacy/sessions/h/u1/wire.jsonl");
    let lunit = SessionSource {
        files: vec![lw.clone()],
        ..legacy_unit(lw.parent().unwrap())
    };
    for m in files::mutations(&std::fs::read(legacy).unwrap(), 300) {
        std::fs::write(&lw, &m).unwrap();
        let _ = kimi::extract(&lunit);
    }
}
