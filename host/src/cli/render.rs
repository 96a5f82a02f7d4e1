//! Human output of a search, grouped per session like ripgrep: a heading
//! per session, one line per hit with its highlighted snippet, then the
//! cursor hint. Colors only when enabled (a terminal, or `--color always`).
//! Transcript text is sanitized: control characters never reach the
//! terminal (a transcript could carry escape sequences).

use crate::clock::minute;
use recall_core::response::{Hit, PartialReason, SessionHits, State};
use recall_core::Response;
use std::io::{self, IsTerminal, Write};

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// On when stdout is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to emit ANSI colors.
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// Replaces control characters (C0, DEL, C1) with spaces.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The snippet with its ranges highlighted.
fn snippet(hit: &Hit, style: &Style) -> String {
    let text = &hit.snippet;
    let base = hit.snippet_offset_bytes;
    let mut out = String::new();
    if base > 0 {
        out.push('…');
    }
    let mut pos = 0usize;
    for r in &hit.ranges {
        let clip = |v: u64| {
            usize::try_from(v.saturating_sub(base))
                .unwrap_or(usize::MAX)
                .min(text.len())
        };
        let (s, e) = (clip(r[0]).max(pos), clip(r[1]));
        if s >= e || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        out.push_str(&sanitize(&text[pos..s]));
        out.push_str(&style.paint("1;31", &sanitize(&text[s..e])));
        pos = e;
    }
    out.push_str(&sanitize(&text[pos..]));
    out
}

fn heading(s: &SessionHits, style: &Style) -> String {
    // A key carries the agent's session id, which a transcript chooses.
    let mut h = style.paint("35", &sanitize(&s.session_key));
    if let Some(t) = &s.title {
        h.push_str("  ");
        h.push_str(&style.paint("1", &sanitize(t)));
    }
    let mut info = Vec::new();
    if let Some(host) = &s.host {
        info.push(format!("@{}", sanitize(&host.name)));
    }
    if let Some(c) = &s.cwd {
        info.push(sanitize(c));
    }
    if let Some(b) = &s.branch {
        info.push(format!("({})", sanitize(b)));
    }
    info.push(format!(
        "{} hit{}",
        s.total_hits,
        if s.total_hits == 1 { "" } else { "s" }
    ));
    if s.source_gone {
        info.push("source gone".to_string());
    }
    format!(
        "{h}\n{}",
        style.paint("2", &format!("  {}", info.join("  ")))
    )
}

fn hit_line(hit: &Hit, style: &Style) -> String {
    let mut flags = String::new();
    for (on, name) in [
        (hit.superseded, " superseded"),
        (hit.subagent, " subagent"),
        (hit.truncated, " truncated"),
    ] {
        if on {
            flags.push_str(name);
        }
    }
    let meta = format!("{} {}{}", minute(hit.ts_ms), hit.role.as_str(), flags);
    format!("  {}  {}", style.paint("32", &meta), snippet(hit, style))
}

/// Prints a response.
pub fn print(r: &Response, color: bool) -> io::Result<()> {
    let style = Style { on: color };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for (i, s) in r.sessions.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", heading(s, &style))?;
        for h in &s.hits {
            writeln!(out, "{}", hit_line(h, &style))?;
        }
        if let Some(cmd) = &s.resume {
            writeln!(
                out,
                "{}",
                style.paint("2", &format!("  resume: {}", sanitize(cmd)))
            )?;
        }
    }
    match (r.state, r.partial_reason) {
        (State::Building, _) => {
            eprintln!("recall: the first index is still being built; results are incomplete")
        }
        (State::Partial, Some(PartialReason::Timeout)) => {
            eprintln!("recall: partial results: the scan deadline passed before every session was searched")
        }
        (State::Partial, Some(PartialReason::Hosts)) => {
            eprintln!("recall: partial results: some hosts could not be read (see --json hosts)")
        }
        (State::Partial, _) => {
            eprintln!("recall: partial results: the load budget was spent; the cursor continues")
        }
        _ => {}
    }
    if let Some(c) = &r.cursor {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            style.paint("2", &format!("more: add --cursor {c}"))
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use recall_core::model::{Locator, Role};

    fn hit(snippet: &str, offset: u64, ranges: Vec<[u64; 2]>) -> Hit {
        Hit {
            role: Role::User,
            ts_ms: 0,
            seq: None,
            superseded: false,
            truncated: false,
            subagent: false,
            snippet: snippet.into(),
            snippet_offset_bytes: offset,
            ranges,
            locator: Locator::ExternalRecordId {
                record_id: "r".into(),
            },
            host: None,
        }
    }

    #[test]
    fn highlights_ranges_relative_to_the_snippet() {
        let on = Style { on: true };
        let h = hit("say Straße\nnow", 10, vec![[14, 21]]);
        assert_eq!(snippet(&h, &on), "…say \x1b[1;31mStraße\x1b[0m now");
        let off = Style { on: false };
        assert_eq!(snippet(&h, &off), "…say Straße now");
    }

    #[test]
    fn session_keys_are_sanitized_in_headings() {
        let s = SessionHits {
            session_key: "pi:\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07".into(),
            source: recall_core::model::Source::Pi,
            session_id: "x".into(),
            title: None,
            cwd: None,
            branch: None,
            best_ts_ms: 0,
            updated_ms: None,
            messages: 0,
            relevance: None,
            total_hits: 0,
            source_gone: false,
            source_presence: recall_core::response::SourcePresence::Present,
            resume: None,
            hits: vec![],
            host: None,
        };
        let out = heading(&s, &Style { on: false });
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.starts_with("pi: ]0;owned"), "{out:?}");
    }

    #[test]
    fn escape_sequences_never_reach_the_terminal() {
        let off = Style { on: false };
        let h = hit("a\x1b[2Jb", 0, vec![]);
        assert_eq!(snippet(&h, &off), "a [2Jb");
    }
}
