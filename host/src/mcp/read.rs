//! The one-session tools: `session_event_search` (paged hits in record
//! order), `session_event_read` and `session_event_trace` (a record's text
//! in windows: `offset`, `chars`, the record's full `length`), and
//! `session_trace` (lineage). Every answer is fitted to its budget.

use super::args::{EventArgs, EventSearchArgs, SessionArgs, Shape};
use super::catalog::ReadOnlyCatalog;
use super::tools::{core_err, index_info, Call};
use crate::engine::answer::{fit_or_err, longest, Shape as AnswerShape};
use crate::engine::budget::{self, clip, Fields, Truncated};
use crate::lineage;
use recall_core::model::Locator;
use recall_core::session::{self, Address, Entry, SessionSearchRequest, WindowRequest};
use recall_core::PreparedShard;
use serde_json::{json, Value};

/// Longest neighbour text in a read, in characters.
pub const NEIGHBOUR_CHARS: usize = 240;
/// Room an answer keeps for everything but the record window.
const ENVELOPE: usize = 1_500;

fn load(c: &Call, session: &str) -> Result<(String, String, PreparedShard), String> {
    let key = c.view.resolve(session)?;
    c.deadline.check()?;
    let entry = c
        .view
        .visible
        .sessions
        .get(&key)
        .ok_or_else(|| "session_not_found".to_string())?;
    let catalog = ReadOnlyCatalog {
        store: c.store,
        view: c.view,
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

/// `session_event_search`: one budgeted page of hits inside one session.
pub fn session_event_search(c: &Call, a: &EventSearchArgs) -> Result<Value, String> {
    let n = super::tools::limit(a.limit)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let f = shape.fields;
    let (key, generation, p) = load(c, &a.session)?;
    let mut filter = session::filter::Filter::default();
    if let Some(roles) = &a.roles {
        filter = session::filter::Filter::from_pairs([("role", roles.join(",").as_str())])
            .map_err(core_err)?;
    }
    let run = |k: u64| {
        let req = SessionSearchRequest {
            q: a.query.clone(),
            filter: filter.clone(),
            limit: Some(k),
            cursor: a.cursor.clone(),
        };
        session::search_session(&p, &generation, &req).map_err(core_err)
    };
    let r = run(n)?;
    let items = r.hits.len();
    let text = longest(r.hits.iter().map(|h| h.snippet.as_str()));
    let index = index_info(c.view, c.view.all.revision, "store");
    fit_or_err(shape, items, 0, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let hits: Vec<Value> = r
            .hits
            .iter()
            .take(cut.items)
            .map(|h| {
                let (snippet, chars) = clip(&h.snippet, cut.text);
                t.chars += chars;
                let mut v = json!({"index": h.index, "ts_ms": h.ts_ms, "snippet": snippet});
                if f != Fields::Minimal {
                    v["role"] = json!(h.role);
                    v["state"] = json!(h.state);
                    v["around"] = json!(h.ranges.first().map_or(h.snippet_offset_bytes, |r| r[0]));
                }
                if f == Fields::Full {
                    v["subagent"] = json!(h.subagent);
                    v["snippet_offset_bytes"] = json!(h.snippet_offset_bytes);
                    v["ranges"] = json!(h.ranges);
                    v["locator"] = json!(h.locator);
                }
                v
            })
            .collect();
        let cursor = if cut.items == items {
            r.cursor.clone()
        } else {
            run(cut.items as u64).ok().and_then(|x| x.cursor)
        };
        let mut v =
            json!({"session": key, "total_hits": r.total_hits, "hits": hits, "index": index});
        if let Some(cur) = cursor {
            v["cursor"] = json!(cur);
        }
        if t.any() {
            v["truncated"] = json!(t);
        }
        v
    })
}

/// Where a window of `n` characters starts: `offset` when given, else
/// centred on the byte `around`, else 0.
fn window_start(text: &str, a: &EventArgs, n: usize) -> usize {
    if let Some(o) = a.offset {
        return o.min(usize::MAX as u64) as usize;
    }
    let Some(b) = a.around else { return 0 };
    let b = (b.min(text.len() as u64)) as usize;
    let at = text.char_indices().take_while(|(i, _)| *i < b).count();
    at.saturating_sub(n / 2)
}

/// A record with its text cut to the window `[start, start + n)` (in
/// characters), saying where it is in the whole.
fn record_window(e: &Entry, a: &EventArgs, n: usize, t: &mut Truncated) -> Value {
    let length = e.text.chars().count();
    let start = window_start(&e.text, a, n).min(length);
    let rest: String = e.text.chars().skip(start).collect();
    let (window, cut) = clip(&rest, n);
    t.chars += cut + start as u64;
    let mut v = entry_head(e);
    v["text"] = json!(window);
    v["offset"] = json!(start);
    v["chars"] = json!(window.chars().count());
    v["length"] = json!(length);
    if start + window.chars().count() < length {
        v["next_offset"] = json!(start + window.chars().count());
    }
    v
}

fn entry_head(e: &Entry) -> Value {
    let mut v = json!({"index": e.index, "role": e.role, "ts_ms": e.ts_ms, "state": e.state});
    if e.subagent {
        v["subagent"] = json!(true);
    }
    if e.truncated {
        v["capped_at_index"] = json!(true);
    }
    v
}

fn neighbour(e: &Entry, f: Fields, t: &mut Truncated) -> Value {
    let mut v = entry_head(e);
    if f != Fields::Minimal {
        let (s, cut) = clip(&e.text, NEIGHBOUR_CHARS);
        t.chars += cut;
        v["text"] = json!(s);
    }
    v
}

/// The window's size: `chars` when given, else what the budget leaves.
fn window_chars(a: &EventArgs, shape: AnswerShape) -> Result<usize, String> {
    let tokens =
        budget::check_tokens(shape.max_tokens).map_err(|m| format!("invalid_param: {m}"))?;
    let room = budget::max_chars(tokens).saturating_sub(ENVELOPE).max(1);
    Ok(match a.chars {
        Some(0) => return Err("invalid_param: chars must be at least 1".into()),
        Some(n) => (n.min(usize::MAX as u64) as usize).min(room),
        None => room,
    })
}

/// `session_event_read`: one record's text window, with its neighbours
/// (texts capped at 240 characters).
pub fn session_event_read(c: &Call, a: &EventArgs) -> Result<Value, String> {
    let at = address(a)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let f = shape.fields;
    let n = window_chars(a, shape)?;
    let (key, _, p) = load(c, &a.session)?;
    let w = session::window(
        &p,
        &WindowRequest {
            at,
            before: a.before,
            after: a.after,
        },
    )
    .map_err(core_err)?;
    let centre = w
        .entries
        .iter()
        .position(|e| e.index == w.center)
        .ok_or_else(|| "internal: the window lost its centre".to_string())?;
    let side = centre.max(w.entries.len() - 1 - centre);
    let index = index_info(c.view, c.view.all.revision, "store");
    fit_or_err(shape, side + 1, 0, n, |cut| {
        let mut t = Truncated::default();
        let keep = cut.items - 1;
        let records: Vec<Value> = w
            .entries
            .iter()
            .enumerate()
            .filter(|(i, _)| i.abs_diff(centre) <= keep)
            .map(|(i, e)| match i == centre {
                true => record_window(e, a, cut.text, &mut t),
                false => neighbour(e, f, &mut t),
            })
            .collect();
        t.sessions = (w.entries.len() - records.len()) as u64;
        let mut v = json!({"session": key, "center": w.center, "records": records, "index": index});
        if t.any() {
            v["truncated"] = json!(t);
        }
        v
    })
}

/// `session_event_trace`: what superseded a record, what stands in its
/// place, and a window of the record's text.
pub fn session_event_trace(c: &Call, a: &EventArgs) -> Result<Value, String> {
    let at = address(a)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let f = shape.fields;
    let n = window_chars(a, shape)?;
    let (key, _, p) = load(c, &a.session)?;
    let tr = session::trace_record(&p, &at).map_err(core_err)?;
    let items = tr.replaced_by.len();
    let index = index_info(c.view, c.view.all.revision, "store");
    fit_or_err(shape, items.max(1), 0, n, |cut| {
        let mut t = Truncated::default();
        let record = record_window(&tr.record, a, cut.text, &mut t);
        let replaced: Vec<Value> = tr
            .replaced_by
            .iter()
            .take(cut.items)
            .map(|e| neighbour(e, f, &mut t))
            .collect();
        t.sessions = (items - replaced.len()) as u64;
        let mut v = json!({
            "session": key,
            "record": record,
            "superseded_by": tr.superseded_by,
            "replaced_by": replaced,
            "origin": tr.origin,
            "index": index,
        });
        if t.any() {
            v["truncated"] = json!(t);
        }
        v
    })
}

/// `session_trace`: the lineage of a visible session; ancestors and
/// descendants outside the view become `{outside_scope: true}`. Under a
/// tight budget, descendant subtrees are dropped from the end.
pub fn session_trace(c: &Call, a: &SessionArgs) -> Result<Value, String> {
    let key = c.view.resolve(&a.session)?;
    let shape = Shape::of(a.max_tokens, a.fields);
    let mut ancestors = Value::Array(lineage::ancestors(&c.view.all, &key));
    let mut descendants = Value::Array(lineage::descendants(&c.view.all, &key));
    c.view.redact(&mut ancestors);
    c.view.redact(&mut descendants);
    let kids = descendants.as_array().cloned().unwrap_or_default();
    let index = index_info(c.view, c.view.all.revision, "store");
    fit_or_err(shape, kids.len().max(1), 0, 0, |cut| {
        let kept: Vec<Value> = kids.iter().take(cut.items).cloned().collect();
        let mut v =
            json!({"session": key, "ancestors": ancestors, "descendants": kept, "index": index});
        if kept.len() < kids.len() {
            v["truncated"] = json!(Truncated {
                sessions: (kids.len() - kept.len()) as u64,
                ..Truncated::default()
            });
        }
        v
    })
}
