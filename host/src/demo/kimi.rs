//! Kimi Code: one session (README and a plotting script) whose main agent
//! hands the plot to a sub-agent (`agents/agent-0/wire.jsonl`).

use super::{iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

struct Wire {
    lines: Vec<Value>,
    label: String,
    n: usize,
}

impl Wire {
    fn new(label: &str, t: i64, sub: bool) -> Wire {
        let mut w = Wire {
            lines: Vec::new(),
            label: label.into(),
            n: 0,
        };
        w.lines
            .push(json!({"type": "metadata", "protocol_version": "1.4", "created_at": t}));
        w.rec(
            t + 5,
            "config.update",
            json!({"cwd": CWD, "profileName": if sub { "sub" } else { "agent" },
            "systemPrompt": "You are Kimi Code, a coding agent."}),
        );
        w
    }

    fn rec(&mut self, t: i64, typ: &str, fields: Value) {
        let mut d = json!({"type": typ});
        if let (Some(o), Some(f)) = (d.as_object_mut(), fields.as_object()) {
            o.extend(f.clone());
        }
        d["time"] = json!(t);
        self.lines.push(d);
    }

    fn loop_ev(&mut self, t: i64, ev: Value) {
        self.lines
            .push(json!({"type": "context.append_loop_event", "event": ev, "time": t}));
    }

    fn prompt(&mut self, t: i64, text: &str, user_origin: bool) {
        let part = json!([{"type": "text", "text": text}]);
        if user_origin {
            self.rec(
                t,
                "turn.prompt",
                json!({"input": part, "origin": {"kind": "user"}}),
            );
        } else {
            self.rec(t, "turn.prompt", json!({"input": part}));
        }
        self.rec(t + 1, "context.append_message", json!({"message": {"role": "user", "content": part, "toolCalls": [], "origin": {"kind": "user"}}}));
    }

    /// One step: optional tool call, then the text answer.
    fn step(&mut self, t: i64, text: &str, tool: Option<(&str, Value, &str)>) -> i64 {
        self.n += 1;
        let turn = uuid(&format!("{}/turn{}", self.label, self.n));
        let su = uuid(&format!("{}/step{}", self.label, self.n));
        let base = json!({"turnId": turn, "step": 0, "stepUuid": su});
        self.loop_ev(
            t,
            json!({"type": "step.begin", "uuid": su, "turnId": turn, "step": 0}),
        );
        let mut t = t + 2000;
        if let Some((name, args, out)) = tool {
            let cid = format!(
                "tool_{}",
                &uuid(&format!("{}/call{}", self.label, self.n))[..20]
            );
            let cu = uuid(&format!("{}/cu{}", self.label, self.n));
            let mut call = json!({"type": "tool.call", "uuid": cu, "toolCallId": cid, "name": name, "args": args});
            merge(&mut call, &base);
            self.loop_ev(t, call);
            self.loop_ev(t + 3000, json!({"type": "tool.result", "parentUuid": cu, "toolCallId": cid, "result": {"output": out, "isError": false}}));
            t += 6000;
        }
        let mut part = json!({"type": "content.part", "uuid": uuid(&format!("{}/p{}", self.label, self.n)), "part": {"type": "text", "text": text}});
        merge(&mut part, &base);
        self.loop_ev(t, part);
        self.loop_ev(t + 100, json!({"type": "step.end", "uuid": su, "turnId": turn, "step": 0, "finishReason": "end_turn"}));
        self.rec(
            t + 200,
            "turn.ended",
            json!({"turnId": self.n, "reason": "completed"}),
        );
        t + 200
    }
}

fn merge(into: &mut Value, from: &Value) {
    if let (Some(o), Some(f)) = (into.as_object_mut(), from.as_object()) {
        o.extend(f.clone());
    }
}

/// Writes the Kimi Code session.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let sid = format!("session_{}", uuid("demo/kimi/1"));
    let wd = format!(
        "wd_tidewatch_{}",
        &recall_core::naming::hash16(CWD.as_bytes())[..12]
    );
    let base = format!(".kimi-code/sessions/{wd}/{sid}");
    let min = 60_000;

    let mut main = Wire::new("kimi/main", t, false);
    main.prompt(
        t + 1000,
        "Write a README for tidewatch: what it does, install, and an example of `tidewatch next`.",
        true,
    );
    let end = main.step(t + 2000, "README.md now covers what tidewatch does (tide predictions from harmonic constituents, plus NOAA and SHOM CSV import), `cargo install --path .`, and an example session with `tidewatch next 8443970`.",
        Some(("WriteFile", json!({"path": format!("{CWD}/README.md"), "content": "# tidewatch\n\nTide predictions from harmonic constituents.\n"}), "Wrote 1.2 KB to README.md")));
    main.prompt(
        end + 3 * min,
        "Also add a script that plots a week of predicted water levels as a PNG for the README.",
        true,
    );
    // The main agent delegates the plot to a sub-agent.
    let sub_start = end + 3 * min + 5000;
    let mut sub = Wire::new("kimi/agent-0", sub_start, true);
    sub.prompt(sub_start + 500, "Create scripts/plot_week.py that calls `tidewatch predict --json` and plots seven days of levels with matplotlib, saving docs/week.png.", false);
    let sub_end = sub.step(sub_start + 1000, "scripts/plot_week.py runs `tidewatch predict --days 7 --json`, plots level against UTC time with the high and low tides marked, and saves docs/week.png at 1200×400.",
        Some(("WriteFile", json!({"path": format!("{CWD}/scripts/plot_week.py")}), "Wrote 2.0 KB to scripts/plot_week.py")));
    main.step(sub_end + 2000, "The sub-agent added scripts/plot_week.py; I ran it and embedded docs/week.png under a “Predictions” heading in the README.", None);

    home.jsonl(&format!("{base}/agents/main/wire.jsonl"), &main.lines)?;
    home.jsonl(&format!("{base}/agents/agent-0/wire.jsonl"), &sub.lines)?;
    let home_dir = home.dir.display().to_string();
    let state = json!({
        "createdAt": iso(t), "updatedAt": iso(sub_end + 3000), "title": "README and weekly plot",
        "isCustomTitle": false, "lastPrompt": "Also add a script that plots a week of predicted water levels as a PNG for the README.",
        "workDir": CWD,
        "agents": {
            "main": {"homedir": format!("{home_dir}/{base}/agents/main"), "type": "main", "parentAgentId": null},
            "agent-0": {"homedir": format!("{home_dir}/{base}/agents/agent-0"), "type": "sub", "parentAgentId": "main"},
        },
        "custom": {},
    });
    home.file(
        &format!("{base}/state.json"),
        serde_json::to_string_pretty(&state)
            .unwrap_or_default()
            .as_bytes(),
    )?;
    home.jsonl(
        ".kimi-code/session_index.jsonl",
        &[json!({"sessionId": sid, "sessionDir": format!("{home_dir}/{base}"), "workDir": CWD})],
    )?;
    home.session();
    Ok(())
}
