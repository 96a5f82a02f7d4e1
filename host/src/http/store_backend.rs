//! The [`Backend`] of `recall serve`: the on-disk store, its shard arena and
//! its incremental indexer.

use super::backend::{Backend, BackendError, IndexStatus, SegmentListing, SegmentSummary};
use crate::catalog::StoreCatalog;
use crate::index::Indexer;
use crate::store::manifest;
use crate::store::StoreError;
use recall_core::model::Manifest;
use recall_core::Catalog;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The periodic sweep runs even when the watch saw no change this often
/// (retention, garbage collection, and whatever inotify cannot see).
const FULL_SWEEP_EVERY: Duration = Duration::from_secs(600);

/// The store, served.
#[derive(Debug)]
pub struct StoreBackend {
    indexer: Arc<Indexer>,
    catalog: StoreCatalog,
    indexing: bool,
    /// The store policy's `enabled`, changeable while serving.
    enabled: AtomicBool,
    /// Cleared through this server and not yet rebuilt: searches answer
    /// `building`, status says `indexing`.
    rebuilding: AtomicBool,
    /// The store id this server's last successful sweep built (or its own
    /// clear made): a store that needs a backfill under another id was
    /// cleared by another process (`recall clear`).
    seen_store_id: std::sync::Mutex<Option<String>>,
    demo: bool,
}

impl StoreBackend {
    /// Serves `catalog`'s store, kept current by `indexer` (`indexing` =
    /// whether this server runs sweeps at all). Starts nothing: the server
    /// starts the roots watch with [`StoreBackend::watch_sources`].
    pub fn new(indexer: Arc<Indexer>, catalog: StoreCatalog, indexing: bool) -> StoreBackend {
        StoreBackend {
            indexer,
            catalog,
            indexing,
            enabled: AtomicBool::new(true),
            rebuilding: AtomicBool::new(false),
            seen_store_id: std::sync::Mutex::new(None),
            demo: false,
        }
    }

    /// With indexing: watches the roots for changes (see
    /// [`Indexer::watch_sources`]) and hands each live shard a refresh
    /// writes to the arena.
    pub fn watch_sources(self) -> StoreBackend {
        if self.indexing {
            self.indexer.watch_sources();
            // A session an agent is writing is searched right after each
            // refresh: hand its new shard to the arena instead of having the
            // next search parse it back from disk.
            let arena = self.catalog.arena().clone();
            self.indexer
                .on_live_shard(crate::index::ShardHook::new(move |name, shard| {
                    arena.insert(name, shard)
                }));
            // A live append then writes only its generation and the
            // catalog's bookkeeping (checkpoint and segment come later).
            self.indexer.keep_live_in_memory();
        }
        self
    }

    /// Starts with the store policy's `enabled` (a disabled store is served
    /// as it is: no sweeps until it is enabled again).
    pub fn with_enabled(self, enabled: bool) -> StoreBackend {
        self.enabled.store(enabled, Ordering::Relaxed);
        self
    }

    fn sweeping(&self) -> bool {
        self.indexing && self.enabled.load(Ordering::Relaxed)
    }

    /// Marks this backend as serving the bundled demo home (the dashboard
    /// shows a banner).
    pub fn serving_demo(mut self, demo: bool) -> StoreBackend {
        self.demo = demo;
        self
    }

    /// Puts a policy in force: `enabled` at once, `history_days` from the
    /// next sweep.
    fn apply_policy(&self, p: crate::store::policy::Policy) {
        self.enabled.store(p.enabled, Ordering::Relaxed);
        self.indexer.set_history_days(p.history_days);
    }

    /// After a sweep that succeeded: a backfilled store is no longer being
    /// rebuilt, and its store id is one this server has built.
    fn built(&self) {
        if self.indexer.backfilled() {
            self.rebuilding.store(false, Ordering::Relaxed);
            if let Ok(m) = self.catalog.store().current() {
                *lock(&self.seen_store_id) = Some(m.store_id.clone());
            }
        }
    }

    /// The indexer.
    pub fn indexer(&self) -> &Arc<Indexer> {
        &self.indexer
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn err(e: StoreError) -> BackendError {
    BackendError::new(e.to_string())
}

impl Backend for StoreBackend {
    fn catalog(&self) -> &dyn Catalog {
        &self.catalog
    }

    fn manifest(&self) -> Result<Arc<Manifest>, BackendError> {
        self.catalog.store().current().map_err(err)
    }

    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError> {
        // Assembled from the catalog and its metas, serialized once per
        // revision: the `manifest.json` shape the browser reads.
        let store = self.catalog.store();
        match store.manifest_bytes().map_err(err)? {
            Some(b) => Ok(b),
            None => {
                let m = store.current().map_err(err)?;
                manifest::to_bytes(&m).map_err(|e| BackendError::new(e.to_string()))
            }
        }
    }

    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let Some(path) = self.catalog.store().generation_path(name) else {
            return Ok(None);
        };
        match std::fs::read(path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(BackendError::new(format!("cannot read a generation: {e}"))),
        }
    }

    fn segment_list(&self) -> Result<SegmentListing, BackendError> {
        let list = self.catalog.store().segment_list().map_err(err)?;
        Ok(SegmentListing {
            store_id: list.store_id,
            revision: list.revision,
            segments: list
                .segments
                .into_iter()
                .map(|s| SegmentSummary {
                    name: s.name,
                    generations: s.generations,
                    source_bytes: s.source_bytes,
                })
                .collect(),
        })
    }

    fn segment(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.catalog.store().segment_bytes(name).map_err(err)
    }

    fn status(&self) -> IndexStatus {
        let p = self.indexer.progress().snapshot();
        IndexStatus {
            enabled: self.sweeping(),
            // Cleared (here or by another process) or never backfilled: an
            // index being built is not "current", even between sweeps.
            phase: if self.sweeping() && self.building() {
                crate::index::Phase::Indexing
            } else {
                p.phase
            },
            files_indexed: p.indexed_so_far(),
            files_due: p.files_due.saturating_sub(p.files_done),
            files_failed: p.files_failed,
            degraded_roots: p.degraded_roots,
            last_sweep_ms: p.last_sweep_ms.or_else(|| self.indexer.last_sweep_ms()),
            last_reconcile_ms: p.last_reconcile_ms,
            failed_units: self.indexer.failed_units(),
            truncated_sessions: self.indexer.truncated_sessions(),
            skipped_files: p.skipped_files,
        }
    }

    fn roots(&self) -> Vec<(recall_core::model::Source, std::path::PathBuf)> {
        self.indexer
            .options()
            .roots
            .all()
            .into_iter()
            .map(|(s, p)| (s, p.to_path_buf()))
            .collect()
    }

    fn window_days(&self) -> Option<u32> {
        Some(self.indexer.history_days()).filter(|&d| d > 0)
    }

    fn reconcile(&self) -> Result<(), BackendError> {
        // A disabled store is served as it is: nothing to reconcile.
        if !self.sweeping() {
            return Ok(());
        }
        // `sweep` waits for a sweep already running, then runs its own.
        let r = self.indexer.sweep();
        if r.is_ok() {
            self.built();
        }
        r.map(|_| ()).map_err(|e| BackendError::new(e.to_string()))
    }

    fn clear(&self) -> Result<serde_json::Value, BackendError> {
        let m = self.catalog.store().clear().map_err(err)?;
        // Until the rebuild (started by the route) finishes, an empty index
        // is not "current".
        self.rebuilding.store(self.sweeping(), Ordering::Relaxed);
        *lock(&self.seen_store_id) = Some(m.store_id.clone());
        Ok(serde_json::json!({"store_id": m.store_id, "revision": m.revision}))
    }

    fn set_policy(
        &self,
        enabled: Option<bool>,
        history_days: Option<u32>,
        dry_run: bool,
    ) -> Result<serde_json::Value, BackendError> {
        use crate::store::policy;
        let store = self.catalog.store();
        let msg = |e: policy::PolicyError| BackendError::new(e.to_string());
        let mut p = policy::load(store.dir()).map_err(msg)?;
        let now = self
            .indexer
            .options()
            .now_ms
            .unwrap_or_else(crate::store::wall_ms);
        let retires = match history_days {
            Some(d) => policy::would_retire(&*self.manifest()?, now, d).len(),
            None => 0,
        };
        if let Some(e) = enabled {
            p.enabled = e;
        }
        if let Some(d) = history_days {
            p.history_days = d;
        }
        if !dry_run {
            policy::save(store.dir(), &p).map_err(msg)?;
            self.apply_policy(p);
        }
        Ok(serde_json::json!({
            "policy": p,
            "retires": retires,
            "dry_run": dry_run,
        }))
    }

    fn policy(&self) -> Option<crate::store::policy::Policy> {
        Some(crate::store::policy::Policy {
            enabled: self.enabled.load(Ordering::Relaxed),
            history_days: self.indexer.history_days(),
        })
    }

    fn follow_store(&self) -> bool {
        let mut sweep_now = false;
        match crate::store::policy::load(self.catalog.store().dir()) {
            Ok(p) => {
                let before = self.policy();
                self.apply_policy(p);
                sweep_now |= before != self.policy() && self.sweeping();
            }
            // A damaged policy is never replaced by a guess: keep serving
            // with the one in force.
            Err(e) => tracing::warn!(target: "recall::index", error = %e, "policy unreadable"),
        }
        // Cleared by another process (`recall clear`): the store needs a
        // backfill under a store id no sweep of this server has built.
        if self.sweeping() && !self.indexer.backfilled() {
            if let Ok(m) = self.catalog.store().current() {
                if lock(&self.seen_store_id).as_deref() != Some(m.store_id.as_str()) {
                    self.rebuilding.store(true, Ordering::Relaxed);
                    sweep_now = true;
                }
            }
        }
        sweep_now
    }

    fn demo(&self) -> bool {
        self.demo
    }

    fn enabled(&self) -> bool {
        self.sweeping()
    }

    fn building(&self) -> bool {
        !self.indexer.backfilled() || self.rebuilding.load(Ordering::Relaxed)
    }

    fn sweep(&self) -> Result<(), BackendError> {
        if !self.sweeping() {
            return Ok(());
        }
        match self.indexer.tick(FULL_SWEEP_EVERY) {
            Some(Err(e)) => Err(BackendError::new(e.to_string())),
            // A sweep ran (or none was due) over a backfilled store: any
            // rebuild is over.
            _ => {
                self.built();
                Ok(())
            }
        }
    }

    fn refresh(&self, max_age: Duration) {
        if !self.sweeping() {
            return;
        }
        if let Some(Err(e)) = self.indexer.refresh(max_age) {
            tracing::warn!(target: "recall::index", error = %e, "query-time refresh failed");
        }
    }
}
