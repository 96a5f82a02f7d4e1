//! The sweep's index segments: each worker's draft, written as a segment
//! when full, the merger thread that lists them and runs a backfill's one
//! tier merge while the workers go on, and the maintain stage after the
//! last publish (the segments follow the manifest).

use super::Sweep;
use crate::store::segments::{self, Deferral, SegmentDraft, SegmentRef};
use crate::store::Store;
use recall_core::PreparedShard;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The merger's answer: the segments to list (the merged one first) and
/// whether it merged.
type Merger = JoinHandle<(Vec<SegmentRef>, bool)>;

/// What the extract stage leaves for the maintain stage.
pub(super) struct Segments {
    /// The merger thread (`None` when none could be started).
    pub(super) merger: Option<Merger>,
    /// What the workers had drafted but not written.
    pub(super) rest: SegmentDraft,
}

impl Sweep<'_> {
    /// The maintain stage: the workers' segments are listed, and anything
    /// they do not cover is indexed (never fails the sweep: without
    /// segments searches scan). The last draft is written while the merger
    /// may still be merging. A query-time refresh only lists what its
    /// workers wrote: merges, segments over uncovered generations and lost
    /// sidecars are left to the next sweep of `recall index` or the daemon,
    /// so a search never pays for maintenance.
    pub(super) fn maintain(&mut self, segments: Segments) {
        let (store, ix) = (self.store, self.ix);
        let last = store.write_draft(segments.rest);
        let (mut built, merged) = segments
            .merger
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if let Ok(Some((r, _))) = last {
            built.push(r);
        }
        if ix.in_search() {
            let _ = store.maintain_segments_with(built, Some(Deferral::ALL), false);
            return;
        }
        if let Ok(r) = store.maintain_segments_with(built, ix.segment_deferral(), !merged) {
            ix.note_deferred(r.deferred);
        }
    }
}

/// One worker's index segments: the draft it is filling with the shards it
/// prepares, and where the full ones it writes go (the merger).
pub(super) struct WorkerSegments {
    pub(super) draft: SegmentDraft,
    pub(super) written: mpsc::Sender<SegmentRef>,
}

impl WorkerSegments {
    pub(super) fn add(
        &mut self,
        store: &Store,
        generation: &str,
        shard: &PreparedShard,
        bytes: u64,
    ) {
        self.draft.add(generation, shard, bytes);
        if self.draft.full() {
            // A segment that cannot be written (or listed: no merger) leaves
            // its generations uncovered: the maintenance after the sweep
            // indexes them.
            if let Ok(Some((r, _))) = store.write_draft(std::mem::take(&mut self.draft)) {
                let _ = self.written.send(r);
            }
        }
    }
}

/// Collects the segments the workers write, on a thread of its own; in a
/// backfill it also runs the sweep's one tier merge as soon as the workers
/// have written the segments it takes ([`segments::fresh_merge`]), while
/// they go on — rather than after them, with one core idle. Answers the
/// segments to list (the merged one first) and whether it merged. `None`
/// when no thread could be started (the workers' segments then go
/// unlisted and their generations are indexed again after the sweep).
pub(super) fn spawn_merger(
    store: Arc<Store>,
    written: mpsc::Receiver<SegmentRef>,
    backfill: bool,
) -> Option<Merger> {
    std::thread::Builder::new()
        .name("recall-merge".into())
        .spawn(move || {
            let mut refs: Vec<SegmentRef> = Vec::new();
            let (mut tried, mut merged) = (!backfill, false);
            for r in written {
                refs.push(r);
                if tried {
                    continue;
                }
                let Some(group) = segments::fresh_merge(&refs) else {
                    continue;
                };
                // One attempt: a merge that fails leaves its inputs listed
                // and the pass after the sweep merges as usual.
                tried = true;
                let inputs: Vec<SegmentRef> = group.iter().map(|&i| refs[i].clone()).collect();
                if let Ok(Some(m)) = store.merge_fresh(&inputs) {
                    let kept = refs
                        .into_iter()
                        .enumerate()
                        .filter_map(|(i, r)| (!group.contains(&i)).then_some(r));
                    refs = std::iter::once(m).chain(kept).collect();
                    merged = true;
                }
            }
            (refs, merged)
        })
        .ok()
}
