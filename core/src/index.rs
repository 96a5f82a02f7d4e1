//! An in-memory index: a manifest plus the generation files it names, handed
//! in as bytes, and the index segments that plan its searches — the store's
//! own segment files when they are handed in ([`MemIndex::add_segment`]),
//! else one segment built over the loaded shards (on first search after a
//! change). The browser binding, the offline report viewer and the parity
//! tests search through it; [`crate::lazy`] searches it before every
//! generation is loaded.

use crate::catalog::{Catalog, LoadedShard};
use crate::directory::DirectoryCache;
use crate::error::{CatalogError, LoadError};
use crate::model::{Manifest, ManifestEntry};
use crate::naming::generation_file_name;
use crate::prepared::PreparedShard;
use crate::query::{QueryError, Request};
use crate::response::Response;
use crate::search::{search_request, Budgets, SearchEnv};
use crate::segment::{self, Segment, SegmentSet};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Why bytes were refused.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The manifest did not parse.
    #[error("manifest is not valid: {0}")]
    Manifest(serde_json::Error),
    /// A generation file did not parse.
    #[error("generation {name} is not valid: {source}")]
    Generation {
        /// Its name.
        name: String,
        /// Why.
        source: serde_json::Error,
    },
    /// A generation's bytes do not hash to its name.
    #[error("generation {name} does not match its content hash")]
    HashMismatch {
        /// Its name.
        name: String,
    },
    /// A segment's bytes do not hash to its name (`<hash16>.seg`).
    #[error("segment {name} does not match its content hash")]
    SegmentHash {
        /// Its name.
        name: String,
    },
    /// A segment did not open (torn, altered, not a segment) or names
    /// something that is not a generation file.
    #[error("segment {name} is not valid: {reason}")]
    Segment {
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
}

/// A manifest and its shards, in memory.
#[derive(Debug)]
pub struct MemIndex {
    manifest: Arc<Manifest>,
    shards: HashMap<String, Arc<PreparedShard>>,
    /// A segment over every loaded shard, built when first needed.
    segment: OnceLock<Option<Arc<SegmentSet>>>,
    /// Whether searches use the segment (off: filters and scans only).
    use_index: bool,
    /// Planning tables of the last snapshots searched.
    pub(crate) directories: DirectoryCache,
    /// The store's segments handed in, in the order given (by name).
    store_segments: Vec<(String, Arc<Segment>)>,
    /// One lookup table over `store_segments`, built when first needed.
    store_set: OnceLock<Option<Arc<SegmentSet>>>,
    /// Generations the caller could not fetch: a lazy search does not ask
    /// for them again (they are skipped, and the answer says `unreadable`).
    pub(crate) unavailable: std::collections::HashSet<String>,
}

impl Default for MemIndex {
    fn default() -> MemIndex {
        MemIndex::new()
    }
}

impl MemIndex {
    /// An empty index (revision 0, no sessions).
    pub fn new() -> MemIndex {
        MemIndex {
            manifest: Arc::new(Manifest::empty(String::new(), 0)),
            shards: HashMap::new(),
            segment: OnceLock::new(),
            use_index: true,
            directories: DirectoryCache::default(),
            store_segments: Vec::new(),
            store_set: OnceLock::new(),
            unavailable: std::collections::HashSet::new(),
        }
    }

    /// Replaces the manifest.
    pub fn set_manifest(&mut self, bytes: &[u8]) -> Result<(), IndexError> {
        let m: Manifest = serde_json::from_slice(bytes).map_err(IndexError::Manifest)?;
        self.set_manifest_value(m);
        Ok(())
    }

    /// Replaces the manifest with a parsed one.
    pub fn set_manifest_value(&mut self, m: Manifest) {
        self.manifest = Arc::new(m);
    }

    /// The current manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Adds a generation file under `name` (`<hash16>.json`). The name must
    /// be the content hash of the bytes.
    pub fn add_generation(&mut self, name: &str, bytes: &[u8]) -> Result<(), IndexError> {
        if generation_file_name(bytes) != name {
            return Err(IndexError::HashMismatch {
                name: name.to_string(),
            });
        }
        let shard = PreparedShard::from_bytes(bytes).map_err(|source| IndexError::Generation {
            name: name.to_string(),
            source,
        })?;
        self.shards.insert(name.to_string(), Arc::new(shard));
        self.unavailable.remove(name);
        if self.store_segments.is_empty() {
            self.segment = OnceLock::new();
        }
        Ok(())
    }

    /// Adds one of the store's index segments (`segments/<hash16>.seg`)
    /// under its name. Refused: a name that is not the content hash of the
    /// bytes, bytes that do not open as a segment, or a segment that names
    /// anything but generation files. A segment only ever answers for the
    /// generations it names (content hashes), so it may name generations
    /// this index does not hold, or that the manifest no longer lists. Once
    /// a segment is added, searches plan through the added segments only
    /// (as the host does): a generation none of them covers falls back to
    /// its trigram filter and a scan.
    pub fn add_segment(&mut self, name: &str, bytes: &[u8]) -> Result<(), IndexError> {
        if name != format!("{}.seg", crate::naming::hash16(bytes)) {
            return Err(IndexError::SegmentHash {
                name: name.to_string(),
            });
        }
        if self.has_segment(name) {
            return Ok(());
        }
        let seg = Segment::open(bytes.to_vec()).map_err(|e| IndexError::Segment {
            name: name.to_string(),
            reason: e.to_string(),
        })?;
        if let Some(bad) = seg
            .names()
            .iter()
            .find(|g| !crate::naming::is_generation_file_name(g))
        {
            return Err(IndexError::Segment {
                name: name.to_string(),
                reason: format!("it names {bad:?}, which is not a generation file"),
            });
        }
        self.store_segments.push((name.to_string(), Arc::new(seg)));
        self.store_set = OnceLock::new();
        Ok(())
    }

    /// Whether a segment was added under `name`.
    pub fn has_segment(&self, name: &str) -> bool {
        self.store_segments.iter().any(|(n, _)| n == name)
    }

    /// Drops added segments whose names are not in `keep` (a newer segment
    /// list replaced them).
    pub fn retain_segments(&mut self, keep: &[String]) {
        let before = self.store_segments.len();
        self.store_segments.retain(|(n, _)| keep.contains(n));
        if self.store_segments.len() != before {
            self.store_set = OnceLock::new();
            self.segment = OnceLock::new();
        }
    }

    /// Records that generation `name` could not be fetched, so a lazy
    /// search stops asking for it (the session is skipped and the answer is
    /// `partial`/`unreadable`, as the host answers for a lost file).
    pub fn mark_unavailable(&mut self, name: &str) {
        if !self.shards.contains_key(name) {
            self.unavailable.insert(name.to_string());
        }
    }

    /// The generations the current manifest names that are not loaded,
    /// in manifest (session key) order.
    pub fn missing_generations(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.manifest
            .sessions
            .values()
            .map(|e| e.generation_file.as_str())
            .filter(|g| !self.shards.contains_key(*g) && seen.insert(*g))
            .map(str::to_string)
            .collect()
    }

    /// Turns the index segment off or on (off = every session is filtered
    /// and scanned as without an index; answers are identical either way).
    pub fn set_use_index(&mut self, on: bool) {
        self.use_index = on;
    }

    /// The segment over every loaded shard (ordinals in name order).
    pub fn segment(&self) -> Option<Arc<SegmentSet>> {
        self.segment
            .get_or_init(|| {
                let mut names: Vec<&String> = self.shards.keys().collect();
                names.sort();
                let shards: Vec<(&str, &PreparedShard)> = names
                    .iter()
                    .map(|n| (n.as_str(), self.shards[*n].as_ref()))
                    .collect();
                // Bytes just built always open; without a segment every
                // session is filtered and scanned.
                let seg = Segment::open(segment::build(&shards)).ok()?;
                Some(Arc::new(SegmentSet::new(vec![Arc::new(seg)])))
            })
            .clone()
    }

    /// Whether a generation is loaded.
    pub fn has_generation(&self, name: &str) -> bool {
        self.shards.contains_key(name)
    }

    /// Indices of a loaded generation's superseded records (its marks
    /// replayed, DESIGN.md §2), ascending; empty when it is not loaded. Lets
    /// in-page session views flag what search hits flag.
    pub fn superseded_records(&self, name: &str) -> Vec<u32> {
        self.shards
            .get(name)
            .map(|s| {
                s.active
                    .iter()
                    .enumerate()
                    .filter(|(_, active)| !**active)
                    .filter_map(|(i, _)| u32::try_from(i).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Drops generations the manifest no longer names.
    pub fn retain_referenced(&mut self) {
        let live: std::collections::HashSet<&str> = self
            .manifest
            .sessions
            .values()
            .map(|e| e.generation_file.as_str())
            .collect();
        let before = self.shards.len();
        self.shards.retain(|k, _| live.contains(k.as_str()));
        self.unavailable.retain(|k| live.contains(k.as_str()));
        if self.shards.len() != before {
            self.segment = OnceLock::new();
        }
    }

    /// Searches with a frozen clock (so results are deterministic) and the
    /// default budgets.
    pub fn search(&self, request: &Request) -> Result<Response, QueryError> {
        let clock = || 0u64;
        self.search_with(request, &clock)
    }

    /// Searches with the given monotonic clock.
    pub fn search_with(
        &self,
        request: &Request,
        clock: &dyn Fn() -> u64,
    ) -> Result<Response, QueryError> {
        let env = SearchEnv {
            catalog: self,
            directories: Some(&self.directories),
            clock,
            clock_us: None,
            budgets: Budgets::default(),
            building: false,
        };
        search_request(request, &env)
    }

    /// JSON in, JSON out: a request object → the response body, or the §7
    /// error body `{ok:false, error, message}`.
    pub fn search_json(&self, request_json: &str) -> String {
        let result = Request::from_json(request_json).and_then(|r| self.search(&r));
        match result {
            Ok(resp) => serde_json::to_string(&resp).unwrap_or_else(|e| {
                QueryError::new(
                    crate::error::ErrorCode::Internal,
                    format!("serialization failed: {e}"),
                )
                .to_json()
            }),
            Err(e) => e.to_json(),
        }
    }
}

impl MemIndex {
    /// A one-session query (`crate::session::json`) over the loaded
    /// generation `name`: JSON in, JSON out; an unknown generation is
    /// `session_not_found`.
    pub fn session_query_json(&self, name: &str, request_json: &str) -> String {
        match self.shards.get(name) {
            Some(p) => crate::session::query_json(p, name, request_json),
            None => QueryError::new(
                crate::ErrorCode::SessionNotFound,
                "no such generation is loaded",
            )
            .to_json(),
        }
    }
}

impl MemIndex {
    /// The session list, a session view or lineage
    /// (`crate::session::views`) over this manifest and its loaded shards:
    /// JSON in, JSON out, as the daemon's routes answer.
    pub fn views_json(&self, request_json: &str) -> String {
        crate::session::views_json(
            &self.manifest,
            &|name| self.shards.get(name).cloned(),
            request_json,
        )
    }
}

impl Catalog for MemIndex {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Ok(self.manifest.clone())
    }

    fn snapshot(&self, _store_id: &str, _revision: u64) -> Option<Arc<Manifest>> {
        None
    }

    fn load(
        &self,
        _key: &str,
        entry: &ManifestEntry,
        _tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        self.shards
            .get(&entry.generation_file)
            .map(|s| LoadedShard {
                shard: s.clone(),
                fresh_bytes: 0,
            })
            .ok_or_else(|| LoadError::Missing {
                name: entry.generation_file.clone(),
            })
    }

    fn grams(&self, _key: &str, entry: &ManifestEntry) -> Option<Arc<crate::ShardGrams>> {
        self.shards
            .get(&entry.generation_file)
            .map(|s| s.grams.clone())
    }

    fn segments(&self) -> Option<Arc<SegmentSet>> {
        match (self.use_index, self.store_segments.is_empty()) {
            (false, _) => None,
            (true, true) => self.segment(),
            (true, false) => self
                .store_set
                .get_or_init(|| {
                    let segs = self.store_segments.iter().map(|(_, s)| s.clone()).collect();
                    Some(Arc::new(SegmentSet::new(segs)))
                })
                .clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superseded_records_replays_the_marks_of_a_loaded_generation() {
        let rec = |seq: u64| {
            serde_json::json!({"role": "user", "ts_ms": 1, "text": "t", "seq": seq,
                "locator": {"kind": "native_event", "line_no": seq, "content_hash16": "0000000000000000"}})
        };
        let shard = serde_json::json!({
            "session": {"source": "intendant", "session_id": "s", "title": null, "cwd": null, "branch": null,
                "created_ms": 1, "updated_ms": 1, "messages": 4, "parent": null, "resume": null, "paths": []},
            "records": [rec(1), rec(2), rec(3), rec(4)],
            // Rewound to seq 1 after three records: seq 2 and 3 are superseded, seq 4 came later.
            "marks": [{"kind": "seq_cut", "at": 3, "cut_after_seq": 1}],
        });
        let bytes = serde_json::to_vec(&shard).unwrap();
        let name = generation_file_name(&bytes);
        let mut index = MemIndex::new();
        assert!(index.superseded_records(&name).is_empty());
        index.add_generation(&name, &bytes).unwrap();
        assert_eq!(index.superseded_records(&name), [1, 2]);
    }

    #[test]
    fn add_segment_refuses_bytes_it_cannot_trust() {
        let mut index = MemIndex::new();
        let named = |b: &[u8]| format!("{}.seg", crate::naming::hash16(b));
        let junk = b"not a segment".to_vec();
        assert!(matches!(
            index.add_segment("0000000000000000.seg", &junk),
            Err(IndexError::SegmentHash { .. })
        ));
        assert!(matches!(
            index.add_segment(&named(&junk), &junk),
            Err(IndexError::Segment { .. })
        ));
        // A valid segment that names something other than a generation file.
        let shard = serde_json::json!({
            "session": {"source": "pi", "session_id": "s", "title": null, "cwd": null, "branch": null,
                "created_ms": 1, "updated_ms": 1, "messages": 1, "parent": null, "resume": null, "paths": []},
            "records": [{"role": "user", "ts_ms": 1, "text": "hello", "seq": 1,
                "locator": {"kind": "native_event", "line_no": 1, "content_hash16": "0000000000000000"}}],
        });
        let bytes = serde_json::to_vec(&shard).unwrap();
        let prepared = PreparedShard::from_bytes(&bytes).unwrap();
        let odd = segment::build(&[("../x.json", &prepared)]);
        let err = index.add_segment(&named(&odd), &odd).unwrap_err();
        assert!(err.to_string().contains("not a generation file"), "{err}");
        assert!(!index.has_segment(&named(&odd)));
        let good = segment::build(&[(&generation_file_name(&bytes), &prepared)]);
        index.add_segment(&named(&good), &good).unwrap();
        assert!(index.has_segment(&named(&good)));
        index.retain_segments(&[]);
        assert!(!index.has_segment(&named(&good)));
    }
}
