//! The arena: byte-bounded LRU caches shared by all queries — prepared
//! shards, and the trigram filters that let a search skip a shard without
//! loading it.
//!
//! Both are keyed by generation file name (content-named, so a cached entry
//! is never stale). A shard costs its `heap_bytes()`; inserting beyond the
//! budget evicts the least recently used, scan-resistantly (segmented LRU:
//! shards used once go before shards used again). A shard larger than the whole
//! budget is handed out but not kept. Loads happen outside the lock, so two
//! queries may prepare the same shard at once; the second insert is a no-op.

use recall_core::{PreparedShard, ShardGrams};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

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
}

/// The shared caches.
#[derive(Debug)]
pub struct Arena {
    shards: Mutex<Lru<PreparedShard>>,
    grams: Mutex<Lru<ShardGrams>>,
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
        }
    }

    /// Whether `get_or_load(name, tools, …)` would be a cache hit (without
    /// counting as a use).
    pub fn has_shard(&self, name: &str, tools: bool) -> bool {
        let shards = self.shards.lock().unwrap_or_else(|p| p.into_inner());
        shards.map.contains_key(&format!("{name}+tools"))
            || (!tools && shards.map.contains_key(name))
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
        let full = format!("{name}+tools");
        let hit = {
            let mut shards = self.shards.lock().unwrap_or_else(|p| p.into_inner());
            match tools {
                true => shards.get(&full),
                false => shards.get(name).or_else(|| shards.get(&full)),
            }
        };
        if let Some(shard) = hit {
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
        self.insert(name, shard.clone());
        Ok(Loaded {
            shard,
            fresh_bytes: bytes.len() as u64,
        })
    }

    /// Caches a shard prepared elsewhere (the indexer's, just written), under
    /// the slot its tool rows call for, with its filters.
    pub fn insert(&self, name: &str, shard: Arc<PreparedShard>) {
        let slot = if shard.has_tools {
            format!("{name}+tools")
        } else {
            name.to_string()
        };
        let size = shard.heap_bytes();
        let grams = shard.grams.clone();
        let gsize = grams.heap_bytes();
        let evicted = self
            .shards
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(&slot, shard, size);
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
