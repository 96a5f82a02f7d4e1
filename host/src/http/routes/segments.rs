//! `GET /api/index/segments` (the live segment list) and
//! `GET /api/index/segments/{file}` (one segment's bytes): the store's index
//! segments for offline search, so a browser can plan a search before it
//! holds a single generation and then fetch only the candidates'. Segment
//! files are immutable and named by their content hash, so they are cached
//! for a year like generations; the list changes with every publish and is
//! revalidated by its content hash. Both are local-only, like generations:
//! a segment is built from transcript text and names generation files.

use super::shards::{cached, not_modified, IMMUTABLE};
use super::{blocking, respond};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use recall_core::naming::hash16;
use serde::Serialize;

/// The body of `GET /api/index/segments`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SegmentListing {
    /// The store the list belongs to.
    pub store_id: String,
    /// The list's own revision (increases on every change).
    pub revision: u64,
    /// Live segments, oldest first.
    pub segments: Vec<SegmentSummary>,
}

/// One live segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentSummary {
    /// `<hash16>.seg`: fetch it from `/api/index/segments/{name}`.
    pub name: String,
    /// How many generations it indexes.
    pub generations: u64,
    /// The bytes of those generations.
    pub source_bytes: u64,
}

/// Whether `name` is `<hash16>.seg` (lowercase hex).
fn is_segment_name(name: &str) -> bool {
    name.len() == 20
        && name.ends_with(".seg")
        && name[..16]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The list handler.
pub async fn list(State(st): State<AppState>, exposure: Exposure, headers: HeaderMap) -> Response {
    if let Err(e) = exposure.require_local("the offline index (segment list)", false) {
        return e.into_response();
    }
    let catalog = st.catalog.clone();
    let got = blocking(move || {
        let listing = catalog.segment_list()?;
        let bytes = serde_json::to_vec(&listing)
            .map_err(|e| ApiError::internal(format!("cannot serialize the segment list: {e}")))?;
        let etag = format!("\"{}\"", hash16(&bytes));
        Ok::<_, ApiError>((etag, bytes))
    })
    .await;
    match got {
        Ok((etag, bytes)) => cached(bytes, &etag, "no-cache", &headers),
        Err(e) => respond(Err(e)),
    }
}

/// The segment file handler.
pub async fn segment(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(e) = exposure.require_local("the offline index (segment files)", false) {
        return e.into_response();
    }
    if !is_segment_name(&file) {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_param",
            "a segment name is 16 lowercase hex digits and .seg",
        )
        .into_response();
    }
    let etag = format!("\"{}\"", &file[..16]);
    let binary = |mut r: Response| {
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        r
    };
    if not_modified(&headers, &etag) {
        return binary(cached(Vec::new(), &etag, IMMUTABLE, &headers));
    }
    let catalog = st.catalog.clone();
    let name = file.clone();
    let bytes = blocking(move || catalog.segment(&name).map_err(ApiError::from)).await;
    match bytes {
        Ok(Some(b)) => binary(cached(b, &etag, IMMUTABLE, &headers)),
        Ok(None) => ApiError::not_found("no such segment").into_response(),
        Err(e) => respond(Err(e)),
    }
}
