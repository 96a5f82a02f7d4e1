//! The dashboard's way in when the server has a token: `recall serve`
//! prints a one-time link `/login?code=…` (single use, valid for
//! [`CODE_TTL`]); opening it sets an `HttpOnly`, `SameSite=Strict` cookie
//! holding a per-server random secret (never the token), which `/api/*`
//! accepts instead of the bearer header. Codes are kept hashed.

use super::errors::ApiError;
use super::security::constant_time_eq;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a login code stays valid.
pub const CODE_TTL: Duration = Duration::from_secs(10 * 60);
/// Codes outstanding at once (older ones are dropped first).
pub const MAX_CODES: usize = 16;
/// The session cookie's name.
pub const COOKIE: &str = "recall_session";

/// Why the login state could not be made.
#[derive(Debug, thiserror::Error)]
#[error("no system randomness for login codes: {0}")]
pub struct RandomError(String);

/// Login codes and the cookie secret of one server.
#[derive(Debug)]
pub struct Logins {
    secret: String,
    codes: Mutex<Vec<([u8; 32], Instant)>>,
    ttl: Duration,
}

fn random_hex(bytes: usize) -> Result<String, RandomError> {
    let mut b = vec![0u8; bytes];
    getrandom::fill(&mut b).map_err(|e| RandomError(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn digest(code: &str) -> [u8; 32] {
    Sha256::digest(code.as_bytes()).into()
}

impl Logins {
    /// Fresh state: a new cookie secret, no codes.
    pub fn new() -> Result<Logins, RandomError> {
        Logins::with_ttl(CODE_TTL)
    }

    /// As [`Logins::new`] with another code lifetime.
    pub fn with_ttl(ttl: Duration) -> Result<Logins, RandomError> {
        Ok(Logins {
            secret: random_hex(32)?,
            codes: Mutex::new(Vec::new()),
            ttl,
        })
    }

    /// A new single-use code.
    pub fn mint(&self) -> Result<String, RandomError> {
        let code = random_hex(16)?;
        let now = Instant::now();
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, t)| now.duration_since(*t) < self.ttl);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push((digest(&code), now));
        Ok(code)
    }

    /// Spends `code` at `now`: the cookie value when it was minted here, is
    /// unexpired and unused.
    pub fn redeem(&self, code: &str, now: Instant) -> Option<&str> {
        let d = digest(code);
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        let i = codes.iter().position(|(c, _)| constant_time_eq(c, &d))?;
        let (_, minted) = codes.remove(i);
        (now.saturating_duration_since(minted) < self.ttl).then_some(self.secret.as_str())
    }

    /// Whether the request's cookies carry this server's session.
    pub fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .any(|(k, v)| k == COOKIE && constant_time_eq(v.as_bytes(), self.secret.as_bytes()))
    }

    /// `GET /login?code=…`: 303 to `/` with the cookie, or 401.
    pub fn answer(&self, code: Option<&str>) -> Response {
        let Some(secret) = code.and_then(|c| self.redeem(c, Instant::now())) else {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this login link was already used or has expired; restart `recall serve` for a new one",
            )
            .into_response();
        };
        let cookie = format!("{COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/");
        let mut r = StatusCode::SEE_OTHER.into_response();
        let h = r.headers_mut();
        h.insert(header::LOCATION, HeaderValue::from_static("/"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            h.insert(header::SET_COOKIE, v);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_single_use_and_expire() {
        let l = Logins::with_ttl(Duration::from_secs(60)).unwrap();
        let a = l.mint().unwrap();
        let b = l.mint().unwrap();
        assert_ne!(a, b);
        let now = Instant::now();
        assert!(l.redeem(&a, now).is_some());
        assert!(l.redeem(&a, now).is_none(), "single use");
        assert!(l.redeem("not-a-code", now).is_none());
        assert!(
            l.redeem(&b, now + Duration::from_secs(61)).is_none(),
            "expired"
        );
    }

    #[test]
    fn only_this_servers_cookie_passes() {
        let l = Logins::new().unwrap();
        let other = Logins::new().unwrap();
        let code = l.mint().unwrap();
        let secret = l.redeem(&code, Instant::now()).unwrap().to_string();
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=b; {COOKIE}={secret}")).unwrap(),
        );
        assert!(l.cookie_ok(&h));
        assert!(!other.cookie_ok(&h));
        assert!(!l.cookie_ok(&HeaderMap::new()));
    }

    #[test]
    fn outstanding_codes_are_bounded() {
        let l = Logins::new().unwrap();
        let first = l.mint().unwrap();
        for _ in 0..MAX_CODES {
            l.mint().unwrap();
        }
        assert!(l.redeem(&first, Instant::now()).is_none());
    }
}
