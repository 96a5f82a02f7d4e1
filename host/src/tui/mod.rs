//! `recall tui`: an interactive search over the store (ratatui with the
//! crossterm backend). Search as you type, results grouped per session with
//! highlighted hits, Enter reads the session at the hit, `r` prints the
//! session's resume command and exits.
//!
//! The screen is drawn on the terminal itself (`/dev/tty`; stderr where
//! there is none), never on stdout: stdout carries only the chosen resume
//! command, so `$(recall tui)` runs it. This module owns the terminal's
//! lifecycle (raw mode and the alternate screen, restored on every exit and
//! on a panic) and the event loop; [`app`] decides what keys do, [`view`]
//! draws, [`data`] reads the store.

pub mod app;
pub mod data;
pub mod view;

use app::{App, Effect};
use data::{Data, Filters, Searcher};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{execute, terminal};
use ratatui::Terminal;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

/// How long typing must pause before the query is searched.
const DEBOUNCE: Duration = Duration::from_millis(60);
/// Sessions listed for an empty query.
const RECENT: usize = 200;

/// What `recall tui` starts with.
pub struct Options {
    /// The initial query (may be empty: recent sessions are listed).
    pub query: String,
    /// The initial filters.
    pub filters: Filters,
    /// Where transcripts are looked for, one line per source root (shown
    /// while nothing is indexed).
    pub looked_in: Vec<String>,
}

/// The terminal the UI draws on.
type Screen = Terminal<CrosstermBackend<Box<dyn Write + Send>>>;

/// The controlling terminal for drawing, so stdout stays free.
fn tty() -> Box<dyn Write + Send> {
    #[cfg(unix)]
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        return Box::new(f);
    }
    Box::new(io::stderr())
}

/// Raw mode and the alternate screen, undone on drop (and on a panic).
struct Session;

impl Session {
    fn start(out: &mut impl Write) -> io::Result<Session> {
        terminal::enable_raw_mode()?;
        let s = Session;
        execute!(out, terminal::EnterAlternateScreen)?;
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            hook(info);
        }));
        Ok(s)
    }
}

fn restore() {
    let _ = terminal::disable_raw_mode();
    let mut out = tty();
    let _ = execute!(
        out,
        terminal::LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

impl Drop for Session {
    fn drop(&mut self) {
        restore();
    }
}

/// Runs the UI until the user quits (`None`) or picks a session to resume
/// (its resume command).
pub fn run(data: Data, opts: Options) -> anyhow::Result<Option<String>> {
    let data = Arc::new(data);
    let mut out = tty();
    let session = Session::start(&mut out)?;
    let mut screen: Screen = Terminal::new(CrosstermBackend::new(out))?;
    let result = event_loop(&mut screen, data, opts);
    drop(screen);
    drop(session);
    result
}

fn event_loop(
    screen: &mut Screen,
    data: Arc<Data>,
    opts: Options,
) -> anyhow::Result<Option<String>> {
    let searcher = Searcher::start(data.clone());
    let mut app = App::new(opts.query, opts.filters);
    app.looked_in = opts.looked_in;
    // A search is due at this instant (debounced typing), if any.
    let mut due = Some(std::time::Instant::now());
    loop {
        if let Some(at) = due {
            if at <= std::time::Instant::now() {
                due = None;
                search(&mut app, &data, &searcher);
            }
        }
        while let Some((ticket, answer)) = searcher.try_answer() {
            app.set_results(ticket, answer);
        }
        screen.draw(|f| view::draw(f, &mut app))?;
        let wait = if app.searching || due.is_some() {
            Duration::from_millis(15)
        } else {
            Duration::from_millis(250)
        };
        if !event::poll(wait)? {
            continue;
        }
        let Event::Key(k) = event::read()? else {
            continue; // a resize redraws on the next turn
        };
        match app.key(k) {
            Effect::None => {}
            Effect::Search => due = Some(std::time::Instant::now() + DEBOUNCE),
            Effect::Quit => return Ok(None),
            Effect::Resume(cmd) => return Ok(Some(cmd)),
            Effect::Open(key, _) => match data.entries(&key) {
                Ok(entries) => app.open(entries),
                Err(e) => app.status = e,
            },
            Effect::Pick(kind) => {
                let projects = match kind {
                    app::PickerKind::Project => data.projects().unwrap_or_else(|e| {
                        app.status = e;
                        Vec::new()
                    }),
                    app::PickerKind::Source => Vec::new(),
                };
                app.open_picker(kind, projects);
            }
        }
    }
}

/// Starts the search the query and filters ask for (or lists recent
/// sessions for an empty query).
fn search(app: &mut App, data: &Data, searcher: &Searcher) {
    let ticket = app.next_ticket();
    if app.browsing() {
        match data.recent(&app.filters, RECENT) {
            Ok(list) => app.set_recent(list),
            Err(e) => app.status = e,
        }
    } else {
        searcher.submit(ticket, app.filters.request(app.query.trim()));
    }
}
