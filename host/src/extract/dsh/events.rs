//! DSH events to record drafts (DESIGN.md §5 `dsh`, FORMATS-dsh.md §4–§8):
//! the streaming state of one generation file, line by line.
//!
//! Only `user/message` (and pre-release `steering/message`) with
//! `source.kind == "user"`, the `text` blocks of `assistant/message`, their
//! `tool-call` blocks and `tool/result` texts become drafts. Replacement
//! copies (`surfaceOp` an object), chunks, packed rows, stream records and
//! attempts never do. Every draft keeps its event `seq`, so the inherited
//! prefix (below `seedLength`, or below the last `session/end-seed
//! {inherited:true}`) is cut when the session is finished.

use super::super::draft::{assemble, mtime_ms, Draft, Header, Loc};
use super::super::json::{blank, parse_line, sniff_type};
use super::super::{Diagnostics, Extracted};
use recall_core::model::{add_model, session_key, Parent, Relation, Role, Source};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Streaming state of one DSH generation file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Header seen (line 1).
    header: bool,
    id: Option<String>,
    cwd: Option<String>,
    parent: Option<String>,
    subagent: bool,
    /// Formats 0/1: number of inherited leading events.
    seed_length: Option<u64>,
    /// Formats 2+: the seq of the last `session/end-seed {inherited:true}`.
    inherited_cut: Option<u64>,
    title: Option<String>,
    /// The seq the next event without one gets.
    next_seq: u64,
    drafts: Vec<Draft>,
    /// Assistant `source.model` (pre-identity `provenance.model`), first seen first.
    #[serde(default)]
    models: Vec<String>,
}

/// Event types that may yield something (everything else is skipped
/// unparsed, except packed rows, which advance the seq).
fn indexed(ty: &[u8]) -> bool {
    matches!(
        ty,
        b"session"
            | b"user/message"
            | b"steering/message"
            | b"assistant/message"
            | b"tool/result"
            | b"session/title"
            | b"session/end-seed"
    )
}

/// A packed chunk row: only its size matters (it stands for that many
/// `assistant/chunk` events).
#[derive(Deserialize)]
struct Packed {
    #[serde(default)]
    seq0: Option<u64>,
    #[serde(default)]
    data: Option<PackedData>,
}

#[derive(Deserialize)]
struct PackedData {
    #[serde(default)]
    texts: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default)]
    args: Option<Vec<serde::de::IgnoredAny>>,
}

impl State {
    /// Handles one line; false when it was not valid JSON.
    pub fn line(&mut self, bytes: &[u8], no: u64) -> bool {
        match sniff_type(bytes) {
            Some(ty) if ty.ends_with(b"-chunks") && !ty.contains(&b'/') => {
                return match parse_line::<Packed>(bytes) {
                    Some(p) => {
                        let n = p
                            .data
                            .and_then(|d| d.texts.or(d.args))
                            .map_or(1, |v| v.len().max(1) as u64);
                        self.next_seq = p.seq0.unwrap_or(self.next_seq).saturating_add(n);
                        true
                    }
                    None => false,
                };
            }
            Some(ty) if !indexed(ty) => {
                // Skipped unparsed: its seq is the next one, or the one it
                // carries (read when it is cheap to find).
                self.next_seq = self.next_seq.saturating_add(1);
                return std::str::from_utf8(bytes).is_ok();
            }
            _ => {}
        }
        let Some(v) = parse_line::<Value>(bytes) else {
            return false;
        };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "session" && !self.header {
            self.header(&v);
            return true;
        }
        let seq = v
            .get("seq")
            .and_then(Value::as_u64)
            .unwrap_or(self.next_seq);
        self.next_seq = seq.saturating_add(1);
        let ts = v.get("time").and_then(Value::as_i64).filter(|&t| t > 0);
        let data = v.get("data").unwrap_or(&Value::Null);
        // A surface replacement (compaction summary, pruned tool output,
        // system-prompt update) is a model-only copy: never a record.
        if v.get("surfaceOp").is_some_and(Value::is_object) {
            return true;
        }
        match ty {
            "user/message" | "steering/message" => self.user(data, seq, ts),
            "assistant/message" => self.assistant(data, seq, ts, no),
            "tool/result" => self.tool_result(data, seq, ts, no),
            "session/title" => {
                if let Some(t) = data.get("title").and_then(Value::as_str) {
                    if !blank(t) {
                        self.title = Some(t.to_string());
                    }
                }
            }
            "session/end-seed" if data.get("inherited").and_then(Value::as_bool) == Some(true) => {
                self.inherited_cut = Some(seq);
            }
            _ => {}
        }
        true
    }

    fn header(&mut self, v: &Value) {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        self.header = true;
        self.id = s("id");
        self.cwd = s("cwd");
        self.parent = s("parentSession");
        self.subagent = v.get("origin").and_then(Value::as_str) == Some("subagent");
        self.seed_length = v.get("seedLength").and_then(Value::as_u64);
    }

    /// The id DSH gives a message: its own, else (pre-identity) the one DSH
    /// assigns on import.
    fn message_id(&self, m: &Value, seq: u64) -> String {
        match m
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            Some(id) => id.to_string(),
            None => format!(
                "legacy-message:{}:{seq}",
                self.id.as_deref().unwrap_or_default()
            ),
        }
    }

    fn push(
        &mut self,
        role: Role,
        ts: Option<i64>,
        text: String,
        loc: Loc,
        seq: u64,
        item: String,
    ) {
        let mut d = Draft::new(role, ts, text, loc);
        d.seq = Some(seq);
        d.item_id = Some(item);
        self.drafts.push(d);
    }

    fn user(&mut self, data: &Value, seq: u64, ts: Option<i64>) {
        // `steering/message {turn, message}` wraps a whole message.
        let m = match data.get("message") {
            Some(m) if m.is_object() => m,
            _ => data,
        };
        let kind = m
            .get("source")
            .and_then(|s| s.get("kind"))
            .and_then(Value::as_str);
        if kind != Some("user") {
            return; // injected context
        }
        let text = text_blocks(m.get("content"));
        if blank(&text) {
            return;
        }
        let id = self.message_id(m, seq);
        self.push(Role::User, ts, text, Loc::MessageId(id.clone()), seq, id);
    }

    fn assistant(&mut self, data: &Value, seq: u64, ts: Option<i64>, no: u64) {
        let m = match data.get("message") {
            Some(m) if m.is_object() => m,
            _ => data, // pre-identity: `data.content`
        };
        let model = m
            .get("source")
            .or_else(|| data.get("provenance"))
            .and_then(|s| s.get("model"))
            .and_then(Value::as_str);
        if let Some(model) = model {
            add_model(&mut self.models, model);
        }
        let id = self.message_id(m, seq);
        let blocks = m.get("content").and_then(Value::as_array);
        let text = text_blocks(m.get("content"));
        if !blank(&text) {
            self.push(
                Role::Assistant,
                ts,
                text,
                Loc::MessageId(id.clone()),
                seq,
                id.clone(),
            );
        }
        for b in blocks.into_iter().flatten() {
            if b.get("type").and_then(Value::as_str) != Some("tool-call") {
                continue;
            }
            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
            let args = match b.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(v) => v.to_string(),
            };
            let row = if args.is_empty() {
                name.to_string()
            } else {
                format!("{name} {args}")
            };
            let loc = match b
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                Some(call) => Loc::MessageId(call.to_string()),
                None => Loc::Event(no),
            };
            self.push(Role::Tool, ts, row, loc, seq, id.clone());
        }
    }

    fn tool_result(&mut self, data: &Value, seq: u64, ts: Option<i64>, no: u64) {
        let (m, content) = match data.get("message") {
            Some(m) if m.is_object() => (m, m.get("content")),
            _ => (data, data.get("content")), // pre-identity
        };
        // Formats 0–3 wrap the result in a `tool-result` block; format 4
        // and pre-identity logs carry the blocks themselves.
        let mut parts = Vec::new();
        match content {
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("tool-result") {
                        parts.push(text_blocks(b.get("content")));
                    } else if let Some(t) = block_text(b) {
                        parts.push(t.to_string());
                    }
                }
            }
            Some(Value::String(s)) => parts.push(s.clone()),
            _ => {}
        }
        let text = parts.join("\n");
        if text.is_empty() {
            return;
        }
        let id = self.message_id(m, seq);
        let loc = match m
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            Some(id) => Loc::MessageId(id.to_string()),
            None => Loc::Event(no),
        };
        self.push(Role::Tool, ts, text, loc, seq, id);
    }

    /// Cuts tool rows to their cap before a checkpoint is taken.
    pub fn seal(&mut self) {
        self.drafts.iter_mut().for_each(Draft::seal);
    }

    /// The seq below which events are inherited from the parent.
    fn cut(&self) -> u64 {
        self.inherited_cut.or(self.seed_length).unwrap_or(0)
    }

    /// The session (`None` without a header id or a single own record).
    pub fn finish(self, path: &Path) -> Option<Extracted> {
        let cut = self.cut();
        let session_id = self.id?;
        let drafts: Vec<Draft> = self
            .drafts
            .into_iter()
            .filter(|d| d.seq.is_some_and(|s| s >= cut))
            .collect();
        let path_str = path.to_string_lossy().into_owned();
        let header = Header {
            source: Source::Dsh,
            session_id,
            title: self.title,
            cwd: self.cwd,
            branch: None,
            parent: self.parent.map(|p| Parent {
                key: session_key(Source::Dsh, &p),
                relation: if self.subagent {
                    Relation::Subagent
                } else {
                    Relation::Fork
                },
            }),
            resume: None,
            paths: vec![path_str],
            models: self.models,
        };
        assemble(
            header,
            drafts,
            Vec::new(),
            Diagnostics::default(),
            mtime_ms(path),
        )
    }
}

/// The text of one block when it is a `text` block.
fn block_text(b: &Value) -> Option<&str> {
    (b.get("type").and_then(Value::as_str) == Some("text"))
        .then(|| b.get("text").and_then(Value::as_str))
        .flatten()
}

/// The `text` blocks of `content` joined with `\n` (a string content is the
/// text itself; images, files, reasoning and tool blocks are ignored).
fn text_blocks(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(block_text)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
