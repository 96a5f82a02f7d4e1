//! The §7 error body `{ok:false, error, message}` and its status codes.
//!
//! Messages name the parameter that was wrong, never its value: query text
//! must not leak into responses that may be logged by proxies, nor into our
//! own logs.

use crate::engine::EngineError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use recall_core::{ErrorCode, QueryError};

/// An error answered as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable error code.
    pub code: &'static str,
    /// A human-readable explanation.
    pub message: String,
    /// For `invalid_query`: the byte offset in `q` it points at.
    pub at: Option<usize>,
}

impl ApiError {
    /// Builds an error.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            at: None,
        }
    }

    /// 400 `invalid_param`.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_param", message)
    }

    /// 404 `session_not_found`.
    pub fn session_not_found() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "session_not_found",
            "no session with this key is indexed",
        )
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 429 `busy`.
    pub fn busy() -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "busy",
            "too many searches are running; retry shortly",
        )
    }

    /// 500 `store_unavailable`.
    pub fn store_unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "store_unavailable",
            message,
        )
    }

    /// 500 `internal` (a bug; the daemon keeps serving).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        let mut v = serde_json::json!({"ok": false, "error": self.code, "message": self.message});
        if let Some(at) = self.at {
            v["at"] = at.into();
        }
        v.to_string()
    }
}

/// The HTTP status of a core error code.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::CursorExpired => StatusCode::GONE,
        ErrorCode::SessionNotFound | ErrorCode::RecordNotFound => StatusCode::NOT_FOUND,
        ErrorCode::Busy => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::StoreUnavailable | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::QRequired
        | ErrorCode::QueryTooLong
        | ErrorCode::TooManyTerms
        | ErrorCode::InvalidParam
        | ErrorCode::InvalidQuery
        | ErrorCode::InvalidFilter
        | ErrorCode::InvalidCursor => StatusCode::BAD_REQUEST,
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> ApiError {
        ApiError {
            at: e.at,
            ..ApiError::new(status_of(e.code), e.code.as_str(), e.message)
        }
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        ApiError::store_unavailable(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, self.body()).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }
}
