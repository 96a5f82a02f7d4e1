//! `recall status`: the store, the last sweep, what is due, and coverage.

use super::timefmt::minute_opt;
use super::{Context, Found, Globals};
use crate::index::{IndexStatus, Phase};
use crate::store::generations;
use clap::Args;
use recall_core::response::Coverage;
use serde::Serialize;
use std::collections::BTreeMap;

/// `recall status` options.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print JSON (the fields of `/api/index/status`, plus store details).
    #[arg(long)]
    pub json: bool,
}

/// The status report.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The fields of `/api/index/status` (enabled is always true here;
    /// `phase` is `idle` before the first backfill, `degraded` when a root
    /// cannot be listed, else `current`; no sweep runs, so nothing failed).
    #[serde(flatten)]
    pub index: IndexStatus,
    /// As in `/api/index/status`: unavailable when the policy disables
    /// indexing or the first backfill has not finished.
    pub availability: crate::index::Availability,
    /// Manifest revision.
    pub revision: u64,
    /// Store id.
    pub store_id: String,
    /// Per-source coverage.
    pub coverage: BTreeMap<String, Coverage>,
    /// The store folder.
    pub store_dir: String,
    /// Sessions in the manifest.
    pub sessions: usize,
    /// Generation files on disk.
    pub generations: usize,
    /// Their bytes.
    pub generation_bytes: u64,
    /// The first backfill finished.
    pub backfilled: bool,
    /// Parser version of the manifest.
    pub parser_version: u32,
    /// The store's index policy.
    pub policy: crate::store::policy::Policy,
}

/// Runs `recall status`.
pub fn run(g: &Globals, a: StatusArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let m = ctx.store.current()?;
    let st = ctx.store.indexer_state()?;
    let plan = ctx.indexer.plan()?;
    let degraded_roots = plan.degraded_roots.clone();
    let names = generations::list(ctx.store.generations_dir())?;
    let generation_bytes = names
        .iter()
        .filter_map(|n| ctx.store.generation_path(n))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let phase = if !st.backfilled {
        Phase::Idle
    } else if !degraded_roots.is_empty() {
        Phase::Degraded
    } else {
        Phase::Current
    };
    let s = Status {
        index: IndexStatus {
            enabled: ctx.policy.enabled,
            phase,
            files_indexed: m.sessions.values().map(|e| e.files.len() as u64).sum(),
            files_due: plan.files_due(),
            files_failed: 0,
            degraded_roots,
            last_sweep_ms: (st.last_sweep_ms > 0).then_some(st.last_sweep_ms),
            // Known to a running indexer only (the store records when the
            // last sweep finished, not when it started).
            last_reconcile_ms: None,
            failed_units: crate::index::FailedUnit::from_state(&st),
            truncated_sessions: crate::index::build::truncated_sessions(&m),
            skipped_files: plan.skipped_files.clone(),
        },
        availability: crate::index::Availability::of(ctx.policy.enabled, !st.backfilled),
        revision: m.revision,
        store_id: m.store_id.clone(),
        coverage: recall_core::directory::coverage(&m),
        store_dir: ctx.store.dir().display().to_string(),
        sessions: m.sessions.len(),
        generations: names.len(),
        generation_bytes,
        backfilled: st.backfilled,
        parser_version: m.parser_version,
        policy: ctx.policy,
    };
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
        "files       {} indexed, {} changed since",
        s.index.files_indexed,
        s.index.files_due
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
