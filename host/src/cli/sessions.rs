//! `recall sessions`: list sessions, newest first, filtered by source, cwd
//! and time.

use super::render::sanitize;
use super::timefmt::minute_opt;
use super::{Context, Found, Globals};
use anyhow::bail;
use clap::Args;
use recall_core::model::{ManifestEntry, Parent, Source};
use recall_core::query::{parse_time, path_has_prefix};
use serde::Serialize;

/// `recall sessions` options.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Comma list of sources (aliases accepted).
    #[arg(long)]
    pub source: Option<String>,
    /// Comma list of cwd path prefixes (whole components).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Only sessions active at or after this time (epoch ms or RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// Only sessions active at or before this time (epoch ms or RFC 3339).
    #[arg(long)]
    pub until: Option<String>,
    /// At most this many sessions (0 = all).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Print JSON (one array).
    #[arg(long)]
    pub json: bool,
    /// List the store as it is, without the query-time sweep.
    #[arg(long)]
    pub no_refresh: bool,
}

/// One listed session.
#[derive(Debug, Serialize)]
pub struct SessionRow<'a> {
    /// `<source>:<session_id>`.
    pub session_key: &'a str,
    /// The agent.
    pub source: Source,
    /// Title.
    pub title: Option<&'a str>,
    /// Working directory.
    pub cwd: Option<&'a str>,
    /// Git branch.
    pub branch: Option<&'a str>,
    /// Oldest record.
    pub created_ms: Option<i64>,
    /// Newest record.
    pub updated_ms: Option<i64>,
    /// user + assistant records.
    pub messages: u64,
    /// Parent session.
    pub parent: Option<&'a Parent>,
    /// Resume command.
    pub resume: Option<&'a str>,
    /// Source files gone.
    pub source_gone: bool,
}

struct Filter {
    sources: Option<Vec<Source>>,
    cwds: Vec<String>,
    since: Option<i64>,
    until: Option<i64>,
}

impl Filter {
    fn new(a: &SessionsArgs) -> anyhow::Result<Filter> {
        let sources = match &a.source {
            None => None,
            Some(list) => {
                let mut v = Vec::new();
                for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    match Source::parse(s) {
                        Some(x) => v.push(x),
                        None => bail!("invalid_param: unknown source {s:?}"),
                    }
                }
                Some(v)
            }
        };
        let cwds = a
            .cwd
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(|p| p.trim().trim_end_matches('/'))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let time = |v: &Option<String>, name| -> anyhow::Result<Option<i64>> {
            v.as_deref()
                .map(|s| parse_time(s, name))
                .transpose()
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))
        };
        Ok(Filter {
            sources,
            cwds,
            since: time(&a.since, "since")?,
            until: time(&a.until, "until")?,
        })
    }

    fn keeps(&self, e: &ManifestEntry) -> bool {
        let m = &e.meta;
        self.sources.as_ref().is_none_or(|s| s.contains(&m.source))
            && (self.cwds.is_empty()
                || m.cwd
                    .as_deref()
                    .is_some_and(|c| self.cwds.iter().any(|p| path_has_prefix(c, p))))
            && self
                .since
                .is_none_or(|s| m.updated_ms.or(e.max_ts_ms).is_some_and(|u| u >= s))
            && self
                .until
                .is_none_or(|u| m.created_ms.is_some_and(|c| c <= u))
    }
}

/// Runs `recall sessions`.
pub fn run(g: &Globals, a: SessionsArgs) -> anyhow::Result<Found> {
    let filter = Filter::new(&a)?;
    let ctx = Context::new(g)?;
    if !a.no_refresh {
        ctx.refresh();
    }
    let m = ctx.store.current()?;
    let mut rows: Vec<(&String, &ManifestEntry)> =
        m.sessions.iter().filter(|(_, e)| filter.keeps(e)).collect();
    rows.sort_by(|a, b| {
        let t = |e: &ManifestEntry| e.meta.updated_ms.or(e.max_ts_ms);
        t(b.1).cmp(&t(a.1)).then(a.0.cmp(b.0))
    });
    let total = rows.len();
    if a.limit > 0 {
        rows.truncate(a.limit);
    }
    if a.json {
        let out: Vec<SessionRow<'_>> = rows
            .iter()
            .map(|(k, e)| SessionRow {
                session_key: k,
                source: e.meta.source,
                title: e.meta.title.as_deref(),
                cwd: e.meta.cwd.as_deref(),
                branch: e.meta.branch.as_deref(),
                created_ms: e.meta.created_ms,
                updated_ms: e.meta.updated_ms,
                messages: e.meta.messages,
                parent: e.meta.parent.as_ref(),
                resume: e.meta.resume.as_deref(),
                source_gone: e.source_gone,
            })
            .collect();
        println!("{}", serde_json::to_string(&out)?);
    } else {
        for (k, e) in &rows {
            let m = &e.meta;
            println!(
                "{}  {:>5} msgs  {}  {}{}",
                minute_opt(m.updated_ms),
                m.messages,
                sanitize(k),
                sanitize(m.title.as_deref().unwrap_or("(untitled)")),
                if e.source_gone { "  [source gone]" } else { "" }
            );
        }
        if total > rows.len() {
            eprintln!(
                "recall: {} more (use --limit 0 for all)",
                total - rows.len()
            );
        }
    }
    Ok(if total == 0 { Found::No } else { Found::Yes })
}
