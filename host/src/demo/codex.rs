//! Codex: a rollout that adds `tidewatch next`, and a fork of it that tries
//! another approach (linked by `forked_from_id`, replaying the parent's
//! lines first as Codex does), plus their `session_index.jsonl` names.

use super::{hex, iso, uuid, Home, CWD};
use serde_json::{json, Value};
use std::io;

struct Rollout {
    lines: Vec<Value>,
    n: usize,
    sid: String,
}

impl Rollout {
    fn ev(&mut self, ts: i64, typ: &str, payload: Value) {
        self.lines
            .push(json!({"timestamp": iso(ts), "type": typ, "payload": payload}));
    }

    fn meta(&mut self, ts: i64, forked_from: Option<&str>) {
        let mut meta = json!({
            "id": self.sid, "timestamp": iso(ts), "cwd": CWD, "originator": "codex_cli_rs",
            "cli_version": "0.135.0", "source": "cli", "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5."},
            "git": {"commit_hash": hex("codex/commit", 40), "branch": "main", "repository_url": "git@example.com:demo/tidewatch.git"},
        });
        if let Some(p) = forked_from {
            meta["forked_from_id"] = json!(p);
        }
        self.ev(ts, "session_meta", meta);
    }

    fn turn(&mut self, ts: i64, prompt: &str, answer: &str, cmd: Option<(&str, &str)>) -> i64 {
        self.n += 1;
        let turn_id = uuid(&format!("{}/turn{}", self.sid, self.n));
        self.ev(
            ts,
            "event_msg",
            json!({"type": "task_started", "turn_id": turn_id}),
        );
        if self.n == 1 {
            self.ev(ts, "response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text",
                "text": format!("<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>")}]}));
        }
        self.ev(ts + 10, "turn_context", json!({"turn_id": turn_id, "cwd": CWD, "approval_policy": "on-request", "model": "gpt-5.5"}));
        self.ev(ts + 20, "response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}));
        self.ev(
            ts + 21,
            "event_msg",
            json!({"type": "user_message", "message": prompt, "images": []}),
        );
        let mut t = ts + 20_000;
        if let Some((cmd, out)) = cmd {
            let call = format!("call_{}", hex(&format!("{}/{}", self.sid, self.n), 24));
            self.ev(
                t,
                "response_item",
                json!({"type": "function_call", "name": "exec_command",
                "arguments": json!({"cmd": cmd, "workdir": CWD}).to_string(), "call_id": call}),
            );
            self.ev(
                t + 4000,
                "response_item",
                json!({"type": "function_call_output", "call_id": call,
                "output": format!("Process exited with code 0\nOutput:\n{out}")}),
            );
            t += 30_000;
        }
        self.ev(
            t,
            "event_msg",
            json!({"type": "agent_message", "message": answer, "phase": "final_answer"}),
        );
        self.ev(t + 1, "response_item", json!({"type": "message", "role": "assistant", "id": format!("msg_{}", hex(&format!("{}/a{}", self.sid, self.n), 40)),
            "content": [{"type": "output_text", "text": answer}], "phase": "final_answer"}));
        self.ev(
            t + 50,
            "event_msg",
            json!({"type": "task_complete", "turn_id": turn_id, "last_agent_message": answer}),
        );
        t + 50
    }
}

fn rollout_path(ts: i64, sid: &str) -> String {
    let iso = iso(ts);
    let stamp = format!(
        "{}T{}-{}-{}",
        &iso[..10],
        &iso[11..13],
        &iso[14..16],
        &iso[17..19]
    );
    format!(
        ".codex/sessions/{}/{}/{}/rollout-{stamp}-{sid}.jsonl",
        &iso[..4],
        &iso[5..7],
        &iso[8..10]
    )
}

/// Writes the Codex sessions.
pub(crate) fn write(home: &mut Home, t: i64) -> io::Result<()> {
    let min = 60_000;
    let sid = uuid("demo/codex/1");
    let mut r = Rollout {
        lines: Vec::new(),
        n: 0,
        sid: sid.clone(),
    };
    r.meta(t, None);
    let end = r.turn(t, "Add a `tidewatch next <station>` command that prints the next high and low tide.",
        "Added `tidewatch next`: it loads the station's harmonic constituents, predicts the next 48 hours at 6-minute steps and reports the first local maximum and minimum. Output looks like `next high 14:32 UTC (2.91 m), next low 20:47 UTC (0.38 m)`.",
        Some(("cargo run -q -- next 8443970", "next high 14:32 UTC (2.91 m), next low 20:47 UTC (0.38 m)")));
    let end = r.turn(end + 5 * min, "Stepping every 6 minutes can miss the true peak by a few minutes. Can we refine it?",
        "Yes: after the coarse scan I now refine each extremum with a golden-section search on the prediction curve between the neighbouring samples, which pins the peak to within a second. The command's output is unchanged apart from the more precise times.",
        Some(("cargo test -q predict", "test result: ok. 14 passed; 0 failed")));
    let parent_lines = r.lines.clone();
    home.jsonl(&rollout_path(t, &sid), &r.lines)?;
    home.session();

    // A fork two hours later trying derivative root-finding instead.
    let t2 = end + 120 * min;
    let fork = uuid("demo/codex/2");
    let mut f = Rollout {
        lines: Vec::new(),
        n: 0,
        sid: fork.clone(),
    };
    f.meta(t2, Some(&sid));
    f.lines.extend(parent_lines);
    f.turn(t2 + 1000, "Try finding the extrema from the derivative of the harmonic sum instead of golden-section search, and compare.",
        "The derivative of the harmonic sum is closed-form, so I find its zero crossings with Newton's method seeded from the 6-minute scan. It agrees with golden-section search to under a second and is about 3× faster on a 30-day prediction; I left both behind a `--refine` flag for now.",
        Some(("cargo bench -q refine", "golden  1.84 ms\nnewton  0.61 ms")));
    home.jsonl(&rollout_path(t2, &fork), &f.lines)?;
    home.session();

    let index = [
        json!({"id": sid, "thread_name": "tidewatch next command", "updated_at": iso(end)}),
        json!({"id": fork, "thread_name": "Newton refinement experiment", "updated_at": iso(t2 + 60 * min)}),
    ];
    home.jsonl(".codex/session_index.jsonl", &index)?;
    Ok(())
}
