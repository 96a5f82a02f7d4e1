//! A read-only search catalog for the MCP tools: the authorized view of
//! one call, retained snapshots cut to the same view (so a cursor pages a
//! stable snapshot), and shards read from the store without writing
//! anything back (the daemon's catalog writes missing filter sidecars; this
//! one never does).

use super::scope::View;
use crate::store::Store;
use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::{CatalogError, LoadError, PreparedShard, ShardGrams};
use std::sync::Arc;

/// The catalog of one tool call.
pub struct ReadOnlyCatalog<'a> {
    /// The store.
    pub store: &'a Store,
    /// What the call may see.
    pub view: &'a View,
}

impl ReadOnlyCatalog<'_> {
    /// Reads and prepares the shard of `entry`.
    pub fn prepared(&self, entry: &ManifestEntry, tools: bool) -> Result<PreparedShard, String> {
        let bytes = self
            .store
            .generation_bytes(&entry.generation_file)
            .map_err(|e| format!("store_unavailable: {e}"))?;
        let grams = self.grams_of(entry);
        PreparedShard::from_bytes_with_options(&bytes, grams, tools)
            .map_err(|e| format!("store_unavailable: the shard is not valid: {e}"))
    }

    fn grams_of(&self, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        self.store
            .grams_bytes(&entry.generation_file)
            .and_then(|b| ShardGrams::from_bytes(&b))
            .map(Arc::new)
    }
}

impl Catalog for ReadOnlyCatalog<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Ok(self.view.visible.clone())
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        let m = self.store.snapshot(store_id, revision)?;
        Some(Arc::new(self.view.restrict(&m)))
    }

    fn load(
        &self,
        _key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        let name = &entry.generation_file;
        let bytes = crate::engine::catalog::read_verified(self.store, name)?;
        let shard = PreparedShard::from_bytes_with_options(&bytes, self.grams_of(entry), tools)
            .map_err(|e| LoadError::Damaged {
                name: name.clone(),
                reason: e.to_string(),
            })?;
        Ok(LoadedShard {
            shard: Arc::new(shard),
            fresh_bytes: entry.bytes,
        })
    }

    fn grams(&self, _key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        self.grams_of(entry)
    }
}
