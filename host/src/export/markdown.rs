//! A session as Markdown (`recall show KEY --format markdown`, `GET
//! /api/session/{key}/export.md`): a heading with the session's facts, then
//! each record under a heading of its role and UTC time. User and assistant
//! text is Markdown already and is written as it is; tool rows go in a
//! fenced block (a fence longer than any backtick run inside, so no text can
//! close it). Superseded records are marked. With subagents, each
//! descendant session follows as its own section, one heading level down.
//!
//! The renderer takes the parsed shards; reading them is the caller's (the
//! CLI reads the store, the route the served catalog). Nothing here depends
//! on the clock or the local zone: the same session renders the same bytes.

use recall_core::derive_active;
use recall_core::model::{Manifest, ManifestEntry, Role, Shard};
use std::fmt::Write;

/// What to include.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// Tool rows (calls and results) besides the conversation.
    pub tools: bool,
    /// The session's subagents (its descendant sessions), after it.
    pub subagents: bool,
    /// The resume command (a same-machine reader only).
    pub resume: bool,
}

/// Why a session could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum MarkdownError {
    /// The session is not indexed.
    #[error("no session with this key is indexed")]
    NotFound,
    /// Its shard could not be read.
    #[error("cannot read the shard of {key}: {message}")]
    Shard {
        /// The session.
        key: String,
        /// Why.
        message: String,
    },
}

/// Renders `key` (and, with `opts.subagents`, its descendants) from
/// `manifest`, reading each session's shard with `shard`.
pub fn render(
    manifest: &Manifest,
    key: &str,
    opts: MarkdownOptions,
    shard: &mut dyn FnMut(&ManifestEntry) -> Result<Shard, String>,
) -> Result<String, MarkdownError> {
    let Some(entry) = manifest.sessions.get(key) else {
        return Err(MarkdownError::NotFound);
    };
    let mut keys = vec![key.to_string()];
    if opts.subagents {
        keys.extend(
            crate::lineage::subtree_keys(manifest, key)
                .into_iter()
                .filter(|k| k != key),
        );
    }
    let mut out = String::new();
    for (i, k) in keys.iter().enumerate() {
        let Some(e) = (if i == 0 {
            Some(entry)
        } else {
            manifest.sessions.get(k)
        }) else {
            continue;
        };
        let s = shard(e).map_err(|message| MarkdownError::Shard {
            key: k.clone(),
            message,
        })?;
        if i > 0 {
            out.push('\n');
        }
        session(&mut out, k, e, &s, opts, if i == 0 { 1 } else { 2 });
    }
    Ok(out)
}

/// One session's section at heading `level`.
fn session(
    out: &mut String,
    key: &str,
    e: &ManifestEntry,
    s: &Shard,
    opts: MarkdownOptions,
    level: usize,
) {
    let h = "#".repeat(level);
    let m = &e.meta;
    let title = m
        .title
        .as_deref()
        .map(one_line)
        .unwrap_or_else(|| key.to_string());
    let _ = writeln!(out, "{h} {title}\n");
    let _ = writeln!(out, "- Session: `{}`", inline_code(key));
    if let Some(p) = &m.parent {
        let _ = writeln!(out, "- Parent: `{}`", inline_code(&p.key));
    }
    if let Some(cwd) = &m.cwd {
        let _ = writeln!(out, "- Project: `{}`", inline_code(cwd));
    }
    if let Some(b) = &m.branch {
        let _ = writeln!(out, "- Branch: `{}`", inline_code(b));
    }
    if !m.models.is_empty() {
        let _ = writeln!(out, "- Models: {}", m.models.join(", "));
    }
    if let Some(t) = m.created_ms {
        let _ = writeln!(out, "- Started: {}", time(t));
    }
    if let Some(t) = m.updated_ms {
        let _ = writeln!(out, "- Updated: {}", time(t));
    }
    let _ = writeln!(out, "- Messages: {}", m.messages);
    if opts.resume {
        if let Some(r) = &m.resume {
            let _ = writeln!(out, "- Resume: `{}`", inline_code(r));
        }
    }
    let active = derive_active(&s.records, &s.marks);
    for (i, r) in s.records.iter().enumerate() {
        if r.role == Role::Tool && !opts.tools {
            continue;
        }
        let role = match r.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::Tool => "Tool",
        };
        let mut flags = String::new();
        for (on, name) in [
            (!active.get(i).copied().unwrap_or(true), "superseded"),
            (r.subagent, "subagent"),
            (r.truncated, "truncated"),
        ] {
            if on {
                flags.push_str(&format!(" *({name})*"));
            }
        }
        let _ = writeln!(out, "\n{h}# {role} · {}{flags}\n", time(r.ts_ms));
        if r.role == Role::Tool {
            let fence = fence_for(&r.text);
            let _ = writeln!(out, "{fence}text\n{}\n{fence}", r.text.trim_end());
        } else {
            let _ = writeln!(out, "{}", r.text.trim_end());
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC`.
fn time(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
        Err(_) => format!("{ms} ms"),
    }
}

/// A title on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text for inside a single-backtick code span: on one line, backticks
/// replaced (a span cannot escape them).
fn inline_code(s: &str) -> String {
    one_line(s).replace('`', "'")
}

/// A backtick fence longer than any backtick run in `text` (at least 3).
pub fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outlasts_every_backtick_run() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("`````x``"), "``````");
    }

    #[test]
    fn inline_code_never_breaks_out() {
        assert_eq!(inline_code("a`b\nc"), "a'b c");
        assert_eq!(time(1_793_000_000_123), "2026-10-26 07:33:20 UTC");
    }
}
