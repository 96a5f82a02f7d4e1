//! What a search reads: the [`Catalog`] trait (manifests, snapshots, shards,
//! their trigram filters and the index segments) and the [`LoadedShard`] it
//! hands back. Hosts implement it over their store and arena, the browser
//! over fetched bytes, [`crate::MemIndex`] over bytes in memory.

use crate::error::{CatalogError, LoadError};
use crate::grams::ShardGrams;
use crate::model::{Manifest, ManifestEntry};
use crate::prepared::PreparedShard;
use crate::segment::SegmentSet;
use std::sync::Arc;

/// A prepared shard handed to the search, and how many bytes were read from
/// storage to produce it (0 when it came from a cache).
#[derive(Clone, Debug)]
pub struct LoadedShard {
    /// The shard.
    pub shard: Arc<PreparedShard>,
    /// Bytes freshly loaded for this query.
    pub fresh_bytes: u64,
}

/// What the search reads: manifests and shards. The host implements it over
/// its store and arena; [`crate::MemIndex`] over bytes in memory.
pub trait Catalog {
    /// The manifest to search when no cursor is given.
    fn current(&self) -> Result<Arc<Manifest>, CatalogError>;
    /// A retained snapshot, for cursors minted before a publish.
    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>>;
    /// The prepared shard of a manifest entry. `tools` = the query searches
    /// tool rows, so the shard must have them (`PreparedShard::has_tools`);
    /// without it a shard prepared without tool rows will do. An error skips
    /// the session and makes the answer `partial` (`unreadable`).
    fn load(&self, key: &str, entry: &ManifestEntry, tools: bool)
        -> Result<LoadedShard, LoadError>;
    /// The shard's trigram filters when the catalog holds them without
    /// loading the shard (`None` = unknown: the shard is loaded and scanned).
    fn grams(&self, key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let _ = (key, entry);
        None
    }
    /// The index segments the catalog holds. A session whose generation a
    /// segment covers is a candidate only if that segment says it may match;
    /// any other session falls back to its filters and a scan.
    fn segments(&self) -> Option<Arc<SegmentSet>> {
        None
    }
    /// [`Catalog::load`] that may stop between chunks of reading and
    /// preparing once `expired()` says the scan deadline has passed:
    /// `Ok(None)` = not ready yet, the catalog keeps its progress so a later
    /// query goes on from there (each call does at least one chunk, so
    /// repeated calls finish). The default loads whole.
    fn load_within(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<LoadedShard>, LoadError> {
        let _ = expired;
        self.load(key, entry, tools).map(Some)
    }
    /// What loading the shard of `entry` would add to the query's load
    /// budget, known before reading it: its file size unless it is cached.
    /// The default, 0, means unknown (the load's own `fresh_bytes` is
    /// counted after the fact). A shard that costs more than what is left
    /// of the budget is not loaded once the page can stop before it; one
    /// that costs more than the whole budget (oversized) is loaded only as
    /// the first thing a page needs — the page before stops just before it
    /// (`partial_reason: "oversized"`, with a cursor).
    fn load_cost(&self, key: &str, entry: &ManifestEntry, tools: bool) -> u64 {
        let _ = (key, entry, tools);
        0
    }
}
