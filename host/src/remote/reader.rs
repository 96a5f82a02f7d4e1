//! A long-lived team reader: what `serve --remote` keeps between searches.
//! Each search still opens a [`UnionCatalog`] (so it reads every host's
//! current catalog and answers at that snapshot, with its own traffic
//! counters), but through one [`Memo`]: the other hosts' segments are opened
//! and verified once, their snapshots parsed once, and a warm search fetches
//! only the listing and the catalogs and verifies nothing again.

use super::hostid::HostIdentity;
use super::memo::Memo;
use super::union::{TeamOptions, UnionCatalog};
use super::Remote;
use crate::engine::catalog::StoreCatalog;
use recall_core::query::{Query, QueryError};
use std::sync::Arc;
use tokio::runtime::Handle;

/// This host plus the hosts under a prefix, read again for every search with
/// what was verified kept in memory.
pub struct TeamReader {
    local: StoreCatalog,
    ident: HostIdentity,
    remote: Arc<Remote>,
    rt: Handle,
    opts: TeamOptions,
    memo: Arc<Memo>,
}

impl TeamReader {
    /// A reader of `local`'s store (as `ident`) plus `remote`'s hosts, its
    /// object storage requests run on `rt`.
    pub fn new(
        local: StoreCatalog,
        ident: HostIdentity,
        remote: Arc<Remote>,
        rt: Handle,
        opts: TeamOptions,
    ) -> TeamReader {
        TeamReader {
            local,
            ident,
            remote,
            rt,
            opts,
            memo: Arc::default(),
        }
    }

    /// The union for one search of `query`, only `hosts` (ids or names) when
    /// set. Must not be called from inside `rt` (it blocks on it).
    pub fn open(
        &self,
        query: &Query,
        hosts: Option<Vec<String>>,
    ) -> Result<UnionCatalog, QueryError> {
        let opts = TeamOptions {
            hosts,
            ..self.opts.clone()
        };
        UnionCatalog::open_with(
            self.local.clone(),
            &self.ident,
            Some(self.remote.clone()),
            self.rt.clone(),
            &opts,
            query,
            Some(self.memo.clone()),
        )
    }

    /// The union at the hosts' current catalogs, only `hosts` when set
    /// (session views of another host's session). Must not be called from
    /// inside `rt`.
    pub fn open_current(&self, hosts: Option<Vec<String>>) -> Result<UnionCatalog, QueryError> {
        let opts = TeamOptions {
            hosts,
            ..self.opts.clone()
        };
        UnionCatalog::open_at(
            self.local.clone(),
            &self.ident,
            Some(self.remote.clone()),
            self.rt.clone(),
            &opts,
            None,
            Some(self.memo.clone()),
        )
    }

    /// What it holds in memory.
    pub fn memo(&self) -> &Memo {
        &self.memo
    }
}
