//! What a server of the engine serves, split like a searcher and an index writer:
//! the read side ([`ReadCatalog`]: snapshots, shards, segment and
//! generation bytes, search) that every server has, and the write side
//! ([`IndexerHandle`]) that only a server with an indexer has. Routes read
//! through [`Served::catalog`] and reach the indexer only through
//! [`Served::indexer`]; "no indexer" is `None`, answered explicitly by each
//! route. Every method is blocking: handlers call them from
//! `spawn_blocking`.

use super::indexer::IndexerHandle;
use super::EngineError;
use recall_core::model::Manifest;
use recall_core::{Catalog, Query, QueryError, Response, SearchEnv};
use std::sync::Arc;

/// The body of `GET /api/index/segments` and its rows.
pub use recall_core::layout::{SegmentListing, SegmentSummary};

/// Another host's session as team serve read it from that host's published
/// catalog and generation (`serve --remote`): its union key
/// (`<host-id>/<key>`), the union manifest that holds it (its entry carries
/// no resume command and no paths), and its shard when one was asked for.
pub struct ForeignSession {
    /// The union key.
    pub key: String,
    /// The union's manifest.
    pub manifest: Arc<Manifest>,
    /// The session's shard (with tool rows), when asked for.
    pub shard: Option<Arc<recall_core::PreparedShard>>,
    /// The host it came from.
    pub host: recall_core::response::HostRef,
}

/// The read side: what searchers and session views read. Implemented by
/// the on-disk store ([`crate::engine::catalog::StoreCatalog`]), team search
/// (`remote::serve::TeamCatalog`) and, for tests, `MemCatalog`.
pub trait ReadCatalog: Send + Sync + 'static {
    /// Manifests and prepared shards, for search and session views.
    fn catalog(&self) -> &dyn Catalog;

    /// The current manifest; an error when the store cannot be read (500
    /// `store_unavailable`).
    fn manifest(&self) -> Result<Arc<Manifest>, EngineError>;

    /// The exact bytes of the current manifest (served to offline clients).
    fn manifest_bytes(&self) -> Result<Vec<u8>, EngineError>;

    /// The bytes of a generation file; `None` when no such generation exists.
    /// `name` has already been checked with
    /// [`recall_core::naming::is_generation_file_name`].
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError>;

    /// The live index segments (`GET /api/index/segments`).
    fn segment_list(&self) -> Result<SegmentListing, EngineError>;

    /// The bytes of segment file `name` (already checked to be
    /// `<hash16>.seg`); `None` when no such segment exists.
    fn segment(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError>;

    /// Answers a search. `env.catalog` is [`ReadCatalog::catalog`]; `host`
    /// is the request's `host` parameter (a comma list of host ids or
    /// names), which only team search reads.
    fn search(
        &self,
        query: &Query,
        host: Option<&str>,
        env: &SearchEnv<'_>,
    ) -> Result<Response, QueryError>;

    /// Another host's session named by a union key `<host-id>/<key>`
    /// (`load` = with its shard); `None` when this catalog reads no other
    /// hosts or `key` is not such a key. `Some(Err)` = its host could not be
    /// read.
    fn foreign_session(
        &self,
        _key: &str,
        _load: bool,
    ) -> Option<Result<ForeignSession, EngineError>> {
        None
    }
}

/// A server of one store has no other hosts: a `host` filter is refused
/// (400 `invalid_param`), not silently ignored.
pub fn no_host_filter(host: Option<&str>) -> Result<(), QueryError> {
    match host.map(str::trim) {
        Some(h) if !h.is_empty() => Err(QueryError::new(
            recall_core::ErrorCode::InvalidParam,
            "host filters team search: this server has no other hosts (recall serve --remote)",
        )),
        _ => Ok(()),
    }
}

/// What one server serves: the catalog, and a handle on the indexer when
/// this server has one (`recall serve` always has one, even with
/// `--no-index`: it then runs no sweeps but still re-reads sources for
/// `locate` and owns the policy; a server of a fixed catalog has none).
#[derive(Clone)]
pub struct Served {
    /// The read side.
    pub catalog: Arc<dyn ReadCatalog>,
    /// The write side; `None` = this server has no indexer.
    pub indexer: Option<Arc<IndexerHandle>>,
}

impl Served {
    /// A catalog with its indexer.
    pub fn indexed(catalog: Arc<dyn ReadCatalog>, indexer: Arc<IndexerHandle>) -> Served {
        Served {
            catalog,
            indexer: Some(indexer),
        }
    }

    /// A catalog without an indexer.
    pub fn read_only(catalog: Arc<dyn ReadCatalog>) -> Served {
        Served {
            catalog,
            indexer: None,
        }
    }
}
