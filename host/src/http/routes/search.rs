//! `GET /api/sessions/message-search` (DESIGN.md §4): at most two at a time,
//! refreshing the index first when the last sweep is older than a second.

use super::{blocking, json, pairs, param, respond, QueryPairs, NO_STORE};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use crate::index::Availability;
use axum::extract::State;
use axum::response::Response;
use recall_core::{Budgets, Request, SearchEnv};
use std::time::{Duration, Instant};

/// The core's response plus what only the host knows: whether the index
/// answers as current (`availability`, a value, present only when
/// unavailable: `{state: "unavailable", reason: "disabled" | "not-ready"}` —
/// the answer still comes from the index as it is).
#[derive(serde::Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    response: &'a recall_core::Response,
    /// Only when unavailable: an answer from a current index has the core's
    /// bytes exactly (offline and reports give the same).
    #[serde(skip_serializing_if = "Availability::is_available")]
    availability: Availability,
}

/// How long `freshness=wait-until-current` waits for the index to catch up
/// before searching anyway (with `truncated.freshness: true`).
pub const FRESHNESS_DEADLINE: Duration = Duration::from_secs(5);

/// The handler.
pub async fn search(
    State(st): State<AppState>,
    exposure: Exposure,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    respond(run(st, exposure, q).await)
}

async fn run(
    st: AppState,
    exposure: Exposure,
    q: Result<QueryPairs, ApiError>,
) -> Result<Response, ApiError> {
    let pairs = pairs(q)?;
    let request = Request::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .with_default_clock(crate::clock::host_clock());
    // Parsed once, here: malformed requests get their 400 before sweeping
    // or taking a slot.
    let mut query = request.parse()?;
    query.debug = recall_core::query::parse_debug(param(&pairs, "debug"))?;
    let wait = match param(&pairs, "freshness").map(str::trim) {
        None | Some("" | "indexed") => false,
        Some("wait-until-current") => true,
        Some(_) => {
            return Err(ApiError::invalid(
                "freshness must be indexed or wait-until-current",
            ))
        }
    };
    let started = Instant::now();
    // The query-time refresh runs outside the search slots: a sweep must not
    // turn into 429s for other searches (it never waits behind a running
    // sweep, so concurrent requests do not pile up here).
    // Without an indexer there is nothing to refresh or reconcile: the
    // catalog is searched as it is.
    let refresh_after = st.refresh_after;
    let mut stale = false;
    // The query-time refresh, for the search's own worker (one hop to the
    // blocking pool per search, not two: the second hop cost about 0.1 ms of
    // a rare-token search's 0.4).
    let mut refresh = None;
    match st.indexer.clone() {
        Some(indexer) if wait => {
            // Reconcile first; past the deadline, search anyway and say so
            // (the sweep goes on in the background). An error before it is
            // the answer.
            let job = tokio::task::spawn_blocking(move || indexer.reconcile());
            match tokio::time::timeout(FRESHNESS_DEADLINE, job).await {
                Ok(Ok(r)) => r?,
                Ok(Err(_)) => return Err(ApiError::internal("a request worker failed")),
                Err(_) => stale = true,
            }
        }
        Some(indexer) => refresh = Some(indexer),
        None => {}
    }
    let slots = st.slots.clone();
    let (catalog, indexer) = (st.catalog.clone(), st.indexer.clone());
    let body = blocking(move || {
        if let Some(ix) = refresh {
            ix.refresh(refresh_after);
        }
        // After the refresh, as before: a sweep holds no search slot.
        let _permit = slots.try_take()?;
        // A store that cannot be read is a 500, not an empty answer.
        catalog.manifest()?;
        let clock = || started.elapsed().as_millis() as u64;
        let env = SearchEnv {
            catalog: catalog.catalog(),
            directories: None,
            clock: &clock,
            clock_us: None,
            budgets: Budgets::default(),
            building: indexer.as_ref().is_some_and(|ix| ix.building()),
        };
        let host = super::param(&pairs, "host");
        let mut response = catalog.search(&query, host, &env)?;
        response.window_days = indexer.as_ref().and_then(|ix| ix.window_days());
        response.truncated.freshness = stale;
        response.took_ms = clock();
        response
            .sessions
            .iter_mut()
            .for_each(|s| exposure.search_session(s));
        let answer = Answer {
            response: &response,
            availability: Availability::of(
                indexer.as_ref().is_some_and(|ix| ix.enabled()),
                env.building,
            ),
        };
        serde_json::to_string(&answer).map_err(|e| ApiError::internal(e.to_string()))
    })
    .await?;
    Ok(json(body, NO_STORE))
}
