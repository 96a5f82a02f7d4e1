//! Request limits: at most two searches, two exports and two locates at
//! once, each on its own slots (429 `busy` beyond, so a flood of exports or
//! locates never takes a search's place nor the blocking threads), and caps
//! on the request line and body sizes (the API takes no bodies).

use super::errors::ApiError;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Searches allowed to run at the same time.
pub const MAX_CONCURRENT_SEARCHES: usize = 2;
/// Longest accepted path + query string, in bytes (raw `q` is ≤ 1,024 bytes,
/// ≤ 3 KiB percent-encoded, plus filters and a cursor).
pub const MAX_URI_BYTES: usize = 8 << 10;
/// Largest accepted request body (no route reads one).
pub const MAX_BODY_BYTES: u64 = 16 << 10;

/// Exports streaming at the same time.
pub const MAX_CONCURRENT_EXPORTS: usize = 2;
/// `?locate=` page reads (each re-extracts a session) at the same time.
pub const MAX_CONCURRENT_LOCATES: usize = 2;

/// Slots for one kind of heavy request.
#[derive(Clone, Debug)]
pub struct Slots {
    sem: Arc<Semaphore>,
    what: &'static str,
}

/// Slots for concurrent searches.
pub type SearchSlots = Slots;

impl Default for Slots {
    fn default() -> Slots {
        Slots::new(MAX_CONCURRENT_SEARCHES)
    }
}

impl Slots {
    /// `n` search slots.
    pub fn new(n: usize) -> Slots {
        Slots::named(n, "searches")
    }

    /// `n` slots for `what` (plural, for the 429 message).
    pub fn named(n: usize, what: &'static str) -> Slots {
        Slots {
            sem: Arc::new(Semaphore::new(n)),
            what,
        }
    }

    /// Takes a slot without waiting, or answers 429 `busy`.
    pub fn try_take(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.sem.clone().try_acquire_owned().map_err(|_| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "busy",
                format!("too many {} are running; retry shortly", self.what),
            )
        })
    }
}

/// Middleware: 414 `uri_too_long` and 413 `body_too_large`, as JSON.
pub async fn size_limits(req: Request, next: Next) -> Response {
    let uri_len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if uri_len > MAX_URI_BYTES {
        return ApiError::new(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            format!("the request line is longer than {MAX_URI_BYTES} bytes"),
        )
        .into_response();
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
        )
        .into_response();
    }
    next.run(req).await
}
