//! Gemini CLI, Copilot CLI, Qwen Code and OpenCode: one short session each
//! about tidewatch, in the shapes of their extractors' real inputs (the
//! corpus files in `tests/shared/corpus/{gemini,copilot-cli,qwen}` and
//! OpenCode's schema, `tests/fixtures/opencode/opencode.sql`).

use super::{iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

const MIN: i64 = 60_000;

/// Gemini CLI: a legacy single-JSON session in the project's slug folder.
pub(crate) fn gemini(home: &mut Home, t: i64) -> io::Result<()> {
    home.file(
        ".gemini/projects.json",
        json!({"projects": {CWD: "tidewatch"}})
            .to_string()
            .as_bytes(),
    )?;
    home.file(".gemini/tmp/tidewatch/.project_root", CWD.as_bytes())?;
    let sid = uuid("demo/gemini/1");
    let msg = |n: &str, ts: i64, typ: &str, content: &str| json!({"id": uuid(&format!("demo/gemini/{n}")), "timestamp": iso(ts), "type": typ, "content": content});
    let mut answer = msg(
        "2",
        t + MIN,
        "gemini",
        "M2 is the principal lunar semidiurnal constituent, with a period of 12.42 hours. \
         tidewatch keeps its amplitude and phase per station in the harmonic table.",
    );
    if let Some(o) = answer.as_object_mut() {
        o.insert("model".into(), json!("gemini-2.5-pro"));
        o.insert(
            "thoughts".into(),
            json!([{"subject": "Recalling constituents", "description": "Darwin's symbols: M2, S2, K1, O1."}]),
        );
    }
    let session = json!({
        "sessionId": sid,
        "projectHash": super::hex("demo/gemini/project", 64),
        "startTime": iso(t),
        "lastUpdated": iso(t + MIN),
        "messages": [
            msg("1", t, "user", "What does the M2 constituent in our harmonic table stand for?"),
            answer,
        ],
    });
    let name = format!(
        ".gemini/tmp/tidewatch/chats/session-{}-{}.json",
        &iso(t)[..16].replace(':', "-"),
        &sid[..8]
    );
    home.file(&name, session.to_string().as_bytes())?;
    home.session();
    Ok(())
}

/// Copilot CLI: an `events.jsonl` with a tool call and its result.
pub(crate) fn copilot(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = uuid("demo/copilot/1");
    let mut n = 0;
    let mut ev = |typ: &str, ts: i64, data: Value| {
        n += 1;
        json!({"type": typ, "data": data, "id": uuid(&format!("demo/copilot/e{n}")), "timestamp": iso(ts), "parentId": null})
    };
    let call = "call_tidewatch_json";
    let lines = vec![
        ev(
            "session.start",
            t,
            json!({"sessionId": sid, "version": 1, "producer": "copilot-agent", "copilotVersion": "1.0.78",
                   "startTime": iso(t), "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main"}}),
        ),
        ev(
            "session.model_change",
            t + 10,
            json!({"newModel": "gpt-5.1"}),
        ),
        ev(
            "user.message",
            t + MIN,
            json!({"content": "Give `tidewatch next` a --json flag that prints the next high and low water.",
                   "transformedContent": "<current_datetime>now</current_datetime>\n\nGive `tidewatch next` a --json flag."}),
        ),
        ev(
            "assistant.message",
            t + 2 * MIN,
            json!({"messageId": uuid("demo/copilot/m1"), "model": "gpt-5.1",
                   "content": "Added `--json` to `tidewatch next`: it prints {\"high\": …, \"low\": …} with RFC 3339 times.",
                   "toolRequests": [{"toolCallId": call, "name": "bash", "arguments": {"command": "cargo test next_json"}}],
                   "reasoningText": "Serde is already a dependency, so a derive is enough."}),
        ),
        ev(
            "tool.execution_complete",
            t + 3 * MIN,
            json!({"toolCallId": call, "success": true, "result": {"content": "test cli::next_json ... ok"}}),
        ),
    ];
    home.jsonl(
        &format!(".copilot/session-state/{sid}/events.jsonl"),
        &lines,
    )?;
    home.session();
    Ok(())
}

/// Qwen Code: a `uuid`/`parentUuid` chain with a thought part.
pub(crate) fn qwen(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = uuid("demo/qwen/1");
    let mut parent: Option<String> = None;
    let mut n = 0;
    let mut rec = |typ: &str, prov: &str, ts: i64, message: Value| {
        n += 1;
        let id = uuid(&format!("demo/qwen/r{n}"));
        let mut r = json!({"uuid": id, "parentUuid": parent, "sessionId": sid, "timestamp": iso(ts), "type": typ,
                           "provenance": prov, "cwd": CWD, "version": "0.21.6", "message": message});
        if typ == "assistant" {
            if let Some(o) = r.as_object_mut() {
                o.insert("model".into(), json!("qwen3-coder-plus"));
            }
        }
        parent = Some(id);
        r
    };
    let lines = vec![
        rec(
            "user",
            "real_user",
            t,
            json!({"role": "user", "parts": [{"text": "Write the README section on installing tidewatch with cargo."}]}),
        ),
        rec(
            "assistant",
            "assistant_output",
            t + MIN,
            json!({"role": "model", "parts": [
            {"text": "Cargo installs need a Rust toolchain; mention rustup.", "thought": true},
            {"text": "Added \"Install\": `cargo install tidewatch`, then `tidewatch next --station 8443970` to check it works."}]}),
        ),
    ];
    home.jsonl(
        &format!(".qwen/projects/-home-demo-code-tidewatch/chats/{sid}.jsonl"),
        &lines,
    )?;
    home.session();
    Ok(())
}

/// The tables OpenCode's extractor reads (`session.sql.ts`, trimmed to
/// the columns the demo fills).
const OPENCODE_SCHEMA: &str = "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, \
slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, \
time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, \
time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, \
time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);";

/// A SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// OpenCode: `opencode.db` with one session.
pub(crate) fn opencode(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = format!("ses_{}", &super::hex("demo/opencode/s", 26));
    let id = |p: &str, n: u32| format!("{p}_{}", &super::hex(&format!("demo/opencode/{p}{n}"), 26));
    let mut sql = format!(
        "{OPENCODE_SCHEMA}\nINSERT INTO session VALUES ({}, 'global', NULL, 'tidy-tern', {}, {}, '1.18.13', {t}, {});\n",
        lit(&sid),
        lit(CWD),
        lit("Package tidewatch for Homebrew"),
        t + 5 * MIN
    );
    let turns = [
        ("user", t, "Write a Homebrew formula for tidewatch that builds from the release tarball."),
        ("assistant", t + 2 * MIN, "Wrote Formula/tidewatch.rb: it depends on rust for the build and runs `tidewatch --version` as its test."),
        ("user", t + 4 * MIN, "Make the formula's test ask for the next tide at a fixture station instead."),
        ("assistant", t + 5 * MIN, "The test block now runs `tidewatch next --station 8443970 --offline` against the bundled harmonics and checks for \"high\"."),
    ];
    for (n, (role, ts, text)) in turns.into_iter().enumerate() {
        let n = n as u32;
        let (m, p) = (id("msg", n), id("prt", n));
        let data = match role {
            "user" => json!({"role": "user", "time": {"created": ts}, "agent": "build",
                             "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}),
            _ => {
                json!({"role": "assistant", "time": {"created": ts, "completed": ts}, "modelID": "claude-sonnet-4-5",
                        "providerID": "anthropic", "mode": "build", "agent": "build", "path": {"cwd": CWD, "root": CWD}})
            }
        };
        let part = json!({"type": "text", "text": text});
        sql.push_str(&format!(
            "INSERT INTO message VALUES ({}, {}, {ts}, {ts}, {});\nINSERT INTO part VALUES ({}, {}, {}, {ts}, {ts}, {});\n",
            lit(&m),
            lit(&sid),
            lit(&data.to_string()),
            lit(&p),
            lit(&m),
            lit(&sid),
            lit(&part.to_string()),
        ));
    }
    let db = home.dir.join(".local/share/opencode/opencode.db");
    if let Some(parent) = db.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let _ = std::fs::remove_file(&db);
    crate::extract::opencode::db::write_from_sql(&db, &sql)?;
    home.files += 1;
    home.session();
    Ok(())
}
