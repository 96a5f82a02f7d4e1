//! The HTTP daemon of `recall serve` (DESIGN.md §7): an axum router over
//! what the engine serves ([`crate::engine::Served`]: a read side and, when
//! the server indexes, the indexer's handle), the access policy, limits, and
//! the loop that drives the engine's indexer while the server runs. Only
//! HTTP lives here.
//!
//! One module per concern: [`routes`] (one file per route family),
//! [`security`] (Host allowlist, token), [`login`] (the dashboard's one-time
//! link and cookie), [`headers`] (CSP and friends on every response),
//! [`limits`] (429, sizes), [`conn`] (the connection loop and its timeouts),
//! [`admission`] (who gets a connection slot),
//! [`query`] (strict query-string decoding), [`errors`] (the §7 error body),
//! [`logging`] (no query text, ever), [`assets`] (the embedded front end),
//! [`exposure`] (what a remote client may see), [`events`] (revision
//! announcements for `GET /api/events`), [`state_change`] (the POST
//! gate), [`locate`], [`client`] (how the CLI, TUI and MCP ask a running
//! daemon of the same store). Export planning ([`crate::export`]), lineage
//! ([`crate::lineage`]) and the embedded files ([`crate::assets`]) live
//! outside: the CLI and MCP use them too.

pub mod admission;
pub mod assets;
pub mod client;
pub mod conn;
pub mod errors;
pub mod events;
pub mod exposure;
pub mod headers;
pub mod limits;
pub mod locate;
pub mod logging;
pub mod login;
pub mod query;
pub mod routes;
pub mod security;
mod server;
pub mod state_change;

pub use conn::ConnLimits;
pub use exposure::Exposure;
pub use routes::AppState;
pub use security::Security;
pub use server::{router, ServeError, ServeOptions, Server};
