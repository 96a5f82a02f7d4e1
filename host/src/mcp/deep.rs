//! `session_deep_search`: Deep Search ([`crate::deep`]) over the sessions
//! this server may read — the source files themselves, every record kind —
//! as one budgeted answer: matching lines grouped per session, each with
//! its record kind, the matched field's text around the match, and a
//! locator when the line is an indexed record (the argument of
//! `session_event_read`). It stops at `limit` lines or the call's deadline
//! and says which.

use super::args::{DeepArgs, KindArg};
use super::catalog::ReadOnlyCatalog;
use super::tools::{empty_note, index_info, join, limit, Call};
use crate::deep::{self, DeepHit, DeepProgress, DeepSession, DeepSink, Kind, KindFilter};
use crate::engine::answer::fit_or_err;
use crate::engine::budget::{Fields, Truncated};
use serde_json::{json, Value};

/// Gathers sessions until the deadline passes.
struct Gather<'a> {
    call: &'a Call<'a>,
    sessions: Vec<DeepSession>,
    out_of_time: bool,
}

impl DeepSink for Gather<'_> {
    fn session(&mut self, s: DeepSession) -> bool {
        self.sessions.push(s);
        self.progress(DeepProgress::default())
    }

    fn progress(&mut self, _: DeepProgress) -> bool {
        self.out_of_time = self.call.deadline.check().is_err();
        !self.out_of_time
    }
}

fn kind_filter(k: Option<KindArg>) -> KindFilter {
    match k {
        None | Some(KindArg::All) => KindFilter::All,
        Some(KindArg::User) => KindFilter::Only(Kind::User),
        Some(KindArg::Assistant) => KindFilter::Only(Kind::Assistant),
        Some(KindArg::Reasoning) => KindFilter::Only(Kind::Reasoning),
        Some(KindArg::Tool) => KindFilter::Only(Kind::Tool),
    }
}

/// At most `n` characters of a hit's text, around its first match, with
/// the match ranges moved into (and cut to) what is kept; and the
/// characters cut.
fn clip_hit(h: &DeepHit, n: usize) -> (String, Vec<[usize; 2]>, u64) {
    let total = h.text.chars().count();
    if total <= n {
        return (h.text.clone(), h.highlights.clone(), 0);
    }
    let first = h.highlights.first().map_or(0, |r| r[0]);
    let before = h.text[..first.min(h.text.len())].chars().count();
    let start_char = before.saturating_sub(n / 3).min(total - n);
    let start = h
        .text
        .char_indices()
        .nth(start_char)
        .map_or(h.text.len(), |(i, _)| i);
    let end = h.text[start..]
        .char_indices()
        .nth(n)
        .map_or(h.text.len(), |(i, _)| start + i);
    let ranges = h
        .highlights
        .iter()
        .filter(|r| r[1] > start && r[0] < end)
        .map(|r| [r[0].max(start) - start, r[1].min(end) - start])
        .collect();
    (h.text[start..end].to_string(), ranges, (total - n) as u64)
}

/// One hit at detail `f`: minimal = the text and its matches; summary adds
/// the kind, field, line and locator (or, for a line that is no indexed
/// record, its file and offset); full names file and offset always.
fn hit_json(h: &DeepHit, f: Fields, text: usize, t: &mut Truncated) -> Value {
    let (text, highlights, cut) = clip_hit(h, text);
    t.chars += cut;
    let mut v = json!({"text": text, "highlights": highlights});
    if f == Fields::Minimal {
        return v;
    }
    v["kind"] = json!(h.kind);
    v["line_no"] = json!(h.line_no);
    if let Some(field) = &h.field {
        v["field"] = json!(field);
    }
    if let Some(l) = &h.locator {
        v["locator"] = json!(l);
    }
    if h.locator.is_none() || f == Fields::Full {
        v["offset"] = json!(h.offset);
        if let Some(file) = &h.file {
            v["file"] = json!(file);
        }
    }
    v
}

/// `session_deep_search`.
pub fn session_deep_search(c: &Call, a: &DeepArgs) -> Result<Value, String> {
    let limit = limit(a.limit)?;
    let sources = join(&a.sources);
    let now = c.clock.now_ms.to_string();
    let offset = c.clock.utc_offset_min.to_string();
    let pairs = [
        ("source", sources.as_deref()),
        ("cwd", a.cwd.as_deref()),
        ("since", a.since.as_deref()),
        ("until", a.until.as_deref()),
        ("now_ms", Some(now.as_str())),
        ("utc_offset_min", Some(offset.as_str())),
    ];
    let opts = deep::PatternOptions {
        fixed_strings: a.fixed_strings.unwrap_or(false),
        ignore_case: a.ignore_case.unwrap_or(false),
    };
    let mut req = deep::DeepRequest::new(
        &a.pattern,
        opts,
        pairs.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))),
    )
    .map_err(|e| match e {
        deep::DeepError::Filter(q) => format!("{}: {}", q.code, q.message),
        deep::DeepError::Pattern(m) => format!("invalid_pattern: {m}"),
        deep::DeepError::Param(m) => format!("invalid_param: {m}"),
    })?;
    req.kind = kind_filter(a.kind);
    req.max_results = limit as usize;
    if let Some(s) = &a.session {
        req.only_keys = Some(vec![c.view.resolve(s)?]);
    }
    let catalog = ReadOnlyCatalog {
        store: c.store,
        view: c.view,
    };
    let mut sink = Gather {
        call: c,
        sessions: Vec::new(),
        out_of_time: false,
    };
    let summary = deep::run(&req, &c.view.visible, &catalog, c.sources, true, &mut sink);
    let found = sink.sessions;
    let stopped = if sink.out_of_time {
        Some("deadline")
    } else if summary.truncated {
        Some("limit")
    } else {
        None
    };
    let scanned = json!({
        "files_done": summary.progress.files_done,
        "files_total": summary.progress.files_total,
        "bytes": summary.progress.bytes,
        "unreadable": summary.unreadable.len(),
    });
    let index = index_info(c.view, c.view.all.revision, "store");
    let items = found.len();
    let most_hits = found.iter().map(|s| s.hits.len()).max().unwrap_or(0);
    let text = found
        .iter()
        .flat_map(|s| &s.hits)
        .map(|h| h.text.chars().count())
        .max()
        .unwrap_or(0);
    let shape = super::args::Shape::of(a.max_tokens, a.fields);
    let f = shape.fields;
    fit_or_err(shape, items, most_hits, text, |cut| {
        let mut t = Truncated {
            sessions: items.saturating_sub(cut.items) as u64,
            ..Truncated::default()
        };
        let sessions: Vec<Value> = found
            .iter()
            .take(cut.items)
            .map(|s| {
                t.hits += s.hits.len().saturating_sub(cut.hits) as u64;
                let hits: Vec<Value> = s
                    .hits
                    .iter()
                    .take(cut.hits)
                    .map(|h| hit_json(h, f, cut.text, &mut t))
                    .collect();
                if f == Fields::Minimal {
                    return json!({"session_key": s.session_key, "hits": hits});
                }
                json!({
                    "session_key": s.session_key,
                    "title": s.title,
                    "source": s.source,
                    "updated_ms": s.updated_ms,
                    "hits": hits,
                })
            })
            .collect();
        let mut v = json!({
            "sessions": sessions,
            "hits": summary.hits,
            "scanned": scanned,
            "stopped": stopped,
            "index": index,
        });
        if t.any() {
            v["truncated"] = json!(t);
        }
        if items == 0 {
            let mut note = empty_note(c.view);
            note["hint"] = json!(format!(
                "no line of the {} files of the sessions in scope matches{}",
                summary.progress.files_total,
                if stopped == Some("deadline") {
                    " before the deadline; narrow it with session, since or sources"
                } else {
                    ""
                }
            ));
            v["empty"] = note;
        }
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(text: &str, at: [usize; 2]) -> DeepHit {
        DeepHit {
            kind: Kind::Tool,
            text: text.into(),
            highlights: vec![at],
            field: None,
            locator: None,
            file: None,
            line_no: 1,
            offset: 0,
        }
    }

    #[test]
    fn a_clipped_hit_keeps_its_match_and_moves_the_ranges() {
        let text = format!("{}NEEDLE{}", "a".repeat(100), "b".repeat(100));
        let h = hit(&text, [100, 106]);
        let (t, r, cut) = clip_hit(&h, 30);
        assert_eq!(t.chars().count(), 30);
        assert_eq!(cut, 176);
        assert_eq!(&t[r[0][0]..r[0][1]], "NEEDLE");
        let (t, r, cut) = clip_hit(&h, 500);
        assert_eq!((t.as_str(), cut), (text.as_str(), 0));
        assert_eq!(r, vec![[100, 106]]);
        // Multi-byte text: the window is cut on characters.
        let text = format!("{}ß{}", "é".repeat(50), "ü".repeat(50));
        let h = hit(&text, [100, 102]);
        let (t, r, _) = clip_hit(&h, 10);
        assert_eq!(&t[r[0][0]..r[0][1]], "ß");
    }
}
