//! Who may talk to the server: a Host allowlist against DNS rebinding, an
//! optional bearer token (required when binding a non-loopback address),
//! and the check that decides which binds need one.

use super::errors::ApiError;
use super::login::Logins;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The access policy of one server.
#[derive(Clone, Debug, Default)]
pub struct Security {
    /// Extra Host names accepted besides the loopback names (lowercase, no port).
    pub allow_hosts: Vec<String>,
    /// The bearer token every `/api/` request must carry, if set.
    pub token: Option<String>,
}

/// Why a server configuration is refused before it binds.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecurityError {
    /// A non-loopback bind without a token.
    #[error("binding {0} exposes your transcripts beyond this machine: pass --token <secret> (clients send `Authorization: Bearer <secret>`)")]
    TokenRequired(SocketAddr),
    /// An empty token.
    #[error("--token must not be empty")]
    EmptyToken,
}

impl Security {
    /// Checks that `bind` may be served under this policy.
    pub fn check_bind(&self, bind: SocketAddr) -> Result<(), SecurityError> {
        if let Some(t) = &self.token {
            if t.is_empty() {
                return Err(SecurityError::EmptyToken);
            }
        }
        if !bind.ip().is_loopback() && self.token.is_none() {
            return Err(SecurityError::TokenRequired(bind));
        }
        Ok(())
    }

    /// Whether a request's Host header value is acceptable.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.is_empty() {
            return false;
        }
        is_loopback_name(&name) || self.allow_hosts.iter().any(|h| host_name(h) == name)
    }

    /// Whether an `Authorization` header value carries the token (or none is
    /// required). Compared in constant time.
    pub fn authorized(&self, authorization: Option<&str>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let Some(given) = authorization.and_then(|a| a.strip_prefix("Bearer ")) else {
            return false;
        };
        constant_time_eq(given.trim().as_bytes(), token.as_bytes())
    }
}

/// The host part of a Host header value: lowercase, without port, brackets
/// or a trailing dot.
pub fn host_name(host: &str) -> String {
    let h = host.trim().to_ascii_lowercase();
    let name = if let Some(rest) = h.strip_prefix('[') {
        rest.split(']').next().unwrap_or("").to_string()
    } else if h.matches(':').count() == 1 {
        h.split(':').next().unwrap_or("").to_string()
    } else {
        h
    };
    name.trim_end_matches('.').to_string()
}

/// `localhost`, `*.localhost`, 127.0.0.0/8 and `::1`.
pub fn is_loopback_name(name: &str) -> bool {
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Compares two secrets without an early exit (both are hashed first, so
/// neither the content nor the length leaks through timing).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let (ha, hb) = (Sha256::digest(a), Sha256::digest(b));
    ha.iter()
        .zip(hb.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// What the guard middleware checks against.
#[derive(Debug)]
pub struct Guard {
    /// The access policy.
    pub security: Security,
    /// Login state when the server has a token (its cookie passes `/api/*`).
    pub logins: Option<Arc<Logins>>,
}

/// Middleware: refuses a request with more than one Host header (400
/// `bad_request`: which one would a proxy have checked?), unknown Host names
/// (403 `forbidden_host`) and, on `/api/` routes, requests with neither the
/// bearer token nor the login cookie (401 `unauthorized`).
pub async fn guard(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let sec = &g.security;
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "a request must carry exactly one Host header",
        )
        .into_response();
    }
    let host = first
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if !host.is_some_and(|h| sec.host_allowed(&h)) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "this Host is not allowed; use a loopback name or start the server with --allow-host",
        )
        .into_response();
    }
    if req.uri().path().starts_with("/api/") {
        let auth = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok());
        let by_cookie = || {
            g.logins
                .as_ref()
                .is_some_and(|l| l.cookie_ok(req.headers()))
        };
        if !sec.authorized(auth) && !by_cookie() {
            let mut r = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this server requires `Authorization: Bearer <token>` (or the cookie set by its login link)",
            )
            .into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return r;
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_pass_and_others_do_not() {
        let s = Security::default();
        for ok in [
            "localhost",
            "LOCALHOST:7979",
            "127.0.0.1:7979",
            "127.1.2.3",
            "[::1]:7979",
            "app.localhost",
            "localhost.",
        ] {
            assert!(s.host_allowed(ok), "{ok}");
        }
        for bad in [
            "",
            "evil.com",
            "evil.com:7979",
            "localhost.evil.com",
            "10.0.0.1",
            "[::2]:80",
            "127.0.0.1.evil.com",
        ] {
            assert!(!s.host_allowed(bad), "{bad}");
        }
        let s = Security {
            allow_hosts: vec!["box.lan".into()],
            token: None,
        };
        assert!(s.host_allowed("box.lan:7979"));
        assert!(s.host_allowed("BOX.LAN"));
    }

    #[test]
    fn token_is_required_off_loopback() {
        let s = Security::default();
        assert!(s.check_bind("127.0.0.1:7979".parse().unwrap()).is_ok());
        assert!(s.check_bind("[::1]:7979".parse().unwrap()).is_ok());
        assert!(matches!(
            s.check_bind("0.0.0.0:7979".parse().unwrap()),
            Err(SecurityError::TokenRequired(_))
        ));
        let t = Security {
            allow_hosts: vec![],
            token: Some("s3cret".into()),
        };
        assert!(t.check_bind("0.0.0.0:7979".parse().unwrap()).is_ok());
        assert!(t.authorized(Some("Bearer s3cret")));
        assert!(!t.authorized(Some("Bearer s3cre")));
        assert!(!t.authorized(Some("s3cret")));
        assert!(!t.authorized(None));
        assert!(Security::default().authorized(None));
    }
}
