//! `GET /api/sessions`: list and filter sessions — `source`, `cwd`, `since`,
//! `until`, `parent` — newest first (by `updated_ms`, then key), paged by
//! an opaque keyset cursor that survives publishes.

use super::{blocking, json_value, limit, pairs, param, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::lineage;
use crate::http::AppState;
use axum::extract::State;
use axum::response::Response;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use recall_core::model::{ManifestEntry, Source};
use recall_core::naming::hash16;
use recall_core::query::{parse_time, path_has_prefix};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::cmp::Reverse;

/// Default page size.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest page.
pub const MAX_LIMIT: usize = 500;

/// The parsed filters.
#[derive(Debug, Default, Serialize)]
struct Filter {
    sources: Option<Vec<Source>>,
    cwd: Vec<String>,
    since: Option<i64>,
    until: Option<i64>,
    /// `Some(None)` = top-level sessions only (`parent=none`).
    parent: Option<Option<String>>,
}

impl Filter {
    fn parse(p: &[(String, String)]) -> Result<Filter, ApiError> {
        let sources = match param(p, "source") {
            None => None,
            Some(list) => {
                let mut out = Vec::new();
                for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let src = Source::parse(s)
                        .ok_or_else(|| ApiError::invalid("source names an unknown source"))?;
                    if !out.contains(&src) {
                        out.push(src);
                    }
                }
                if out.is_empty() {
                    return Err(ApiError::invalid("source is empty"));
                }
                Some(out)
            }
        };
        let cwd = param(p, "cwd")
            .map(|l| {
                l.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let time = |name: &str| -> Result<Option<i64>, ApiError> {
            param(p, name)
                .map(|s| parse_time(s, name).map_err(ApiError::from))
                .transpose()
        };
        let parent = match param(p, "parent") {
            None | Some("") => None,
            Some("none") => Some(None),
            Some(k) => Some(Some(k.to_string())),
        };
        Ok(Filter {
            sources,
            cwd,
            since: time("since")?,
            until: time("until")?,
            parent,
        })
    }

    /// A session is listed when it overlaps `[since, until]`.
    fn matches(&self, e: &ManifestEntry) -> bool {
        let m = &e.meta;
        self.sources.as_ref().is_none_or(|s| s.contains(&m.source))
            && (self.cwd.is_empty()
                || m.cwd
                    .as_deref()
                    .is_some_and(|c| self.cwd.iter().any(|p| path_has_prefix(c, p))))
            && self
                .since
                .is_none_or(|s| m.updated_ms.or(m.created_ms).is_some_and(|t| t >= s))
            && self
                .until
                .is_none_or(|u| m.created_ms.or(m.updated_ms).is_some_and(|t| t <= u))
            && match &self.parent {
                None => true,
                Some(None) => m.parent.is_none(),
                Some(Some(k)) => m.parent.as_ref().is_some_and(|p| &p.key == k),
            }
    }

    fn fingerprint(&self) -> String {
        hash16(serde_json::to_string(self).unwrap_or_default().as_bytes())
    }
}

/// The list cursor: the filters' fingerprint and the last key returned.
#[derive(Debug, Serialize, Deserialize)]
struct ListCursor {
    v: u32,
    qh: String,
    ts: i64,
    key: String,
}

/// Reads the query string as the handler does (filters, limit, cursor),
/// without a store: for the fuzz targets.
pub fn check_params(p: &[(String, String)]) -> Result<(), ApiError> {
    let filter = Filter::parse(p)?;
    let _ = limit(param(p, "limit"), DEFAULT_LIMIT, MAX_LIMIT);
    if let Some(c) = param(p, "cursor").filter(|c| !c.is_empty()) {
        decode_cursor(c, &filter.fingerprint())?;
    }
    Ok(())
}

/// Decodes a list cursor made for the listing whose filters' fingerprint is
/// `qh`: the last `(sort ts, key)` returned, or 400 `invalid_cursor`.
pub fn decode_cursor(raw: &str, qh: &str) -> Result<(i64, String), ApiError> {
    let invalid = || {
        ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_cursor",
            "the cursor is not valid for this listing",
        )
    };
    let bytes = URL_SAFE_NO_PAD.decode(raw.trim()).map_err(|_| invalid())?;
    let cur: ListCursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if cur.v != 1 || cur.qh != qh {
        return Err(invalid());
    }
    Ok((cur.ts, cur.key))
}

/// Sort key: newest `updated_ms` first (sessions without one last), then key.
fn sort_ts(e: &ManifestEntry) -> i64 {
    e.meta.updated_ms.or(e.meta.created_ms).unwrap_or(i64::MIN)
}

/// The handler.
pub async fn list(State(st): State<AppState>, q: Result<QueryPairs, ApiError>) -> Response {
    respond(run(st, q).await)
}

async fn run(st: AppState, q: Result<QueryPairs, ApiError>) -> Result<Response, ApiError> {
    let p = pairs(q)?;
    let filter = Filter::parse(&p)?;
    let page = limit(param(&p, "limit"), DEFAULT_LIMIT, MAX_LIMIT);
    let qh = filter.fingerprint();
    let after = match param(&p, "cursor").filter(|c| !c.is_empty()) {
        None => None,
        Some(c) => Some(decode_cursor(c, &qh)?),
    };
    let backend = st.backend.clone();
    let body = blocking(move || {
        let manifest = backend.manifest()?;
        let mut rows: Vec<(&String, &ManifestEntry)> = manifest
            .sessions
            .iter()
            .filter(|(_, e)| filter.matches(e))
            .collect();
        let total = rows.len();
        rows.sort_by_key(|(k, e)| (Reverse(sort_ts(e)), k.as_str()));
        let start = match &after {
            None => 0,
            Some((ts, key)) => rows.partition_point(|(k, e)| {
                (Reverse(sort_ts(e)), k.as_str()) <= (Reverse(*ts), key.as_str())
            }),
        };
        let end = (start + page).min(rows.len());
        let kids = lineage::children(&manifest);
        let sessions: Vec<serde_json::Value> = rows[start..end]
            .iter()
            .map(|(k, e)| {
                let mut s = lineage::summary(k, e);
                s["children"] = json!(kids.get(k.as_str()).map_or(0, Vec::len));
                s
            })
            .collect();
        let cursor = (end < rows.len()).then(|| {
            let (k, e) = rows[end - 1];
            let c = ListCursor {
                v: 1,
                qh,
                ts: sort_ts(e),
                key: k.clone(),
            };
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&c).unwrap_or_default())
        });
        Ok(json!({
            "ok": true,
            "revision": manifest.revision,
            "total": total,
            "sessions": sessions,
            "cursor": cursor,
        }))
    })
    .await?;
    Ok(json_value(&body))
}
