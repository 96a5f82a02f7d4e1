//! An in-memory [`Backend`]: a manifest and generation files built from
//! extracted sessions, no files and no sweeps. Tests serve it, and so does
//! anything that wants to serve a fixed set of sessions without a store.

use super::backend::{Backend, BackendError, IndexStatus, Phase};
use crate::extract::Extracted;
use recall_core::model::{Manifest, ManifestEntry, Shard};
use recall_core::naming::generation_file_name;
use recall_core::{Catalog, CatalogError, LoadError, LoadedShard, PreparedShard};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// A re-extraction hook for `locate` (defaults to the real extractors).
pub type Reextract =
    dyn Fn(&str, &ManifestEntry) -> Result<Option<Extracted>, BackendError> + Send + Sync;

/// Generation bodies and their prepared shards, by file name.
type Generations = HashMap<String, (Arc<Vec<u8>>, Arc<PreparedShard>)>;

/// Sessions held in memory.
pub struct MemBackend {
    manifest: RwLock<Arc<Manifest>>,
    generations: RwLock<Generations>,
    status: Mutex<IndexStatus>,
    building: Mutex<bool>,
    gate: Option<Arc<Gate>>,
    reextract: Option<Box<Reextract>>,
}

impl MemBackend {
    /// A backend serving `sessions` as one manifest revision (1).
    pub fn new(store_id: &str, sessions: Vec<Extracted>) -> MemBackend {
        let backend = MemBackend {
            manifest: RwLock::new(Arc::new(Manifest::empty(store_id.to_string(), 1))),
            generations: RwLock::new(HashMap::new()),
            status: Mutex::new(IndexStatus {
                enabled: false,
                phase: Phase::Current,
                files_indexed: 0,
                files_due: 0,
                files_failed: 0,
                degraded_roots: Vec::new(),
                last_sweep_ms: None,
                last_reconcile_ms: None,
                failed_units: Vec::new(),
                truncated_sessions: Vec::new(),
                skipped_files: Vec::new(),
            }),
            building: Mutex::new(false),
            gate: None,
            reextract: None,
        };
        backend.publish(sessions);
        backend
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
    pub fn with_gate(mut self, gate: Arc<Gate>) -> MemBackend {
        self.gate = Some(gate);
        self
    }

    /// Replaces the re-extraction used by `locate`.
    pub fn with_reextract(mut self, f: Box<Reextract>) -> MemBackend {
        self.reextract = Some(f);
        self
    }

    /// Sets the reported status.
    pub fn set_status(&self, status: IndexStatus) {
        if let Ok(mut s) = self.status.lock() {
            *s = status;
        }
    }

    /// Sets whether the first backfill is still running.
    pub fn set_building(&self, building: bool) {
        if let Ok(mut b) = self.building.lock() {
            *b = building;
        }
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

impl MemBackend {
    fn current_manifest(&self) -> Arc<Manifest> {
        match self.manifest.read() {
            Ok(m) => m.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

impl Catalog for MemBackend {
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

impl Backend for MemBackend {
    fn catalog(&self) -> &dyn Catalog {
        self
    }

    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError> {
        serde_json::to_vec(&*self.current_manifest()).map_err(|e| BackendError::new(e.to_string()))
    }

    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let gens = self
            .generations
            .read()
            .map_err(|_| BackendError::new("generation table poisoned"))?;
        Ok(gens.get(name).map(|(b, _)| b.as_ref().clone()))
    }

    fn status(&self) -> IndexStatus {
        self.status
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|_| IndexStatus::disabled())
    }

    fn building(&self) -> bool {
        self.building.lock().map(|b| *b).unwrap_or(false)
    }

    fn sweep(&self) -> Result<(), BackendError> {
        Ok(())
    }

    fn refresh(&self, _max_age: Duration) {}

    fn reextract(
        &self,
        key: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<Extracted>, BackendError> {
        match &self.reextract {
            Some(f) => f(key, entry),
            None => crate::index::verify::reextract(key, entry)
                .map_err(|e| BackendError::new(e.to_string())),
        }
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
