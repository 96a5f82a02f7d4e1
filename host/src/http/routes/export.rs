//! `GET /api/session/{key}/export`: a ZIP of the session's source files and
//! those of its descendants, streamed as it is written.

use super::{blocking, respond, QueryPairs};
use crate::export::{self, ExportError};
use crate::http::errors::ApiError;
use crate::http::{AppState, Exposure};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// The handler.
/// One of the export slots is held from planning until the archive is
/// written or the client goes away (429 `busy` beyond them).
pub async fn export(
    State(st): State<AppState>,
    exposure: Exposure,
    Path(key): Path<String>,
    _q: QueryPairs,
) -> Response {
    if let Err(e) = exposure.require_local(
        "export (the session's source files)",
        st.allow_remote_export,
    ) {
        return e.into_response();
    }
    let permit = match st.exports.try_take() {
        Ok(p) => p,
        Err(e) => return respond(Err(e)),
    };
    let (catalog, indexer) = (st.catalog.clone(), st.indexer.clone());
    let planned = blocking(move || {
        let manifest = catalog.manifest()?;
        let plan =
            export::plan(&manifest, &key, crate::http::routes::now_ms()).map_err(|e| match e {
                ExportError::NotFound => ApiError::session_not_found(),
                other => ApiError::store_unavailable(other.to_string()),
            })?;
        // Never a byte from outside the roots (a symlink in a session's
        // folder pointing elsewhere); without an indexer there are no roots,
        // so nothing from the sources.
        let roots = indexer.map(|ix| ix.roots()).unwrap_or_default();
        Ok(plan.confined_to(roots.into_iter().map(|(_, p)| p).collect()))
    })
    .await;
    let plan = match planned {
        Ok(p) => p,
        Err(e) => return respond(Err(e)),
    };
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(8);
    let name = export::file_name(&plan.key);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let writer = ChannelWriter {
            tx: tx.clone(),
            gone: false,
        };
        if let Err(e) = export::write_zip(&plan, writer) {
            // The client sees a truncated download, never a corrupt "success".
            let _ = tx.blocking_send(Err(io::Error::other(e.to_string())));
        }
    });
    let mut r = Body::new(ChannelBody { rx }).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    r
}

/// Sends what the ZIP writer writes to the response body, in chunks.
struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    /// The client went away: reported once, then writes are dropped (so the
    /// ZIP writer's own clean-up on drop does not complain on stderr).
    gone: bool,
}

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        if self
            .tx
            .blocking_send(Ok(Bytes::copy_from_slice(buf)))
            .is_err()
        {
            self.gone = true;
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client went away",
            ));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The receiving end, as an HTTP body.
struct ChannelBody {
    rx: mpsc::Receiver<io::Result<Bytes>>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}
