//! The state of `recall tui` and what each key does to it. Nothing here
//! touches the terminal or the store: a key returns an [`Effect`] that the
//! loop in [`super`] carries out (search, open a session, print the resume
//! command), so the behaviour is testable with plain values.

use super::data::{Entry, Filters, SessionInfo, Ticket};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use recall_core::model::{Locator, Source};
use recall_core::response::{Hit, SessionHits};
use recall_core::Response;

/// Where the keys go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// Typing edits the query.
    Query,
    /// j/k move through the results.
    List,
    /// An opened session is read.
    Session,
    /// A filter's choices are open.
    Picker,
}

/// One session of the results, with its hits (none when browsing).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The session.
    pub info: SessionInfo,
    /// Branch, when the search reported one.
    pub branch: Option<String>,
    /// Matching records (uncapped); `None` when browsing.
    pub total_hits: Option<u64>,
    /// The hits shown (up to 3 per session).
    pub hits: Vec<Hit>,
}

impl Group {
    fn from_hits(s: SessionHits) -> Group {
        Group {
            info: SessionInfo {
                key: s.session_key,
                source: s.source,
                title: s.title,
                cwd: s.cwd,
                updated_ms: Some(s.best_ts_ms),
                messages: 0,
                resume: s.resume,
            },
            branch: s.branch,
            total_hits: Some(s.total_hits),
            hits: s.hits,
        }
    }
}

/// A line of the results list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Row {
    /// A session's heading (selectable when browsing without a query).
    Session(usize),
    /// One hit of a session.
    Hit(usize, usize),
}

/// An opened session.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionView {
    /// The session's key.
    pub key: String,
    /// Its title.
    pub title: Option<String>,
    /// Its resume command.
    pub resume: Option<String>,
    /// Its records in order.
    pub entries: Vec<Entry>,
    /// The record that was hit, and the hit (for its highlights).
    pub at: Option<(usize, Hit)>,
    /// First line shown; set to the hit's record when first drawn.
    pub scroll: usize,
    /// Whether the view still has to scroll to the hit's record.
    pub seek: bool,
}

/// Which filter a picker sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickerKind {
    /// The agent.
    Source,
    /// The working directory.
    Project,
}

/// A filter's choices: label and value (`None` = no filter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picker {
    /// Which filter.
    pub kind: PickerKind,
    /// The choices.
    pub items: Vec<(String, Option<String>)>,
    /// The highlighted choice.
    pub selected: usize,
}

/// What the loop must do after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing more.
    None,
    /// Search again (the query or a filter changed).
    Search,
    /// Read this session, at this hit's record.
    Open(String, Option<Locator>),
    /// Open the choices of a filter.
    Pick(PickerKind),
    /// Leave without printing anything.
    Quit,
    /// Leave, printing this resume command on stdout.
    Resume(String),
}

/// Everything the TUI shows.
#[derive(Debug)]
pub struct App {
    /// The query being typed.
    pub query: String,
    /// Source and project filters.
    pub filters: Filters,
    /// Where keys go.
    pub focus: Focus,
    /// The results (or, for an empty query, the recent sessions).
    pub groups: Vec<Group>,
    /// The list's lines.
    pub rows: Vec<Row>,
    /// The selected line (an index into `rows`).
    pub selected: usize,
    /// One line of news: counts, errors, hints.
    pub status: String,
    /// The newest search asked for.
    pub ticket: Ticket,
    /// Whether that search has not answered yet.
    pub searching: bool,
    /// The opened session.
    pub session: Option<SessionView>,
    /// The open filter choices.
    pub picker: Option<Picker>,
    /// Where transcripts are looked for (shown while nothing is indexed).
    pub looked_in: Vec<String>,
}

impl App {
    /// A new app with an initial query and filters.
    pub fn new(query: String, filters: Filters) -> App {
        App {
            focus: if query.is_empty() {
                Focus::Query
            } else {
                Focus::List
            },
            query,
            filters,
            groups: Vec::new(),
            rows: Vec::new(),
            selected: 0,
            status: String::new(),
            ticket: 0,
            searching: false,
            session: None,
            picker: None,
            looked_in: Vec::new(),
        }
    }

    /// Whether the list shows recent sessions rather than search results.
    pub fn browsing(&self) -> bool {
        self.query.trim().is_empty()
    }

    /// Shows recent sessions (an empty query).
    pub fn set_recent(&mut self, sessions: Vec<SessionInfo>) {
        let n = sessions.len();
        self.groups = sessions
            .into_iter()
            .map(|info| Group {
                info,
                branch: None,
                total_hits: None,
                hits: Vec::new(),
            })
            .collect();
        self.status = format!("{n} recent session{}", plural(n));
        self.relayout();
    }

    /// Shows a search's answer, if it answers the newest search.
    pub fn set_results(&mut self, ticket: Ticket, answer: Result<Response, String>) {
        if ticket != self.ticket {
            return;
        }
        self.searching = false;
        match answer {
            Ok(r) => {
                let hits: u64 = r.sessions.iter().map(|s| s.total_hits).sum();
                let n = r.sessions.len();
                self.groups = r.sessions.into_iter().map(Group::from_hits).collect();
                self.status = if n == 0 {
                    "no matches".to_string()
                } else {
                    format!(
                        "{n}{} session{}, {hits} hit{}",
                        if r.cursor.is_some() { "+" } else { "" },
                        plural(n),
                        plural(hits as usize)
                    )
                };
            }
            Err(e) => {
                self.groups.clear();
                self.status = e;
            }
        }
        self.relayout();
    }

    /// Rebuilds the list's lines and puts the selection on a selectable one.
    fn relayout(&mut self) {
        self.rows.clear();
        for (g, group) in self.groups.iter().enumerate() {
            self.rows.push(Row::Session(g));
            for h in 0..group.hits.len() {
                self.rows.push(Row::Hit(g, h));
            }
        }
        self.selected = 0;
        if !self.selectable(0) {
            self.step(1);
        }
    }

    fn selectable(&self, i: usize) -> bool {
        match self.rows.get(i) {
            Some(Row::Hit(..)) => true,
            Some(Row::Session(g)) => self.groups[*g].hits.is_empty(),
            None => false,
        }
    }

    /// Moves the selection by `by` selectable lines (clamped at the ends).
    fn step(&mut self, by: isize) {
        let mut left = by.unsigned_abs();
        let mut i = self.selected;
        while left > 0 {
            let next = if by > 0 {
                (i + 1..self.rows.len()).find(|&j| self.selectable(j))
            } else {
                (0..i).rev().find(|&j| self.selectable(j))
            };
            match next {
                Some(j) => i = j,
                None => break,
            }
            left -= 1;
        }
        self.selected = i;
    }

    /// The selected session and hit.
    pub fn current(&self) -> Option<(&Group, Option<&Hit>)> {
        if !self.selectable(self.selected) {
            return None;
        }
        match self.rows.get(self.selected)? {
            Row::Session(g) => Some((&self.groups[*g], None)),
            Row::Hit(g, h) => Some((&self.groups[*g], self.groups[*g].hits.get(*h))),
        }
    }

    /// The query or a filter changed: a new search is due.
    pub fn next_ticket(&mut self) -> Ticket {
        self.ticket += 1;
        self.searching = !self.browsing();
        self.ticket
    }

    /// Opens a session's records, at the selected hit's record.
    pub fn open(&mut self, entries: Vec<Entry>) {
        let Some((group, hit)) = self.current() else {
            return;
        };
        let at = hit.and_then(|h| {
            entries
                .iter()
                .position(|e| e.locator == h.locator)
                .map(|i| (i, h.clone()))
        });
        self.session = Some(SessionView {
            key: group.info.key.clone(),
            title: group.info.title.clone(),
            resume: group.info.resume.clone(),
            entries,
            at,
            scroll: 0,
            seek: true,
        });
        self.focus = Focus::Session;
    }

    /// Opens a filter's choices.
    pub fn open_picker(&mut self, kind: PickerKind, projects: Vec<(String, usize)>) {
        let mut items = vec![(
            match kind {
                PickerKind::Source => "all sources".to_string(),
                PickerKind::Project => "all projects".to_string(),
            },
            None,
        )];
        match kind {
            PickerKind::Source => items.extend(
                Source::ALL
                    .iter()
                    .map(|s| (s.as_str().to_string(), Some(s.as_str().to_string()))),
            ),
            PickerKind::Project => items.extend(
                projects
                    .into_iter()
                    .map(|(cwd, n)| (format!("{cwd}  ({n})"), Some(cwd))),
            ),
        }
        let current = match kind {
            PickerKind::Source => self.filters.source.map(|s| s.as_str().to_string()),
            PickerKind::Project => self.filters.project.clone(),
        };
        let selected = items.iter().position(|(_, v)| *v == current).unwrap_or(0);
        self.picker = Some(Picker {
            kind,
            items,
            selected,
        });
        self.focus = Focus::Picker;
    }

    /// Handles one key.
    pub fn key(&mut self, k: KeyEvent) -> Effect {
        if k.kind == KeyEventKind::Release {
            return Effect::None;
        }
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c')) {
            return Effect::Quit;
        }
        if self.focus == Focus::Query && k.modifiers.contains(KeyModifiers::ALT) {
            // Esc then a key, typed faster than the terminal can tell apart
            // from Alt+key: leave the query, then the key.
            self.focus = Focus::List;
            return self.list_key(k.code);
        }
        match self.focus {
            Focus::Query => self.query_key(k.code, ctrl),
            Focus::List => self.list_key(k.code),
            Focus::Session => self.session_key(k.code),
            Focus::Picker => self.picker_key(k.code),
        }
    }

    fn query_key(&mut self, code: KeyCode, ctrl: bool) -> Effect {
        match code {
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                Effect::Search
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                Effect::Search
            }
            KeyCode::Backspace => {
                if self.query.pop().is_some() {
                    Effect::Search
                } else {
                    Effect::None
                }
            }
            KeyCode::Enter | KeyCode::Esc | KeyCode::Tab => {
                self.focus = Focus::List;
                Effect::None
            }
            KeyCode::Down => {
                self.step(1);
                Effect::None
            }
            KeyCode::Up => {
                self.step(-1);
                Effect::None
            }
            _ => Effect::None,
        }
    }

    fn list_key(&mut self, code: KeyCode) -> Effect {
        match code {
            KeyCode::Char('j') | KeyCode::Down => self.step(1),
            KeyCode::Char('k') | KeyCode::Up => self.step(-1),
            KeyCode::PageDown => self.step(10),
            KeyCode::PageUp => self.step(-10),
            KeyCode::Char('g') | KeyCode::Home => self.step(-(self.rows.len() as isize)),
            KeyCode::Char('G') | KeyCode::End => self.step(self.rows.len() as isize),
            KeyCode::Char('/') => self.focus = Focus::Query,
            KeyCode::Char('s') => return Effect::Pick(PickerKind::Source),
            KeyCode::Char('p') => return Effect::Pick(PickerKind::Project),
            KeyCode::Char('q') | KeyCode::Esc => return Effect::Quit,
            KeyCode::Char('r') => return self.resume(),
            KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right => {
                if let Some((g, h)) = self.current() {
                    return Effect::Open(g.info.key.clone(), h.map(|h| h.locator.clone()));
                }
            }
            _ => {}
        }
        Effect::None
    }

    fn session_key(&mut self, code: KeyCode) -> Effect {
        let Some(v) = self.session.as_mut() else {
            self.focus = Focus::List;
            return Effect::None;
        };
        match code {
            KeyCode::Char('j') | KeyCode::Down => v.scroll += 1,
            KeyCode::Char('k') | KeyCode::Up => v.scroll = v.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => v.scroll += 20,
            KeyCode::PageUp => v.scroll = v.scroll.saturating_sub(20),
            KeyCode::Char('g') | KeyCode::Home => v.scroll = 0,
            KeyCode::Char('G') | KeyCode::End => v.scroll = usize::MAX,
            KeyCode::Char('r') => return self.resume(),
            KeyCode::Char('q') | KeyCode::Esc | KeyCode::Backspace | KeyCode::Char('h') => {
                self.session = None;
                self.focus = Focus::List;
            }
            KeyCode::Left => {
                self.session = None;
                self.focus = Focus::List;
            }
            _ => {}
        }
        Effect::None
    }

    fn picker_key(&mut self, code: KeyCode) -> Effect {
        let Some(p) = self.picker.as_mut() else {
            self.focus = Focus::List;
            return Effect::None;
        };
        match code {
            KeyCode::Char('j') | KeyCode::Down => {
                p.selected = (p.selected + 1).min(p.items.len().saturating_sub(1))
            }
            KeyCode::Char('k') | KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Enter => {
                let value = p.items.get(p.selected).and_then(|(_, v)| v.clone());
                match p.kind {
                    PickerKind::Source => {
                        self.filters.source = value.as_deref().and_then(Source::parse)
                    }
                    PickerKind::Project => self.filters.project = value,
                }
                self.picker = None;
                self.focus = Focus::List;
                return Effect::Search;
            }
            KeyCode::Esc | KeyCode::Char('q') => {
                self.picker = None;
                self.focus = Focus::List;
            }
            _ => {}
        }
        Effect::None
    }

    /// The resume command of the session in view (or selected).
    fn resume(&mut self) -> Effect {
        let cmd = match &self.session {
            Some(v) => v.resume.clone(),
            None => self.current().and_then(|(g, _)| g.info.resume.clone()),
        };
        match cmd {
            Some(c) => Effect::Resume(c),
            None => {
                self.status = "this session has no resume command".into();
                Effect::None
            }
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recall_core::model::Role;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn hit(id: &str) -> Hit {
        Hit {
            role: Role::User,
            ts_ms: 0,
            seq: None,
            superseded: false,
            truncated: false,
            subagent: false,
            snippet: "a zebrafinch".into(),
            snippet_offset_bytes: 0,
            ranges: vec![[2, 12]],
            locator: Locator::ExternalRecordId {
                record_id: id.into(),
            },
            host: None,
        }
    }

    fn group(key: &str, hits: Vec<Hit>) -> Group {
        Group {
            info: SessionInfo {
                key: key.into(),
                source: Source::Pi,
                title: None,
                cwd: None,
                updated_ms: None,
                messages: 0,
                resume: Some(format!("pi --session {key}")),
            },
            branch: None,
            total_hits: Some(hits.len() as u64),
            hits,
        }
    }

    fn app_with(groups: Vec<Group>) -> App {
        let mut a = App::new("zebrafinch".into(), Filters::default());
        a.groups = groups;
        a.relayout();
        a
    }

    #[test]
    fn j_and_k_move_over_hits_and_skip_headings() {
        let mut a = app_with(vec![
            group("pi:a", vec![hit("1"), hit("2")]),
            group("pi:b", vec![hit("3")]),
        ]);
        assert_eq!(
            a.rows[a.selected],
            Row::Hit(0, 0),
            "the first hit, not a heading"
        );
        a.key(key(KeyCode::Char('j')));
        assert_eq!(a.rows[a.selected], Row::Hit(0, 1));
        a.key(key(KeyCode::Down));
        assert_eq!(
            a.rows[a.selected],
            Row::Hit(1, 0),
            "over the heading of pi:b"
        );
        a.key(key(KeyCode::Char('j')));
        assert_eq!(a.rows[a.selected], Row::Hit(1, 0), "stays at the end");
        a.key(key(KeyCode::Char('k')));
        a.key(key(KeyCode::Up));
        assert_eq!(a.rows[a.selected], Row::Hit(0, 0));
        assert_eq!(
            a.key(key(KeyCode::Enter)),
            Effect::Open(
                "pi:a".into(),
                Some(Locator::ExternalRecordId {
                    record_id: "1".into()
                })
            )
        );
    }

    #[test]
    fn typing_edits_the_query_and_slash_returns_to_it() {
        let mut a = App::new(String::new(), Filters::default());
        assert_eq!(a.focus, Focus::Query);
        assert_eq!(a.key(key(KeyCode::Char('j'))), Effect::Search, "j is typed");
        assert_eq!(a.key(key(KeyCode::Char('k'))), Effect::Search);
        assert_eq!(a.query, "jk");
        assert_eq!(a.key(key(KeyCode::Backspace)), Effect::Search);
        assert_eq!(a.query, "j");
        a.key(key(KeyCode::Enter));
        assert_eq!(a.focus, Focus::List);
        assert_eq!(a.key(key(KeyCode::Char('/'))), Effect::None);
        assert_eq!(a.focus, Focus::Query);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(a.key(ctrl_c), Effect::Quit);
    }

    #[test]
    fn a_late_answer_to_an_older_query_is_dropped() {
        let mut a = App::new("zebra".into(), Filters::default());
        let old = a.next_ticket();
        let new = a.next_ticket();
        a.set_results(old, Err("old".into()));
        assert!(a.searching && a.status.is_empty());
        a.set_results(new, Err("bad query".into()));
        assert!(!a.searching);
        assert_eq!(a.status, "bad query");
    }

    #[test]
    fn r_resumes_the_selected_session_or_says_it_cannot() {
        let mut a = app_with(vec![group("pi:a", vec![hit("1")])]);
        assert_eq!(
            a.key(key(KeyCode::Char('r'))),
            Effect::Resume("pi --session pi:a".into())
        );
        a.groups[0].info.resume = None;
        assert_eq!(a.key(key(KeyCode::Char('r'))), Effect::None);
        assert!(a.status.contains("no resume command"));
    }

    #[test]
    fn opening_finds_the_hit_record_and_pickers_set_filters() {
        let mut a = app_with(vec![group("pi:a", vec![hit("1"), hit("2")])]);
        a.key(key(KeyCode::Char('j')));
        let entry = |id: &str| Entry {
            role: Role::User,
            ts_ms: 0,
            superseded: false,
            subagent: false,
            text: "x".into(),
            locator: Locator::ExternalRecordId {
                record_id: id.into(),
            },
        };
        a.open(vec![entry("0"), entry("1"), entry("2")]);
        assert_eq!(a.focus, Focus::Session);
        assert_eq!(a.session.as_ref().unwrap().at.as_ref().unwrap().0, 2);
        a.key(key(KeyCode::Esc));
        assert_eq!((a.focus, a.session.is_none()), (Focus::List, true));
        a.open_picker(PickerKind::Source, Vec::new());
        a.key(key(KeyCode::Down));
        assert_eq!(a.key(key(KeyCode::Enter)), Effect::Search);
        assert_eq!(a.filters.source, Some(Source::ALL[0]));
        a.open_picker(PickerKind::Project, vec![("/home/u/code/alpha".into(), 2)]);
        a.key(key(KeyCode::Char('j')));
        a.key(key(KeyCode::Enter));
        assert_eq!(a.filters.project.as_deref(), Some("/home/u/code/alpha"));
    }
}
