//! What every handler is given: the backend, the concurrency slots, the
//! login codes and the server's exposure options.

use crate::http::backend::Backend;
use crate::http::limits::{self, SearchSlots, Slots};
use crate::http::login::Logins;
use std::sync::Arc;
use std::time::Duration;

/// Everything a handler needs.
#[derive(Clone)]
pub struct AppState {
    /// The store and indexer.
    pub backend: Arc<dyn Backend>,
    /// Concurrent-search slots.
    pub slots: SearchSlots,
    /// Concurrent-export slots.
    pub exports: Slots,
    /// Concurrent-locate slots.
    pub locates: Slots,
    /// Login codes and the session cookie (servers with a token).
    pub logins: Option<Arc<Logins>>,
    /// A search first refreshes the index when the last sweep is older.
    pub refresh_after: Duration,
    /// Remote clients may download source files through export
    /// (`--allow-remote-export`).
    pub allow_remote_export: bool,
}

impl AppState {
    /// State for `backend` with the default slots and no logins.
    pub fn new(backend: Arc<dyn Backend>, refresh_after: Duration) -> AppState {
        AppState {
            backend,
            slots: SearchSlots::default(),
            exports: Slots::named(limits::MAX_CONCURRENT_EXPORTS, "exports"),
            locates: Slots::named(limits::MAX_CONCURRENT_LOCATES, "locates"),
            logins: None,
            refresh_after,
            allow_remote_export: false,
        }
    }
}
