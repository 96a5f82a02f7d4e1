//! Page cursors (DESIGN.md §4): base64url (no padding) of
//! `{v, qh, rev, store, after}`. `qh` fingerprints the normalized request
//! (terms, filters, sort — not `limit`), `rev`/`store` name the manifest
//! snapshot, `after` is the last returned session's sort key.

use crate::naming::hash16;
use crate::query::{Query, QueryError, Sort};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::cmp::{Ordering, Reverse};

/// The cursor format version.
pub const VERSION: u32 = 1;

/// A session's position in the result order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortKey {
    /// Relevance only: occurrences in the best record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u64>,
    /// Relevance only: UTF-8 length of the best record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
    /// `best_ts_ms` (newest) or the best record's `ts_ms` (relevance).
    pub ts: i64,
    /// The session key.
    pub key: String,
}

impl SortKey {
    /// Compares two keys in result order (`Less` = earlier on the page).
    pub fn order(&self, other: &SortKey) -> Ordering {
        let rank = |k: &SortKey| {
            (
                Reverse(k.score.unwrap_or(0)),
                k.len.unwrap_or(0),
                Reverse(k.ts),
            )
        };
        rank(self)
            .cmp(&rank(other))
            .then_with(|| self.key.cmp(&other.key))
    }
}

/// A decoded cursor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// Format version.
    pub v: u32,
    /// Request fingerprint.
    pub qh: String,
    /// Manifest revision of the snapshot.
    pub rev: u64,
    /// Store id of the snapshot.
    pub store: String,
    /// Last returned session's sort key.
    pub after: SortKey,
}

impl Cursor {
    /// Encodes as base64url without padding.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Decodes and checks it belongs to `query`. Undecodable, another
    /// version, or another request ⇒ `invalid_cursor`.
    pub fn decode(s: &str, query: &Query) -> Result<Cursor, QueryError> {
        let invalid = || {
            QueryError::new(
                crate::error::ErrorCode::InvalidCursor,
                "the cursor is not valid for this query",
            )
        };
        let bytes = URL_SAFE_NO_PAD.decode(s.trim()).map_err(|_| invalid())?;
        let c: Cursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        if c.v != VERSION || c.qh != fingerprint(query) {
            return Err(invalid());
        }
        let relevance = query.sort == Sort::Relevance;
        if relevance != (c.after.score.is_some() && c.after.len.is_some()) {
            return Err(invalid());
        }
        Ok(c)
    }
}

/// A bound as the fingerprint holds it: an instant as its epoch ms (as
/// before relative forms existed), a relative form as its canonical text.
fn time_key(ms: Option<i64>, spec: Option<crate::time::TimeSpec>) -> serde_json::Value {
    match spec {
        Some(t) if t.is_relative() => serde_json::json!(t.canonical()),
        _ => serde_json::json!(ms),
    }
}

/// Fingerprint of the normalized request: everything but `limit` and `cursor`.
pub fn fingerprint(q: &Query) -> String {
    let mut canonical = serde_json::json!({
        "terms": q.terms,
        "sources": q.sources,
        "roles": q.roles,
        "scope": q.scope,
        "since": time_key(q.since, q.since_spec),
        "until": time_key(q.until, q.until_spec),
        "cwd": q.cwd,
        "include_superseded": q.include_superseded,
        "subagents": q.subagents,
        "sort": q.sort,
    });
    // Only when set, so cursors minted before the model filter stay valid.
    if !q.models.is_empty() {
        canonical["models"] = serde_json::json!(q.models);
    }
    // Only for expressions, so plain queries' cursors stay valid.
    if let Some(e) = &q.expr {
        canonical["expr"] = serde_json::json!(e.to_string());
    }
    hash16(canonical.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Request;

    fn query(q: &str, limit: &str) -> Query {
        let mut r = Request::new(q);
        r.limit = Some(limit.into());
        r.parse().unwrap()
    }

    #[test]
    fn the_fingerprint_covers_the_normalized_expression() {
        let fp = |q: &str| fingerprint(&query(q, "5"));
        assert_eq!(fp("a OR b"), fp("(a | b)"));
        assert_eq!(fp("a b"), fp("a  b a"));
        for other in ["a b", "a -b", "w:a OR b", "a OR b c"] {
            assert_ne!(fp("a OR b"), fp(other), "{other}");
        }
        assert_ne!(fp("a -b"), fp("a b"));
        assert_ne!(fp("w:a"), fp("a"));
    }

    #[test]
    fn round_trip_ignores_limit() {
        let c = Cursor {
            v: VERSION,
            qh: fingerprint(&query("foo", "5")),
            rev: 7,
            store: "s".into(),
            after: SortKey {
                score: None,
                len: None,
                ts: 5,
                key: "codex:x".into(),
            },
        };
        let enc = c.encode();
        assert!(!enc.contains('='));
        assert_eq!(Cursor::decode(&enc, &query("foo", "50")).unwrap(), c);
        assert_eq!(
            Cursor::decode(&enc, &query("bar", "5")).unwrap_err().code,
            "invalid_cursor"
        );
        assert_eq!(
            Cursor::decode("%%%", &query("foo", "5")).unwrap_err().code,
            "invalid_cursor"
        );
        assert_eq!(
            Cursor::decode("e30", &query("foo", "5")).unwrap_err().code,
            "invalid_cursor"
        );
    }

    #[test]
    fn order_newest_then_key() {
        let k = |ts, key: &str| SortKey {
            score: None,
            len: None,
            ts,
            key: key.into(),
        };
        assert_eq!(k(5, "b").order(&k(4, "a")), Ordering::Less);
        assert_eq!(k(5, "a").order(&k(5, "b")), Ordering::Less);
    }
}
