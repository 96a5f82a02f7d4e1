//! Supersession: `derive_active` replays a shard's marks in source order over
//! its records and says which records are still active (DESIGN.md §2).
//!
//! Every mark applies only to records that precede it (`index < at`), so a
//! record written after a rewind, rollback or undo stays active.

use crate::model::{AnchorPosition, Mark, MessageRecord, Role};
use std::collections::HashSet;

/// Returns one flag per record: `true` when the record is active.
pub fn derive_active(records: &[MessageRecord], marks: &[Mark]) -> Vec<bool> {
    let mut active = vec![true; records.len()];
    let mut order: Vec<&Mark> = marks.iter().collect();
    // Source order; a stable sort keeps marks at the same position in file order.
    order.sort_by_key(|m| m.at());
    for mark in order {
        let end = usize::try_from(mark.at())
            .unwrap_or(usize::MAX)
            .min(records.len());
        apply(mark, &records[..end], &mut active[..end]);
    }
    active
}

fn apply(mark: &Mark, records: &[MessageRecord], active: &mut [bool]) {
    match mark {
        Mark::SeqCut { cut_after_seq, .. } => {
            for (r, a) in records.iter().zip(active.iter_mut()) {
                if r.seq.is_some_and(|s| s > *cut_after_seq) {
                    *a = false;
                }
            }
        }
        Mark::TurnCount { num_turns, .. } => {
            if *num_turns == 0 {
                return;
            }
            let mut remaining = *num_turns;
            let mut start = None;
            for i in (0..records.len()).rev() {
                let r = &records[i];
                if active[i] && r.role == Role::User && r.turn.is_some() {
                    start = Some(i);
                    remaining -= 1;
                    if remaining == 0 {
                        break;
                    }
                }
            }
            if let Some(start) = start {
                active[start..].iter_mut().for_each(|a| *a = false);
            }
        }
        Mark::ItemAnchor {
            item_id, position, ..
        } => {
            let anchor = records
                .iter()
                .rposition(|r| r.item_id.as_deref() == Some(item_id.as_str()));
            if let Some(i) = anchor {
                let from = match position {
                    AnchorPosition::Before => i,
                    AnchorPosition::After => i + 1,
                };
                active[from..].iter_mut().for_each(|a| *a = false);
            }
        }
        Mark::RecordIds { ids, .. } => {
            let ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
            for (r, a) in records.iter().zip(active.iter_mut()) {
                if r.item_id.as_deref().is_some_and(|id| ids.contains(id)) {
                    *a = false;
                }
            }
        }
        Mark::GenerationRestore {
            active_generation, ..
        } => {
            for (r, a) in records.iter().zip(active.iter_mut()) {
                if r.generation > *active_generation {
                    *a = false;
                }
            }
        }
    }
}
