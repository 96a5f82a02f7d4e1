//! Pi: one session benchmarking the predictor, with a `session_info` name.

use super::{hex, iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

/// Writes the Pi session.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = uuid("demo/pi/1");
    let mut lines =
        vec![json!({"type": "session", "version": 3, "id": sid, "timestamp": iso(t), "cwd": CWD})];
    let mut tip: Option<String> = None;
    let mut n = 0;
    let mut entry = |lines: &mut Vec<Value>, typ: &str, ts: i64, fields: Value| {
        n += 1;
        let id = hex(&format!("pi/{n}"), 8);
        let mut d = json!({"type": typ, "id": id, "parentId": tip, "timestamp": iso(ts)});
        if let (Some(o), Some(f)) = (d.as_object_mut(), fields.as_object()) {
            o.extend(f.clone());
        }
        lines.push(d);
        tip = Some(id);
    };
    let min = 60_000;
    entry(
        &mut lines,
        "session_info",
        t,
        json!({"name": "Predictor benchmarks"}),
    );
    entry(
        &mut lines,
        "model_change",
        t + 4,
        json!({"provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
    );
    let user = |ts: i64, text: &str| json!({"message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}});
    let asst = |ts: i64, parts: Value| json!({"message": {"role": "assistant", "content": parts, "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": ts}});
    let t1 = t + min;
    entry(&mut lines, "message", t1, user(t1, "How fast is the harmonic predictor for a year at 6-minute steps? Add a criterion benchmark."));
    let t2 = t1 + 2 * min;
    let call = format!("toolu_01{}", hex("pi/call", 22));
    entry(
        &mut lines,
        "message",
        t2,
        asst(
            t2,
            json!([
        {"type": "text", "text": "I'll add benches/predict.rs and run it."},
        {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": "cargo bench --bench predict"}}]),
        ),
    );
    let t3 = t2 + 90_000;
    entry(
        &mut lines,
        "message",
        t3,
        json!({"message": {"role": "toolResult", "toolCallId": call, "toolName": "bash",
        "content": [{"type": "text", "text": "predict_year_6min   time: [41.2 ms 41.5 ms 41.9 ms]"}], "isError": false, "timestamp": t3}}),
    );
    let t4 = t3 + min;
    entry(
        &mut lines,
        "message",
        t4,
        asst(
            t4,
            json!([{"type": "text", "text": "A year at 6-minute steps (87,600 points, 37 constituents) takes 41.5 ms. Most of it is `f64::cos`; precomputing each constituent's phase increment and rotating with a complex multiply should cut it substantially."}]),
        ),
    );
    let t5 = t4 + 4 * min;
    entry(&mut lines, "message", t5, user(t5, "Do the rotation trick, but keep the error against the direct cos version under a millimetre over a year."));
    let t6 = t5 + 6 * min;
    entry(
        &mut lines,
        "message",
        t6,
        asst(
            t6,
            json!([{"type": "text", "text": "Done: the rotating-phasor predictor takes 6.8 ms for the year (6× faster) and re-normalises every 1,000 steps; the largest difference from the direct version over the year is 0.3 mm. A property test now checks the bound for random constituent sets."}]),
        ),
    );
    let rel = format!(
        ".pi/agent/sessions/--{}--/{}_{sid}.jsonl",
        CWD.trim_start_matches('/').replace('/', "-"),
        iso(t).replace([':', '.'], "-")
    );
    home.jsonl(&rel, &lines)?;
    home.session();
    Ok(())
}
