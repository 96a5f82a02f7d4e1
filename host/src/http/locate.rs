//! `?locate=` over HTTP: the parameter parsed into a locator (a 400 when
//! malformed). Finding the record in the indexed shard is the core's
//! (`recall_core::session::locate`); checking it against its source is the
//! engine's ([`crate::engine::verify`]).

use super::errors::ApiError;
use recall_core::model::Locator;
pub use recall_core::session::locate::{content_hash, find, Found, Verdict, MAX_LOCATE_BYTES};

/// Parses `locate`: locator JSON, or base64url (padded or not) of it.
pub fn parse(raw: &str) -> Result<Locator, ApiError> {
    recall_core::session::parse_locate(raw).map_err(ApiError::from)
}
