//! `GET /api/session/{key}/trace`: the session's lineage — its ancestors
//! (root first) and its descendant tree — from
//! `recall_core::session::trace`. `{key}` may be a bare session id when it
//! is unambiguous.

use super::{blocking, json_value, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::response::Response;

/// The handler.
/// It takes no parameters, but a query string that is not valid UTF-8 is
/// still refused, as on every route.
pub async fn trace(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    _q: QueryPairs,
) -> Response {
    let catalog = st.catalog.clone();
    respond(
        blocking(move || {
            let opened = super::one_session::open(catalog.as_ref(), &key, None)?;
            let t = recall_core::session::trace(&opened.manifest, &opened.key)
                .ok_or_else(ApiError::session_not_found)?;
            let mut body =
                serde_json::to_value(&t).map_err(|e| ApiError::internal(e.to_string()))?;
            exposure.session_json(&mut body);
            opened.stamp(&mut body);
            Ok(json_value(&body))
        })
        .await,
    )
}
