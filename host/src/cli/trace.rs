//! `recall trace <key>`: a session's lineage (ancestors root first, then the
//! descendant tree), or with `--index`/`--locator` the trace of one record:
//! the mark that superseded it and the records now standing in its place.

use super::render::sanitize;
use super::show::find;
use super::{Context, Found, Globals};
use crate::clock::minute;
use crate::fit::line;
use anyhow::Context as _;
use clap::Args;
use recall_core::session::{self, Address, Ancestor, LineageNode};
use recall_core::PreparedShard;

/// `recall trace` options.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The session key, or a unique session id or key prefix.
    pub key: String,
    /// Trace this record (by index) instead of the session.
    #[arg(long, value_name = "INDEX", conflicts_with = "locator")]
    pub index: Option<String>,
    /// Trace the record with this locator (JSON, as `show --json` prints it).
    #[arg(long, value_name = "JSON")]
    pub locator: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn print_tree(nodes: &[LineageNode], depth: usize) -> std::io::Result<()> {
    for n in nodes {
        let row = format!(
            "{}{}  {}",
            "  ".repeat(depth + 1),
            sanitize(&n.summary.session_key),
            sanitize(n.summary.title.as_deref().unwrap_or(""))
        );
        outln!("{}", line(&row))?;
        print_tree(&n.children, depth + 1)?;
    }
    Ok(())
}

/// `s` cut to leave `keep` columns of the terminal line free.
fn line_room(s: &str, keep: usize) -> String {
    match crate::fit::width() {
        Some(w) => crate::fit::cut(s, w.saturating_sub(keep)),
        None => s.to_string(),
    }
}

/// Runs `recall trace`.
pub fn run(g: &Globals, a: TraceArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    ctx.refresh();
    let m = ctx.store.current()?;
    let (key, entry) = find(&m, &a.key)?;
    if a.index.is_some() || a.locator.is_some() {
        let at = Address::parse(a.index.as_deref(), a.locator.as_deref())
            .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
        let bytes = ctx
            .store
            .generation_bytes(&entry.generation_file)
            .with_context(|| format!("cannot read the shard of {key}"))?;
        let p = PreparedShard::from_bytes(&bytes).context("the shard is not valid")?;
        let t = session::trace_record(&p, &at)
            .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
        if a.json {
            outln!("{}", serde_json::to_string(&t)?)?;
            return Ok(Found::Yes);
        }
        let r = &t.record;
        outln!(
            "#{} {} {} {:?}",
            r.index,
            minute(r.ts_ms),
            r.role.as_str(),
            r.state
        )?;
        match &t.superseded_by {
            None => outln!("  current: no mark supersedes it")?,
            Some(mk) => {
                let why = mk
                    .reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default();
                outln!(
                    "  superseded by mark #{} {}{why} at record {}",
                    mk.mark_index,
                    mk.kind,
                    mk.at
                )?;
                for e in &t.replaced_by {
                    let one: String = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
                    let cut: String = one.chars().take(100).collect();
                    let row = format!("  → #{} {} {}", e.index, e.role.as_str(), sanitize(&cut));
                    outln!("{}", line(&row))?;
                }
            }
        }
        return Ok(Found::Yes);
    }
    let t = session::trace(&m, key).context("the session left the index")?;
    if a.json {
        // The body `GET /api/session/{key}/trace` answers.
        outln!("{}", serde_json::to_value(&t)?)?;
        return Ok(Found::Yes);
    }
    for n in &t.ancestors {
        match n {
            Ancestor::Known(s) => outln!(
                "{}",
                line(&format!(
                    "{}  {}",
                    sanitize(&s.session_key),
                    sanitize(s.title.as_deref().unwrap_or(""))
                ))
            )?,
            Ancestor::Missing { session_key, .. } => {
                outln!("{}  (not indexed)", sanitize(session_key))?
            }
        }
    }
    let here = format!(
        "{}  {}",
        sanitize(key),
        sanitize(entry.meta.title.as_deref().unwrap_or("(untitled)"))
    );
    // The arrow marks this session: cut the title, keep the arrow.
    outln!("{}  ←", line_room(&here, 3))?;
    print_tree(&t.descendants, 0)?;
    Ok(Found::Yes)
}
