//! Extractor for Gemini CLI sessions (docs/notes-agents.md "Gemini CLI"):
//! `${GEMINI_CLI_HOME:-~}/.gemini/tmp/<project>/chats/session-*.json[l]`,
//! subagents in `chats/<parent session id>/<id>.jsonl`.
//!
//! A legacy `.json` file is one object `{sessionId, messages[], summary?}`
//! read whole; a `.jsonl` file is a replay log fed line by line, replayed
//! the way gemini-cli's own loader does (`chatRecordingService.ts`
//! `loadConversationRecord`): a record with a string `id` upserts that
//! message (first position, last body), `{"$rewindTo": id}` removes that
//! message and every later one (an unknown id removes all), `{"$set": …}`
//! merges metadata and, with `messages`, replaces the history. Removed
//! messages stay as records under one `record_ids` mark (reason `rewind`).
//! User prose is `displayContent` when present, else `content` cut before
//! the `@file` expansion; assistant prose is `gemini` (legacy `model`)
//! content without thought parts; `toolCalls` are tool rows; `thoughts`,
//! `info`, `error` and `warning` are never indexed. The project folder maps
//! to a cwd at discovery ([`project_cwd`]).

mod discover;

pub use discover::{discover, project_cwd};

use super::agent::Agent;
use super::common::{MAX_SESSION_BYTES, TOOL_CAP_CHARS};
use super::draft::{assemble, mtime_ms, Draft, Header, Loc};
use super::feed::{Call, Fed, Outcome};
use super::json::{blank, tool_call_text};
use super::single::{self, parts_text, str_of, ts_of, LineState};
use super::{Diagnostics, ExtractError, Extracted};
use recall_core::model::{
    add_model, session_key, Mark, Parent, Relation, Role, SessionMeta, Source,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The separator gemini-cli puts before expanded `@file` bodies in a user
/// message's `content` (`packages/core/src/utils/constants.ts`).
pub const REFERENCED_FILES: &str = "--- Content from referenced files ---";

/// Gemini CLI in the registry.
pub struct Gemini;

impl Agent for Gemini {
    const ID: &'static str = "gemini";
    const SOURCE: Source = Source::Gemini;
    const ENV: &'static str = "GEMINI_CLI_HOME";
    type Resume = State;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        // GEMINI_CLI_HOME replaces the home directory (`utils/paths.ts`).
        env.unwrap_or_else(|| home.to_path_buf())
            .join(".gemini")
            .join("tmp")
    }

    fn discover(root: &Path) -> Vec<super::SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<State>, ExtractError> {
        match call.src.files.first() {
            Some(p) if is_legacy(p) => legacy(call, &p.clone()),
            _ => single::scratch(call),
        }
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &State,
    ) -> Result<Option<Outcome<State>>, ExtractError> {
        match call.src.files.first() {
            Some(p) if is_legacy(p) => Ok(None),
            _ => single::resume(call, files, state),
        }
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        // `gemini --resume <index|UUID>` (packages/cli/src/config/config.ts);
        // a subagent's id is not in the project's session list.
        if meta
            .parent
            .as_ref()
            .is_some_and(|p| p.relation == Relation::Subagent)
        {
            return None;
        }
        single::uuid_resume("gemini --resume", &meta.session_id)
    }
}

fn is_legacy(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
}

/// A legacy single-object file, read whole (bounded like any session).
fn legacy(call: &mut Call, path: &Path) -> Result<Outcome<State>, ExtractError> {
    let bytes = call
        .read_small(path, MAX_SESSION_BYTES)
        .map_err(|source| ExtractError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let mut s = State::default();
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => s.metadata(&v),
        Err(_) => call.diag.bad_lines += 1,
    }
    Ok(Outcome {
        extracted: s.finish(call, path),
        files: Vec::new(),
        state: None,
    })
}

/// One message as it stands, with the records it yields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    id: String,
    /// How many earlier entries had this id (a message re-added after a
    /// rewind is a new entry): part of its records' `item_id`.
    n: u32,
    alive: bool,
    drafts: Vec<Draft>,
    model: Option<String>,
}

/// The replay state of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    session_id: Option<String>,
    summary: Option<String>,
    entries: Vec<Entry>,
}

impl LineState for State {
    fn line(&mut self, bytes: &[u8], _no: u64) -> bool {
        let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
            return false;
        };
        // The loader's order of checks (loadConversationRecord).
        if let Some(to) = v.get("$rewindTo").and_then(Value::as_str) {
            self.rewind(to);
        } else if v.get("id").is_some_and(Value::is_string) {
            self.upsert(&v);
        } else if let Some(set) = v.get("$set").filter(|s| s.is_object()) {
            self.set(set);
        } else if str_of(&v, "sessionId").is_some()
            && v.get("projectHash").is_some_and(Value::is_string)
        {
            self.metadata(&v);
        }
        true
    }

    fn seal(&mut self) {
        for e in &mut self.entries {
            e.drafts.iter_mut().for_each(Draft::seal);
        }
    }

    fn finish(self, call: &Call, path: &Path) -> Option<Extracted> {
        let session_id = self.session_id?;
        let ctx = &call.src.context;
        let parent = ctx.get("parent").and_then(Value::as_str).map(|p| Parent {
            key: session_key(Source::Gemini, p),
            relation: Relation::Subagent,
        });
        let mut models = Vec::new();
        let mut drafts = Vec::new();
        let mut dead = Vec::new();
        for e in self.entries {
            if let Some(m) = &e.model {
                add_model(&mut models, m);
            }
            if !e.alive {
                dead.extend(e.drafts.iter().filter_map(|d| d.item_id.clone()).take(1));
            }
            drafts.extend(e.drafts);
        }
        let marks = if dead.is_empty() {
            Vec::new()
        } else {
            vec![Mark::RecordIds {
                at: drafts.len() as u64,
                ids: dead,
                reason: "rewind".into(),
            }]
        };
        let header = Header {
            source: Source::Gemini,
            session_id,
            title: self.summary,
            cwd: ctx.get("cwd").and_then(Value::as_str).map(str::to_string),
            branch: None,
            parent,
            resume: None, // Gemini::resume_command
            paths: vec![path.to_string_lossy().into_owned()],
            models,
        };
        assemble(
            header,
            drafts,
            marks,
            Diagnostics::default(),
            mtime_ms(path),
        )
    }
}

impl State {
    /// The first line (or a whole legacy file): session fields, and any
    /// messages it embeds.
    fn metadata(&mut self, v: &Value) {
        if self.session_id.is_none() {
            self.session_id = str_of(v, "sessionId").map(str::to_string);
        }
        self.meta_fields(v);
        if let Some(msgs) = v.get("messages").and_then(Value::as_array) {
            for m in msgs
                .iter()
                .filter(|m| m.get("id").is_some_and(Value::is_string))
            {
                self.upsert(m);
            }
        }
    }

    fn meta_fields(&mut self, v: &Value) {
        if let Some(s) = str_of(v, "summary").filter(|s| !blank(s)) {
            self.summary = Some(s.to_string());
        }
    }

    fn alive(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.alive && e.id == id)
    }

    fn upsert(&mut self, m: &Value) {
        let Some(id) = str_of(m, "id") else { return };
        let i = match self.alive(id) {
            Some(i) => i,
            None => {
                let n = self.entries.iter().filter(|e| e.id == id).count() as u32;
                self.entries.push(Entry {
                    id: id.to_string(),
                    n,
                    alive: true,
                    drafts: Vec::new(),
                    model: None,
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[i];
        e.drafts = message(m, &e.id, e.n);
        e.model = str_of(m, "model").map(str::to_string);
    }

    /// `rewindTo`: that message and everything after it go; an unknown id
    /// clears all (the loader's `messagesMap.clear()`).
    fn rewind(&mut self, id: &str) {
        let from = self.alive(id).unwrap_or(0);
        for e in self.entries.iter_mut().skip(from) {
            e.alive = false;
        }
    }

    /// `$set`: metadata, and with `messages` a checkpoint that replaces the
    /// history (`updateMessagesFromHistory`). Ids never seen before are the
    /// turns it synthesizes (a compression summary): not the person's or
    /// the model's words, so they are not indexed.
    fn set(&mut self, set: &Value) {
        self.meta_fields(set);
        let Some(msgs) = set.get("messages").and_then(Value::as_array) else {
            return;
        };
        let keep: HashSet<&str> = msgs.iter().filter_map(|m| str_of(m, "id")).collect();
        for e in &mut self.entries {
            if !keep.contains(e.id.as_str()) {
                e.alive = false;
            }
        }
        for m in msgs {
            match str_of(m, "id") {
                Some(id) if self.alive(id).is_some() => self.upsert(m),
                _ => {}
            }
        }
    }
}

/// The records of one message (`id`, its `n`th entry).
fn message(m: &Value, id: &str, n: u32) -> Vec<Draft> {
    let ts = ts_of(m, "timestamp");
    let item = format!("{id}#{n}");
    let mut out = Vec::new();
    let mut push = |role, text: String, loc| {
        let mut d = Draft::new(role, ts, text, loc);
        d.item_id = Some(item.clone());
        out.push(d);
    };
    match m.get("type").and_then(Value::as_str).unwrap_or("") {
        "user" => {
            if let Some(text) = user_text(m) {
                push(Role::User, text, Loc::MessageId(id.to_string()));
            }
        }
        "gemini" | "model" => {
            let text = parts_text(m.get("content"));
            if !blank(&text) {
                push(Role::Assistant, text, Loc::MessageId(id.to_string()));
            }
            let calls = m.get("toolCalls").and_then(Value::as_array);
            for (i, c) in calls.into_iter().flatten().enumerate() {
                let call_id =
                    str_of(c, "id").map_or_else(|| format!("{id}#tool{i}"), str::to_string);
                push(Role::Tool, tool_row(c), Loc::MessageId(call_id));
            }
        }
        // info / error / warning: CLI notices, never conversation.
        _ => {}
    }
    out
}

/// What the person typed: `displayContent` when present, else `content`
/// cut before the referenced-files expansion; `None` for the content
/// gemini-cli itself does not resume (`isIgnoredUserContent`: empty, `/`
/// and `?` commands, `<session_context>` / `<hook_context>` blocks, and
/// tool responses, whose parts carry no text).
pub fn user_text(m: &Value) -> Option<String> {
    let content = parts_text(m.get("content"));
    let t = content.trim();
    let ignored = t.is_empty()
        || t.starts_with('/')
        || t.starts_with('?')
        || t.starts_with("<session_context>")
        || t.starts_with("<hook_context>");
    if ignored {
        return None;
    }
    let text = match m.get("displayContent").filter(|d| !d.is_null()) {
        Some(d) => parts_text(Some(d)),
        None => match content.find(REFERENCED_FILES) {
            Some(i) => content[..i].trim_end().to_string(),
            None => content,
        },
    };
    (!blank(&text)).then_some(text)
}

/// A tool call row: name and arguments, then its output or error.
fn tool_row(c: &Value) -> String {
    let name = str_of(c, "name").unwrap_or("");
    let mut text = tool_call_text(name, c.get("args"));
    let results = c.get("result").and_then(Value::as_array);
    for r in results.into_iter().flatten() {
        let resp = r.get("functionResponse").and_then(|f| f.get("response"));
        let out = resp.and_then(|x| x.get("output").or_else(|| x.get("error")));
        let s = match out {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => continue,
        };
        text.push('\n');
        // No row shows more than the tool cap; do not copy more of it.
        text.extend(s.chars().take(TOOL_CAP_CHARS + 1));
    }
    text
}
