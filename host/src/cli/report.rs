//! `recall report [<key>…] [--query Q] -o FILE.html`: one self-contained
//! HTML file that shows and searches the chosen sessions offline — each key
//! with its subagents and descendants, plus every session with a hit for
//! `--query` (see [`crate::report`]).

use super::{Context, Found, Globals};
use crate::assets;
use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use crate::report::{self, Payload};
use anyhow::{bail, Context as _};
use clap::Args;
use recall_core::query::Request;
use recall_core::response::State;
use recall_core::search::Budgets;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

/// Most sessions a `--query` report takes.
pub const MAX_QUERY_SESSIONS: usize = 2000;
/// Retries of a partial (timed-out) page while collecting query hits.
const RETRIES: usize = 8;

/// Flags of `recall report`.
#[derive(Clone, Debug, Args)]
pub struct ReportArgs {
    /// Session keys (`<source>:<session_id>`); each brings its subagents and descendants.
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,
    /// Also include every session with a hit for this query (conversation scope).
    #[arg(long, value_name = "Q")]
    pub query: Option<String>,
    /// Where to write the HTML file.
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    pub output: PathBuf,
    /// Use the store as it is, without the sweep first.
    #[arg(long)]
    pub no_refresh: bool,
}

/// Runs `recall report`.
pub fn run(g: &Globals, a: ReportArgs) -> anyhow::Result<Found> {
    if a.keys.is_empty() && a.query.is_none() {
        bail!("invalid_param: name at least one session key or give --query");
    }
    let ctx = Context::new(g)?;
    if !a.no_refresh {
        ctx.refresh();
    }
    let manifest = ctx.store.current()?;
    let mut keys: BTreeSet<String> = report::with_descendants(&manifest, &a.keys)
        .or_else(|e| {
            if a.keys.is_empty() {
                Ok(Vec::new())
            } else {
                Err(e)
            }
        })?
        .into_iter()
        .collect();
    if let Some(q) = &a.query {
        let catalog = StoreCatalog::new(ctx.store.clone(), Arc::new(Arena::default()));
        keys.extend(query_hits(&catalog, q)?);
    }
    if keys.is_empty() {
        eprintln!("recall: no session matches; no report written");
        return Ok(Found::No);
    }
    let keys: Vec<String> = keys.into_iter().collect();
    let subset = report::subset(&manifest, &keys);
    let mut generations = Vec::new();
    for entry in subset.sessions.values() {
        let name = &entry.generation_file;
        let bytes = ctx
            .store
            .generation_bytes(name)
            .with_context(|| format!("cannot read generation {name}"))?;
        generations.push((name.clone(), bytes));
    }
    let payload = Payload::new(&subset, generations, a.query.clone())?.encode()?;
    let title = match (&a.query, keys.as_slice()) {
        (Some(q), _) => format!("“{q}”"),
        (None, [one]) => subset
            .sessions
            .get(one)
            .and_then(|e| e.meta.title.clone())
            .unwrap_or_else(|| one.clone()),
        (None, many) => format!("{} sessions", many.len()),
    };
    let page = report::render(&assets::find, &payload, &title)?;
    let tmp = a.output.with_extension("html.partial");
    std::fs::write(&tmp, page.as_bytes())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &a.output)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    eprintln!(
        "recall: wrote {} ({} session(s), {} KB)",
        a.output.display(),
        keys.len(),
        page.len() / 1024
    );
    Ok(Found::Yes)
}

/// The keys of every session with a hit for `q`, following the cursor.
fn query_hits(catalog: &StoreCatalog, q: &str) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut request = Request::new(q);
    request.limit = Some("100".into());
    loop {
        let mut page = request
            .parse()
            .and_then(|q| catalog.search(&q, false, Budgets::default()));
        for _ in 0..RETRIES {
            match &page {
                Ok(r) if r.state == State::Partial && r.cursor.is_none() => {
                    page = request
                        .parse()
                        .and_then(|q| catalog.search(&q, false, Budgets::default()));
                }
                _ => break,
            }
        }
        let page = page.map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
        out.extend(page.sessions.iter().map(|s| s.session_key.clone()));
        match page.cursor {
            Some(c) if out.len() < MAX_QUERY_SESSIONS => request.cursor = Some(c),
            _ => break,
        }
    }
    out.truncate(MAX_QUERY_SESSIONS);
    Ok(out)
}
