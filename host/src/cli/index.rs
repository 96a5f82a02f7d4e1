//! `recall index`: one sweep, with a progress bar on a terminal.

use super::{Context, Found, Globals};
use clap::Args;

/// `recall index` options.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Print the sweep report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `recall index`.
pub fn run(g: &Globals, a: IndexArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let r = ctx.sweep()?;
    for q in &r.quarantined {
        eprintln!(
            "recall: the manifest was corrupt; moved aside as {q} and rebuilt from the sources"
        );
    }
    // Exit 3 when a unit of the store is not indexed (this sweep's
    // failures and older ones whose files did not change) or a root could
    // not be read: a script notices; everything else was indexed.
    let found = if r.failures.is_empty() && r.degraded_roots.is_empty() {
        Found::Yes
    } else {
        Found::Partial
    };
    if a.json {
        outln!("{}", serde_json::to_string(&r)?)?;
        return Ok(found);
    }
    let secs = r.elapsed_ms as f64 / 1000.0;
    let mb = r.bytes_read as f64 / 1e6;
    outln!(
        "{}: {} units, {} read ({} new, {} updated, {} resumed, {} empty, {} failed), {} unchanged, {} gone, {} retired; {} files, {:.1} MB in {:.2} s ({:.0} MB/s); revision {}",
        if r.backfill { "backfill" } else { "sweep" },
        r.units,
        r.extracted + r.empty + r.failed,
        r.new_sessions,
        r.updated_sessions,
        r.resumed,
        r.empty,
        r.failed,
        r.unchanged,
        r.gone,
        r.retired,
        r.files_read,
        mb,
        secs,
        if secs > 0.0 { mb / secs } else { 0.0 },
        r.revision,
    )?;
    // A retiring sweep always says why, and how to keep everything.
    if let Some(n) = crate::store::policy::Retired::note(r.retired, ctx.policy.history_days) {
        outln!("{}", n.message)?;
    }
    if !r.requeued.is_empty() {
        outln!(
            "read again: {} session(s) whose index files were damaged",
            r.requeued.len()
        )?;
    }
    for f in &r.failures {
        let (path, reason) = (
            super::render::sanitize(&f.path),
            super::render::sanitize(&f.reason),
        );
        outln!("not indexed: {path} ({reason})")?;
    }
    for d in &r.degraded_roots {
        let line = format!("{}: {}: {}", d.source, d.dir, d.message);
        outln!("root not read: {}", super::render::sanitize(&line))?;
    }
    for s in &r.skipped_files {
        outln!("left out: {}", super::render::sanitize(s))?;
    }
    Ok(found)
}
