//! The paged tools, `session_search` and `session_list`, as plain functions
//! over one call ([`Call`]): typed arguments in, a budgeted JSON answer out
//! (or a `code: message` error). Shared pieces every tool's answer carries
//! live here too: the `index` block, the empty answer's explanation, the
//! clock and the deadline.

use super::args::{ListArgs, SearchArgs, Shape, Sort};
use super::catalog::ReadOnlyCatalog;
use super::scope::View;
use crate::engine::answer::{self, fit_or_err, longest};
use crate::engine::budget::Truncated;
use crate::store::Store;
use recall_core::query::{QueryError, Request};
use recall_core::search::{search, Budgets, SearchEnv};
use recall_core::session::sessions::{sessions, SessionsRequest};
use recall_core::time::Clock;
use recall_core::Response;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Largest page of any paged tool.
pub const MAX_LIMIT: u64 = 100;
/// Default page.
pub const DEFAULT_LIMIT: u64 = 20;
/// The cooperative deadline of one call.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// When the current call must give up.
#[derive(Clone, Copy, Debug)]
pub struct Deadline(pub Instant);

impl Deadline {
    /// A deadline [`DEADLINE`] from now.
    pub fn start() -> Deadline {
        Deadline(Instant::now() + DEADLINE)
    }

    fn remaining_ms(&self) -> u64 {
        self.0.saturating_duration_since(Instant::now()).as_millis() as u64
    }

    /// `Err` once the deadline has passed.
    pub fn check(&self) -> Result<(), String> {
        if Instant::now() >= self.0 {
            Err("deadline: the call ran out of its 30 s; ask something narrower".into())
        } else {
            Ok(())
        }
    }
}

/// The host's clock for relative times (`7d`, `yesterday`): the one clock
/// of the host (wall time or `--now`, the local zone).
pub fn host_clock() -> Clock {
    crate::clock::host_clock()
}

/// One tool call: the store, what the call may see, its deadline and clock,
/// and the daemon to ask first when one serves the same store.
pub struct Call<'a> {
    /// The store.
    pub store: &'a Store,
    /// The authorized view.
    pub view: &'a View,
    /// The deadline.
    pub deadline: Deadline,
    /// The caller's clock.
    pub clock: Clock,
    /// A live `recall serve` of the same store.
    pub daemon: Option<SocketAddr>,
    /// The agents' source folders of this machine: all Deep Search reads.
    pub sources: &'a crate::deep::Roots,
}

/// `code: message` of a core error.
pub fn core_err(e: QueryError) -> String {
    format!("{}: {}", e.code, e.message)
}

/// The `index` block: which revision answered, when it was published, and
/// whether the daemon or the store answered.
pub fn index_info(view: &View, revision: u64, via: &str) -> Value {
    json!({
        "revision": revision,
        "updated_ms": view.all.updated_at_ms,
        "via": via,
    })
}

/// Why an answer is empty: the scope, how many indexed sessions lie outside
/// it, and how to widen it.
pub fn empty_note(view: &View) -> Value {
    let in_scope = view.visible.sessions.len();
    let outside = view.all.sessions.len() - in_scope - view.excluded.len();
    let project = view
        .project
        .clone()
        .unwrap_or_else(|| "(every project)".into());
    let hint = if view.all.sessions.is_empty() {
        "the index holds no sessions yet: run `recall index` (or keep `recall serve` running)"
            .to_string()
    } else if view.project.is_some() && outside > 0 {
        format!(
            "nothing matched among the {in_scope} indexed sessions of {project}; {outside} indexed sessions lie outside this project: restart the server with --all-projects to search them"
        )
    } else {
        format!("nothing matched among the {in_scope} indexed sessions this server may read")
    };
    json!({
        "project": project,
        "sessions_in_scope": in_scope,
        "sessions_outside_scope": outside,
        "own_sessions_hidden": view.excluded.len(),
        "hint": hint,
    })
}

/// A paged tool's `limit`: 1–[`MAX_LIMIT`], [`DEFAULT_LIMIT`] when absent.
pub(super) fn limit(n: Option<u64>) -> Result<u64, String> {
    match n {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(format!(
            "invalid_param: limit must be 1–{MAX_LIMIT}, not {n}"
        )),
    }
}

/// A list argument as the comma-separated parameter the core parses.
pub(super) fn join(v: &Option<Vec<String>>) -> Option<String> {
    v.as_ref().map(|v| v.join(","))
}

fn search_request(a: &SearchArgs, view: &View, clock: &Clock, n: u64) -> Request {
    let mut r = Request::new(&a.query);
    r.source = join(&a.sources);
    r.role = join(&a.roles);
    r.model = join(&a.models);
    r.sort = a.sort.map(|s| match s {
        Sort::Newest => "newest".to_string(),
        Sort::Relevance => "relevance".to_string(),
    });
    r.since = a.since.clone();
    r.until = a.until.clone();
    r.cwd = a.cwd.clone();
    r.limit = Some(n.to_string());
    r.cursor = a.cursor.clone();
    let _ = view;
    r.with_default_clock(*clock)
}

/// Runs `r` through the daemon when one serves the store (filtered to the
/// view afterwards), else over the view's read-only catalog.
fn run_search(c: &Call, r: &Request) -> Result<(Response, &'static str), String> {
    if let Some(addr) = c.daemon {
        if let Some(mut resp) = crate::http::client::search(addr, r) {
            resp.sessions
                .retain(|s| c.view.visible.sessions.contains_key(&s.session_key));
            return Ok((resp, "daemon"));
        }
    }
    let catalog = ReadOnlyCatalog {
        store: c.store,
        view: c.view,
    };
    let started = Instant::now();
    let clock = move || started.elapsed().as_millis() as u64;
    let env = SearchEnv {
        catalog: &catalog,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets {
            scan_ms: c.deadline.remaining_ms(),
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        },
        building: false,
    };
    let resp = r.parse().and_then(|q| search(&q, &env)).map_err(core_err)?;
    Ok((resp, "store"))
}

/// `session_search`: one budgeted page of grouped hits over the view.
pub fn session_search(c: &Call, a: &SearchArgs) -> Result<Value, String> {
    let n = limit(a.limit)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let r = search_request(a, c.view, &c.clock, n);
    let (resp, via) = run_search(c, &r)?;
    // The cursor after the last kept session: the core's own, by asking
    // again for just that many sessions when the budget keeps fewer.
    let mut cursors: std::collections::HashMap<usize, Option<String>> = Default::default();
    cursors.insert(resp.sessions.len(), resp.cursor.clone());
    let cursor_for = |k: usize| -> Option<String> {
        if let Some(cur) = cursors.get(&k) {
            return cur.clone();
        }
        let mut again = r.clone();
        again.limit = Some(k.max(1).to_string());
        let cur = run_search(c, &again).ok().and_then(|(x, _)| x.cursor);
        cursors.insert(k, cur.clone());
        cur
    };
    let index = index_info(c.view, resp.revision, via);
    answer::search_page(&resp, shape, &index, || empty_note(c.view), cursor_for)
}

/// `session_list`: one budgeted page of the view's sessions, newest first
/// (the core's session list and its keyset cursor).
pub fn session_list(c: &Call, a: &ListArgs) -> Result<Value, String> {
    let n = limit(a.limit)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let f = shape.fields;
    let sources = join(&a.sources);
    let models = join(&a.models);
    let now = c.clock.now_ms.to_string();
    let offset = c.clock.utc_offset_min.to_string();
    let run = |k: u64| {
        let k = k.to_string();
        let pairs = [
            ("source", sources.as_deref()),
            ("model", models.as_deref()),
            ("cwd", a.cwd.as_deref()),
            ("since", a.since.as_deref()),
            ("until", a.until.as_deref()),
            ("cursor", a.cursor.as_deref()),
            ("limit", Some(k.as_str())),
            ("now_ms", Some(now.as_str())),
            ("utc_offset_min", Some(offset.as_str())),
        ];
        let req =
            SessionsRequest::from_pairs(pairs.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))))
                .map_err(core_err)?;
        sessions(&c.view.visible, &req).map_err(core_err)
    };
    let page = run(n)?;
    let items = page.sessions.len();
    let text = longest(
        page.sessions
            .iter()
            .map(|s| s.summary.title.as_deref().unwrap_or("")),
    );
    let index = index_info(c.view, c.view.all.revision, "store");
    fit_or_err(shape, items, 0, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let rows: Vec<Value> = page
            .sessions
            .iter()
            .take(cut.items)
            .map(|row| answer::list_row(&row.summary, row.children, f, cut.text, &mut t))
            .collect();
        let cursor = if cut.items == items {
            page.cursor.clone()
        } else {
            run(cut.items as u64).ok().and_then(|p| p.cursor)
        };
        let mut v = json!({"sessions": rows, "total": page.total, "index": index});
        if let Some(cur) = cursor {
            v["cursor"] = json!(cur);
        }
        if t.any() {
            v["truncated"] = json!(t);
        }
        if items == 0 {
            v["empty"] = empty_note(c.view);
        }
        v
    })
}
