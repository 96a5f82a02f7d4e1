//! Extractor for pi coding agent sessions (DESIGN.md §5 "pi", FORMATS.md §4):
//! `<sessions>/<encoded cwd>/<ts>_<uuid>.jsonl`, one file per session.
//!
//! Line 1 is the `session` header (`id`, `cwd`, `parentSession` ⇒ parent,
//! relation fork; v1's `branchedFrom` is read the same way). `message`
//! entries give user prose (string or text parts, minus a leading
//! `<skill …>…</skill>` / `<file name=…>…</file>` block), assistant prose
//! (`text` parts concatenated with no separator) and tool rows (assistant
//! `toolCall` parts, `toolResult` and `bashExecution` messages); thinking,
//! summaries and custom entries are not indexed. Entries form a tree by
//! `id`/`parentId`: the active branch is the `parentId` walk from the last
//! entry with an id, and records off it get one `record_ids` mark (reason
//! `branch`). Version 1 files have no ids: file order, all active.

use super::agent::Agent;
use super::common::{for_each_line, resume_command};
use super::draft::{assemble, mtime_ms, Draft, Header, Loc};
use super::feed::{Call, Fed, Outcome};
use super::json::{blank, parse_line, sniff_type, tool_call_text, TextOrParts, Ts};
use super::lenient::{Obj, Str};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::{add_model, session_key, Parent, Relation, Role, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Finds every `*/*.jsonl` under the pi `sessions/` directory.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let Ok(rd) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        let mut files: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
            .collect();
        files.sort();
        out.extend(files.into_iter().map(|f| SessionSource {
            source: Source::Pi,
            unit: f.to_string_lossy().into_owned(),
            files: vec![f],
            context: serde_json::Value::Null,
        }));
    }
    out
}

/// Extracts one pi session file.
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    super::resume::run(src, &[], None, false).map(|r| r.extracted)
}

/// A pi file's state for resuming ([`super::resume`]).
pub type Resume = State;

/// The pi coding agent in the registry.
pub struct Pi;

impl Agent for Pi {
    const ID: &'static str = "pi";
    const SOURCE: Source = Source::Pi;
    const ENV: &'static str = "PI_CODING_AGENT_DIR";
    type Resume = State;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".pi").join("agent"))
            .join("sessions")
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<State>, ExtractError> {
        scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &State,
    ) -> Result<Option<Outcome<State>>, ExtractError> {
        resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        meta.paths
            .first()
            .map(|p| resume_command("pi --session", p))
    }
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<State>, ExtractError> {
    let Some(path) = call.src.files.first() else {
        return Ok(Outcome::none());
    };
    let from = Fed::start(path);
    run(call, State::default(), &from)?.ok_or_else(|| io_error(path, "cannot read"))
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly.
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &State,
) -> Result<Option<Outcome<State>>, ExtractError> {
    match (files, call.src.files.first()) {
        ([fed], Some(path)) if fed.path == *path => run(call, state.clone(), fed),
        _ => Ok(None),
    }
}

fn io_error(path: &Path, what: &str) -> ExtractError {
    ExtractError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(what.to_string()),
    }
}

fn run(call: &mut Call, mut s: State, from: &Fed) -> Result<Option<Outcome<State>>, ExtractError> {
    let path = from.path.clone();
    let mut bad = 0u64;
    let fed = call
        .feed(
            from,
            &mut |line| {
                if !s.line(line.bytes, line.no) && !blank(&String::from_utf8_lossy(line.bytes)) {
                    bad += 1;
                }
            },
            &mut |_| {},
        )
        .map_err(|source| ExtractError::Io {
            path: path.clone(),
            source,
        })?;
    let Some(fed) = fed else { return Ok(None) };
    call.diag.bad_lines += bad;
    let state = call.want.then(|| {
        s.drafts.iter_mut().for_each(Draft::seal);
        s.clone()
    });
    Ok(Some(Outcome {
        extracted: s.finish(&path),
        files: vec![fed],
        state,
    }))
}

/// Streaming state of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    id: Option<String>,
    cwd: Option<String>,
    parent: Option<String>,
    title: Option<String>,
    drafts: Vec<Draft>,
    /// `id → parentId` of every entry that has an id.
    tree: HashMap<String, Option<String>>,
    /// The last entry that has an id: the active leaf.
    leaf: Option<String>,
    /// Assistant `message.model`s, first seen first.
    #[serde(default)]
    models: Vec<String>,
}

/// One entry (or the header). Fields with an unexpected shape read as
/// absent (lenient types), so a format change loses a field, not the line.
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Str<'a>,
    #[serde(default)]
    timestamp: Ts,
    #[serde(borrow, default)]
    message: Obj<Message<'a>>,
    // header
    #[serde(borrow, default)]
    cwd: Str<'a>,
    #[serde(rename = "parentSession", borrow, default)]
    parent_session: Str<'a>,
    #[serde(rename = "branchedFrom", borrow, default)]
    branched_from: Str<'a>,
    // session_info
    #[serde(borrow, default)]
    name: Str<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<TextOrParts<'a>>,
    #[serde(default)]
    timestamp: Ts,
    #[serde(borrow, default)]
    command: Str<'a>,
    #[serde(borrow, default)]
    output: Str<'a>,
    #[serde(borrow, default)]
    model: Str<'a>,
}

/// Just the tree links of an entry that is never indexed.
#[derive(Deserialize)]
struct Link<'a> {
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Str<'a>,
}

impl State {
    /// Handles one line; false when it was not valid JSON.
    fn line(&mut self, bytes: &[u8], no: u64) -> bool {
        let indexed = match sniff_type(bytes) {
            Some(t) => matches!(t, b"session" | b"message" | b"session_info"),
            None => true,
        };
        if !indexed {
            return match parse_line::<Link>(bytes) {
                Some(l) => {
                    self.link(l.id, l.parent_id);
                    true
                }
                None => false,
            };
        }
        let Some(e) = parse_line::<Entry>(bytes) else {
            return false;
        };
        match e.ty.get().unwrap_or("") {
            "session" => {
                if self.id.is_none() {
                    self.id = e.id.non_empty().map(str::to_string);
                    self.cwd = e.cwd.non_empty().map(str::to_string);
                    self.parent = e
                        .parent_session
                        .non_empty()
                        .or(e.branched_from.non_empty())
                        .map(str::to_string);
                }
                return true;
            }
            "session_info" => {
                if let Some(name) = e.name.get().filter(|n| !blank(n)) {
                    self.title = Some(name.to_string());
                }
            }
            "message" => {
                if let Some(m) = e.message.0 {
                    let ts = m.timestamp.0.or(e.timestamp.0);
                    self.message(m, ts, e.id.non_empty(), no);
                }
            }
            _ => {}
        }
        self.link(e.id, e.parent_id);
        true
    }

    fn link(&mut self, id: Str, parent: Str) {
        if let Some(id) = id.non_empty() {
            self.tree
                .insert(id.to_string(), parent.non_empty().map(str::to_string));
            self.leaf = Some(id.to_string());
        }
    }

    fn message(&mut self, m: Message, ts: Option<i64>, id: Option<&str>, no: u64) {
        let loc = |key: Option<&str>| match key {
            Some(k) if !k.is_empty() => Loc::MessageId(k.to_string()),
            _ => Loc::Event(no),
        };
        let item = id.filter(|i| !i.is_empty()).map(str::to_string);
        let push = |drafts: &mut Vec<Draft>, role, text: String, loc: Loc| {
            let mut d = Draft::new(role, ts, text, loc);
            d.item_id = item.clone();
            drafts.push(d);
        };
        match m.role.get().unwrap_or("") {
            "user" => {
                let raw = m.content.map(|c| c.text("")).unwrap_or_default();
                let text = match strip_leading_blocks(&raw) {
                    Some(rest) => rest.to_string(),
                    None => raw,
                };
                if !blank(&text) {
                    push(&mut self.drafts, Role::User, text, loc(id));
                }
            }
            "assistant" => {
                if let Some(model) = m.model.non_empty() {
                    add_model(&mut self.models, model);
                }
                let Some(c) = m.content else { return };
                let text = c.text("");
                if !blank(&text) {
                    push(&mut self.drafts, Role::Assistant, text, loc(id));
                }
                for p in c.parts.iter().filter(|p| p.is("toolCall")) {
                    let row = tool_call_text(p.name.get().unwrap_or(""), p.arguments.as_ref());
                    let l = match p.id.non_empty() {
                        Some(call) => Loc::MessageId(call.to_string()),
                        None => Loc::Event(no),
                    };
                    push(&mut self.drafts, Role::Tool, row, l);
                }
            }
            "toolResult" => {
                let text = m.content.map(|c| c.text("\n")).unwrap_or_default();
                if !text.is_empty() {
                    push(&mut self.drafts, Role::Tool, text, loc(id));
                }
            }
            "bashExecution" => {
                let mut text = m.command.get().unwrap_or("").to_string();
                if let Some(out) = m.output.non_empty() {
                    text.push('\n');
                    text.push_str(out);
                }
                if !text.is_empty() {
                    push(&mut self.drafts, Role::Tool, text, loc(id));
                }
            }
            _ => {}
        }
    }

    /// The session (`None` without a single record or an id).
    fn finish(mut self, path: &Path) -> Option<Extracted> {
        let marks = super::single::off_branch(self.leaf.as_deref(), &self.tree, &self.drafts);
        let session_id = self
            .id
            .clone()
            .filter(|id| !id.is_empty())
            .or_else(|| id_from_file_name(path))?;
        let path_str = path.to_string_lossy().into_owned();
        let header = Header {
            source: Source::Pi,
            session_id,
            title: self.title.take(),
            cwd: self.cwd.take(),
            branch: None,
            parent: self
                .parent
                .take()
                .and_then(|p| parent_id(&p))
                .map(|id| Parent {
                    key: session_key(Source::Pi, &id),
                    relation: Relation::Fork,
                }),
            resume: None, // the agent's (`Pi::resume_command`)
            paths: vec![path_str],
            models: std::mem::take(&mut self.models),
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

/// The user text after leading `<skill …>…</skill>` and `<file name=…>…</file>`
/// blocks, trimmed; `None` when the text does not start with such a block.
fn strip_leading_blocks(text: &str) -> Option<&str> {
    let mut rest = text;
    let mut stripped = false;
    loop {
        let t = rest.trim_start();
        let close = if t.starts_with("<skill ") || t.starts_with("<skill>") {
            "</skill>"
        } else if t.starts_with("<file name=") {
            "</file>"
        } else {
            break;
        };
        match t.find(close) {
            Some(i) => {
                rest = &t[i + close.len()..];
                stripped = true;
            }
            None => break,
        }
    }
    stripped.then(|| rest.trim())
}

/// A session id from `<ts>_<id>.jsonl` (the part after the last `_`).
fn id_from_file_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let id = stem.rsplit_once('_').map_or(stem, |(_, id)| id);
    (!id.is_empty()).then(|| id.to_string())
}

/// The parent's session id from `parentSession`/`branchedFrom`: the id in
/// the parent file's name, else the parent file's header `id` when the file
/// is readable, else the value itself when it is not a path.
fn parent_id(parent: &str) -> Option<String> {
    let p = Path::new(parent);
    let is_path = parent.ends_with(".jsonl") || parent.contains('/') || parent.contains('\\');
    if !is_path {
        return Some(parent.to_string());
    }
    if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
        if let Some((_, id)) = stem.rsplit_once('_') {
            if !id.is_empty() {
                return Some(id.to_string());
            }
        }
    }
    let mut diag = Diagnostics::default();
    let mut id = None;
    let _ = for_each_line(p, 0, 0, &mut diag, |line| {
        if id.is_none() && line.no == 1 {
            if let Ok(e) = serde_json::from_slice::<Link>(line.bytes) {
                id = e.id.non_empty().map(str::to_string);
            }
        }
    });
    id.or_else(|| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_one_or_more_leading_blocks() {
        assert_eq!(
            strip_leading_blocks("<skill name=\"x\" location=\"/s\">\n# x\n</skill>\n\nDo it"),
            Some("Do it")
        );
        assert_eq!(
            strip_leading_blocks(
                "<file name=\"a.rs\">\nfn a() {}\n</file>\n<file name=\"b\">b</file>\n ok "
            ),
            Some("ok")
        );
        assert_eq!(strip_leading_blocks("see <file name=\"a\">x</file>"), None);
        assert_eq!(
            strip_leading_blocks("<skill name=\"x\"> never closed"),
            None
        );
    }

    #[test]
    fn parent_ids_from_paths() {
        assert_eq!(
            parent_id(
                "/Users/x/.pi/agent/sessions/--a--/2025-12-09T00-52-54-397Z_d97339c6-6c10.jsonl"
            )
            .as_deref(),
            Some("d97339c6-6c10")
        );
        assert_eq!(parent_id("019e963d").as_deref(), Some("019e963d"));
    }
}
