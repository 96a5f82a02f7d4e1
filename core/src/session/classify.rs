//! The current surface [DSH readSurface] and the per-record classification
//! [DSH listEvents]: which records stand once every mark is applied, and for
//! each superseded record the mark that superseded it.

use super::{page_size, Entry, MarkRef, RecordState, SessionRef};
use crate::active::derive_active;
use crate::model::Mark;
use crate::prepared::PreparedShard;
use serde::{Deserialize, Serialize};

/// For each record, the index (into `marks`) of the mark that superseded it,
/// or `None` while it is active. Marks are replayed in the order
/// [`derive_active`] applies them; the first mark that turns a record
/// inactive is the one named.
pub fn superseding_marks(p: &PreparedShard) -> Vec<Option<usize>> {
    let records = &p.shard.records;
    let marks = &p.shard.marks;
    let mut order: Vec<usize> = (0..marks.len()).collect();
    order.sort_by_key(|&k| marks[k].at());
    let mut by: Vec<Option<usize>> = vec![None; records.len()];
    let mut applied: Vec<Mark> = Vec::with_capacity(marks.len());
    let mut before = vec![true; records.len()];
    for k in order {
        applied.push(marks[k].clone());
        let after = derive_active(records, &applied);
        for i in 0..records.len() {
            if before[i] && !after[i] {
                by[i] = Some(k);
            }
        }
        before = after;
    }
    by
}

/// One record's classification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordClass {
    /// Record index.
    pub index: u64,
    /// `current` or `superseded`.
    pub state: RecordState,
    /// The mark that superseded it (superseded records only).
    pub mark: Option<MarkRef>,
}

/// The classify response: every record, in order, paged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassifyResponse {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// Records that are current.
    pub current: u64,
    /// Records that are superseded.
    pub superseded: u64,
    /// Records skipped.
    pub offset: u64,
    /// This page.
    pub records: Vec<RecordClass>,
    /// True when more records follow.
    pub more: bool,
}

/// Classifies the records of `p` from `offset`, at most `limit` (default
/// 100, at most 500).
pub fn classify(p: &PreparedShard, offset: u64, limit: Option<u64>) -> ClassifyResponse {
    let by = superseding_marks(p);
    let superseded = by.iter().filter(|m| m.is_some()).count() as u64;
    let n = p.shard.records.len();
    let limit = page_size(limit);
    let records: Vec<RecordClass> = (0..n)
        .skip(offset as usize)
        .take(limit)
        .map(|i| RecordClass {
            index: i as u64,
            state: if by[i].is_some() {
                RecordState::Superseded
            } else {
                RecordState::Current
            },
            mark: by[i].map(|k| MarkRef::of(&p.shard.marks, k)),
        })
        .collect();
    ClassifyResponse {
        ok: true,
        session: SessionRef::of(p),
        current: n as u64 - superseded,
        superseded,
        offset,
        more: (offset as usize).saturating_add(records.len()) < n,
        records,
    }
}

/// The surface response: active records only, in order, paged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SurfaceResponse {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// Active records (all pages).
    pub total: u64,
    /// Active records skipped.
    pub offset: u64,
    /// This page.
    pub entries: Vec<Entry>,
    /// True when more active records follow.
    pub more: bool,
}

/// The conversation as it stands after every rollback, undo and branch
/// choice: the active records of `p`, from `offset`, at most `limit`.
pub fn surface(p: &PreparedShard, offset: u64, limit: Option<u64>) -> SurfaceResponse {
    let active: Vec<usize> = (0..p.shard.records.len())
        .filter(|&i| p.active.get(i).copied().unwrap_or(true))
        .collect();
    let entries: Vec<Entry> = active
        .iter()
        .skip(offset as usize)
        .take(page_size(limit))
        .map(|&i| Entry::of(p, i))
        .collect();
    SurfaceResponse {
        ok: true,
        session: SessionRef::of(p),
        total: active.len() as u64,
        offset,
        more: (offset as usize).saturating_add(entries.len()) < active.len(),
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    #[test]
    fn classify_names_the_superseding_mark() {
        let p = shard();
        let c = classify(&p, 0, None);
        assert_eq!((c.current, c.superseded), (7, 3));
        let kinds: Vec<Option<(String, u64)>> = c
            .records
            .iter()
            .map(|r| r.mark.as_ref().map(|m| (m.kind.clone(), m.at)))
            .collect();
        assert_eq!(kinds[3], Some(("item_anchor".into(), 5)));
        assert_eq!(kinds[4], Some(("item_anchor".into(), 5)));
        assert_eq!(kinds[7], Some(("record_ids".into(), 8)));
        assert_eq!(
            c.records[7].mark.as_ref().unwrap().reason.as_deref(),
            Some("undo")
        );
        assert!(kinds[0].is_none() && kinds[5].is_none() && kinds[9].is_none());
        // The classification agrees with the activity flags.
        for r in &c.records {
            assert_eq!(r.state == RecordState::Current, p.active[r.index as usize]);
        }
    }

    #[test]
    fn surface_is_active_records_in_order() {
        let p = shard();
        let s = surface(&p, 0, None);
        let idx: Vec<u64> = s.entries.iter().map(|e| e.index).collect();
        assert_eq!(idx, vec![0, 1, 2, 5, 6, 8, 9]);
        assert!(s.entries.iter().all(|e| e.state == RecordState::Current));
        let page = surface(&p, 5, Some(1));
        assert_eq!(page.entries[0].index, 8);
        assert!(page.more);
    }
}
