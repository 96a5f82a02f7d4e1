//! `GET /api/session/{key}/export.md`, and `export.json` below: the session as Markdown
//! ([`crate::export::markdown`]), downloaded as `<key>.md`. `subagents=true`
//! adds its descendant sessions, `tools=true` its tool rows. A remote client
//! gets no resume command (cwd and titles stay visible, as in every view).

use super::{blocking, pairs, param, respond, QueryPairs};
use crate::export::markdown::{self, MarkdownError, MarkdownOptions};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use recall_core::model::Shard;

fn flag(p: &[(String, String)], name: &str) -> Result<bool, ApiError> {
    match param(p, name).map(str::trim) {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(ApiError::invalid(format!("{name} must be true or false"))),
    }
}

/// The handler.
pub async fn export_md(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    let r = async {
        let p = pairs(q)?;
        let opts = MarkdownOptions {
            tools: flag(&p, "tools")?,
            subagents: flag(&p, "subagents")?,
            resume: !exposure.is_remote(),
        };
        let catalog = st.catalog.clone();
        let k = key.clone();
        let md = blocking(move || {
            let m = catalog.manifest()?;
            let mut read = |e: &recall_core::model::ManifestEntry| -> Result<Shard, String> {
                let b = catalog
                    .generation(&e.generation_file)
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| "the generation is gone".to_string())?;
                serde_json::from_slice(&b).map_err(|e| e.to_string())
            };
            markdown::render(&m, &k, opts, &mut read).map_err(|e| match e {
                MarkdownError::NotFound => {
                    ApiError::not_found("no session with this key is indexed")
                }
                e => ApiError::internal(e.to_string()),
            })
        })
        .await?;
        let mut r = md.into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/markdown; charset=utf-8"),
        );
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(super::NO_STORE),
        );
        let name = format!("{}.md", crate::export::safe_name(&key));
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
        Ok::<Response, ApiError>(r)
    }
    .await;
    respond(r)
}

/// `GET /api/session/{key}/export.json`: the whole session as JSON — its
/// manifest entry and every record in order (`index`, `role`, `ts_ms`,
/// `superseded`, `subagent`, `truncated`, `text`), the shape of `recall show
/// --json`. A remote client gets the entry without file paths, cursors or
/// the resume command.
pub async fn export_json(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    _q: QueryPairs,
) -> Response {
    let catalog = st.catalog.clone();
    let r = blocking(move || {
        let m = catalog.manifest()?;
        let Some(entry) = m.sessions.get(&key) else {
            return Err(ApiError::not_found("no session with this key is indexed"));
        };
        let bytes = catalog
            .generation(&entry.generation_file)?
            .ok_or_else(|| ApiError::internal("the session's generation is gone"))?;
        let shard: Shard =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(e.to_string()))?;
        let active = recall_core::derive_active(&shard.records, &shard.marks);
        let records: Vec<serde_json::Value> = shard
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                serde_json::json!({
                    "index": i, "role": r.role, "ts_ms": r.ts_ms,
                    "superseded": !active.get(i).copied().unwrap_or(true),
                    "subagent": r.subagent, "truncated": r.truncated, "text": r.text,
                })
            })
            .collect();
        let mut session =
            serde_json::to_value(entry).map_err(|e| ApiError::internal(e.to_string()))?;
        if exposure.is_remote() {
            if let Some(o) = session.as_object_mut() {
                for k in ["files", "paths", "resume", "state"] {
                    o.remove(k);
                }
            }
        }
        let body = serde_json::json!({"session_key": key, "session": session, "records": records});
        let mut r = super::json(body.to_string(), super::NO_STORE);
        let name = format!("{}.json", crate::export::safe_name(&key));
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
        }
        Ok(r)
    })
    .await;
    respond(r)
}
