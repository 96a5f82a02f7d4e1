//! The HTTP daemon of `recall serve` (DESIGN.md §7): an axum router over
//! what it serves ([`Served`]: a [`ReadCatalog`] and, when the server
//! indexes, an [`IndexerHandle`]), the access policy, limits, and the
//! indexer loop that keeps the store current while the server runs.
//!
//! One module per concern: [`routes`] (one file per route family),
//! [`security`] (Host allowlist, token), [`login`] (the dashboard's one-time
//! link and cookie), [`headers`] (CSP and friends on every response),
//! [`limits`] (429, sizes), [`conn`] (connection cap and timeouts),
//! [`query`] (strict query-string decoding), [`errors`] (the §7 error body),
//! [`logging`] (no query text, ever), [`assets`] (the embedded front end),
//! [`exposure`] (what a remote client may see), [`state_change`] (the POST
//! gate), [`locate`], [`served`] (the read/write split),
//! [`store_catalog`] (the store's read side), [`indexer`] (the write side). Export planning ([`crate::export`]), lineage
//! ([`crate::lineage`]) and the embedded files ([`crate::assets`]) live
//! outside: the CLI and MCP use them too.

pub mod assets;
pub mod conn;
pub mod errors;
pub mod exposure;
pub mod headers;
pub mod indexer;
pub mod limits;
pub mod locate;
pub mod logging;
pub mod login;
#[cfg(any(test, feature = "test-support"))]
pub mod mem;
pub mod query;
pub mod routes;
pub mod security;
pub mod served;
mod server;
pub mod state_change;
pub mod store_catalog;

pub use crate::index::{IndexStatus, Phase};
pub use conn::ConnLimits;
pub use exposure::Exposure;
pub use indexer::IndexerHandle;
#[cfg(any(test, feature = "test-support"))]
pub use mem::MemCatalog;
pub use routes::AppState;
pub use security::Security;
pub use served::{
    ForeignSession, ReadCatalog, SegmentListing, SegmentSummary, Served, StoreUnavailable,
};
pub use server::{router, ServeError, ServeOptions, Server};
