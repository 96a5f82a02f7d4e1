//! Streaming state of one Codex rollout: which lines become records, which
//! twin of a message is kept, and where rollbacks mark (DESIGN.md §5).
//!
//! User prose is `event_msg/user_message`; a file with none falls back to
//! `response_item` user messages. Assistant prose is `response_item`
//! assistant messages; a file with none falls back to `event_msg/
//! agent_message`. Both twins are collected while streaming and the choice
//! is made at the end, so a message is never indexed twice.

use super::line::{self, Outer, Payload};
use crate::extract::common::iso_ms;
use crate::extract::draft::{finish, Draft, Loc};
use crate::extract::{Diagnostics, Extracted};
use recall_core::model::{
    add_model, AnchorPosition, Mark, Parent, Relation, Role, SessionMeta, Source,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::Path;

/// Harness text injected as user messages (checked after leading whitespace).
const INJECTIONS: [&str; 9] = [
    "# AGENTS.md instructions for",
    "<INSTRUCTIONS>",
    "<user_instructions>",
    "<environment_context>",
    "<skill",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagents>",
    "<subagent_notification>",
];

/// Which lane a candidate record came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Lane {
    /// `event_msg/user_message`.
    UserEvent,
    /// `response_item` user message.
    UserItem,
    /// `response_item` assistant message.
    AssistantItem,
    /// `event_msg/agent_message`.
    AssistantEvent,
    /// Tool rows.
    Tool,
}

/// A mark whose `at` is still a position among the candidates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum PendingMark {
    Turns(u64),
    Anchor(String, AnchorPosition),
}

/// Streaming state (serialized in resume checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    candidates: Vec<(Lane, Draft)>,
    marks: Vec<(usize, PendingMark)>,
    id: Option<String>,
    meta_ts: Option<i64>,
    bare: bool,
    cwd: Option<String>,
    env_cwd: Option<String>,
    branch: Option<String>,
    parent: Option<Parent>,
    last_ts: Option<i64>,
    bad_lines: u64,
    /// `turn_context.model`s, first seen first.
    #[serde(default)]
    models: Vec<String>,
}

impl Session {
    /// Whether a deserialized state is consistent (marks point at
    /// candidates).
    pub fn check(&self) -> bool {
        self.marks
            .iter()
            .all(|(pos, _)| *pos <= self.candidates.len())
    }

    /// The bad lines counted since the last call.
    pub fn take_bad_lines(&mut self) -> u64 {
        std::mem::take(&mut self.bad_lines)
    }

    /// Cuts tool rows to the tool cap (they never change once pushed).
    pub fn seal(&mut self) {
        self.candidates.iter_mut().for_each(|(_, d)| d.seal());
    }

    /// Feeds one complete line (`no` = 1-based line number).
    pub fn line(&mut self, no: u64, bytes: &[u8]) {
        if (no == 1 || self.bare) && self.bare_line(no, bytes) {
            return;
        }
        let o: Outer<'_> = match line::parse_outer(bytes) {
            Ok(o) => o,
            Err(bad) => return self.bad(bad, bytes),
        };
        let ts = o.timestamp.get().and_then(iso_ms);
        if self.is_replay(ts) {
            return;
        }
        if ts.is_some() {
            self.last_ts = ts;
        }
        let Some(p) = o.payload.0 else { return };
        match o.ty.get() {
            Some("session_meta") => self.session_meta(&p, ts),
            Some("turn_context") => {
                if let Some(c) = p.cwd.non_empty() {
                    self.cwd = Some(c.to_string());
                }
                if let Some(m) = p.model.non_empty() {
                    add_model(&mut self.models, m);
                }
            }
            Some("response_item") => self.item(no, ts, p),
            Some("event_msg") => self.event(no, ts, &p),
            _ => {} // compacted (and its replacement_history), unknown kinds
        }
    }

    /// Line 1 of a bare-era file (`{id, timestamp, …}` without `type`) and
    /// the bare items after it. `false` = not bare: parse as wrapped.
    fn bare_line(&mut self, no: u64, bytes: &[u8]) -> bool {
        if no == 1 {
            let Ok(p) = line::parse_bare(bytes) else {
                return false;
            };
            // A bare-era line 1 is `{id, timestamp, instructions, git}`: a
            // line with an `id` but no `timestamp` (a `session_index.jsonl`
            // entry `{id, thread_name, updated_at}` copied or reached through
            // a link) is not a rollout and must not claim that id.
            if p.ty.get().is_some()
                || p.id.non_empty().is_none()
                || p.timestamp.get().and_then(iso_ms).is_none()
            {
                return false;
            }
            self.bare = true;
            self.id = p.id.non_empty().map(str::to_string);
            self.meta_ts = p.timestamp.get().and_then(iso_ms);
            self.last_ts = self.meta_ts;
            self.branch = p
                .git
                .0
                .and_then(|g| g.branch.non_empty().map(str::to_string));
            return true;
        }
        match line::parse_bare(bytes) {
            Ok(p) => self.item(no, None, p),
            Err(bad) => self.bad(bad, bytes),
        }
        true
    }

    fn bad(&mut self, bad: bool, bytes: &[u8]) {
        if bad && !bytes.iter().all(u8::is_ascii_whitespace) {
            self.bad_lines += 1;
        }
    }

    /// A line stamped before the first `session_meta` replays the parent.
    fn is_replay(&self, ts: Option<i64>) -> bool {
        matches!((self.meta_ts, ts), (Some(m), Some(t)) if t < m)
    }

    fn session_meta(&mut self, p: &Payload<'_>, ts: Option<i64>) {
        if self.id.is_some() {
            return; // only the first session_meta counts
        }
        let Some(id) = p.id.non_empty() else { return };
        self.id = Some(id.to_string());
        self.meta_ts = ts.or_else(|| p.timestamp.get().and_then(iso_ms));
        self.cwd = p.cwd.non_empty().map(str::to_string);
        self.branch = p
            .git
            .0
            .as_ref()
            .and_then(|g| g.branch.non_empty().map(str::to_string));
        let spawn = p
            .source
            .0
            .as_ref()
            .and_then(|s| s.subagent.0.as_ref())
            .and_then(|s| s.thread_spawn.0.as_ref());
        self.parent = match (
            spawn.and_then(|s| s.parent_thread_id.non_empty()),
            p.forked_from_id.non_empty(),
        ) {
            (Some(parent), _) => Some((parent, Relation::Subagent)),
            (None, Some(parent)) => Some((parent, Relation::Fork)),
            _ => None,
        }
        .map(|(parent, relation)| Parent {
            key: recall_core::model::session_key(Source::Codex, parent),
            relation,
        });
    }

    fn push(
        &mut self,
        lane: Lane,
        role: Role,
        no: u64,
        ts: Option<i64>,
        text: String,
        item: Option<&str>,
    ) {
        let mut d = Draft::new(role, ts, text, Loc::Event(no));
        d.item_id = item.filter(|i| !i.is_empty()).map(str::to_string);
        self.candidates.push((lane, d));
    }

    fn item(&mut self, no: u64, ts: Option<i64>, p: Payload<'_>) {
        let item = p.id.get();
        match p.ty.get() {
            Some("message") => {
                let (lane, role) = match p.role.get() {
                    Some("user") => (Lane::UserItem, Role::User),
                    Some("assistant") => (Lane::AssistantItem, Role::Assistant),
                    _ => return, // developer, system
                };
                let mut parts = Vec::new();
                for part in p.content.0.iter().filter_map(|o| o.0.as_ref()) {
                    let Some(t) = part.text.get() else { continue };
                    if role == Role::User && is_injection(t) {
                        self.note_env_cwd(t);
                        continue;
                    }
                    parts.push(t);
                }
                let text = parts.join("\n");
                if lane == Lane::AssistantItem || !text.trim().is_empty() {
                    self.push(lane, role, no, ts, text, item);
                }
            }
            Some("function_call") => {
                let text = call_text(p.name.get(), p.arguments.0.as_deref());
                self.push(Lane::Tool, Role::Tool, no, ts, text, item);
            }
            Some("custom_tool_call") => {
                let text = call_text(p.name.get(), p.input.0.as_deref());
                self.push(Lane::Tool, Role::Tool, no, ts, text, item);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let text = p.output.0.map(Cow::into_owned).unwrap_or_default();
                self.push(Lane::Tool, Role::Tool, no, ts, text, item);
            }
            Some("local_shell_call") => {
                let text = call_text(Some("local_shell"), p.action.0.as_deref());
                self.push(Lane::Tool, Role::Tool, no, ts, text, item);
            }
            _ => {}
        }
    }

    fn event(&mut self, no: u64, ts: Option<i64>, p: &Payload<'_>) {
        match p.ty.get() {
            Some("user_message") => {
                let text = p.message.get().unwrap_or_default();
                // An injected user_message still tells that the file has the lane.
                let text = if is_injection(text) {
                    String::new()
                } else {
                    text.to_string()
                };
                self.push(Lane::UserEvent, Role::User, no, ts, text, None);
            }
            Some("agent_message") => {
                let text = p.message.get().unwrap_or_default().to_string();
                self.push(Lane::AssistantEvent, Role::Assistant, no, ts, text, None);
            }
            Some("thread_rolled_back") => {
                let at = self.candidates.len();
                if let Some(n) = p.num_turns.0 {
                    self.marks.push((at, PendingMark::Turns(n)));
                }
                if let Some(a) = p.anchor.0.as_ref() {
                    if let Some(id) = a.item_id.non_empty() {
                        let pos = match a.position.get() {
                            Some("before") => AnchorPosition::Before,
                            _ => AnchorPosition::After,
                        };
                        self.marks
                            .push((at, PendingMark::Anchor(id.to_string(), pos)));
                    }
                }
            }
            _ => {}
        }
    }

    /// Bare-era files carry the cwd only in `<environment_context>`.
    fn note_env_cwd(&mut self, text: &str) {
        if self.env_cwd.is_none() {
            self.env_cwd = text
                .split_once("<cwd>")
                .and_then(|(_, r)| r.split_once("</cwd>"))
                .map(|(c, _)| c.trim().to_string())
                .filter(|c| !c.is_empty());
        }
    }

    /// Chooses the lanes, places the marks and builds the session.
    pub fn finish(
        self,
        path: &Path,
        index_title: impl Fn(&str) -> Option<String>,
    ) -> Option<Extracted> {
        let id = self.id?;
        let has = |lane| self.candidates.iter().any(|(l, _)| *l == lane);
        let user_lane = if has(Lane::UserEvent) {
            Lane::UserEvent
        } else {
            Lane::UserItem
        };
        let asst_lane = if has(Lane::AssistantItem) {
            Lane::AssistantItem
        } else {
            Lane::AssistantEvent
        };
        let mut kept_before = Vec::with_capacity(self.candidates.len() + 1);
        let mut drafts = Vec::new();
        for (lane, d) in self.candidates {
            kept_before.push(drafts.len());
            let keep = lane == Lane::Tool || lane == user_lane || lane == asst_lane;
            if keep && (lane == Lane::Tool || !d.text.trim().is_empty()) {
                drafts.push(d);
            }
        }
        kept_before.push(drafts.len());
        let (mut records, summary) = finish(drafts, self.last_ts.unwrap_or(1));
        let mut turn = 0;
        for r in records.iter_mut().filter(|r| r.role == Role::User) {
            turn += 1;
            r.turn = Some(turn);
        }
        let marks = self
            .marks
            .into_iter()
            .map(|(pos, m)| {
                let at = kept_before[pos] as u64;
                match m {
                    PendingMark::Turns(num_turns) => Mark::TurnCount { at, num_turns },
                    PendingMark::Anchor(item_id, position) => Mark::ItemAnchor {
                        at,
                        item_id,
                        position,
                    },
                }
            })
            .collect();
        let meta = SessionMeta {
            source: Source::Codex,
            title: index_title(&id).or(summary.first_prompt_title),
            resume: None, // the agent's (`Codex::resume_command`)
            session_id: id,
            cwd: self.cwd.or(self.env_cwd),
            branch: self.branch,
            created_ms: summary.created_ms,
            updated_ms: summary.updated_ms,
            messages: summary.messages,
            parent: self.parent,
            paths: vec![path.to_string_lossy().into_owned()],
            models: self.models,
        };
        Some(Extracted {
            meta,
            records,
            marks,
            diagnostics: Diagnostics::default(),
        })
    }
}

/// Whether a user text is harness-injected.
fn is_injection(text: &str) -> bool {
    let t = text.trim_start();
    INJECTIONS.iter().any(|p| t.starts_with(p))
}

/// A tool call row: the name, a space, then the arguments.
fn call_text(name: Option<&str>, args: Option<&str>) -> String {
    match (name.unwrap_or_default(), args.unwrap_or_default()) {
        (n, "") => n.to_string(),
        ("", a) => a.to_string(),
        (n, a) => format!("{n} {a}"),
    }
}
