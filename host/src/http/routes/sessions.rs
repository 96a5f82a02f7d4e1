//! `GET /api/sessions`: the session list — a thin adapter over
//! `recall_core::session::sessions` (filters `source`, `cwd`, `since`,
//! `until`, `parent`, `branch`, `q`, `id`, `title`, `no_cwd`, `presence`;
//! newest activity first; keyset cursor; `facets=true` adds the home
//! page's projects and activity).

use super::{blocking, json_value, pairs, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::AppState;
use axum::extract::State;
use axum::response::Response;
use recall_core::session::{sessions, SessionsRequest};

pub use recall_core::session::sessions::{DEFAULT_LIMIT, MAX_LIMIT};

fn request(p: &[(String, String)]) -> Result<SessionsRequest, ApiError> {
    SessionsRequest::from_pairs(p.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(ApiError::from)
}

/// Reads the query string as the handler does (filters, limit, cursor),
/// without a store: for the fuzz targets.
pub fn check_params(p: &[(String, String)]) -> Result<(), ApiError> {
    let r = request(p)?;
    r.filter.compile()?;
    r.after()?;
    Ok(())
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
    let r = request(&super::clocked(pairs(q)?))?;
    let catalog = st.catalog.clone();
    let body = blocking(move || {
        let manifest = catalog.manifest()?;
        let page = sessions(&manifest, &r)?;
        let mut body =
            serde_json::to_value(&page).map_err(|e| ApiError::internal(e.to_string()))?;
        exposure.session_json(&mut body);
        Ok(body)
    })
    .await?;
    Ok(json_value(&body))
}

/// Decodes a list cursor as the unfiltered listing would: the last
/// `(sort ts, key)` returned, or 400 `invalid_cursor` (for the fuzz targets).
pub fn decode_cursor(raw: &str) -> Result<Option<(i64, String)>, ApiError> {
    let r = SessionsRequest {
        cursor: Some(raw.to_string()),
        ..SessionsRequest::default()
    };
    r.after().map_err(ApiError::from)
}
