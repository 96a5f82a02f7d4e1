//! `GET /api/session/{key}/report.html`: the session as a `recall report`
//! page ([`crate::report`]: one self-contained HTML file that shows and
//! searches its sessions offline), downloaded as `<key>.html`.
//! `subagents=true` adds its descendant sessions, as `recall report KEY`
//! does. This host's shards go in as their exact bytes; for a remote client,
//! and for another host's session (team serve, from its published shards),
//! every shard is re-encoded without its resume command and source paths
//! and named by its new bytes, and the manifest entries lose them too. One
//! of the export slots is held while the page is built (429 `busy` beyond).

use super::export_md::flag;
use super::one_session::{open, session_shard};
use super::{blocking, pairs, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use crate::report::{self, Payload};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// The handler.
pub async fn report_html(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    let r = async {
        let p = pairs(q)?;
        let subagents = flag(&p, "subagents")?;
        let permit = st.exports.try_take()?;
        let catalog = st.catalog.clone();
        let (page, key) = blocking(move || {
            let _permit = permit;
            build(catalog.as_ref(), &key, subagents, exposure.is_remote())
        })
        .await?;
        let mut r = page.into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(super::NO_STORE),
        );
        let name = format!("{}.html", crate::export::safe_name(&key));
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
        Ok::<Response, ApiError>(r)
    }
    .await;
    respond(r)
}

/// The page and the session's key.
fn build(
    catalog: &dyn crate::engine::ReadCatalog,
    key: &str,
    subagents: bool,
    remote: bool,
) -> Result<(String, String), ApiError> {
    let opened = open(catalog, key, None)?;
    let key = opened.key.clone();
    let redact = remote || opened.host.is_some();
    let wanted = vec![key.clone()];
    let keys = if subagents {
        report::with_descendants(&opened.manifest, &wanted)
            .map_err(|e| ApiError::internal(e.to_string()))?
    } else {
        wanted
    };
    let mut subset = report::subset(&opened.manifest, &keys);
    let mut generations = Vec::new();
    for (k, entry) in subset.sessions.iter_mut() {
        let bytes = if redact {
            let mut shard = session_shard(catalog, k, entry)?;
            shard.session.resume = None;
            shard.session.paths.clear();
            entry.meta.resume = None;
            entry.meta.paths.clear();
            let bytes =
                serde_json::to_vec(&shard).map_err(|e| ApiError::internal(e.to_string()))?;
            entry.generation_file = recall_core::naming::generation_file_name(&bytes);
            bytes
        } else {
            catalog
                .generation(&entry.generation_file)?
                .ok_or_else(|| ApiError::internal("the session's generation is gone"))?
        };
        generations.push((entry.generation_file.clone(), bytes));
    }
    let internal = |e: report::ReportError| ApiError::internal(e.to_string());
    let payload = Payload::new(&subset, generations, None)
        .and_then(|p| p.encode())
        .map_err(internal)?;
    let title = subset
        .sessions
        .get(&key)
        .and_then(|e| e.meta.title.clone())
        .unwrap_or_else(|| key.clone());
    let page = report::render(&crate::assets::find, &payload, &title).map_err(internal)?;
    Ok((page, key))
}
