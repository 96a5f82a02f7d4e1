//! DeepSeek Harness: one session tuning the tide-table renderer, written as
//! DSH 0.1.7 writes it (`~/.dsh/sessions/--<cwd key>--/<id>/session.v4.jsonl.zstd`,
//! one zstd frame for the header line, then one per append batch), with an
//! injected runtime-context message, a tool call and its result, and a
//! fallback `session/title` (FORMATS-dsh.md).

use super::{uuid, Home, CWD};
use serde_json::{json, Value};
use std::io::{self, Write};

/// `projectKey(CWD)`: `/` runs become `-`, leading `-` stripped.
const PROJECT: &str = "--home-demo-code-tidewatch--";

/// Writes the DSH session.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = format!("session-{}", uuid("demo/dsh/1"));
    let header = json!({"type": "session", "version": 4, "id": sid, "createdAt": t, "cwd": CWD,
        "isSeeded": false, "delegationDepth": 0, "agentPreset": "ptc"});
    let mut seq = 0u64;
    let mut ev = |ty: &str, time: i64, data: Value, surface: bool| {
        let mut e = json!({"type": ty, "seq": seq, "time": time, "data": data});
        if surface {
            e["surfaceOp"] = json!("append");
        }
        seq += 1;
        e
    };
    let min = 60_000;
    let prompt = "The tide table renderer prints heights with four decimals. Round to centimetres and right-align the column.";
    let answer = "Done: heights are rounded to centimetres and the column is right-aligned to the widest value, so `-0.12` and `3.40` line up.";
    let user_id = uuid("demo/dsh/u1");
    let call = "call_00_demoRender01";
    let batch1 = vec![
        ev("turn/start", t + 1_000, json!({"turn": 1}), false),
        ev(
            "user/message",
            t + 1_001,
            json!({"content": [{"type": "text", "text": "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."}],
            "source": {"kind": "runtime-context"}, "role": "user", "id": uuid("demo/dsh/ctx")}),
            true,
        ),
        ev(
            "user/message",
            t + 1_002,
            json!({"content": [{"type": "text", "text": prompt}],
            "source": {"kind": "user"}, "role": "user", "id": user_id}),
            true,
        ),
        ev(
            "session/title",
            t + 1_003,
            json!({"title": "The tide table renderer prints", "messageSeqs": [2], "source": {"kind": "fallback"}}),
            false,
        ),
    ];
    let t2 = t + min;
    let batch2 = vec![
        ev(
            "assistant/message",
            t2,
            json!({"turn": 1, "step": 1, "message": {"role": "assistant", "content": [
            {"type": "reasoning", "text": "Look at the formatter first."},
            {"type": "text", "text": "I'll look at the height formatter."},
            {"type": "tool-call", "id": call, "name": "read", "arguments": "{\"path\":\"src/render/table.rs\"}"}],
            "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}, "id": uuid("demo/dsh/a1")}}),
            true,
        ),
        ev(
            "tool/call",
            t2 + 5,
            json!({"turn": 1, "step": 1, "callId": call, "name": "read", "arguments": "{\"path\":\"src/render/table.rs\"}"}),
            false,
        ),
        ev(
            "tool/result",
            t2 + 40,
            json!({"turn": 1, "step": 1, "message": {"id": uuid("demo/dsh/r1"), "role": "tool", "toolCallId": call,
            "content": [{"type": "text", "text": "fn height(h: f64) -> String { format!(\"{:.4}\", h) }"}], "source": {"kind": "tool", "callId": call}}}),
            true,
        ),
    ];
    let t3 = t2 + 2 * min;
    let batch3 = vec![
        ev(
            "assistant/message",
            t3,
            json!({"turn": 1, "step": 2, "message": {"role": "assistant", "content": [{"type": "text", "text": answer}],
            "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}, "id": uuid("demo/dsh/a2")}}),
            true,
        ),
        ev(
            "turn/end",
            t3 + 10,
            json!({"turn": 1, "reason": {"kind": "completed"}}),
            false,
        ),
    ];
    let mut bytes = frame(&[header])?;
    for batch in [batch1, batch2, batch3] {
        bytes.extend(frame(&batch)?);
    }
    let rel = format!(".dsh/sessions/{PROJECT}/{sid}/session.v4.jsonl.zstd");
    home.file(&rel, &bytes)?;
    home.session();
    Ok(())
}

/// One checksummed zstd frame of JSON lines, `type` first as DSH writes them.
fn frame(lines: &[Value]) -> io::Result<Vec<u8>> {
    let mut text = String::new();
    for l in lines {
        super::type_first(l, &mut text);
        text.push('\n');
    }
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3)?;
    e.include_checksum(true)?;
    e.write_all(text.as_bytes())?;
    e.finish()
}
