//! `recall_core::Catalog` over the on-disk store and the shared arena, and
//! the host's search entry point.

use crate::arena::Arena;
use crate::store::Store;
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::query::{QueryError, Request};
use recall_core::search::{Budgets, Catalog, LoadedShard, SearchEnv};
use recall_core::{Response, ShardGrams};
use std::sync::Arc;
use std::time::Instant;

/// The store's manifests and shards, as the search core sees them.
#[derive(Clone, Debug)]
pub struct StoreCatalog {
    store: Arc<Store>,
    arena: Arc<Arena>,
}

impl StoreCatalog {
    /// A catalog over `store`, caching shards in `arena`.
    pub fn new(store: Arc<Store>, arena: Arc<Arena>) -> StoreCatalog {
        StoreCatalog { store, arena }
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Runs a §4 search with the given budgets. `building` = the first
    /// backfill has not finished (`state: "building"`).
    pub fn search(
        &self,
        request: &Request,
        building: bool,
        budgets: Budgets,
    ) -> Result<Response, QueryError> {
        let started = Instant::now();
        let clock = move || started.elapsed().as_millis() as u64;
        let env = SearchEnv {
            catalog: self,
            clock: &clock,
            budgets,
            building,
        };
        recall_core::search(request, &env)
    }
}

impl Catalog for StoreCatalog {
    fn current(&self) -> Arc<Manifest> {
        self.store
            .current()
            .unwrap_or_else(|_| Arc::new(Manifest::empty(String::new(), 0)))
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        self.store.snapshot(store_id, revision)
    }

    fn grams(&self, _key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let name = &entry.generation_file;
        self.arena.grams(name, || self.store.grams_bytes(name))
    }

    fn load(&self, _key: &str, entry: &ManifestEntry, tools: bool) -> Result<LoadedShard, String> {
        let name = &entry.generation_file;
        self.arena
            .get_or_load(name, tools, || {
                self.store.generation_bytes(name).map_err(|e| e.to_string())
            })
            .map(|l| {
                let stale = || {
                    self.store
                        .grams_bytes(name)
                        .and_then(|b| ShardGrams::from_bytes(&b))
                        .is_none()
                };
                if l.fresh_bytes > 0 && stale() {
                    // A store written before filters existed (or in an older
                    // format), or a lost sidecar: write it (a pure function
                    // of the generation), so later searches can skip or
                    // order this shard unread.
                    let _ = self.store.write_grams(name, &l.shard.grams.to_bytes());
                }
                LoadedShard {
                    shard: l.shard,
                    fresh_bytes: l.fresh_bytes,
                }
            })
            .map_err(|e| e.to_string())
    }
}
