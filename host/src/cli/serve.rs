//! `recall serve`: the indexer (backfill, then a sweep every 30 s) and the
//! HTTP server (DESIGN.md §7) until Ctrl-C.

use super::{Context, Found, Globals};
use crate::engine::arena::{Arena, DEFAULT_ARENA_BYTES};
use crate::engine::catalog::StoreCatalog;
use crate::engine::{IndexerHandle, ReadCatalog, Served};
use crate::extract::{self, Roots};
use crate::http::{Security, ServeError, ServeOptions, Server};
use crate::index::{IndexOptions, Indexer};
use crate::store::Store;
use anyhow::Context as _;
use clap::Args;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

/// Flags of `recall serve` (and `recall demo`).
#[derive(Clone, Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. A non-loopback address requires --token.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7979")]
    pub bind: SocketAddr,
    /// Also accept requests whose Host header names HOST (repeatable); loopback names always pass.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Require `Authorization: Bearer TOKEN` on every /api/ request. Every
    /// local user can read it in the process list: prefer --token-file or
    /// the RECALL_TOKEN variable.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Read the token from FILE (its first line). Without --token or
    /// --token-file, a non-empty RECALL_TOKEN variable is the token.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// Seconds between index sweeps.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub sweep_interval: u64,
    /// Let clients on other machines download source files through export
    /// (they never get file paths or resume commands either way).
    #[arg(long)]
    pub allow_remote_export: bool,
    /// Let clients on other machines (with the token) clear the index and
    /// change the history policy; by default only this machine may.
    #[arg(long)]
    pub allow_remote_admin: bool,
    /// Serve the store as it is: no backfill, no sweeps.
    #[arg(long)]
    pub no_index: bool,
    /// Memory for prepared shards kept between searches, in MiB (a home whose
    /// shards do not fit is searched from disk, more slowly).
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_ARENA_BYTES >> 20)]
    pub arena_mib: usize,
    /// With no agent transcripts on this machine, serve the empty index
    /// instead of the bundled demo home.
    #[arg(long)]
    pub no_demo: bool,
    /// Team search: publish this store to s3://bucket/prefix after every sweep that wrote.
    #[arg(long, value_name = "S3_URL")]
    pub publish: Option<String>,
    /// Team search: searches over HTTP also cover every host published under s3://bucket/prefix.
    #[arg(long, value_name = "S3_URL")]
    pub remote: Option<String>,
    /// Team search (`--remote`): the size cap of the local cache of other
    /// hosts' objects (`<store>/remote-cache/`, least recently used pruned first).
    #[arg(long, value_name = "MB", default_value_t = 1024, requires = "remote")]
    pub remote_cache_mb: u64,
    /// Team search: this host's name (default: the hostname; remembered).
    #[arg(long, value_name = "NAME")]
    pub host_name: Option<String>,
}

impl ServeArgs {
    /// The token: `--token-file`, else `--token` (with a warning), else
    /// `RECALL_TOKEN`.
    fn token(&self) -> anyhow::Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?;
            let token = text.lines().next().unwrap_or("").trim().to_string();
            if token.is_empty() {
                anyhow::bail!("the token file {} is empty", path.display());
            }
            warn_if_shared(path);
            return Ok(Some(token));
        }
        if let Some(t) = &self.token {
            eprintln!(
                "recall: warning: a token given with --token is visible to every local user \
                 in the process list; use --token-file FILE or RECALL_TOKEN instead"
            );
            return Ok(Some(t.clone()));
        }
        Ok(std::env::var("RECALL_TOKEN").ok().filter(|t| !t.is_empty()))
    }

    fn options(&self) -> anyhow::Result<ServeOptions> {
        Ok(ServeOptions {
            bind: self.bind,
            security: Security {
                allow_hosts: self.allow_host.clone(),
                token: self.token()?,
            },
            index: !self.no_index,
            sweep_every: Duration::from_secs(self.sweep_interval.max(1)),
            refresh_after: crate::engine::REFRESH_AFTER,
            stop_on_ctrl_c: true,
            conn: Default::default(),
            allow_remote_export: self.allow_remote_export,
            allow_remote_admin: self.allow_remote_admin,
            demo: false,
        })
    }
}

/// Warns when other users may read the token file.
fn warn_if_shared(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            if m.permissions().mode() & 0o077 != 0 {
                eprintln!(
                    "recall: warning: the token file {} is readable by other users (chmod 600 it)",
                    path.display()
                );
            }
        }
    }
}

/// Runs `recall serve`.
pub fn run(g: &Globals, a: ServeArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let opts = ctx.indexer.options().clone();
    if extract::discover(&opts.roots).is_empty() && ctx.store.current()?.sessions.is_empty() {
        eprintln!(
            "recall: no agent transcripts found under {} ({}); look elsewhere with --home DIR or a source's variable ({}).",
            ctx.home.display(),
            extract::agent_names(),
            extract::env_vars()
        );
        if !a.no_demo {
            // Show something real on a machine with no agents yet: the bundled
            // demo home, exactly as `recall demo` serves it.
            let dir = std::env::temp_dir().join("recall-demo");
            let written = crate::demo::write(&dir)?;
            eprintln!(
                "recall: serving the bundled demo home instead ({}, {} sessions); \
                 run `recall serve` again once an agent has written a transcript, \
                 or pass --no-demo to serve the empty index.",
                dir.display(),
                written.sessions
            );
            let (store, opts) = open_home_store(&dir, g)?;
            return serve_home(store, opts, &a, true);
        }
        eprintln!("recall: serving the empty index; sessions appear as agents write them.");
    }
    serve(ctx.store.clone(), opts, &a)
}

/// Serves `store`, indexed with `opts`, until Ctrl-C.
pub fn serve(store: Arc<Store>, opts: IndexOptions, a: &ServeArgs) -> anyhow::Result<Found> {
    serve_home(store, opts, a, false)
}

/// [`serve`]; `demo` = the store is the bundled demo home's (the dashboard
/// says so).
pub fn serve_home(
    store: Arc<Store>,
    opts: IndexOptions,
    a: &ServeArgs,
    demo: bool,
) -> anyhow::Result<Found> {
    init_logging();
    limit_malloc_arenas();
    // The store's policy may disable indexing: then the index is served as
    // it is, and status says the indexer is off.
    let enabled = crate::store::policy::load(store.dir())?.enabled;
    let indexing = !a.no_index;
    if !enabled {
        eprintln!(
            "recall: indexing is disabled for this store (`recall config set enabled true`); \
             serving the index as it is"
        );
    }
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    let live = indexer.clone();
    let catalog = StoreCatalog::new(
        store.clone(),
        Arc::new(Arena::new(a.arena_mib.max(1) << 20)),
    );
    // The first search should not pay for opening the segments and
    // planning the snapshot.
    {
        let catalog = catalog.clone();
        let _ = std::thread::Builder::new()
            .name("recall-warm".into())
            .spawn(move || catalog.warm());
    }
    // The watch starts here, explicitly: the handle's constructor starts
    // nothing.
    let indexer = Arc::new(
        IndexerHandle::new(indexer, catalog.clone(), indexing)
            .with_enabled(enabled)
            .watch_sources(),
    );
    let catalog: Arc<dyn ReadCatalog> = match &a.remote {
        Some(url) => super::team::catalog(
            catalog,
            url,
            a.host_name.as_deref(),
            a.remote_cache_mb.saturating_mul(1 << 20),
        )?,
        None => Arc::new(catalog),
    };
    let mut options = a.options()?;
    options.demo = demo;
    let needs_token = options.security.token.is_some();
    let server = Server::start(Served::indexed(catalog, indexer), options).map_err(bind_hint)?;
    eprintln!(
        "recall: serving http://{} (store {}{})",
        server.addr(),
        store.dir().display(),
        if !indexing || !enabled {
            String::new()
        } else {
            format!(", sweeping every {} s", a.sweep_interval.max(1))
        }
    );
    if let Some(link) = server.login_link() {
        eprintln!(
            "recall: the API needs the token; open the dashboard with this one-time link \
             (valid {} min): {link}",
            crate::http::login::CODE_TTL.as_secs() / 60
        );
    }
    // `recall search` on this store answers through this daemon.
    let _advert = crate::http::client::advertise(store.dir(), server.addr(), needs_token);
    let _publisher = match &a.publish {
        Some(url) => Some(super::team::follow(&store, url, a.host_name.as_deref())?),
        None => None,
    };
    server.wait();
    // What the indexer kept in memory (live checkpoints) goes to disk.
    live.flush_live();
    Ok(Found::Yes)
}

/// An address in use is most often an earlier `recall serve`: say so, once.
fn bind_hint(e: ServeError) -> anyhow::Error {
    match e {
        ServeError::Bind { addr, source } if source.kind() == std::io::ErrorKind::AddrInUse => {
            anyhow::anyhow!(
                "cannot listen on {addr}: the address is already in use; another `recall serve` \
                 is probably running at http://{addr} (stop it, or open that address), \
                 or choose another address with --bind"
            )
        }
        e => e.into(),
    }
}

/// Opens the store of `home` ignoring the environment (the demo's own home).
pub fn open_home_store(home: &Path, g: &Globals) -> anyhow::Result<(Arc<Store>, IndexOptions)> {
    let dir = crate::store::store_dir(&home.join(".recall"));
    let store = Arc::new(
        Store::open(&dir).with_context(|| format!("cannot open the store at {}", dir.display()))?,
    );
    let now_ms = g.now.unwrap_or_else(crate::store::wall_ms);
    let policy = super::config::resolve(&store, g, now_ms)?;
    let mut opts = IndexOptions::new(Roots::resolve(home, |_| None));
    opts.retention_days = policy.history_days;
    opts.exclude_paths = policy.exclude_paths.clone();
    opts.now_ms = g.now;
    Ok((store, opts))
}

/// Logs to stderr through `tracing-subscriber`'s env filter: `RUST_LOG`
/// (e.g. `RUST_LOG=recall::http=debug`), else `RECALL_LOG` (its older
/// alias, same syntax: `RECALL_LOG=debug`), else warnings only. The access
/// log is at `debug` and never contains query strings.
fn init_logging() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(log_filter(
            std::env::var("RUST_LOG").ok(),
            std::env::var("RECALL_LOG").ok(),
        ))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// The filter of `RUST_LOG`, else `RECALL_LOG`, else `warn`; a directive
/// that does not parse is reported and the default kept.
fn log_filter(rust_log: Option<String>, recall_log: Option<String>) -> EnvFilter {
    let set = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let spec = set(rust_log)
        .or(set(recall_log))
        .unwrap_or_else(|| "warn".to_string());
    EnvFilter::try_new(&spec).unwrap_or_else(|e| {
        eprintln!("recall: ignoring the log filter {spec:?}: {e}");
        EnvFilter::new("warn")
    })
}

/// glibc gives every thread that allocates its own malloc arena and keeps
/// freed shard buffers in them: under load a server's RSS grew by hundreds of
/// MiB and kept growing (bench/results/http-*.md). Two arenas keep it flat.
/// Glibc only; a no-op elsewhere (and where `MALLOC_ARENA_MAX` is already set).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
            extern "C" {
                fn mallopt(param: i32, value: i32) -> i32;
            }
            /// `M_ARENA_MAX` from glibc's `<malloc.h>`.
            const M_ARENA_MAX: i32 = -8;
            // SAFETY: mallopt only adjusts allocator tuning; it is called
            // before the server's threads start and takes plain integers.
            unsafe {
                mallopt(M_ARENA_MAX, 2);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::log_filter;

    #[test]
    fn rust_log_wins_and_recall_log_is_its_alias() {
        let f = |a: Option<&str>, b: Option<&str>| {
            log_filter(a.map(String::from), b.map(String::from)).to_string()
        };
        assert_eq!(f(None, None), "warn");
        assert_eq!(f(None, Some("debug")), "debug");
        assert_eq!(
            f(Some("recall::http=debug"), Some("trace")),
            "recall::http=debug"
        );
        assert_eq!(f(Some(""), Some("info")), "info");
    }
}
