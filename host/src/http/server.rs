//! Builds the router, binds, runs the indexer loop and the server on their
//! own threads, and stops both on request (or Ctrl-C).

use super::conn::{self, ConnLimits};
use super::errors::ApiError;
use super::limits;
use super::login::{Logins, RandomError};
use super::query::QueryPairs;
use super::security::{self, Guard, Security, SecurityError};
use super::{assets, headers, logging, routes};
use crate::engine::IndexerHandle;
use crate::engine::Served;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Router};
use recall_core::layout;
use routes::AppState;
use std::any::Any;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
use tower_http::compression::CompressionLayer;

/// Threads for blocking store work (searches, session reads, exports).
pub const MAX_BLOCKING_THREADS: usize = 8;

/// How to run a server.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to bind (`127.0.0.1:7979` by default; port 0 = any free port).
    pub bind: SocketAddr,
    /// Host allowlist and token.
    pub security: Security,
    /// Run the indexer loop (backfill, then a sweep every `sweep_every`)
    /// when the server has an indexer.
    pub index: bool,
    /// Time between periodic sweeps.
    pub sweep_every: Duration,
    /// Query-time refresh threshold.
    pub refresh_after: Duration,
    /// Stop on Ctrl-C or SIGTERM (the CLI: a service manager stops it with
    /// SIGTERM, and what the daemon holds in memory is written out either
    /// way); tests stop the server with [`Server::stop`].
    pub stop_on_ctrl_c: bool,
    /// Connection cap and timeouts.
    pub conn: ConnLimits,
    /// Remote clients may download source files through export.
    pub allow_remote_export: bool,
    /// Remote (token) clients may clear the index and change the policy;
    /// otherwise state changes are loopback-only.
    pub allow_remote_admin: bool,
    /// The store is the bundled demo home's (status says so; the dashboard
    /// shows a banner).
    pub demo: bool,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 7979)),
            security: Security::default(),
            index: true,
            sweep_every: Duration::from_secs(30),
            refresh_after: Duration::from_secs(1),
            stop_on_ctrl_c: false,
            conn: ConnLimits::default(),
            allow_remote_export: false,
            allow_remote_admin: false,
            demo: false,
        }
    }
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The access policy refuses this bind.
    #[error(transparent)]
    Security(#[from] SecurityError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime could not start.
    #[error("cannot start the server runtime: {0}")]
    Runtime(std::io::Error),
    /// No randomness for the login codes.
    #[error(transparent)]
    Random(#[from] RandomError),
}

/// The router with every route and layer.
pub fn router(state: AppState, security: Security) -> Router {
    let compress = DefaultPredicate::new().and(NotForContentType::const_new("application/zip"));
    let guard = Arc::new(Guard {
        security,
        logins: state.logins.clone(),
    });
    Router::new()
        .route("/api/sessions/message-search", get(routes::search::search))
        .route("/api/sessions/deep-search", get(routes::deep::deep_search))
        .route("/api/sessions", get(routes::sessions::list))
        .route("/api/session/{key}", get(routes::session::detail))
        .route("/api/session/{key}/trace", get(routes::trace::trace))
        .route(
            "/api/session/{key}/filter",
            get(routes::one_session::filter),
        )
        .route(
            "/api/session/{key}/search",
            get(routes::one_session::search),
        )
        .route(
            "/api/session/{key}/window",
            get(routes::one_session::window),
        )
        .route(
            "/api/session/{key}/surface",
            get(routes::one_session::surface),
        )
        .route(
            "/api/session/{key}/classify",
            get(routes::one_session::classify),
        )
        .route(
            "/api/session/{key}/event-trace",
            get(routes::one_session::event_trace),
        )
        .route("/api/session/{key}/export", get(routes::export::export))
        .route(
            "/api/session/{key}/export.md",
            get(routes::export_md::export_md),
        )
        .route(
            "/api/session/{key}/export.json",
            get(routes::export_md::export_json),
        )
        .route(
            "/api/session/{key}/report.html",
            get(routes::report::report_html),
        )
        .route(
            "/api/session/{key}/forget",
            post(routes::admin::forget).route_layer(middleware::from_fn(super::state_change::gate)),
        )
        .route("/api/events", get(routes::events::events))
        .route("/api/index/status", get(routes::status::status))
        .route(layout::routes::MANIFEST, get(routes::shards::manifest))
        .route(layout::routes::GENERATION, get(routes::shards::generation))
        .route(layout::routes::SEGMENTS, get(routes::segments::list))
        .route(layout::routes::SEGMENT, get(routes::segments::segment))
        .route(
            "/api/index/clear",
            post(routes::admin::clear).route_layer(middleware::from_fn(super::state_change::gate)),
        )
        .route(
            "/api/index/policy",
            post(routes::admin::policy).route_layer(middleware::from_fn(super::state_change::gate)),
        )
        .route("/login", get(login))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
        .layer(CompressionLayer::new().compress_when(compress))
        .layer(middleware::from_fn(limits::size_limits))
        .layer(middleware::from_fn_with_state(guard, security::guard))
        .layer(middleware::from_fn(logging::access_log))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn(headers::security_headers))
}

/// `GET /login?code=…` (see [`super::login`]).
async fn login(State(st): State<AppState>, q: Result<QueryPairs, ApiError>) -> Response {
    let Some(logins) = st.logins.clone() else {
        return ApiError::not_found("this server has no token, so no login").into_response();
    };
    let code = q
        .ok()
        .and_then(|QueryPairs(p)| routes::param(&p, "code").map(str::to_string));
    logins.answer(code.as_deref())
}

async fn fallback(method: Method, uri: Uri) -> Response {
    if uri.path().starts_with("/api/") || uri.path() == "/api" {
        return ApiError::not_found("no such API route").into_response();
    }
    // The dashboard's files are read, nothing else (`TRACE /`, `PUT /x`).
    if method != Method::GET && method != Method::HEAD {
        return method_not_allowed().await;
    }
    assets::serve(uri).await
}

async fn method_not_allowed() -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this method is not supported here (state changes are POST, everything else GET)",
    )
    .into_response()
}

fn panic_response(_: Box<dyn Any + Send + 'static>) -> Response {
    tracing::error!(target: "recall::http", "a request handler panicked");
    ApiError::internal("internal error").into_response()
}

/// A running server (and its indexer loop).
pub struct Server {
    addr: SocketAddr,
    logins: Option<Arc<Logins>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    stop_indexer: Option<mpsc::Sender<()>>,
    http: Option<JoinHandle<()>>,
    indexer: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds and starts serving `served` on background threads (with
    /// `opts.index` and an indexer, its indexer loop too).
    pub fn start(served: Served, opts: ServeOptions) -> Result<Server, ServeError> {
        opts.security.check_bind(opts.bind)?;
        let listener =
            std::net::TcpListener::bind(opts.bind).map_err(|source| ServeError::Bind {
                addr: opts.bind,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind {
            addr: opts.bind,
            source,
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| ServeError::Bind { addr, source })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            // Store work runs on blocking threads; a small pool keeps memory
            // (one malloc arena per busy thread) from growing under load.
            .max_blocking_threads(MAX_BLOCKING_THREADS)
            .thread_name("recall-http")
            .enable_all()
            .build()
            .map_err(ServeError::Runtime)?;
        let logins = match opts.security.token {
            Some(_) => Some(Arc::new(Logins::new()?)),
            None => None,
        };
        let indexer = served.indexer.clone();
        let catalog = served.catalog.clone();
        let mut state = AppState::new(served, opts.refresh_after);
        let events = state.events.clone();
        state.demo = opts.demo;
        state.logins = logins.clone();
        state.allow_remote_export = opts.allow_remote_export;
        state.allow_remote_admin = opts.allow_remote_admin;
        let app = router(state, opts.security.clone());
        let limits = opts.conn;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let ctrl_c = opts.stop_on_ctrl_c;
        let hub = events.clone();
        let http = std::thread::Builder::new()
            .name("recall-http-main".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!(target: "recall::http", error = %e, "cannot listen");
                            return;
                        }
                    };
                    tokio::spawn(hub.clone().run(catalog));
                    let shutdown = async move {
                        // Open event streams end first, so that the
                        // connections drain.
                        let _close = CloseOnDrop(hub);
                        if ctrl_c {
                            tokio::select! {
                                _ = stop_rx => {}
                                _ = tokio::signal::ctrl_c() => {}
                                _ = terminated() => {}
                            }
                        } else {
                            let _ = stop_rx.await;
                        }
                    };
                    conn::serve(listener, app, limits, shutdown).await;
                });
            })
            .map_err(ServeError::Runtime)?;
        let (indexer, stop_indexer) = if let Some(ix) = indexer.filter(|_| opts.index) {
            let (tx, rx) = mpsc::channel::<()>();
            let every = opts.sweep_every;
            let handle = std::thread::Builder::new()
                .name("recall-indexer".into())
                .spawn(move || indexer_loop(&ix, &events, every, rx))
                .map_err(ServeError::Runtime)?;
            (Some(handle), Some(tx))
        } else {
            (None, None)
        };
        Ok(Server {
            addr,
            logins,
            stop: Some(stop_tx),
            stop_indexer,
            http: Some(http),
            indexer,
        })
    }

    /// The bound address (with the real port when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A fresh one-time login link for the dashboard (`None` without a
    /// token: the dashboard needs none). Single use, valid for
    /// [`super::login::CODE_TTL`].
    pub fn login_link(&self) -> Option<String> {
        let code = self.logins.as_ref()?.mint().ok()?;
        Some(format!("http://{}/login?code={code}", self.addr))
    }

    /// Waits until the server stops (Ctrl-C when `stop_on_ctrl_c`). A sweep
    /// still running is not waited for: the store is safe to stop at any
    /// point, and the process is about to exit.
    pub fn wait(mut self) {
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
        self.stop_indexer.take();
        self.indexer.take();
    }

    /// Stops serving and the indexer loop, and waits for both.
    pub fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.stop_indexer.take();
        self.wait_threads();
    }

    fn wait_threads(&mut self) {
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
        if let Some(h) = self.indexer.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.stop_indexer.take();
        self.wait_threads();
    }
}

/// How often the indexer loop looks at what other processes changed in the
/// store (a `recall clear`, a `recall config set`).
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// While an event stream is open, how often the indexer loop looks at the
/// sources (a refresh: skipped while the watch vouches nothing changed, and
/// never sooner than [`LIVE_MAX_AGE`] after the last sweep).
const LIVE_EVERY: Duration = Duration::from_millis(250);
/// The age of the last sweep past which a live refresh sweeps again.
const LIVE_MAX_AGE: Duration = Duration::from_millis(500);

/// Closes the announcement hub when dropped (the server's shutdown future
/// resolved or was dropped).
struct CloseOnDrop(Arc<super::events::Revisions>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Backfill, then a sweep every `every` until `stop` fires or is dropped;
/// in between, about once a second, follows changes other processes made
/// to the store and sweeps at once when they call for it. While an event
/// stream listens, it also refreshes every [`LIVE_EVERY`], so an append is
/// announced within about a second rather than at the next sweep. Every
/// sweep and refresh pokes `events`.
fn indexer_loop(
    indexer: &IndexerHandle,
    events: &super::events::Revisions,
    every: Duration,
    stop: mpsc::Receiver<()>,
) {
    indexer.follow_store();
    loop {
        if let Err(e) = indexer.sweep() {
            tracing::warn!(target: "recall::index", error = %e, "sweep failed");
        }
        events.poke();
        let next = std::time::Instant::now() + every;
        let mut followed = std::time::Instant::now();
        loop {
            let step = if events.listening() {
                LIVE_EVERY
            } else {
                FOLLOW_EVERY
            };
            let wait = next
                .saturating_duration_since(std::time::Instant::now())
                .min(step);
            match stop.recv_timeout(wait) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            if events.listening() {
                indexer.refresh(LIVE_MAX_AGE);
                events.poke();
            }
            if followed.elapsed() >= FOLLOW_EVERY {
                followed = std::time::Instant::now();
                if indexer.follow_store() {
                    break;
                }
            }
            if std::time::Instant::now() >= next {
                break;
            }
        }
    }
}

/// Resolves when the process gets SIGTERM (never where there is no such
/// signal, or it cannot be listened for).
async fn terminated() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        term.recv().await;
        return;
    }
    std::future::pending::<()>().await
}
