//! `recall sessions`: list sessions, newest first, filtered by source, cwd,
//! time, id prefix, title, missing cwd, source presence and model
//! (`recall_core::session::list`); `--json` prints the rows
//! `GET /api/sessions` lists.

use super::render::sanitize;
use super::{Context, Found, Globals};
use crate::clock::minute_opt;
use clap::Args;
use recall_core::session::lineage::children;
use recall_core::session::{list_sessions, SessionListRequest, SessionRow, SessionSummary};

/// `recall sessions` options.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Comma list of sources (aliases accepted).
    #[arg(long)]
    pub source: Option<String>,
    /// Comma list of cwd path prefixes (whole components).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Only sessions active at or after this time (epoch ms, RFC 3339, or 7d, 24h, 2w, today,
    /// yesterday).
    #[arg(long)]
    pub since: Option<String>,
    /// Only sessions active at or before this time (as --since).
    #[arg(long)]
    pub until: Option<String>,
    /// Only the session with this id, or ids (or keys) starting with it.
    #[arg(long)]
    pub id: Option<String>,
    /// Only sessions whose title contains this text (case-insensitive).
    #[arg(long)]
    pub title: Option<String>,
    /// Only sessions with no working directory.
    #[arg(long)]
    pub no_cwd: bool,
    /// Comma list of model names (case-insensitive exact): only sessions whose source records
    /// one of them.
    #[arg(long)]
    pub model: Option<String>,
    /// present or gone: whether the source files still exist.
    #[arg(long)]
    pub presence: Option<String>,
    /// At most this many sessions (0 = all).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Skip this many sessions first (the next page starts at offset + limit).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
    /// Print JSON (one array).
    #[arg(long)]
    pub json: bool,
    /// List the store as it is, without the query-time sweep.
    #[arg(long)]
    pub no_refresh: bool,
    /// The budgeted answer for agents (`--max-tokens`, `--fields`).
    #[command(flatten)]
    pub agent: super::agent::AgentArgs,
}

/// The core list request the flags describe.
fn request(a: &SessionsArgs) -> anyhow::Result<SessionListRequest> {
    let no_cwd = if a.no_cwd { "true" } else { "false" };
    let pairs = [
        ("source", a.source.as_deref()),
        ("cwd", a.cwd.as_deref()),
        ("since", a.since.as_deref()),
        ("until", a.until.as_deref()),
        ("id", a.id.as_deref()),
        ("title", a.title.as_deref()),
        ("no_cwd", Some(no_cwd)),
        ("presence", a.presence.as_deref()),
        ("model", a.model.as_deref()),
    ];
    let clock = crate::clock::clock_pairs();
    let clock = clock.iter().map(|(k, v)| (*k, v.as_str()));
    SessionListRequest::from_pairs(
        pairs
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .chain(clock),
    )
    .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))
}

/// Runs `recall sessions`.
pub fn run(g: &Globals, a: SessionsArgs) -> anyhow::Result<Found> {
    let req = request(&a)?;
    let ctx = Context::new(g)?;
    if !a.no_refresh {
        ctx.refresh();
    }
    let m = ctx.store.current()?;
    let mut rows =
        list_sessions(&m, &req).map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
    let total = rows.len();
    rows.drain(..a.offset.min(rows.len()));
    if a.limit > 0 {
        rows.truncate(a.limit);
    }
    let shown = a.offset + rows.len();
    if let Some(shape) = a.agent.shape() {
        return budgeted(&m, &a, shape, &rows, total);
    }
    if a.json {
        // The rows `GET /api/sessions` lists (one summary for every surface).
        let kids = children(&m);
        let out: Vec<SessionRow> = rows
            .iter()
            .map(|(k, e)| SessionRow {
                summary: SessionSummary::of(k, e),
                children: kids.get(k.as_str()).map_or(0, Vec::len) as u64,
            })
            .collect();
        outln!("{}", serde_json::to_string(&out)?)?;
    } else if let Some(w) = crate::fit::width() {
        // A terminal: one line per session, the zone named once.
        if !rows.is_empty() {
            let head = format!(
                "{:<16}  {:>5}  {:<20}  title",
                format!("updated {}", crate::clock::offset_label()),
                "msgs",
                "session",
            );
            outln!("{}", crate::fit::cut(&head, w))?;
        }
        for (k, e) in &rows {
            let m = &e.meta;
            let row = format!(
                "{:<16}  {:>5}  {:<20}  {}{}",
                m.updated_ms
                    .map_or_else(|| "-".into(), crate::clock::short_minute),
                m.messages,
                sanitize(&crate::fit::short_key(k)),
                sanitize(m.title.as_deref().unwrap_or("(untitled)")),
                if e.source_gone { "  [source gone]" } else { "" }
            );
            outln!("{}", crate::fit::cut(&row, w))?;
        }
        if total > shown {
            eprintln!(
                "recall: {} more (--offset {shown} for the next page, --limit 0 for all)",
                total - shown
            );
        }
    } else {
        for (k, e) in &rows {
            let m = &e.meta;
            outln!(
                "{}  {:>5} msgs  {}  {}{}",
                minute_opt(m.updated_ms),
                m.messages,
                sanitize(k),
                sanitize(m.title.as_deref().unwrap_or("(untitled)")),
                if e.source_gone { "  [source gone]" } else { "" }
            )?;
        }
        if total > shown {
            eprintln!(
                "recall: {} more (--offset {shown} for the next page, --limit 0 for all)",
                total - shown
            );
        }
    }
    Ok(if total == 0 { Found::No } else { Found::Yes })
}

/// Prints the budgeted answer of `--max-tokens` / `--fields`: the rows that
/// fit, `next_offset` when more remain past the last one kept.
fn budgeted(
    m: &recall_core::Manifest,
    a: &SessionsArgs,
    shape: crate::engine::answer::Shape,
    rows: &[(&String, &recall_core::model::ManifestEntry)],
    total: usize,
) -> anyhow::Result<Found> {
    use crate::engine::answer::{fit_or_err, list_row, longest};
    use crate::engine::budget::Truncated;
    let kids = children(m);
    let summaries: Vec<(SessionSummary, u64)> = rows
        .iter()
        .map(|(k, e)| {
            let n = kids.get(k.as_str()).map_or(0, Vec::len) as u64;
            (SessionSummary::of(k, e), n)
        })
        .collect();
    let items = summaries.len();
    let text = longest(
        summaries
            .iter()
            .map(|(s, _)| s.title.as_deref().unwrap_or("")),
    );
    let index = super::agent::index_block(m.revision, m.updated_at_ms, "store");
    let v = fit_or_err(shape, items, 0, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let out: Vec<serde_json::Value> = summaries
            .iter()
            .take(cut.items)
            .map(|(s, n)| list_row(s, *n, shape.fields, cut.text, &mut t))
            .collect();
        let mut v = serde_json::json!({
            "sessions": out, "total": total, "offset": a.offset, "index": index,
        });
        let next = a.offset + cut.items;
        if next < total {
            v["next_offset"] = serde_json::json!(next);
        }
        if t.any() {
            v["truncated"] = serde_json::json!(t);
        }
        if total == 0 {
            v["empty"] = super::agent::empty_block(m.sessions.len());
        }
        v
    })
    .map_err(super::agent::budget_error)?;
    outln!("{v}")?;
    Ok(if total == 0 { Found::No } else { Found::Yes })
}
