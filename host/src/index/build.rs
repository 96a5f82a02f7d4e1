//! From an extraction to a shard body and its manifest entry, carrying the
//! history of rewritten source files.
//!
//! Every record of a new extraction gets the session's current generation.
//! When a source file was rewritten in place the generation goes up by one,
//! and the previous generation's records that the new extraction no longer
//! contains (compared by role + text, as a multiset) are appended after the
//! new records, each with a unique `item_id`, and superseded by one
//! `record_ids` mark (reason `rewritten`): the old text stays findable,
//! flagged superseded. Records carried by an earlier rewrite (generation
//! below the current one) are carried again on every later extraction.

use crate::extract::Extracted;
use recall_core::model::{FileCursor, ManifestEntry, Mark, MessageRecord, Role, Shard};
use std::collections::{HashMap, HashSet};

/// The `record_ids` reason of carried-over records.
pub const REWRITTEN: &str = "rewritten";

/// The previous state of a session being re-extracted.
pub struct Previous<'a> {
    /// Its last shard.
    pub shard: &'a Shard,
    /// The generation that shard was built at.
    pub generation: u32,
    /// Whether the source was rewritten since (bump the generation).
    pub rewritten: bool,
}

/// Builds the shard of an extraction at `generation`.
pub fn shard(ex: Extracted, generation: u32, prev: Option<Previous<'_>>) -> Shard {
    let Extracted {
        mut meta,
        mut records,
        mut marks,
        ..
    } = ex;
    for r in &mut records {
        r.generation = generation;
    }
    let carried = prev.map(|p| carried_over(p, &records)).unwrap_or_default();
    if !carried.is_empty() {
        let mut used: HashSet<String> = records.iter().filter_map(|r| r.item_id.clone()).collect();
        let mut ids = Vec::with_capacity(carried.len());
        for (n, mut r) in carried.into_iter().enumerate() {
            let id = match r.item_id.take() {
                Some(id) if !used.contains(&id) => id,
                _ => {
                    let mut id = format!("rewritten:g{}:{n}", r.generation);
                    while used.contains(&id) {
                        id.push('\'');
                    }
                    id
                }
            };
            used.insert(id.clone());
            ids.push(id.clone());
            r.item_id = Some(id);
            if r.role != Role::Tool {
                meta.messages += 1;
                meta.created_ms = Some(meta.created_ms.map_or(r.ts_ms, |c| c.min(r.ts_ms)));
                meta.updated_ms = Some(meta.updated_ms.map_or(r.ts_ms, |u| u.max(r.ts_ms)));
            }
            records.push(r);
        }
        marks.push(Mark::RecordIds {
            at: records.len() as u64,
            ids,
            reason: REWRITTEN.to_string(),
        });
    }
    Shard {
        session: meta,
        records,
        marks,
    }
}

/// The previous shard's records that the new extraction does not hold.
fn carried_over(p: Previous<'_>, new: &[MessageRecord]) -> Vec<MessageRecord> {
    let mut present: HashMap<(Role, &str), usize> = HashMap::new();
    if p.rewritten {
        for r in new {
            *present.entry((r.role, r.text.as_str())).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for r in &p.shard.records {
        if r.generation < p.generation {
            out.push(r.clone());
        } else if p.rewritten {
            match present.get_mut(&(r.role, r.text.as_str())) {
                Some(n) if *n > 0 => *n -= 1,
                _ => out.push(r.clone()),
            }
        }
    }
    out
}

/// The manifest entry of a written shard.
pub fn entry(
    shard: &Shard,
    generation_file: String,
    bytes: u64,
    files: Vec<FileCursor>,
    watermark: i64,
    context: Option<String>,
) -> ManifestEntry {
    ManifestEntry {
        meta: shard.session.clone(),
        generation_file,
        records: shard.records.len() as u64,
        max_ts_ms: shard.records.iter().map(|r| r.ts_ms).max(),
        bytes,
        source_gone: false,
        files,
        watermark,
        state: context.map_or(
            serde_json::Value::Null,
            |c| serde_json::json!({ "context": c }),
        ),
    }
}

/// Flags an entry whose session hit a per-session bound (only a bounded
/// prefix is indexed): kept in the entry's parser-private `state` and
/// listed by status as `truncated_sessions`.
pub fn mark_truncated(e: &mut ManifestEntry) {
    match &mut e.state {
        serde_json::Value::Object(m) => {
            m.insert("truncated".into(), serde_json::Value::Bool(true));
        }
        s => *s = serde_json::json!({ "truncated": true }),
    }
}

/// Whether an entry's session was indexed only up to a bound.
pub fn is_truncated(e: &ManifestEntry) -> bool {
    e.state.get("truncated").and_then(|v| v.as_bool()) == Some(true)
}

/// The keys of the sessions indexed only up to a bound.
pub fn truncated_sessions(m: &recall_core::Manifest) -> Vec<String> {
    m.sessions
        .iter()
        .filter(|(_, e)| is_truncated(e))
        .map(|(k, _)| k.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Diagnostics;
    use recall_core::derive_active;
    use recall_core::model::{Locator, SessionMeta, Source};

    fn rec(role: Role, text: &str, ts: i64) -> MessageRecord {
        MessageRecord {
            role,
            ts_ms: ts,
            text: text.into(),
            truncated: false,
            locator: Locator::ExternalRecordId {
                record_id: text.into(),
            },
            seq: None,
            turn: None,
            item_id: None,
            subagent: false,
            generation: 0,
        }
    }

    fn ex(records: Vec<MessageRecord>) -> Extracted {
        Extracted {
            meta: SessionMeta {
                source: Source::Pi,
                session_id: "s".into(),
                title: None,
                cwd: None,
                branch: None,
                created_ms: records.first().map(|r| r.ts_ms),
                updated_ms: records.last().map(|r| r.ts_ms),
                messages: records.len() as u64,
                parent: None,
                resume: None,
                paths: vec![],
                models: Vec::new(),
            },
            records,
            marks: vec![],
            diagnostics: Diagnostics::default(),
        }
    }

    #[test]
    fn rewrite_carries_missing_records_superseded() {
        let g0 = shard(
            ex(vec![
                rec(Role::User, "old words", 1),
                rec(Role::Assistant, "kept", 2),
            ]),
            0,
            None,
        );
        let g1 = shard(
            ex(vec![
                rec(Role::User, "new words", 3),
                rec(Role::Assistant, "kept", 4),
            ]),
            1,
            Some(Previous {
                shard: &g0,
                generation: 0,
                rewritten: true,
            }),
        );
        let texts: Vec<(&str, u32)> = g1
            .records
            .iter()
            .map(|r| (r.text.as_str(), r.generation))
            .collect();
        assert_eq!(texts, vec![("new words", 1), ("kept", 1), ("old words", 0)]);
        assert_eq!(
            derive_active(&g1.records, &g1.marks),
            vec![true, true, false]
        );
        assert_eq!(g1.session.messages, 3);
        assert_eq!(g1.session.created_ms, Some(1));

        // An append later keeps the carried history, with the same id.
        let g1b = shard(
            ex(vec![
                rec(Role::User, "new words", 3),
                rec(Role::Assistant, "kept", 4),
                rec(Role::User, "more", 5),
            ]),
            1,
            Some(Previous {
                shard: &g1,
                generation: 1,
                rewritten: false,
            }),
        );
        assert_eq!(g1b.records.len(), 4);
        assert_eq!(g1b.records[3].item_id, g1.records[2].item_id);
        assert_eq!(
            derive_active(&g1b.records, &g1b.marks),
            vec![true, true, true, false]
        );
    }

    #[test]
    fn carried_ids_never_collide_with_new_ones() {
        let mut a = rec(Role::User, "before edit", 1);
        a.item_id = Some("u1".into());
        let g0 = shard(ex(vec![a]), 0, None);
        let mut b = rec(Role::User, "after edit", 2);
        b.item_id = Some("u1".into());
        let g1 = shard(
            ex(vec![b]),
            1,
            Some(Previous {
                shard: &g0,
                generation: 0,
                rewritten: true,
            }),
        );
        assert_eq!(derive_active(&g1.records, &g1.marks), vec![true, false]);
        assert_ne!(g1.records[1].item_id.as_deref(), Some("u1"));
    }
}
