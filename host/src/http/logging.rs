//! Access log: method, path, status and time — never the query string, so
//! search text (`q`), cursors and locators stay out of the logs.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// Middleware: one `tracing` event per request at `debug`, `warn` for 5xx.
pub async fn access_log(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    // The path only: `uri.path()` excludes the query string.
    let path = req.uri().path().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16();
    let ms = started.elapsed().as_millis() as u64;
    if status >= 500 {
        tracing::warn!(target: "recall::http", %method, %path, status, ms, "request failed");
    } else {
        tracing::debug!(target: "recall::http", %method, %path, status, ms, "request");
    }
    response
}
