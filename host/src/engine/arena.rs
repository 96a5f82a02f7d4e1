//! The arena: byte-bounded LRU caches shared by all queries — prepared
//! shards, and the trigram filters that let a search skip a shard without
//! loading it.
//!
//! Both are keyed by generation file name (content-named, so a cached entry
//! is never stale). A shard costs its `heap_bytes()`; inserting beyond the
//! budget evicts the least recently used, scan-resistantly (segmented LRU:
//! shards used once go before shards used again). A shard larger than the whole
//! budget is kept apart, in [`OVERSIZED_KEPT`] slots of their own (most
//! recently used kept), so the pages that search it do not prepare it again.
//! Loads happen outside the lock, so two queries may prepare the same shard
//! at once; the second insert is a no-op.
//!
//! The arena also keeps the loads a query's deadline interrupted
//! ([`crate::engine::chunked::Pending`], at most [`PENDING_KEPT`]), so the next query
//! goes on where that one stopped.

use crate::engine::chunked::Pending;
use recall_core::{PreparedShard, ShardGrams};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Shards bigger than the whole shard budget kept beside it (each is a
/// session too big for one query's load budget; keeping it spares the later
/// pages of a search preparing it again).
pub const OVERSIZED_KEPT: usize = 2;

/// Interrupted loads kept for the next query.
pub const PENDING_KEPT: usize = 2;

/// Default shard budget: 192 MiB.
pub const DEFAULT_ARENA_BYTES: usize = 192 << 20;

/// Default trigram filter budget: 64 MiB (about 1/16 of the folded text
/// they describe, so this covers ~1 GB of shards).
pub const DEFAULT_GRAMS_BYTES: usize = 64 << 20;

/// Why a shard could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// Reading its bytes failed.
    #[error("cannot read generation {name}: {message}")]
    Read {
        /// The generation.
        name: String,
        /// Why.
        message: String,
    },
    /// Its bytes are not a shard.
    #[error("generation {name} is not a shard: {source}")]
    Parse {
        /// The generation.
        name: String,
        /// Why.
        source: serde_json::Error,
    },
}

/// A byte-bounded, scan-resistant LRU map (segmented LRU): a new entry
/// starts in a probation segment and moves to the protected segment (4/5 of
/// the budget) when it is used again, so one query that streams through
/// many shards evicts other streamed shards, not the ones queries keep using.
#[derive(Debug)]
struct Lru<V> {
    map: HashMap<String, Slot<V>>,
    probation: BTreeMap<u64, String>,
    protected: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
    protected_bytes: usize,
    budget: usize,
    hits: u64,
    misses: u64,
}

#[derive(Debug)]
struct Slot<V> {
    value: Arc<V>,
    size: usize,
    tick: u64,
    protected: bool,
}

impl<V> Lru<V> {
    fn new(budget: usize) -> Lru<V> {
        Lru {
            map: HashMap::new(),
            probation: BTreeMap::new(),
            protected: BTreeMap::new(),
            tick: 0,
            bytes: 0,
            protected_bytes: 0,
            budget,
            hits: 0,
            misses: 0,
        }
    }

    fn protected_budget(&self) -> usize {
        self.budget / 5 * 4
    }

    fn get(&mut self, name: &str) -> Option<Arc<V>> {
        self.tick += 1;
        let tick = self.tick;
        let limit = self.protected_budget();
        let Some(slot) = self.map.get_mut(name) else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        let value = slot.value.clone();
        let (old, was_protected, size) = (slot.tick, slot.protected, slot.size);
        slot.tick = tick;
        if was_protected {
            self.protected.remove(&old);
            self.protected.insert(tick, name.to_string());
        } else if size <= limit {
            slot.protected = true;
            self.probation.remove(&old);
            self.protected.insert(tick, name.to_string());
            self.protected_bytes += size;
            self.demote(limit);
        } else {
            self.probation.remove(&old);
            self.probation.insert(tick, name.to_string());
        }
        Some(value)
    }

    /// Moves the least recently used protected entries back to probation
    /// until the protected segment fits its share.
    fn demote(&mut self, limit: usize) {
        while self.protected_bytes > limit {
            let Some((_, victim)) = self.protected.pop_first() else {
                break;
            };
            self.tick += 1;
            if let Some(slot) = self.map.get_mut(&victim) {
                slot.protected = false;
                slot.tick = self.tick;
                self.protected_bytes -= slot.size;
            }
            self.probation.insert(self.tick, victim);
        }
    }

    /// Inserts `value`; returns what was evicted, for the caller to drop
    /// after releasing the lock (freeing a large shard takes a while, and
    /// other searches should not wait for it).
    #[must_use = "drop the evicted values outside the lock"]
    fn insert(&mut self, name: &str, value: Arc<V>, size: usize) -> Vec<Arc<V>> {
        let mut evicted = Vec::new();
        if size > self.budget || self.map.contains_key(name) {
            return evicted;
        }
        while self.bytes + size > self.budget {
            let victim = match self.probation.pop_first() {
                Some((_, v)) => v,
                None => match self.protected.pop_first() {
                    Some((_, v)) => v,
                    None => break,
                },
            };
            if let Some(slot) = self.map.remove(&victim) {
                self.bytes -= slot.size;
                if slot.protected {
                    self.protected_bytes -= slot.size;
                }
                evicted.push(slot.value);
            }
        }
        self.tick += 1;
        self.probation.insert(self.tick, name.to_string());
        self.map.insert(
            name.to_string(),
            Slot {
                value,
                size,
                tick: self.tick,
                protected: false,
            },
        );
        self.bytes += size;
        evicted
    }
}

/// A loaded shard and the bytes read to load it (0 on a cache hit).
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The shard.
    pub shard: Arc<PreparedShard>,
    /// Bytes read from storage for it.
    pub fresh_bytes: u64,
}

/// Cache statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArenaStats {
    /// Shards held.
    pub shards: usize,
    /// Their heap bytes.
    pub bytes: usize,
    /// The shard budget.
    pub budget: usize,
    /// Shard lookups served from the cache.
    pub hits: u64,
    /// Shard lookups that loaded.
    pub misses: u64,
    /// Trigram filters held.
    pub grams: usize,
    /// Their heap bytes.
    pub grams_bytes: usize,
    /// Shards bigger than the budget held beside it.
    pub oversized: usize,
    /// Interrupted loads held.
    pub pending: usize,
    /// Bytes read and prepared by chunked loads since the arena was made.
    pub worked_bytes: u64,
}

/// The shared caches.
#[derive(Debug)]
pub struct Arena {
    shards: Mutex<Lru<PreparedShard>>,
    grams: Mutex<Lru<ShardGrams>>,
    /// Slot name → shard, most recently used last.
    oversized: Mutex<Vec<(String, Arc<PreparedShard>)>>,
    /// Slot name → interrupted load, most recent last.
    pending: Mutex<Vec<(String, Pending)>>,
    worked: AtomicU64,
}

impl Default for Arena {
    fn default() -> Arena {
        Arena::new(DEFAULT_ARENA_BYTES)
    }
}

impl Arena {
    /// An arena holding at most `budget` heap bytes of shards (and the
    /// default budget of trigram filters).
    pub fn new(budget: usize) -> Arena {
        Arena::with_budgets(budget, DEFAULT_GRAMS_BYTES)
    }

    /// An arena with explicit shard and filter budgets.
    pub fn with_budgets(shards: usize, grams: usize) -> Arena {
        Arena {
            shards: Mutex::new(Lru::new(shards)),
            grams: Mutex::new(Lru::new(grams)),
            oversized: Mutex::default(),
            pending: Mutex::default(),
            worked: AtomicU64::new(0),
        }
    }

    /// The cached shard of `name` for a query that needs tool rows when
    /// `tools` (counted as a use).
    pub fn cached(&self, name: &str, tools: bool) -> Option<Arc<PreparedShard>> {
        let full = format!("{name}+tools");
        let hit = {
            let mut shards = self.shards.lock().unwrap_or_else(|p| p.into_inner());
            match tools {
                true => shards.get(&full),
                false => shards.get(name).or_else(|| shards.get(&full)),
            }
        };
        hit.or_else(|| {
            let mut big = self.oversized.lock().unwrap_or_else(|p| p.into_inner());
            let i = big
                .iter()
                .rposition(|(n, _)| *n == full || (!tools && n == name))?;
            let slot = big.remove(i);
            let shard = slot.1.clone();
            big.push(slot);
            Some(shard)
        })
    }

    /// Takes the interrupted load of `name` (for `tools`), if one is kept.
    pub fn take_pending(&self, name: &str, tools: bool) -> Option<Pending> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let i = pending
            .iter()
            .position(|(n, p)| n == name && p.tools() == tools)?;
        Some(pending.remove(i).1)
    }

    /// Keeps an interrupted load for the next query (the oldest beyond
    /// [`PENDING_KEPT`] is dropped, outside the lock).
    pub fn keep_pending(&self, name: &str, load: Pending) {
        let dropped = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.push((name.to_string(), load));
            let excess = pending.len().saturating_sub(PENDING_KEPT);
            pending.drain(..excess).collect::<Vec<_>>()
        };
        drop(dropped);
    }

    /// The counter chunked loads add their work to.
    pub fn worked(&self) -> &AtomicU64 {
        &self.worked
    }

    /// Whether `get_or_load(name, tools, …)` would be a cache hit (without
    /// counting as a use).
    pub fn has_shard(&self, name: &str, tools: bool) -> bool {
        let full = format!("{name}+tools");
        let shards = self.shards.lock().unwrap_or_else(|p| p.into_inner());
        let held = |n: &str| n == full || (!tools && n == name);
        shards.map.contains_key(&full)
            || (!tools && shards.map.contains_key(name))
            || self
                .oversized
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .any(|(n, _)| held(n))
    }

    /// The cached shard `name`, or `read()`'s bytes prepared and cached.
    /// `tools` = the caller needs tool rows: a shard prepared without them
    /// (the common, much smaller case) is cached under its own slot.
    pub fn get_or_load(
        &self,
        name: &str,
        tools: bool,
        read: impl FnOnce() -> Result<Vec<u8>, String>,
    ) -> Result<Loaded, ArenaError> {
        if let Some(shard) = self.cached(name, tools) {
            return Ok(Loaded {
                shard,
                fresh_bytes: 0,
            });
        }
        let bytes = read().map_err(|message| ArenaError::Read {
            name: name.to_string(),
            message,
        })?;
        let known = self
            .grams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name);
        let shard =
            PreparedShard::from_bytes_with_options(&bytes, known, tools).map_err(|source| {
                ArenaError::Parse {
                    name: name.to_string(),
                    source,
                }
            })?;
        let shard = Arc::new(shard);
        // Prepared with tool rows exactly when `tools`: the slot looked up.
        self.keep_loaded(name, shard.clone());
        Ok(Loaded {
            shard,
            fresh_bytes: bytes.len() as u64,
        })
    }

    /// Caches a shard prepared elsewhere (the indexer's, just written), under
    /// the slot its tool rows call for, with its filters. One bigger than the
    /// whole budget is not kept (only a search's own load keeps one:
    /// [`Arena::keep_loaded`]).
    pub fn insert(&self, name: &str, shard: Arc<PreparedShard>) {
        self.insert_with(name, shard, false)
    }

    /// Caches a shard a search has just loaded; one bigger than the whole
    /// budget takes an oversized slot (the least recently used is dropped).
    pub fn keep_loaded(&self, name: &str, shard: Arc<PreparedShard>) {
        self.insert_with(name, shard, true)
    }

    fn insert_with(&self, name: &str, shard: Arc<PreparedShard>, oversized: bool) {
        let slot = if shard.has_tools {
            format!("{name}+tools")
        } else {
            name.to_string()
        };
        let size = shard.heap_bytes();
        let grams = shard.grams.clone();
        let gsize = grams.heap_bytes();
        let budget = self.shards.lock().unwrap_or_else(|p| p.into_inner()).budget;
        let evicted = match oversized && size > budget {
            false => self
                .shards
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(&slot, shard, size),
            true => {
                let mut big = self.oversized.lock().unwrap_or_else(|p| p.into_inner());
                match big.iter().any(|(n, _)| *n == slot) {
                    true => Vec::new(),
                    false => {
                        big.push((slot, shard));
                        let excess = big.len().saturating_sub(OVERSIZED_KEPT);
                        big.drain(..excess).map(|(_, s)| s).collect()
                    }
                }
            }
        };
        drop(evicted);
        let evicted = self
            .grams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name, grams, gsize);
        drop(evicted);
    }

    /// The cached trigram filters of `name`, or `read()`'s bytes parsed and
    /// cached; `None` when there are none (the shard is then loaded).
    pub fn grams(
        &self,
        name: &str,
        read: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<Arc<ShardGrams>> {
        let hit = self
            .grams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name);
        if hit.is_some() {
            return hit;
        }
        let g = Arc::new(ShardGrams::from_bytes(&read()?)?);
        let size = g.heap_bytes();
        let evicted =
            self.grams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(name, g.clone(), size);
        drop(evicted);
        Some(g)
    }

    /// Current statistics.
    pub fn stats(&self) -> ArenaStats {
        let s = self.shards.lock().unwrap_or_else(|p| p.into_inner());
        let g = self.grams.lock().unwrap_or_else(|p| p.into_inner());
        ArenaStats {
            shards: s.map.len(),
            bytes: s.bytes,
            budget: s.budget,
            hits: s.hits,
            misses: s.misses,
            grams: g.map.len(),
            grams_bytes: g.bytes,
            oversized: self.oversized.lock().map_or(0, |o| o.len()),
            pending: self.pending.lock().map_or(0, |p| p.len()),
            worked_bytes: self.worked.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Vec<u8> {
        format!(
            r#"{{"session":{{"source":"pi","session_id":"s","title":null,"cwd":null,"branch":null,"created_ms":1,"updated_ms":1,"messages":1,"parent":null,"resume":null,"paths":[]}},"records":[{{"role":"user","ts_ms":1,"text":"{text}","locator":{{"kind":"external_record_id","record_id":"r"}}}}],"marks":[]}}"#
        )
        .into_bytes()
    }

    #[test]
    fn hits_cost_nothing_and_budget_evicts_lru() {
        let one = PreparedShard::from_bytes(&body(&"a".repeat(1000)))
            .unwrap()
            .heap_bytes();
        let arena = Arena::new(one * 2 + one / 2);
        let load = |n: &str| {
            arena
                .get_or_load(n, false, || Ok(body(&"a".repeat(1000))))
                .unwrap()
        };
        assert!(load("a").fresh_bytes > 0);
        assert_eq!(load("a").fresh_bytes, 0);
        load("b");
        load("a"); // a is now more recent than b
        load("c"); // evicts b
        assert_eq!(arena.stats().shards, 2);
        assert_eq!(load("a").fresh_bytes, 0);
        assert!(load("b").fresh_bytes > 0);
        assert!(arena.stats().bytes <= arena.stats().budget);
    }

    #[test]
    fn a_streaming_query_does_not_evict_the_shards_queries_reuse() {
        let mut lru: Lru<u8> = Lru::new(100);
        for n in ["hot1", "hot2"] {
            let _ = lru.insert(n, Arc::new(0), 10);
            assert!(lru.get(n).is_some()); // used twice: protected
        }
        for i in 0..50 {
            let _ = lru.insert(&format!("scan{i}"), Arc::new(0), 10);
        }
        assert!(lru.get("hot1").is_some() && lru.get("hot2").is_some());
        assert!(lru.bytes <= 100);
        assert!(lru.protected_bytes <= 80);
        // The protected share is bounded: promoting many demotes the oldest.
        for i in 0..12 {
            let n = format!("p{i}");
            let _ = lru.insert(&n, Arc::new(0), 10);
            lru.get(&n);
        }
        assert!(lru.protected_bytes <= 80 && lru.bytes <= 100);
        assert_eq!(lru.map.len(), lru.probation.len() + lru.protected.len());
    }

    #[test]
    fn filters_come_from_loaded_shards_or_their_bytes() {
        let arena = Arena::default();
        let shard = PreparedShard::from_bytes(&body("zebrafinch")).unwrap();
        let bytes = shard.grams.to_bytes();
        let g = arena.grams("x", || Some(bytes.clone())).unwrap();
        assert!(g.may_match(&[b"zebra"], true, false));
        assert!(!g.may_match(&[b"quokka"], true, false));
        assert!(arena.grams("y", || Some(b"junk".to_vec())).is_none());
        arena
            .get_or_load("z", false, || Ok(body("pangolin")))
            .unwrap();
        assert!(
            arena.grams("z", || None).is_some(),
            "a loaded shard leaves its filters"
        );
    }

    #[test]
    fn a_search_keeps_shards_bigger_than_the_budget_beside_it_the_indexer_does_not() {
        let shard = || Arc::new(PreparedShard::from_bytes(&body(&"a".repeat(1000))).unwrap());
        let arena = Arena::new(100);
        arena.insert("indexed", shard());
        assert!(arena.cached("indexed", false).is_none());
        for n in ["x", "y", "z"] {
            arena.keep_loaded(n, shard());
        }
        assert_eq!(arena.stats().oversized, OVERSIZED_KEPT);
        assert!(arena.cached("x", false).is_none(), "the oldest went");
        assert!(arena.has_shard("y", false) && arena.cached("z", false).is_some());
        assert_eq!(arena.stats().shards, 0, "the budget itself holds none");
        // The most recently used stays.
        arena.cached("y", false);
        arena.keep_loaded("w", shard());
        assert!(arena.has_shard("y", false) && !arena.has_shard("z", false));
    }

    #[test]
    fn bad_bytes_are_an_error_not_a_panic() {
        let arena = Arena::default();
        assert!(matches!(
            arena.get_or_load("x", false, || Ok(b"{".to_vec())),
            Err(ArenaError::Parse { .. })
        ));
        assert!(matches!(
            arena.get_or_load("y", false, || Err("gone".into())),
            Err(ArenaError::Read { .. })
        ));
    }
}
