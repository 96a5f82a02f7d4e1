//! `recall_core::Catalog` over the on-disk store and the shared arena, and
//! the host's search entry point.

use crate::engine::arena::Arena;
use crate::engine::chunked::Pending;
use crate::store::{generations, Store, StoreError};
use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::directory::DirectoryCache;
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::naming::generation_file_name;
use recall_core::query::{Query, QueryError};
use recall_core::search::{Budgets, SearchEnv};
use recall_core::{CatalogError, LoadError, Response, SegmentSet, ShardGrams};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The store's manifests and shards, as the search core sees them.
#[derive(Clone, Debug)]
pub struct StoreCatalog {
    store: Arc<Store>,
    arena: Arc<Arena>,
    /// Planning tables of the snapshots searched last (shared by clones).
    directories: Arc<DirectoryCache>,
}

impl StoreCatalog {
    /// A catalog over `store`, caching shards in `arena`.
    pub fn new(store: Arc<Store>, arena: Arc<Arena>) -> StoreCatalog {
        StoreCatalog {
            store,
            arena,
            directories: Arc::default(),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Reads what the first search of the current snapshot would: the
    /// manifest, the live segments (opened and checked) and the planning
    /// directory, so that search does not pay for them (at 10 GB they took
    /// 427 ms, and the first search came back partial). A daemon calls it
    /// at start and after each sweep; a search meanwhile waits for the same
    /// directory instead of building its own.
    pub fn warm(&self) {
        if let Ok(manifest) = Catalog::current(self) {
            let _ = self.directories.get(&manifest, Catalog::segments(self));
        }
    }

    /// Runs a §4 search with the given budgets. `building` = the first
    /// backfill has not finished (`state: "building"`).
    pub fn search(
        &self,
        query: &Query,
        building: bool,
        budgets: Budgets,
    ) -> Result<Response, QueryError> {
        let started = Instant::now();
        let clock = move || started.elapsed().as_millis() as u64;
        self.search_with_clock(query, building, budgets, &clock)
    }

    /// [`StoreCatalog::search`] with the given monotonic clock in ms (tests
    /// drive the deadline with a clock that follows the work done).
    pub fn search_with_clock(
        &self,
        query: &Query,
        building: bool,
        budgets: Budgets,
        clock: &dyn Fn() -> u64,
    ) -> Result<Response, QueryError> {
        let env = SearchEnv {
            catalog: self,
            directories: None,
            clock,
            clock_us: None,
            budgets,
            building,
        };
        let r = recall_core::search(query, &self.own(&env));
        self.after_search();
        r
    }

    /// What every search leaves behind: a damage note for each segment it
    /// found a bad block in, and the segment maps' pages dropped when the
    /// process holds too many.
    pub fn after_search(&self) {
        self.store.note_damaged_segments();
        self.store.bound_segment_pages();
    }

    /// `env` with this catalog's directory cache and debug clock.
    pub fn own<'a>(&'a self, env: &SearchEnv<'a>) -> SearchEnv<'a> {
        SearchEnv {
            directories: Some(&self.directories),
            clock_us: Some(&clock_us),
            ..*env
        }
    }
}

impl Catalog for StoreCatalog {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.store
            .current()
            .map_err(|e| CatalogError(e.to_string()))
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        self.store.snapshot(store_id, revision)
    }

    fn segments(&self) -> Option<Arc<SegmentSet>> {
        self.store.live_segment_set()
    }

    fn load_cost(&self, _key: &str, entry: &ManifestEntry, tools: bool) -> u64 {
        match self.arena.has_shard(&entry.generation_file, tools) {
            true => 0,
            false => entry.bytes,
        }
    }

    fn grams(&self, _key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let name = &entry.generation_file;
        self.arena.grams(name, || self.store.grams_bytes(name))
    }

    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        self.load_within(key, entry, tools, &|| false)?
            .ok_or_else(|| LoadError::Io {
                name: entry.generation_file.clone(),
                reason: "the load stopped before its end".to_string(),
            })
    }

    /// Reads and prepares the shard a chunk at a time ([`Pending`]),
    /// asking `expired` after each; an interrupted load is kept by the arena
    /// for the next query, a finished one is cached.
    fn load_within(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<LoadedShard>, LoadError> {
        let r = self.load_chunked(key, entry, tools, expired);
        if let Err(LoadError::Damaged { name, .. }) = &r {
            // The indexer re-extracts it at its next sweep.
            self.store.note_damaged(name);
        }
        r
    }
}

impl StoreCatalog {
    /// [`Catalog::load_within`] without the damage note.
    fn load_chunked(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<LoadedShard>, LoadError> {
        let name = &entry.generation_file;
        if let Some(shard) = self.arena.cached(name, tools) {
            return Ok(Some(LoadedShard {
                shard,
                fresh_bytes: 0,
            }));
        }
        let mut load = match self.arena.take_pending(name, tools) {
            Some(p) => p,
            None => {
                let path =
                    generations::path(self.store.generations_dir(), name).ok_or_else(|| {
                        LoadError::Damaged {
                            name: name.clone(),
                            reason: "not a generation file name".to_string(),
                        }
                    })?;
                Pending::open(&path, name, tools)?
            }
        };
        loop {
            // The sidecar, when there is one, spares building the filters
            // again: they were 44 % of a cold load's time at 10 GB (perf,
            // 3-term queries), and a shard a segment covers never needs
            // them for its own search.
            let known = || self.grams(key, entry);
            let done = load.chunk(known, self.arena.worked())?;
            if let Some(shard) = done {
                let shard = Arc::new(shard);
                self.arena.keep_loaded(name, shard.clone());
                return Ok(Some(LoadedShard {
                    shard,
                    fresh_bytes: load.fresh,
                }));
            }
            if !load.small() && expired() {
                self.arena.keep_pending(name, load);
                return Ok(None);
            }
        }
    }
}

/// A generation's bytes, refused unless they hash to its name: a file that
/// was truncated or overwritten (even by another valid shard) is never
/// searched as if it were the session's.
pub(crate) fn read_verified(store: &Store, name: &str) -> Result<Vec<u8>, LoadError> {
    let bytes = store.generation_bytes(name).map_err(|e| match e {
        StoreError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            LoadError::Missing {
                name: name.to_string(),
            }
        }
        e => LoadError::Io {
            name: name.to_string(),
            reason: e.to_string(),
        },
    })?;
    if generation_file_name(&bytes) != name {
        return Err(LoadError::Damaged {
            name: name.to_string(),
            reason: "its bytes do not hash to its name".to_string(),
        });
    }
    Ok(bytes)
}

/// A monotonic clock in microseconds since first use (`debug`'s phase times).
fn clock_us() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}
