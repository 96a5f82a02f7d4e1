//! Extractor for Intendant native session logs (DESIGN.md §5 "intendant",
//! FORMATS.md §7): `logs/<dir>/session.jsonl` with `session_meta.json` and
//! model-text sidecars under `turns/`.
//!
//! A log with any `session_identity` event wraps an external agent and
//! yields nothing. Two eras: the legacy lane ([`lanes::Legacy`]: events
//! before the first `conversation_message_epoch`, or the whole file when it
//! has no `conversation_message`) and the message lane
//! (`conversation_message` rows after it, with `conversation_rewound` cuts).

mod dating;
mod lanes;
pub mod sidecar;

use super::common::{for_each_line, read_small};
use super::draft::{assemble, blank, mtime_ms, parse_line, sniff_key, Draft, Header, Loc, Ts};
use super::lenient::{Obj, Str, Uint};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use dating::Dating;
use lanes::{Legacy, Messages};
use recall_core::model::{session_key, Parent, Relation, Source};
use serde::Deserialize;
use sidecar::Sidecars;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Finds every `logs/<dir>/session.jsonl` under `INTENDANT_HOME`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let Ok(rd) = fs::read_dir(root.join("logs")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let log = dir.join("session.jsonl");
            if !log.is_file() {
                return None;
            }
            let mut files = vec![log];
            let meta = dir.join("session_meta.json");
            if meta.is_file() {
                files.push(meta);
            }
            Some(SessionSource {
                source: Source::Intendant,
                unit: dir.to_string_lossy().into_owned(),
                files,
                context: serde_json::Value::Null,
            })
        })
        .collect()
}

/// What `session_meta.json` contributes.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Meta {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub task: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub role: Option<serde_json::Value>,
    #[serde(default)]
    pub parent_session_id: Option<String>,
}

/// One log row. Fields an event does not use, or with an unexpected shape,
/// read as absent (lenient types), so a format change loses a field, not
/// the line.
#[derive(Deserialize)]
pub(crate) struct Row<'a> {
    #[serde(borrow, default)]
    pub ts: Str<'a>,
    #[serde(default)]
    pub ts_ms: Ts,
    #[serde(borrow, default)]
    pub event: Str<'a>,
    #[serde(borrow, default)]
    pub message: Str<'a>,
    #[serde(borrow, default)]
    pub data: Obj<Data<'a>>,
    #[serde(borrow, default)]
    pub file: Str<'a>,
}

/// `data` fields of the indexed events.
#[derive(Default, Deserialize)]
pub(crate) struct Data<'a> {
    #[serde(borrow, default)]
    pub session_id: Str<'a>,
    #[serde(borrow, default)]
    pub task: Str<'a>,
    #[serde(borrow, default)]
    pub id: Str<'a>,
    #[serde(borrow, default)]
    pub text: Str<'a>,
    #[serde(borrow, default)]
    pub message_id: Str<'a>,
    #[serde(default)]
    pub message_seq: Uint,
    #[serde(borrow, default)]
    pub role: Str<'a>,
    #[serde(borrow, default)]
    pub provenance: Str<'a>,
    #[serde(default)]
    pub model_offset: Uint,
    #[serde(default)]
    pub model_bytes: Uint,
    #[serde(default)]
    pub cut_after_seq: Uint,
    #[serde(default)]
    pub mapping: Option<serde_json::Value>,
    // session_relationship
    #[serde(borrow, default)]
    pub parent_session_id: Str<'a>,
    #[serde(borrow, default)]
    pub child_session_id: Str<'a>,
    #[serde(borrow, default)]
    pub relation: Str<'a>,
}

/// Events the extractor reads; every other row is skipped unparsed.
fn indexed(event: &[u8]) -> bool {
    matches!(
        event,
        b"session_identity"
            | b"session_started"
            | b"steer_requested"
            | b"steer_delivered"
            | b"info"
            | b"model_response"
            | b"conversation_message"
            | b"conversation_message_epoch"
            | b"conversation_rewound"
            | b"session_relationship"
    )
}

/// Extracts one log directory (`files[0]` = `session.jsonl`).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    let Some(log) = src.files.first() else {
        return Ok(None);
    };
    let dir = log.parent().unwrap_or(Path::new("."));
    let meta: Meta = src
        .files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "session_meta.json"))
        .and_then(|p| read_small(p, 16 << 20).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let session_id = meta
        .session_id
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or(dir_name);

    let mut diag = Diagnostics::default();
    let mut run = Run {
        session_id: &session_id,
        sidecars: Sidecars::new(dir),
        dating: Dating::new(meta.created_at.as_deref()),
        legacy: Legacy::default(),
        messages: Messages::default(),
        era: Era::Undecided,
        wrapper: false,
        parent: None,
        used_sidecars: BTreeSet::new(),
        problems: Vec::new(),
    };
    let mut bad = 0u64;
    for_each_line(log, 0, 0, &mut diag, |line| {
        if let Some(ev) = sniff_key(line.bytes, b"\"event\"") {
            if !indexed(ev) {
                run.note_time(line.bytes);
                return;
            }
        }
        match parse_line::<Row>(line.bytes) {
            Some(row) => run.row(row, line.no),
            None => {
                if !blank(&String::from_utf8_lossy(line.bytes)) {
                    bad += 1;
                }
            }
        }
    })
    .map_err(|source| ExtractError::Io {
        path: log.clone(),
        source,
    })?;
    diag.bad_lines += bad;
    if run.wrapper {
        return Ok(None);
    }

    let mut drafts = match run.era {
        Era::Undecided => run.legacy.finish(
            meta.task.as_deref(),
            meta.created_at.as_deref().and_then(super::common::iso_ms),
        ),
        Era::Mixed(legacy) => legacy,
        Era::New => Vec::new(),
    };
    let offset = drafts.len() as u64;
    let (new_drafts, mut marks) = run.messages.finish();
    for m in &mut marks {
        if let recall_core::model::Mark::SeqCut { at, .. } = m {
            *at += offset;
        }
    }
    drafts.extend(new_drafts);
    let subagent = meta.role.as_ref().is_some_and(|r| match r {
        serde_json::Value::Null => false,
        serde_json::Value::String(s) => !s.is_empty(),
        _ => true,
    });
    for d in &mut drafts {
        d.subagent = subagent;
    }
    diag.unreadable.extend(run.problems);

    let parent = run
        .parent
        .or_else(|| meta.parent_session_id.clone().map(|p| (p, None)))
        .filter(|(p, _)| !p.is_empty() && *p != session_id)
        .map(|(p, rel)| Parent {
            key: session_key(Source::Intendant, &p),
            relation: relation(rel.as_deref()),
        });
    let mut paths: Vec<String> = src
        .files
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    paths.extend(
        run.used_sidecars
            .iter()
            .map(|rel| dir.join(rel).to_string_lossy().into_owned()),
    );
    let header = Header {
        source: Source::Intendant,
        session_id: session_id.clone(),
        title: meta
            .name
            .clone()
            .filter(|n| !blank(n))
            .or(meta.task.clone().filter(|t| !blank(t))),
        cwd: meta.cwd.clone().filter(|c| !c.is_empty()),
        branch: None,
        parent,
        resume: None,
        paths,
    };
    Ok(assemble(header, drafts, marks, diag, mtime_ms(log)))
}

/// `session_relationship` relation names; anything else is a subagent.
fn relation(r: Option<&str>) -> Relation {
    match r {
        Some("fork") => Relation::Fork,
        Some("resume") => Relation::Resume,
        Some("branch") => Relation::Branch,
        _ => Relation::Subagent,
    }
}

/// Which lane the log is in.
enum Era {
    /// No epoch and no `conversation_message` yet: legacy rows are buffered.
    Undecided,
    /// The first epoch closed the legacy lane with these records.
    Mixed(Vec<Draft>),
    /// A `conversation_message` came without an epoch: no legacy lane.
    New,
}

/// State of one extraction run.
struct Run<'s> {
    session_id: &'s str,
    sidecars: Sidecars,
    dating: Dating,
    legacy: Legacy,
    messages: Messages,
    era: Era,
    wrapper: bool,
    parent: Option<(String, Option<String>)>,
    used_sidecars: BTreeSet<String>,
    problems: Vec<String>,
}

impl Run<'_> {
    /// Advances the legacy day counter past a row that is not parsed (its
    /// `"ts"` is sniffed).
    fn note_time(&mut self, line: &[u8]) {
        if let Some(ts) = sniff_key(line, b"\"ts\"").and_then(|t| std::str::from_utf8(t).ok()) {
            let _ = self.dating.row(Some(ts));
        }
    }

    fn row(&mut self, row: Row, no: u64) {
        // Every row's time of day feeds the day counter, in file order.
        let dated = self.dating.row(row.ts.get());
        let ts = row.ts_ms.0.or(dated);
        let event = row.event.get().unwrap_or("");
        match event {
            "session_identity" => self.wrapper = true,
            "session_relationship" => {
                let Some(d) = &row.data.0 else { return };
                let me = d.child_session_id.non_empty().or(d.session_id.non_empty());
                if me.is_none_or(|m| m == self.session_id) {
                    if let Some(p) = d.parent_session_id.non_empty() {
                        let rel = d.relation.non_empty().map(str::to_string);
                        self.parent = Some((p.to_string(), rel));
                    }
                }
            }
            "conversation_message_epoch" => {
                if matches!(self.era, Era::Undecided) {
                    let mapping = match row.data.0.and_then(|d| d.mapping) {
                        Some(serde_json::Value::Array(m)) => m,
                        _ => Vec::new(),
                    };
                    let legacy = std::mem::take(&mut self.legacy).close(&mapping);
                    self.era = Era::Mixed(legacy);
                }
            }
            "conversation_message" | "conversation_rewound" => {
                if matches!(self.era, Era::Undecided) {
                    self.era = Era::New;
                }
                if event == "conversation_rewound" {
                    if let Some(cut) = row.data.0.and_then(|d| d.cut_after_seq.0) {
                        self.messages.rewound(cut);
                    }
                    return;
                }
                let Some(data) = row.data.0 else { return };
                if let Some(d) = self.message(data, row.file.non_empty(), ts, no) {
                    self.messages.push(d);
                }
            }
            _ => {
                if matches!(self.era, Era::Undecided) {
                    let span = self.span_text(&row);
                    self.legacy.row(row, ts, no, self.session_id, span);
                }
            }
        }
    }

    /// A `conversation_message` as a draft; `None` for harness provenance
    /// or a message without text.
    fn message(&mut self, d: Data, file: Option<&str>, ts: Option<i64>, no: u64) -> Option<Draft> {
        if matches!(
            d.provenance.get(),
            Some("system_injection" | "tool_output" | "context_summary")
        ) {
            return None;
        }
        let role = match d.role.get() {
            Some("user") => recall_core::model::Role::User,
            Some("assistant") => recall_core::model::Role::Assistant,
            _ => return None,
        };
        let (text, loc) = match (file, d.model_offset.0, d.model_bytes.0) {
            (Some(f), Some(off), Some(len)) => {
                let text = self.read_span(f, off, len)?;
                (
                    text,
                    Loc::Sidecar {
                        file: f.to_string(),
                        offset: off,
                        len,
                    },
                )
            }
            _ => {
                let text = d.text.get()?.to_string();
                let loc = match d.message_id.non_empty() {
                    Some(id) => Loc::MessageId(id.to_string()),
                    None => Loc::Event(no),
                };
                (text, loc)
            }
        };
        if blank(&text) {
            return None;
        }
        let mut draft = Draft::new(role, ts, text, loc);
        draft.seq = d.message_seq.0;
        draft.item_id = d.message_id.non_empty().map(str::to_string);
        Some(draft)
    }

    /// The sidecar text of a legacy `model_response` row.
    fn span_text(&mut self, row: &Row) -> Option<(String, String, u64, u64)> {
        if row.event.get() != Some("model_response") {
            return None;
        }
        let f = row.file.non_empty()?;
        let d = row.data.0.as_ref()?;
        let (off, len) = (d.model_offset.0?, d.model_bytes.0?);
        let text = self.read_span(f, off, len)?;
        Some((text, f.to_string(), off, len))
    }

    fn read_span(&mut self, file: &str, off: u64, len: u64) -> Option<String> {
        if len == 0 {
            return None;
        }
        match self.sidecars.read(file, off, len) {
            Ok(t) => {
                self.used_sidecars.insert(file.to_string());
                Some(t)
            }
            Err(e) => {
                self.problems.push(e.to_string());
                None
            }
        }
    }
}
