//! The one-session flags of `recall show`: filters, `--around`, `--surface`
//! and `--find`, each answered by `recall_core::session` and printed like
//! `show` prints records (or as the core's JSON with `--json`).

use super::render::sanitize;
use super::Found;
use crate::clock::minute;
use anyhow::{bail, Context as _};
use clap::Args;
use recall_core::model::Role;
use recall_core::session::{
    self, Address, Entry, Filter, FilterRequest, RecordState, SessionSearchRequest, WindowRequest,
};
use recall_core::PreparedShard;

/// Tool rows are shown up to this many chars unless `--full`.
const TOOL_PREVIEW: usize = 200;

/// Filters and one-session queries of `recall show`.
#[derive(Debug, Default, Args)]
pub struct QueryArgs {
    /// Only records from this index on (inclusive).
    #[arg(long, value_name = "INDEX")]
    pub from: Option<String>,
    /// Only records up to this index (inclusive).
    #[arg(long, value_name = "INDEX")]
    pub to: Option<String>,
    /// Only records at or after this time (epoch ms, RFC 3339, or 7d, 24h, 2w, today, yesterday).
    #[arg(long)]
    pub since: Option<String>,
    /// Only records at or before this time (as --since).
    #[arg(long)]
    pub until: Option<String>,
    /// Comma list of roles: user, assistant, tool.
    #[arg(long)]
    pub role: Option<String>,
    /// active, superseded or both.
    #[arg(long)]
    pub state: Option<String>,
    /// true: subagent records only; false: none of them.
    #[arg(long, value_name = "BOOL")]
    pub subagent: Option<String>,
    /// Only records containing this text (case-insensitive; spaces match any whitespace run).
    #[arg(long)]
    pub text: Option<String>,
    /// Show the record at INDEX with --context records on either side.
    #[arg(long, value_name = "INDEX", conflicts_with_all = ["surface", "find"])]
    pub around: Option<u64>,
    /// Records on either side for --around (at most 50).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub context: u64,
    /// Only the current surface: active records after every rollback, undo and branch choice.
    #[arg(long, conflicts_with = "find")]
    pub surface: bool,
    /// Search inside the session (the §4 terms and phrases), in record order.
    #[arg(long, value_name = "QUERY")]
    pub find: Option<String>,
}

impl QueryArgs {
    /// Whether any one-session flag was given.
    pub fn any(&self) -> bool {
        self.around.is_some()
            || self.surface
            || self.find.is_some()
            || self.pairs().next().is_some()
    }

    fn pairs(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        [
            ("from", &self.from),
            ("to", &self.to),
            ("since", &self.since),
            ("until", &self.until),
            ("role", &self.role),
            ("state", &self.state),
            ("subagent", &self.subagent),
            ("text", &self.text),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
    }

    fn filter(&self) -> anyhow::Result<Filter> {
        let clock = crate::clock::clock_pairs();
        let pairs: Vec<(&str, &str)> = self
            .pairs()
            .chain(clock.iter().map(|(k, v)| (*k, v.as_str())))
            .collect();
        Filter::from_pairs(pairs).map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))
    }
}

fn core<T>(r: Result<T, recall_core::QueryError>) -> anyhow::Result<T> {
    r.map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))
}

fn print_entry(e: &Entry, full: bool) -> std::io::Result<()> {
    let mut flags = String::new();
    for (on, name) in [
        (e.state == RecordState::Superseded, " [superseded]"),
        (e.subagent, " [subagent]"),
        (e.truncated, " [truncated]"),
    ] {
        if on {
            flags.push_str(name);
        }
    }
    outln!()?;
    outln!(
        "#{} {} {}{flags}",
        e.index,
        minute(e.ts_ms),
        e.role.as_str()
    )?;
    let text = if e.role == Role::Tool && !full {
        let one: String = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let cut: String = one.chars().take(TOOL_PREVIEW).collect();
        if cut.len() < one.len() {
            format!("{cut}…")
        } else {
            cut
        }
    } else {
        e.text.clone()
    };
    for line in text.lines() {
        outln!("    {}", sanitize(line))?;
    }
    Ok(())
}

/// Answers the flags over one shard (`generation` = its file name).
pub fn run(
    q: &QueryArgs,
    generation: &str,
    bytes: &[u8],
    full: bool,
    json: bool,
) -> anyhow::Result<Found> {
    let p = PreparedShard::from_bytes(bytes).context("the shard is not valid")?;
    let filter = q.filter()?;
    if let Some(find) = &q.find {
        let mut req = SessionSearchRequest {
            q: find.clone(),
            filter,
            limit: Some(session::search::MAX_LIMIT as u64),
            cursor: None,
        };
        let mut hits = Vec::new();
        let mut first = None;
        loop {
            let r = core(session::search_session(&p, generation, &req))?;
            hits.extend(r.hits.iter().cloned());
            let next = r.cursor.clone();
            first.get_or_insert(r);
            match next {
                Some(c) => req.cursor = Some(c),
                None => break,
            }
        }
        let mut r = first.context("no answer")?;
        r.hits = hits;
        r.cursor = None;
        if json {
            outln!("{}", serde_json::to_string(&r)?)?;
        } else {
            for h in &r.hits {
                let state = if h.state == RecordState::Superseded {
                    " [superseded]"
                } else {
                    ""
                };
                outln!(
                    "#{} {} {}{state}",
                    h.index,
                    minute(h.ts_ms),
                    h.role.as_str()
                )?;
                for line in h.snippet.lines() {
                    outln!("    {}", sanitize(line))?;
                }
            }
        }
        return Ok(if r.hits.is_empty() {
            Found::No
        } else {
            Found::Yes
        });
    }
    if let Some(at) = q.around {
        if q.pairs().next().is_some() {
            bail!("--around takes no filters");
        }
        let w = core(session::window(
            &p,
            &WindowRequest {
                at: Address::Index(at),
                before: Some(q.context),
                after: Some(q.context),
            },
        ))?;
        if json {
            outln!("{}", serde_json::to_string(&w)?)?;
        } else {
            w.entries.iter().try_for_each(|e| print_entry(e, full))?;
        }
        return Ok(Found::Yes);
    }
    let mut filter = filter;
    if q.surface {
        if filter.state == session::StateFilter::Superseded {
            bail!("--surface shows active records only; drop --state superseded");
        }
        filter.state = session::StateFilter::Active;
    }
    let mut req = FilterRequest {
        filter,
        offset: 0,
        limit: Some(session::MAX_PAGE as u64),
    };
    let mut entries = Vec::new();
    let mut first = None;
    loop {
        let r = core(session::filter(&p, &req))?;
        entries.extend(r.entries.iter().cloned());
        let more = r.more;
        req.offset += r.entries.len() as u64;
        first.get_or_insert(r);
        if !more {
            break;
        }
    }
    let mut r = first.context("no answer")?;
    r.entries = entries;
    r.more = false;
    if json {
        outln!("{}", serde_json::to_string(&r)?)?;
    } else {
        r.entries.iter().try_for_each(|e| print_entry(e, full))?;
    }
    Ok(if r.entries.is_empty() {
        Found::No
    } else {
        Found::Yes
    })
}
