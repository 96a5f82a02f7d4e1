//! The streaming state of one Intendant log ([`Stream`], kept in resume
//! checkpoints) and the row handling that fills it ([`Run`]): the era
//! decision, the legacy and message lanes, sidecar spans, relationships.

use super::dating::Dating;
use super::lanes::{Legacy, Messages};
use super::prints::Prints;
use super::sidecar::Sidecars;
use super::{Data, Meta, Row};
use crate::extract::draft::{assemble, mtime_ms, Draft, Header, Loc};
use crate::extract::json::{blank, sniff_key};
use crate::extract::{Diagnostics, Extracted, SessionSource};
use recall_core::model::{session_key, Parent, Relation, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

impl Stream {
    /// A log not read yet, dated from meta `created_at`.
    pub fn new(created_at: Option<&str>) -> Stream {
        Stream {
            dating: Dating::new(created_at),
            legacy: Legacy::default(),
            messages: Messages::default(),
            era: Era::Undecided,
            wrapper: false,
            parent: None,
            used_sidecars: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    /// Whether a deserialized state is consistent.
    pub fn check(&self) -> bool {
        self.legacy.check()
    }

    /// The session (`None` for a wrapper log or a log without records).
    pub fn finish(
        self,
        src: &SessionSource,
        meta: &Meta,
        session_id: &str,
        dir: &Path,
        log: &Path,
    ) -> Option<Extracted> {
        if self.wrapper {
            return None;
        }
        let mut drafts = match self.era {
            Era::Undecided => self.legacy.finish(
                meta.task.as_deref(),
                meta.created_at
                    .as_deref()
                    .and_then(crate::extract::common::iso_ms),
            ),
            Era::Mixed(legacy) => legacy,
            Era::New => Vec::new(),
        };
        let offset = drafts.len() as u64;
        let (new_drafts, mut marks) = self.messages.finish();
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
        let diag = Diagnostics {
            unreadable: self.problems,
            ..Diagnostics::default()
        };
        let parent = self
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
            self.used_sidecars
                .iter()
                .map(|rel| dir.join(rel).to_string_lossy().into_owned()),
        );
        let header = Header {
            source: Source::Intendant,
            session_id: session_id.to_string(),
            title: meta
                .name
                .clone()
                .filter(|n| !blank(n))
                .or(meta.task.clone().filter(|t| !blank(t))),
            cwd: meta
                .project_root
                .clone()
                .filter(|c| !c.is_empty())
                .or_else(|| meta.cwd.clone().filter(|c| !c.is_empty())),
            branch: None,
            parent,
            resume: None, // the agent's (`Intendant::resume_command`)
            paths,
            // `session_meta.json` names the model the session ran with.
            models: meta
                .model
                .as_ref()
                .and_then(|m| m.as_str())
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(|m| vec![m.to_string()])
                .unwrap_or_default(),
        };
        assemble(header, drafts, marks, diag, mtime_ms(log))
    }
}

/// `session_relationship` relation names, kept as written; anything else
/// is a subagent.
fn relation(r: Option<&str>) -> Relation {
    match r {
        Some("fork") => Relation::Fork,
        Some("resume") => Relation::Resume,
        Some("branch") => Relation::Branch,
        Some("side") => Relation::Side,
        Some("anchor-fork" | "anchor_fork") => Relation::AnchorFork,
        Some("rewind") => Relation::Rewind,
        Some("fission") => Relation::Fission,
        _ => Relation::Subagent,
    }
}

/// Which lane the log is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Era {
    /// No epoch and no `conversation_message` yet: legacy rows are buffered.
    Undecided,
    /// The first epoch closed the legacy lane with these records.
    Mixed(Vec<Draft>),
    /// A `conversation_message` came without an epoch: no legacy lane.
    New,
}

/// What streaming a log has gathered (serialized in resume checkpoints).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream {
    dating: Dating,
    legacy: Legacy,
    messages: Messages,
    era: Era,
    wrapper: bool,
    parent: Option<(String, Option<String>)>,
    used_sidecars: BTreeSet<String>,
    problems: Vec<String>,
}

/// State of one extraction run.
pub struct Run<'s> {
    pub session_id: &'s str,
    pub sidecars: Sidecars,
    pub st: Stream,
    pub prints: Prints,
    /// Record span outcomes (a checkpoint is wanted).
    pub want: bool,
    pub span_bytes: u64,
}

impl Run<'_> {
    /// Advances the legacy day counter past a row that is not parsed (its
    /// `"ts"` is sniffed).
    pub fn note_time(&mut self, line: &[u8]) {
        if let Some(ts) = sniff_key(line, b"\"ts\"").and_then(|t| std::str::from_utf8(t).ok()) {
            let _ = self.st.dating.row(Some(ts));
        }
    }

    pub fn row(&mut self, row: Row, no: u64) {
        // Every row's time of day feeds the day counter, in file order.
        let dated = self.st.dating.row(row.ts.get());
        let ts = row.ts_ms.0.or(dated);
        let event = row.event.get().unwrap_or("");
        match event {
            "session_identity" => self.st.wrapper = true,
            "session_relationship" => {
                let Some(d) = &row.data.0 else { return };
                let me = d.child_session_id.non_empty().or(d.session_id.non_empty());
                if me.is_none_or(|m| m == self.session_id) {
                    if let Some(p) = d.parent_session_id.non_empty() {
                        let rel = d.relation.non_empty().map(str::to_string);
                        self.st.parent = Some((p.to_string(), rel));
                    }
                }
            }
            "conversation_message_epoch" => {
                if matches!(self.st.era, Era::Undecided) {
                    let mapping = match row.data.0.and_then(|d| d.mapping) {
                        Some(serde_json::Value::Array(m)) => m,
                        _ => Vec::new(),
                    };
                    let legacy = std::mem::take(&mut self.st.legacy).close(&mapping);
                    self.st.era = Era::Mixed(legacy);
                }
            }
            "conversation_message" | "conversation_rewound" => {
                if matches!(self.st.era, Era::Undecided) {
                    self.st.era = Era::New;
                }
                if event == "conversation_rewound" {
                    if let Some(cut) = row.data.0.and_then(|d| d.cut_after_seq.0) {
                        self.st.messages.rewound(cut);
                    }
                    return;
                }
                let Some(data) = row.data.0 else { return };
                if let Some(d) = self.message(data, row.file.non_empty(), ts, no) {
                    self.st.messages.push(d);
                }
            }
            _ => {
                if matches!(self.st.era, Era::Undecided) {
                    let span = self.span_text(&row);
                    self.st.legacy.row(row, ts, no, self.session_id, span);
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
        if self.want {
            self.prints.before_read(&self.sidecars, file);
        }
        let got = self.sidecars.read(file, off, len);
        if self.want {
            let outcome = got.as_deref().map_err(|e| e.to_string());
            self.prints.note(file, off, len, outcome);
        }
        match got {
            Ok(t) => {
                self.span_bytes += len;
                self.st.used_sidecars.insert(file.to_string());
                Some(t)
            }
            Err(e) => {
                self.st.problems.push(e.to_string());
                None
            }
        }
    }
}
