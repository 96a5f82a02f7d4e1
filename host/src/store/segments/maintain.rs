//! Segment maintenance, the store's side: what the live list and the
//! manifest hold now, the segments to write (merges from postings, new
//! segments from generation files), and the new list, written under the
//! writer lock.

use super::plan::{chunks, tier};
use super::{
    read_list, Deferral, SegmentDraft, SegmentList, SegmentRef, SegmentReport, LIST,
    MAX_MERGED_BYTES, MERGE_FACTOR,
};
use crate::store::fsutil::{random_hex, write_atomic};
use crate::store::generations;
use crate::store::{Store, StoreError};
use recall_core::segment::Segment;
use recall_core::PreparedShard;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::sync::Arc;

impl Store {
    /// Indexer only: lists `fresh` (segments the sweep's workers built from
    /// the shards they had just prepared, [`Store::write_draft`]), indexes
    /// the current manifest's generations no live segment covers (in
    /// segments of at most [`CHUNK_BYTES`] of source), merges small segments
    /// ([`MERGE_FACTOR`] of one size tier, or one whose generations are
    /// mostly gone — from their postings, reading no shard), drops listed
    /// segments that do not open, and publishes the new list. Nothing to do
    /// ⇒ nothing written.
    pub fn maintain_segments(&self, fresh: Vec<SegmentRef>) -> Result<SegmentReport, StoreError> {
        self.maintain_segments_deferring(fresh, None)
    }

    /// [`Store::maintain_segments`], leaving the uncovered generations (and
    /// every merge) for a later pass when they fit `defer`.
    pub fn maintain_segments_deferring(
        &self,
        fresh: Vec<SegmentRef>,
        defer: Option<Deferral>,
    ) -> Result<SegmentReport, StoreError> {
        self.maintain_segments_with(fresh, defer, true)
    }

    /// [`Store::maintain_segments_deferring`]; `merge: false` = no tier
    /// merge in this pass (the sweep already did its one, [`Store::merge_fresh`]).
    pub fn maintain_segments_with(
        &self,
        fresh: Vec<SegmentRef>,
        defer: Option<Deferral>,
        merge: bool,
    ) -> Result<SegmentReport, StoreError> {
        self.maintain(fresh, defer, merge, &HashSet::new())
    }

    /// Rebuilds every listed segment that indexes one of `generations`
    /// (forgotten or excluded sessions': no longer in the manifest) without
    /// them, so that their text leaves the live index at once; the old
    /// segment files are deleted after the grace period like any unlisted
    /// one.
    pub fn purge_segments(
        &self,
        generations: &HashSet<String>,
    ) -> Result<SegmentReport, StoreError> {
        self.maintain(Vec::new(), None, false, generations)
    }

    fn maintain(
        &self,
        fresh: Vec<SegmentRef>,
        defer: Option<Deferral>,
        merge: bool,
        purge: &HashSet<String>,
    ) -> Result<SegmentReport, StoreError> {
        let may_merge = merge;
        let manifest = self.current()?;
        if manifest.store_id.is_empty() {
            return Ok(SegmentReport::default());
        }
        let sdir = self.segments_dir();
        fs::create_dir_all(&sdir).map_err(|e| StoreError::io(&sdir, e))?;
        let mut list = read_list(self.dir(), &manifest.store_id);
        let mut listed_fresh = false;
        for f in fresh {
            if !list.segments.iter().any(|s| s.name == f.name) {
                list.segments.push(f);
                listed_fresh = true;
            }
        }
        let sizes: HashMap<&str, u64> = manifest
            .sessions
            .values()
            .map(|e| (e.generation_file.as_str(), e.bytes))
            .collect();
        let mut report = SegmentReport::default();
        // Which live generations each listed segment covers (a generation
        // two segments name — a worker's segment and an older one — counts
        // for the first only).
        let mut kept: Vec<(SegmentRef, Arc<Segment>, Vec<String>)> = Vec::new();
        let mut covered: HashSet<&str> = HashSet::new();
        for s in &list.segments {
            match self.open_cached(&sdir, &s.name) {
                Ok(seg) => {
                    let live: Vec<String> = seg
                        .names()
                        .iter()
                        .filter_map(|n| sizes.get_key_value(n.as_str()).map(|(k, _)| *k))
                        .filter(|n| covered.insert(n))
                        .map(str::to_string)
                        .collect();
                    if live.is_empty() {
                        report.merged += 1;
                    } else {
                        kept.push((s.clone(), seg, live));
                    }
                }
                Err(_) => report.dropped += 1,
            }
        }
        let mut uncovered: Vec<&str> = sizes
            .keys()
            .copied()
            .filter(|g| !covered.contains(g))
            .collect();
        uncovered.sort_unstable();
        let deferring = defer.is_some_and(|d| {
            !uncovered.is_empty()
                && uncovered.len() <= d.generations
                && uncovered.iter().filter_map(|g| sizes.get(g)).sum::<u64>() <= d.bytes
        });
        if deferring {
            report.deferred = uncovered.len();
            uncovered.clear();
        }
        // Rebuilt alone: segments whose generations are mostly gone.
        let dead: Vec<usize> = (0..kept.len())
            .filter(|&i| {
                (!deferring && (kept[i].2.len() as u64) * 2 < kept[i].0.generations)
                    || kept[i].1.names().iter().any(|n| purge.contains(n))
            })
            .collect();
        // Merged into one: the MERGE_FACTOR smallest segments of the lowest
        // tier that has that many, when the result stays under
        // MAX_MERGED_BYTES (at most one merge per pass, so a pass's work stays
        // bounded and a merge moves its output up a tier).
        let mut tiers: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        for (i, (s, _, _)) in kept.iter().enumerate() {
            if s.source_bytes < MAX_MERGED_BYTES && !dead.contains(&i) {
                tiers.entry(tier(s.source_bytes)).or_default().push(i);
            }
        }
        let mut merge: Vec<usize> = Vec::new();
        for members in tiers.values_mut().filter(|_| !deferring && may_merge) {
            if members.len() < MERGE_FACTOR {
                continue;
            }
            members.sort_by_key(|&i| kept[i].0.source_bytes);
            members.truncate(MERGE_FACTOR);
            let total: u64 = members.iter().map(|&i| kept[i].0.source_bytes).sum();
            if total <= MAX_MERGED_BYTES {
                merge = members.clone();
                break;
            }
        }
        if !listed_fresh
            && uncovered.is_empty()
            && merge.is_empty()
            && dead.is_empty()
            && report.dropped == 0
            && report.merged == 0
        {
            return Ok(report);
        }
        let mut next: Vec<SegmentRef> = Vec::new();
        // Merges: (segment, the generations it keeps) per input.
        let mut merges: Vec<Vec<(Arc<Segment>, Vec<String>)>> = Vec::new();
        let mut merged: Vec<(Arc<Segment>, Vec<String>)> = Vec::new();
        for (i, (s, seg, live)) in kept.into_iter().enumerate() {
            if dead.contains(&i) {
                report.merged += 1;
                merges.push(vec![(seg, live)]);
            } else if merge.contains(&i) {
                report.merged += 1;
                merged.push((seg, live));
            } else {
                next.push(s);
            }
        }
        if !merged.is_empty() {
            merges.push(merged);
        }
        for m in &merges {
            let mut draft = SegmentDraft::default();
            for (seg, live) in m {
                let live: HashSet<&str> = live.iter().map(String::as_str).collect();
                draft.builder.add_segment(seg, |n| live.contains(n));
                draft.source_bytes += live.iter().filter_map(|g| sizes.get(g)).sum::<u64>();
            }
            if let Some((r, n)) = self.write_draft(draft)? {
                report.written += 1;
                report.bytes_written += n;
                next.push(r);
            }
        }
        // New generations: segments of at most CHUNK_BYTES of source.
        let fresh: Vec<String> = uncovered.iter().map(|g| g.to_string()).collect();
        for g in chunks(&fresh, &sizes) {
            if let Some((r, n)) = self.build_segment(g, &sizes, defer.is_none())? {
                report.written += 1;
                report.bytes_written += n;
                next.push(r);
            }
        }
        let _lock = self.lock()?;
        // The store may have been cleared meanwhile: never list segments
        // into another store's catalog.
        let now = self.current()?;
        if now.store_id != manifest.store_id {
            return Ok(report);
        }
        let current = read_list(self.dir(), &now.store_id);
        let new = SegmentList {
            store_id: now.store_id.clone(),
            revision: current.revision + 1,
            segments: next,
        };
        let bytes = serde_json::to_vec(&new)?;
        let tmp = format!(".segments.tmp-{}", random_hex(8));
        write_atomic(self.dir(), &tmp, &self.dir().join(LIST), &bytes)
            .map_err(|e| StoreError::io(&self.dir().join(LIST), e))?;
        report.bytes_written += bytes.len() as u64;
        Ok(report)
    }

    /// Merges segments a sweep's workers have just written (keeping every
    /// generation they name: a later pass drops the ones the manifest does
    /// not hold), from their postings, and writes the result; `None` when
    /// `refs` is empty. A backfill runs its pass's one tier merge this way
    /// while its workers go on, instead of after them ([`fresh_merge`]).
    pub fn merge_fresh(&self, refs: &[SegmentRef]) -> Result<Option<SegmentRef>, StoreError> {
        let sdir = self.segments_dir();
        let mut draft = SegmentDraft::default();
        for r in refs {
            let seg = self
                .open_cached(&sdir, &r.name)
                .map_err(|e| StoreError::io(&sdir.join(&r.name), io::Error::other(e)))?;
            draft.builder.add_segment(&seg, |_| true);
            draft.source_bytes += r.source_bytes;
        }
        Ok(self.write_draft(draft)?.map(|(r, _)| r))
    }

    /// Builds and writes one segment over `gens` (skipping generations that
    /// cannot be read: they stay uncovered and are scanned), restoring
    /// their lost `.grams` sidecars when `sidecars`.
    fn build_segment(
        &self,
        gens: &[String],
        sizes: &HashMap<&str, u64>,
        sidecars: bool,
    ) -> Result<Option<(SegmentRef, u64)>, StoreError> {
        let mut draft = SegmentDraft::default();
        for g in gens {
            let Ok(bytes) = generations::read(self.generations_dir(), g) else {
                continue;
            };
            if recall_core::naming::generation_file_name(&bytes) != *g {
                continue;
            }
            let Ok(shard) = PreparedShard::from_bytes(&bytes) else {
                continue;
            };
            // The indexer, not a reader, repairs a lost or outdated filter
            // sidecar (a pure function of the shard).
            if sidecars
                && generations::read_grams(self.generations_dir(), g)
                    .and_then(|b| recall_core::ShardGrams::from_bytes(&b))
                    .is_none()
            {
                let _ =
                    generations::write_grams(self.generations_dir(), g, &shard.grams.to_bytes());
            }
            let size = sizes.get(g.as_str()).copied().unwrap_or(bytes.len() as u64);
            draft.add(g, &shard, size);
        }
        self.write_draft(draft)
    }

    /// Writes a drafted segment under its content name; returns what to
    /// list and the bytes written (`None` for an empty draft).
    pub fn write_draft(
        &self,
        draft: SegmentDraft,
    ) -> Result<Option<(SegmentRef, u64)>, StoreError> {
        if draft.builder.is_empty() {
            return Ok(None);
        }
        let sdir = self.segments_dir();
        fs::create_dir_all(&sdir).map_err(|e| StoreError::io(&sdir, e))?;
        let generations = draft.builder.len() as u64;
        let source_bytes = draft.source_bytes;
        let bytes = draft.builder.finish();
        let name = super::write(&sdir, &bytes)?;
        self.segment_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .bad
            .remove(&name);
        Ok(Some((
            SegmentRef {
                name,
                generations,
                source_bytes,
            },
            bytes.len() as u64,
        )))
    }
}
