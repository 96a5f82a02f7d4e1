//! An in-memory [`ReadCatalog`] for tests: a manifest and generation files
//! built from extracted sessions, no files, no segments and no indexer
//! (served with `Served::read_only`).

use crate::engine::{EngineError, ReadCatalog, SegmentListing};
use crate::extract::Extracted;
use recall_core::model::{Manifest, ManifestEntry, Shard};
use recall_core::naming::generation_file_name;
use recall_core::{
    Catalog, CatalogError, LoadError, LoadedShard, PreparedShard, Query, QueryError, Response,
    SearchEnv,
};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// Generation bodies and their prepared shards, by file name.
type Generations = HashMap<String, (Arc<Vec<u8>>, Arc<PreparedShard>)>;

/// Sessions held in memory.
pub struct MemCatalog {
    manifest: RwLock<Arc<Manifest>>,
    generations: RwLock<Generations>,
    gate: Option<Arc<Gate>>,
}

impl MemCatalog {
    /// A catalog serving `sessions` as one manifest revision (1).
    pub fn new(store_id: &str, sessions: Vec<Extracted>) -> MemCatalog {
        let catalog = MemCatalog {
            manifest: RwLock::new(Arc::new(Manifest::empty(store_id.to_string(), 1))),
            generations: RwLock::new(HashMap::new()),
            gate: None,
        };
        catalog.publish(sessions);
        catalog
    }

    /// Replaces every session (revision + 1), like a store publish.
    pub fn publish(&self, sessions: Vec<Extracted>) {
        let mut gens = HashMap::new();
        let old = self.current_manifest();
        let mut manifest = Manifest::empty(old.store_id.clone(), old.parser_version);
        manifest.revision = old.revision + 1;
        manifest.updated_at_ms = old.updated_at_ms + 1;
        for x in sessions {
            let shard = Shard {
                session: x.meta.clone(),
                records: x.records,
                marks: x.marks,
            };
            let Ok(body) = serde_json::to_vec(&shard) else {
                continue;
            };
            let name = generation_file_name(&body);
            let max_ts_ms = shard.records.iter().map(|r| r.ts_ms).max();
            let entry = ManifestEntry {
                meta: x.meta,
                generation_file: name.clone(),
                records: shard.records.len() as u64,
                max_ts_ms,
                bytes: body.len() as u64,
                source_gone: false,
                files: Vec::new(),
                watermark: 0,
                state: serde_json::Value::Null,
            };
            manifest.sessions.insert(entry.meta.key(), entry);
            gens.insert(name, (Arc::new(body), Arc::new(PreparedShard::new(shard))));
        }
        if let Ok(mut g) = self.generations.write() {
            g.extend(gens);
        }
        if let Ok(mut m) = self.manifest.write() {
            *m = Arc::new(manifest);
        }
    }

    /// Makes every shard load wait on `gate` (to hold searches open in tests).
    pub fn with_gate(mut self, gate: Arc<Gate>) -> MemCatalog {
        self.gate = Some(gate);
        self
    }

    /// Marks a session's source as gone.
    pub fn set_source_gone(&self, key: &str) {
        if let Ok(mut m) = self.manifest.write() {
            let mut next = (**m).clone();
            if let Some(e) = next.sessions.get_mut(key) {
                e.source_gone = true;
            }
            next.revision += 1;
            *m = Arc::new(next);
        }
    }
}

impl MemCatalog {
    fn current_manifest(&self) -> Arc<Manifest> {
        match self.manifest.read() {
            Ok(m) => m.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

impl Catalog for MemCatalog {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Ok(self.current_manifest())
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        let m = self.current_manifest();
        (m.store_id == store_id && m.revision == revision).then_some(m)
    }

    fn load(
        &self,
        _key: &str,
        entry: &ManifestEntry,
        _tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        if let Some(g) = &self.gate {
            g.pass();
        }
        let gens = match self.generations.read() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        gens.get(&entry.generation_file)
            .map(|(_, s)| LoadedShard {
                shard: s.clone(),
                fresh_bytes: 0,
            })
            .ok_or_else(|| LoadError::Missing {
                name: entry.generation_file.clone(),
            })
    }
}

impl ReadCatalog for MemCatalog {
    fn catalog(&self) -> &dyn Catalog {
        self
    }

    fn manifest(&self) -> Result<Arc<Manifest>, EngineError> {
        Ok(self.current_manifest())
    }

    fn manifest_bytes(&self) -> Result<Vec<u8>, EngineError> {
        serde_json::to_vec(&*self.current_manifest())
            .map_err(|e| EngineError::unavailable(e.to_string()))
    }

    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        let gens = self
            .generations
            .read()
            .map_err(|_| EngineError::unavailable("generation table poisoned"))?;
        Ok(gens.get(name).map(|(b, _)| b.as_ref().clone()))
    }

    /// Sessions in memory have no segments: an empty list (searches run on
    /// filters and scans).
    fn segment_list(&self) -> Result<SegmentListing, EngineError> {
        Ok(SegmentListing::default())
    }

    fn segment(&self, _name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        Ok(None)
    }

    fn search(
        &self,
        query: &Query,
        host: Option<&str>,
        env: &SearchEnv<'_>,
    ) -> Result<Response, QueryError> {
        crate::engine::served::no_host_filter(host)?;
        recall_core::search(query, env)
    }
}

/// A gate that holds callers until opened; counts who is waiting.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<(bool, usize)>,
    cv: Condvar,
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Waits until the gate opens (at most 10 s, so a test can never hang).
    pub fn pass(&self) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.1 += 1;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !s.0 {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            match self.cv.wait_timeout(s, left) {
                Ok((g, _)) => s = g,
                Err(_) => return,
            }
        }
        s.1 -= 1;
    }

    /// How many callers are waiting.
    pub fn waiting(&self) -> usize {
        self.state.lock().map(|s| s.1).unwrap_or(0)
    }

    /// Opens the gate for good.
    pub fn open(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.0 = true;
        }
        self.cv.notify_all();
    }
}
