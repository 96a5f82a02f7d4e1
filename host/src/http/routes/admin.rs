//! `POST /api/index/clear` and `POST /api/index/policy`: the state-changing
//! routes, behind [`crate::http::state_change`] (custom header, same
//! origin; the guard's token off loopback). A clear starts the rebuild at
//! once (searches answer `building` and status `indexing` until it is
//! done). `policy` takes `enabled=true|false`
//! and/or `history_days=N` in the query string and answers the policy now
//! stored, how many indexed sessions the new window retires at the next sweep
//! (`retires`); both apply at once (a new window from the next sweep).
//! `dry_run=true` changes nothing and answers the same fields: what the
//! change would store and retire (the dashboard's preview).
//! `POST /api/session/{key}/forget` forgets one session (see
//! `Store::forget`): `{ok, session_key, revision}`, 404 `not_found` when no
//! such session is indexed.

use super::{blocking, json_value, pairs, param, respond, QueryPairs};
use crate::engine::{EngineError, IndexerHandle};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::State;
use std::sync::Arc;

/// The indexer, or the error a server without one answers (500
/// `store_unavailable`, as for a store that cannot be written).
fn indexer(st: &AppState, what: &str) -> Result<Arc<IndexerHandle>, EngineError> {
    st.indexer
        .clone()
        .ok_or_else(|| EngineError::unavailable(format!("this server has no {what}")))
}
use axum::response::Response;

/// `POST /api/index/clear`.
pub async fn clear(State(st): State<AppState>, exposure: Exposure, _q: QueryPairs) -> Response {
    if let Err(e) = exposure.require_local("clearing the index", st.allow_remote_admin) {
        return respond(Err(e));
    }
    let indexer = match indexer(&st, "store to clear") {
        Ok(ix) => ix,
        Err(e) => return respond(Err(e.into())),
    };
    let ix = indexer.clone();
    let cleared = blocking(move || {
        let mut v = ix.clear()?;
        v["ok"] = true.into();
        Ok(json_value(&v))
    })
    .await;
    if cleared.is_ok() {
        // Rebuild now, not at the next periodic sweep (searches answer
        // `building` meanwhile).
        tokio::task::spawn_blocking(move || {
            if let Err(e) = indexer.reconcile() {
                tracing::warn!(target: "recall::index", error = %e, "rebuild after clear failed");
            }
        });
    }
    respond(cleared)
}

/// `POST /api/session/{key}/forget`.
pub async fn forget(
    State(st): State<AppState>,
    axum::extract::Path(key): axum::extract::Path<String>,
    _q: QueryPairs,
) -> Response {
    let indexer = match indexer(&st, "store to forget in") {
        Ok(ix) => ix,
        Err(e) => return respond(Err(e.into())),
    };
    let events = st.events.clone();
    let r = blocking(move || {
        let out = indexer
            .indexer()
            .store()
            .forget(&key)
            .map_err(EngineError::from)?;
        let Some(out) = out else {
            return Err(ApiError::not_found("no such session is indexed"));
        };
        Ok(json_value(&serde_json::json!({
            "ok": true,
            "session_key": key,
            "revision": out.revision,
        })))
    })
    .await;
    events.poke();
    respond(r)
}

/// `POST /api/index/policy`.
pub async fn policy(
    State(st): State<AppState>,
    exposure: Exposure,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    if let Err(e) = exposure.require_local("changing the history policy", st.allow_remote_admin) {
        return respond(Err(e));
    }
    respond(run_policy(st, q).await)
}

async fn run_policy(st: AppState, q: Result<QueryPairs, ApiError>) -> Result<Response, ApiError> {
    let p = pairs(q)?;
    let enabled = match param(&p, "enabled").map(str::trim) {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(ApiError::invalid("enabled must be true or false")),
    };
    let days = param(&p, "history_days")
        .map(|d| {
            d.trim()
                .parse::<u32>()
                .map_err(|_| ApiError::invalid("history_days must be a whole number of days"))
        })
        .transpose()?;
    let dry_run = match param(&p, "dry_run").map(str::trim) {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(ApiError::invalid("dry_run must be true or false")),
    };
    if enabled.is_none() && days.is_none() {
        return Err(ApiError::invalid("give enabled and/or history_days"));
    }
    let indexer = indexer(&st, "store policy")?;
    blocking(move || {
        let mut v = indexer.set_policy(enabled, days, dry_run)?;
        v["ok"] = true.into();
        Ok(json_value(&v))
    })
    .await
}
