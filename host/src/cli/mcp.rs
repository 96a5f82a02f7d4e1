//! `recall mcp`: the MCP server over stdio (DESIGN.md §11). It answers
//! through a running `recall serve` of the same store when there is one,
//! else reads the store as it is: no sweep, no write. With no index yet it
//! still starts, and each tool call says what to run.

use super::{Found, Globals};
use crate::mcp::scope::{Scope, SELF_WINDOW};
use crate::mcp::{serve_stdio, RecallMcp};
use crate::store;
use anyhow::Context as _;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// `recall mcp` options.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Show sessions of every project, not only the start directory's.
    #[arg(long, conflicts_with = "project")]
    pub all_projects: bool,
    /// The project directory (default: the directory the server starts in).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Seconds within which the most recently written transcript counts as
    /// the caller's own live session and is hidden (0 = never).
    #[arg(long, value_name = "SECS", default_value_t = SELF_WINDOW.as_secs())]
    pub self_window: u64,
    /// The calling agent's own session (a key or id), hidden from every
    /// answer; default `$RECALL_SELF_SESSION`, else every session of the
    /// project written within the self window.
    #[arg(long = "self", value_name = "SESSION")]
    pub self_session: Option<String>,
}

/// Runs `recall mcp`.
pub fn run(g: &Globals, a: McpArgs) -> anyhow::Result<Found> {
    let home = match &g.home {
        Some(h) => h.clone(),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("$HOME is not set; pass --home DIR")?,
    };
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let dir = store::store_dir(&store::recall_home(&home, env));
    let project = if a.all_projects {
        None
    } else {
        let p = match a.project {
            Some(p) => p,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        let s = p.to_string_lossy().trim_end_matches('/').to_string();
        Some(if s.is_empty() { "/".to_string() } else { s })
    };
    let scope = Scope {
        project,
        self_window: Duration::from_secs(a.self_window),
        self_session: a
            .self_session
            .or_else(|| env("RECALL_SELF_SESSION").map(|v| v.to_string_lossy().into_owned())),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let roots = crate::extract::Roots::resolve(&home, |k| env(k));
    let server = RecallMcp::new(dir, scope)
        .with_source_roots(roots.all().into_iter().map(|(_, p)| p.to_path_buf()));
    rt.block_on(serve_stdio(server))?;
    Ok(Found::Yes)
}
