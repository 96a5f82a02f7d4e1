//! Gemini CLI, Copilot CLI and Qwen Code extraction (docs/notes-agents.md):
//! every real file of `shared/corpus/{gemini,qwen,copilot-cli}` laid out as
//! each agent writes it, discovered through the registry and checked
//! against the hand-listed texts of `fixtures/next-agents/corpus-expected.json`
//! (reasoning and injected text absent from user and assistant records);
//! fixtures for what the real files lack (Gemini's JSONL replay with
//! `$set` / `$rewindTo`, a Qwen branch, hash-named Gemini project folders);
//! resume commands only for ids in the agent's own syntax; hostile files.

#[path = "support/files.rs"]
mod files;

use files::{append, append_huge_line, garbage_lines, Scratch};
use recall_core::model::{Mark, MessageRecord, Role, Source};
use recall_host::extract::{discover, extract, Extracted, Roots, SessionSource};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/next-agents")
        .join(name)
}

/// Roots of `home` with no environment overrides.
fn roots(home: &Path) -> Roots {
    Roots::resolve(home, |_| None)
}

fn iso(s: &str) -> i64 {
    recall_core::time::parse_rfc3339_ms(s).expect("fixture timestamp")
}

/// A home holding every corpus file where its agent writes it; returns it
/// with the corpus file each home path came from.
fn corpus_home(s: &Scratch) -> Vec<(PathBuf, String)> {
    let corpus = shared().join("corpus");
    let mut out = Vec::new();
    let mut put = |rel: String, from: &str| {
        let dst = s.path(&rel);
        std::fs::copy(corpus.join(from), &dst).expect("copy corpus file");
        out.push((dst, from.to_string()));
    };
    s.write(".gemini/tmp/proj/.project_root", b"/home/u/proj\n");
    for f in [
        "session-2025-12-12T23-27-30606aa5.json",
        "session-2025-12-13T18-50-ed4c9337.json",
    ] {
        put(
            format!(".gemini/tmp/proj/chats/{f}"),
            &format!("gemini/{f}"),
        );
    }
    for id in [
        "27d495d1-de2d-449d-af11-d42d4d6ef80d",
        "85aa748a-9159-4a4f-9f9b-1b2cea32fd5b",
        "a719f84a-209d-406a-8e6c-dc671c9c0192",
    ] {
        put(
            format!(".qwen/projects/-work/chats/{id}.jsonl"),
            &format!("qwen/projects__-work__chats__{id}.jsonl"),
        );
    }
    for id in [
        "049410b4-c1df-44ee-87a5-caa1c349091e",
        "8b23eac7-b9d0-4c24-8e3c-90f5f8a8d02b",
        "e317ef84-75eb-4afe-a1c6-0bd44c47f978",
    ] {
        put(
            format!(".copilot/session-state/{id}/events.jsonl"),
            &format!("copilot-cli/{id}__events.jsonl"),
        );
    }
    out
}

fn texts(x: &Extracted, role: Role) -> Vec<&str> {
    x.records
        .iter()
        .filter(|r| r.role == role)
        .map(|r| r.text.as_str())
        .collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

#[test]
fn corpus_files_give_the_hand_listed_conversation() {
    let s = Scratch::new("next-corpus");
    let placed = corpus_home(&s);
    let units = discover(&roots(&s.0));
    let expected: Value = serde_json::from_slice(
        &std::fs::read(fixture("corpus-expected.json")).expect("expectations"),
    )
    .expect("expectations parse");
    let sessions = expected["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), placed.len(), "every corpus file is listed");
    for e in sessions {
        let file = e["file"].as_str().expect("file");
        let home_path = &placed.iter().find(|(_, f)| f == file).expect("placed").0;
        let unit = units
            .iter()
            .find(|u| u.files.first() == Some(home_path))
            .unwrap_or_else(|| panic!("{file}: not discovered"));
        let x = extract(unit)
            .unwrap_or_else(|err| panic!("{file}: {err}"))
            .unwrap_or_else(|| panic!("{file}: no session"));
        let m = &x.meta;
        assert_eq!(m.source.as_str(), e["source"].as_str().unwrap(), "{file}");
        assert_eq!(m.session_id, e["session_id"].as_str().unwrap(), "{file}");
        let cwd = e["cwd"].as_str().unwrap_or("/home/u/proj");
        assert_eq!(m.cwd.as_deref(), Some(cwd), "{file}: cwd");
        assert_eq!(m.branch.as_deref(), e["branch"].as_str(), "{file}: branch");
        assert_eq!(m.models, strs(&e["models"]), "{file}: models");
        assert_eq!(
            m.created_ms,
            Some(iso(e["created"].as_str().unwrap())),
            "{file}"
        );
        assert_eq!(
            m.updated_ms,
            Some(iso(e["updated"].as_str().unwrap())),
            "{file}"
        );
        let users = strs(&e["users"]);
        assert_eq!(texts(&x, Role::User), users, "{file}: user texts");
        assert_eq!(
            m.title.as_deref(),
            users.first().map(|u| &u[..u.len().min(80)]),
            "{file}: title"
        );
        let assistants = texts(&x, Role::Assistant);
        let prefixes = strs(&e["assistants"]);
        assert_eq!(
            assistants.len(),
            prefixes.len(),
            "{file}: assistant count {assistants:?}"
        );
        for (a, p) in assistants.iter().zip(&prefixes) {
            assert!(
                a.starts_with(p.as_str()),
                "{file}: {a:?} does not start with {p:?}"
            );
        }
        let tools: Vec<&MessageRecord> =
            x.records.iter().filter(|r| r.role == Role::Tool).collect();
        assert_eq!(
            tools.len() as u64,
            e["tools"].as_u64().unwrap(),
            "{file}: tool rows"
        );
        for t in strs(&e["tool_contains"]) {
            assert!(
                tools.iter().any(|r| r.text.contains(&t)),
                "{file}: no tool row has {t:?}"
            );
        }
        for bad in strs(&e["absent"]) {
            for r in x.records.iter().filter(|r| r.role != Role::Tool) {
                assert!(
                    !r.text.contains(&bad),
                    "{file}: {bad:?} is in a {:?} record",
                    r.role
                );
            }
        }
        let program = match m.source {
            Source::Gemini => "gemini --resume",
            Source::Qwen => "qwen --resume",
            _ => "copilot --resume",
        };
        assert_eq!(
            m.resume,
            Some(format!("{program} {}", m.session_id)),
            "{file}"
        );
        assert!(x.marks.is_empty(), "{file}: no supersession");
    }
}

/// The `item_id`s a `record_ids` mark supersedes.
fn superseded(x: &Extracted) -> Vec<String> {
    x.marks
        .iter()
        .flat_map(|m| match m {
            Mark::RecordIds { ids, .. } => ids.clone(),
            _ => Vec::new(),
        })
        .collect()
}

/// (text, superseded) of the prose records.
fn prose(x: &Extracted, role: Role) -> Vec<(String, bool)> {
    let gone = superseded(x);
    x.records
        .iter()
        .filter(|r| r.role == role)
        .map(|r| {
            let off = r.item_id.as_ref().is_some_and(|i| gone.contains(i));
            (r.text.clone(), off)
        })
        .collect()
}

fn one(source: Source, path: &Path, context: Value) -> SessionSource {
    SessionSource {
        source,
        unit: path.to_string_lossy().into_owned(),
        files: vec![path.to_path_buf()],
        context,
    }
}

/// gemini-cli `chatRecordingService.ts` @5411f113: a re-appended id keeps
/// its place with its last body (L648-663, loader L205-240), `$rewindTo`
/// drops that message and all after it (L172-202), `$set.messages`
/// replaces the history (L250-294); `displayContent` is what was typed
/// (`geminiChat.ts` L472-481); `constants.ts` L7 is the `@file` separator.
#[test]
fn gemini_replay_log_upserts_rewinds_and_checkpoints() {
    let path = fixture("gemini-replay.jsonl");
    let x = extract(&one(Source::Gemini, &path, Value::Null))
        .expect("reads")
        .expect("a session");
    assert_eq!(x.meta.session_id, "6f1c2a9e-4b7d-4e21-9a3f-0c5d8e7b1a24");
    assert_eq!(x.meta.title.as_deref(), Some("Replay fixture title"));
    let users = prose(&x, Role::User);
    let t = |s: &str, off| (s.to_string(), off);
    assert_eq!(
        users,
        vec![
            t("Explain @notes.md please", false),
            t("Typed words only", true),
            t("Question after the rewind", false),
            t("Dropped by the checkpoint", true),
        ]
    );
    assert_eq!(
        prose(&x, Role::Assistant),
        vec![
            t("The notes describe the build.", false),
            t("Answer that gets rewound.", true),
            t("Final answer after rewind.", false),
        ]
    );
    assert_eq!(x.meta.models, vec!["gemini-2.5-pro", "gemini-2.5-flash"]);
    let tools = texts(&x, Role::Tool);
    // The checkpoint's copy (masked output) is the tool row's last body.
    assert_eq!(
        tools,
        vec!["read_file {\"path\":\"notes.md\"}\n[masked tool output]"]
    );
    for bad in [
        "SECRET FILE BODY",
        "HIDDEN THOUGHT",
        "INFO NOTICE",
        "FUNCTION RESPONSE TURN",
        "SECRET THOUGHT PART",
        "SYNTHETIC SUMMARY TURN",
        "expanded prompt text",
        "session_context",
    ] {
        assert!(
            x.records.iter().all(|r| !r.text.contains(bad)),
            "{bad} must not be indexed"
        );
    }
    assert_eq!(
        x.meta.resume.as_deref(),
        Some("gemini --resume 6f1c2a9e-4b7d-4e21-9a3f-0c5d8e7b1a24")
    );
}

/// Discovery: a slug folder maps to its cwd through `projects.json`
/// (`projectRegistry.ts` L17-21), a hash folder through the SHA-256 of a
/// listed path (`paths.ts` `getProjectHash`); a subagent file under
/// `chats/<parent id>/` (`chatRecordingService.ts` L484-519) links to its
/// parent and gets no resume command; a migrated `X.json` is left for `X.jsonl`.
#[test]
fn gemini_discovery_maps_folders_to_cwds_and_subagents_to_parents() {
    let s = Scratch::new("next-gemini-disc");
    let hashed = "/home/u/hashed";
    let hash: String = Sha256::digest(hashed.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    s.write(
        ".gemini/projects.json",
        format!(r#"{{"projects":{{"/home/u/slugged":"slugged","{hashed}":"other"}}}}"#).as_bytes(),
    );
    let replay = std::fs::read(fixture("gemini-replay.jsonl")).expect("fixture");
    let parent = "6f1c2a9e-4b7d-4e21-9a3f-0c5d8e7b1a24";
    s.write(
        ".gemini/tmp/slugged/chats/session-2026-05-01T10-00-6f1c2a9e.jsonl",
        &replay,
    );
    s.write(
        ".gemini/tmp/slugged/chats/session-2026-05-01T10-00-6f1c2a9e.json",
        b"{}",
    );
    let sub = r#"{"sessionId":"9d3e1b7a-2c4f-4a6e-8b0d-1f2e3a4b5c6d","projectHash":"x","kind":"subagent"}
{"id":"s1","timestamp":"2026-05-01T10:05:00.000Z","type":"user","content":[{"text":"subagent task"}]}
"#;
    s.write(
        &format!(".gemini/tmp/slugged/chats/{parent}/9d3e1b7a.jsonl"),
        sub.as_bytes(),
    );
    let legacy =
        std::fs::read(shared().join("corpus/gemini/session-2025-12-13T18-50-ed4c9337.json"))
            .expect("corpus");
    s.write(
        &format!(".gemini/tmp/{hash}/chats/session-2025-12-13T18-50-ed4c9337.json"),
        &legacy,
    );
    let units: Vec<SessionSource> = discover(&roots(&s.0))
        .into_iter()
        .filter(|u| u.source == Source::Gemini)
        .collect();
    assert_eq!(units.len(), 3, "{units:?}");
    let by_id = |id: &str| {
        units
            .iter()
            .filter_map(|u| extract(u).ok().flatten())
            .find(|x| x.meta.session_id == id)
            .unwrap_or_else(|| panic!("{id} not found"))
    };
    assert_eq!(by_id(parent).meta.cwd.as_deref(), Some("/home/u/slugged"));
    let child = by_id("9d3e1b7a-2c4f-4a6e-8b0d-1f2e3a4b5c6d");
    assert_eq!(child.meta.cwd.as_deref(), Some("/home/u/slugged"));
    let link = child.meta.parent.as_ref().expect("parent link");
    assert_eq!(link.key, format!("gemini:{parent}"));
    assert_eq!(child.meta.resume, None);
    assert_eq!(
        by_id("ed4c9337-c776-4baf-b346-fe6afc394847")
            .meta
            .cwd
            .as_deref(),
        Some(hashed)
    );
}

/// Qwen Code records chain by `parentUuid` (`chatRecordingService.ts`
/// `ChatRecord`); the visible conversation is the walk from the last
/// conversation record, a `custom_title` record is appended off the tail
/// (`reanchorTitle`, `updateActiveTail: false`) and carries the title;
/// only `real_user` provenance is the person's words; `thought` parts are
/// reasoning.
#[test]
fn qwen_branch_keeps_the_active_path_and_marks_the_rest() {
    let path = fixture("qwen-branch.jsonl");
    let x = extract(&one(Source::Qwen, &path, Value::Null))
        .expect("reads")
        .expect("a session");
    let t = |s: &str, off| (s.to_string(), off);
    assert_eq!(
        prose(&x, Role::User),
        vec![
            t("first question", false),
            t("abandoned branch question", true),
            t("second branch question", false),
        ]
    );
    assert_eq!(
        prose(&x, Role::Assistant),
        vec![
            t("first answer", false),
            t("abandoned answer", true),
            t("kept answer", false)
        ]
    );
    assert_eq!(x.meta.title.as_deref(), Some("Qwen branch title"));
    assert_eq!(x.meta.cwd.as_deref(), Some("/repo/app"));
    assert_eq!(x.meta.branch.as_deref(), Some("main"));
    assert_eq!(x.meta.models, vec!["qwen3-coder-plus", "qwen3-coder-next"]);
    for bad in ["HIDDEN REASONING", "INJECTED GOAL CONTROL"] {
        assert!(x.records.iter().all(|r| !r.text.contains(bad)), "{bad}");
    }
}

/// Issue 24 item 5: an id outside the agent's UUID syntax never becomes a
/// resume command (it could be read as an option).
#[test]
fn ids_outside_the_uuid_syntax_get_no_resume_command() {
    let s = Scratch::new("next-ids");
    let bad = "--yolo";
    let g = s.write(
        "g.jsonl",
        format!("{{\"sessionId\":\"{bad}\",\"projectHash\":\"x\"}}\n{{\"id\":\"a\",\"type\":\"user\",\"content\":\"hello\"}}\n").as_bytes(),
    );
    let q = s.write(
        "q.jsonl",
        format!("{{\"uuid\":\"u\",\"sessionId\":\"{bad}\",\"type\":\"user\",\"message\":{{\"parts\":[{{\"text\":\"hello\"}}]}}}}\n").as_bytes(),
    );
    let c = s.write(
        "c/events.jsonl",
        format!("{{\"type\":\"session.start\",\"data\":{{\"sessionId\":\"{bad}\"}}}}\n{{\"type\":\"user.message\",\"data\":{{\"content\":\"hello\"}}}}\n").as_bytes(),
    );
    for (source, p) in [(Source::Gemini, g), (Source::Qwen, q), (Source::Copilot, c)] {
        let x = extract(&one(source, &p, Value::Null))
            .expect("reads")
            .expect("session");
        assert_eq!(x.meta.session_id, bad, "{source:?}");
        assert_eq!(x.meta.resume, None, "{source:?}");
    }
}

/// Garbage, a torn tail and a 70 MB line cost counts, never the session;
/// a FIFO in a session folder is never opened; a corrupt legacy file is a
/// clear error-free miss.
#[test]
fn hostile_files_cost_counts_not_sessions() {
    let s = Scratch::new("next-hostile");
    let corpus = shared().join("corpus");
    for (source, rel, prefix) in [
        (
            Source::Qwen,
            "qwen/projects__-work__chats__a719f84a-209d-406a-8e6c-dc671c9c0192.jsonl",
            &b"{\"uuid\":\""[..],
        ),
        (
            Source::Copilot,
            "copilot-cli/e317ef84-75eb-4afe-a1c6-0bd44c47f978__events.jsonl",
            &b"{\"type\":\""[..],
        ),
    ] {
        let p = s.path(&format!("{}/events.jsonl", source.as_str()));
        std::fs::copy(corpus.join(rel), &p).expect("copy");
        for g in garbage_lines(prefix) {
            append(&p, &g);
            append(&p, b"\n");
        }
        append_huge_line(&p, 70 << 20);
        append(&p, b"{\"type\":\"user\",\"torn");
        let x = extract(&one(source, &p, Value::Null))
            .expect("reads")
            .expect("session");
        assert_eq!(
            texts(&x, Role::User),
            vec!["What does average_item_price do? One sentence."]
        );
        assert!(
            x.diagnostics.bad_lines >= 2,
            "{source:?}: {:?}",
            x.diagnostics
        );
        assert_eq!(x.diagnostics.huge_lines, 1, "{source:?}");
        assert_eq!(x.diagnostics.torn_tails, 1, "{source:?}");
    }
    let broken = s.write("broken.json", b"{\"sessionId\": \"x\", \"messages\": [");
    assert!(extract(&one(Source::Gemini, &broken, Value::Null))
        .expect("no io error")
        .is_none());
    #[cfg(unix)]
    {
        let home = Scratch::new("next-fifo");
        let dir = home.path(".copilot/session-state/f1/events.jsonl");
        let c = std::ffi::CString::new(dir.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: mkfifo on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let units = discover(&roots(&home.0));
        assert!(
            units.iter().all(|u| u.source != Source::Copilot),
            "a FIFO is never a unit"
        );
        let err = extract(&one(Source::Copilot, &dir, Value::Null));
        assert!(err.is_err(), "opening a FIFO is refused, not blocked on");
    }
}

/// A checkpoint taken mid-file and resumed after the rest is appended gives
/// the extraction of the whole file (DESIGN.md §6), for each line-fed agent.
#[test]
fn resuming_a_checkpoint_equals_a_full_extraction() {
    use recall_host::extract::extract_resumable;
    let s = Scratch::new("next-resume");
    let corpus = shared().join("corpus");
    for (source, from) in [
        (Source::Gemini, fixture("gemini-replay.jsonl")),
        (Source::Qwen, fixture("qwen-branch.jsonl")),
        (
            Source::Qwen,
            corpus.join("qwen/projects__-work__chats__27d495d1-de2d-449d-af11-d42d4d6ef80d.jsonl"),
        ),
        (
            Source::Copilot,
            corpus.join("copilot-cli/049410b4-c1df-44ee-87a5-caa1c349091e__events.jsonl"),
        ),
    ] {
        let bytes = std::fs::read(&from).expect("fixture");
        let lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
        for cut in 1..lines.len() {
            let p = s.path(&format!("{}-{cut}/session.jsonl", source.as_str()));
            std::fs::write(&p, lines[..cut].concat()).expect("write head");
            let unit = one(source, &p, Value::Null);
            let first = extract_resumable(&unit, &[], None).expect("head");
            let cp = first.checkpoint.expect("a checkpoint");
            std::fs::write(&p, &bytes).expect("write whole");
            let resumed = extract_resumable(&unit, &[], Some(&cp)).expect("resume");
            assert!(resumed.resumed, "{from:?} cut {cut}: resumed");
            let full = extract(&unit).expect("full");
            let strip = |x: Option<Extracted>| {
                x.map(|mut x| {
                    x.diagnostics.bytes = 0;
                    x
                })
            };
            assert_eq!(strip(resumed.extracted), strip(full), "{from:?} cut {cut}");
        }
    }
}
