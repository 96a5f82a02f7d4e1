//! Extractor for GitHub Copilot CLI sessions (docs/notes-agents.md
//! "Copilot CLI"): `${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl`,
//! one event `{type, data, id, timestamp, parentId}` per line.
//!
//! `session.start` gives the id, cwd and branch (`data.context`);
//! `user.message`'s `content` is user prose (never `transformedContent`,
//! the prompt wrapped in `<current_datetime>` and `<system_reminder>`
//! blocks); `assistant.message`'s `content` is assistant prose, its
//! `reasoningText` is reasoning (never indexed) and each `toolRequests`
//! entry is a tool row, joined with the output or error of the
//! `tool.execution_complete` of the same `toolCallId`. `system.message`
//! (the CLI's system prompt) and every other event are not conversation.
//! Models: `assistant.message.model` and `session.model_change.newModel`.
//! Title: `vscode.metadata.json`'s `customTitle` beside the log, else the
//! first prompt.

use super::agent::Agent;
use super::common::{read_small, TOOL_CAP_CHARS};
use super::draft::{assemble, mtime_ms, Draft, Header, Loc};
use super::feed::{Call, Fed, Outcome};
use super::json::{blank, tool_call_text};
use super::single::{self, str_of, ts_of, LineState};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::{add_model, Role, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// GitHub Copilot CLI in the registry.
pub struct Copilot;

impl Agent for Copilot {
    const ID: &'static str = "copilot";
    const SOURCE: Source = Source::Copilot;
    const ENV: &'static str = "COPILOT_HOME";
    type Resume = State;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".copilot"))
            .join("session-state")
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<State>, ExtractError> {
        single::scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &State,
    ) -> Result<Option<Outcome<State>>, ExtractError> {
        single::resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        // `copilot --resume [sessionId]` (GitHub Docs, "Using GitHub Copilot CLI").
        single::uuid_resume("copilot --resume", &meta.session_id)
    }
}

/// Every `<id>/events.jsonl` under `session-state/`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    let mut out = Vec::new();
    for d in dirs {
        let f = d.join("events.jsonl");
        if !super::common::secondary_file(&f) {
            continue;
        }
        let mut files = vec![f.clone()];
        let meta = d.join(METADATA);
        if meta.exists() && super::common::secondary_file(&meta) {
            files.push(meta);
        }
        out.push(SessionSource {
            source: Source::Copilot,
            unit: f.to_string_lossy().into_owned(),
            files,
            context: Value::Null,
        });
    }
    out
}

/// The file beside the log that may hold the session's custom title.
const METADATA: &str = "vscode.metadata.json";

/// The streaming state of one `events.jsonl`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    id: Option<String>,
    cwd: Option<String>,
    branch: Option<String>,
    models: Vec<String>,
    drafts: Vec<Draft>,
    /// `toolCallId → index` of its row in `drafts`, until its result came.
    pending: HashMap<String, usize>,
}

impl LineState for State {
    fn line(&mut self, bytes: &[u8], no: u64) -> bool {
        let Ok(e) = serde_json::from_slice::<Value>(bytes) else {
            return false;
        };
        let data = e.get("data").cloned().unwrap_or(Value::Null);
        let ts = ts_of(&e, "timestamp");
        let key = |k: Option<&str>| k.map_or(Loc::Event(no), |k| Loc::MessageId(k.to_string()));
        match e.get("type").and_then(Value::as_str).unwrap_or("") {
            "session.start" => {
                if self.id.is_none() {
                    self.id = str_of(&data, "sessionId").map(str::to_string);
                }
                let ctx = data.get("context").cloned().unwrap_or(Value::Null);
                self.cwd = self.cwd.take().or(str_of(&ctx, "cwd").map(str::to_string));
                self.branch = self
                    .branch
                    .take()
                    .or(str_of(&ctx, "branch").map(str::to_string));
            }
            "session.model_change" => {
                if let Some(m) = str_of(&data, "newModel") {
                    add_model(&mut self.models, m);
                }
            }
            "user.message" => {
                let text = str_of(&data, "content").unwrap_or("");
                if !blank(text) {
                    let d = Draft::new(Role::User, ts, text.to_string(), key(str_of(&e, "id")));
                    self.drafts.push(d);
                }
            }
            "assistant.message" => {
                if let Some(m) = str_of(&data, "model") {
                    add_model(&mut self.models, m);
                }
                let text = str_of(&data, "content").unwrap_or("");
                if !blank(text) {
                    let loc = key(str_of(&data, "messageId").or(str_of(&e, "id")));
                    self.drafts
                        .push(Draft::new(Role::Assistant, ts, text.to_string(), loc));
                }
                let reqs = data.get("toolRequests").and_then(Value::as_array);
                for r in reqs.into_iter().flatten() {
                    let row = tool_call_text(str_of(r, "name").unwrap_or(""), r.get("arguments"));
                    let call = str_of(r, "toolCallId");
                    if let Some(c) = call {
                        self.pending.insert(c.to_string(), self.drafts.len());
                    }
                    self.drafts.push(Draft::new(Role::Tool, ts, row, key(call)));
                }
            }
            "tool.execution_complete" => {
                let Some(i) = str_of(&data, "toolCallId").and_then(|c| self.pending.remove(c))
                else {
                    return true;
                };
                let out = data
                    .get("result")
                    .and_then(|r| r.get("content"))
                    .or_else(|| data.get("error").and_then(|x| x.get("message")));
                let s = match out {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => return true,
                };
                if let Some(d) = self.drafts.get_mut(i).filter(|d| !d.capped) {
                    d.text.push('\n');
                    d.text.extend(s.chars().take(TOOL_CAP_CHARS + 1));
                }
            }
            _ => {}
        }
        true
    }

    fn seal(&mut self) {
        // A row still waiting for its result stays whole.
        let open: std::collections::HashSet<usize> = self.pending.values().copied().collect();
        for (i, d) in self.drafts.iter_mut().enumerate() {
            if !open.contains(&i) {
                d.seal();
            }
        }
    }

    fn finish(self, call: &Call, path: &Path) -> Option<Extracted> {
        let session_id = self
            .id
            .or_else(|| path.parent()?.file_name()?.to_str().map(str::to_string))?;
        let header = Header {
            source: Source::Copilot,
            session_id,
            title: custom_title(call),
            cwd: self.cwd,
            branch: self.branch,
            parent: None,
            resume: None, // Copilot::resume_command
            paths: vec![path.to_string_lossy().into_owned()],
            models: self.models,
        };
        assemble(
            header,
            self.drafts,
            Vec::new(),
            Diagnostics::default(),
            mtime_ms(path),
        )
    }
}

/// `customTitle` of the unit's `vscode.metadata.json`, if it has one.
fn custom_title(call: &Call) -> Option<String> {
    let f = call
        .src
        .files
        .iter()
        .skip(1)
        .find(|f| f.ends_with(METADATA))?;
    let v: Value = serde_json::from_slice(&read_small(f, 1 << 20).ok()?).ok()?;
    str_of(&v, "customTitle")
        .filter(|t| !blank(t))
        .map(str::to_string)
}
