//! `recall show <key>`: one session's records in order, with role, time and
//! superseded / subagent / truncated flags; with the one-session flags
//! (filters, `--around`, `--surface`, `--find`) it prints the answer of the
//! matching `recall_core::session` query instead; with the page flags
//! (`--scope`, `--offset`, `--limit`, `--locate`) one page of the session
//! view, as `GET /api/session/{key}` answers it.

use super::render::sanitize;
use super::{Context, Found, Globals};
use crate::clock::{minute, minute_opt};
use anyhow::{bail, Context as _};
use clap::Args;
use recall_core::derive_active;
use recall_core::model::{Locator, ManifestEntry, Role, Shard};
use serde::Serialize;

/// Tool rows are shown up to this many chars unless `--full`.
const TOOL_PREVIEW: usize = 200;

/// `recall show` options.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session key (`<source>:<session_id>`), or a unique session id or key prefix.
    pub key: String,
    /// Print tool rows in full (they are cut to one short line otherwise).
    #[arg(long)]
    pub full: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Output format: `text` (the default), `json` (as --json) or `markdown`
    /// (the whole session as a Markdown document; tool rows with --full).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ShowFormat>,
    /// With --format markdown: the session's subagents (its descendant sessions) too.
    #[arg(long)]
    pub with_subagents: bool,
    /// The one-session query flags.
    #[command(flatten)]
    pub query: super::show_query::QueryArgs,
    /// The session-view page flags.
    #[command(flatten)]
    pub page: super::show_page::PageArgs,
    /// The budgeted answer for agents (`--max-tokens`, `--fields`): one page of the session
    /// view (`--scope`, `--offset`, `--limit` apply), texts clipped to fit.
    #[command(flatten)]
    pub agent: super::agent::AgentArgs,
}

/// `recall show --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    /// Role, time and text per record.
    Text,
    /// JSON (as `--json`).
    Json,
    /// A Markdown document.
    Markdown,
}

#[derive(Serialize)]
struct JsonRecord<'a> {
    index: usize,
    role: Role,
    ts_ms: i64,
    superseded: bool,
    subagent: bool,
    truncated: bool,
    generation: u32,
    seq: Option<u64>,
    text: &'a str,
    locator: &'a Locator,
}

/// Finds an entry by exact key, else by unique session id or key prefix.
pub(super) fn find<'m>(
    m: &'m recall_core::Manifest,
    q: &str,
) -> anyhow::Result<(&'m String, &'m ManifestEntry)> {
    if let Some(hit) = m.sessions.get_key_value(q) {
        return Ok(hit);
    }
    // An exact session id first, then a prefix of an id or of a key (the
    // help promises prefixes; `show`, `trace` and `export` share this).
    let exact: Vec<_> = m
        .sessions
        .iter()
        .filter(|(k, e)| {
            // The short key of a terminal line (`dsh:791afe80`) names it too.
            e.meta.session_id == q || k.starts_with(q) || crate::fit::short_key(k) == q
        })
        .collect();
    let found: Vec<_> = if exact.is_empty() && !q.is_empty() {
        m.sessions
            .iter()
            .filter(|(k, e)| e.meta.session_id.starts_with(q) || k.starts_with(q))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] => bail!("session_not_found: no session {q:?}"),
        many => bail!(
            "{q:?} matches {} sessions (e.g. {}, {}); give more of the key",
            many.len(),
            many[0].0,
            many[1].0
        ),
    }
}

/// Runs `recall show`.
pub fn run(g: &Globals, a: ShowArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    ctx.refresh();
    let m = ctx.store.current()?;
    let (key, entry) = find(&m, &a.key)?;
    if a.agent.shape().is_some() && (a.query.any() || a.format.is_some() || a.json) {
        bail!("--max-tokens and --fields page the session view (--scope, --offset, --limit): they do not combine with --json, --format or the one-session query flags");
    }
    if a.format == Some(ShowFormat::Markdown) {
        let opts = crate::export::markdown::MarkdownOptions {
            tools: a.full,
            subagents: a.with_subagents,
            resume: true,
        };
        let store = ctx.store.clone();
        let md = crate::export::markdown::render(&m, key, opts, &mut |e| {
            let b = store
                .generation_bytes(&e.generation_file)
                .map_err(|e| e.to_string())?;
            serde_json::from_slice::<Shard>(&b).map_err(|e| e.to_string())
        })?;
        // Control characters (terminal escapes in a transcript) never
        // reach the terminal; tabs and line breaks stay.
        for line in md.trim_end_matches('\n').split('\n') {
            outln!(
                "{}",
                line.split('\t')
                    .map(sanitize)
                    .collect::<Vec<_>>()
                    .join("\t")
            )?;
        }
        return Ok(Found::Yes);
    }
    let json = a.json || a.format == Some(ShowFormat::Json);
    let bytes = ctx
        .store
        .generation_bytes(&entry.generation_file)
        .with_context(|| format!("cannot read the shard of {}", sanitize(key)))?;
    if let Some(shape) = a.agent.shape() {
        return super::show_page::budgeted(&a.page, &m, key, entry, &bytes, shape);
    }
    if a.query.any() {
        return super::show_query::run(&a.query, &entry.generation_file, &bytes, a.full, json);
    }
    if a.page.any() {
        return super::show_page::run(&a.page, m.revision, key, entry, &bytes, a.full, json);
    }
    let shard: Shard = serde_json::from_slice(&bytes)
        .with_context(|| format!("the shard of {} is not valid", sanitize(key)))?;
    let active = derive_active(&shard.records, &shard.marks);
    if json {
        let records: Vec<JsonRecord<'_>> = shard
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| JsonRecord {
                index: i,
                role: r.role,
                ts_ms: r.ts_ms,
                superseded: !active[i],
                subagent: r.subagent,
                truncated: r.truncated,
                generation: r.generation,
                seq: r.seq,
                text: &r.text,
                locator: &r.locator,
            })
            .collect();
        let body = serde_json::json!({
            "session_key": key,
            "session": entry,
            "records": records,
        });
        outln!("{}", serde_json::to_string(&body)?)?;
        return Ok(Found::Yes);
    }
    let meta = &entry.meta;
    let fit = crate::fit::line;
    let head = format!(
        "{}  {}",
        sanitize(key),
        sanitize(meta.title.as_deref().unwrap_or("(untitled)"))
    );
    outln!("{}", fit(&head))?;
    let info = format!(
        "  {}  {} → {}  {} messages{}",
        sanitize(meta.cwd.as_deref().unwrap_or("-")),
        minute_opt(meta.created_ms),
        minute_opt(meta.updated_ms),
        meta.messages,
        if entry.source_gone {
            "  [source gone]"
        } else {
            ""
        }
    );
    outln!("{}", fit(&info))?;
    if let Some(b) = &meta.branch {
        outln!("  branch: {}", sanitize(b))?;
    }
    if let Some(p) = &meta.parent {
        outln!("  parent: {} ({:?})", sanitize(&p.key), p.relation)?;
    }
    if let Some(r) = &meta.resume {
        // A command is never cut: on a narrow terminal it wraps at spaces.
        let line = format!("  resume: {}", sanitize(r));
        match crate::fit::width() {
            Some(w) if crate::fit::str_width(&line) > w => {
                for l in crate::fit::wrap(&line, "", w) {
                    outln!("{l}")?;
                }
            }
            _ => outln!("{line}")?,
        }
    }
    for (i, r) in shard.records.iter().enumerate() {
        let mut flags = String::new();
        for (on, name) in [
            (!active[i], " [superseded]"),
            (r.subagent, " [subagent]"),
            (r.truncated, " [truncated]"),
        ] {
            if on {
                flags.push_str(name);
            }
        }
        outln!()?;
        outln!("#{i} {} {}{flags}", minute(r.ts_ms), r.role.as_str())?;
        print_text(r.role, &r.text, a.full)?;
    }
    Ok(Found::Yes)
}

/// Prints a record's text, indented and sanitized (see [`shown_text`]).
/// On a terminal, long lines wrap at word boundaries under the indent
/// (text is never cut: this is the transcript itself).
pub(super) fn print_text(role: Role, text: &str, full: bool) -> std::io::Result<()> {
    let width = crate::fit::width();
    for line in shown_text(role, text, full).lines() {
        let line = sanitize(line);
        match width {
            Some(w) if crate::fit::str_width(&line) + 4 > w => {
                for l in crate::fit::wrap(&line, "    ", w) {
                    outln!("{l}")?;
                }
            }
            _ => outln!("    {line}")?,
        }
    }
    Ok(())
}

/// The text `recall show` prints for a record: a tool row becomes one line
/// of at most [`TOOL_PREVIEW`] characters (`…` when cut) unless `full`.
fn shown_text(role: Role, text: &str, full: bool) -> std::borrow::Cow<'_, str> {
    if role != Role::Tool || full {
        return text.into();
    }
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one.chars().take(TOOL_PREVIEW).collect();
    if cut.len() < one.len() {
        format!("{cut}…").into()
    } else {
        cut.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_rows_are_one_short_line_unless_full() {
        let long = "é ".repeat(300);
        let shown = shown_text(Role::Tool, &long, false);
        assert_eq!(shown.chars().count(), TOOL_PREVIEW + 1);
        assert!(shown.ends_with('…') && !shown.contains('\n'));
        assert_eq!(shown_text(Role::Tool, "a\n  b", false), "a b");
        assert_eq!(shown_text(Role::Tool, &long, true), long);
        assert_eq!(shown_text(Role::User, "a\n  b", false), "a\n  b");
    }
}
