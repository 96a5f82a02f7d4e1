//! `GET /api/index/status`: the indexer's phase and progress, with the
//! manifest's revision, store id and per-source coverage, the agent
//! directories looked in (`roots`, each with whether it exists) and whether
//! this is the bundled demo (`demo`), the store policy in force (`policy`,
//! null without an indexer), the sessions that policy retired with the
//! sentence saying why (`retired`, null when none); `availability` says as a value
//! whether the index answers as current (`{state: "unavailable", reason:
//! "disabled" | "not-ready"}` otherwise).

use super::{blocking, json, respond, NO_STORE};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use crate::index::{Availability, IndexStatus};
use axum::extract::State;
use axum::response::Response;
use recall_core::directory::coverage;
use serde_json::json;

/// The handler.
pub async fn status(State(st): State<AppState>, exposure: Exposure) -> Response {
    let (catalog, indexer, demo) = (st.catalog.clone(), st.indexer.clone(), st.demo);
    respond(
        blocking(move || {
            // Without an indexer: disabled, idle, no roots, no policy.
            let s = indexer
                .as_ref()
                .map_or_else(IndexStatus::disabled, |ix| ix.status());
            let manifest = catalog.manifest()?;
            let roots: Vec<_> = indexer
                .as_ref()
                .map(|ix| ix.roots())
                .unwrap_or_default()
                .into_iter()
                .map(|(source, dir)| exposure.root(source, &dir))
                .collect();
            let building = indexer.as_ref().is_some_and(|ix| ix.building());
            let body = json!({
                "ok": true,
                "enabled": s.enabled,
                "availability": Availability::of(s.enabled, building),
                "phase": s.phase,
                "building": building,
                "files_indexed": s.files_indexed,
                "files_due": s.files_due,
                "files_failed": s.files_failed,
                "degraded_roots": exposure.degraded_roots(s.degraded_roots),
                "last_sweep_ms": s.last_sweep_ms,
                "last_reconcile_ms": s.last_reconcile_ms,
                "failed_units": exposure.failed_units(s.failed_units),
                "skipped_files": exposure.skipped_files(s.skipped_files),
                "truncated_sessions": s.truncated_sessions,
                "retired": s.retired,
                "revision": manifest.revision,
                "store_id": manifest.store_id,
                "sessions": manifest.sessions.len(),
                "coverage": coverage(&manifest),
                "roots": roots,
                "demo": demo,
                "policy": indexer.as_ref().map(|ix| ix.policy()),
            });
            Ok::<_, ApiError>(json(body.to_string(), NO_STORE))
        })
        .await,
    )
}
