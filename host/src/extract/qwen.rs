//! Extractor for Qwen Code sessions (docs/notes-agents.md "Qwen Code"):
//! `${QWEN_HOME:-~/.qwen}/projects/<sanitized cwd>/chats/<sessionId>.jsonl`,
//! one Claude-shaped record per line (`uuid`, `parentUuid`, `sessionId`,
//! `timestamp`, `type`, `cwd`, `message: {role, parts}`).
//!
//! User prose is the text parts of `type: user` records whose
//! `provenance` is `real_user` (or absent, in older files); assistant prose
//! is the non-`thought` text parts of `assistant` records (`thought: true`
//! parts are reasoning, never indexed), their `functionCall` parts are tool
//! rows, and `tool_result` records (role `user`, `functionResponse` parts)
//! are tool rows, never user words. `system` records are never
//! conversation; `custom_title`'s `systemPayload.customTitle` is the title.
//! Records form a tree by `uuid`/`parentUuid`: the visible conversation is
//! the walk back from the last conversation record (user, assistant or
//! tool result: title anchors are appended off the tail), and records off
//! it get one `record_ids` mark (reason `branch`).

use super::agent::Agent;
use super::draft::{assemble, mtime_ms, Draft, Header, Loc};
use super::feed::{Call, Fed, Outcome};
use super::json::{blank, tool_call_text, value_text};
use super::single::{self, parts_text, str_of, ts_of, LineState};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::{add_model, Role, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Qwen Code in the registry.
pub struct Qwen;

impl Agent for Qwen {
    const ID: &'static str = "qwen";
    const SOURCE: Source = Source::Qwen;
    const ENV: &'static str = "QWEN_HOME";
    type Resume = State;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".qwen")).join("projects")
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
        // `qwen --resume [id]` (QwenLM #1100, docs cli/options/resume).
        single::uuid_resume("qwen --resume", &meta.session_id)
    }
}

/// Every `<project>/chats/*.jsonl` under the Qwen `projects/` root.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let mut out = Vec::new();
    for project in sorted(root) {
        for f in sorted(&project.join("chats")) {
            if f.extension().is_some_and(|x| x == "jsonl") && super::common::secondary_file(&f) {
                out.push(SessionSource {
                    source: Source::Qwen,
                    unit: f.to_string_lossy().into_owned(),
                    files: vec![f],
                    context: Value::Null,
                });
            }
        }
    }
    out
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    v.sort();
    v
}

/// The streaming state of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    id: Option<String>,
    cwd: Option<String>,
    branch: Option<String>,
    title: Option<String>,
    models: Vec<String>,
    drafts: Vec<Draft>,
    /// `uuid → parentUuid` of every record.
    tree: HashMap<String, Option<String>>,
    /// The last user / assistant / tool-result record: the active leaf.
    leaf: Option<String>,
}

impl LineState for State {
    fn line(&mut self, bytes: &[u8], no: u64) -> bool {
        let Ok(r) = serde_json::from_slice::<Value>(bytes) else {
            return false;
        };
        let uuid = str_of(&r, "uuid");
        if let Some(u) = uuid {
            let parent = str_of(&r, "parentUuid").map(str::to_string);
            self.tree.insert(u.to_string(), parent);
        }
        if self.id.is_none() {
            self.id = str_of(&r, "sessionId").map(str::to_string);
        }
        if self.cwd.is_none() {
            self.cwd = str_of(&r, "cwd").map(str::to_string);
        }
        if let Some(b) = str_of(&r, "gitBranch") {
            self.branch = Some(b.to_string());
        }
        let ty = r.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(ty, "user" | "assistant" | "tool_result") {
            if let Some(u) = uuid {
                self.leaf = Some(u.to_string());
            }
        }
        let ts = ts_of(&r, "timestamp");
        let parts = r.get("message").and_then(|m| m.get("parts"));
        let item = uuid.map(str::to_string);
        let loc = |k: Option<&str>| k.map_or(Loc::Event(no), |k| Loc::MessageId(k.to_string()));
        let mut push = |role, text: String, l: Loc| {
            let mut d = Draft::new(role, ts, text, l);
            d.item_id = item.clone();
            self.drafts.push(d);
        };
        match ty {
            "user" => {
                let prov = str_of(&r, "provenance");
                let text = parts_text(parts);
                if matches!(prov, None | Some("real_user")) && !blank(&text) {
                    push(Role::User, text, loc(uuid));
                }
            }
            "assistant" => {
                let text = parts_text(parts);
                if !blank(&text) {
                    push(Role::Assistant, text, loc(uuid));
                }
                for p in each(parts) {
                    if let Some(fc) = p.get("functionCall") {
                        let name = str_of(fc, "name").unwrap_or("");
                        let key = str_of(fc, "id").map(str::to_string);
                        let l = key.map_or(Loc::Event(no), Loc::MessageId);
                        push(Role::Tool, tool_call_text(name, fc.get("args")), l);
                    }
                }
                if let Some(m) = str_of(&r, "model") {
                    add_model(&mut self.models, m);
                }
            }
            "tool_result" => {
                for p in each(parts) {
                    if let Some(fr) = p.get("functionResponse") {
                        let resp = fr.get("response").cloned().unwrap_or(Value::Null);
                        let out = match resp.get("output").or_else(|| resp.get("error")) {
                            Some(v) => value_text(v.clone()),
                            None => value_text(resp),
                        };
                        if !out.is_empty() {
                            push(Role::Tool, out, Loc::Event(no));
                        }
                    }
                }
            }
            "system" if str_of(&r, "subtype") == Some("custom_title") => {
                let payload = r.get("systemPayload");
                if let Some(t) = payload.and_then(|p| str_of(p, "customTitle")) {
                    self.title = Some(t.to_string());
                }
            }
            _ => {}
        }
        true
    }

    fn seal(&mut self) {
        self.drafts.iter_mut().for_each(Draft::seal);
    }

    fn finish(self, _call: &Call, path: &Path) -> Option<Extracted> {
        let marks = single::off_branch(self.leaf.as_deref(), &self.tree, &self.drafts);
        let session_id = self
            .id
            .or_else(|| path.file_stem()?.to_str().map(str::to_string))?;
        let header = Header {
            source: Source::Qwen,
            session_id,
            title: self.title,
            cwd: self.cwd,
            branch: self.branch,
            parent: None,
            resume: None, // Qwen::resume_command
            paths: vec![path.to_string_lossy().into_owned()],
            models: self.models,
        };
        assemble(
            header,
            self.drafts,
            marks,
            Diagnostics::default(),
            mtime_ms(path),
        )
    }
}

fn each(parts: Option<&Value>) -> impl Iterator<Item = &Value> {
    parts.and_then(Value::as_array).into_iter().flatten()
}
