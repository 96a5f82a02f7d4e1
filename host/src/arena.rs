//! The arena: a byte-bounded LRU of prepared shards shared by all queries.
//!
//! Shards are keyed by generation file name (content-named, so a cached
//! shard is never stale). Each costs its `heap_bytes()`; inserting beyond
//! the budget evicts the least recently used. A shard larger than the whole
//! budget is handed out but not kept. Loads happen outside the lock, so two
//! queries may prepare the same shard at once; the second insert is a no-op.

use recall_core::PreparedShard;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// Default budget: 192 MiB.
pub const DEFAULT_ARENA_BYTES: usize = 192 << 20;

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

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<String, (Arc<PreparedShard>, usize, u64)>,
    order: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
    hits: u64,
    misses: u64,
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
    /// The budget.
    pub budget: usize,
    /// Lookups served from the cache.
    pub hits: u64,
    /// Lookups that loaded.
    pub misses: u64,
}

/// The shared shard cache.
#[derive(Debug)]
pub struct Arena {
    budget: usize,
    inner: Mutex<Inner>,
}

impl Default for Arena {
    fn default() -> Arena {
        Arena::new(DEFAULT_ARENA_BYTES)
    }
}

impl Arena {
    /// An arena holding at most `budget` heap bytes of shards.
    pub fn new(budget: usize) -> Arena {
        Arena {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The cached shard `name`, or `read()`'s bytes prepared and cached.
    pub fn get_or_load(
        &self,
        name: &str,
        read: impl FnOnce() -> Result<Vec<u8>, String>,
    ) -> Result<Loaded, ArenaError> {
        if let Some(shard) = self.hit(name) {
            return Ok(Loaded {
                shard,
                fresh_bytes: 0,
            });
        }
        let bytes = read().map_err(|message| ArenaError::Read {
            name: name.to_string(),
            message,
        })?;
        let shard = PreparedShard::from_bytes(&bytes).map_err(|source| ArenaError::Parse {
            name: name.to_string(),
            source,
        })?;
        let shard = Arc::new(shard);
        self.insert(name, shard.clone());
        Ok(Loaded {
            shard,
            fresh_bytes: bytes.len() as u64,
        })
    }

    fn hit(&self, name: &str) -> Option<Arc<PreparedShard>> {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.tick += 1;
        let tick = g.tick;
        let Some((shard, _, last)) = g.map.get_mut(name) else {
            g.misses += 1;
            return None;
        };
        let (shard, old) = (shard.clone(), *last);
        *last = tick;
        g.order.remove(&old);
        g.order.insert(tick, name.to_string());
        g.hits += 1;
        Some(shard)
    }

    fn insert(&self, name: &str, shard: Arc<PreparedShard>) {
        let size = shard.heap_bytes();
        if size > self.budget {
            return;
        }
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.map.contains_key(name) {
            return;
        }
        while g.bytes + size > self.budget {
            let Some((_, victim)) = g.order.pop_first() else {
                break;
            };
            if let Some((_, s, _)) = g.map.remove(&victim) {
                g.bytes -= s;
            }
        }
        g.tick += 1;
        let tick = g.tick;
        g.order.insert(tick, name.to_string());
        g.map.insert(name.to_string(), (shard, size, tick));
        g.bytes += size;
    }

    /// Current statistics.
    pub fn stats(&self) -> ArenaStats {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        ArenaStats {
            shards: g.map.len(),
            bytes: g.bytes,
            budget: self.budget,
            hits: g.hits,
            misses: g.misses,
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
                .get_or_load(n, || Ok(body(&"a".repeat(1000))))
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
    fn bad_bytes_are_an_error_not_a_panic() {
        let arena = Arena::default();
        assert!(matches!(
            arena.get_or_load("x", || Ok(b"{".to_vec())),
            Err(ArenaError::Parse { .. })
        ));
        assert!(matches!(
            arena.get_or_load("y", || Err("gone".into())),
            Err(ArenaError::Read { .. })
        ));
    }
}
