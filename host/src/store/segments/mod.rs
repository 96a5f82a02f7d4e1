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

use super::fsutil::{age_ms, random_hex, wall_ms, write_atomic, write_content_named};
use super::generations::{self, TMP_PREFIX};
use super::{Store, StoreError};
use recall_core::naming::hash16;
use recall_core::segment::{Builder, Segment, SegmentSet};
use recall_core::PreparedShard;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The segments folder name.
pub const SEGMENTS: &str = "segments";
/// The live list's file name.
pub const LIST: &str = "segments.json";
/// Extension of segment files.
pub const EXT: &str = "seg";
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

/// Opened segments, by name, and those that failed to open.
#[derive(Debug, Default)]
pub struct SegmentCache {
    open: HashMap<String, Arc<Segment>>,
    bad: HashSet<String>,
    /// The set last built, and the names it was built from.
    set: Option<(Vec<String>, Arc<SegmentSet>)>,
    /// `segments.json` as last read: its file stamp, for its store id (a
    /// query re-reads it only when the file was replaced).
    list: Option<(super::Stamp, SegmentList)>,
}

/// The name of segment bytes.
pub fn segment_name(bytes: &[u8]) -> String {
    format!("{}.{EXT}", hash16(bytes))
}

/// Whether `name` is a segment file name (`<hash16>.seg`, lowercase hex).
pub fn is_segment_name(name: &str) -> bool {
    name.strip_suffix(EXT)
        .and_then(|stem| stem.strip_suffix('.'))
        .is_some_and(|hash| {
            hash.len() == 16
                && hash
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
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

/// Opens a segment file through a memory map, refusing a torn or altered
/// one (its checksum covers every byte).
pub fn open(sdir: &Path, name: &str) -> Result<Segment, String> {
    if !is_segment_name(name) {
        return Err(format!("not a segment name: {name:?}"));
    }
    let file = fs::File::open(sdir.join(name)).map_err(|e| e.to_string())?;
    // SAFETY: segment files are immutable: written under a temp name and
    // hard-linked to their content name, never modified in place (GC only
    // unlinks them, which keeps an existing map valid).
    let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?);
    let seg = Segment::open(Mapped(map.clone())).map_err(|e| e.to_string())?;
    // Opening read every page for the checksum; a query touches only the
    // tables and the postings it probes. Dropping the pages from this
    // process's map keeps them in the page cache (a later touch is a minor
    // fault) but out of its resident set: at 10 GB the open segments were
    // 880 MB of the daemon's RSS. What queries touch comes back (the
    // kernel maps 64 KiB around each touched page).
    // SAFETY: a read-only shared file mapping: DONTNEED drops page table
    // entries only, and the next read sees the file's bytes again.
    let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
    Ok(seg)
}

/// A segment's memory map, shared with [`open`] for its advice.
struct Mapped(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
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

    /// The live list of the current store.
    pub fn segment_list(&self) -> Result<SegmentList, StoreError> {
        let cur = self.current()?;
        // Replaced atomically (temp → rename), so a new list is a new inode.
        let Some(stamp) = super::stamp(&self.dir().join(LIST)) else {
            return Ok(read_list(self.dir(), &cur.store_id));
        };
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, list)) = &cache.list {
            if *s == stamp && list.store_id == cur.store_id {
                return Ok(list.clone());
            }
        }
        let list = read_list(self.dir(), &cur.store_id);
        cache.list = Some((stamp, list.clone()));
        Ok(list)
    }

    /// The live segments that open, cached. Never writes: a segment that
    /// cannot be opened is skipped (its sessions are scanned) and left for
    /// the indexer to replace.
    pub fn live_segments(&self) -> Vec<Arc<Segment>> {
        self.live_named().into_iter().map(|(_, s)| s).collect()
    }

    fn live_named(&self) -> Vec<(String, Arc<Segment>)> {
        let Ok(list) = self.segment_list() else {
            return Vec::new();
        };
        let sdir = self.segments_dir();
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::with_capacity(list.segments.len());
        for s in &list.segments {
            if let Some(seg) = cache.open.get(&s.name) {
                out.push((s.name.clone(), seg.clone()));
                continue;
            }
            if cache.bad.contains(&s.name) {
                continue;
            }
            match open(&sdir, &s.name) {
                Ok(seg) => {
                    let seg = Arc::new(seg);
                    cache.open.insert(s.name.clone(), seg.clone());
                    out.push((s.name.clone(), seg));
                }
                Err(_) => {
                    cache.bad.insert(s.name.clone());
                }
            }
        }
        // Forget segments no longer listed.
        let live: HashSet<&str> = list.segments.iter().map(|s| s.name.as_str()).collect();
        cache.open.retain(|k, _| live.contains(k.as_str()));
        out
    }

    fn open_cached(&self, sdir: &Path, name: &str) -> Result<Arc<Segment>, String> {
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = cache.open.get(name) {
            return Ok(s.clone());
        }
        let seg = Arc::new(open(sdir, name)?);
        cache.open.insert(name.to_string(), seg.clone());
        cache.bad.remove(name);
        Ok(seg)
    }

    /// [`Store::live_segments`] with one lookup table over them (rebuilt
    /// only when the set of segments that open changes); `None` when there
    /// is none.
    pub fn live_segment_set(&self) -> Option<Arc<SegmentSet>> {
        let live = self.live_named();
        if live.is_empty() {
            return None;
        }
        let (names, segs): (Vec<String>, Vec<Arc<Segment>>) = live.into_iter().unzip();
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((n, set)) = &cache.set {
            if *n == names {
                return Some(set.clone());
            }
        }
        let set = Arc::new(SegmentSet::new(segs));
        cache.set = Some((names, set.clone()));
        Some(set)
    }

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
        let name = write(&sdir, &bytes)?;
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

/// The segments of `fresh` that the tier policy merges first: the first
/// [`MERGE_FACTOR`] of one tier (in the order given) whose merge stays
/// within [`MAX_MERGED_BYTES`]; their indices.
pub fn fresh_merge(fresh: &[SegmentRef]) -> Option<Vec<usize>> {
    let mut tiers: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, s) in fresh.iter().enumerate() {
        if s.source_bytes >= MAX_MERGED_BYTES {
            continue;
        }
        let members = tiers.entry(tier(s.source_bytes)).or_default();
        members.push(i);
        let total: u64 = members.iter().map(|&m| fresh[m].source_bytes).sum();
        if members.len() == MERGE_FACTOR && total <= MAX_MERGED_BYTES {
            return Some(members.clone());
        }
        if members.len() == MERGE_FACTOR {
            members.remove(0);
        }
    }
    None
}

/// Size tier: powers of 4 of MiB.
fn tier(bytes: u64) -> u32 {
    let mib = (bytes >> 20).max(1);
    (63 - mib.leading_zeros()) / 2
}

/// Splits generations into runs of at most [`CHUNK_BYTES`] of source.
fn chunks<'a>(gens: &'a [String], sizes: &HashMap<&str, u64>) -> Vec<&'a [String]> {
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (i, g) in gens.iter().enumerate() {
        let sz = sizes.get(g.as_str()).copied().unwrap_or(0);
        if i > start && acc + sz > CHUNK_BYTES {
            out.push(&gens[start..i]);
            start = i;
            acc = 0;
        }
        acc += sz;
    }
    if start < gens.len() {
        out.push(&gens[start..]);
    }
    out
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

    #[test]
    fn a_sweep_merges_the_first_full_tier_that_fits() {
        let seg = |mib: u64| SegmentRef {
            name: format!("{mib}"),
            generations: 1,
            source_bytes: mib << 20,
        };
        let names = |f: &[SegmentRef], g: Vec<usize>| -> Vec<String> {
            g.into_iter().map(|i| f[i].name.clone()).collect()
        };
        // Three of one tier are not enough; a fourth of another tier does
        // not complete it.
        let mut f: Vec<SegmentRef> = [33, 34, 35, 200].map(seg).to_vec();
        assert_eq!(fresh_merge(&f), None);
        f.push(seg(36));
        assert_eq!(
            names(&f, fresh_merge(&f).unwrap()),
            ["33", "34", "35", "36"]
        );
        // Segments past the cap never merge; four that would exceed it slide
        // on to the next that fit.
        let f: Vec<SegmentRef> = [1024, 1024, 1024, 1024].map(seg).to_vec();
        assert_eq!(fresh_merge(&f), None);
        let f: Vec<SegmentRef> = [700, 256, 256, 256, 256].map(seg).to_vec();
        assert_eq!(names(&f, fresh_merge(&f).unwrap()), ["256"; 4]);
    }

    #[test]
    fn names_tiers_and_chunks() {
        let n = segment_name(b"x");
        assert!(is_segment_name(&n), "{n}");
        assert!(!is_segment_name("../x.seg"));
        assert_eq!(tier(0), 0);
        assert_eq!(tier(3 << 20), 0);
        assert_eq!(tier(4 << 20), 1);
        assert_eq!(tier(17 << 20), 2);
        let gens: Vec<String> = (0..5).map(|i| format!("g{i}")).collect();
        let sizes: HashMap<&str, u64> =
            gens.iter().map(|g| (g.as_str(), CHUNK_BYTES / 2)).collect();
        let c = chunks(&gens, &sizes);
        assert_eq!(c.iter().map(|c| c.len()).collect::<Vec<_>>(), [2, 2, 1]);
    }
}
