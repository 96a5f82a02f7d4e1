//! `segments/<hash16>.seg`: immutable, content-named index segments
//! (`recall_core::segment`), and `segments.json`, the list of live ones —
//! the part of the catalog searchers read besides the manifest.
//!
//! A segment only makes searches faster: a session whose generation no live
//! segment covers is filtered and scanned as before, and a segment names the
//! generations it indexes (content hashes, inside its checksummed body), so
//! it can never answer for bytes it did not see. The indexer keeps segments
//! in step after each sweep that wrote ([`Store::maintain_segments`]): the
//! generations no live segment covers get a new small segment, and small
//! segments are merged under a tiered policy (at most one merge of
//! [`MERGE_FACTOR`] segments of one size tier per pass); the list is replaced by
//! atomic rename under the writer lock. A segment that cannot be opened
//! (torn, altered) is never trusted: readers skip it and the next
//! maintenance drops it from the list, so its generations are indexed again.
//! Unlisted segments are deleted after the snapshot grace period.
//!
//! Here: names, the list, drafts and their files. `live` reads the live
//! segments; [`plan`] is the merge policy, pure (a pass's [`plan::MergePlan`]);
//! `maintain` finds what a pass plans over and executes the plan.

mod live;
mod maintain;
pub mod plan;

pub use live::{open, SegmentCache};
pub use plan::fresh_merge;

use super::fsutil::{age_ms, wall_ms, write_content_named};
use super::generations::TMP_PREFIX;
use super::{Store, StoreError};
use recall_core::segment::Builder;
use recall_core::PreparedShard;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::Path;

pub use recall_core::layout::store::SEGMENT_LIST as LIST;
pub use recall_core::layout::{is_segment_name, segment_name, SEGMENTS, SEGMENT_EXT as EXT};
/// Generation bytes one new segment indexes at most (bounds the memory of a
/// build; a backfill yields several segments).
pub const CHUNK_BYTES: u64 = 32 << 20;
/// Segments of one tier merged together once this many exist.
pub const MERGE_FACTOR: usize = 4;
/// Source bytes past which a segment is never merged again. Merges go
/// 32 → 128 → 512 MiB of source (tiers of 4), so a 10 GB home settles at
/// about 21 segments: a query probes every live segment, and at the earlier
/// 256 MiB (segments of 128 MiB) it probed 71–84 (bench/results/index-10G).
pub const MAX_MERGED_BYTES: u64 = 1 << 30;

/// One live segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentRef {
    /// `<hash16>.seg`.
    pub name: String,
    /// Generations it indexes.
    pub generations: u64,
    /// Bytes of those generations.
    pub source_bytes: u64,
}

/// `segments.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentList {
    /// The store id it belongs to (another id ⇒ ignored).
    pub store_id: String,
    /// Increases on every write.
    pub revision: u64,
    /// Live segments, oldest first.
    pub segments: Vec<SegmentRef>,
}

/// What a maintenance pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentReport {
    /// Segments written.
    pub written: usize,
    /// Segments merged away.
    pub merged: usize,
    /// Listed segments dropped because they could not be opened.
    pub dropped: usize,
    /// Bytes written (segments and list).
    pub bytes_written: u64,
    /// Live generations left uncovered on purpose ([`Deferral`]): scanned
    /// through their filters until a later pass indexes them.
    pub deferred: usize,
}

/// When a maintenance pass may leave the generations no segment covers
/// unindexed (a long-lived indexer amortising one segment over the live
/// appends of a window): while they are at most this many and this large.
/// A deferring pass writes no segment file at all — no new segment, no
/// merge, no rebuild — it only drops from the list segments that no longer
/// hold a live generation or do not open. A pass given a deferral (even
/// [`Deferral::CLOSED`]) also writes no `.grams` sidecar for the
/// generations it indexes: the long-lived indexer that defers never wrote
/// them (its live shards' filters are in its arena) and a segment now
/// covers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deferral {
    /// Uncovered generations at most.
    pub generations: usize,
    /// Their source bytes at most.
    pub bytes: u64,
}

impl Deferral {
    /// Defers nothing: the pass that closes a window.
    pub const CLOSED: Deferral = Deferral {
        generations: 0,
        bytes: 0,
    };
    /// Defers everything (a query-time refresh: no merge, no segment over
    /// uncovered generations, no sidecar restored).
    pub const ALL: Deferral = Deferral {
        generations: usize::MAX,
        bytes: u64::MAX,
    };
}

impl Default for Deferral {
    /// 64 generations, [`CHUNK_BYTES`] of source: few enough that scanning
    /// them through their filters costs a query next to nothing.
    fn default() -> Deferral {
        Deferral {
            generations: 64,
            bytes: CHUNK_BYTES,
        }
    }
}

/// A segment being built: by a sweep's worker from the shards it prepares
/// (so a backfill indexes in parallel with extraction and never re-reads its
/// generations), or by a merge from older segments' postings.
#[derive(Debug, Default)]
pub struct SegmentDraft {
    builder: Builder,
    source_bytes: u64,
}

impl SegmentDraft {
    /// Adds a prepared shard (with its tool lane) under its generation name;
    /// `bytes` is the generation's size.
    pub fn add(&mut self, generation: &str, shard: &PreparedShard, bytes: u64) {
        self.builder.add(generation, shard);
        self.source_bytes += bytes;
    }

    /// Whether it holds [`CHUNK_BYTES`] of source: time to write it.
    pub fn full(&self) -> bool {
        self.source_bytes >= CHUNK_BYTES
    }

    /// Adds everything `other` holds.
    pub fn append(&mut self, other: SegmentDraft) {
        self.builder.append(other.builder);
        self.source_bytes += other.source_bytes;
    }
}

/// Reads the live list; missing, unreadable or another store's ⇒ empty
/// (segments are only speed).
pub fn read_list(dir: &Path, store_id: &str) -> SegmentList {
    fs::read(dir.join(LIST))
        .ok()
        .and_then(|b| serde_json::from_slice::<SegmentList>(&b).ok())
        .filter(|l| l.store_id == store_id)
        .unwrap_or_else(|| SegmentList {
            store_id: store_id.to_string(),
            ..SegmentList::default()
        })
}

/// Writes segment bytes under their content name (if absent), fsynced.
pub fn write(sdir: &Path, bytes: &[u8]) -> Result<String, StoreError> {
    let name = segment_name(bytes);
    write_content_named(sdir, TMP_PREFIX, &name, bytes)
        .map_err(|e| StoreError::io(&sdir.join(&name), e))?;
    Ok(name)
}

impl Store {
    /// The segments folder.
    pub fn segments_dir(&self) -> std::path::PathBuf {
        self.dir().join(SEGMENTS)
    }

    /// The bytes of segment file `name` (listed or not: segments are
    /// immutable and content-named); `None` for a name that is not a
    /// segment's or a file that does not exist.
    pub fn segment_bytes(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if !is_segment_name(name) {
            return Ok(None);
        }
        let path = self.segments_dir().join(name);
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    /// Deletes segment files no list names, once older than `grace_ms`
    /// (a reader that listed them a moment ago may still open them), and
    /// temp files of builds that died.
    pub fn collect_segments(&self, grace_ms: i64) -> usize {
        let sdir = self.segments_dir();
        let Ok(cur) = self.current() else { return 0 };
        let list = read_list(self.dir(), &cur.store_id);
        let live: HashSet<&str> = list.segments.iter().map(|s| s.name.as_str()).collect();
        let now = wall_ms();
        let mut removed = 0;
        let Ok(rd) = fs::read_dir(&sdir) else {
            return 0;
        };
        for ent in rd.flatten() {
            let Some(n) = ent.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let garbage =
                (is_segment_name(&n) && !live.contains(n.as_str())) || n.starts_with(TMP_PREFIX);
            if garbage
                && ent.metadata().is_ok_and(|m| age_ms(&m, now) > grace_ms)
                && fs::remove_file(ent.path()).is_ok()
            {
                removed += 1;
            }
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names_are_a_hash_dot_seg() {
        assert!(is_segment_name("0123456789abcdef.seg"));
        for bad in [
            "0123456789abcdef/seg",
            "0123456789abcdefxseg",
            "0123456789ABCDEF.seg",
            "0123456789abcde.seg",
            "0123456789abcdef.seg.tmp",
            "0123456789abcdef.json",
            "",
        ] {
            assert!(!is_segment_name(bad), "{bad}");
        }
    }
}
