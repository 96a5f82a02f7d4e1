//! `recall search <q…>`: every §4 field as a flag, human output grouped per
//! session (colored on a terminal only), or `--json` = the HTTP body.
//!
//! When a `recall serve` of the same store runs, the search goes through it
//! (its watch keeps it fresh, so nothing is swept here); a partial or failed
//! answer from it falls back to the local search (`daemon.rs`).
//!
//! A CLI process starts with a cold arena and nobody retries for it, so it
//! searches without §4's scan deadline and load budget: the answer is always
//! complete (the daemon, whose arena stays warm, keeps the budgets). Only the
//! page byte cap applies, as over HTTP.

use super::render::{self, Color};
use super::{Context, Found, Globals};
use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use crate::http::client;
use clap::Args;
use recall_core::query::{QueryError, Request};
use recall_core::search::Budgets;
use std::sync::Arc;

/// `recall search` options: the §4 request fields.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query (its words joined with single spaces into q). Terms AND within one record;
    /// "quoted phrases"; A OR B (or A | B); (groups); -term and -"phrase" exclude; w:word (or
    /// =word) matches whole words; inline filters role: source: model: cwd: since: until: scope:
    /// is:superseded is:subagent (-is: to exclude). Put the query after -- when a word begins
    /// with -: recall search -- flaky -retry.
    #[arg(required = true, value_name = "Q")]
    pub words: Vec<String>,
    /// Comma list of sources (aliases such as deepseek-harness or "claude code" too).
    #[arg(long, help = source_help())]
    pub source: Option<String>,
    /// Comma list of roles: user, assistant, tool.
    #[arg(long)]
    pub role: Option<String>,
    /// conversation (user + assistant) or all (also tool rows).
    #[arg(long)]
    pub scope: Option<String>,
    /// Only records at or after this time (epoch ms, RFC 3339, or 7d, 24h, 2w, today, yesterday).
    #[arg(long)]
    pub since: Option<String>,
    /// Only records at or before this time (as --since).
    #[arg(long)]
    pub until: Option<String>,
    /// Comma list of cwd path prefixes (whole components).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Comma list of model names (case-insensitive exact): only sessions whose source records
    /// one of them (Claude Code, Codex, Pi, DSH).
    #[arg(long)]
    pub model: Option<String>,
    /// true (default) or false: whether superseded records may match.
    #[arg(long, value_name = "BOOL")]
    pub include_superseded: Option<String>,
    /// true (default) or false: whether subagent records may match.
    #[arg(long, value_name = "BOOL")]
    pub subagents: Option<String>,
    /// newest (default) or relevance.
    #[arg(long)]
    pub sort: Option<String>,
    /// Sessions per page (1–100, default 20).
    #[arg(long)]
    pub limit: Option<String>,
    /// The cursor of the next page (`--json` prints it; scripts pass it back).
    #[arg(long, conflicts_with = "page")]
    pub cursor: Option<String>,
    /// Page N of this same search, as the `more:` hint says (its cursor is
    /// remembered in the store, see docs/notes-terminal.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub page: Option<u32>,
    /// Print exactly the HTTP response body (or the error body).
    #[arg(long)]
    pub json: bool,
    /// Add the planner's report (`debug`: route, candidates, shards loaded,
    /// bytes read, µs per phase) to the `--json` body, or print it on stderr.
    #[arg(long)]
    pub debug: bool,
    /// Highlight matches: auto (on a terminal), always, never.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Sweep the sources before searching when no `recall serve` answers (a
    /// search otherwise reads the index as `recall index` or the daemon
    /// left it; only the very first search builds it).
    #[arg(long, conflicts_with = "no_refresh")]
    pub refresh: bool,
    /// Search the store as it is, even before its first backfill; with
    /// --remote: do not refresh the remote catalogs.
    #[arg(long)]
    pub no_refresh: bool,
    /// auto (default): through a running `recall serve` of this store when
    /// there is one; daemon: only through it (error without one); local:
    /// never through it.
    #[arg(long, value_enum, default_value_t = Via::Auto, hide = true)]
    pub via: Via,
    /// Team search: also every host published under s3://bucket/prefix.
    #[arg(long, value_name = "S3_URL")]
    pub remote: Option<String>,
    /// Team search: only these hosts (comma list of ids or names).
    #[arg(long, requires = "remote")]
    pub host: Option<String>,
    /// Team search: print on stderr what was fetched from the bucket
    /// (requests, bytes, objects by kind).
    #[arg(long, requires = "remote")]
    pub stats: bool,
    /// The budgeted answer for agents (`--max-tokens`, `--fields`).
    #[command(flatten)]
    pub agent: super::agent::AgentArgs,
    /// Team search: the size cap of the local cache of other hosts' objects
    /// (`<store>/remote-cache/`, least recently used pruned first).
    #[arg(long, value_name = "MB", default_value_t = 1024, requires = "remote")]
    pub remote_cache_mb: u64,
}

/// Where `recall search` answers from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// A running daemon if any, else this process.
    Auto,
    /// A running daemon only.
    Daemon,
    /// This process only.
    Local,
}

impl SearchArgs {
    /// The request the flags describe.
    pub fn request(&self) -> Request {
        Request {
            q: Some(self.words.join(" ")),
            source: self.source.clone(),
            role: self.role.clone(),
            scope: self.scope.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            cwd: self.cwd.clone(),
            model: self.model.clone(),
            include_superseded: self.include_superseded.clone(),
            subagents: self.subagents.clone(),
            sort: self.sort.clone(),
            limit: self.limit.clone(),
            cursor: self.cursor.clone(),
            ..Request::default()
        }
    }
}

/// Runs `recall search`.
pub fn run(g: &Globals, a: SearchArgs) -> anyhow::Result<Found> {
    // Relative times (`--since 7d`) are read against this command's clock.
    let request = a.request().with_default_clock(crate::clock::host_clock());
    // Parsed once, here: a bad request fails before touching the index.
    let mut query = request.parse().map_err(|e| fail(&a, &e))?;
    query.debug = a.debug;
    let ctx = Context::new(g)?;
    // `--page N`: the cursor the `more:` hint of page N-1 remembered.
    let page_key = super::pages::key(&request, &team_key(&a));
    let mut request = request;
    if let Some(n) = a.page.filter(|&n| n > 1) {
        let cursor = super::pages::lookup(ctx.store.dir(), &page_key, n).ok_or_else(|| {
            anyhow::anyhow!(
                "page {n} of this search is not known here: run it without --page first (or pass --cursor)"
            )
        })?;
        request.cursor = Some(cursor);
        query = request.parse().map_err(|e| fail(&a, &e))?;
        query.debug = a.debug;
    }
    let (response, via) = ask(&ctx, &a, &request, &query)?;
    if let Some(shape) = a.agent.shape() {
        return budgeted(&ctx, &a, shape, &request, response, via);
    }
    finish(&ctx, &a, response, &page_key)
}

/// Answers `query` (parsed from `request`): a team search with `--remote`,
/// else a running daemon's answer, else this process's; with who answered.
fn ask(
    ctx: &Context,
    a: &SearchArgs,
    request: &Request,
    query: &recall_core::query::Query,
) -> anyhow::Result<(recall_core::Response, &'static str)> {
    if let Some(url) = &a.remote {
        let flags = super::team::Flags {
            hosts: a.host.as_deref(),
            cache_cap: a.remote_cache_mb.saturating_mul(1 << 20),
            stats: a.stats,
        };
        let r = super::team::search(ctx, url, &flags, !a.no_refresh, query);
        let r = r.map_err(|e| match e.downcast::<QueryError>() {
            Ok(q) => fail(a, &q),
            Err(e) => e,
        })?;
        return Ok((r, "team"));
    }
    let daemon = || client::find(ctx.store.dir());
    let remote = match a.via {
        Via::Local => None,
        // Only a complete answer stands for this process's.
        Via::Auto => daemon().and_then(|addr| client::search_with(addr, request, a.debug)),
        // Asked for by name: the daemon's answer as it is (building, partial).
        Via::Daemon => daemon().and_then(|addr| client::answer(addr, request, a.debug)),
    }
    // A `serve --remote` daemon answers for the team: not this search.
    .filter(|r| r.hosts.is_none());
    match (remote, a.via) {
        (Some(r), _) => Ok((r, "daemon")),
        (None, Via::Daemon) => anyhow::bail!("no running `recall serve` answered for this store"),
        (None, _) => {
            // No maintenance in a search: after the first backfill the
            // sources are swept only when asked (`--refresh`). A disabled
            // store sweeps nothing: `refresh` only says so.
            let backfilled = ctx.indexer.backfilled();
            if a.refresh || (!a.no_refresh && (!backfilled || !ctx.policy.enabled)) {
                ctx.refresh();
            } else if !a.no_refresh {
                stale_hint(ctx);
            }
            let building = !ctx.indexer.backfilled();
            let catalog = StoreCatalog::new(ctx.store.clone(), Arc::new(Arena::default()));
            let budgets = Budgets {
                scan_ms: u64::MAX,
                fresh_bytes: u64::MAX,
                ..Budgets::default()
            };
            match catalog.search(query, building, budgets) {
                Ok(mut r) => {
                    r.window_days = Some(ctx.policy.history_days).filter(|&d| d > 0);
                    Ok((r, "store"))
                }
                Err(e) => Err(fail(a, &e)),
            }
        }
    }
}

/// An index last swept this long ago gets [`stale_hint`]'s line.
const STALE_AFTER_MS: i64 = 10 * 60 * 1000;

/// On a terminal, when the index was last swept over [`STALE_AFTER_MS`]
/// ago: one line on stderr saying how old it is and how to bring it up to
/// date (a search without a daemon no longer sweeps the sources itself).
fn stale_hint(ctx: &Context) {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return;
    }
    let Ok(st) = ctx.store.indexer_state() else {
        return;
    };
    let age = crate::store::wall_ms().saturating_sub(st.last_sweep_ms);
    if st.last_sweep_ms > 0 && age > STALE_AFTER_MS {
        let mins = age / 60_000;
        let ago = match mins {
            0..=119 => format!("{mins} min"),
            120..=2879 => format!("{} h", mins / 60),
            _ => format!("{} days", mins / 1440),
        };
        eprintln!(
            "recall: the index was last brought up to date {ago} ago and no `recall serve` runs: \
             `recall index` (or `--refresh`) updates it"
        );
    }
}

/// Prints the budgeted answer of `--max-tokens` / `--fields`: the cursor
/// after the last session kept is the core's, asked for by searching again
/// for just that many sessions when the budget keeps fewer.
fn budgeted(
    ctx: &Context,
    a: &SearchArgs,
    shape: crate::engine::answer::Shape,
    request: &Request,
    response: recall_core::Response,
    via: &str,
) -> anyhow::Result<Found> {
    let m = ctx.store.current()?;
    let index = super::agent::index_block(response.revision, m.updated_at_ms, via);
    let mut cursors = std::collections::HashMap::new();
    cursors.insert(response.sessions.len(), response.cursor.clone());
    let cursor_for = |k: usize| -> Option<String> {
        if let Some(c) = cursors.get(&k) {
            return c.clone();
        }
        let mut again = request.clone();
        again.limit = Some(k.max(1).to_string());
        let cur = again
            .parse()
            .ok()
            .and_then(|q| ask(ctx, a, &again, &q).ok())
            .and_then(|(r, _)| r.cursor);
        cursors.insert(k, cur.clone());
        cur
    };
    let empty = || super::agent::empty_block(m.sessions.len());
    let v = crate::engine::answer::search_page(&response, shape, &index, empty, cursor_for)
        .map_err(super::agent::budget_error)?;
    outln!("{v}")?;
    Ok(if response.sessions.is_empty() {
        Found::No
    } else {
        Found::Yes
    })
}

/// The flags outside the request that change the answer (team search).
fn team_key(a: &SearchArgs) -> String {
    format!("{:?} {:?}", a.remote, a.host)
}

/// The `more:` hint for the response's next page, its cursor remembered
/// for `--page` (`None` when it cannot be: the raw cursor is printed).
fn more_hint(ctx: &Context, a: &SearchArgs, cursor: &str, key: &str) -> Option<String> {
    let next = a.page.unwrap_or(1).checked_add(1)?;
    super::pages::remember(ctx.store.dir(), key, next, cursor).ok()?;
    Some(super::pages::command(std::env::args(), next))
}

/// Prints the answer.
fn finish(
    ctx: &Context,
    a: &SearchArgs,
    response: recall_core::Response,
    page_key: &str,
) -> anyhow::Result<Found> {
    if response.sessions.is_empty()
        && ctx.store.current()?.sessions.is_empty()
        && a.remote.is_none()
    {
        empty_index(ctx);
    }
    if a.json {
        outln!("{}", serde_json::to_string(&response)?)?;
    } else {
        let more = response
            .cursor
            .as_deref()
            .and_then(|c| more_hint(ctx, a, c, page_key));
        render::print(
            &response,
            a.color.enabled(),
            crate::fit::width(),
            more.as_deref(),
        )?;
        if let Some(d) = &response.debug {
            eprintln!("debug: {}", serde_json::to_string(d)?);
        }
    }
    // Sessions were left out: the answer is not the whole truth.
    if response.partial_reason == Some(recall_core::response::PartialReason::Unreadable) {
        return Ok(Found::Partial);
    }
    Ok(if response.sessions.is_empty() {
        Found::No
    } else {
        Found::Yes
    })
}

/// `--source`'s help: the registry's source ids.
pub(crate) fn source_help() -> String {
    format!(
        "Comma list of sources: {} (aliases such as deepseek-harness, gemini-cli or \"claude code\" too)",
        crate::extract::source_ids()
    )
}

/// Says on stderr that nothing is indexed, and where transcripts were looked for.
fn empty_index(ctx: &Context) {
    eprintln!("recall: the index is empty: no agent transcripts were found in");
    for (source, root) in ctx.indexer.options().roots.all() {
        let state = if root.exists() { "" } else { "  (missing)" };
        eprintln!("  {:<12} {}{state}", source.as_str(), root.display());
    }
    eprintln!(
        "recall: look elsewhere with --home DIR or a source's variable ({})",
        crate::extract::env_vars()
    );
}

/// Prints the §7 error body with `--json`; the error ends the run with exit 2.
fn fail(a: &SearchArgs, e: &QueryError) -> anyhow::Error {
    if a.json {
        if let Err(w) = outln!("{}", e.to_json()) {
            return w.into();
        }
    }
    match e.at {
        // Where in the query: the query, then a caret under the byte it
        // points at (the person's own terminal, not a log).
        Some(at) => {
            let q = a.words.join(" ");
            let col = q.get(..at).map_or(0, |s| s.chars().count());
            anyhow::anyhow!("{}: {}\n  {q}\n  {}^", e.code, e.message, " ".repeat(col))
        }
        None => anyhow::anyhow!("{}: {}", e.code, e.message),
    }
}
