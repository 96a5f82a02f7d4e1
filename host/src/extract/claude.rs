//! Claude Code extractor (DESIGN.md §5, FORMATS.md §1).
//!
//! Root = the `projects/` directory. A session is `<project>/<sid>.jsonl`
//! plus its subagent transcripts — `<project>/<sid>/subagents/**/agent-*.jsonl`
//! (never `agent-acompact-*`, the compaction summariser) and legacy
//! `<project>/agent-*.jsonl` whose lines carry the session's `sessionId` —
//! and its inline `isSidechain:true` lines. Records come in source order:
//! the main file's, then each subagent file's, files sorted by path.
//!
//! Identity comes from the lines' `sessionId`: the file stem when some line
//! carries it, else the first `sessionId` seen. Main-file lines that carry
//! another session's id are the replayed prefix of a resumed copy: they are
//! not records of this session, and that session becomes its parent
//! (relation `resume`).

mod line;
mod prose;
mod rewind;

use super::common::{for_each_line, iso_ms, walk_files};
use super::draft::{finish, mtime_ms, Draft, Loc};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use line::{Content, Line};
use recall_core::model::{Mark, Parent, Relation, Role, SessionMeta, Source};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// How deep `<sid>/subagents/` is searched (workflows nest two levels).
const SUBAGENT_DEPTH: usize = 6;
/// How much of a legacy agent file is read to find its `sessionId`.
const SNIFF_BYTES: u64 = 1 << 20;

/// Finds the sessions under the `projects/` directory `root`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let mut out = Vec::new();
    let Ok(projects) = std::fs::read_dir(root) else {
        return out;
    };
    let mut projects: Vec<PathBuf> = projects
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    for project in projects {
        let Ok(entries) = std::fs::read_dir(&project) else {
            continue;
        };
        let mut mains = Vec::new();
        let mut legacy: HashMap<String, Vec<PathBuf>> = HashMap::new();
        for e in entries.flatten() {
            let path = e.path();
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !name.ends_with(".jsonl") || path.is_dir() {
                continue;
            }
            if name.starts_with("agent-") {
                if is_subagent_name(&name) {
                    if let Some(sid) = sniff_session_id(&path) {
                        legacy.entry(sid).or_default().push(path);
                    }
                }
            } else {
                mains.push(path);
            }
        }
        mains.sort();
        for main in mains {
            let stem = file_stem(&main);
            let mut subs = walk_files(
                &project.join(&stem).join("subagents"),
                SUBAGENT_DEPTH,
                &|n| is_subagent_name(n) && n.ends_with(".jsonl"),
            );
            subs.extend(legacy.remove(&stem).unwrap_or_default());
            subs.sort();
            let mut files = vec![main.clone()];
            files.extend(subs);
            out.push(SessionSource {
                source: Source::ClaudeCode,
                unit: main.to_string_lossy().into_owned(),
                files,
                context: serde_json::Value::Null,
            });
        }
    }
    out
}

/// `agent-*.jsonl` but not a compaction run (`agent-acompact-*`).
fn is_subagent_name(name: &str) -> bool {
    name.starts_with("agent-") && !name.starts_with("agent-acompact-")
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first `sessionId` in the first MiB of a file.
fn sniff_session_id(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path).ok()?;
    let reader = std::io::BufReader::new(f.take(SNIFF_BYTES));
    for l in reader.split(b'\n') {
        let l = l.ok()?;
        if let Ok(line) = line::parse(&l) {
            if let Some(sid) = line.session_id.non_empty() {
                return Some(sid.to_string());
            }
        }
    }
    None
}

/// Extracts one session (its main file first, then its subagent files).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    let Some(main) = src.files.first() else {
        return Ok(None);
    };
    let mut s = Session::default();
    let mut diag = Diagnostics::default();
    for_each_line(main, 0, 0, &mut diag, |l| s.line(l.bytes, true)).map_err(|e| {
        ExtractError::Io {
            path: main.clone(),
            source: e,
        }
    })?;
    s.main_drafts = s.drafts.len();
    for f in &src.files[1..] {
        s.groups.clear();
        if let Err(e) = for_each_line(f, 0, 0, &mut diag, |l| s.line(l.bytes, false)) {
            diag.unreadable.push(format!("{}: {e}", f.display()));
        }
    }
    Ok(s.finish(main, src, diag))
}

/// A draft plus what the end of extraction needs to know about it.
struct Pending {
    draft: Draft,
    /// Index into `Session::sids` of the main-file line it came from.
    sid: Option<usize>,
    /// Its line's node in the rewind tree (main file, non-sidechain).
    node: Option<usize>,
}

/// The first line of an assistant message (`message.id` group).
struct Group {
    ts: Option<i64>,
    uuid: String,
    node: Option<usize>,
    draft: Option<usize>,
}

/// Streaming state of one session.
#[derive(Default)]
struct Session {
    drafts: Vec<Pending>,
    main_drafts: usize,
    groups: HashMap<String, Group>,
    seen: HashSet<String>,
    tree: rewind::Tree,
    sids: Vec<String>,
    cwd: Option<String>,
    branch: Option<String>,
    titles: Vec<TitleLine>,
    last_ts: Option<i64>,
    bad_lines: u64,
}

impl Session {
    fn line(&mut self, bytes: &[u8], main: bool) {
        let l = match line::parse(bytes) {
            Ok(l) => l,
            Err(bad) => {
                if bad && !bytes.iter().all(u8::is_ascii_whitespace) {
                    self.bad_lines += 1;
                }
                return;
            }
        };
        if let Some(u) = l.uuid.non_empty() {
            if !self.seen.insert(u.to_string()) {
                return; // replayed within the session
            }
        }
        let ts = l.timestamp.get().and_then(iso_ms);
        if ts.is_some() {
            self.last_ts = ts;
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
        self.drafts.push(Pending {
            draft,
            sid: at.sid,
            node: at.node,
        });
        self.drafts.len() - 1
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
        let g = self.groups.entry(mid.clone()).or_insert_with(|| Group {
            ts: at.ts,
            uuid: at.uuid.to_string(),
            node: at.node,
            draft: None,
        });
        for t in texts.into_iter().filter(|t| !t.trim().is_empty()) {
            match g.draft {
                Some(i) => {
                    let text = &mut self.drafts[i].draft.text;
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
                    self.drafts.push(Pending {
                        draft,
                        sid: at.sid,
                        node: g.node,
                    });
                    g.draft = Some(self.drafts.len() - 1);
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

    fn finish(self, main: &Path, src: &SessionSource, mut diag: Diagnostics) -> Option<Extracted> {
        diag.bad_lines += self.bad_lines;
        let stem = file_stem(main);
        let own = self
            .sids
            .iter()
            .position(|s| *s == stem)
            .or((!self.sids.is_empty()).then_some(0))?;
        let abandoned = self.tree.abandoned();
        let mut drafts = Vec::with_capacity(self.drafts.len());
        let mut rewound = Vec::new();
        let mut main_records = 0;
        for (i, p) in self.drafts.into_iter().enumerate() {
            if p.sid.is_some_and(|s| s != own) {
                continue; // a resumed copy's replay of its parent's lines
            }
            if i < self.main_drafts {
                main_records += 1;
            }
            if p.node.is_some_and(|n| abandoned.contains(&n)) {
                rewound.extend(p.draft.item_id.clone());
            }
            drafts.push(p.draft);
        }
        let fallback = self.last_ts.unwrap_or_else(|| mtime_ms(main));
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
            Some(leaf) if t.rank == 2 && !seen.contains(leaf) => 3,
            _ => t.rank,
        };
        let title = (0..4u8)
            .find_map(|r| {
                self.titles
                    .iter()
                    .rev()
                    .find(|t| rank(t) == r && t.sid.is_none_or(|s| s == own))
                    .map(|t| t.text.clone())
            })
            .or(summary.first_prompt_title);
        let parent = self
            .sids
            .iter()
            .enumerate()
            .find(|(i, _)| *i != own)
            .map(|(_, p)| Parent {
                key: recall_core::model::session_key(Source::ClaudeCode, p),
                relation: Relation::Resume,
            });
        let session_id = self.sids[own].clone();
        let meta = SessionMeta {
            source: Source::ClaudeCode,
            resume: Some(format!("claude --resume {session_id}")),
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
        };
        Some(Extracted {
            meta,
            records,
            marks,
            diagnostics: diag,
        })
    }
}

/// A title candidate: `custom-title` (rank 0), `ai-title` (1), `summary` (2;
/// 3 when its `leafUuid` is not a line of this session).
struct TitleLine {
    rank: u8,
    sid: Option<usize>,
    leaf: Option<String>,
    text: String,
}

/// Where the current line sits, for the drafts it yields.
#[derive(Clone, Copy)]
struct Ctx<'a> {
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
