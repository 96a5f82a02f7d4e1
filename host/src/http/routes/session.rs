//! `GET /api/session/{key}`: one session's entries, paged (`offset`,
//! `limit`, `scope=conversation|all`), optionally centred on a search hit
//! with `locate=<locator JSON or base64url>` — a thin adapter over
//! `recall_core::session::session_view`; the hit is verified here by
//! re-extracting the session ([`crate::engine::verify`]). `{key}`
//! may be a bare session id when it is unambiguous.

use super::{blocking, json_value, pairs, respond, QueryPairs};
use crate::engine::verify::SourceCheck;
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::response::Response;
use recall_core::session::locate::Verdict;
use recall_core::session::{session_view, SessionViewRequest};

pub use recall_core::session::view::{DEFAULT_LIMIT, MAX_LIMIT};

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
    let r = SessionViewRequest::from_pairs(p.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    // A locate re-extracts the session from its sources: it takes one of
    // the locate slots (429 beyond) so a flood of them cannot stall searches.
    let permit = r
        .locate
        .as_ref()
        .map(|_| st.locates.try_take())
        .transpose()?;
    let (catalog, indexer) = (st.catalog.clone(), st.indexer.clone());
    let body = blocking(move || {
        let _permit = permit;
        // A located hit may be a tool row even when only the conversation is
        // listed: look it up in the shard with its tool rows, or a cold cache
        // (the conversation-only shard) would report the hit stale.
        let all = r.scope == recall_core::session::Scope::All;
        let opened =
            super::one_session::open(catalog.as_ref(), &key, Some(all || r.locate.is_some()))?;
        let (key, entry) = (&opened.key, &opened.entry);
        let shard = opened
            .shard
            .clone()
            .ok_or_else(|| ApiError::internal("the shard was not loaded"))?;
        let foreign = opened.host.is_some();
        // Re-reading sources is the indexer's: a server without one cannot
        // verify a hit against its source, nor this host another host's.
        let mut check = |record: usize| {
            if foreign {
                return Verdict::Unavailable(
                    "another host's session: its source is not here".into(),
                );
            }
            SourceCheck::through(indexer.as_deref(), key, entry, &shard.shard.records[record])
                .verdict(exposure.is_remote())
        };
        let page = session_view(
            key,
            entry,
            opened.manifest.revision,
            &shard,
            &r,
            Some(&mut check),
        );
        let mut body =
            serde_json::to_value(&page).map_err(|e| ApiError::internal(e.to_string()))?;
        exposure.session_json(&mut body);
        opened.stamp(&mut body);
        Ok(body)
    })
    .await?;
    Ok(json_value(&body))
}
