//! The session list, the session view and lineage as JSON in, JSON out
//! over a [`MemIndex`](crate::MemIndex)'s manifest and shards — what the
//! wasm binding (offline mode, reports) and its byte ABI (the parity
//! harness) expose, so they answer with the daemon's bytes.
//!
//! The request is an object tagged by `query`; `params` holds the route's
//! query parameters (strings, numbers or booleans, read as the route reads
//! its query string):
//! `{"query":"sessions", "params":{"source":"codex","limit":5}}`,
//! `{"query":"session", "key":"pi:…", "params":{"scope":"all","locate":"…"}}`,
//! `{"query":"trace", "key":"pi:…"}`.
//! A key may be a bare session id when it is unambiguous.

use super::lineage::trace;
use super::sessions::{sessions, SessionsRequest};
use super::summary::{resolve_key, KeyError};
use super::view::{session_view, SessionViewRequest};
use crate::model::Manifest;
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A parameter value.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Int(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// One view query.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case", deny_unknown_fields)]
enum ViewQuery {
    Sessions {
        #[serde(default)]
        params: BTreeMap<String, Scalar>,
    },
    Session {
        key: String,
        #[serde(default)]
        params: BTreeMap<String, Scalar>,
    },
    Trace {
        key: String,
    },
}

fn pairs(p: &BTreeMap<String, Scalar>) -> Vec<(String, String)> {
    p.iter().map(|(k, v)| (k.clone(), v.text())).collect()
}

fn to_json<T: serde::Serialize>(r: Result<T, QueryError>) -> String {
    match r {
        Ok(v) => serde_json::to_string(&v).unwrap_or_else(|e| {
            QueryError::new(
                crate::ErrorCode::Internal,
                format!("serialization failed: {e}"),
            )
            .to_json()
        }),
        Err(e) => e.to_json(),
    }
}

/// The error a key that names no single session gives.
pub fn key_error(e: KeyError) -> QueryError {
    match e {
        KeyError::Unknown => QueryError::new(crate::ErrorCode::SessionNotFound, "Unknown session."),
        KeyError::Ambiguous(_) => QueryError::new(crate::ErrorCode::InvalidParam, e.to_string()),
    }
}

/// Runs `request_json` over manifest `m`, loading shards with `shard`
/// (by generation file name): the response JSON or the §7 error body.
pub fn views_json(
    m: &Manifest,
    shard: &dyn Fn(&str) -> Option<std::sync::Arc<PreparedShard>>,
    request_json: &str,
) -> String {
    let q: ViewQuery = match serde_json::from_str(request_json) {
        Ok(q) => q,
        Err(e) => {
            return QueryError::new(
                crate::ErrorCode::InvalidParam,
                format!("not a view query: {e}"),
            )
            .to_json()
        }
    };
    match q {
        ViewQuery::Sessions { params } => {
            let p = pairs(&params);
            let it = p.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            to_json(SessionsRequest::from_pairs(it).and_then(|r| sessions(m, &r)))
        }
        ViewQuery::Session { key, params } => {
            let p = pairs(&params);
            let it = p.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            to_json((|| {
                let r = SessionViewRequest::from_pairs(it)?;
                let (k, e) = resolve_key(m, &key, false).map_err(key_error)?;
                let s = shard(&e.generation_file).ok_or_else(|| {
                    QueryError::new(
                        crate::ErrorCode::SessionNotFound,
                        "This session is not in the offline index.",
                    )
                })?;
                Ok(session_view(k, e, m.revision, &s, &r, None))
            })())
        }
        ViewQuery::Trace { key } => to_json(
            resolve_key(m, &key, false)
                .map_err(key_error)
                .and_then(|(k, _)| trace(m, k).ok_or_else(|| key_error(KeyError::Unknown))),
        ),
    }
}
