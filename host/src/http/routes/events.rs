//! `GET /api/events`: server-sent events announcing each published revision
//! (see [`crate::http::events`]). Behind the same guard as every `/api/`
//! route (Host allowlist; the token or the login cookie off loopback); the
//! announcements carry session keys and revisions only, nothing a remote
//! client may not see. A stream takes one of the hub's slots for as long
//! as it is open (429 `busy` beyond).
//!
//! The stream opens with `event: hello` (the revision it starts from), then
//! sends `event: revision` per published revision (JSON: `store_id`,
//! `revision`, `updated_ms`, `changed`, `removed`, `truncated`, `reset`),
//! and a comment every [`KEEP_ALIVE`] so that neither the connection's idle
//! timeout nor a proxy closes a quiet stream. It ends when the server stops.

use super::respond;
use crate::http::events::{Announcement, Revisions};
use crate::http::AppState;
use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::broadcast::Receiver;
use tokio::sync::OwnedSemaphorePermit;

/// Time between keep-alive comments on a quiet stream.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One open stream: what it reads from, and the slot it holds.
struct Stream {
    hub: Arc<Revisions>,
    rx: Receiver<Arc<Announcement>>,
    hello: Option<Announcement>,
    _slot: OwnedSemaphorePermit,
}

fn event(name: &'static str, a: &Announcement) -> Result<Event, Infallible> {
    Ok(Event::default()
        .event(name)
        .data(serde_json::to_string(a).unwrap_or_else(|_| "{}".into())))
}

/// `GET /api/events`.
pub async fn events(State(st): State<AppState>) -> Response {
    let hub = st.events.clone();
    let slot = match hub.slots.try_take() {
        Ok(s) => s,
        Err(e) => return respond(Err(e)),
    };
    let (rx, hello) = hub.subscribe();
    let stream = Stream {
        hub,
        rx,
        hello: Some(hello),
        _slot: slot,
    };
    let body = futures_util::stream::unfold(stream, |mut s| async move {
        if let Some(h) = s.hello.take() {
            return Some((event("hello", &h), s));
        }
        let next = tokio::select! {
            r = s.rx.recv() => r,
            _ = s.hub.closed() => return None,
        };
        match next {
            Ok(a) => Some((event("revision", &a), s)),
            // Fell behind: what it missed is unknown, so everything shown
            // is to be reloaded.
            Err(RecvError::Lagged(_)) => {
                let (_, mut now) = s.hub.subscribe();
                now.reset = true;
                Some((event("revision", &now), s))
            }
            Err(RecvError::Closed) => None,
        }
    });
    let mut r = Sse::new(body)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}
