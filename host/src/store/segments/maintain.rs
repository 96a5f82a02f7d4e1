//! Segment maintenance, the store's side (the I/O): a pass finds what the
//! live list and the manifest hold now, asks the pure policy for a
//! [`MergePlan`] ([`plan::plan`]), and executes it: the merged segments
//! (from postings), the new ones (from generation files), then the new
//! list, written under the writer lock.

use super::plan::{self, Listed, MergePlan, Pass};
use super::{read_list, Deferral, SegmentDraft, SegmentList, SegmentRef, SegmentReport, LIST};
use crate::store::fsutil::{random_hex, write_atomic};
use crate::store::generations;
use crate::store::{Store, StoreError};
use recall_core::segment::Segment;
use recall_core::Manifest;
use recall_core::PreparedShard;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::sync::Arc;

/// The live list as a maintenance pass found it.
struct Found {
    /// The manifest it was found under.
    manifest: Arc<Manifest>,
    /// The list's entries, a sweep's fresh segments appended.
    entries: Vec<SegmentRef>,
    /// Each entry's segment, `None` when it does not open.
    opened: Vec<Option<Arc<Segment>>>,
    /// Whether fresh segments were appended.
    listed_fresh: bool,
}

impl Found {
    /// What the planner reads of it.
    fn listed(&self) -> Vec<Listed<'_>> {
        self.entries
            .iter()
            .zip(&self.opened)
            .map(|(entry, seg)| Listed {
                entry,
                names: seg.as_deref().map(Segment::names),
            })
            .collect()
    }
}

impl Store {
    /// Indexer only: lists `fresh` (segments the sweep's workers built from
    /// the shards they had just prepared, [`Store::write_draft`]), indexes
    /// the current manifest's generations no live segment covers (in
    /// segments of at most [`CHUNK_BYTES`](super::CHUNK_BYTES) of source),
    /// merges small segments ([`MERGE_FACTOR`](super::MERGE_FACTOR) of one
    /// size tier, or one whose generations are mostly gone — from their
    /// postings, reading no shard), drops listed segments that do not open,
    /// and publishes the new list. Nothing to do ⇒ nothing written.
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

    /// One maintenance pass: what the list and the manifest hold now
    /// ([`Store::find_segments`]), the plan ([`plan::plan`], pure), and its
    /// execution ([`Store::execute_plan`]).
    fn maintain(
        &self,
        fresh: Vec<SegmentRef>,
        defer: Option<Deferral>,
        merge: bool,
        purge: &HashSet<String>,
    ) -> Result<SegmentReport, StoreError> {
        let Some(found) = self.find_segments(fresh)? else {
            return Ok(SegmentReport::default());
        };
        let sizes: HashMap<&str, u64> = found
            .manifest
            .sessions
            .values()
            .map(|e| (e.generation_file.as_str(), e.bytes))
            .collect();
        let pass = Pass {
            live: &sizes,
            defer,
            merge,
            purge,
            listed_fresh: found.listed_fresh,
        };
        let plan = plan::plan(&found.listed(), &pass);
        self.execute_plan(&plan, &found)
    }

    /// The live list with `fresh` appended (those not listed yet), each
    /// segment opened; `None` for a store without a manifest yet.
    fn find_segments(&self, fresh: Vec<SegmentRef>) -> Result<Option<Found>, StoreError> {
        let manifest = self.current()?;
        if manifest.store_id.is_empty() {
            return Ok(None);
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
        // A segment a reader found a bad block in is checked whole: one
        // that fails is dropped like one that does not open.
        let noted = self.segment_notes();
        let opened = list
            .segments
            .iter()
            .map(|s| {
                let seg = self.open_cached(&sdir, &s.name).ok()?;
                let suspect = seg.damaged() || noted.contains(&s.name);
                (!suspect || seg.verify().is_ok()).then_some(seg)
            })
            .collect();
        self.remove_segment_notes(&noted);
        Ok(Some(Found {
            manifest,
            entries: list.segments,
            opened,
            listed_fresh,
        }))
    }

    /// Executes `plan` over what it was made from: writes the merged and
    /// the new segments, then (under the writer lock, unless the store was
    /// cleared meanwhile) the new list. A plan without changes writes
    /// nothing.
    fn execute_plan(&self, plan: &MergePlan, found: &Found) -> Result<SegmentReport, StoreError> {
        let mut report = SegmentReport {
            deferred: plan.deferred,
            ..SegmentReport::default()
        };
        if !plan.changes {
            return Ok(report);
        }
        report.dropped = plan.unopened.len();
        report.merged = plan.merged();
        let mut next: Vec<SegmentRef> = plan
            .keep
            .iter()
            .filter_map(|p| found.entries.get(p.segment).cloned())
            .collect();
        for m in &plan.merges {
            let mut draft = SegmentDraft::default();
            for p in &m.inputs {
                let Some(seg) = found.opened.get(p.segment).and_then(Option::as_ref) else {
                    continue;
                };
                let live: HashSet<&str> = p.generations.iter().map(String::as_str).collect();
                // A segment with a bad block adds nothing: its generations
                // are left uncovered, scanned, and indexed by the next pass.
                let _ = draft.builder.add_segment(seg, |n| live.contains(n));
            }
            draft.source_bytes = m.source_bytes;
            if let Some((r, n)) = self.write_draft(draft)? {
                report.written += 1;
                report.bytes_written += n;
                next.push(r);
            }
        }
        for run in &plan.builds {
            if let Some((r, n)) = self.build_segment(run, plan.sidecars)? {
                report.written += 1;
                report.bytes_written += n;
                next.push(r);
            }
        }
        let _lock = self.lock()?;
        // The store may have been cleared meanwhile: never list segments
        // into another store's catalog.
        let now = self.current()?;
        if now.store_id != found.manifest.store_id {
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
            draft
                .builder
                .add_segment(&seg, |_| true)
                .map_err(|e| StoreError::io(&sdir.join(&r.name), io::Error::other(e)))?;
            draft.source_bytes += r.source_bytes;
        }
        Ok(self.write_draft(draft)?.map(|(r, _)| r))
    }

    /// Builds and writes one segment over `gens` (each generation and its
    /// source bytes; skipping generations that cannot be read: they stay
    /// uncovered and are scanned), restoring their lost `.grams` sidecars
    /// when `sidecars`.
    fn build_segment(
        &self,
        gens: &[(String, u64)],
        sidecars: bool,
    ) -> Result<Option<(SegmentRef, u64)>, StoreError> {
        let mut draft = SegmentDraft::default();
        for (g, size) in gens {
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
            draft.add(g, &shard, *size);
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
