//! Route handlers, one module per route family, and what they share: the
//! handlers' state ([`AppState`]), the query-string reader, the blocking
//! bridge and the JSON response builder.

pub mod admin;
pub mod deep;
pub mod events;
pub mod export;
pub mod export_md;
pub mod one_session;
pub mod report;
pub mod search;
pub mod segments;
pub mod session;
pub mod sessions;
pub mod shards;
mod state;
pub mod status;
pub mod trace;

pub use state::AppState;

use super::errors::ApiError;
pub use super::query::QueryPairs;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// Query-string pairs in order, as the handlers receive them.
pub type Pairs = Vec<(String, String)>;

/// Unwraps the query string, answering 400 `invalid_param` when it cannot
/// be decoded (see [`super::query`]).
pub fn pairs(q: Result<QueryPairs, ApiError>) -> Result<Pairs, ApiError> {
    q.map(|QueryPairs(p)| p)
}

/// The pairs with the host's clock (`now_ms`, `utc_offset_min`) added
/// unless the client sent its own `now_ms`: relative times (`since=7d`,
/// `today`) read against the client's clock when it gives one, else the
/// server's.
pub fn clocked(mut p: Pairs) -> Pairs {
    if param(&p, "now_ms").is_none() {
        p.extend(
            crate::clock::clock_pairs()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
    }
    p
}

/// The last value of a parameter (like `Request::from_pairs`).
pub fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `Cache-Control: no-store` (search, session views: transcript text).
pub const NO_STORE: &str = "no-store";

/// A JSON response with the given `Cache-Control`.
pub fn json(body: String, cache: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

/// Serializes a value as a `no-store` JSON response.
pub fn json_value(value: &serde_json::Value) -> Response {
    json(value.to_string(), NO_STORE)
}

/// Runs blocking store work off the async workers.
pub async fn blocking<T, F>(f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::internal("a request worker failed")),
    }
}

/// Unwraps a handler result into a response.
pub fn respond(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

/// Parses a page size: integers (however many digits) clamped to
/// `1..=max`, anything else `default`.
pub fn limit(raw: Option<&str>, default: usize, max: usize) -> usize {
    use std::num::IntErrorKind;
    match raw.map(str::trim).map(str::parse::<i64>) {
        Some(Ok(n)) => usize::try_from(n.clamp(1, max as i64)).unwrap_or(default),
        Some(Err(e)) if *e.kind() == IntErrorKind::PosOverflow => max,
        Some(Err(e)) if *e.kind() == IntErrorKind::NegOverflow => 1,
        _ => default,
    }
}

/// Wall-clock epoch milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
