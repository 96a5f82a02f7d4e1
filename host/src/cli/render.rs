//! Human output of a search, grouped per session like ripgrep: a heading
//! per session, one line per hit with its highlighted snippet, then the
//! cursor hint. Colors only when enabled (a terminal, or `--color always`).
//! Transcript text is sanitized: control characters never reach the
//! terminal (a transcript could carry escape sequences).

use crate::clock::{minute, short_minute};
use crate::fit;
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

pub use crate::fit::sanitize;

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

/// The snippet as a window around its first highlight that fits `cols`
/// columns, `…` where it is cut.
fn fitted_snippet(hit: &Hit, style: &Style, cols: usize) -> String {
    fit::snippet_pieces(hit, cols)
        .into_iter()
        .map(|(text, hit)| {
            if hit {
                style.paint("1;31", &text)
            } else {
                text
            }
        })
        .collect()
}

fn heading(s: &SessionHits, style: &Style, width: Option<usize>) -> String {
    // A key carries the agent's session id, which a transcript chooses.
    // On a terminal the short key (`recall show` takes it too) leaves the
    // line to the title.
    let key = match width {
        Some(_) => sanitize(&fit::short_key(&s.session_key)),
        None => sanitize(&s.session_key),
    };
    let mut h = style.paint("35", &key);
    if let Some(t) = &s.title {
        let t = sanitize(t);
        let t = match width {
            Some(w) => fit::cut(&t, w.saturating_sub(fit::str_width(&key) + 2)),
            None => t,
        };
        if !t.is_empty() {
            h.push_str("  ");
            h.push_str(&style.paint("1", &t));
        }
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
    let info = format!("  {}", info.join("  "));
    let info = match width {
        Some(w) => fit::cut(&info, w),
        None => info,
    };
    format!("{h}\n{}", style.paint("2", &info))
}

fn hit_line(hit: &Hit, style: &Style, width: Option<usize>) -> String {
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
    let Some(w) = width else {
        let meta = format!("{} {}{}", minute(hit.ts_ms), hit.role.as_str(), flags);
        return format!("  {}  {}", style.paint("32", &meta), snippet(hit, style));
    };
    // Fitted: the zone is named once (see `print`), the snippet is one line.
    let meta = format!("{} {}{}", short_minute(hit.ts_ms), hit.role.as_str(), flags);
    let room = w.saturating_sub(2 + fit::str_width(&meta) + 2);
    format!(
        "  {}  {}",
        style.paint("32", &meta),
        fitted_snippet(hit, style, room)
    )
}

/// Prints a response: fitted to `width` columns when given (a terminal),
/// else in the stable unwrapped form. `more` is the continuation hint
/// (`None`: print the raw cursor).
pub fn print(
    r: &Response,
    color: bool,
    width: Option<usize>,
    more: Option<&str>,
) -> io::Result<()> {
    let style = Style { on: color };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if width.is_some() && !r.sessions.is_empty() {
        let zone = format!("times in {}", crate::clock::zone_label());
        writeln!(out, "{}", style.paint("2", &zone))?;
    }
    for (i, s) in r.sessions.iter().enumerate() {
        if i > 0 || width.is_some() {
            writeln!(out)?;
        }
        writeln!(out, "{}", heading(s, &style, width))?;
        for h in &s.hits {
            writeln!(out, "{}", hit_line(h, &style, width))?;
        }
        if let Some(cmd) = &s.resume {
            let line = format!("  resume: {}", sanitize(cmd));
            // A command is never cut: one too long for the line wraps
            // at its spaces.
            match width {
                Some(w) if fit::str_width(&line) > w => {
                    for l in fit::wrap(&line, "", w) {
                        writeln!(out, "{}", style.paint("2", &l))?;
                    }
                }
                _ => writeln!(out, "{}", style.paint("2", &line))?,
            }
        }
    }
    match (r.state, r.partial_reason) {
        (State::Building, _) => {
            eprintln!("recall: the first index is still being built; results are incomplete")
        }
        (State::Partial, Some(PartialReason::Timeout)) => {
            eprintln!("recall: partial results: the scan deadline passed before every session was searched")
        }
        (State::Partial, Some(PartialReason::Unreadable)) => {
            eprintln!("recall: partial results: the index files of some sessions are damaged and were left out; the next `recall index` (or search) reads them again from their transcripts")
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
        let hint = match more {
            // A command is never cut: one too long for the terminal line
            // gives way to the flag to add.
            Some(m) if width.is_none_or(|w| fit::str_width(m) + 6 <= w) => format!("more: {m}"),
            Some(m) => format!(
                "more: the same search with {}",
                m.rsplit_once(" --page ")
                    .map_or_else(|| m.to_string(), |(_, n)| format!("--page {n}"))
            ),
            None => format!("more: add --cursor {c}"),
        };
        writeln!(out, "{}", style.paint("2", &hint))?;
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
        let out = heading(&s, &Style { on: false }, None);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.starts_with("pi: ]0;owned"), "{out:?}");
    }

    #[test]
    fn a_fitted_snippet_is_one_line_around_the_first_hit() {
        let text = format!(
            "{}the needle sits here{}",
            "word ".repeat(60),
            " tail".repeat(60)
        );
        let at = text.find("needle").unwrap() as u64;
        let h = hit(&text, 5, vec![[at + 5, at + 11]]);
        let off = Style { on: false };
        let s = fitted_snippet(&h, &off, 50);
        assert!(s.contains("needle"), "{s}");
        assert!(fit::str_width(&s) <= 50, "{s}");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        let on = Style { on: true };
        assert!(fitted_snippet(&h, &on, 50).contains("\x1b[1;31mneedle\x1b[0m"));
        let line = hit_line(&h, &off, Some(80));
        assert!(fit::str_width(&line) <= 80, "{line}");
    }

    #[test]
    fn escape_sequences_never_reach_the_terminal() {
        let off = Style { on: false };
        let h = hit("a\x1b[2Jb", 0, vec![]);
        assert_eq!(snippet(&h, &off), "a [2Jb");
    }
}
