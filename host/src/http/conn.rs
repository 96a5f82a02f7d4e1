//! The connection loop under the router: slots for open connections
//! ([`super::admission`]: a loopback and a remote pool, a cap per remote
//! address, room made by closing connections that wait for a request head;
//! a connection given no slot gets a JSON 429 `busy` and is closed), a header-read
//! timeout (a half-sent or never-sent request head is dropped, and so is a
//! kept-alive connection that sends no next request), an idle timeout (no
//! byte moved either way: a client that stopped reading an export is
//! dropped and its export slot freed), and JSON bodies for the errors hyper
//! answers by itself before the router sees a request (a request line or
//! head too large for its buffer: 414 `uri_too_long` / 431
//! `headers_too_large`; an unparsable head: 400 `bad_request`).

use super::admission::{Admission, Admit, Serving, Slot};
use super::errors::ApiError;
use super::headers::CSP;
use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// Limits on connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Time to send a complete request head, counted from the connection's
    /// start or the end of the previous response.
    pub header_read: Duration,
    /// Time a connection may go without a byte moving either way.
    pub idle: Duration,
    /// Connections from remote peers served at once.
    pub max_connections: usize,
    /// Connections from loopback peers served at once, beside the remote
    /// ones.
    pub loopback_connections: usize,
}

impl Default for ConnLimits {
    fn default() -> ConnLimits {
        ConnLimits {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            max_connections: 128,
            loopback_connections: super::admission::LOOPBACK_SLOTS,
        }
    }
}

/// Connections being turned away at once (beyond, they are just closed).
const MAX_TURNING_AWAY: usize = 32;
/// How long the server waits for open connections when it stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
) {
    let admission = Admission::with_slots(limits.loopback_connections, limits.max_connections);
    let turning_away = Arc::new(Semaphore::new(MAX_TURNING_AWAY));
    let (close_tx, close_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off a little.
                    tracing::warn!(target: "recall::http", error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let (app, close) = (app.clone(), close_rx.clone());
        match admission.admit(&peer) {
            Admit::Now(slot) => {
                tokio::spawn(serve_one(stream, peer, app, limits, slot, close));
            }
            Admit::Soon(pending) => {
                let away = turning_away.clone();
                tokio::spawn(async move {
                    match pending.slot().await {
                        Some(slot) => serve_one(stream, peer, app, limits, slot, close).await,
                        None => {
                            if let Ok(p) = away.try_acquire_owned() {
                                turn_away(stream, p).await;
                            }
                        }
                    }
                });
            }
            Admit::Refused => {
                if let Ok(p) = turning_away.clone().try_acquire_owned() {
                    tokio::spawn(turn_away(stream, p));
                }
            }
        }
    }
    let _ = close_tx.send(true);
    admission.drained(SHUTDOWN_GRACE).await;
}

async fn serve_one(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnLimits,
    slot: Slot,
    mut close: watch::Receiver<bool>,
) {
    let io = TokioIo::new(Guarded::new(stream, limits.idle));
    let evicted = slot.evicted();
    let slot = Arc::new(slot);
    // The peer address rides on every request: what a client may see
    // depends on it (`super::exposure`). The connection serves from the
    // parsed head until the response body is dropped.
    let app = tower::service_fn(move |mut req: axum::extract::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let serving = slot.busy();
        let app = app.clone();
        async move {
            let resp = app.oneshot(req).await?;
            Ok::<_, std::convert::Infallible>(resp.map(|b| {
                axum::body::Body::new(Tracked {
                    inner: b,
                    _serving: serving,
                })
            }))
        }
    });
    let service = TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => {
            if let Err(e) = r {
                tracing::debug!(target: "recall::http", error = %e, "connection ended");
            }
        }
        _ = close.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
        // Chosen to make room while it waited for a request head: nothing
        // is in flight, so it just closes.
        _ = evicted.notified() => {}
    }
}

/// A response body that holds its connection's [`Serving`] mark until it is
/// sent or dropped.
struct Tracked {
    inner: axum::body::Body,
    _serving: Serving,
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Answers a connection given no slot with 429 `busy` and closes it.
async fn turn_away(stream: TcpStream, _p: OwnedSemaphorePermit) {
    let e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "busy",
        "too many open connections; retry shortly",
    );
    let bytes = raw_response(&e);
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let mut done = 0;
        while done < bytes.len() {
            stream.writable().await?;
            match stream.try_write(&bytes[done..]) {
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        // Drain what the client sent until it closes (it was told
        // `connection: close`), so closing does not reset the connection
        // before it has read the answer.
        let mut sink = [0u8; 4096];
        loop {
            stream.readable().await?;
            match stream.try_read(&mut sink) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    })
    .await;
}

/// A complete HTTP/1.1 response for `e`, closing the connection.
fn raw_response(e: &ApiError) -> Vec<u8> {
    let body = e.body();
    format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncache-control: no-store\r\n\
         content-security-policy: {CSP}\r\nx-frame-options: DENY\r\n\
         x-content-type-options: nosniff\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        e.status.as_u16(),
        e.status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes()
}

/// The JSON replacement for a response hyper wrote on its own (a head with
/// `content-length: 0` and status 400, 414 or 431), if `buf` is one.
/// `line_open`: no line end was read since the last response, so the request
/// line itself is what did not fit.
fn replacement(buf: &[u8], line_open: bool) -> Option<Vec<u8>> {
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    let status = head.get(..12)?;
    let bare = buf
        .windows(21)
        .any(|w| w.eq_ignore_ascii_case(b"\r\ncontent-length: 0\r\n"));
    if !bare || head.windows(4).any(|w| w == b"\r\n\r\n") {
        return None;
    }
    let e = match status {
        b"HTTP/1.1 414" => uri_too_long(),
        b"HTTP/1.1 431" if line_open => uri_too_long(),
        b"HTTP/1.1 431" => ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            "the request headers are too large",
        ),
        b"HTTP/1.1 400" => ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the request is not valid HTTP/1.1",
        ),
        _ => return None,
    };
    Some(raw_response(&e))
}

fn uri_too_long() -> ApiError {
    ApiError::new(
        StatusCode::URI_TOO_LONG,
        "uri_too_long",
        format!(
            "the request line is longer than {} bytes",
            super::limits::MAX_URI_BYTES
        ),
    )
}

/// A TCP stream with an idle deadline, rewriting hyper's bare error answers.
struct Guarded {
    inner: TcpStream,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    /// A line end was read since the last response started.
    newline_seen: bool,
    /// A replacement answer still to be written, and how much of it is.
    pending: Option<(Vec<u8>, usize)>,
}

impl Guarded {
    fn new(inner: TcpStream, idle: Duration) -> Guarded {
        Guarded {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            newline_seen: false,
            pending: None,
        }
    }

    fn touch(&mut self) {
        let at = Instant::now() + self.idle;
        self.deadline.as_mut().reset(at);
    }

    /// `Pending` from the stream: an error once the idle deadline passed.
    fn idle_check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "connection idle for too long",
            )),
            Poll::Pending => Ok(()),
        }
    }

    /// Writes out a pending replacement.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done >= bytes.len() {
                self.pending = None;
                break;
            }
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    *done += n;
                    self.touch();
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    self.idle_check(cx)?;
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let got = &buf.filled()[before..];
                if !got.is_empty() {
                    if got.contains(&b'\n') {
                        self.newline_seen = true;
                    }
                    self.touch();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                self.idle_check(cx)?;
                Poll::Pending
            }
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        let line_open = !self.newline_seen;
        self.newline_seen = false;
        if let Some(bytes) = replacement(buf, line_open) {
            self.pending = Some((bytes, 0));
            // The replacement goes out on flush; hyper's bytes are consumed.
            return Poll::Ready(Ok(buf.len()));
        }
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.touch();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                self.idle_check(cx)?;
                Poll::Pending
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_bare_error_heads_are_replaced() {
        let bare =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let r = String::from_utf8(replacement(bare, true).unwrap()).unwrap();
        assert!(r.starts_with("HTTP/1.1 414 "), "{r}");
        assert!(r.contains("\"uri_too_long\""));
        let r = String::from_utf8(replacement(bare, false).unwrap()).unwrap();
        assert!(r.starts_with("HTTP/1.1 431 ") && r.contains("headers_too_large"));
        let ours = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 80\r\n\r\n";
        assert!(replacement(ours, true).is_none(), "a router answer is kept");
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(ok, true).is_none());
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\nHTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(with_body, false).is_none());
    }
}
