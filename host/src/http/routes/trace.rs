//! `GET /api/session/{key}/trace`: the session's lineage from the `parent`
//! links of the manifest — its ancestors (root first) and its descendant
//! tree (subagents, forks, resumed copies, branches).

use super::{blocking, json_value, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::lineage;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::json;

/// The handler.
/// It takes no parameters, but a query string that is not valid UTF-8 is
/// still refused, as on every route.
pub async fn trace(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    _q: QueryPairs,
) -> Response {
    let backend = st.backend.clone();
    respond(
        blocking(move || {
            let manifest = backend.manifest()?;
            let entry = manifest
                .sessions
                .get(&key)
                .ok_or_else(ApiError::session_not_found)?;
            let mut body = json!({
                "ok": true,
                "revision": manifest.revision,
                "session": lineage::summary(&key, entry),
                "ancestors": lineage::ancestors(&manifest, &key),
                "descendants": lineage::descendants(&manifest, &key),
            });
            exposure.session_json(&mut body);
            Ok(json_value(&body))
        })
        .await,
    )
}
