//! `GET /api/index/manifest` and `GET /api/index/generations/{file}`: the
//! shards for offline search. Generations are immutable and named by their
//! content hash, so they are cached for a year and revalidated by name; the
//! manifest changes on every publish and is revalidated by its content hash.

use super::{blocking, respond};
use crate::engine::{EngineError, ReadCatalog};
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

/// A body with `Cache-Control: cache` and `ETag: etag` (JSON), or 304
/// when `If-None-Match` already names it.
pub(super) fn cached(
    body: Vec<u8>,
    etag: &str,
    cache: &'static str,
    headers: &HeaderMap,
) -> Response {
    cached_as(body, etag, cache, "application/json", headers)
}

fn cached_as(
    body: Vec<u8>,
    etag: &str,
    cache: &'static str,
    content_type: &'static str,
    headers: &HeaderMap,
) -> Response {
    let mut r = if not_modified(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    r
}

/// Reads one file of a kind from the catalog (`None` = no such file).
pub(super) type ReadFile = fn(&dyn ReadCatalog, &str) -> Result<Option<Vec<u8>>, EngineError>;

/// One kind of immutable file the offline index downloads by its content
/// name (`<hash16>.<ext>`): generations and segments.
pub(super) struct Immutable {
    /// What the refusal to a remote client names.
    pub what: &'static str,
    /// Whether a requested name is one of these.
    pub is_name: fn(&str) -> bool,
    /// The 400 message for any other name.
    pub invalid: &'static str,
    /// The 404 message.
    pub missing: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Reads it (`None` = no such file).
    pub read: ReadFile,
}

/// Serves `file` of `kind`: local clients only (a generation holds its
/// session's paths and resume command, and a segment is built from
/// transcript text and names generations), cached for a year and
/// revalidated by the name's hash.
pub(super) async fn immutable(
    kind: &'static Immutable,
    st: AppState,
    exposure: Exposure,
    file: String,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = exposure.require_local(kind.what, false) {
        return e.into_response();
    }
    if !(kind.is_name)(&file) {
        return ApiError::new(StatusCode::BAD_REQUEST, "invalid_param", kind.invalid)
            .into_response();
    }
    let etag = format!("\"{}\"", &file[..16]);
    let respond_with =
        |body: Vec<u8>| cached_as(body, &etag, IMMUTABLE, kind.content_type, &headers);
    if not_modified(&headers, &etag) {
        return respond_with(Vec::new());
    }
    let catalog = st.catalog.clone();
    let read = kind.read;
    let bytes = blocking(move || read(catalog.as_ref(), &file).map_err(ApiError::from)).await;
    match bytes {
        Ok(Some(b)) => respond_with(b),
        Ok(None) => ApiError::not_found(kind.missing).into_response(),
        Err(e) => respond(Err(e)),
    }
}

static GENERATION: Immutable = Immutable {
    what: "the offline index (generation files)",
    is_name: is_generation_file_name,
    invalid: "a generation name is 16 lowercase hex digits and .json",
    missing: "no such generation",
    content_type: "application/json",
    read: |catalog, name| catalog.generation(name),
};

/// The generation handler.
pub async fn generation(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    immutable(&GENERATION, st, exposure, file, headers).await
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
