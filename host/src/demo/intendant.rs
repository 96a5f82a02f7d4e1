//! Intendant: one new-era log (release checklist) with assistant prose in
//! `turns/turn_NNN_model.txt` sidecar spans.

use super::{hms, iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

/// Writes the Intendant session.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = uuid("demo/intendant/1");
    let base = format!(".intendant/logs/{sid}");
    let mut rows: Vec<Value> = Vec::new();
    let row = |ts: i64, turn: u32, event: &str, data: Value, file: Option<&str>| {
        let mut d =
            json!({"ts": hms(ts), "ts_ms": ts, "event": event, "level": "info", "data": data});
        if turn > 0 {
            d["turn"] = json!(turn);
        }
        if let Some(f) = file {
            d["file"] = json!(f);
        }
        d
    };
    let task =
        "Prepare the tidewatch v0.2.0 release: changelog, version bump, and a dry-run publish.";
    let min = 60_000;
    rows.push(row(
        t,
        0,
        "conversation_message_epoch",
        json!({"version": 1, "mapping": []}),
        None,
    ));
    rows.push(row(
        t,
        0,
        "session_started",
        json!({"session_id": sid, "task": task}),
        None,
    ));
    let mut seq = 0;
    let mut msg = |rows: &mut Vec<Value>,
                   ts: i64,
                   turn: u32,
                   role: &str,
                   prov: &str,
                   text: Option<&str>,
                   span: Option<(&str, usize, usize)>| {
        seq += 1;
        let mut data = json!({"message_id": uuid(&format!("in/{seq}")), "message_seq": seq, "role": role, "provenance": prov});
        if let Some(t) = text {
            data["text"] = json!(t);
        }
        if let Some((_, off, len)) = span {
            data["model_offset"] = json!(off);
            data["model_bytes"] = json!(len);
        }
        rows.push(row(
            ts,
            turn,
            "conversation_message",
            data,
            span.map(|s| s.0),
        ));
    };
    msg(&mut rows, t + 100, 0, "user", "task", Some(task), None);
    let answers = [
        ("I drafted CHANGELOG.md for 0.2.0 (the `next` command, Brest/SHOM CSV import, Newton refinement behind `--refine`, the 6× faster predictor), bumped Cargo.toml to 0.2.0 and ran `cargo publish --dry-run`: it packages 41 files and builds cleanly.", "cargo publish --dry-run"),
        ("Tagged v0.2.0 locally (not pushed) and listed the release notes in the tag message. Remaining for you: push the tag and run the real `cargo publish`.", "git tag -a v0.2.0"),
    ];
    let follow = "Looks right. Tag it, but don't push anything yet.";
    let mut ts = t + 2 * min;
    for (i, (answer, cmd)) in answers.iter().enumerate() {
        let turn = (i + 1) as u32;
        if i == 1 {
            msg(&mut rows, ts, 0, "user", "follow_up", Some(follow), None);
            ts += min;
        }
        let name = format!("turns/turn_{turn:03}_model.txt");
        let head = "<think>\nCheck the manifest first.\n</think>\n\n";
        let body = format!(
            "{head}{answer}\n\n<tool_call>{}</tool_call>\n",
            json!({"name": "shell", "arguments": {"cmd": cmd}})
        );
        home.file(&format!("{base}/{name}"), body.as_bytes())?;
        rows.push(row(ts, turn, "model_request", json!({"turn": turn}), None));
        ts += 40_000;
        msg(
            &mut rows,
            ts,
            turn,
            "assistant",
            "assistant",
            None,
            Some((&name, head.len(), answer.len())),
        );
        let call = format!("call_{turn}");
        rows.push(row(
            ts + 500,
            turn,
            "tool_call",
            json!({"call_id": call, "tool": "shell", "args": {"cmd": cmd}}),
            None,
        ));
        rows.push(row(
            ts + 9000,
            turn,
            "tool_result",
            json!({"call_id": call, "ok": true, "output": "ok"}),
            None,
        ));
        ts += 3 * min;
    }
    home.jsonl(&format!("{base}/session.jsonl"), &rows)?;
    let meta = json!({"session_id": sid, "task": task, "created_at": iso(t), "cwd": CWD, "model": "gpt-5.5", "backend": "intendant", "name": "Release v0.2.0"});
    home.file(
        &format!("{base}/session_meta.json"),
        serde_json::to_string_pretty(&meta)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    home.session();
    Ok(())
}
