//! `GET /api/session/{key}/filter|search|window|surface|classify|event-trace`:
//! the one-session queries as thin adapters over `recall_core::session`.
//! The key may be a bare session id when it names one session.

use super::{blocking, json_value, pairs, param, respond, QueryPairs};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use recall_core::model::Manifest;
use recall_core::session::{self, Address, Filter, FilterRequest, SessionSearchRequest};

/// Which query a route answers.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `filter`.
    Filter,
    /// `search`.
    Search,
    /// `window`.
    Window,
    /// `surface`.
    Surface,
    /// `classify`.
    Classify,
    /// `event-trace`.
    EventTrace,
}

/// The manifest key `key` names: the key itself, or an unambiguous bare id.
pub fn resolve_key(m: &Manifest, key: &str) -> Result<String, ApiError> {
    match session::resolve_key(m, key, false) {
        Ok((k, _)) => Ok(k.clone()),
        Err(session::KeyError::Unknown) => Err(ApiError::session_not_found()),
        Err(session::KeyError::Ambiguous(n)) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "ambiguous_session",
            format!("{n} sessions have this id; use the key <source>:<id>"),
        )),
    }
}

/// One session opened for a route: this host's, or another host's through
/// team serve ([`crate::engine::ReadCatalog::foreign_session`]).
pub struct Opened {
    /// The manifest key (a union key for another host's session).
    pub key: String,
    /// The manifest holding it.
    pub manifest: std::sync::Arc<Manifest>,
    /// Its entry.
    pub entry: recall_core::model::ManifestEntry,
    /// Its shard, when asked for.
    pub shard: Option<std::sync::Arc<recall_core::PreparedShard>>,
    /// The other host it came from; `None` = this host's.
    pub host: Option<recall_core::response::HostRef>,
}

impl Opened {
    /// Names the other host in a JSON answer (`host: {id, name}`).
    pub fn stamp(&self, body: &mut serde_json::Value) {
        if let (Some(h), Some(m)) = (&self.host, body.as_object_mut()) {
            m.insert(
                "host".into(),
                serde_json::json!({ "id": h.id, "name": h.name }),
            );
        }
    }
}

/// Opens the session `key` names (`tools` = its shard with tool rows;
/// `load` = with its shard at all).
pub fn open(
    catalog: &dyn crate::engine::ReadCatalog,
    key: &str,
    load: Option<bool>,
) -> Result<Opened, ApiError> {
    if let Some(f) = catalog.foreign_session(key, load.is_some()) {
        let f = f?;
        let entry = f
            .manifest
            .sessions
            .get(&f.key)
            .cloned()
            .ok_or_else(ApiError::session_not_found)?;
        return Ok(Opened {
            key: f.key,
            manifest: f.manifest,
            entry,
            shard: f.shard,
            host: Some(f.host),
        });
    }
    let manifest = catalog.manifest()?;
    let key = resolve_key(&manifest, key)?;
    let entry = manifest
        .sessions
        .get(&key)
        .cloned()
        .ok_or_else(ApiError::session_not_found)?;
    let shard = match load {
        None => None,
        Some(tools) => Some(
            catalog
                .catalog()
                .load(&key, &entry, tools)
                .map_err(|e| ApiError::store_unavailable(e.to_string()))?
                .shard,
        ),
    };
    Ok(Opened {
        key,
        manifest,
        entry,
        shard,
        host: None,
    })
}

/// The shard of session `key` (an entry of `manifest`, which [`open`]
/// returned) as a [`Shard`](recall_core::model::Shard) the exports render:
/// this host's parsed from its generation file, another host's (team serve)
/// loaded from that host's published generation, with the header's resume
/// command and source paths withheld as its manifest entry's are.
pub fn session_shard(
    catalog: &dyn crate::engine::ReadCatalog,
    key: &str,
    entry: &recall_core::model::ManifestEntry,
) -> Result<recall_core::model::Shard, ApiError> {
    if let Some(f) = catalog.foreign_session(key, true) {
        let prepared = f?
            .shard
            .ok_or_else(|| ApiError::internal("the shard was not loaded"))?;
        let mut shard = prepared.shard.clone();
        shard.session.resume = None;
        shard.session.paths.clear();
        return Ok(shard);
    }
    let bytes = catalog
        .generation(&entry.generation_file)?
        .ok_or_else(|| ApiError::internal("the session's generation is gone"))?;
    serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(e.to_string()))
}

fn number(p: &[(String, String)], name: &str) -> Result<Option<u64>, ApiError> {
    match param(p, name).map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) => s
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ApiError::invalid(format!("{name} must be a non-negative integer"))),
    }
}

fn filter_of(p: &[(String, String)]) -> Result<Filter, ApiError> {
    // The last value of each key wins, like the other routes.
    let mut f = Vec::new();
    for k in [
        "from",
        "to",
        "since",
        "until",
        "role",
        "state",
        "subagent",
        "text",
        "now_ms",
        "utc_offset_min",
    ] {
        if let Some(v) = param(p, k) {
            f.push((k, v));
        }
    }
    Ok(Filter::from_pairs(f)?)
}

fn address_of(p: &[(String, String)]) -> Result<Address, ApiError> {
    Ok(Address::parse(param(p, "index"), param(p, "locator"))?)
}

/// Builds the handler of one query kind.
pub async fn handle(
    st: AppState,
    exposure: Exposure,
    key: String,
    q: Result<QueryPairs, ApiError>,
    kind: Kind,
) -> Response {
    respond(run(st, exposure, key, q, kind).await)
}

async fn run(
    st: AppState,
    exposure: Exposure,
    key: String,
    q: Result<QueryPairs, ApiError>,
    kind: Kind,
) -> Result<Response, ApiError> {
    let p = super::clocked(pairs(q)?);
    let catalog = st.catalog.clone();
    blocking(move || {
        let opened = open(catalog.as_ref(), &key, Some(true))?;
        let (entry, shard) = (&opened.entry, opened.shard.clone());
        let shard = shard.ok_or_else(|| ApiError::internal("the shard was not loaded"))?;
        let offset = number(&p, "offset")?.unwrap_or(0);
        let limit = number(&p, "limit")?;
        let mut body = match kind {
            Kind::Filter => {
                let req = FilterRequest {
                    filter: filter_of(&p)?,
                    offset,
                    limit,
                };
                serde_json::to_value(session::filter(&shard, &req)?)
            }
            Kind::Search => {
                let req = SessionSearchRequest {
                    q: param(&p, "q").unwrap_or("").to_string(),
                    filter: filter_of(&p)?,
                    limit,
                    cursor: param(&p, "cursor")
                        .filter(|c| !c.is_empty())
                        .map(str::to_string),
                };
                serde_json::to_value(session::search_session(
                    &shard,
                    &entry.generation_file,
                    &req,
                )?)
            }
            Kind::Window => {
                let req = session::WindowRequest {
                    at: address_of(&p)?,
                    before: number(&p, "before")?,
                    after: number(&p, "after")?,
                };
                serde_json::to_value(session::window(&shard, &req)?)
            }
            Kind::Surface => serde_json::to_value(session::surface(&shard, offset, limit)),
            Kind::Classify => serde_json::to_value(session::classify(&shard, offset, limit)),
            Kind::EventTrace => {
                serde_json::to_value(session::trace_record(&shard, &address_of(&p)?)?)
            }
        }
        .map_err(|e| ApiError::internal(e.to_string()))?;
        exposure.session_json(&mut body);
        opened.stamp(&mut body);
        Ok(json_value(&body))
    })
    .await
}

macro_rules! route {
    ($name:ident, $kind:expr) => {
        /// The handler of one query kind.
        pub async fn $name(
            State(st): State<AppState>,
            exposure: Exposure,
            Path(key): Path<String>,
            q: Result<QueryPairs, ApiError>,
        ) -> Response {
            handle(st, exposure, key, q, $kind).await
        }
    };
}

route!(filter, Kind::Filter);
route!(search, Kind::Search);
route!(window, Kind::Window);
route!(surface, Kind::Surface);
route!(classify, Kind::Classify);
route!(event_trace, Kind::EventTrace);
