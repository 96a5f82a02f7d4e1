//! The embedded front end over HTTP: `/` (the dashboard), `/report`,
//! `/pkg/*` from [`crate::assets`] (`/sw.js` with its shell list filled in). Until the dashboard (`web/`) is
//! embedded, `/` serves an honest placeholder page that says so and points
//! at the API.

use crate::assets::{content_type, find};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// The page served at `/` while no dashboard is embedded.
const PLACEHOLDER: &str = include_str!("placeholder.html");

/// Serves any non-API GET: an embedded file, the placeholder, or 404.
pub async fn serve(uri: Uri) -> Response {
    let path = uri.path();
    let mut response = if let Some(sw) = (path == "/sw.js")
        .then(crate::assets::service_worker)
        .flatten()
    {
        let mut r = sw.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/javascript; charset=utf-8"),
        );
        r
    } else if let Some(bytes) = find(path) {
        let name = match path {
            "/" => "index.html",
            "/report" => "report.html",
            p => p,
        };
        let mut r = bytes.into_response();
        if let Ok(v) = HeaderValue::from_str(content_type(name)) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        r
    } else if path == "/" || path == "/index.html" {
        let mut r = PLACEHOLDER.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        // Its one inline style block; no script.
        r.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
                 form-action 'none'; frame-ancestors 'none'",
            ),
        );
        r
    } else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    // Assets change with the binary: revalidate rather than cache for a year.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
