//! The six MCP tools as plain functions over one call's [`View`]: each takes
//! its typed arguments and returns JSON, or a clear error message. Output is
//! bounded (≤ 100 results, snippets ≤ 240 code points); no cursor or limit
//! is exposed to the model.

use super::catalog::ReadOnlyCatalog;
use super::scope::View;
use crate::lineage;
use crate::store::Store;
use recall_core::model::{Locator, ManifestEntry};
use recall_core::query::Request;
use recall_core::search::{search, Budgets, SearchEnv};
use recall_core::session::{
    self, list_sessions, Address, Entry, SessionListRequest, SessionSearchRequest, WindowRequest,
};
use recall_core::PreparedShard;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Most results of any tool.
pub const MAX_RESULTS: usize = 100;
/// Longest snippet (and neighbour text in a window), in code points.
pub const MAX_SNIPPET: usize = 240;
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

    fn check(&self) -> Result<(), String> {
        if Instant::now() >= self.0 {
            Err("deadline: the call ran out of its 30 s; ask something narrower".into())
        } else {
            Ok(())
        }
    }
}

/// `session_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in one message ("quoted phrases" keep their spaces).
    pub query: String,
    /// Only these agents: claude-code, codex, kimi, pi, intendant.
    #[serde(default)]
    pub sources: Option<Vec<String>>,
    /// Only messages at or after this time (epoch ms or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only messages at or before this time (epoch ms or RFC 3339).
    #[serde(default)]
    pub until: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `session_list` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only sessions active at or after this time (epoch ms or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only sessions that started at or before this time (epoch ms or RFC 3339).
    #[serde(default)]
    pub until: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Only these agents: claude-code, codex, kimi, pi, intendant.
    #[serde(default)]
    pub sources: Option<Vec<String>>,
}

/// `session_trace` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
}

/// `session_event_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventSearchArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
    /// Words that must all occur in one message.
    pub query: String,
}

/// `session_event_read` / `session_event_trace` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
    /// The record index (as in search results); give this or `locator`.
    #[serde(default)]
    pub index: Option<u64>,
    /// The record's locator object, as search results give it.
    #[serde(default)]
    pub locator: Option<Value>,
    /// Records before it (default 5, at most 50); `session_event_read` only.
    #[serde(default)]
    pub before: Option<u64>,
    /// Records after it (default 5, at most 50); `session_event_read` only.
    #[serde(default)]
    pub after: Option<u64>,
}

fn cut(text: &str) -> (String, bool) {
    match text.char_indices().nth(MAX_SNIPPET) {
        Some((i, _)) => (text[..i].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// Caps a snippet at [`MAX_SNIPPET`] code points, clipping its highlight
/// ranges (byte offsets into the record, the snippet starting at `offset`).
fn cap_snippet(text: &str, offset: u64, ranges: &[[u64; 2]]) -> (String, Vec<[u64; 2]>) {
    let (s, _) = cut(text);
    let end = offset + s.len() as u64;
    let ranges = ranges
        .iter()
        .filter(|r| r[0] < end)
        .map(|r| [r[0], r[1].min(end)])
        .collect();
    (s, ranges)
}

fn sources_param(s: &Option<Vec<String>>) -> Option<String> {
    s.as_ref().map(|v| v.join(","))
}

fn summary(key: &str, e: &ManifestEntry) -> Value {
    json!({
        "session": key,
        "source": e.meta.source,
        "title": e.meta.title,
        "cwd": e.meta.cwd,
        "created_ms": e.meta.created_ms,
        "updated_ms": e.meta.updated_ms,
        "messages": e.meta.messages,
    })
}

/// `session_search`: grouped hits over the visible sessions.
pub fn session_search(
    store: &Store,
    view: &View,
    a: &SearchArgs,
    deadline: Deadline,
) -> Result<Value, String> {
    let mut r = Request::new(&a.query);
    r.source = sources_param(&a.sources);
    r.since = a.since.clone();
    r.until = a.until.clone();
    r.cwd = a.cwd.clone();
    r.limit = Some(MAX_RESULTS.to_string());
    let catalog = ReadOnlyCatalog {
        store,
        manifest: view.visible.clone(),
    };
    let started = Instant::now();
    let clock = move || started.elapsed().as_millis() as u64;
    let env = SearchEnv {
        catalog: &catalog,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets {
            scan_ms: deadline.remaining_ms(),
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        },
        building: false,
    };
    let resp = r
        .parse()
        .and_then(|q| search(&q, &env))
        .map_err(|e| format!("{}: {}", e.code, e.message))?;
    let sessions: Vec<Value> = resp
        .sessions
        .iter()
        .take(MAX_RESULTS)
        .map(|s| {
            let hits: Vec<Value> = s
                .hits
                .iter()
                .map(|h| {
                    let (snippet, ranges) =
                        cap_snippet(&h.snippet, h.snippet_offset_bytes, &h.ranges);
                    json!({
                        "role": h.role,
                        "ts_ms": h.ts_ms,
                        "superseded": h.superseded,
                        "subagent": h.subagent,
                        "snippet": snippet,
                        "snippet_offset_bytes": h.snippet_offset_bytes,
                        "ranges": ranges,
                        "locator": h.locator,
                    })
                })
                .collect();
            json!({
                "session": s.session_key,
                "source": s.source,
                "title": s.title,
                "cwd": s.cwd,
                "best_ts_ms": s.best_ts_ms,
                "total_hits": s.total_hits,
                "hits": hits,
            })
        })
        .collect();
    Ok(json!({
        "sessions": sessions,
        "more": resp.cursor.is_some(),
        "partial": resp.partial_reason.is_some(),
    }))
}

/// `session_list`: visible sessions, newest first, at most 100
/// (`recall_core::session::list_sessions`).
pub fn session_list(view: &View, a: &ListArgs) -> Result<Value, String> {
    let sources = sources_param(&a.sources);
    let pairs = [
        ("source", sources.as_deref()),
        ("cwd", a.cwd.as_deref()),
        ("since", a.since.as_deref()),
        ("until", a.until.as_deref()),
    ];
    let req =
        SessionListRequest::from_pairs(pairs.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))))
            .map_err(|e| format!("{}: {}", e.code, e.message))?;
    let rows =
        list_sessions(&view.visible, &req).map_err(|e| format!("{}: {}", e.code, e.message))?;
    let more = rows.len() > MAX_RESULTS;
    let sessions: Vec<Value> = rows
        .into_iter()
        .take(MAX_RESULTS)
        .map(|(k, e)| summary(k, e))
        .collect();
    Ok(json!({"sessions": sessions, "more": more}))
}

/// `session_trace`: the lineage of a visible session; ancestors and
/// descendants outside the view become `{outside_scope: true}`.
pub fn session_trace(view: &View, a: &SessionArgs) -> Result<Value, String> {
    let key = view.resolve(&a.session)?;
    let mut ancestors = Value::Array(lineage::ancestors(&view.all, &key));
    let mut descendants = Value::Array(lineage::descendants(&view.all, &key));
    view.redact(&mut ancestors);
    view.redact(&mut descendants);
    Ok(json!({"session": key, "ancestors": ancestors, "descendants": descendants}))
}

fn load(
    store: &Store,
    view: &View,
    session: &str,
    deadline: Deadline,
) -> Result<(String, String, PreparedShard), String> {
    let key = view.resolve(session)?;
    deadline.check()?;
    let entry = view
        .visible
        .sessions
        .get(&key)
        .ok_or_else(|| "session_not_found".to_string())?;
    let catalog = ReadOnlyCatalog {
        store,
        manifest: view.visible.clone(),
    };
    let p = catalog.prepared(entry, true)?;
    Ok((key, entry.generation_file.clone(), p))
}

fn address(a: &EventArgs) -> Result<Address, String> {
    match (a.index, &a.locator) {
        (Some(i), None) => Ok(Address::Index(i)),
        (None, Some(l)) => {
            let parsed: Result<Locator, _> = match l {
                Value::String(s) => serde_json::from_str(s),
                other => serde_json::from_value(other.clone()),
            };
            parsed
                .map(Address::Locator)
                .map_err(|_| "invalid_param: locator is not a locator object".to_string())
        }
        _ => Err("invalid_param: give exactly one of index and locator".into()),
    }
}

/// `session_event_search`: hits inside one session, in record order.
pub fn session_event_search(
    store: &Store,
    view: &View,
    a: &EventSearchArgs,
    deadline: Deadline,
) -> Result<Value, String> {
    let (key, generation, p) = load(store, view, &a.session, deadline)?;
    let req = SessionSearchRequest {
        q: a.query.clone(),
        limit: Some(MAX_RESULTS as u64),
        ..SessionSearchRequest::default()
    };
    let r = session::search_session(&p, &generation, &req)
        .map_err(|e| format!("{}: {}", e.code, e.message))?;
    let hits: Vec<Value> = r
        .hits
        .iter()
        .map(|h| {
            let (snippet, ranges) = cap_snippet(&h.snippet, h.snippet_offset_bytes, &h.ranges);
            json!({
                "index": h.index,
                "role": h.role,
                "ts_ms": h.ts_ms,
                "state": h.state,
                "subagent": h.subagent,
                "snippet": snippet,
                "snippet_offset_bytes": h.snippet_offset_bytes,
                "ranges": ranges,
            })
        })
        .collect();
    Ok(json!({
        "session": key,
        "total_hits": r.total_hits,
        "hits": hits,
        "more": r.cursor.is_some(),
    }))
}

fn entry_json(e: &Entry, full: bool) -> Value {
    let (text, was_cut) = if full {
        (e.text.clone(), false)
    } else {
        cut(&e.text)
    };
    json!({
        "index": e.index,
        "role": e.role,
        "ts_ms": e.ts_ms,
        "state": e.state,
        "subagent": e.subagent,
        "truncated": e.truncated,
        "text": text,
        "cut": was_cut,
    })
}

/// `session_event_read`: one record in full with its neighbours (their
/// texts capped at 240 code points).
pub fn session_event_read(
    store: &Store,
    view: &View,
    a: &EventArgs,
    deadline: Deadline,
) -> Result<Value, String> {
    let at = address(a)?;
    let (key, _, p) = load(store, view, &a.session, deadline)?;
    let w = session::window(
        &p,
        &WindowRequest {
            at,
            before: a.before,
            after: a.after,
        },
    )
    .map_err(|e| format!("{}: {}", e.code, e.message))?;
    let entries: Vec<Value> = w
        .entries
        .iter()
        .map(|e| entry_json(e, e.index == w.center))
        .collect();
    Ok(json!({"session": key, "center": w.center, "records": entries}))
}

/// `session_event_trace`: what superseded a record and what stands in its place.
pub fn session_event_trace(
    store: &Store,
    view: &View,
    a: &EventArgs,
    deadline: Deadline,
) -> Result<Value, String> {
    let at = address(a)?;
    let (key, _, p) = load(store, view, &a.session, deadline)?;
    let t = session::trace_record(&p, &at).map_err(|e| format!("{}: {}", e.code, e.message))?;
    let replaced: Vec<Value> = t
        .replaced_by
        .iter()
        .take(MAX_RESULTS)
        .map(|e| entry_json(e, false))
        .collect();
    Ok(json!({
        "session": key,
        "record": entry_json(&t.record, false),
        "superseded_by": t.superseded_by,
        "replaced_by": replaced,
        "origin": t.origin,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_capped_in_code_points() {
        let text = "é".repeat(300);
        let (s, r) = cap_snippet(&text, 10, &[[10, 20], [600, 610]]);
        assert_eq!(s.chars().count(), MAX_SNIPPET);
        assert_eq!(r, vec![[10, 20]]);
        let (s, r) = cap_snippet("short", 0, &[[0, 5]]);
        assert_eq!((s.as_str(), r), ("short", vec![[0, 5]]));
    }
}
