//! Output that fits the terminal: when stdout is a terminal, `search`,
//! `sessions`, `show` and `trace` lay out to its width (`COLUMNS` wins
//! over the terminal's own size). A field too long is cut at a word
//! boundary with `…`; a snippet is a window around its first hit that fits
//! one line. Piped output never comes here: it keeps its stable, unwrapped
//! form. Widths are display columns (`unicode-width`), so wide characters
//! count twice.

use recall_core::response::Hit;
use std::io::IsTerminal;
use unicode_width::UnicodeWidthChar;

/// The narrowest layout: below it, lines are cut at this width anyway.
const MIN_WIDTH: usize = 20;

/// The terminal's width when stdout is one (`COLUMNS` first), else `None`.
pub fn width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    Some(
        columns(std::env::var("COLUMNS").ok().as_deref()).unwrap_or_else(|| {
            terminal_size::terminal_size().map_or(80, |(w, _)| usize::from(w.0))
        }),
    )
    .map(|w| w.max(MIN_WIDTH))
}

/// `COLUMNS` as a width (`None` when unset or not a positive number).
fn columns(v: Option<&str>) -> Option<usize> {
    v?.trim().parse::<usize>().ok().filter(|&w| w > 0)
}

/// One line of output: cut to the terminal's width, whole when piped.
pub fn line(s: &str) -> String {
    match width() {
        Some(w) => cut(s, w),
        None => s.to_string(),
    }
}

/// A character's display width (a control character prints as a space).
pub fn char_width(c: char) -> usize {
    if c.is_control() {
        1
    } else {
        c.width().unwrap_or(0)
    }
}

/// A string's display width.
pub fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` in at most `max` columns: whole when it fits, else cut at the last
/// word boundary that keeps most of it (mid-word only for a single long
/// word) and ended with `…`.
pub fn cut(s: &str, max: usize) -> String {
    if str_width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let end = fit_end(s, 0, max - 1, false);
    format!("{}…", s[..end].trim_end())
}

/// The byte end of the longest prefix of `s[start..]` within `cols`
/// columns, moved back to a word boundary when one lies in its last third
/// (anywhere when `whole_words`: wrapping loses nothing by it).
fn fit_end(s: &str, start: usize, cols: usize, whole_words: bool) -> usize {
    let mut used = 0;
    let mut end = start;
    for (i, c) in s[start..].char_indices() {
        let w = char_width(c);
        if used + w > cols {
            break;
        }
        used += w;
        end = start + i + c.len_utf8();
    }
    if end >= s.len() {
        return s.len();
    }
    // Cutting mid-word: back up to the last space if it keeps two thirds.
    let next_is_word = s[end..].chars().next().is_some_and(|c| !c.is_whitespace());
    if next_is_word {
        if let Some(sp) = s[start..end].rfind(char::is_whitespace) {
            if sp > 0 && (whole_words || str_width(&s[start..start + sp]) * 3 >= cols * 2) {
                return start + sp;
            }
        }
    }
    end
}

/// The window of `text` to show in `cols` columns around the byte range
/// `hit` (the first highlight): `(start, end)` byte offsets on character
/// boundaries. About a quarter of the line goes before the hit, starting at
/// a word; the rest after it. The caller adds `…` where the window cuts
/// (each counted in `cols`: pass the columns left for text).
pub fn window(text: &str, hit: Option<(usize, usize)>, cols: usize) -> (usize, usize) {
    let h0 = hit.map_or(0, |h| h.0).min(text.len());
    if str_width(text) <= cols {
        return (0, text.len());
    }
    let lead = cols / 4;
    let mut start = h0;
    let mut used = 0;
    for (i, c) in text[..h0].char_indices().rev() {
        let w = char_width(c);
        if used + w > lead {
            break;
        }
        used += w;
        start = i;
    }
    // Begin at a word (never after the hit).
    start = word_start(text, start).min(h0);
    // Shift left when the window would end before using the whole line.
    let mut end = fit_end(text, start, cols, false);
    if end == text.len() {
        let mut s = start;
        let mut room = cols.saturating_sub(str_width(&text[start..]));
        for (i, c) in text[..start].char_indices().rev() {
            let w = char_width(c);
            if w > room {
                break;
            }
            room -= w;
            s = i;
        }
        start = word_start(text, s).min(h0);
        end = text.len();
    }
    (start, end)
}

/// A session key shortened for a line: the source and 8 characters of its
/// id (`claude-code:0c3fc003`) — the id's first run of 8 hex digits when it
/// has one (`dsh:session-791afe80-…` is `dsh:791afe80`), else its first 8
/// characters. `recall show` and `recall trace` take it (an id fragment).
pub fn short_key(key: &str) -> String {
    let Some((source, id)) = key.split_once(':') else {
        return key.to_string();
    };
    if id.chars().count() <= 8 {
        return key.to_string();
    }
    let b = id.as_bytes();
    let hex = (0..b.len().saturating_sub(7)).find(|&i| {
        (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b[i..i + 8].iter().all(u8::is_ascii_hexdigit)
    });
    match hex {
        Some(i) => format!("{source}:{}", &id[i..i + 8]),
        None => format!("{source}:{}", id.chars().take(8).collect::<String>()),
    }
}

/// A hit's snippet as a window around its first highlight in `cols`
/// columns: pieces of sanitized text, each flagged when highlighted, with
/// `…` where the window (or the snippet itself) cuts the record.
pub fn snippet_pieces(hit: &Hit, cols: usize) -> Vec<(String, bool)> {
    let text = &hit.snippet;
    let base = hit.snippet_offset_bytes;
    let ranges: Vec<(usize, usize)> = hit
        .ranges
        .iter()
        .filter_map(|r| {
            let clip = |v: u64| {
                usize::try_from(v.saturating_sub(base))
                    .unwrap_or(usize::MAX)
                    .min(text.len())
            };
            let (s, e) = (clip(r[0]), clip(r[1]));
            (s < e && text.is_char_boundary(s) && text.is_char_boundary(e)).then_some((s, e))
        })
        .collect();
    // Two columns kept for the ellipses.
    let (start, end) = window(text, ranges.first().copied(), cols.saturating_sub(2));
    let mut out = Vec::new();
    if base > 0 || start > 0 {
        out.push(("…".to_string(), false));
    }
    let mut pos = start;
    for &(s, e) in &ranges {
        let (s, e) = (s.max(pos), e.min(end));
        if s >= e {
            continue;
        }
        if pos < s {
            out.push((sanitize(&text[pos..s]), false));
        }
        out.push((sanitize(&text[s..e]), true));
        pos = e;
    }
    if pos < end {
        out.push((sanitize(&text[pos..end]), false));
    }
    if end < text.len() {
        out.push(("…".to_string(), false));
    }
    out
}

/// `at`, or when it falls inside a word the start of the next word (never
/// past `text`'s end); leading spaces skipped.
fn word_start(text: &str, at: usize) -> usize {
    let mut i = at;
    let inside = at > 0
        && text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_whitespace())
        && text[at..]
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace());
    if inside {
        if let Some(sp) = text[at..].find(char::is_whitespace) {
            i = at + sp;
        }
    }
    let skipped = text[i..].len() - text[i..].trim_start().len();
    if i + skipped < text.len() {
        i + skipped
    } else {
        at
    }
}

/// `s` wrapped at word boundaries to `width` columns, every line after
/// `indent` (a word longer than the line is cut across lines).
pub fn wrap(s: &str, indent: &str, width: usize) -> Vec<String> {
    let room = width.saturating_sub(str_width(indent)).max(MIN_WIDTH / 2);
    let mut lines = Vec::new();
    let mut rest = s.trim_end();
    while !rest.is_empty() {
        let end = fit_end(rest, 0, room, true);
        let end = if end == 0 {
            rest.chars().next().map_or(rest.len(), char::len_utf8)
        } else {
            end
        };
        lines.push(format!("{indent}{}", rest[..end].trim_end()));
        rest = rest[end..].trim_start();
    }
    if lines.is_empty() {
        lines.push(indent.trim_end().to_string());
    }
    lines
}

/// Replaces control characters (C0, DEL, C1) with spaces.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn columns_reads_a_positive_number() {
        assert_eq!(columns(Some("120")), Some(120));
        assert_eq!(columns(Some(" 80 ")), Some(80));
        assert_eq!(columns(Some("0")), None);
        assert_eq!(columns(Some("wide")), None);
        assert_eq!(columns(None), None);
    }

    #[test]
    fn cut_ends_at_a_word_with_an_ellipsis() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("the quick brown fox jumps", 18), "the quick brown…");
        assert_eq!(cut("abcdefghijklmnop", 8), "abcdefg…");
        // Wide characters count two columns.
        assert_eq!(cut("日本語のテキスト", 7), "日本語…");
        assert!(str_width(&cut("日本語のテキスト", 7)) <= 7);
    }

    #[test]
    fn the_window_shows_the_hit_with_context_before_it() {
        let text = format!("{} needle and what follows it", "lorem ipsum ".repeat(20));
        let at = text.find("needle").unwrap();
        let (s, e) = window(&text, Some((at, at + 6)), 40);
        let shown = &text[s..e];
        assert!(shown.contains("needle"), "{shown}");
        assert!(str_width(shown) <= 40);
        assert!(
            shown.starts_with("lorem") || shown.starts_with("ipsum"),
            "{shown:?}"
        );
        // A hit near the end still fills the line.
        let (s, e) = window("aaaa bbbb cccc dddd eeee ffff", Some((25, 29)), 12);
        assert_eq!(e, 29);
        assert!(str_width(&"aaaa bbbb cccc dddd eeee ffff"[s..e]) <= 12);
    }

    #[test]
    fn short_keys_keep_the_source_and_eight_characters() {
        assert_eq!(
            short_key("claude-code:0c3fc003-0000-7000-8000-000000000003"),
            "claude-code:0c3fc003"
        );
        assert_eq!(short_key("pi:abc"), "pi:abc");
        assert_eq!(
            short_key("dsh:session-791afe80-7562-4f4f-8c94-d84b04390d62"),
            "dsh:791afe80"
        );
        assert_eq!(short_key("kimi:session_d84b64fb-e3cc"), "kimi:d84b64fb");
        assert_eq!(short_key("x:rollout-long-name"), "x:rollout-");
    }

    #[test]
    fn wrap_keeps_words_whole_and_the_indent() {
        let lines = wrap("one two three four five six", "    ", 16);
        assert_eq!(lines, ["    one two", "    three four", "    five six"]);
    }

    proptest! {
        #[test]
        fn every_layout_fits_its_width(s in "[a-zé日 ]{0,200}", w in 1usize..120, at in 0usize..200) {
            prop_assert!(str_width(&cut(&s, w)) <= w);
            let at = (0..=at.min(s.len())).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
            let (a, b) = window(&s, Some((at, at)), w);
            prop_assert!(a <= b && s.is_char_boundary(a) && s.is_char_boundary(b));
            prop_assert!(str_width(&s[a..b]) <= w);
            for l in wrap(&s, "  ", w.max(MIN_WIDTH)) {
                prop_assert!(str_width(&l) <= w.max(MIN_WIDTH));
            }
        }

        #[test]
        fn the_window_holds_a_short_hit(pre in "[a-z ]{0,150}", post in "[a-z ]{0,150}", w in 20usize..120) {
            let text = format!("{pre}NEEDLE{post}");
            let at = pre.len();
            let (a, b) = window(&text, Some((at, at + 6)), w);
            prop_assert!(a <= at && b >= at + 6, "{:?}", &text[a..b]);
        }
    }
}
