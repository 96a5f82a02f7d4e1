//! `recall publish s3://bucket/prefix [--host-name NAME]`: uploads this
//! store's current snapshot for team search (`remote::publish`). Run it after
//! `recall index` (it publishes what is indexed; it does not sweep).

use super::{Context, Found, Globals};
use crate::remote::{self, hostid, Remote};
use clap::Args;
use std::time::Duration;

/// `recall publish` options.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Where: s3://bucket/prefix (credentials and endpoint from the AWS environment).
    #[arg(value_name = "S3_URL")]
    pub url: String,
    /// This host's name in team results (default: the hostname; remembered).
    #[arg(long, value_name = "NAME")]
    pub host_name: Option<String>,
    /// Uploads at a time.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Seconds a superseded catalog snapshot (and what only it names) stays
    /// in the bucket, so cursors stay servable (default: the store's grace).
    #[arg(long, value_name = "SECS", default_value_t = crate::store::snapshots::GRACE_MS / 1000)]
    pub grace_secs: i64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `recall publish`.
pub fn run(g: &Globals, a: PublishArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let ident = hostid::identity(ctx.store.dir(), a.host_name.as_deref())?;
    let remote = Remote::connect(&a.url, Duration::from_secs(60))?;
    let rt = remote::runtime()?;
    let report = rt.block_on(remote::publish::publish(
        &remote,
        &ctx.store,
        &ident,
        a.concurrency,
        ctx.now_ms,
        a.grace_secs.max(0) * 1000,
    ))?;
    if a.json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        outln!(
            "published {} ({}) store {} revision {}: {} uploaded ({} bytes), {} already there",
            report.host_name,
            report.host_id,
            report.store_id,
            report.revision,
            report.uploaded,
            report.bytes,
            report.skipped
        )?;
    }
    Ok(Found::Yes)
}
