//! `GET /api/session/{key}/export`: a ZIP of the session's source files and
//! those of its descendants, streamed as it is written.

use super::{blocking, respond};
use crate::http::errors::ApiError;
use crate::http::export::{self, ExportError};
use crate::http::AppState;
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
pub async fn export(State(st): State<AppState>, Path(key): Path<String>) -> Response {
    let backend = st.backend.clone();
    let planned = blocking(move || {
        let manifest = backend.manifest()?;
        export::plan(&manifest, &key, crate::http::routes::now_ms()).map_err(|e| match e {
            ExportError::NotFound => ApiError::session_not_found(),
            other => ApiError::store_unavailable(other.to_string()),
        })
    })
    .await;
    let plan = match planned {
        Ok(p) => p,
        Err(e) => return respond(Err(e)),
    };
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(8);
    let name = export::file_name(&plan.key);
    tokio::task::spawn_blocking(move || {
        let writer = ChannelWriter { tx: tx.clone() };
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
}

impl Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tx
            .blocking_send(Ok(Bytes::copy_from_slice(buf)))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))?;
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
