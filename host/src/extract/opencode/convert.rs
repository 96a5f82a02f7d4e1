//! One OpenCode session's rows (from the database or the legacy JSON
//! tree, alike) as an [`Extracted`] session.
//!
//! The rules follow OpenCode's `MessageV2` shapes
//! (`packages/opencode/src/session/message-v2.ts`): a message's `data` is
//! `{role, time: {created}, …}`, an assistant's also `modelID`,
//! `providerID` and `summary` (true on a compaction summary); a part's
//! `data` is `{type, …}`.
//!
//! - user `text` parts are the user's words unless `synthetic` (the CLI's
//!   own text: a read file's body, "Called the Read tool…") or `ignored`
//!   (not sent to the model);
//! - assistant `text` parts are the assistant's words, except in a
//!   compaction summary (`summary: true`), which is not conversation;
//! - `reasoning` parts are reasoning: never indexed;
//! - `tool` parts are tool rows: the tool's name and `state.input`, then
//!   `state.output` (completed) or `state.error`; `subtask` parts are tool
//!   rows of the task's prompt;
//! - `file`, `agent`, `compaction`, `step-start`, `step-finish`,
//!   `snapshot`, `patch` and `retry` parts are not text.

use super::super::common::{session_bounds, TOOL_CAP_CHARS};
use super::super::draft::{assemble, Draft, Header, Loc};
use super::super::json::{blank, tool_call_text};
use super::super::single::str_of;
use super::super::{Diagnostics, Extracted};
use recall_core::model::{add_model, session_key, Parent, Relation, Role, Source};
use serde_json::Value;

/// A session row (`session` table, or a legacy `session/…/<id>.json`).
#[derive(Clone, Debug, Default)]
pub struct SessionRow {
    /// `ses_…`.
    pub id: String,
    /// The working directory.
    pub directory: Option<String>,
    /// OpenCode's title (a placeholder until the model names it).
    pub title: Option<String>,
    /// The parent session of a subagent (task) session.
    pub parent: Option<String>,
    /// `time_updated` (ms): with the database's message counts, what tells
    /// a sweep that the session changed.
    pub updated_ms: Option<i64>,
}

/// One message with its parts, in order.
#[derive(Clone, Debug)]
pub struct MessageRow {
    /// `msg_…`.
    pub id: String,
    /// `time_created` (ms) of the row, when the data has none.
    pub time_ms: Option<i64>,
    /// `data` (`MessageV2.Info` without ids).
    pub data: Value,
    /// Its parts as `(part id, data)`, by part id.
    pub parts: Vec<(String, Value)>,
}

/// What reading the rows skipped, counted like lines of a log.
#[derive(Clone, Debug, Default)]
pub struct Reading {
    /// Rows read (messages and parts).
    pub rows: u64,
    /// Bytes of row data read.
    pub bytes: u64,
    /// Rows whose `data` is not JSON (or not UTF-8).
    pub bad: u64,
    /// Rows over the line cap, skipped unread.
    pub huge: u64,
    /// The session bound stopped the reading.
    pub truncated: bool,
}

impl Reading {
    /// Whether one more row of `len` bytes may be read under the session
    /// bounds; sets `truncated` when not.
    pub fn admit(&mut self, len: u64) -> bool {
        let (lines, bytes) = session_bounds();
        if self.rows >= lines || self.bytes.saturating_add(len) > bytes {
            self.truncated = true;
            return false;
        }
        self.rows += 1;
        self.bytes += len;
        true
    }

    /// `data` parsed, or counted bad.
    pub fn parse(&mut self, data: &[u8]) -> Option<Value> {
        match serde_json::from_slice::<Value>(data) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => {
                self.bad += 1;
                None
            }
        }
    }

    /// These counts as diagnostics.
    pub fn diagnostics(&self) -> Diagnostics {
        Diagnostics {
            bytes: self.bytes,
            lines: self.rows,
            bad_lines: self.bad,
            huge_lines: self.huge,
            truncated: self.truncated,
            ..Diagnostics::default()
        }
    }
}

/// OpenCode's placeholder titles (`Session.createDefaultTitle`: "New
/// session - <ISO time>", "Child session - <ISO time>"): not a title.
fn real_title(t: &str) -> bool {
    !(t.starts_with("New session - ") || t.starts_with("Child session - ") || blank(t))
}

/// The session's records and meta; `None` when it holds no record.
/// `paths` are its source paths (a member path, or the legacy files).
pub fn session(
    s: &SessionRow,
    messages: &[MessageRow],
    paths: Vec<String>,
    diagnostics: Diagnostics,
    fallback_ts: i64,
) -> Option<Extracted> {
    let mut models = Vec::new();
    let mut drafts = Vec::new();
    for m in messages {
        message(m, &mut drafts, &mut models);
    }
    let header = Header {
        source: Source::OpenCode,
        session_id: s.id.clone(),
        title: s.title.clone().filter(|t| real_title(t)),
        cwd: s.directory.clone().filter(|d| !d.is_empty()),
        branch: None,
        parent: s.parent.as_ref().map(|p| Parent {
            key: session_key(Source::OpenCode, p),
            relation: Relation::Subagent,
        }),
        resume: None, // OpenCode::resume_command
        paths,
        models,
    };
    assemble(header, drafts, Vec::new(), diagnostics, fallback_ts)
}

/// The drafts of one message.
fn message(m: &MessageRow, drafts: &mut Vec<Draft>, models: &mut Vec<String>) {
    let d = &m.data;
    let role = str_of(d, "role").unwrap_or("");
    let created = d
        .get("time")
        .and_then(|t| t.get("created"))
        .and_then(Value::as_i64)
        .or(m.time_ms);
    let assistant = role == "assistant";
    if assistant {
        if let Some(model) = str_of(d, "modelID") {
            add_model(models, model);
        }
    }
    // A compaction summary is the model's digest of the conversation.
    let summary = assistant && d.get("summary").and_then(Value::as_bool) == Some(true);
    for (id, p) in &m.parts {
        let loc = || Loc::MessageId(id.clone());
        let ts = p
            .get("time")
            .and_then(|t| t.get("start"))
            .and_then(Value::as_i64)
            .or(created);
        match str_of(p, "type").unwrap_or("") {
            "text" => {
                let flagged = |k| p.get(k).and_then(Value::as_bool) == Some(true);
                let text = str_of(p, "text").unwrap_or("");
                if flagged("synthetic") || flagged("ignored") || summary || blank(text) {
                    continue;
                }
                let role = match role {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => continue,
                };
                drafts.push(Draft::new(role, ts, text.to_string(), loc()));
            }
            "tool" => {
                let state = p.get("state").unwrap_or(&Value::Null);
                let mut row = tool_call_text(str_of(p, "tool").unwrap_or(""), state.get("input"));
                let out = match str_of(state, "status") {
                    Some("completed") => str_of(state, "output"),
                    Some("error") => str_of(state, "error"),
                    _ => None,
                };
                if let Some(out) = out {
                    row.push('\n');
                    row.extend(out.chars().take(TOOL_CAP_CHARS + 1));
                }
                if !blank(&row) {
                    drafts.push(Draft::new(Role::Tool, ts.or(created), row, loc()));
                }
            }
            "subtask" => {
                let what = str_of(p, "description").unwrap_or("");
                let prompt = str_of(p, "prompt").unwrap_or("");
                let row = tool_call_text("task", Some(&Value::String(format!("{what}\n{prompt}"))));
                if !blank(prompt) {
                    drafts.push(Draft::new(Role::Tool, created, row, loc()));
                }
            }
            _ => {}
        }
    }
}
