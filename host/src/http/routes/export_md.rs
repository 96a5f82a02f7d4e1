//! `GET /api/session/{key}/export.md`, and `export.json` below: the session as Markdown
//! ([`crate::export::markdown`]), downloaded as `<key>.md`. `subagents=true`
//! adds its descendant sessions, `tools=true` its tool rows. A remote client
//! gets no resume command (cwd and titles stay visible, as in every view).
//! With `serve --remote` another host's session (`<host-id>/<key>`) is
//! rendered from that host's published shards, without resume or paths.

use super::{blocking, pairs, param, respond, QueryPairs};
use crate::export::markdown::{self, MarkdownError, MarkdownOptions};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use recall_core::model::Shard;

pub(super) fn flag(p: &[(String, String)], name: &str) -> Result<bool, ApiError> {
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
        let (md, name) = blocking(move || {
            let opened = super::one_session::open(catalog.as_ref(), &k, None)?;
            let m = &opened.manifest;
            // The renderer asks by entry; an entry's key is the one naming its generation.
            let mut read = |e: &recall_core::model::ManifestEntry| -> Result<Shard, String> {
                let key = m
                    .sessions
                    .iter()
                    .find(|(_, x)| x.generation_file == e.generation_file)
                    .map_or(opened.key.as_str(), |(k, _)| k.as_str());
                super::one_session::session_shard(catalog.as_ref(), key, e).map_err(|e| e.message)
            };
            let md = markdown::render(m, &opened.key, opts, &mut read).map_err(|e| match e {
                MarkdownError::NotFound => ApiError::session_not_found(),
                e => ApiError::internal(e.to_string()),
            })?;
            Ok((md, opened.key.clone()))
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
        let name = format!("{}.md", crate::export::safe_name(&name));
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
/// --json`. A remote client, and another host's session, get the entry
/// without file paths, cursors or the resume command (the latter also
/// `host: {id, name}`).
pub async fn export_json(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    _q: QueryPairs,
) -> Response {
    let catalog = st.catalog.clone();
    let r = blocking(move || {
        let opened = super::one_session::open(catalog.as_ref(), &key, None)?;
        let (key, entry) = (&opened.key, &opened.entry);
        let shard = super::one_session::session_shard(catalog.as_ref(), key, entry)?;
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
        if exposure.is_remote() || opened.host.is_some() {
            if let Some(o) = session.as_object_mut() {
                for k in ["files", "paths", "resume", "state"] {
                    o.remove(k);
                }
            }
        }
        let mut body =
            serde_json::json!({"session_key": key, "session": session, "records": records});
        opened.stamp(&mut body);
        let mut r = super::json(body.to_string(), super::NO_STORE);
        let name = format!("{}.json", crate::export::safe_name(key));
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
        }
        Ok(r)
    })
    .await;
    respond(r)
}
