//! The gate of the state-changing routes (`POST /api/index/…`: policy,
//! clear), on top of the guard's Host allowlist and token: such a request
//! must carry the custom header [`ACTION_HEADER`] — which an HTML form
//! cannot send, and a cross-origin script can only send after a CORS
//! preflight this server never approves — and, when the browser says where
//! it comes from (`Origin`, `Sec-Fetch-Site`), come from this very origin.
//! Non-loopback peers reach these routes only with the token (the guard
//! requires it on every `/api/` route of a server that binds beyond
//! loopback).

use super::errors::ApiError;
use axum::extract::Request;
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The header a state-changing request must carry (any non-empty value).
pub const ACTION_HEADER: &str = "x-recall-action";

/// Why a state-changing request is refused.
pub fn check(headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |code, msg: &str| Err(ApiError::new(StatusCode::FORBIDDEN, code, msg));
    let has_action = headers
        .get(ACTION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().is_empty());
    if !has_action {
        return forbidden(
            "action_header_required",
            "a state-changing request must carry the X-Recall-Action header",
        );
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        if !matches!(site.to_str(), Ok("same-origin" | "none")) {
            return forbidden(
                "cross_site",
                "state changes are only accepted from this page",
            );
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let same = match (origin.to_str().ok(), host) {
            (Some(o), Some(h)) => o
                .strip_prefix("http://")
                .or_else(|| o.strip_prefix("https://"))
                .is_some_and(|rest| rest.eq_ignore_ascii_case(h)),
            _ => false,
        };
        if !same {
            return forbidden(
                "cross_site",
                "state changes are only accepted from this server's own origin",
            );
        }
    }
    Ok(())
}

/// Middleware for the state-changing routes.
pub async fn gate(req: Request, next: Next) -> Response {
    match check(req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_same_origin_requests_with_the_header_pass() {
        let host = ("host", "127.0.0.1:7979");
        assert!(check(&headers(&[host, (ACTION_HEADER, "1")])).is_ok());
        assert!(check(&headers(&[
            host,
            (ACTION_HEADER, "1"),
            ("origin", "http://127.0.0.1:7979"),
            ("sec-fetch-site", "same-origin"),
        ]))
        .is_ok());
        for bad in [
            headers(&[host]),
            headers(&[host, (ACTION_HEADER, " ")]),
            headers(&[
                host,
                (ACTION_HEADER, "1"),
                ("origin", "http://evil.example"),
            ]),
            headers(&[
                host,
                (ACTION_HEADER, "1"),
                ("origin", "http://127.0.0.1:7979.evil"),
            ]),
            headers(&[host, (ACTION_HEADER, "1"), ("origin", "null")]),
            headers(&[host, (ACTION_HEADER, "1"), ("sec-fetch-site", "cross-site")]),
            headers(&[host, (ACTION_HEADER, "1"), ("sec-fetch-site", "same-site")]),
        ] {
            assert!(check(&bad).is_err(), "{bad:?}");
        }
    }
}
