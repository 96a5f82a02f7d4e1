//! What every handler is given: the catalog, the indexer handle (when this
//! server has one), the concurrency slots, the login codes and the server's
//! exposure options.

use crate::engine::indexer::IndexerHandle;
use crate::engine::served::{ReadCatalog, Served};
use crate::http::events::Revisions;
use crate::http::limits::{self, SearchSlots, Slots};
use crate::http::login::Logins;
use std::sync::Arc;
use std::time::Duration;

/// Everything a handler needs.
#[derive(Clone)]
pub struct AppState {
    /// What searchers and session views read.
    pub catalog: Arc<dyn ReadCatalog>,
    /// The indexer; `None` = this server has none (no sweeps, no policy, no
    /// clear, no re-reading of sources for `locate`).
    pub indexer: Option<Arc<IndexerHandle>>,
    /// Whether this server serves the bundled demo home (the dashboard
    /// shows a banner).
    pub demo: bool,
    /// Concurrent-search slots.
    pub slots: SearchSlots,
    /// Concurrent-export slots.
    pub exports: Slots,
    /// Concurrent-locate slots.
    pub locates: Slots,
    /// Running deep searches, per client.
    pub deep: super::deep::DeepSlots,
    /// Login codes and the session cookie (servers with a token).
    pub logins: Option<Arc<Logins>>,
    /// A search first refreshes the index when the last sweep is older.
    pub refresh_after: Duration,
    /// Remote clients may download source files through export
    /// (`--allow-remote-export`).
    pub allow_remote_export: bool,
    /// Revision announcements (`GET /api/events`).
    pub events: Arc<Revisions>,
    /// Remote clients may clear the index and change the policy
    /// (`--allow-remote-admin`); otherwise only loopback clients may.
    pub allow_remote_admin: bool,
}

impl AppState {
    /// State for `served` with the default slots and no logins.
    pub fn new(served: Served, refresh_after: Duration) -> AppState {
        AppState {
            catalog: served.catalog,
            indexer: served.indexer,
            demo: false,
            slots: SearchSlots::default(),
            exports: Slots::named(limits::MAX_CONCURRENT_EXPORTS, "exports"),
            locates: Slots::named(limits::MAX_CONCURRENT_LOCATES, "locates"),
            deep: Default::default(),
            logins: None,
            refresh_after,
            allow_remote_export: false,
            events: Arc::new(Revisions::default()),
            allow_remote_admin: false,
        }
    }
}
