//! Claude Code: two sessions in `~/.claude/projects/<cwd encoded>/`, the
//! first with a Task subagent in `<sid>/subagents/`.

use super::{hex, iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

/// One Claude Code JSONL file and its parentUuid chain.
struct File {
    sid: String,
    agent: Option<String>,
    tip: Option<String>,
    lines: Vec<Value>,
    n: usize,
}

impl File {
    fn new(sid: &str, agent: Option<&str>) -> File {
        File {
            sid: sid.into(),
            agent: agent.map(str::to_string),
            tip: None,
            lines: Vec::new(),
            n: 0,
        }
    }

    fn line(&mut self, typ: &str, ts: i64, body: Value) -> String {
        self.n += 1;
        let u = uuid(&format!("cc/{}/{:?}/{}", self.sid, self.agent, self.n));
        let mut d = json!({
            "parentUuid": self.tip, "isSidechain": self.agent.is_some(), "userType": "external",
            "cwd": CWD, "sessionId": self.sid, "version": "2.1.39", "gitBranch": "main",
            "type": typ, "uuid": u, "timestamp": iso(ts),
        });
        if let Some(a) = &self.agent {
            d["agentId"] = json!(a);
        }
        if let (Some(o), Some(b)) = (d.as_object_mut(), body.as_object()) {
            o.extend(b.clone());
        }
        self.lines.push(d);
        self.tip = Some(u.clone());
        u
    }

    fn user(&mut self, ts: i64, text: &str) {
        self.line(
            "user",
            ts,
            json!({"message": {"role": "user", "content": text}}),
        );
    }

    fn say(&mut self, ts: i64, text: &str) -> String {
        let mid = format!("msg_01{}", hex(&format!("{}/{}", self.sid, self.n), 22));
        self.block(ts, &mid, json!({"type": "text", "text": text}));
        mid
    }

    fn block(&mut self, ts: i64, mid: &str, block: Value) -> String {
        self.line(
            "assistant",
            ts,
            json!({
                "message": {"model": "claude-opus-4-6", "id": mid, "type": "message", "role": "assistant",
                            "content": [block], "stop_reason": null, "stop_sequence": null,
                            "usage": {"input_tokens": 3, "output_tokens": 120}},
                "requestId": format!("req_011{}", hex(mid, 20)),
            }),
        )
    }

    /// An assistant message that calls a tool, then the tool's result.
    fn tool(&mut self, ts: i64, text: &str, name: &str, input: Value, output: &str) {
        let mid = format!("msg_01{}", hex(&format!("{}/t{}", self.sid, self.n), 22));
        self.block(ts, &mid, json!({"type": "text", "text": text}));
        let id = format!("toolu_01{}", hex(&mid, 22));
        self.block(
            ts + 900,
            &mid,
            json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        );
        self.line(
            "user",
            ts + 2400,
            json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": output, "is_error": false}]},
                   "toolUseResult": {"stdout": output, "stderr": "", "interrupted": false}}),
        );
    }
}

/// Writes the Claude Code sessions.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let proj = format!(
        ".claude/projects/{}",
        CWD.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    );
    let min = 60_000;

    // Session 1: the CSV parser, with an explore subagent.
    let sid = uuid("demo/claude/1");
    let mut f = File::new(&sid, None);
    f.user(t, "Add a parser for the NOAA tide-gauge CSV exports in fixtures/. Each row is a station id, a UTC timestamp and the water level in metres; keep it in src/readings.rs.");
    f.tool(t + min, "Let me look at the fixtures first.", "Read",
        json!({"file_path": format!("{CWD}/fixtures/8443970.csv")}),
        "station,time_utc,level_m\n8443970,2026-03-01T00:00Z,1.42\n8443970,2026-03-01T00:06Z,1.47\n");
    let mid = format!("msg_01{}", hex("cc1/task", 22));
    f.block(t + 2 * min, &mid, json!({"type": "text", "text": "I'll have a subagent check whether every fixture uses the same header before I write the parser."}));
    let task_id = format!("toolu_01{}", hex("cc1/task/id", 22));
    f.block(t + 2 * min + 500, &mid, json!({"type": "tool_use", "id": task_id, "name": "Task",
        "input": {"description": "Survey fixture headers", "prompt": "List the CSV headers used in fixtures/ and flag any file that differs.", "subagent_type": "general-purpose"}}));
    let agent = "a7c41d2";
    let mut s = File::new(&sid, Some(agent));
    s.user(
        t + 2 * min + 800,
        "List the CSV headers used in fixtures/ and flag any file that differs.",
    );
    s.tool(t + 3 * min, "Checking the first line of every fixture.", "Bash",
        json!({"command": "head -1 fixtures/*.csv", "description": "Show headers"}),
        "==> fixtures/8443970.csv <==\nstation,time_utc,level_m\n==> fixtures/brest.csv <==\nstation;time_local;level_cm\n");
    s.say(t + 4 * min, "Two formats: the NOAA files use `station,time_utc,level_m`, but fixtures/brest.csv (Brest, Finistère) uses semicolons, local time and centimetres. The parser needs a dialect per source.");
    f.line("user", t + 4 * min + 300, json!({"message": {"role": "user", "content": [{"tool_use_id": task_id, "type": "tool_result",
        "content": [{"type": "text", "text": "Two formats: NOAA comma/UTC/metres and Brest semicolon/local/centimetres.\nagentId: a7c41d2"}]}]}}));
    f.say(t + 5 * min, "The fixtures come in two dialects. I wrote `Reading::parse_noaa` for the comma/UTC/metre files and `Reading::parse_shom` for the Brest export, which converts centimetres to metres and local time to UTC with the station's fixed offset. Both return `Result<Vec<Reading>, ParseError>` and skip blank lines.");
    f.user(t + 9 * min, "Good. Should the Brest timestamps honour daylight saving time, or is the offset really fixed?");
    f.say(t + 10 * min, "SHOM publishes Brest observations in UTC+1 all year — no daylight saving — so a fixed offset is right. I added a test that a July reading at 12:00 local lands on 11:00 UTC, and a doc comment saying why.");
    f.lines.push(json!({"type": "custom-title", "customTitle": "Tide CSV parser (NOAA + Brest)", "sessionId": sid}));
    home.jsonl(&format!("{proj}/{sid}.jsonl"), &f.lines)?;
    home.jsonl(
        &format!("{proj}/{sid}/subagents/agent-{agent}.jsonl"),
        &s.lines,
    )?;
    home.file(
        &format!("{proj}/{sid}/subagents/agent-{agent}.meta.json"),
        br#"{"agentType":"general-purpose","description":"Survey fixture headers"}"#,
    )?;
    home.session();

    // Session 2: a flaky test, a day later.
    let t = t + 86_400_000;
    let sid = uuid("demo/claude/2");
    let mut f = File::new(&sid, None);
    f.user(t, "The high_tide_after_midnight test fails about once in ten runs on CI. Can you find out why?");
    f.tool(t + min, "Running it in a loop to reproduce.", "Bash",
        json!({"command": "for i in $(seq 50); do cargo test -q high_tide_after_midnight || break; done", "description": "Repeat the flaky test"}),
        "test predict::tests::high_tide_after_midnight ... FAILED\nassertion failed: next.time > now\n");
    f.say(t + 3 * min, "Found it: the test builds `now` from the wall clock, and when it runs within six minutes of a reading the predictor returns the reading itself (`>=` instead of `>`). I changed the comparison to strictly after and made the test use a fixed clock.");
    f.user(t + 6 * min, "Thanks — and please keep the fixed clock helper in tests/common so the other predictor tests can use it.");
    f.say(t + 7 * min, "Done: `tests/common/clock.rs` exports `fixed_clock(\"2026-03-01T00:00Z\")`, and the three predictor tests now use it. 500 runs in a row pass.");
    home.jsonl(&format!("{proj}/{sid}.jsonl"), &f.lines)?;
    home.session();
    Ok(())
}
