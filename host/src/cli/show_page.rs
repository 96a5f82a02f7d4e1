//! The page flags of `recall show` (`--scope`, `--offset`, `--limit`,
//! `--locate`): one page of the session view from
//! `recall_core::session::session_view` — with `--json` exactly the body
//! `GET /api/session/{key}` answers; a located hit is verified against
//! the source as the daemon verifies it.

use super::render::sanitize;
use super::Found;
use crate::clock::minute;
use crate::engine::verify::SourceCheck;
use anyhow::Context as _;
use clap::Args;
use recall_core::model::ManifestEntry;
use recall_core::session::{session_view, SessionViewRequest};
use recall_core::PreparedShard;

/// The session-view page flags.
#[derive(Debug, Default, Args)]
pub struct PageArgs {
    /// conversation (user + assistant, the default) or all (tool rows too).
    #[arg(long)]
    pub scope: Option<String>,
    /// Entries to skip.
    #[arg(long, value_name = "N")]
    pub offset: Option<String>,
    /// Entries per page (default 50, at most 500).
    #[arg(long, value_name = "N")]
    pub limit: Option<String>,
    /// Centre the page on the record with this locator (JSON or base64url,
    /// as `search --json` prints it) and say whether the source still holds it.
    #[arg(long, value_name = "LOCATOR")]
    pub locate: Option<String>,
}

impl PageArgs {
    /// Whether any page flag was given.
    pub fn any(&self) -> bool {
        self.scope.is_some()
            || self.offset.is_some()
            || self.limit.is_some()
            || self.locate.is_some()
    }

    fn request(&self) -> anyhow::Result<SessionViewRequest> {
        let pairs = [
            ("scope", &self.scope),
            ("offset", &self.offset),
            ("limit", &self.limit),
            ("locate", &self.locate),
        ];
        SessionViewRequest::from_pairs(
            pairs
                .iter()
                .filter_map(|(k, v)| v.as_deref().map(|v| (*k, v))),
        )
        .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))
    }
}

/// Prints the budgeted answer (`--max-tokens` / `--fields`) of one page of
/// session `key`: the entries that fit from `--offset`, their texts clipped,
/// `next_offset` when entries remain.
pub fn budgeted(
    a: &PageArgs,
    m: &recall_core::Manifest,
    key: &str,
    entry: &ManifestEntry,
    bytes: &[u8],
    shape: crate::engine::answer::Shape,
) -> anyhow::Result<Found> {
    let r = a.request()?;
    let p = PreparedShard::from_bytes(bytes).context("the shard is not valid")?;
    let mut check =
        |record: usize| SourceCheck::here(key, entry, &p.shard.records[record]).verdict(false);
    let page = session_view(key, entry, m.revision, &p, &r, Some(&mut check));
    let index = super::agent::index_block(m.revision, m.updated_at_ms, "store");
    let v = crate::engine::answer::view_page(&page, shape, &index)
        .map_err(super::agent::budget_error)?;
    outln!("{v}")?;
    Ok(Found::Yes)
}

/// Prints one page of session `key` (manifest `revision`, shard `bytes`).
pub fn run(
    a: &PageArgs,
    revision: u64,
    key: &str,
    entry: &ManifestEntry,
    bytes: &[u8],
    full: bool,
    json: bool,
) -> anyhow::Result<Found> {
    let r = a.request()?;
    let p = PreparedShard::from_bytes(bytes).context("the shard is not valid")?;
    let mut check =
        |record: usize| SourceCheck::here(key, entry, &p.shard.records[record]).verdict(false);
    let page = session_view(key, entry, revision, &p, &r, Some(&mut check));
    if json {
        outln!("{}", serde_json::to_value(&page)?)?;
        return Ok(Found::Yes);
    }
    outln!(
        "{}  {}  entries {}–{} of {}",
        sanitize(key),
        sanitize(entry.meta.title.as_deref().unwrap_or("(untitled)")),
        page.offset + u64::from(!page.entries.is_empty()),
        page.offset + page.entries.len() as u64,
        page.total
    )?;
    let anchor = page.locate.as_ref().and_then(|l| l.entry_index);
    if let Some(l) = &page.locate {
        let why = l
            .reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        outln!("  hit: {}{}", l.state, sanitize(&why))?;
    }
    for (n, e) in page.entries.iter().enumerate() {
        let mut flags = String::new();
        for (on, name) in [
            (e.superseded, " [superseded]"),
            (e.subagent, " [subagent]"),
            (e.truncated, " [truncated]"),
            (anchor == Some(n as u64), "  ← hit"),
        ] {
            if on {
                flags.push_str(name);
            }
        }
        outln!()?;
        outln!(
            "#{} {} {}{flags}",
            e.total_index,
            minute(e.ts_ms),
            e.role.as_str()
        )?;
        super::show::print_text(e.role, &e.text, full)?;
    }
    Ok(Found::Yes)
}
