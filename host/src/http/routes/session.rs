//! `GET /api/session/{key}`: one session's entries, paged (`offset`,
//! `limit`, `scope=conversation|all`), optionally centred on a search hit
//! with `locate=<locator JSON or base64url>` (see [`crate::http::locate`]).

use super::{blocking, json_value, limit, pairs, param, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::lineage;
use crate::http::locate::{self, Found, Verdict};
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::response::Response;
use recall_core::model::{Locator, Role};
use recall_core::PreparedShard;
use serde_json::{json, Value};

/// Default page size.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest page.
pub const MAX_LIMIT: usize = 500;

/// The handler.
pub async fn detail(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    respond(run(st, exposure, key, q).await)
}

async fn run(
    st: AppState,
    exposure: Exposure,
    key: String,
    q: Result<QueryPairs, ApiError>,
) -> Result<Response, ApiError> {
    let p = pairs(q)?;
    let all = match param(&p, "scope") {
        None | Some("conversation") => false,
        Some("all") => true,
        Some(_) => return Err(ApiError::invalid("scope must be conversation or all")),
    };
    let page = limit(param(&p, "limit"), DEFAULT_LIMIT, MAX_LIMIT);
    let offset = match param(&p, "offset") {
        None | Some("") => 0,
        Some(s) => s
            .trim()
            .parse::<usize>()
            .map_err(|_| ApiError::invalid("offset must be a non-negative integer"))?,
    };
    let target = param(&p, "locate")
        .filter(|s| !s.is_empty())
        .map(locate::parse)
        .transpose()?;
    // A locate re-extracts the session from its sources: it takes one of
    // the locate slots (429 beyond) so a flood of them cannot stall searches.
    let permit = target.as_ref().map(|_| st.locates.try_take()).transpose()?;
    let backend = st.backend.clone();
    let body = blocking(move || {
        let _permit = permit;
        let manifest = backend.manifest()?;
        let key = super::one_session::resolve_key(&manifest, &key)?;
        let entry = manifest
            .sessions
            .get(&key)
            .ok_or_else(ApiError::session_not_found)?;
        // A located hit may be a tool row even when only the conversation is
        // listed: look it up in the shard with its tool rows, or a cold cache
        // (the conversation-only shard) would report the hit stale.
        let shard = backend
            .catalog()
            .load(&key, entry, all || target.is_some())
            .map_err(|e| ApiError::store_unavailable(e.to_string()))?
            .shard;
        let visible: Vec<usize> = (0..shard.shard.records.len())
            .filter(|&i| all || shard.shard.records[i].role != Role::Tool)
            .collect();
        let (located, anchor_record) = match &target {
            None => (Value::Null, None),
            Some(loc) => {
                let (v, rec) = resolve(backend.as_ref(), &key, entry, &shard, loc, &visible);
                (v, rec)
            }
        };
        let start = match anchor_record {
            Some(entry_index) => {
                let half = page / 2;
                entry_index
                    .saturating_sub(half)
                    .min(visible.len().saturating_sub(page))
            }
            None => offset.min(visible.len()),
        };
        let end = (start + page).min(visible.len());
        let entries: Vec<Value> = visible[start..end]
            .iter()
            .enumerate()
            .map(|(n, &i)| entry_json(&shard, start + n, i))
            .collect();
        let mut session = lineage::summary(&key, entry);
        session["paths"] = json!(entry.meta.paths);
        session["generation_file"] = json!(entry.generation_file);
        let mut body = json!({
            "ok": true,
            "revision": manifest.revision,
            "session": session,
            "scope": if all { "all" } else { "conversation" },
            "total": visible.len(),
            "offset": start,
            "limit": page,
            "entries": entries,
            "locate": located,
        });
        exposure.session_json(&mut body);
        Ok(body)
    })
    .await?;
    Ok(json_value(&body))
}

fn entry_json(shard: &PreparedShard, index: usize, record: usize) -> Value {
    let r = &shard.shard.records[record];
    json!({
        "index": index,
        "total_index": record,
        "role": r.role,
        "ts_ms": r.ts_ms,
        "seq": r.seq,
        "superseded": !shard.active.get(record).copied().unwrap_or(true),
        "truncated": r.truncated,
        "subagent": r.subagent,
        "text": r.text,
        "locator": r.locator,
    })
}

/// Resolves a locator: the `locate` object and, when the hit has a place in
/// the page, its entry index (the page is centred on it).
fn resolve(
    backend: &dyn crate::http::Backend,
    key: &str,
    entry: &recall_core::ManifestEntry,
    shard: &PreparedShard,
    loc: &Locator,
    visible: &[usize],
) -> (Value, Option<usize>) {
    let records = &shard.shard.records;
    let (record, exact) = match locate::find(records, loc) {
        Found::Exact(i) => (i, true),
        Found::Moved(i) => (i, false),
        Found::Changed(_) => {
            return (
                json!({"state": "stale", "reason": "the record at this place changed since the hit was found"}),
                None,
            )
        }
        Found::Missing => {
            return (
                json!({"state": "stale", "reason": "the record is no longer in this session"}),
                None,
            )
        }
    };
    // The entry showing the record, or the nearest one before it (e.g. a
    // tool row while only the conversation is listed).
    let (entry_index, shown) = match visible.binary_search(&record) {
        Ok(n) => (n, true),
        Err(n) => (
            n.saturating_sub(1).min(visible.len().saturating_sub(1)),
            false,
        ),
    };
    let place = (!visible.is_empty()).then_some(entry_index);
    let verdict = if entry.source_gone {
        Verdict::Unavailable("the session's source files are gone".into())
    } else {
        match backend.reextract(key, entry) {
            Ok(fresh) => locate::verify(&records[record], fresh.as_ref()),
            Err(e) => Verdict::Unavailable(format!("the source could not be read: {e}")),
        }
    };
    let mut v = match verdict {
        Verdict::Verified => json!({
            "state": "resolved",
            "anchor": if exact && shown { "exact" } else { "nearest" },
        }),
        Verdict::Stale(reason) => json!({"state": "stale", "reason": reason}),
        Verdict::Unavailable(reason) => json!({"state": "unavailable", "reason": reason}),
    };
    if let Some(n) = place {
        // Also given for stale/unavailable: the indexed copy is still shown.
        v["entry_index"] = json!(n);
        v["total_index"] = json!(record);
    }
    (v, place)
}
