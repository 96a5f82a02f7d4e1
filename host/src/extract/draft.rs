//! Record drafts: what an extractor collects while it streams a session,
//! before caps, content hashes and timestamp filling turn it into final
//! [`MessageRecord`]s and a [`SessionMeta`] summary (DESIGN.md §2).
//!
//! Drafts keep the full, uncapped text so that `content_hash16` is always of
//! the whole text, and so that records assembled from several lines (Kimi
//! `content.part`s of one step) can grow before they are finished.

use super::common::{cap_prose, cap_tool, content_hash16, title_from};
use super::{Diagnostics, Extracted};
use recall_core::model::{Locator, Mark, MessageRecord, Parent, Role, SessionMeta, Source};
use serde::{Deserialize, Serialize};

/// How a draft will be located once its text is final.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Loc {
    /// `native_event{line_no, content_hash16}`.
    #[serde(rename = "e")]
    Event(u64),
    /// `native_message_id{message_id}`.
    #[serde(rename = "m")]
    MessageId(String),
    /// `native_sidecar_span{file, offset, len, content_hash16}`.
    #[serde(rename = "s")]
    Sidecar {
        /// Sidecar path relative to the session directory.
        file: String,
        /// Byte offset of the span.
        offset: u64,
        /// Byte length of the span.
        len: u64,
    },
}

/// One record in the making. Serialized (with short field names) inside
/// resume checkpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    /// Who said it.
    #[serde(rename = "r")]
    pub role: Role,
    /// Epoch ms, `None` when the source line had no usable timestamp.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// Full, uncapped text (already capped when `full_hash` is set).
    #[serde(rename = "x")]
    pub text: String,
    /// Where it lives.
    #[serde(rename = "l")]
    pub loc: Loc,
    /// Native message seq.
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Id used by `record_ids` marks.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Indexed under a parent session.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    pub subagent: bool,
    /// Set by [`Draft::seal`]: `text` is already cut to the tool cap.
    #[serde(rename = "c", default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// With `capped`, the `content_hash16` of the full text when the
    /// locator carries one.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub full_hash: Option<String>,
}

impl Draft {
    /// A draft with no seq, item id or subagent flag.
    pub fn new(role: Role, ts: Option<i64>, text: String, loc: Loc) -> Draft {
        Draft {
            role,
            ts,
            text,
            loc,
            seq: None,
            item_id: None,
            subagent: false,
            capped: false,
            full_hash: None,
        }
    }

    /// True for user and assistant drafts.
    pub fn is_prose(&self) -> bool {
        self.role != Role::Tool
    }

    /// `content_hash16` of the full text (prose is never sealed).
    pub fn hash16(&self) -> String {
        match &self.full_hash {
            Some(h) => h.clone(),
            None => content_hash16(&self.text),
        }
    }

    /// Cuts a tool row whose text can no longer change to the tool cap,
    /// keeping the full text's hash where the locator needs it, so a
    /// checkpoint does not carry text no record will show. Finishing a
    /// sealed draft gives the same record as finishing it unsealed. Prose is
    /// never sealed (titles, blank checks and joins read its whole text).
    pub fn seal(&mut self) {
        if self.role != Role::Tool || self.capped {
            return;
        }
        if let (capped, true) = cap_tool(&self.text) {
            if !matches!(self.loc, Loc::MessageId(_)) {
                self.full_hash = Some(content_hash16(&self.text));
            }
            self.text = capped;
            self.capped = true;
        }
    }
}

/// Timestamps, counts and title of a finished session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Oldest user/assistant ts (all records when there is no prose).
    pub created_ms: Option<i64>,
    /// Newest user/assistant ts (all records when there is no prose).
    pub updated_ms: Option<i64>,
    /// Number of user+assistant records.
    pub messages: u64,
    /// Title from the first non-subagent user prose (collapsed, ≤ 80 chars).
    pub first_prompt_title: Option<String>,
}

/// Finishes drafts: fills unknown timestamps, caps text, mints locators.
///
/// A draft without a timestamp takes the last known timestamp before it in
/// source order (the first known one after it when none precedes it, and
/// `fallback_ts` when the session has none at all); `ts_ms` is never 0.
pub fn finish(drafts: Vec<Draft>, fallback_ts: i64) -> (Vec<MessageRecord>, Summary) {
    let first_known = drafts.iter().find_map(|d| d.ts.filter(|&t| t != 0));
    let mut last = first_known.unwrap_or(if fallback_ts > 0 { fallback_ts } else { 1 });
    let mut summary = Summary::default();
    let (mut pmin, mut pmax, mut amin, mut amax) = (None, None, None, None);
    let mut records = Vec::with_capacity(drafts.len());
    let mut sub_title = None;
    for d in drafts {
        let ts = match d.ts {
            Some(t) if t != 0 => {
                last = t;
                t
            }
            _ => last,
        };
        amin = Some(amin.map_or(ts, |m: i64| m.min(ts)));
        amax = Some(amax.map_or(ts, |m: i64| m.max(ts)));
        if d.is_prose() {
            summary.messages += 1;
            pmin = Some(pmin.map_or(ts, |m: i64| m.min(ts)));
            pmax = Some(pmax.map_or(ts, |m: i64| m.max(ts)));
            if d.role == Role::User && !d.subagent && summary.first_prompt_title.is_none() {
                summary.first_prompt_title = title_from(&d.text);
            }
            if d.role == Role::User && sub_title.is_none() {
                sub_title = title_from(&d.text);
            }
        }
        let locator = match d.loc {
            Loc::Event(line_no) => Locator::NativeEvent {
                line_no,
                content_hash16: d
                    .full_hash
                    .clone()
                    .unwrap_or_else(|| content_hash16(&d.text)),
            },
            Loc::MessageId(message_id) => Locator::NativeMessageId { message_id },
            Loc::Sidecar { file, offset, len } => Locator::NativeSidecarSpan {
                file,
                offset,
                len,
                content_hash16: d
                    .full_hash
                    .clone()
                    .unwrap_or_else(|| content_hash16(&d.text)),
            },
        };
        let (text, truncated) = if d.capped {
            (d.text, true)
        } else if d.role != Role::Tool {
            cap_owned(d.text, cap_prose)
        } else {
            cap_owned(d.text, cap_tool)
        };
        records.push(MessageRecord {
            role: d.role,
            ts_ms: ts,
            text,
            truncated,
            locator,
            seq: d.seq,
            turn: None,
            item_id: d.item_id,
            subagent: d.subagent,
            generation: 0,
        });
    }
    summary.created_ms = pmin.or(amin);
    summary.updated_ms = pmax.or(amax);
    if summary.first_prompt_title.is_none() {
        summary.first_prompt_title = sub_title;
    }
    (records, summary)
}

/// Session fields an extractor knows besides its records.
#[derive(Clone, Debug)]
pub struct Header {
    /// The agent.
    pub source: Source,
    /// The source's session id.
    pub session_id: String,
    /// The source's own title (`None` ⇒ the first user prose).
    pub title: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Parent session.
    pub parent: Option<Parent>,
    /// Resume command.
    pub resume: Option<String>,
    /// Source files.
    pub paths: Vec<String>,
    /// Models the source records, first seen first (see `SessionMeta::models`).
    pub models: Vec<String>,
}

/// Finishes a session: records from drafts ([`finish`]) and the meta from
/// `header` plus the records' timestamps and counts. `None` when there is
/// not a single record.
pub fn assemble(
    header: Header,
    drafts: Vec<Draft>,
    marks: Vec<Mark>,
    diagnostics: Diagnostics,
    fallback_ts: i64,
) -> Option<Extracted> {
    if drafts.is_empty() {
        return None;
    }
    let (records, summary) = finish(drafts, fallback_ts);
    let title = header
        .title
        .as_deref()
        .and_then(title_from)
        .or(summary.first_prompt_title);
    Some(Extracted {
        meta: SessionMeta {
            source: header.source,
            session_id: header.session_id,
            title,
            cwd: header.cwd,
            branch: header.branch,
            created_ms: summary.created_ms,
            updated_ms: summary.updated_ms,
            messages: summary.messages,
            parent: header.parent,
            resume: header.resume,
            paths: header.paths,
            models: header.models,
        },
        records,
        marks,
        diagnostics,
    })
}

/// A file's modification time in epoch ms (0 when unknown): the timestamp
/// of last resort for a session whose lines carry none.
pub fn mtime_ms(path: &std::path::Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

/// Applies a cap without copying text that already fits.
fn cap_owned(text: String, cap: fn(&str) -> (String, bool)) -> (String, bool) {
    let (capped, cut) = cap(&text);
    if cut {
        (capped, true)
    } else {
        (text, false)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_ts_takes_last_known_and_is_never_zero() {
        let d = |ts| Draft::new(Role::User, ts, "x".into(), Loc::Event(1));
        let (r, s) = finish(
            vec![d(None), d(Some(5)), d(None), d(Some(0)), d(Some(9))],
            77,
        );
        let ts: Vec<i64> = r.iter().map(|r| r.ts_ms).collect();
        assert_eq!(ts, vec![5, 5, 5, 5, 9]);
        assert_eq!(
            (s.created_ms, s.updated_ms, s.messages),
            (Some(5), Some(9), 5)
        );
        let (r, _) = finish(vec![d(None)], 0);
        assert_eq!(r[0].ts_ms, 1);
    }
}
