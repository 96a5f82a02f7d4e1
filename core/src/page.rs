//! The page step of a search: rendering sessions with their snippets, the
//! response byte cap and the cursor.

use crate::cursor::{fingerprint, Cursor, SortKey, VERSION};
use crate::directory::Directory;
use crate::matching::{Found, Terms};
use crate::model::Manifest;
use crate::query::{Query, Sort};
use crate::response::{
    Hit, PartialReason, Relevance, Response, SessionHits, SourcePresence, State, Truncated,
};
use crate::snippet::snippet;

/// How the scan ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Why the answer is partial, if it is.
    pub partial: Option<PartialReason>,
    /// The first backfill is still running.
    pub building: bool,
}

/// Renders the page of `found` (in result order) over the snapshot `dir`.
#[allow(clippy::too_many_arguments)]
pub fn page(
    found: &[Found],
    dir: &Directory,
    after: Option<&SortKey>,
    query: &Query,
    terms: &Terms,
    outcome: Outcome,
    response_bytes: usize,
) -> Response {
    let manifest: &Manifest = dir.manifest();
    let state = match outcome.partial {
        Some(_) => State::Partial,
        None if outcome.building => State::Building,
        None => State::Ready,
    };
    let mut response = Response {
        ok: true,
        state,
        partial_reason: outcome.partial,
        revision: manifest.revision,
        sessions: Vec::new(),
        cursor: None,
        coverage: dir.coverage().clone(),
        truncated: Truncated {
            candidates: outcome.partial.is_some(),
            ..Truncated::default()
        },
        window_days: None,
        hosts: None,
        took_ms: 0,
        debug: None,
    };
    let base = json_len(&response) + 512;
    let mut size = base;
    let mut more = false;
    for f in found {
        if response.sessions.len() == query.limit {
            more = true;
            break;
        }
        let s = render(f, manifest, terms);
        let len = json_len(&s) + 1;
        if !response.sessions.is_empty() && size + len > response_bytes {
            more = true;
            break;
        }
        size += len;
        response.truncated.snippets += s.total_hits.saturating_sub(s.hits.len() as u64);
        response.sessions.push(s);
    }
    let make_cursor = |after: SortKey| {
        Cursor {
            v: VERSION,
            qh: fingerprint(query),
            rev: manifest.revision,
            store: manifest.store_id.clone(),
            after,
        }
        .encode()
    };
    let shown = response.sessions.len();
    let last = shown.checked_sub(1).map(|i| found[i].sort_key.clone());
    response.cursor = match outcome.partial {
        Some(PartialReason::Timeout) => None,
        Some(PartialReason::Budget | PartialReason::Oversized) => Some(make_cursor(
            last.or_else(|| after.cloned())
                .unwrap_or_else(|| start_key(query)),
        )),
        None | Some(PartialReason::Unreadable | PartialReason::Hosts) => {
            last.filter(|_| more).map(make_cursor)
        }
    };
    response
}

/// The length of `value`'s JSON text, counted as serde_json writes it (no
/// string is built: the byte cap needs the size of every rendered session,
/// and the response is serialized for real once, at the edge).
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// A key that ranks before every session.
fn start_key(query: &Query) -> SortKey {
    match query.sort {
        Sort::Newest => SortKey {
            score: None,
            len: None,
            ts: i64::MAX,
            key: String::new(),
        },
        Sort::Relevance => SortKey {
            score: Some(u64::MAX),
            len: Some(0),
            ts: i64::MAX,
            key: String::new(),
        },
    }
}

fn render(f: &Found, manifest: &Manifest, terms: &Terms) -> SessionHits {
    let meta = &f.shard.shard.session;
    let meta = manifest.sessions.get(&f.key).map_or(meta, |e| &e.meta);
    let hits = f
        .hits
        .iter()
        .map(|m| {
            let r = &f.shard.shard.records[m.record];
            let lane = if m.tool {
                &f.shard.tool
            } else {
                &f.shard.conversation
            };
            let s = snippet(
                &r.text,
                lane.text(m.lane_entry),
                lane.maps[m.lane_entry].as_ref(),
                &terms.terms,
            );
            Hit {
                role: r.role,
                ts_ms: r.ts_ms,
                seq: r.seq,
                superseded: !f.shard.active[m.record],
                truncated: r.truncated,
                subagent: r.subagent,
                snippet: s.text,
                snippet_offset_bytes: s.offset as u64,
                ranges: s.ranges,
                locator: r.locator.clone(),
                host: None,
            }
        })
        .collect::<Vec<_>>();
    let presence = SourcePresence::of(f.source_gone, &meta.paths);
    SessionHits {
        session_key: f.key.clone(),
        source: meta.source,
        session_id: meta.session_id.clone(),
        title: meta.title.clone(),
        cwd: meta.cwd.clone(),
        branch: meta.branch.clone(),
        best_ts_ms: hits.first().map_or(f.sort_key.ts, |h| h.ts_ms),
        updated_ms: meta.updated_ms,
        messages: meta.messages,
        relevance: f.sort_key.score.map(|score| Relevance { score }),
        total_hits: f.total_hits,
        source_gone: f.source_gone,
        source_presence: presence,
        // A command that resumes files that are not there helps no one.
        resume: meta
            .resume
            .clone()
            .filter(|_| presence == SourcePresence::Present),
        hits,
        host: None,
    }
}

#[cfg(test)]
mod tests {
    use super::json_len;

    #[test]
    fn json_len_is_the_serialized_length() {
        let value = serde_json::json!({
            "snippet": "quote \" backslash \\ tab \t nul \u{0} straße 数据库 \u{2028}",
            "n": [1, -2, 3.5, u64::MAX],
            "none": null,
        });
        assert_eq!(
            json_len(&value),
            serde_json::to_string(&value).unwrap().len()
        );
        assert_eq!(json_len(&"é"), 4);
    }
}
