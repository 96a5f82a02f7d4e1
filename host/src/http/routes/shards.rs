//! `GET /api/index/manifest` and `GET /api/index/generations/{file}`: the
//! shards for offline search. Generations are immutable and named by their
//! content hash, so they are cached for a year and revalidated by name; the
//! manifest changes on every publish and is revalidated by its content hash.

use super::{blocking, respond};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use recall_core::naming::{hash16, is_generation_file_name};

/// `Cache-Control` of generation files.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Whether `If-None-Match` names `etag` (or `*`).
pub(super) fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == etag || t == "*")
}

pub(super) fn cached(
    body: Vec<u8>,
    etag: &str,
    cache: &'static str,
    headers: &HeaderMap,
) -> Response {
    let mut r = if not_modified(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    r
}

/// The generation handler.
pub async fn generation(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    // A generation holds its session's file paths and resume command, and
    // its name is the hash of those very bytes: not for remote clients.
    if let Err(e) = exposure.require_local("the offline index (generation files)", false) {
        return e.into_response();
    }
    if !is_generation_file_name(&file) {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_param",
            "a generation name is 16 lowercase hex digits and .json",
        )
        .into_response();
    }
    let etag = format!("\"{}\"", &file[..16]);
    if not_modified(&headers, &etag) {
        return cached(Vec::new(), &etag, IMMUTABLE, &headers);
    }
    let catalog = st.catalog.clone();
    let name = file.clone();
    let bytes = blocking(move || catalog.generation(&name).map_err(ApiError::from)).await;
    match bytes {
        Ok(Some(b)) => cached(b, &etag, IMMUTABLE, &headers),
        Ok(None) => ApiError::not_found("no such generation").into_response(),
        Err(e) => respond(Err(e)),
    }
}

/// The manifest handler.
pub async fn manifest(
    State(st): State<AppState>,
    exposure: Exposure,
    headers: HeaderMap,
) -> Response {
    // The manifest lists every source file path: not for remote clients.
    if let Err(e) = exposure.require_local("the offline index (manifest)", false) {
        return e.into_response();
    }
    let catalog = st.catalog.clone();
    let got = blocking(move || {
        let bytes = catalog.manifest_bytes()?;
        let etag = format!("\"{}\"", hash16(&bytes));
        Ok::<_, ApiError>((etag, bytes))
    })
    .await;
    match got {
        Ok((etag, bytes)) => cached(bytes, &etag, "no-cache", &headers),
        Err(e) => respond(Err(e)),
    }
}
