//! `GET /api/sessions`: list and filter sessions — `source`, `cwd`, `since`,
//! `until`, `parent`, `branch`, and `q` (terms and phrases matched against
//! the title, cwd and branch with the search's folding) — newest first (by
//! `updated_ms`, then key), paged by an opaque keyset cursor that survives
//! publishes. `facets=true` adds the dashboard's home-page facets: the
//! projects (distinct cwds with counts) and the activity per day and source.

use super::{blocking, json_value, limit, pairs, param, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::lineage;
use crate::http::AppState;
use axum::extract::State;
use axum::response::Response;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use recall_core::fold::fold_str;
use recall_core::model::{ManifestEntry, Source};
use recall_core::naming::hash16;
use recall_core::query::{parse_terms, parse_time, path_has_prefix};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::cmp::Reverse;
use std::collections::BTreeMap;

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
    /// Branch names (exact), any of them.
    branch: Vec<String>,
    /// Folded query terms, all of which must occur in the title, cwd or branch.
    terms: Vec<String>,
}

/// A comma-separated list parameter, trimmed, empty items dropped.
fn list_param(p: &[(String, String)], name: &str) -> Vec<String> {
    param(p, name)
        .map(|l| {
            l.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Which filters a facet ignores (so the picker still offers the others).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ignore {
    Nothing,
    Cwd,
    Time,
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
        let cwd = list_param(p, "cwd");
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
            branch: list_param(p, "branch"),
            terms: parse_terms(param(p, "q").unwrap_or("")),
        })
    }

    /// A session is listed when it overlaps `[since, until]`.
    fn matches(&self, e: &ManifestEntry) -> bool {
        self.matches_but(e, Ignore::Nothing)
    }

    /// [`Filter::matches`], leaving out the filters `ignore` names.
    fn matches_but(&self, e: &ManifestEntry, ignore: Ignore) -> bool {
        let m = &e.meta;
        self.sources.as_ref().is_none_or(|s| s.contains(&m.source))
            && (ignore == Ignore::Cwd
                || self.cwd.is_empty()
                || m.cwd
                    .as_deref()
                    .is_some_and(|c| self.cwd.iter().any(|p| path_has_prefix(c, p))))
            && (ignore == Ignore::Time
                || self
                    .since
                    .is_none_or(|s| m.updated_ms.or(m.created_ms).is_some_and(|t| t >= s)))
            && (ignore == Ignore::Time
                || self
                    .until
                    .is_none_or(|u| m.created_ms.or(m.updated_ms).is_some_and(|t| t <= u)))
            && (self.branch.is_empty()
                || m.branch.as_ref().is_some_and(|b| self.branch.contains(b)))
            && self.metadata_matches(e)
            && match &self.parent {
                None => true,
                Some(None) => m.parent.is_none(),
                Some(Some(k)) => m.parent.as_ref().is_some_and(|p| &p.key == k),
            }
    }

    /// Every query term occurs in the folded title, cwd or branch (folded
    /// as search folds message text, so `"Straße"` finds `strasse`).
    fn metadata_matches(&self, e: &ManifestEntry) -> bool {
        if self.terms.is_empty() {
            return true;
        }
        let m = &e.meta;
        let fields = [m.title.as_deref(), m.cwd.as_deref(), m.branch.as_deref()];
        let hay: Vec<String> = fields.iter().flatten().map(|f| fold_str(f)).collect();
        self.terms
            .iter()
            .all(|t| hay.iter().any(|h| h.contains(t.as_str())))
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
pub async fn list(
    State(st): State<AppState>,
    exposure: crate::http::Exposure,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    respond(run(st, exposure, q).await)
}

async fn run(
    st: AppState,
    exposure: crate::http::Exposure,
    q: Result<QueryPairs, ApiError>,
) -> Result<Response, ApiError> {
    let p = pairs(q)?;
    let filter = Filter::parse(&p)?;
    let page = limit(param(&p, "limit"), DEFAULT_LIMIT, MAX_LIMIT);
    let qh = filter.fingerprint();
    let after = match param(&p, "cursor").filter(|c| !c.is_empty()) {
        None => None,
        Some(c) => Some(decode_cursor(c, &qh)?),
    };
    let facets = matches!(param(&p, "facets"), Some("true" | "1"));
    // The client's UTC offset in minutes (east positive), so activity days
    // are the viewer's local days.
    let tz_min: i64 = param(&p, "tz")
        .map(|s| {
            s.trim()
                .parse::<i64>()
                .map_err(|_| ApiError::invalid("tz must be minutes east of UTC"))
        })
        .transpose()?
        .unwrap_or(0)
        .clamp(-24 * 60, 24 * 60);
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
        let mut body = json!({
            "ok": true,
            "revision": manifest.revision,
            "total": total,
            "sessions": sessions,
            "cursor": cursor,
        });
        if facets {
            let all = || manifest.sessions.values();
            body["projects"] = projects(all().filter(|e| filter.matches_but(e, Ignore::Cwd)));
            body["activity"] = activity(
                all().filter(|e| filter.matches_but(e, Ignore::Time)),
                tz_min,
            );
        }
        exposure.session_json(&mut body);
        Ok(body)
    })
    .await?;
    Ok(json_value(&body))
}

/// Distinct cwds with their session counts, most sessions first.
fn projects<'a>(entries: impl Iterator<Item = &'a ManifestEntry>) -> serde_json::Value {
    let mut counts: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
    for e in entries {
        if let Some(cwd) = e.meta.cwd.as_deref() {
            let c = counts.entry(cwd).or_insert((0, i64::MIN));
            c.0 += 1;
            c.1 = c.1.max(sort_ts(e));
        }
    }
    let mut rows: Vec<(&str, (u64, i64))> = counts.into_iter().collect();
    rows.sort_by_key(|(cwd, (n, ts))| (Reverse(*n), Reverse(*ts), *cwd));
    json!(rows
        .iter()
        .map(|(cwd, (n, ts))| json!({"cwd": cwd, "sessions": n, "newest_ms": (*ts > i64::MIN).then_some(*ts)}))
        .collect::<Vec<_>>())
}

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// Sessions and messages per day and source, oldest day first. A session
/// counts on the (local) day it was last updated, with all its messages.
fn activity<'a>(
    entries: impl Iterator<Item = &'a ManifestEntry>,
    tz_min: i64,
) -> serde_json::Value {
    let mut days: BTreeMap<(i64, String), (u64, u64)> = BTreeMap::new();
    for e in entries {
        let Some(ts) = e.meta.updated_ms.or(e.meta.created_ms) else {
            continue;
        };
        let local = ts.saturating_add(tz_min * 60_000);
        let day = local.div_euclid(DAY_MS);
        let c = days
            .entry((day, e.meta.source.as_str().to_string()))
            .or_insert((0, 0));
        c.0 += 1;
        c.1 += e.meta.messages;
    }
    let rows: Vec<serde_json::Value> = days
        .iter()
        .map(|((day, source), (s, m))| {
            let (y, mo, d) = recall_core::time::civil_from_days(*day);
            json!({
                "day": format!("{y:04}-{mo:02}-{d:02}"),
                "source": source,
                "sessions": s,
                "messages": m,
            })
        })
        .collect();
    json!(rows)
}
