//! `recall status`: the store, the last sweep, what is due, and coverage.

use super::{Context, Found, Globals};
use crate::clock::minute_opt;
use clap::Args;

/// `recall status` options.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print JSON (the fields of `/api/index/status`, plus store details).
    #[arg(long)]
    pub json: bool,
}

/// Runs `recall status`.
pub fn run(g: &Globals, a: StatusArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let s = ctx.engine().status()?;
    if a.json {
        outln!("{}", serde_json::to_string(&s)?)?;
        return Ok(Found::Yes);
    }
    outln!("store       {}", s.store_dir)?;
    outln!(
        "store id    {}  revision {}  parser {}",
        if s.store_id.is_empty() {
            "-"
        } else {
            &s.store_id
        },
        s.revision,
        s.parser_version
    )?;
    outln!(
        "sessions    {}  ({} generation files, {:.1} MB)",
        s.sessions,
        s.generations,
        s.generation_bytes as f64 / 1e6
    )?;
    for (src, c) in &s.coverage {
        if c.sessions == 0 {
            continue;
        }
        outln!(
            "  {:<12} {:>6}  {} → {}{}",
            src,
            c.sessions,
            minute_opt(c.oldest_ts_ms),
            minute_opt(c.newest_ts_ms),
            if c.source_gone > 0 {
                format!("  ({} source gone)", c.source_gone)
            } else {
                String::new()
            }
        )?;
    }
    outln!(
        "policy      indexing {}, history {}",
        if s.policy.enabled {
            "enabled"
        } else {
            "disabled"
        },
        match s.policy.history_days {
            0 => "kept in full".to_string(),
            d => format!("{d} days"),
        }
    )?;
    if let Some(r) = &s.index.retired {
        outln!("retired     {}", r.message)?;
    }
    outln!(
        "last sweep  {}{}",
        minute_opt(s.index.last_sweep_ms),
        if s.backfilled {
            ""
        } else {
            "  (no full backfill yet)"
        }
    )?;
    outln!(
        "files       {} indexed, {} changed since{}",
        s.index.files_indexed,
        s.index.files_due,
        match s.index.files_failed {
            0 => String::new(),
            n => format!(", {n} failed (retried when they change)"),
        }
    )?;
    for r in &s.index.degraded_roots {
        outln!("degraded    {}: {} ({})", r.source, r.dir, r.message)?;
    }
    for f in &s.index.failed_units {
        let (path, reason) = (
            super::render::sanitize(&f.path),
            super::render::sanitize(&f.reason),
        );
        outln!("failed      {path} ({reason})")?;
    }
    for k in &s.index.truncated_sessions {
        outln!("truncated   {}", super::render::sanitize(k))?;
    }
    for f in &s.index.skipped_files {
        outln!("left out    {}", super::render::sanitize(f))?;
    }
    Ok(Found::Yes)
}
