//! `recall grep PATTERN`: Deep Search over the sessions' source files
//! ([`crate::deep`]), grouped by session, with progress on a terminal;
//! `--json` prints the HTTP route's NDJSON events.

use super::render::sanitize;
use super::{Context, Found, Globals};
use crate::clock::minute_opt;
use crate::deep::{
    self, DeepProgress, DeepRequest, DeepSession, DeepSink, KindFilter, PatternOptions,
};
use crate::engine::arena::Arena;
use crate::engine::StoreCatalog;
use clap::Args;
use recall_core::search::Budgets;
use std::io::{IsTerminal, Write};
use std::sync::Arc;

/// `recall grep` options.
#[derive(Debug, Args)]
pub struct GrepArgs {
    /// The pattern (a regular expression, or a literal with -F).
    pub pattern: String,
    /// Treat the pattern as a literal string.
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Letters match either case.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// user, assistant, reasoning, tool or all.
    #[arg(long, default_value = "all")]
    pub kind: String,
    /// Comma list of sources (aliases accepted).
    #[arg(long)]
    pub source: Option<String>,
    /// Comma list of cwd path prefixes (whole components).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Only sessions active at or after this time (epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday).
    #[arg(long)]
    pub since: Option<String>,
    /// Only sessions active at or before this time.
    #[arg(long)]
    pub until: Option<String>,
    /// Only the sessions a message search finds (its first 100).
    #[arg(long, value_name = "QUERY")]
    pub in_results: Option<String>,
    /// Stop after this many matching lines.
    #[arg(long, default_value_t = deep::DEFAULT_MAX_RESULTS)]
    pub max_results: usize,
    /// Print NDJSON events (what `GET /api/sessions/deep-search` streams).
    #[arg(long)]
    pub json: bool,
}

struct Printer {
    json: bool,
    progress: bool,
    failed: Option<std::io::Error>,
}

impl Printer {
    fn write(&mut self, f: impl FnOnce() -> std::io::Result<()>) -> bool {
        if self.failed.is_some() {
            return false;
        }
        match f() {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }
}

impl DeepSink for Printer {
    fn session(&mut self, s: DeepSession) -> bool {
        if self.progress {
            eprint!("\r\x1b[2K");
        }
        let json = self.json;
        self.write(|| {
            if json {
                return outln!("{}", serde_json::json!({"type": "session", "session": s}));
            }
            outln!(
                "{}  {}  {}",
                sanitize(&s.session_key),
                minute_opt(s.updated_ms),
                sanitize(s.title.as_deref().unwrap_or(""))
            )?;
            for h in &s.hits {
                let at = match &h.locator {
                    Some(_) => format!("line {}", h.line_no),
                    None => format!("line {} @{}", h.line_no, h.offset),
                };
                let one: String = h.text.split_whitespace().collect::<Vec<_>>().join(" ");
                outln!("  {at} [{}] {}", kind_name(h.kind), sanitize(&one))?;
            }
            Ok(())
        })
    }

    fn progress(&mut self, p: DeepProgress) -> bool {
        if self.progress {
            eprint!(
                "\r\x1b[2Kscanning {}/{} files, {:.1} MB",
                p.files_done,
                p.files_total,
                p.bytes as f64 / 1e6
            );
            let _ = std::io::stderr().flush();
        }
        self.failed.is_none()
    }
}

fn kind_name(k: deep::Kind) -> &'static str {
    match k {
        deep::Kind::User => "user",
        deep::Kind::Assistant => "assistant",
        deep::Kind::Reasoning => "reasoning",
        deep::Kind::Tool => "tool",
        deep::Kind::Other => "other",
    }
}

/// Runs `recall grep`.
pub fn run(g: &Globals, a: GrepArgs) -> anyhow::Result<Found> {
    let pairs = [
        ("source", a.source.as_deref()),
        ("cwd", a.cwd.as_deref()),
        ("since", a.since.as_deref()),
        ("until", a.until.as_deref()),
    ];
    let now = g.now.unwrap_or_else(crate::store::wall_ms).to_string();
    let pairs = pairs
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .chain([("now_ms", now.as_str())]);
    let opts = PatternOptions {
        fixed_strings: a.fixed_strings,
        ignore_case: a.ignore_case,
    };
    let mut req = DeepRequest::new(&a.pattern, opts, pairs)?;
    req.kind = KindFilter::parse(&a.kind)?;
    req.max_results = a.max_results;
    let ctx = Context::new(g)?;
    ctx.refresh();
    let catalog = StoreCatalog::new(ctx.store.clone(), Arc::new(Arena::default()));
    if let Some(q) = &a.in_results {
        let mut r = recall_core::Request::new(q);
        r.limit = Some("100".into());
        let query = r
            .parse()
            .map_err(|e| anyhow::anyhow!("--in-results: {}: {}", e.code, e.message))?;
        let budgets = Budgets {
            scan_ms: u64::MAX,
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        };
        let found = catalog
            .search(&query, false, budgets)
            .map_err(|e| anyhow::anyhow!("--in-results: {}: {}", e.code, e.message))?;
        req.only_keys = Some(found.sessions.into_iter().map(|s| s.session_key).collect());
    }
    let manifest = ctx.store.current()?;
    let mut printer = Printer {
        json: a.json,
        progress: !a.json && std::io::stderr().is_terminal(),
        failed: None,
    };
    let roots = deep::Roots::new(
        ctx.indexer
            .options()
            .roots
            .all()
            .into_iter()
            .map(|(_, p)| p.to_path_buf()),
    );
    let summary = deep::run(&req, &manifest, &catalog, &roots, true, &mut printer);
    if printer.progress {
        eprint!("\r\x1b[2K");
    }
    if let Some(e) = printer.failed.take() {
        return Err(e.into());
    }
    if a.json {
        outln!(
            "{}",
            serde_json::json!({"type": "done", "summary": summary})
        )?;
    } else {
        for u in &summary.unreadable {
            eprintln!("recall: left out {}", sanitize(u));
        }
        if summary.truncated {
            eprintln!(
                "recall: stopped at {} matching lines (--max-results N for more)",
                summary.hits
            );
        }
    }
    Ok(if summary.hits > 0 {
        Found::Yes
    } else {
        Found::No
    })
}
