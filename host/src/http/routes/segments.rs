//! `GET /api/index/segments` (the live segment list) and
//! `GET /api/index/segments/{file}` (one segment's bytes): the store's index
//! segments for offline search, so a browser can plan a search before it
//! holds a single generation and then fetch only the candidates'. Segment
//! files are immutable and named by their content hash, so they are cached
//! for a year like generations; the list changes with every publish and is
//! revalidated by its content hash. Both are local-only, like generations:
//! a segment is built from transcript text and names generation files.

use super::shards::{cached, immutable, Immutable};
use super::{blocking, respond};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use recall_core::layout::is_segment_name;
use recall_core::naming::hash16;

pub use crate::engine::{SegmentListing, SegmentSummary};

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

static SEGMENT: Immutable = Immutable {
    what: "the offline index (segment files)",
    is_name: is_segment_name,
    invalid: "a segment name is 16 lowercase hex digits and .seg",
    missing: "no such segment",
    content_type: "application/octet-stream",
    read: |catalog, name| catalog.segment(name),
};

/// The segment handler.
pub async fn segment(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    immutable(&SEGMENT, st, exposure, file, headers).await
}
