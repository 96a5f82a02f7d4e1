//! The two Intendant record lanes: [`Legacy`] (task, delivered steers,
//! `Round N follow-up:` info lines, `model_response` sidecar text; dated
//! from `created_at` when rows lack `ts_ms`) and [`Messages`]
//! (`conversation_message` rows and `conversation_rewound` cuts).

use super::Row;
use crate::extract::draft::{Draft, Loc};
use crate::extract::json::blank;
use recall_core::model::{Mark, Role};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The legacy lane of one log, buffered until the log says whether it has
/// one (an epoch closes it; a `conversation_message` without an epoch
/// drops it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Legacy {
    /// Records in source order; `None` = a steer not (yet) delivered.
    slots: Vec<Option<Draft>>,
    /// Undelivered steers: id → slot.
    steers: HashMap<String, (usize, Draft)>,
    saw_task: bool,
}

impl Legacy {
    /// Whether a deserialized lane is consistent (steers point at slots).
    pub fn check(&self) -> bool {
        self.steers
            .values()
            .all(|(slot, _)| *slot < self.slots.len())
    }

    /// Reads one legacy-era row dated `ts`. `span` is the sidecar text of
    /// a `model_response` row (text, file, offset, len).
    pub fn row(
        &mut self,
        row: Row,
        ts: Option<i64>,
        no: u64,
        session_id: &str,
        span: Option<(String, String, u64, u64)>,
    ) {
        let data = row.data.0.unwrap_or_default();
        let event = row.event.get().unwrap_or("");
        // Rows that name another session are not this log's (info lines
        // carry no session id and are always read).
        if event != "info" && data.session_id.get().is_some_and(|s| s != session_id) {
            return;
        }
        match event {
            "session_started" => {
                if let Some(task) = data.task.get().filter(|t| !blank(t)) {
                    self.saw_task = true;
                    self.push(Role::User, ts, task.to_string(), Loc::Event(no));
                }
            }
            "steer_requested" => {
                let (Some(id), Some(text)) = (data.id.get(), data.text.get()) else {
                    return;
                };
                if blank(text) {
                    return;
                }
                self.slots.push(None);
                let d = Draft::new(Role::User, ts, text.to_string(), Loc::Event(no));
                self.steers
                    .insert(id.to_string(), (self.slots.len() - 1, d));
            }
            "steer_delivered" => {
                if let Some((slot, d)) = data.id.get().and_then(|id| self.steers.remove(id)) {
                    self.slots[slot] = Some(d);
                }
            }
            "info" => {
                if let Some(text) = row.message.get().and_then(follow_up) {
                    self.push(Role::User, ts, text.to_string(), Loc::Event(no));
                }
            }
            "model_response" => {
                if let Some((text, file, offset, len)) = span {
                    if !blank(&text) {
                        self.push(
                            Role::Assistant,
                            ts,
                            text,
                            Loc::Sidecar { file, offset, len },
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn push(&mut self, role: Role, ts: Option<i64>, text: String, loc: Loc) {
        self.slots.push(Some(Draft::new(role, ts, text, loc)));
    }

    /// Closes the lane at an epoch marker: its records, with seqs from the
    /// epoch's `mapping` (`[seq, role, hash16]`, each given to the first
    /// record without a seq that has that role and full-text hash).
    pub fn close(self, mapping: &[serde_json::Value]) -> Vec<Draft> {
        let mut drafts: Vec<Draft> = self.slots.into_iter().flatten().collect();
        let hashes: Vec<String> = drafts.iter().map(Draft::hash16).collect();
        for m in mapping {
            let Some([seq, role, hash]) = m
                .as_array()
                .and_then(|a| <&[_; 3]>::try_from(a.as_slice()).ok())
            else {
                continue;
            };
            let (Some(seq), Some(role), Some(hash)) = (seq.as_u64(), role.as_str(), hash.as_str())
            else {
                continue;
            };
            if let Some(i) = drafts
                .iter()
                .zip(&hashes)
                .position(|(d, h)| d.seq.is_none() && d.role.as_str() == role && h == hash)
            {
                drafts[i].seq = Some(seq);
            }
        }
        drafts
    }

    /// Closes a legacy-only log: when no `session_started` task was seen,
    /// `session_meta.json`'s `task` is the first user record (line 0),
    /// dated `created_ms`.
    pub fn finish(self, meta_task: Option<&str>, created_ms: Option<i64>) -> Vec<Draft> {
        let task = (!self.saw_task)
            .then_some(meta_task)
            .flatten()
            .filter(|t| !blank(t))
            .map(|t| Draft::new(Role::User, created_ms, t.to_string(), Loc::Event(0)));
        task.into_iter()
            .chain(self.slots.into_iter().flatten())
            .collect()
    }
}

/// The text of an `info` line `Round <digits> follow-up: <text>`, without
/// an ` (<n> attachment(s))` suffix.
fn follow_up(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("Round ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let text = rest[digits..].strip_prefix(" follow-up: ")?;
    let text = strip_attachments(text);
    (!blank(text)).then_some(text)
}

fn strip_attachments(text: &str) -> &str {
    let Some(open) = text.rfind(" (") else {
        return text;
    };
    let tail = &text[open + 2..];
    let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && matches!(
            &tail[digits..],
            " attachment)" | " attachments)" | " attachment(s))"
        )
    {
        &text[..open]
    } else {
        text
    }
}

/// The message lane: `conversation_message` drafts and rewind cuts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Messages {
    drafts: Vec<Draft>,
    marks: Vec<Mark>,
}

impl Messages {
    /// Adds a record.
    pub fn push(&mut self, d: Draft) {
        self.drafts.push(d);
    }

    /// `conversation_rewound{cut_after_seq}`: a `seq_cut` over the records
    /// so far (`at` relative to this lane; the caller shifts it).
    pub fn rewound(&mut self, cut_after_seq: u64) {
        self.marks.push(Mark::SeqCut {
            at: self.drafts.len() as u64,
            cut_after_seq,
        });
    }

    /// The lane's drafts and marks.
    pub fn finish(self) -> (Vec<Draft>, Vec<Mark>) {
        (self.drafts, self.marks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_up_lines() {
        assert_eq!(follow_up("Round 2 follow-up: fix it"), Some("fix it"));
        assert_eq!(
            follow_up("Round 12 follow-up: see (2 attachments)"),
            Some("see")
        );
        assert_eq!(follow_up("Round 3 follow-up: x (1 attachment)"), Some("x"));
        assert_eq!(
            follow_up("Round 3 follow-up: x (1 attachment(s))"),
            Some("x")
        );
        assert_eq!(
            follow_up("Round 3 follow-up: keep (this)"),
            Some("keep (this)")
        );
        assert_eq!(follow_up("Round x follow-up: no"), None);
        assert_eq!(follow_up("Context usage at 5%"), None);
    }
}
