//! What the HTTP server needs from the store and the indexer.
//!
//! The routes are written against [`Backend`] only, so they can be served
//! from the on-disk store or from `MemBackend` (extracted sessions in
//! memory; built for tests only, feature `test-support`). Every method is blocking: handlers call
//! them from `spawn_blocking`.

use crate::extract::Extracted;
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::Catalog;
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

pub use super::routes::segments::{SegmentListing, SegmentSummary};
pub use crate::index::{IndexStatus, Phase};

/// The store and indexer, as the server sees them.
pub trait Backend: Send + Sync + 'static {
    /// Manifests and prepared shards, for search and session views.
    fn catalog(&self) -> &dyn Catalog;

    /// The current manifest; an error when the store cannot be read (500
    /// `store_unavailable`).
    fn manifest(&self) -> Result<Arc<Manifest>, BackendError> {
        self.catalog()
            .current()
            .map_err(|e| BackendError::new(e.to_string()))
    }

    /// The exact bytes of the current manifest (served to offline clients).
    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError>;

    /// The bytes of a generation file; `None` when no such generation exists.
    /// `name` has already been checked with
    /// [`recall_core::naming::is_generation_file_name`].
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError>;

    /// The live index segments (`GET /api/index/segments`); none by default
    /// (a backend without segments is searched by filters and scans).
    fn segment_list(&self) -> Result<SegmentListing, BackendError> {
        Ok(SegmentListing::default())
    }

    /// The bytes of segment file `name` (already checked to be
    /// `<hash16>.seg`); `None` when no such segment exists.
    fn segment(&self, _name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        Ok(None)
    }

    /// The indexer's status.
    fn status(&self) -> IndexStatus;

    /// Whether this server indexes (the store policy's `enabled`, and an
    /// indexer at all).
    fn enabled(&self) -> bool {
        self.status().enabled
    }

    /// True until the first backfill has finished.
    fn building(&self) -> bool;

    /// Runs one sweep (the first call is the backfill). Called by the
    /// server's indexer loop.
    fn sweep(&self) -> Result<(), BackendError>;

    /// Query-time refresh: runs an incremental sweep when the last one
    /// finished more than `max_age` ago — never before the backfill is done,
    /// and never waiting behind a sweep that is already running.
    fn refresh(&self, max_age: Duration);

    /// `freshness=wait-until-current`: brings the index up to date with the
    /// sources now (waiting for a sweep already running), reporting a
    /// failure. The default is the query-time refresh.
    fn reconcile(&self) -> Result<(), BackendError> {
        self.refresh(Duration::ZERO);
        Ok(())
    }

    /// The agent directories this server's indexer looks in, with their
    /// source (the dashboard's empty state lists them). Empty without one.
    fn roots(&self) -> Vec<(recall_core::model::Source, PathBuf)> {
        Vec::new()
    }

    /// The history window of the store's policy in days (`None` = keeps
    /// everything, or no policy): the response's `window_days`.
    fn window_days(&self) -> Option<u32> {
        None
    }

    /// Deletes the index (a new store id; never a transcript): `POST
    /// /api/index/clear`. Returns `{store_id, revision}`.
    fn clear(&self) -> Result<serde_json::Value, BackendError> {
        Err(BackendError::new("this server has no store to clear"))
    }

    /// Changes the store's policy (`POST /api/index/policy`); returns the
    /// policy now stored and what the change retires. With `dry_run`,
    /// changes nothing: the policy it would store and what it would retire.
    fn set_policy(
        &self,
        _enabled: Option<bool>,
        _history_days: Option<u32>,
        _dry_run: bool,
    ) -> Result<serde_json::Value, BackendError> {
        Err(BackendError::new("this server has no store policy"))
    }

    /// The policy in force (`None` without a store).
    fn policy(&self) -> Option<crate::store::policy::Policy> {
        None
    }

    /// Looks at what other processes changed in the store (a `recall
    /// clear`, a `recall config set`) and follows it; true = sweep now.
    /// Called by the server's indexer loop about once a second.
    fn follow_store(&self) -> bool {
        false
    }

    /// Whether this server serves the bundled demo home.
    fn demo(&self) -> bool {
        false
    }

    /// Team search (`recall serve --remote`): answers the search itself
    /// (this host plus the hosts of a bucket; `host` = the request's `host`
    /// parameter, a comma list of host ids or names); `None` = search
    /// [`Backend::catalog`] as usual.
    fn team_search(
        &self,
        query: &recall_core::Query,
        host: Option<&str>,
        budgets: recall_core::Budgets,
    ) -> Option<Result<recall_core::Response, recall_core::QueryError>> {
        let _ = (query, host, budgets);
        None
    }

    /// Re-reads one session from its source files (for `locate`). Reads only
    /// the files listed in the entry. `Ok(None)` = the files no longer yield
    /// this session.
    fn reextract(
        &self,
        key: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<Extracted>, BackendError> {
        crate::index::verify::reextract(key, entry).map_err(|e| BackendError::new(e.to_string()))
    }
}
