//! `recall serve --remote s3://…`: the served store's [`Backend`], with its
//! searches answered over the union of this host and the bucket's hosts
//! (`union.rs`). Everything else (sessions, exports, the indexer) is this
//! host's, unchanged. Each search runs on its own thread: the union's
//! object-storage runtime must not be entered from the server's. The
//! searches share one `reader::TeamReader`, so what they verified of other
//! hosts stays in memory.

use super::hostid::HostIdentity;
use super::union::TeamOptions;
use super::Remote;
use crate::catalog::StoreCatalog;
use crate::extract::Extracted;
use crate::http::backend::{Backend, BackendError, IndexStatus};
use recall_core::model::{Manifest, ManifestEntry, Source};
use recall_core::query::{Query, QueryError};
use recall_core::search::Budgets;
use recall_core::{Catalog, Response};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A backend whose searches include the bucket's hosts.
pub struct TeamBackend {
    inner: Arc<dyn Backend>,
    local: StoreCatalog,
    ident: HostIdentity,
    remote: Arc<Remote>,
    rt: Option<tokio::runtime::Runtime>,
    opts: TeamOptions,
    /// Made at the first search (the cache cap is set after `new`).
    reader: std::sync::OnceLock<super::reader::TeamReader>,
}

impl TeamBackend {
    /// Wraps `inner` (serving `local`'s store).
    pub fn new(
        inner: Arc<dyn Backend>,
        local: StoreCatalog,
        ident: HostIdentity,
        remote: Remote,
    ) -> Result<TeamBackend, super::RemoteError> {
        Ok(TeamBackend {
            inner,
            local,
            ident,
            remote: Arc::new(remote),
            rt: Some(super::runtime()?),
            opts: TeamOptions {
                deadline: Duration::from_secs(5),
                ..TeamOptions::default()
            },
            reader: std::sync::OnceLock::new(),
        })
    }
}

impl TeamBackend {
    /// Sets the size cap of the local cache of remote objects.
    pub fn with_cache_cap(mut self, bytes: u64) -> TeamBackend {
        self.opts.cache_cap = bytes;
        self
    }
}

impl Drop for TeamBackend {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl Backend for TeamBackend {
    fn catalog(&self) -> &dyn Catalog {
        self.inner.catalog()
    }
    fn manifest(&self) -> Result<Arc<Manifest>, BackendError> {
        self.inner.manifest()
    }
    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError> {
        self.inner.manifest_bytes()
    }
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.inner.generation(name)
    }
    fn segment_list(&self) -> Result<crate::http::backend::SegmentListing, BackendError> {
        self.inner.segment_list()
    }
    fn segment(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.inner.segment(name)
    }
    fn status(&self) -> IndexStatus {
        self.inner.status()
    }
    fn building(&self) -> bool {
        self.inner.building()
    }
    fn sweep(&self) -> Result<(), BackendError> {
        self.inner.sweep()
    }
    fn refresh(&self, max_age: Duration) {
        self.inner.refresh(max_age)
    }
    fn roots(&self) -> Vec<(Source, PathBuf)> {
        self.inner.roots()
    }
    fn demo(&self) -> bool {
        self.inner.demo()
    }
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }
    fn reconcile(&self) -> Result<(), BackendError> {
        self.inner.reconcile()
    }
    fn window_days(&self) -> Option<u32> {
        self.inner.window_days()
    }
    fn clear(&self) -> Result<serde_json::Value, BackendError> {
        self.inner.clear()
    }
    fn set_policy(
        &self,
        enabled: Option<bool>,
        history_days: Option<u32>,
        dry_run: bool,
    ) -> Result<serde_json::Value, BackendError> {
        self.inner.set_policy(enabled, history_days, dry_run)
    }
    fn policy(&self) -> Option<crate::store::policy::Policy> {
        self.inner.policy()
    }
    fn follow_store(&self) -> bool {
        self.inner.follow_store()
    }
    fn reextract(
        &self,
        key: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<Extracted>, BackendError> {
        self.inner.reextract(key, entry)
    }

    fn team_search(
        &self,
        query: &Query,
        host: Option<&str>,
        budgets: Budgets,
    ) -> Option<Result<Response, QueryError>> {
        let rt = self.rt.as_ref()?.handle().clone();
        let building = self.inner.building();
        let reader = self.reader.get_or_init(|| {
            let (local, ident) = (self.local.clone(), self.ident.clone());
            super::reader::TeamReader::new(local, ident, self.remote.clone(), rt, self.opts.clone())
        });
        let run = || {
            let cat = reader.open(query, host.map(super::union::host_list))?;
            cat.search(query, building, budgets)
        };
        let answer = std::thread::scope(|s| s.spawn(run).join());
        Some(answer.unwrap_or_else(|_| {
            Err(QueryError::new(
                recall_core::ErrorCode::StoreUnavailable,
                "team search failed",
            ))
        }))
    }
}
