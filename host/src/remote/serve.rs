//! `recall serve --remote s3://…`: the served store's [`ReadCatalog`], with
//! its searches answered over the union of this host and the bucket's hosts
//! (`union.rs`). Everything else (sessions, exports, generation and segment
//! bytes) is this host's store, unchanged; the indexer is the server's own
//! handle, not this catalog's. Each search runs on its own thread: the union's
//! object-storage runtime must not be entered from the server's. The
//! searches share one `reader::TeamReader`, so what they verified of other
//! hosts stays in memory.

use super::hostid::HostIdentity;
use super::union::{split_key, TeamOptions};
use super::Remote;
use crate::engine::catalog::StoreCatalog;
use crate::engine::{EngineError, ForeignSession, ReadCatalog, SegmentListing};
use recall_core::model::Manifest;
use recall_core::query::{Query, QueryError};
use recall_core::response::HostRef;
use recall_core::{Catalog, Response, SearchEnv};
use std::sync::Arc;
use std::time::Duration;

/// This host's store, its searches including the bucket's hosts.
pub struct TeamCatalog {
    local: StoreCatalog,
    ident: HostIdentity,
    remote: Arc<Remote>,
    rt: Option<tokio::runtime::Runtime>,
    opts: TeamOptions,
    /// Made at the first search (the cache cap is set after `new`).
    reader: std::sync::OnceLock<super::reader::TeamReader>,
}

impl TeamCatalog {
    /// Serves `local`, searching it with the hosts of `remote`.
    pub fn new(
        local: StoreCatalog,
        ident: HostIdentity,
        remote: Remote,
    ) -> Result<TeamCatalog, super::RemoteError> {
        Ok(TeamCatalog {
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

impl TeamCatalog {
    /// Sets the size cap of the local cache of remote objects.
    pub fn with_cache_cap(mut self, bytes: u64) -> TeamCatalog {
        self.opts.cache_cap = bytes;
        self
    }
}

impl Drop for TeamCatalog {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

impl ReadCatalog for TeamCatalog {
    fn catalog(&self) -> &dyn Catalog {
        self.local.catalog()
    }
    fn manifest(&self) -> Result<Arc<Manifest>, EngineError> {
        self.local.manifest()
    }
    fn manifest_bytes(&self) -> Result<Vec<u8>, EngineError> {
        self.local.manifest_bytes()
    }
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        self.local.generation(name)
    }
    fn segment_list(&self) -> Result<SegmentListing, EngineError> {
        self.local.segment_list()
    }
    fn segment(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        self.local.segment(name)
    }

    /// The union's search (`host` = the request's `host` parameter, a
    /// comma list of host ids or names); `env.building` and
    /// `env.budgets` are the server's.
    fn search(
        &self,
        query: &Query,
        host: Option<&str>,
        env: &SearchEnv<'_>,
    ) -> Result<Response, QueryError> {
        let unavailable = || {
            QueryError::new(
                recall_core::ErrorCode::StoreUnavailable,
                "team search failed",
            )
        };
        let (building, budgets) = (env.building, env.budgets);
        let reader = self.reader().ok_or_else(unavailable)?;
        let run = || {
            let cat = reader.open(query, host.map(super::union::host_list))?;
            cat.search(query, building, budgets)
        };
        let answer = std::thread::scope(|s| s.spawn(run).join());
        answer.unwrap_or_else(|_| Err(unavailable()))
    }

    /// Another host's session, read from that host's published catalog and
    /// generation through the same reader as the searches (so what a search
    /// verified is reused); its entry carries no resume command and no paths.
    fn foreign_session(
        &self,
        key: &str,
        load: bool,
    ) -> Option<Result<ForeignSession, EngineError>> {
        let (host_id, _) = split_key(key)?;
        if host_id == self.ident.id {
            return None;
        }
        let Some(reader) = self.reader() else {
            return Some(Err(EngineError::unavailable("team search failed")));
        };
        let run = || -> Result<ForeignSession, EngineError> {
            let failed = |e: &dyn std::fmt::Display| EngineError::unavailable(e.to_string());
            let cat = reader
                .open_current(Some(vec![host_id.to_string()]))
                .map_err(|e| failed(&e.message))?;
            if let Some(h) = cat
                .hosts()
                .iter()
                .find(|h| h.id == host_id && h.state != "available")
            {
                let why = h.reason.clone().unwrap_or_default();
                return Err(EngineError::unavailable(format!(
                    "host {} is unavailable: {why}",
                    h.name
                )));
            }
            let manifest = cat.current().map_err(|e| failed(&e))?;
            let found = cat.foreign(key, load).transpose().map_err(|e| failed(&e))?;
            let (host, shard) = found.unwrap_or_else(|| {
                let host = HostRef {
                    id: host_id.to_string(),
                    name: String::new(),
                };
                (host, None)
            });
            Ok(ForeignSession {
                key: key.to_string(),
                manifest,
                shard,
                host,
            })
        };
        let answer = std::thread::scope(|s| s.spawn(run).join());
        Some(answer.unwrap_or_else(|_| Err(EngineError::unavailable("team search failed"))))
    }
}

impl TeamCatalog {
    /// The long-lived reader every search and session view shares (made at
    /// the first use).
    fn reader(&self) -> Option<&super::reader::TeamReader> {
        let rt = self.rt.as_ref()?.handle().clone();
        Some(self.reader.get_or_init(|| {
            let (local, ident) = (self.local.clone(), self.ident.clone());
            super::reader::TeamReader::new(local, ident, self.remote.clone(), rt, self.opts.clone())
        }))
    }
}
