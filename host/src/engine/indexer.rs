//! The write side of `recall serve`: [`IndexerHandle`], the one handle on
//! the store's incremental [`Indexer`] — status, sweeps and refreshes, the
//! store policy, clearing, following other processes' changes, and
//! re-reading a session's sources for `locate`. A server without an
//! indexer has no handle at all (see [`super::served::Served`]).

use super::EngineError;
use crate::engine::catalog::StoreCatalog;
use crate::extract::Extracted;
use crate::index::{IndexStatus, Indexer};
use crate::store::policy::{self, Policy};
use recall_core::model::{ManifestEntry, Source};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The periodic sweep runs even when the watch saw no change this often
/// (retention, garbage collection, and whatever inotify cannot see).
const FULL_SWEEP_EVERY: Duration = Duration::from_secs(600);

/// A replacement of the re-extraction `locate` uses (tests only: to hold
/// it open).
#[cfg(any(test, feature = "test-support"))]
pub type Reextract =
    dyn Fn(&str, &ManifestEntry) -> Result<Option<Extracted>, EngineError> + Send + Sync;

/// The indexer of the served store, as the server drives it.
pub struct IndexerHandle {
    indexer: Arc<Indexer>,
    catalog: StoreCatalog,
    indexing: bool,
    /// The store policy's `enabled`, changeable while serving.
    enabled: AtomicBool,
    /// Cleared through this server and not yet rebuilt: searches answer
    /// `building`, status says `indexing`.
    rebuilding: AtomicBool,
    /// The policy in force changed since the follow loop last looked: it
    /// sweeps (in full) at once.
    policy_changed: AtomicBool,
    /// The store id this server's last successful sweep built (or its own
    /// clear made): a store that needs a backfill under another id was
    /// cleared by another process (`recall clear`).
    seen_store_id: Mutex<Option<String>>,
    #[cfg(any(test, feature = "test-support"))]
    reextract: Option<Box<Reextract>>,
}

impl std::fmt::Debug for IndexerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexerHandle")
            .field("indexing", &self.indexing)
            .field("enabled", &self.enabled)
            .field("rebuilding", &self.rebuilding)
            .finish_non_exhaustive()
    }
}

impl IndexerHandle {
    /// Drives `indexer` over `catalog`'s store (`indexing` = whether this
    /// server runs sweeps at all). Starts nothing: `recall serve` starts the
    /// roots watch with [`IndexerHandle::watch_sources`].
    pub fn new(indexer: Arc<Indexer>, catalog: StoreCatalog, indexing: bool) -> IndexerHandle {
        IndexerHandle {
            indexer,
            catalog,
            indexing,
            enabled: AtomicBool::new(true),
            rebuilding: AtomicBool::new(false),
            policy_changed: AtomicBool::new(false),
            seen_store_id: Mutex::new(None),
            #[cfg(any(test, feature = "test-support"))]
            reextract: None,
        }
    }

    /// With indexing: watches the roots for changes (see
    /// [`Indexer::watch_sources`]) and hands each live shard a refresh
    /// writes to the arena.
    pub fn watch_sources(self) -> IndexerHandle {
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
    pub fn with_enabled(self, enabled: bool) -> IndexerHandle {
        self.enabled.store(enabled, Ordering::Relaxed);
        self
    }

    /// Replaces the re-extraction used by `locate` (tests only).
    #[cfg(any(test, feature = "test-support"))]
    pub fn with_reextract(mut self, f: Box<Reextract>) -> IndexerHandle {
        self.reextract = Some(f);
        self
    }

    /// The indexer.
    pub fn indexer(&self) -> &Arc<Indexer> {
        &self.indexer
    }

    /// Whether this server sweeps: it indexes, and the policy is enabled.
    pub fn enabled(&self) -> bool {
        self.indexing && self.enabled.load(Ordering::Relaxed)
    }

    /// True until the first backfill has finished, and after a clear until
    /// the rebuild has.
    pub fn building(&self) -> bool {
        !self.indexer.backfilled() || self.rebuilding.load(Ordering::Relaxed)
    }

    /// The indexer's status.
    pub fn status(&self) -> IndexStatus {
        let p = self.indexer.progress().snapshot();
        IndexStatus {
            enabled: self.enabled(),
            // Cleared (here or by another process) or never backfilled: an
            // index being built is not "current", even between sweeps.
            phase: super::status::phase(
                self.enabled(),
                self.building(),
                Some(p.phase),
                !p.degraded_roots.is_empty(),
                self.indexer.backfilled(),
            ),
            files_indexed: p.indexed_so_far(),
            files_due: p.files_due.saturating_sub(p.files_done),
            files_failed: p.files_failed,
            degraded_roots: p.degraded_roots,
            last_sweep_ms: p.last_sweep_ms.or_else(|| self.indexer.last_sweep_ms()),
            last_reconcile_ms: p.last_reconcile_ms,
            failed_units: self.indexer.failed_units(),
            truncated_sessions: self.indexer.truncated_sessions(),
            skipped_files: p.skipped_files,
            retired: self.indexer.retired(),
        }
    }

    /// The agent directories the indexer looks in, with their source (the
    /// dashboard's empty state lists them; export never reads outside them).
    pub fn roots(&self) -> Vec<(Source, PathBuf)> {
        self.indexer
            .options()
            .roots
            .all()
            .into_iter()
            .map(|(s, p)| (s, p.to_path_buf()))
            .collect()
    }

    /// The history window the index holds in days (`None` = keeps
    /// everything): the response's `window_days`. A policy change shows
    /// here once the sweep it starts has applied it.
    pub fn window_days(&self) -> Option<u32> {
        Some(self.indexer.applied_days()).filter(|&d| d > 0)
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        Policy {
            enabled: self.enabled.load(Ordering::Relaxed),
            history_days: self.indexer.history_days(),
            exclude_paths: self.indexer.exclude_paths(),
        }
    }

    /// Puts a policy in force: `enabled` at once; a changed window or
    /// exclusion by a full sweep the follow loop starts at once
    /// ([`IndexerHandle::follow_store`]).
    fn apply_policy(&self, p: Policy) {
        if p != self.policy() {
            self.policy_changed.store(true, Ordering::Relaxed);
        }
        self.enabled.store(p.enabled, Ordering::Relaxed);
        self.indexer.set_history_days(p.history_days);
        self.indexer.set_exclude_paths(p.exclude_paths);
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

    /// Runs one sweep when one is due (the first call is the backfill).
    /// Called by the server's indexer loop; nothing while not
    /// [`IndexerHandle::enabled`].
    pub fn sweep(&self) -> Result<(), EngineError> {
        if !self.enabled() {
            return Ok(());
        }
        match self.indexer.tick(FULL_SWEEP_EVERY) {
            Some(Err(e)) => Err(EngineError::unavailable(e.to_string())),
            // A sweep ran (or none was due) over a backfilled store: any
            // rebuild is over.
            ran => {
                self.built();
                if ran.is_some() {
                    // What it published is planned here, not by the next
                    // search.
                    self.catalog.warm();
                }
                Ok(())
            }
        }
    }

    /// Query-time refresh: runs an incremental sweep when the last one
    /// finished more than `max_age` ago — never before the backfill is done,
    /// and never waiting behind a sweep that is already running.
    pub fn refresh(&self, max_age: Duration) {
        if !self.enabled() {
            return;
        }
        if let Some(Err(e)) = self.indexer.refresh(max_age) {
            tracing::warn!(target: "recall::index", error = %e, "query-time refresh failed");
        }
    }

    /// `freshness=wait-until-current`: brings the index up to date with the
    /// sources now (waiting for a sweep already running), reporting a
    /// failure. A disabled store is served as it is: nothing to reconcile.
    pub fn reconcile(&self) -> Result<(), EngineError> {
        if !self.enabled() {
            return Ok(());
        }
        // `sweep` waits for a sweep already running, then runs its own.
        let r = self.indexer.sweep();
        if r.is_ok() {
            self.built();
        }
        r.map(|_| ())
            .map_err(|e| EngineError::unavailable(e.to_string()))
    }

    /// Deletes the index (a new store id; never a transcript): `POST
    /// /api/index/clear`. Returns `{store_id, revision}`.
    pub fn clear(&self) -> Result<serde_json::Value, EngineError> {
        let m = self
            .catalog
            .store()
            .clear()
            .map_err(|e| EngineError::unavailable(e.to_string()))?;
        // Until the rebuild (started by the route) finishes, an empty index
        // is not "current".
        self.rebuilding.store(self.enabled(), Ordering::Relaxed);
        *lock(&self.seen_store_id) = Some(m.store_id.clone());
        Ok(serde_json::json!({"store_id": m.store_id, "revision": m.revision}))
    }

    /// Changes the store's policy (`POST /api/index/policy`); returns the
    /// policy now stored and what the change retires. With `dry_run`,
    /// changes nothing: the policy it would store and what it would retire.
    pub fn set_policy(
        &self,
        enabled: Option<bool>,
        history_days: Option<u32>,
        dry_run: bool,
    ) -> Result<serde_json::Value, EngineError> {
        let store = self.catalog.store();
        let msg = |e: policy::PolicyError| EngineError::unavailable(e.to_string());
        let mut p = policy::load(store.dir()).map_err(msg)?;
        let now = self
            .indexer
            .options()
            .now_ms
            .unwrap_or_else(crate::store::wall_ms);
        let retires = match history_days {
            Some(d) => {
                let m = store
                    .current()
                    .map_err(|e| EngineError::unavailable(e.to_string()))?;
                policy::would_retire(&m, now, d).len()
            }
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
            self.apply_policy(p.clone());
        }
        Ok(serde_json::json!({
            "policy": &p,
            "retires": retires,
            "dry_run": dry_run,
        }))
    }

    /// Looks at what other processes changed in the store (a `recall
    /// clear`, a `recall config set`) and follows it; true = sweep now.
    /// Called by the server's indexer loop about once a second.
    pub fn follow_store(&self) -> bool {
        let mut sweep_now = false;
        match policy::load(self.catalog.store().dir()) {
            Ok(p) => {
                self.apply_policy(p);
                // Changed here (`POST /api/index/policy`) or by another
                // process (`recall config set`).
                sweep_now |= self.policy_changed.swap(false, Ordering::Relaxed) && self.enabled();
            }
            // A damaged policy is never replaced by a guess: keep serving
            // with the one in force.
            Err(e) => tracing::warn!(target: "recall::index", error = %e, "policy unreadable"),
        }
        // A search found a damaged generation: the next sweep reads its
        // session again.
        sweep_now |= self.enabled() && self.catalog.store().has_damage_notes();
        // Cleared by another process (`recall clear`): the store needs a
        // backfill under a store id no sweep of this server has built.
        if self.enabled() && !self.indexer.backfilled() {
            if let Ok(m) = self.catalog.store().current() {
                if lock(&self.seen_store_id).as_deref() != Some(m.store_id.as_str()) {
                    self.rebuilding.store(true, Ordering::Relaxed);
                    sweep_now = true;
                }
            }
        }
        sweep_now
    }

    /// Re-reads one session from its source files (for `locate`). Reads only
    /// the files listed in the entry. `Ok(None)` = the files no longer yield
    /// this session.
    pub fn reextract(
        &self,
        key: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<Extracted>, EngineError> {
        #[cfg(any(test, feature = "test-support"))]
        if let Some(f) = &self.reextract {
            return f(key, entry);
        }
        crate::index::verify::reextract(key, entry)
            .map_err(|e| EngineError::unavailable(e.to_string()))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
