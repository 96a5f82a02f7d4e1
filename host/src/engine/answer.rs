//! Answers an agent reads: a search page, a session list page and a page of
//! one session's records, rendered as JSON at a detail level ([`Fields`])
//! and fitted to a token budget ([`super::budget`]). The MCP tools and the
//! CLI's `--max-tokens` / `--fields` both render here, so an agent that
//! shells out gets the shapes an MCP client gets.
//!
//! Each renderer takes what the answer needs to continue (a cursor for the
//! first `k` items, the offset after them) as a closure or a number, and
//! never fetches anything itself.

use super::budget::{self, clip, Cut, Fields, Truncated};
use recall_core::response::{Hit, SessionHits};
use recall_core::session::{SessionSummary, SessionViewResponse};
use recall_core::Response;
use serde_json::{json, Value};

/// How an answer is shaped: its budget in tokens (`None` = the default)
/// and its detail level.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    /// Most tokens the answer may take.
    pub max_tokens: Option<u64>,
    /// Detail level.
    pub fields: Fields,
}

/// The longest of `texts`, in characters.
pub fn longest<'a>(texts: impl Iterator<Item = &'a str>) -> usize {
    texts.map(|s| s.chars().count()).max().unwrap_or(0)
}

/// Fits `render` in the budget of `shape`, or says (`invalid_param: …`)
/// that the budget is outside its range or too small for one result.
pub fn fit_or_err(
    shape: Shape,
    items: usize,
    hits: usize,
    text: usize,
    render: impl FnMut(Cut) -> Value,
) -> Result<Value, String> {
    let tokens =
        budget::check_tokens(shape.max_tokens).map_err(|m| format!("invalid_param: {m}"))?;
    budget::fit(budget::max_chars(tokens), items, hits, text, render).ok_or_else(|| {
        format!("invalid_param: max_tokens {tokens} is too small for even one result; ask for more")
    })
}

fn hit_json(key: &str, h: &Hit, f: Fields, text: usize, t: &mut Truncated) -> Value {
    let (snippet, cut) = clip(&h.snippet, text);
    t.chars += cut;
    if f == Fields::Minimal {
        return json!({"snippet": snippet});
    }
    let end = h.snippet_offset_bytes + snippet.len() as u64;
    let ranges: Vec<[u64; 2]> = h
        .ranges
        .iter()
        .filter(|r| r[0] < end)
        .map(|r| [r[0], r[1].min(end)])
        .collect();
    let around = h.ranges.first().map_or(h.snippet_offset_bytes, |r| r[0]);
    let mut v = json!({
        "role": h.role,
        "ts_ms": h.ts_ms,
        "snippet": snippet,
        "locator": h.locator,
        "read": {"session": key, "locator": h.locator, "around": around},
    });
    if h.superseded {
        v["superseded"] = json!(true);
    }
    if h.subagent {
        v["subagent"] = json!(true);
    }
    if f == Fields::Full {
        v["snippet_offset_bytes"] = json!(h.snippet_offset_bytes);
        v["ranges"] = json!(ranges);
        v["seq"] = json!(h.seq);
        v["truncated"] = json!(h.truncated);
    }
    v
}

fn session_json(s: &SessionHits, f: Fields, c: Cut, t: &mut Truncated) -> Value {
    let per = if f == Fields::Minimal {
        c.hits.min(1)
    } else {
        c.hits
    };
    t.hits += s.hits.len().saturating_sub(per) as u64;
    let hits: Vec<Value> = s
        .hits
        .iter()
        .take(per)
        .map(|h| hit_json(&s.session_key, h, f, c.text, t))
        .collect();
    let (title, cut) = clip(s.title.as_deref().unwrap_or(""), c.text.max(80));
    t.chars += cut;
    let mut v = json!({
        "session": s.session_key,
        "title": title,
        "best_ts_ms": s.best_ts_ms,
        "hits": hits,
    });
    if f != Fields::Minimal {
        v["source"] = json!(s.source);
        v["cwd"] = json!(s.cwd);
        v["total_hits"] = json!(s.total_hits);
        if let Some(r) = &s.relevance {
            v["relevance"] = json!(r.score);
        }
    }
    if f == Fields::Full {
        v["session_id"] = json!(s.session_id);
        v["branch"] = json!(s.branch);
        v["updated_ms"] = json!(s.updated_ms);
        v["messages"] = json!(s.messages);
        v["source_gone"] = json!(s.source_gone);
    }
    v
}

/// One budgeted page of a search answer: sessions with their hits, the
/// cursor after the last session kept (`cursor_for(k)`: the core's cursor
/// after the first `k` sessions), `truncated`, `partial`, the `index`
/// block, and `empty` (why nothing matched) when no session did.
pub fn search_page(
    resp: &Response,
    shape: Shape,
    index: &Value,
    empty: impl Fn() -> Value,
    mut cursor_for: impl FnMut(usize) -> Option<String>,
) -> Result<Value, String> {
    let f = shape.fields;
    let items = resp.sessions.len();
    let hits = resp
        .sessions
        .iter()
        .map(|s| s.hits.len())
        .max()
        .unwrap_or(0);
    let text = longest(
        resp.sessions
            .iter()
            .flat_map(|s| s.hits.iter().map(|h| h.snippet.as_str())),
    );
    let partial = resp.partial_reason.is_some();
    fit_or_err(shape, items, hits, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let sessions: Vec<Value> = resp
            .sessions
            .iter()
            .take(cut.items)
            .map(|s| session_json(s, f, cut, &mut t))
            .collect();
        let mut v = json!({"sessions": sessions, "index": index});
        if let Some(cur) = cursor_for(cut.items) {
            v["cursor"] = json!(cur);
        }
        if t.any() {
            v["truncated"] = json!(t);
        }
        if partial {
            v["partial"] = json!(true);
        }
        if items == 0 {
            v["empty"] = empty();
        }
        v
    })
}

/// One session-list row at detail `f`, its title clipped to `text`.
pub fn list_row(
    s: &SessionSummary,
    children: u64,
    f: Fields,
    text: usize,
    t: &mut Truncated,
) -> Value {
    let (title, chars) = clip(s.title.as_deref().unwrap_or(""), text);
    t.chars += chars;
    let mut v = json!({
        "session": s.session_key,
        "title": title,
        "created_ms": s.created_ms,
        "updated_ms": s.updated_ms,
    });
    if f != Fields::Minimal {
        v["source"] = json!(s.source);
        v["cwd"] = json!(s.cwd);
        v["messages"] = json!(s.messages);
    }
    if f == Fields::Full {
        v["session_id"] = json!(s.session_id);
        v["branch"] = json!(s.branch);
        v["models"] = json!(s.models);
        v["records"] = json!(s.records);
        v["children"] = json!(children);
    }
    v
}

/// One budgeted page of a session view (`recall show --max-tokens`): the
/// session, its entries from the page's offset with their texts clipped,
/// `next_offset` when entries remain past the last one kept, `truncated`
/// and the `index` block.
pub fn view_page(page: &SessionViewResponse, shape: Shape, index: &Value) -> Result<Value, String> {
    let f = shape.fields;
    let items = page.entries.len();
    let text = longest(page.entries.iter().map(|e| e.text.as_str()));
    let s = &page.session.summary;
    fit_or_err(shape, items, 0, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let entries: Vec<Value> = page
            .entries
            .iter()
            .take(cut.items)
            .map(|e| {
                let (shown, chars) = clip(&e.text, cut.text);
                t.chars += chars;
                let mut v = json!({
                    "index": e.total_index,
                    "role": e.role,
                    "ts_ms": e.ts_ms,
                    "text": shown,
                });
                if chars > 0 {
                    v["chars"] = json!(e.text.chars().count());
                }
                if f != Fields::Minimal {
                    v["locator"] = json!(e.locator);
                    for (on, name) in [
                        (e.superseded, "superseded"),
                        (e.subagent, "subagent"),
                        (e.truncated, "truncated"),
                    ] {
                        if on {
                            v[name] = json!(true);
                        }
                    }
                }
                if f == Fields::Full {
                    v["seq"] = json!(e.seq);
                }
                v
            })
            .collect();
        let mut session = list_row(s, 0, f, 200, &mut Truncated::default());
        if let Some(o) = session.as_object_mut() {
            o.remove("children");
        }
        let mut v = json!({
            "session": session,
            "scope": page.scope,
            "total": page.total,
            "offset": page.offset,
            "entries": entries,
            "index": index,
        });
        let next = page.offset + cut.items as u64;
        if next < page.total {
            v["next_offset"] = json!(next);
        }
        if t.any() {
            v["truncated"] = json!(t);
        }
        v
    })
}
