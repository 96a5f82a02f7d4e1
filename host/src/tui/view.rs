//! Drawing `recall tui` with ratatui: the query line, the results grouped
//! per session with highlighted hits (or an opened session's records), a
//! filter picker, and the status and key help. Transcript text is drawn as
//! text: control characters become spaces, so no escape sequence from a
//! transcript reaches the terminal.

use super::app::{App, Focus, Row, SessionView};
use crate::clock::{day, minute, short_minute};
use crate::fit;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;
use recall_core::response::Hit;

const HIT: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
const DIM: Style = Style::new().fg(Color::DarkGray);
const KEY: Style = Style::new().fg(Color::Magenta);
const META: Style = Style::new().fg(Color::Green);
const BADGE: Style = Style::new().fg(Color::Black).bg(Color::Magenta);

/// Control characters (newlines too) as spaces: one line, nothing escaping.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame<'_>, app: &mut App) {
    let [top, body, status, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    draw_query(f, app, top);
    match app.session.as_mut() {
        Some(v) if app.focus == Focus::Session => draw_session(f, v, body),
        _ => draw_results(f, app, body),
    }
    let news = if app.searching {
        "searching…".to_string()
    } else {
        app.status.clone()
    };
    // The list shows times without an offset: the zone is named here, once.
    let news = format!("{news}  ·  times in {}", crate::clock::zone_label());
    f.render_widget(Paragraph::new(Span::styled(news, DIM)), status);
    let keys = match app.focus {
        Focus::Query => {
            "type to search  ↑/↓ move  Enter/Esc to the list  Ctrl-U clear  Ctrl-C quit"
        }
        Focus::List => "j/k move  Enter open  r resume  / query  s source  p project  q quit",
        Focus::Session => "j/k scroll  PgUp/PgDn page  r resume  Esc back",
        Focus::Picker => "j/k move  Enter choose  Esc cancel",
    };
    f.render_widget(Paragraph::new(Span::styled(keys, KEY)), help);
    if let Some(p) = &app.picker {
        let h = (p.items.len() as u16 + 2).min(body.height);
        let w = body.width.clamp(20, 70);
        let area = Rect::new(body.x + 2, body.y, w.min(body.width), h);
        let items: Vec<ListItem<'_>> = p
            .items
            .iter()
            .map(|(label, _)| ListItem::new(clean(label)))
            .collect();
        let title = match p.kind {
            super::app::PickerKind::Source => " source ",
            super::app::PickerKind::Project => " project ",
        };
        let list = List::new(items)
            .block(Block::default().borders(Borders::ALL).title(title))
            .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
            .highlight_symbol("▶ ");
        let mut state = ListState::default().with_selected(Some(p.selected));
        f.render_widget(Clear, area);
        f.render_stateful_widget(list, area, &mut state);
    }
}

fn draw_query(f: &mut Frame<'_>, app: &App, area: Rect) {
    let filters = format!(
        "  [source: {}]  [project: {}]",
        app.filters.source.map_or("all", |s| s.as_str()),
        app.filters.project.as_deref().map_or("all".into(), clean)
    );
    let prompt = "search: ";
    let line = Line::from(vec![
        Span::styled(prompt, KEY),
        Span::raw(clean(&app.query)),
        Span::styled(filters, DIM),
    ]);
    f.render_widget(Paragraph::new(line), area);
    if app.focus == Focus::Query {
        let x = area.x + (prompt.chars().count() + app.query.chars().count()) as u16;
        f.set_cursor_position((x.min(area.right().saturating_sub(1)), area.y));
    }
}

/// The snippet of a hit as a window around its first highlight that fits
/// `cols` columns, highlighted.
fn snippet(hit: &Hit, cols: usize) -> Vec<Span<'static>> {
    fit::snippet_pieces(hit, cols)
        .into_iter()
        .map(|(text, on)| {
            if on {
                Span::styled(text, HIT)
            } else {
                Span::raw(text)
            }
        })
        .collect()
}

/// The short form of a key in the list: the source as a badge and the
/// first 8 characters of the id (the detail view shows the whole key).
fn short_key(key: &str) -> Vec<Span<'static>> {
    let short = fit::short_key(key);
    let (source, id) = short.split_once(':').unwrap_or(("", short.as_str()));
    vec![
        Span::styled(format!(" {} ", clean(source)), BADGE),
        Span::raw(" "),
        Span::styled(clean(id), KEY),
    ]
}

fn draw_results(f: &mut Frame<'_>, app: &App, area: Rect) {
    if app.rows.is_empty() {
        let filtered = app.filters.source.is_some() || app.filters.project.is_some();
        let mut lines = vec![Line::styled(
            if app.searching {
                ""
            } else if !app.browsing() {
                "No matches."
            } else if filtered {
                "No sessions match the filters."
            } else {
                "No sessions indexed yet. Transcripts were looked for in:"
            },
            DIM,
        )];
        if app.browsing() && !filtered && !app.searching {
            lines.extend(
                app.looked_in
                    .iter()
                    .map(|l| Line::styled(format!("  {}", clean(l)), DIM)),
            );
        }
        f.render_widget(Paragraph::new(lines), area);
        return;
    }
    let items: Vec<ListItem<'_>> = app
        .rows
        .iter()
        .map(|row| match *row {
            Row::Session(g) => {
                let g = &app.groups[g];
                let mut spans = short_key(&g.info.key);
                if let Some(t) = g.info.updated_ms {
                    spans.push(Span::styled(format!("  {}", day(t)), META));
                }
                spans.extend([
                    Span::raw("  "),
                    Span::styled(
                        clean(g.info.title.as_deref().unwrap_or("(untitled)")),
                        Style::new().add_modifier(Modifier::BOLD),
                    ),
                ]);
                let mut info = Vec::new();
                if let Some(c) = &g.info.cwd {
                    info.push(clean(c));
                }
                if let Some(b) = &g.branch {
                    info.push(format!("({})", clean(b)));
                }
                match g.total_hits {
                    Some(n) => info.push(format!("{n} hit{}", if n == 1 { "" } else { "s" })),
                    None => info.push(format!("{} msgs", g.info.messages)),
                }
                spans.push(Span::styled(format!("  {}", info.join("  ")), DIM));
                ListItem::new(Line::from(spans))
            }
            Row::Hit(g, h) => {
                let hit = &app.groups[g].hits[h];
                let meta = format!("    {} {:<9} ", short_minute(hit.ts_ms), hit.role.as_str());
                // The list's highlight symbol takes two columns.
                let room = usize::from(area.width).saturating_sub(2 + fit::str_width(&meta));
                let mut spans = vec![Span::styled(meta, META)];
                spans.extend(snippet(hit, room));
                ListItem::new(Line::from(spans))
            }
        })
        .collect();
    let list = List::new(items)
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶ ");
    let mut state = ListState::default().with_selected(Some(app.selected));
    f.render_stateful_widget(list, area, &mut state);
}

/// The rows `text` wraps to at `width` characters, as byte ranges of
/// `text`: each line is broken after the last space that fits, or inside a
/// word longer than the width.
fn rows(text: &str, width: usize) -> Vec<(usize, usize)> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line_start = 0usize;
    for line in text.split('\n') {
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut i = 0usize;
        if chars.is_empty() {
            out.push((line_start, line_start));
        }
        while i < chars.len() {
            let mut end = (i + width).min(chars.len());
            if end < chars.len() {
                // Break after the last space of the row, if there is one.
                if let Some(sp) = (i + 1..=end).rev().find(|&j| chars[j - 1].1 == ' ') {
                    end = sp;
                }
            }
            let byte = |k: usize| line_start + chars.get(k).map_or(line.len(), |c| c.0);
            out.push((byte(i), byte(end)));
            i = end;
        }
        line_start += line.len() + 1;
    }
    out
}

/// The lines of a record, with the hit's ranges (byte offsets into the
/// record's text) highlighted when it is the record that was hit.
fn entry_lines(
    text: &str,
    width: usize,
    ranges: Option<&[[u64; 2]]>,
    base: Style,
) -> Vec<Line<'static>> {
    let ranges = ranges.unwrap_or(&[]);
    let in_hit = |off: usize| {
        ranges
            .iter()
            .any(|r| (r[0] as usize) <= off && off < (r[1] as usize))
    };
    rows(text, width)
        .into_iter()
        .map(|(start, end)| {
            let mut spans: Vec<Span<'static>> = vec![Span::raw("    ")];
            let mut run_start = start;
            let mut run_hit = in_hit(start);
            for (off, _) in text[start..end].char_indices().map(|(o, c)| (o + start, c)) {
                let hit = in_hit(off);
                if hit != run_hit {
                    let style = if run_hit { HIT } else { base };
                    spans.push(Span::styled(clean(&text[run_start..off]), style));
                    run_start = off;
                    run_hit = hit;
                }
            }
            if run_start < end {
                let style = if run_hit { HIT } else { base };
                spans.push(Span::styled(clean(&text[run_start..end]), style));
            }
            Line::from(spans)
        })
        .collect()
}

fn draw_session(f: &mut Frame<'_>, v: &mut SessionView, area: Rect) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let title = Line::from(vec![
        Span::styled(v.key.clone(), KEY),
        Span::styled(format!("  {} records  ", v.entries.len()), DIM),
        Span::styled(
            clean(v.title.as_deref().unwrap_or("(untitled)")),
            Style::new().add_modifier(Modifier::BOLD),
        ),
    ]);
    f.render_widget(Paragraph::new(title), head);
    let width = usize::from(body.width).saturating_sub(4);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut hit_line = 0usize;
    for (i, e) in v.entries.iter().enumerate() {
        let at = v.at.as_ref().filter(|(j, _)| *j == i);
        if at.is_some() {
            hit_line = lines.len();
        }
        let mut flags = String::new();
        for (on, name) in [(e.superseded, " superseded"), (e.subagent, " subagent")] {
            if on {
                flags.push_str(name);
            }
        }
        let marker = if at.is_some() { "▶ " } else { "" };
        lines.push(Line::from(vec![
            Span::styled(marker, HIT),
            Span::styled(
                format!("#{i} {} {}{flags}", minute(e.ts_ms), e.role.as_str()),
                META,
            ),
        ]));
        let base = if e.superseded { DIM } else { Style::new() };
        lines.extend(entry_lines(
            &e.text,
            width,
            at.map(|(_, h)| h.ranges.as_slice()),
            base,
        ));
        lines.push(Line::raw(""));
    }
    if v.seek {
        v.scroll = hit_line;
        v.seek = false;
    }
    let last = lines.len().saturating_sub(usize::from(body.height).max(1));
    v.scroll = v.scroll.min(last);
    let shown: Vec<Line<'static>> = lines
        .into_iter()
        .skip(v.scroll)
        .take(usize::from(body.height))
        .collect();
    f.render_widget(Paragraph::new(shown), body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` wrapped at `width`, as the rows' cleaned text.
    fn wrap(text: &str, width: usize) -> Vec<String> {
        rows(text, width)
            .into_iter()
            .map(|(s, e)| clean(&text[s..e]))
            .collect()
    }

    #[test]
    fn highlights_land_on_the_matched_bytes_after_wrapping() {
        let text = "ab Straße cd\nzebrafinch";
        // "Straße" is bytes 3..10; "zebra" 14..19.
        let lines = entry_lines(text, 5, Some(&[[3, 10], [14, 19]]), Style::new());
        let shown: Vec<String> = lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(
            shown,
            ["    ab ", "    Straß", "    e cd", "    zebra", "    finch"]
        );
        let hits: Vec<String> = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .filter(|s| s.style == HIT)
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(hits, ["Straß", "e", "zebra"]);
    }

    #[test]
    fn lines_break_after_spaces_and_inside_long_words() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick ", "brown fox"]);
        assert_eq!(wrap("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
        assert_eq!(wrap("a\n\nb", 5), ["a", "", "b"]);
        // Every byte lands in exactly one row, in order.
        let text = "Straße und Fluß, ein sehr langes Wort: Donaudampfschifffahrt.\nEnde";
        for width in 1..20 {
            let r = rows(text, width);
            let joined: String = r.iter().map(|&(s, e)| &text[s..e]).collect();
            assert_eq!(joined, text.replace('\n', ""), "width {width}");
            assert!(r.iter().all(|&(s, e)| text[s..e].chars().count() <= width));
        }
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(clean("a\x1b[2Jb\n"), "a [2Jb ");
        assert_eq!(wrap("a\x1bb", 10), ["a b"]);
    }
}
