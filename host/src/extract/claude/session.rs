//! Streaming state of one Claude Code session, kept per file so that a
//! resumed extraction can continue any of its files (DESIGN.md §5, §6).
//!
//! What crosses files is only the uuid de-duplication (a uuid seen earlier
//! in feed order is skipped) and the fallback timestamp; both are exact per
//! file: `seen` remembers which file first had each uuid, and a line of an
//! earlier file that brings a uuid a later file already holds is a
//! [`Conflict`] (the later file's state would be wrong), answered by the
//! caller with a full extraction. Everything else that spans lines — the
//! rewind tree, session ids, titles, cwd and branch — comes from the main
//! file alone; assistant `message.id` groups are per file.

use super::line::{self, Content, Line};
use super::{prose, rewind};
use crate::extract::common::{for_each_line, iso_ms};
use crate::extract::draft::{finish, mtime_ms, Draft, Loc};
use crate::extract::{Diagnostics, Extracted, SessionSource};
use recall_core::model::{add_model, Mark, Parent, Relation, Role, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// A line of an earlier file carries a uuid a later file already holds.
#[derive(Debug)]
pub struct Conflict;

/// A draft plus what the end of extraction needs to know about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pending {
    #[serde(rename = "d")]
    draft: Draft,
    /// Index into `Session::sids` of the main-file line it came from.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    sid: Option<usize>,
    /// Its line's node in the rewind tree (main file, non-sidechain).
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    node: Option<usize>,
}

/// The first line of an assistant message (`message.id` group).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Group {
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    ts: Option<i64>,
    #[serde(rename = "u")]
    uuid: String,
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    node: Option<usize>,
    #[serde(rename = "d", default, skip_serializing_if = "Option::is_none")]
    draft: Option<usize>,
}

/// What one file contributes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct File {
    drafts: Vec<Pending>,
    /// Assistant `message.id` groups (per file).
    groups: HashMap<String, Group>,
    /// The last timestamp of its lines.
    last_ts: Option<i64>,
}

/// Streaming state of one session (serialized in resume checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Per file, in feed order (the main file first).
    files: Vec<File>,
    /// Every uuid fed, with the file (index into `files`) that had it first.
    seen: BTreeMap<String, u32>,
    tree: rewind::Tree,
    sids: Vec<String>,
    cwd: Option<String>,
    branch: Option<String>,
    titles: Vec<TitleLine>,
    /// Assistant `message.model`s, first seen first (not `<synthetic>`).
    #[serde(default)]
    models: Vec<String>,
}

impl Session {
    /// Whether a deserialized state is consistent: group and `seen`
    /// indexes point where they must.
    pub fn check(&self, files: usize) -> bool {
        self.files.len() == files
            && self.files.iter().all(|f| {
                f.groups
                    .values()
                    .all(|g| g.draft.is_none_or(|d| d < f.drafts.len()))
            })
            && self.seen.values().all(|&f| (f as usize) < files)
    }

    /// The state with its files placed at new positions: `to[i]` is where
    /// file `i` goes among `len` files (the others start empty). `to` must
    /// keep the files' order.
    pub fn reorder(mut self, to: &[usize], len: usize) -> Session {
        let mut files = vec![File::default(); len];
        for (f, &i) in std::mem::take(&mut self.files).into_iter().zip(to) {
            files[i] = f;
        }
        for v in self.seen.values_mut() {
            *v = to.get(*v as usize).map_or(u32::MAX, |&i| i as u32);
        }
        self.files = files;
        self
    }

    /// Makes room for file `k` (files are fed in order).
    pub fn open(&mut self, k: usize) {
        while self.files.len() <= k {
            self.files.push(File::default());
        }
    }

    /// Cuts tool rows to the tool cap (they never change once pushed).
    pub fn seal(&mut self) {
        for f in &mut self.files {
            f.drafts.iter_mut().for_each(|p| p.draft.seal());
        }
    }

    /// Feeds one line of file `k` (0 = the main file). `Ok(false)` = a bad
    /// line.
    pub fn line(&mut self, k: usize, bytes: &[u8]) -> Result<bool, Conflict> {
        let main = k == 0;
        let l = match line::parse(bytes) {
            Ok(l) => l,
            Err(bad) => return Ok(!bad || bytes.iter().all(u8::is_ascii_whitespace)),
        };
        if let Some(u) = l.uuid.non_empty() {
            match self.seen.get(u) {
                Some(&f) if f as usize <= k => return Ok(true), // replayed within the session
                Some(_) => return Err(Conflict),
                None => {
                    self.seen.insert(u.to_string(), k as u32);
                }
            }
        }
        let ts = l.timestamp.get().and_then(iso_ms);
        if ts.is_some() {
            self.files[k].last_ts = ts;
        }
        let sid = if main {
            l.session_id.non_empty().map(|s| self.intern(s))
        } else {
            None
        };
        if main {
            self.meta_fields(&l, sid);
        }
        let sub = !main || l.is_sidechain.0;
        let node = match (main && !l.is_sidechain.0, l.uuid.non_empty()) {
            (true, Some(u)) => {
                let parent = l
                    .parent_uuid
                    .non_empty()
                    .or(l.logical_parent_uuid.non_empty());
                self.tree.add(u, parent, ts, conversational(&l))
            }
            _ => None,
        };
        let at = Ctx {
            file: k,
            ts,
            sid,
            node,
            sub,
            uuid: l.uuid.get().unwrap_or_default(),
        };
        match l.ty.get() {
            Some("user") => self.user(&l, &at),
            Some("assistant") => self.assistant(&l, &at),
            _ => {}
        }
        Ok(true)
    }

    fn intern(&mut self, sid: &str) -> usize {
        match self.sids.iter().position(|s| s == sid) {
            Some(i) => i,
            None => {
                self.sids.push(sid.to_string());
                self.sids.len() - 1
            }
        }
    }

    fn meta_fields(&mut self, l: &Line<'_>, sid: Option<usize>) {
        if self.cwd.is_none() {
            self.cwd = l.cwd.non_empty().map(str::to_string);
        }
        if let Some(b) = l.git_branch.non_empty() {
            self.branch = Some(b.to_string());
        }
        let title = match l.ty.get() {
            Some("custom-title") => l.custom_title.non_empty().map(|t| (0, t)),
            Some("ai-title") => l.ai_title.non_empty().map(|t| (1, t)),
            Some("summary") => l.summary.non_empty().map(|t| (2, t)),
            _ => None,
        };
        if let Some((rank, t)) = title {
            self.titles.push(TitleLine {
                rank,
                sid,
                leaf: l.leaf_uuid.non_empty().map(str::to_string),
                text: t.to_string(),
            });
        }
    }

    fn push(&mut self, at: &Ctx<'_>, role: Role, text: String, id: String, item: &str) -> usize {
        let mut draft = Draft::new(role, at.ts, text, Loc::MessageId(id));
        draft.item_id = Some(item.to_string());
        draft.subagent = at.sub;
        let drafts = &mut self.files[at.file].drafts;
        drafts.push(Pending {
            draft,
            sid: at.sid,
            node: at.node,
        });
        drafts.len() - 1
    }

    fn user(&mut self, l: &Line<'_>, at: &Ctx<'_>) {
        if l.is_meta.0 || l.is_compact_summary.0 || l.visible_only.0 {
            return;
        }
        let Some(msg) = &l.message.0 else { return };
        match &msg.content {
            Content::Blocks(blocks) if blocks.iter().any(|b| b.is("tool_result")) => {
                for (k, b) in blocks.iter().filter(|b| b.is("tool_result")).enumerate() {
                    let id = if k == 0 {
                        at.uuid.to_string()
                    } else {
                        format!("{}#{k}", at.uuid)
                    };
                    self.push(at, Role::Tool, b.content.joined_text(), id, at.uuid);
                }
            }
            content => {
                if let Some(text) = prose::user_prose(&content.joined_text()) {
                    self.push(at, Role::User, text, at.uuid.to_string(), at.uuid);
                }
            }
        }
    }

    fn assistant(&mut self, l: &Line<'_>, at: &Ctx<'_>) {
        let Some(msg) = &l.message.0 else { return };
        if l.api_error.0 || msg.model.get() == Some("<synthetic>") {
            return;
        }
        if let Some(m) = msg.model.non_empty() {
            add_model(&mut self.models, m);
        }
        let mid = msg.id.non_empty().unwrap_or(at.uuid).to_string();
        let texts: Vec<&str> = match &msg.content {
            Content::Text(s) => vec![s.as_ref()],
            Content::Blocks(b) => b
                .iter()
                .filter(|b| b.is("text"))
                .filter_map(|b| b.text.get())
                .collect(),
            Content::None => Vec::new(),
        };
        let file = &mut self.files[at.file];
        let g = file.groups.entry(mid.clone()).or_insert_with(|| Group {
            ts: at.ts,
            uuid: at.uuid.to_string(),
            node: at.node,
            draft: None,
        });
        for t in texts.into_iter().filter(|t| !t.trim().is_empty()) {
            match g.draft {
                Some(i) => {
                    let text = &mut file.drafts[i].draft.text;
                    text.push('\n');
                    text.push_str(t);
                }
                None => {
                    // ts, item id and tree node of the message's first line.
                    let mut draft = Draft::new(
                        Role::Assistant,
                        g.ts,
                        t.to_string(),
                        Loc::MessageId(mid.clone()),
                    );
                    draft.item_id = Some(g.uuid.clone());
                    draft.subagent = at.sub;
                    file.drafts.push(Pending {
                        draft,
                        sid: at.sid,
                        node: g.node,
                    });
                    g.draft = Some(file.drafts.len() - 1);
                }
            }
        }
        if let Content::Blocks(blocks) = &msg.content {
            for b in blocks.iter().filter(|b| b.is("tool_use")) {
                let name = b.name.get().unwrap_or_default();
                let input = b.input.map(|r| r.get()).unwrap_or_default();
                let text = if input.is_empty() {
                    name.to_string()
                } else {
                    format!("{name} {input}")
                };
                let id = b.id.non_empty().unwrap_or(at.uuid).to_string();
                self.push(at, Role::Tool, text, id, at.uuid);
            }
        }
    }

    /// The session (`None` before any line with a session id).
    ///
    /// The session id is the file stem when it has the UUID shape (or when
    /// a line carries it), else the first `sessionId`. A main-file line
    /// carrying another session's id is a replay of that session only when
    /// its uuid is a line of that session's file beside this one (then that
    /// session is the parent, relation `resume`); otherwise it is this
    /// file's own (Claude Code's "clear context and implement the plan"
    /// hand-off writes the new session's first prompt with the planning
    /// session's id). A parent that is not indexed is never claimed.
    pub fn finish(self, main: &Path, src: &SessionSource) -> Option<Extracted> {
        let stem = super::file_stem(main);
        let own_sid = if is_uuid(&stem) || self.sids.contains(&stem) {
            stem
        } else {
            self.sids.first()?.clone()
        };
        if self.sids.is_empty() {
            return None;
        }
        let own = self.sids.iter().position(|s| *s == own_sid);
        let replayed = self.replayed(main, own);
        let is_replay = |p: &Pending| match (p.sid, &p.draft.item_id) {
            (Some(s), Some(u)) if Some(s) != own => replayed.get(&s).is_some_and(|r| r.contains(u)),
            _ => false,
        };
        let parent_sid =
            (0..self.sids.len()).find(|s| replayed.get(s).is_some_and(|r| !r.is_empty()));
        let abandoned = self.tree.abandoned();
        let mut drafts = Vec::new();
        let mut rewound = Vec::new();
        let mut main_records = 0;
        let last_ts = self.files.iter().rev().find_map(|f| f.last_ts);
        for (k, file) in self.files.into_iter().enumerate() {
            for p in file.drafts {
                if is_replay(&p) {
                    continue; // a resumed copy's replay of its parent's lines
                }
                if k == 0 {
                    main_records += 1;
                }
                if p.node.is_some_and(|n| abandoned.contains(&n)) {
                    rewound.extend(p.draft.item_id.clone());
                }
                drafts.push(p.draft);
            }
        }
        let fallback = last_ts.unwrap_or_else(|| mtime_ms(main));
        let (records, summary) = finish(drafts, fallback);
        let mut marks = Vec::new();
        if !rewound.is_empty() {
            marks.push(Mark::RecordIds {
                at: main_records,
                ids: rewound,
                reason: "rewind".into(),
            });
        }
        let seen = &self.seen;
        let rank = |t: &TitleLine| match &t.leaf {
            // A summary of a line that is not in this session describes another one.
            Some(leaf) if t.rank == 2 && !seen.contains_key(leaf) => 3,
            _ => t.rank,
        };
        let title = (0..4u8)
            .find_map(|r| {
                self.titles
                    .iter()
                    .rev()
                    .find(|t| rank(t) == r && t.sid.is_none_or(|s| Some(s) != parent_sid))
                    .map(|t| t.text.clone())
            })
            .or(summary.first_prompt_title);
        let parent = parent_sid.map(|p| Parent {
            key: recall_core::model::session_key(Source::ClaudeCode, &self.sids[p]),
            relation: Relation::Resume,
        });
        let session_id = own_sid;
        let meta = SessionMeta {
            source: Source::ClaudeCode,
            resume: None, // the agent's (`Claude::resume_command`)
            session_id,
            title,
            cwd: self.cwd,
            branch: self.branch,
            created_ms: summary.created_ms,
            updated_ms: summary.updated_ms,
            messages: summary.messages,
            parent,
            paths: src
                .files
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
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

impl Session {
    /// Per other session id of main-file drafts: the drafts' uuids that are
    /// lines of that session's file (`<sid>.jsonl` beside `main`).
    fn replayed(&self, main: &Path, own: Option<usize>) -> HashMap<usize, HashSet<String>> {
        let mut wanted: HashMap<usize, HashSet<&str>> = HashMap::new();
        for p in self
            .files
            .first()
            .map(|f| f.drafts.as_slice())
            .unwrap_or_default()
        {
            if let (Some(s), Some(u)) = (p.sid, &p.draft.item_id) {
                if Some(s) != own {
                    wanted.entry(s).or_default().insert(u);
                }
            }
        }
        let dir = main.parent().unwrap_or(Path::new(""));
        wanted
            .into_iter()
            .map(|(s, want)| {
                let other = dir.join(format!("{}.jsonl", self.sids[s]));
                let found = if other == main || self.sids[s].contains(['/', '\\']) {
                    HashSet::new()
                } else {
                    uuids_in(&other, &want)
                };
                (s, found)
            })
            .collect()
    }
}

/// Which of `want` are the uuids of lines of `path` (none when it cannot
/// be read).
fn uuids_in(path: &Path, want: &HashSet<&str>) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut diag = Diagnostics::default();
    let _ = for_each_line(path, 0, 0, &mut diag, |l| {
        if let Ok(line) = line::parse(l.bytes) {
            if let Some(u) = line.uuid.non_empty().filter(|u| want.contains(u)) {
                found.insert(u.to_string());
            }
        }
    });
    found
}

/// `8-4-4-4-12` hex digits: the shape of a Claude Code session id.
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A title candidate: `custom-title` (rank 0), `ai-title` (1), `summary` (2;
/// 3 when its `leafUuid` is not a line of this session).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct TitleLine {
    rank: u8,
    sid: Option<usize>,
    leaf: Option<String>,
    text: String,
}

/// Where the current line sits, for the drafts it yields.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    file: usize,
    ts: Option<i64>,
    sid: Option<usize>,
    node: Option<usize>,
    sub: bool,
    uuid: &'a str,
}

/// A user prompt or assistant line: what counts as a branch in a rewind.
fn conversational(l: &Line<'_>) -> bool {
    let Some(msg) = &l.message.0 else {
        return false;
    };
    match l.ty.get() {
        Some("assistant") => true,
        Some("user") => {
            !l.is_meta.0
                && !matches!(&msg.content, Content::Blocks(b) if b.iter().any(|b| b.is("tool_result")))
        }
        _ => false,
    }
}
