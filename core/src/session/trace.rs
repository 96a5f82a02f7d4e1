//! Tracing one record [DSH traceEvent]: for a superseded record, the mark
//! that superseded it and the active records now standing in its place;
//! for a record carried over from a rewritten source generation, its origin.

use super::classify::superseding_marks;
use super::window::Address;
use super::{Entry, MarkRef, RecordState, SessionRef};
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::{Deserialize, Serialize};

/// Most replacement records returned.
pub const MAX_REPLACEMENTS: usize = 100;

/// Where a record came from when its source file was rewritten.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The source generation the record was read from (0 = the original file).
    pub generation: u32,
    /// Indices of the earlier versions of this record (same locator, older
    /// generation), superseded by the rewrite.
    pub previous: Vec<u64>,
}

/// The trace of one record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordTrace {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// The record itself.
    pub record: Entry,
    /// The mark that superseded it (superseded records only).
    pub superseded_by: Option<MarkRef>,
    /// The active records that stand in its place, at most 100: its
    /// rewritten version (an active record with the same locator) when there
    /// is one, else those written from the mark's position up to the next
    /// mark (or the end).
    pub replaced_by: Vec<Entry>,
    /// Its source generation, when it is not the original file's.
    pub origin: Option<Origin>,
}

/// Traces the record `at` names in `p`.
pub fn trace_record(p: &PreparedShard, at: &Address) -> Result<RecordTrace, QueryError> {
    let i = at.resolve(p)?;
    let record = Entry::of(p, i);
    let by = superseding_marks(p);
    let marks = &p.shard.marks;
    let (superseded_by, replaced_by) = match by[i] {
        Some(k) if record.state == RecordState::Superseded => {
            let from = marks[k].at() as usize;
            let to = marks
                .iter()
                .map(|m| m.at() as usize)
                .filter(|&a| a > from)
                .min()
                .unwrap_or(p.shard.records.len())
                .min(p.shard.records.len());
            let active = |j: &usize| p.active.get(*j).copied().unwrap_or(true);
            let records = &p.shard.records;
            let same: Vec<usize> = (0..records.len())
                .filter(|&j| j != i && active(&j) && records[j].locator == records[i].locator)
                .collect();
            let replaced = if same.is_empty() {
                (from.min(to)..to).filter(active).collect()
            } else {
                same
            };
            let replaced = replaced
                .into_iter()
                .take(MAX_REPLACEMENTS)
                .map(|j| Entry::of(p, j))
                .collect();
            (Some(MarkRef::of(marks, k)), replaced)
        }
        _ => (None, Vec::new()),
    };
    let origin = (record.generation > 0).then(|| Origin {
        generation: record.generation,
        previous: (0..p.shard.records.len())
            .filter(|&j| {
                let r = &p.shard.records[j];
                j != i
                    && r.locator == p.shard.records[i].locator
                    && r.generation < record.generation
            })
            .map(|j| j as u64)
            .collect(),
    });
    Ok(RecordTrace {
        ok: true,
        session: SessionRef::of(p),
        record,
        superseded_by,
        replaced_by,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    fn idx(v: &[Entry]) -> Vec<u64> {
        v.iter().map(|e| e.index).collect()
    }

    #[test]
    fn superseded_records_point_at_their_replacements() {
        let p = shard();
        let t = trace_record(&p, &Address::Index(3)).unwrap();
        assert_eq!(t.superseded_by.as_ref().unwrap().kind, "item_anchor");
        // The rewind at 5 is followed by 5, 6 and 7; 7 was undone later.
        assert_eq!(idx(&t.replaced_by), vec![5, 6]);
        let t = trace_record(&p, &Address::Index(7)).unwrap();
        assert_eq!(
            t.superseded_by.as_ref().unwrap().reason.as_deref(),
            Some("undo")
        );
        assert_eq!(idx(&t.replaced_by), vec![8, 9]);
    }

    #[test]
    fn a_rewritten_record_points_at_its_new_version_and_back() {
        let mut p = shard();
        // Record 9 is the rewrite (generation 1) of the undone record 7.
        p.shard.records[9].locator = p.shard.records[7].locator.clone();
        p.shard.records[9].generation = 1;
        let t = trace_record(&p, &Address::Index(7)).unwrap();
        assert_eq!(idx(&t.replaced_by), vec![9]);
        let t = trace_record(&p, &Address::Index(9)).unwrap();
        assert_eq!(
            t.origin,
            Some(Origin {
                generation: 1,
                previous: vec![7]
            })
        );
    }

    #[test]
    fn current_records_have_no_mark() {
        let p = shard();
        let t = trace_record(&p, &Address::Index(0)).unwrap();
        assert!(t.superseded_by.is_none() && t.replaced_by.is_empty() && t.origin.is_none());
        assert_eq!(
            trace_record(&p, &Address::Index(99)).unwrap_err().code,
            "record_not_found"
        );
    }
}
