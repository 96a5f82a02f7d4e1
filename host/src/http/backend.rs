//! What the HTTP server needs from the store and the indexer.
//!
//! The routes are written against [`Backend`] only, so they can be served
//! from the on-disk store or from [`super::mem::MemBackend`] (tests, and a
//! fallback that needs no store). Every method is blocking: handlers call
//! them from `spawn_blocking`.

use crate::extract::{self, Extracted, SessionSource};
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::Catalog;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Why the store could not answer. Always served as 500 `store_unavailable`;
/// the message never contains query text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

impl BackendError {
    /// Builds an error from anything printable.
    pub fn new(message: impl Into<String>) -> BackendError {
        BackendError(message.into())
    }
}

/// The indexer's phase, as `/api/index/status` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// No sweep has run yet (or indexing is disabled).
    Idle,
    /// A sweep (the backfill or an incremental one) is running.
    Indexing,
    /// The last sweep finished and covered every root.
    Current,
    /// The last sweep finished but some root or file could not be read.
    Degraded,
}

/// The indexer's progress and health; revision, store id and coverage are
/// added by the route from the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexStatus {
    /// Whether this server runs an indexer at all.
    pub enabled: bool,
    /// What it is doing.
    pub phase: Phase,
    /// Source files indexed so far (the current sweep's progress while indexing).
    pub files_indexed: u64,
    /// Source files the current sweep still has to read.
    pub files_due: u64,
    /// Source files that could not be read in the last sweep.
    pub files_failed: u64,
    /// Roots that exist but could not be listed.
    pub degraded_roots: Vec<String>,
    /// Wall-clock epoch ms when the last sweep finished (`None` before the first).
    pub last_sweep_ms: Option<i64>,
}

impl IndexStatus {
    /// The status of a server without an indexer.
    pub fn disabled() -> IndexStatus {
        IndexStatus {
            enabled: false,
            phase: Phase::Idle,
            files_indexed: 0,
            files_due: 0,
            files_failed: 0,
            degraded_roots: Vec::new(),
            last_sweep_ms: None,
        }
    }
}

/// The store and indexer, as the server sees them.
pub trait Backend: Send + Sync + 'static {
    /// Manifests and prepared shards, for search and session views.
    fn catalog(&self) -> &dyn Catalog;

    /// The current manifest; an error when the store cannot be read (500
    /// `store_unavailable`).
    fn manifest(&self) -> Result<Arc<Manifest>, BackendError> {
        Ok(self.catalog().current())
    }

    /// The exact bytes of the current manifest (served to offline clients).
    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError>;

    /// The bytes of a generation file; `None` when no such generation exists.
    /// `name` has already been checked with
    /// [`recall_core::naming::is_generation_file_name`].
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError>;

    /// The indexer's status.
    fn status(&self) -> IndexStatus;

    /// True until the first backfill has finished.
    fn building(&self) -> bool;

    /// Runs one sweep (the first call is the backfill). Called by the
    /// server's indexer loop.
    fn sweep(&self) -> Result<(), BackendError>;

    /// Query-time refresh: runs an incremental sweep when the last one
    /// finished more than `max_age` ago — never before the backfill is done,
    /// and never waiting behind a sweep that is already running.
    fn refresh(&self, max_age: Duration);

    /// Re-reads one session from its source files (for `locate`). Reads only
    /// the files listed in the entry. `Ok(None)` = the files no longer yield
    /// this session.
    fn reextract(
        &self,
        key: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<Extracted>, BackendError> {
        reextract_paths(key, entry)
    }
}

/// Re-extracts a session from exactly the files its manifest entry lists.
pub fn reextract_paths(
    key: &str,
    entry: &ManifestEntry,
) -> Result<Option<Extracted>, BackendError> {
    let files: Vec<PathBuf> = entry.meta.paths.iter().map(PathBuf::from).collect();
    let Some(main) = files.first() else {
        return Ok(None);
    };
    if !main.exists() {
        return Ok(None);
    }
    let src = SessionSource {
        source: entry.meta.source,
        unit: main.to_string_lossy().into_owned(),
        files,
        context: serde_json::Value::Null,
    };
    match extract::extract(&src) {
        Ok(Some(x)) if x.meta.key() == key => Ok(Some(x)),
        Ok(_) => Ok(None),
        Err(e) => Err(BackendError::new(e.to_string())),
    }
}
