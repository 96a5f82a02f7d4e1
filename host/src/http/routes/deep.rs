//! `GET /api/sessions/deep-search`: Deep Search over the sessions' source
//! files ([`crate::deep`]), streamed as NDJSON — `{"type":"progress",…}`
//! at most every 100 ms, `{"type":"session",…}` per session with matches,
//! and a last `{"type":"done","summary":…}`. The scan stops when the client
//! goes away. One deep search per client address and two in all (429
//! beyond); remote clients get no file paths. Only a server with an
//! indexer reads sources, and only under its agents' folders.

use super::{pairs, param, Pairs, QueryPairs};
use crate::deep::{
    self, DeepProgress, DeepRequest, DeepSession, DeepSink, KindFilter, PatternOptions,
};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{header, request::Parts, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Deep searches running at once, in all.
pub const MAX_DEEP_SEARCHES: usize = 2;
/// Progress events are sent at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Who runs a deep search now (client address → running).
#[derive(Clone, Debug, Default)]
pub struct DeepSlots(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// A held slot; dropping it frees it.
struct DeepSlot {
    slots: DeepSlots,
    peer: IpAddr,
}

impl DeepSlots {
    fn take(&self, peer: IpAddr) -> Option<DeepSlot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if m.values().sum::<usize>() >= MAX_DEEP_SEARCHES || m.get(&peer).is_some_and(|&n| n > 0) {
            return None;
        }
        *m.entry(peer).or_default() += 1;
        Some(DeepSlot {
            slots: self.clone(),
            peer,
        })
    }
}

impl Drop for DeepSlot {
    fn drop(&mut self) {
        let mut m = self.slots.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.peer);
            }
        }
    }
}

fn flag(p: &Pairs, name: &str) -> Result<bool, ApiError> {
    match param(p, name).map(str::trim) {
        None | Some("" | "false" | "0") => Ok(false),
        Some("true" | "1") => Ok(true),
        Some(_) => Err(ApiError::invalid(format!("{name} must be true or false"))),
    }
}

/// Parses the request: `pattern`, `fixed_strings`, `ignore_case`, `kind`,
/// `max_results`, and the session list's `source`, `cwd`, `since`, `until`.
fn request(p: &Pairs) -> Result<DeepRequest, ApiError> {
    let pattern = param(p, "pattern").ok_or_else(|| ApiError::invalid("pattern is required"))?;
    let opts = PatternOptions {
        fixed_strings: flag(p, "fixed_strings")?,
        ignore_case: flag(p, "ignore_case")?,
    };
    let now = crate::store::wall_ms().to_string();
    let filters = p
        .iter()
        .filter(|(k, _)| {
            matches!(
                k.as_str(),
                "source" | "cwd" | "since" | "until" | "now_ms" | "utc_offset_min"
            )
        })
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let has_clock = p.iter().any(|(k, _)| k == "now_ms");
    let clock = (!has_clock).then_some(("now_ms", now.as_str()));
    let mut r = DeepRequest::new(pattern, opts, filters.chain(clock)).map_err(|e| match e {
        deep::DeepError::Filter(q) => ApiError::from(q),
        e => ApiError::invalid(e.to_string()),
    })?;
    r.kind = KindFilter::parse(param(p, "kind").unwrap_or("all"))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    if let Some(m) = param(p, "max_results") {
        r.max_results = m
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ApiError::invalid("max_results must be a whole number from 1"))?
            .min(deep::MAX_RESULTS);
    }
    Ok(r)
}

/// Sends NDJSON lines into the response body; false once the client left.
struct Channel {
    tx: mpsc::Sender<Result<Bytes, std::io::Error>>,
    last_progress: Option<Instant>,
}

impl Channel {
    fn send(&self, v: serde_json::Value) -> bool {
        let mut line = v.to_string().into_bytes();
        line.push(b'\n');
        self.tx.blocking_send(Ok(Bytes::from(line))).is_ok()
    }
}

impl DeepSink for Channel {
    fn session(&mut self, s: DeepSession) -> bool {
        self.send(serde_json::json!({"type": "session", "session": s}))
    }

    fn progress(&mut self, p: DeepProgress) -> bool {
        if self
            .last_progress
            .is_some_and(|t| t.elapsed() < PROGRESS_EVERY)
        {
            return !self.tx.is_closed();
        }
        self.last_progress = Some(Instant::now());
        self.send(serde_json::json!({"type": "progress", "progress": p}))
    }
}

/// The handler.
pub async fn deep_search(
    State(st): State<AppState>,
    exposure: Exposure,
    parts: Parts,
    q: Result<QueryPairs, ApiError>,
) -> Response {
    match start(st, exposure, parts, q) {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

fn start(
    st: AppState,
    exposure: Exposure,
    parts: Parts,
    q: Result<QueryPairs, ApiError>,
) -> Result<Response, ApiError> {
    let p = pairs(q)?;
    let req = request(&p)?;
    let indexer = st.indexer.clone().ok_or_else(|| {
        ApiError::not_found("this server reads no sources: deep search needs its indexer")
    })?;
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |c| c.0.ip());
    let slot = st.deep.take(peer).ok_or_else(|| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "busy",
            "a deep search of this client is running, or two are; retry when it ends",
        )
    })?;
    let (tx, rx) = mpsc::channel(16);
    let catalog = st.catalog.clone();
    let with_paths = !exposure.is_remote();
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let mut ch = Channel {
            tx,
            last_progress: None,
        };
        let manifest = match catalog.manifest() {
            Ok(m) => m,
            Err(e) => {
                let _ = ch.send(serde_json::json!({"type": "error", "error": "store_unavailable", "message": e.to_string()}));
                return;
            }
        };
        let roots = deep::Roots::new(indexer.roots().into_iter().map(|(_, p)| p));
        let summary = deep::run(
            &req,
            &manifest,
            catalog.catalog(),
            &roots,
            with_paths,
            &mut ch,
        );
        let _ = ch.send(serde_json::json!({"type": "done", "summary": summary}));
    });
    // Fused: a body layer (gzip) may poll again after the end.
    let body =
        futures_util::StreamExt::fuse(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|x| (x, rx))
        }));
    let mut r = Body::from_stream(body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(super::NO_STORE),
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_deep_search_per_client_and_two_in_all() {
        let slots = DeepSlots::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let c: IpAddr = "10.0.0.3".parse().unwrap();
        let first = slots.take(a).expect("a free slot");
        assert!(slots.take(a).is_none(), "one per client");
        let second = slots.take(b).expect("a second client");
        assert!(slots.take(c).is_none(), "two in all");
        drop(first);
        assert!(slots.take(a).is_some(), "freed when it ends");
        drop(second);
    }
}
