//! DeepSeek Harness extraction (DESIGN.md §5 `dsh`): every real sample in
//! `shared/corpus/dsh/` against its expected records
//! (`fixtures/dsh/expected.json`, from the corpus's SOURCES.md), torn and
//! corrupt zstd frames, the inherited prefix of forks, generations, and
//! resuming an appended frame from its offset.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::Scratch;
use recall_core::model::{session_key, Role, Source};
use recall_host::extract::{self, dsh, extract_resumable, Extracted, SessionSource};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    golden::shared_dir().join("corpus/dsh")
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Every session under a DSH `sessions/` root, by key.
fn extract_root(root: &Path) -> Vec<(SessionSource, Extracted)> {
    dsh::discover(root)
        .into_iter()
        .map(|u| {
            let x = extract::extract(&u)
                .unwrap_or_else(|e| panic!("{}: {e}", u.unit))
                .unwrap_or_else(|| panic!("{}: no session", u.unit));
            (u, x)
        })
        .collect()
}

fn prose(x: &Extracted) -> Vec<(Role, Option<u64>, &str)> {
    x.records
        .iter()
        .filter(|r| r.role != Role::Tool)
        .map(|r| (r.role, r.seq, r.text.as_str()))
        .collect()
}

#[test]
fn every_sample_extracts_its_expected_records() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(golden::test_path("fixtures/dsh/expected.json")).expect("expected.json"),
    )
    .expect("expected.json is JSON");
    let mut failures = Vec::new();
    let samples = expected["samples"].as_array().expect("samples");
    assert_eq!(
        samples.len(),
        10,
        "eight real sessions and two derived files"
    );
    for want in samples {
        let root = corpus().join(want["root"].as_str().expect("root"));
        let key = want["key"].as_str().expect("key");
        let got = extract_root(&root);
        let Some((_, x)) = got
            .iter()
            .find(|(_, x)| session_key(x.meta.source, &x.meta.session_id) == key)
        else {
            failures.push(format!("{}: no session {key}", root.display()));
            continue;
        };
        let at = format!("{} {key}", want["root"]);
        let mut check = |what: &str, ok: bool, detail: String| {
            if !ok {
                failures.push(format!("{at}: {what}: {detail}"));
            }
        };
        check(
            "title",
            x.meta.title.as_deref() == want["title"].as_str(),
            format!("{:?}", x.meta.title),
        );
        check(
            "cwd",
            x.meta.cwd.as_deref() == want["cwd"].as_str(),
            format!("{:?}", x.meta.cwd),
        );
        let parent = serde_json::to_value(&x.meta.parent).expect("parent");
        check("parent", parent == want["parent"], parent.to_string());
        check(
            "resume",
            x.meta.resume.is_none(),
            format!("{:?}", x.meta.resume),
        );
        check(
            "branch",
            x.meta.branch.is_none(),
            format!("{:?}", x.meta.branch),
        );
        check("marks", x.marks.is_empty(), format!("{:?}", x.marks));
        check(
            "subagent",
            x.records.iter().all(|r| !r.subagent),
            "a record is flagged subagent".into(),
        );
        let torn = want["torn_tails"].as_u64().unwrap_or(0);
        check(
            "torn tails",
            x.diagnostics.torn_tails == torn && x.diagnostics.bad_frames == 0,
            format!("{:?}", x.diagnostics),
        );
        let records: Vec<_> = x.records.iter().filter(|r| r.role != Role::Tool).collect();
        let wants = want["records"].as_array().expect("records");
        check(
            "record count",
            records.len() == wants.len(),
            format!("{:?}", prose(x)),
        );
        for (r, w) in records.iter().zip(wants) {
            let text_ok = match (w["text"].as_str(), w["starts"].as_str()) {
                (Some(t), _) => r.text == t,
                (None, Some(s)) => r.text.starts_with(s),
                _ => false,
            };
            let id_ok = w["item_id"]
                .as_str()
                .is_none_or(|id| r.item_id.as_deref() == Some(id));
            check(
                "record",
                role_name(r.role) == w["role"] && r.seq == w["seq"].as_u64() && text_ok && id_ok,
                format!(
                    "{:?} seq {:?} {:?} {:?}, want {w}",
                    r.role, r.seq, r.text, r.item_id
                ),
            );
        }
        check(
            "messages",
            x.meta.messages == wants.len() as u64,
            x.meta.messages.to_string(),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tool_rows_are_calls_and_results_not_chunks() {
    let got = extract_root(&corpus().join("real/bash-tool/sessions"));
    let (_, x) = &got[0];
    let tools: Vec<&str> = x
        .records
        .iter()
        .filter(|r| r.role == Role::Tool)
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(tools.len(), 2, "one tool-call block, one result: {tools:?}");
    assert!(tools[0].starts_with("bash {"), "{}", tools[0]);
    assert!(tools[0].contains("echo dsh-sdk-proof-7391"));
    assert_eq!(tools[1].trim_end(), "dsh-sdk-proof-7391");
    // No chunk text (reasoning deltas, streamed text) is ever a record.
    for r in &x.records {
        assert!(
            !r.text.contains("The user wants me"),
            "reasoning indexed: {r:?}"
        );
    }
}

#[test]
fn a_fork_childs_inherited_prefix_yields_nothing() {
    let got = extract_root(&corpus().join("real/subagent-fork/sessions"));
    let child = got
        .iter()
        .map(|(_, x)| x)
        .find(|x| x.meta.session_id.starts_with("ada8966c"))
        .expect("the fork child");
    let parent = got
        .iter()
        .map(|(_, x)| x)
        .find(|x| x.meta.session_id.starts_with("96cf59c9"))
        .expect("the parent");
    assert!(
        child.records.iter().all(|r| r.seq.is_some_and(|s| s >= 42)),
        "seqs below seedLength are the parent's: {:?}",
        child.records.iter().map(|r| r.seq).collect::<Vec<_>>()
    );
    // The parent's first prompt, byte-copied into the child, is the parent's only.
    let first = &parent.records[0];
    assert!(child.records.iter().all(|r| r.item_id != first.item_id));
    assert!(child.records.iter().all(|r| r.text != first.text));
}

/// One checksummed zstd frame holding `text`.
fn frame(text: &str) -> Vec<u8> {
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
    e.include_checksum(true).expect("checksum");
    e.write_all(text.as_bytes()).expect("write");
    e.finish().expect("finish")
}

/// The bash-tool sample's lines, each with its `\n`.
fn bash_lines() -> Vec<String> {
    let p = dsh::discover(&corpus().join("real/bash-tool/sessions"))[0].files[0].clone();
    String::from_utf8(std::fs::read(p).expect("sample"))
        .expect("utf-8")
        .split_inclusive('\n')
        .map(str::to_string)
        .collect()
}

/// A DSH root in `s` with one session whose `session.jsonl.zstd` is `frames`.
fn framed_session(s: &Scratch, frames: &[Vec<u8>]) -> SessionSource {
    let path = s.write("sessions/--w--/sid/session.jsonl.zstd", &frames.concat());
    let units = dsh::discover(&s.path("sessions"));
    assert_eq!(units.len(), 1);
    assert_eq!(units[0].files, vec![path]);
    units.into_iter().next().expect("unit")
}

fn frames_per_line(lines: &[String]) -> Vec<Vec<u8>> {
    lines.iter().map(|l| frame(l)).collect()
}

#[test]
fn a_torn_final_frame_is_left_for_the_next_read() {
    let lines = bash_lines();
    let mut frames = frames_per_line(&lines);
    let full = extract::extract(&framed_session(&Scratch::new("dsh-torn-a"), &frames))
        .expect("read")
        .expect("session");
    // Cut the frame holding the final assistant message in half.
    let last_msg = lines
        .iter()
        .rposition(|l| l.contains("\"type\":\"assistant/message\""))
        .expect("a message");
    frames.truncate(last_msg + 1);
    let n = frames[last_msg].len();
    frames[last_msg].truncate(n / 2);
    let s = Scratch::new("dsh-torn-b");
    let unit = framed_session(&s, &frames);
    let x = extract::extract(&unit).expect("read").expect("session");
    assert_eq!(x.diagnostics.torn_tails, 1);
    assert_eq!(x.diagnostics.bad_frames, 0);
    assert_eq!(
        prose(&x),
        prose(&full)[..1].to_vec(),
        "the torn message is not read"
    );
    // The cursor offset ends before the torn frame.
    let complete: usize = frames[..last_msg].iter().map(Vec::len).sum();
    assert_eq!(
        dsh::frames::complete_end(&unit.files[0]).expect("scan"),
        complete as u64
    );
}

#[test]
fn a_corrupt_complete_frame_is_skipped_and_counted() {
    let lines = bash_lines();
    let mut frames = frames_per_line(&lines);
    let prompt = lines
        .iter()
        .position(|l| l.contains("\"type\":\"user/message\""))
        .expect("a prompt");
    let n = frames[prompt].len();
    frames[prompt][n - 1] ^= 0x5A; // checksum mismatch
    let x = extract::extract(&framed_session(&Scratch::new("dsh-corrupt"), &frames))
        .expect("read")
        .expect("session");
    assert_eq!(x.diagnostics.bad_frames, 1);
    assert_eq!(x.diagnostics.torn_tails, 0);
    let got = prose(&x);
    assert_eq!(
        got,
        [(Role::Assistant, Some(96), "dsh-sdk-proof-7391")],
        "the prompt's frame is skipped, the frames after it are read"
    );
    assert_eq!(x.meta.title.as_deref(), Some("Run this exact command with"));
}

#[test]
fn an_appended_frame_is_read_from_its_offset() {
    let lines = bash_lines();
    let frames = frames_per_line(&lines);
    let s = Scratch::new("dsh-resume");
    let half = frames.len() / 2;
    let unit = framed_session(&s, &frames[..half]);
    let first = extract_resumable(&unit, &[], None).expect("read");
    let cp = first.checkpoint.expect("a checkpoint");
    assert_eq!(cp.files[0].lines, half as u64);
    // The rest arrives as appended frames, the last one torn at first.
    let path = unit.files[0].clone();
    let mut rest = frames[half..].concat();
    let last = frames.last().expect("frames").len();
    let torn = rest.len() - last / 2;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&rest[..torn]))
        .expect("append");
    let second = extract_resumable(&unit, &[], Some(&cp)).expect("read");
    assert!(second.resumed, "resumed from the checkpoint");
    let cp2 = second.checkpoint.expect("a checkpoint");
    assert_eq!(
        second.extracted.as_ref().map(|x| x.diagnostics.torn_tails),
        Some(1)
    );
    // DSH's repair: the torn frame is completed.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&rest.split_off(torn)))
        .expect("append");
    let third = extract_resumable(&unit, &[], Some(&cp2)).expect("read");
    assert!(third.resumed);
    let full = extract::extract(&unit).expect("read").expect("session");
    let x = third.extracted.expect("session");
    assert_eq!(x.meta, full.meta);
    assert_eq!(x.records, full.records);
    assert_eq!(x.diagnostics.lines, full.diagnostics.lines);
    assert_eq!(x.diagnostics.torn_tails, 0);
    assert!(third.bytes_read < std::fs::metadata(&path).expect("len").len() / 2 + 64);
}

#[test]
fn only_the_highest_generation_is_read() {
    let s = Scratch::new("dsh-generations");
    let header = |v: u64| {
        json!({"type":"session","version":v,"id":"s-1","createdAt":1,"cwd":"/w","isSeeded":false,"delegationDepth":0}).to_string() + "\n"
    };
    let user = |seq: u64, text: &str| {
        json!({"type":"user/message","seq":seq,"time":1_790_000_000_000u64 + seq,"data":{"content":[{"type":"text","text":text}],"source":{"kind":"user"},"role":"user","id":format!("m{seq}")},"surfaceOp":"append"}).to_string() + "\n"
    };
    let dir = "sessions/--w--/s-1";
    s.write(
        &format!("{dir}/session.jsonl.zstd"),
        &frame(&(header(0) + &user(0, "old"))),
    );
    s.write(
        &format!("{dir}/session.v2.jsonl"),
        (header(2) + &user(0, "plain v2")).as_bytes(),
    );
    s.write(
        &format!("{dir}/session.v2.jsonl.zstd"),
        &[
            frame(&header(2)),
            frame(&(user(0, "old") + &user(1, "new"))),
        ]
        .concat(),
    );
    s.write(
        &format!("{dir}/session.v9.jsonl.zstd.0123456789ab.tmp"),
        b"partial",
    );
    s.write(&format!("{dir}/session.v09.jsonl"), b"not canonical");
    let units = dsh::discover(&s.path("sessions"));
    assert_eq!(units.len(), 1);
    assert!(units[0].files[0].ends_with("session.v2.jsonl.zstd"));
    let x = extract::extract(&units[0]).expect("read").expect("session");
    let texts: Vec<&str> = prose(&x).iter().map(|p| p.2).collect();
    assert_eq!(texts, ["old", "new"]);
    assert_eq!(x.meta.source, Source::Dsh);
    assert_eq!(x.meta.paths.len(), 1, "lower generations are not sources");
}

#[test]
fn v2_prefix_is_cut_at_the_last_inherited_end_seed_only() {
    let s = Scratch::new("dsh-v2-seed");
    let ev = |ty: &str, seq: u64, data: Value| {
        json!({"type":ty,"seq":seq,"time":1_790_000_000_000u64 + seq,"data":data}).to_string()
            + "\n"
    };
    let user = |seq: u64, text: &str| {
        ev(
            "user/message",
            seq,
            json!({"content":[{"type":"text","text":text}],"source":{"kind":"user"},"role":"user","id":format!("u{seq}")}),
        )
    };
    let asst = |seq: u64, text: &str| {
        ev(
            "assistant/message",
            seq,
            json!({"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"hidden"},{"type":"text","text":text},{"type":"tool-call","id":"c1","name":"read","arguments":"{\"path\":\"a\"}"}],"source":{"kind":"model"},"id":format!("a{seq}")},"stream":[{"type":"text-chunks","time0":1,"index":0,"dt":[1],"texts":["strea","med"]}]}),
        )
    };
    let mut log = json!({"type":"session","version":4,"id":"child","createdAt":1,"cwd":"/w","parentSession":"parent","isSeeded":true,"delegationDepth":0}).to_string() + "\n";
    log += &user(0, "parent prompt");
    log += &asst(1, "parent answer");
    log += &ev(
        "session/title",
        2,
        json!({"title":"Inherited title","source":{"kind":"fallback"}}),
    );
    log += &ev("session/end-seed", 3, json!({"inherited": true}));
    log += &user(4, "child prompt");
    log += &ev(
        "user/message",
        5,
        json!({"content":[{"type":"text","text":"runtime context"}],"source":{"kind":"runtime-context"},"role":"user","id":"i5"}),
    );
    log += &ev(
        "assistant/attempt",
        6,
        json!({"turn":2,"step":1,"stream":[{"type":"text-chunks","time0":1,"index":0,"dt":[],"texts":["failed try"]}]}),
    );
    log += &asst(7, "child answer");
    log += &ev(
        "tool/result",
        8,
        json!({"turn":2,"step":1,"message":{"id":"t8","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"file body"}],"source":{"kind":"tool","callId":"c1"}}}),
    );
    log += &ev("session/end-seed", 9, json!({}));
    log += &user(10, "after a resume");
    let mut lines: Vec<String> = log.split_inclusive('\n').map(str::to_string).collect();
    // A summary replacement shadows the child prompt: model-only, no record.
    lines.push(
        json!({"type":"user/message","seq":11,"time":1_790_000_000_011u64,"data":{"content":[{"type":"text","text":"summary copy"}],"source":{"kind":"compact-checkpoint"},"role":"user","id":"r11"},"surfaceOp":{"op":"replace","startSeq":4,"endSeq":4}}).to_string() + "\n",
    );
    s.write(
        "sessions/--w--/child/session.v4.jsonl",
        lines.concat().as_bytes(),
    );
    let units = dsh::discover(&s.path("sessions"));
    let x = extract::extract(&units[0]).expect("read").expect("session");
    let texts: Vec<(Role, &str)> = x
        .records
        .iter()
        .map(|r| (r.role, r.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            (Role::User, "child prompt"),
            (Role::Assistant, "child answer"),
            (Role::Tool, "read {\"path\":\"a\"}"),
            (Role::Tool, "file body"),
            (Role::User, "after a resume"),
        ],
        "inherited events, injected context, attempts, reasoning, streams and replacements yield nothing; an untagged end-seed cuts nothing"
    );
    assert_eq!(x.meta.title.as_deref(), Some("Inherited title"));
    let parent = x.meta.parent.expect("parent");
    assert_eq!(parent.key, "dsh:parent");
    assert_eq!(parent.relation, recall_core::model::Relation::Fork);
    assert_eq!(x.meta.created_ms, Some(1_790_000_000_004));
}

#[test]
fn bad_input_gives_counts_never_a_panic() {
    let s = Scratch::new("dsh-bad");
    // Not zstd at all, a lone header, garbage lines inside a frame.
    s.write("sessions/--w--/a/session.jsonl.zstd", b"hello, not a frame");
    s.write(
        "sessions/--w--/b/session.jsonl.zstd",
        &frame("{\"type\":\"session\",\"version\":0,\"id\":\"b\"}\n"),
    );
    s.write(
        "sessions/--w--/c/session.jsonl.zstd",
        &[
            frame("{\"type\":\"session\",\"version\":0,\"id\":\"c\"}\n"),
            frame("<<<<<<< HEAD\n{\"type\":\"user/message\",\"seq\":0,\"time\":5,\"data\":{\"content\":\"plain string\",\"source\":{\"kind\":\"user\"}}}\n"),
        ]
        .concat(),
    );
    let units = dsh::discover(&s.path("sessions"));
    assert_eq!(units.len(), 3);
    let a = extract::extract(&units[0]).expect("read");
    assert!(a.is_none(), "no header, no session");
    assert!(
        extract::extract(&units[1]).expect("read").is_none(),
        "no records"
    );
    let c = extract::extract(&units[2]).expect("read").expect("session");
    assert_eq!(c.diagnostics.bad_lines, 1);
    assert_eq!(c.records[0].text, "plain string");
}

/// A skippable-frame header that claims more bytes than the file holds (4
/// GiB) is not a torn tail while frames follow it: only its own bytes are
/// skipped, counted and reported; every frame after it is read.
#[test]
fn a_skippable_frame_claiming_more_than_the_file_hides_no_frame_after_it() {
    let lines = bash_lines();
    let frames = frames_per_line(&lines);
    let full = extract::extract(&framed_session(&Scratch::new("dsh-skip-a"), &frames))
        .expect("read")
        .expect("session");
    let mut lying = vec![0x50, 0x2A, 0x4D, 0x18];
    lying.extend_from_slice(&u32::MAX.to_le_bytes());
    lying.extend_from_slice(b"a few bytes of the skippable frame");
    let mut with = frames.clone();
    with.insert(1, lying);
    let s = Scratch::new("dsh-skip-b");
    let unit = framed_session(&s, &with);
    let x = extract::extract(&unit).expect("read").expect("session");
    assert_eq!(prose(&x), prose(&full), "every frame after it is read");
    assert_eq!((x.diagnostics.bad_frames, x.diagnostics.torn_tails), (1, 0));
    let file = unit.files[0].display().to_string();
    assert!(
        x.diagnostics
            .unreadable
            .iter()
            .any(|u| u.starts_with(&file) && u.contains("did not decode")),
        "reported: {:?}",
        x.diagnostics.unreadable
    );
    let len: usize = with.iter().map(Vec::len).sum();
    assert_eq!(
        dsh::frames::complete_end(&unit.files[0]).expect("scan"),
        len as u64,
        "the cursor covers the frames after it"
    );
}
