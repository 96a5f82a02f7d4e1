//! Error codes of the search API (DESIGN.md §4, §7) as one enum, and the
//! typed errors a [`crate::search::Catalog`] reports. The mapping of codes to
//! HTTP statuses belongs to the host, not to the core.

use serde::{Serialize, Serializer};
use std::fmt;

/// A stable §7 error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `q` has no searchable term.
    QRequired,
    /// `q` is longer than 1,024 bytes.
    QueryTooLong,
    /// More than 16 distinct terms.
    TooManyTerms,
    /// A parameter is malformed.
    InvalidParam,
    /// `q` does not follow the query grammar (the error carries `at`).
    InvalidQuery,
    /// The cursor is undecodable or belongs to another query.
    InvalidCursor,
    /// The cursor's snapshot is no longer served.
    CursorExpired,
    /// No such session.
    SessionNotFound,
    /// No such record in the session (one-session queries).
    RecordNotFound,
    /// A one-session filter is malformed (e.g. an inverted range).
    InvalidFilter,
    /// Too many concurrent searches.
    Busy,
    /// The catalog (manifest) cannot be read.
    StoreUnavailable,
    /// A bug.
    Internal,
}

impl ErrorCode {
    /// The code as it appears in the §7 body.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::QRequired => "q_required",
            ErrorCode::QueryTooLong => "query_too_long",
            ErrorCode::TooManyTerms => "too_many_terms",
            ErrorCode::InvalidParam => "invalid_param",
            ErrorCode::InvalidQuery => "invalid_query",
            ErrorCode::InvalidCursor => "invalid_cursor",
            ErrorCode::CursorExpired => "cursor_expired",
            ErrorCode::SessionNotFound => "session_not_found",
            ErrorCode::RecordNotFound => "record_not_found",
            ErrorCode::InvalidFilter => "invalid_filter",
            ErrorCode::Busy => "busy",
            ErrorCode::StoreUnavailable => "store_unavailable",
            ErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why the catalog could not produce a session's shard. The search skips
/// the session and answers `partial` with reason `unreadable`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The generation file does not exist (deleted, or never written).
    #[error("generation {name} is missing")]
    Missing {
        /// The generation file name.
        name: String,
    },
    /// The bytes are not the generation they should be (truncated,
    /// overwritten, or not a shard).
    #[error("generation {name} is damaged: {reason}")]
    Damaged {
        /// The generation file name.
        name: String,
        /// What was wrong.
        reason: String,
    },
    /// Reading failed.
    #[error("generation {name} could not be read: {reason}")]
    Io {
        /// The generation file name.
        name: String,
        /// The I/O error.
        reason: String,
    },
}

/// Why the catalog itself could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the index cannot be read: {0}")]
pub struct CatalogError(pub String);
