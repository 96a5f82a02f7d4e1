//! The headers every response carries (DESIGN §7): a `Content-Security-Policy`
//! that forbids framing (`frame-ancestors 'none'`, which a `<meta>` tag
//! cannot express), `X-Frame-Options: DENY` for older browsers and
//! `X-Content-Type-Options: nosniff`. A response that set its own policy
//! (the placeholder page) keeps it, with `frame-ancestors 'none'` too.

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The policy of the dashboard and the report viewer (their `<meta>` policy
/// plus `frame-ancestors`); JSON and ZIP responses run no script at all.
pub const CSP: &str = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; \
    worker-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; \
    manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Middleware: adds the headers to every response.
pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    apply(&mut r);
    r
}

/// Adds the headers to `r` (also used for responses written outside the
/// router, such as the connection cap's 429).
pub fn apply<B>(r: &mut axum::http::Response<B>) {
    let h = r.headers_mut();
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}
