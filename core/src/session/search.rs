//! Search inside one session [DSH searchEvents]: the DESIGN §4 matching
//! (every term in one record) and highlighting over one session's records,
//! in record order, paged with a cursor of its own. The cursor names the
//! generation file it was made from, so a rewrite of the session expires it.

use super::filter::Filter;
use super::{Entry, RecordState, SessionRef};
use crate::fold::fold;
use crate::matching::Terms;
use crate::model::{Locator, Role};
use crate::naming::hash16;
use crate::prepared::PreparedShard;
use crate::query::{Query, QueryError, Request};
use crate::snippet::snippet;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// Default hits per page.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest page.
pub const MAX_LIMIT: usize = 100;

/// The search-in-session request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionSearchRequest {
    /// The §4 query text (terms and phrases).
    pub q: String,
    /// Further clauses; roles default to user + assistant (the §4 scope).
    pub filter: Filter,
    /// Hits per page (default 20, clamped to 1–100).
    pub limit: Option<u64>,
    /// The cursor of the previous page.
    pub cursor: Option<String>,
}

/// One matching record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHit {
    /// Record index.
    pub index: u64,
    /// Who said it.
    pub role: Role,
    /// When.
    pub ts_ms: i64,
    /// `current` or `superseded`.
    pub state: RecordState,
    /// A subagent record.
    pub subagent: bool,
    /// The record text was cut by the cap.
    pub truncated: bool,
    /// Native seq, if any.
    pub seq: Option<u64>,
    /// The §4 snippet window.
    pub snippet: String,
    /// Byte offset of the snippet in the record text.
    pub snippet_offset_bytes: u64,
    /// Highlight ranges `[start, end]` into the record text.
    pub ranges: Vec<[u64; 2]>,
    /// Where the record lives.
    pub locator: Locator,
}

/// The search-in-session response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSearchResponse {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// Matching records (all pages).
    pub total_hits: u64,
    /// This page, in record order.
    pub hits: Vec<SessionHit>,
    /// Cursor of the next page; absent on the last page.
    pub cursor: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Cursor {
    v: u32,
    generation: String,
    qh: String,
    after: u64,
}

fn fingerprint(query: &Query, filter: &Filter) -> String {
    let mut canonical = serde_json::json!({"terms": query.terms, "filter": filter});
    // Only for expressions, so plain queries' cursors stay valid.
    if let Some(e) = &query.expr {
        canonical["expr"] = serde_json::json!(e.to_string());
    }
    hash16(canonical.to_string().as_bytes())
}

/// Searches `p`, whose generation file is named `generation`.
pub fn search_session(
    p: &PreparedShard,
    generation: &str,
    req: &SessionSearchRequest,
) -> Result<SessionSearchResponse, QueryError> {
    let query = Request::new(&req.q).parse()?;
    let mut filter = req.filter.clone();
    if filter.roles.is_none() {
        filter.roles = Some(vec![Role::User, Role::Assistant]);
    }
    let compiled = filter.compile()?;
    let qh = fingerprint(&query, &filter);
    let after = match &req.cursor {
        None => None,
        Some(c) => Some(decode(c, &qh, generation)?),
    };
    let terms = Terms::of(&query);
    let limit = req
        .limit
        .map_or(DEFAULT_LIMIT, |n| (n as usize).clamp(1, MAX_LIMIT));
    let mut total = 0u64;
    let mut hits = Vec::new();
    let mut more = false;
    for i in 0..p.shard.records.len() {
        if !compiled.accepts(p, i) {
            continue;
        }
        let r = &p.shard.records[i];
        let f = fold(&r.text);
        let (hay, map) = (f.text.as_bytes(), f.map.as_ref());
        if !terms.matches(hay, map, false) {
            continue;
        }
        total += 1;
        if after.is_some_and(|a| (i as u64) <= a) {
            continue;
        }
        if hits.len() == limit {
            more = true;
            continue;
        }
        let s = snippet(&r.text, hay, map, &terms.terms);
        let e = Entry::of(p, i);
        hits.push(SessionHit {
            index: e.index,
            role: e.role,
            ts_ms: e.ts_ms,
            state: e.state,
            subagent: e.subagent,
            truncated: e.truncated,
            seq: e.seq,
            snippet: s.text,
            snippet_offset_bytes: s.offset as u64,
            ranges: s.ranges,
            locator: e.locator,
        });
    }
    let cursor = match (more, hits.last()) {
        (true, Some(last)) => Some(encode(&Cursor {
            v: 1,
            generation: generation.to_string(),
            qh,
            after: last.index,
        })),
        _ => None,
    };
    Ok(SessionSearchResponse {
        ok: true,
        session: SessionRef::of(p),
        total_hits: total,
        hits,
        cursor,
    })
}

fn encode(c: &Cursor) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(c).unwrap_or_default())
}

fn decode(s: &str, qh: &str, generation: &str) -> Result<u64, QueryError> {
    let invalid = || {
        QueryError::new(
            crate::ErrorCode::InvalidCursor,
            "the cursor is not valid for this query",
        )
    };
    let bytes = URL_SAFE_NO_PAD.decode(s.trim()).map_err(|_| invalid())?;
    let c: Cursor = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if c.v != 1 || c.qh != qh {
        return Err(invalid());
    }
    if c.generation != generation {
        return Err(QueryError::new(
            crate::ErrorCode::CursorExpired,
            "the session was rewritten since this cursor was made; start again",
        ));
    }
    Ok(c.after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    fn req(q: &str, limit: Option<u64>, cursor: Option<String>) -> SessionSearchRequest {
        SessionSearchRequest {
            q: q.into(),
            filter: Filter::default(),
            limit,
            cursor,
        }
    }

    #[test]
    fn all_terms_in_one_record_with_highlights() {
        let p = shard();
        let r = search_session(&p, "g1.json", &req("bug fix", None, None)).unwrap();
        let idx: Vec<u64> = r.hits.iter().map(|h| h.index).collect();
        // 2 is a tool row (outside the default roles); 9 has no "fix".
        assert_eq!(idx, vec![0, 1, 5, 7]);
        assert_eq!(r.total_hits, 4);
        let h = &r.hits[0];
        assert_eq!(h.snippet, "Fix the bug in parser");
        assert_eq!(h.ranges, vec![[0, 3], [8, 11]]);
        assert_eq!(r.hits[3].state, RecordState::Superseded);
        let tools = SessionSearchRequest {
            filter: Filter {
                roles: Some(vec![Role::Tool]),
                ..Filter::default()
            },
            ..req("BUG", None, None)
        };
        assert_eq!(
            search_session(&p, "g1.json", &tools).unwrap().hits[0].index,
            2
        );
        let cafe = search_session(&p, "g1.json", &req("cafe", None, None)).unwrap();
        assert_eq!(cafe.hits[0].ranges, vec![[8, 13]]);
    }

    #[test]
    fn pages_and_cursor_bound_to_generation() {
        let p = shard();
        let first = search_session(&p, "g1.json", &req("bug", Some(2), None)).unwrap();
        assert_eq!(
            first.hits.iter().map(|h| h.index).collect::<Vec<_>>(),
            vec![0, 1]
        );
        let c = first.cursor.clone().unwrap();
        let second = search_session(&p, "g1.json", &req("bug", Some(2), Some(c.clone()))).unwrap();
        assert_eq!(
            second.hits.iter().map(|h| h.index).collect::<Vec<_>>(),
            vec![5, 7]
        );
        let third =
            search_session(&p, "g1.json", &req("bug", Some(2), second.cursor.clone())).unwrap();
        assert_eq!(
            third.hits.iter().map(|h| h.index).collect::<Vec<_>>(),
            vec![9]
        );
        assert!(third.cursor.is_none());
        let code = |q: &str, gen: &str, c: &str| {
            search_session(&p, gen, &req(q, Some(2), Some(c.into())))
                .unwrap_err()
                .code
        };
        assert_eq!(code("bug", "g2.json", &c), "cursor_expired");
        assert_eq!(code("other", "g1.json", &c), "invalid_cursor");
        assert_eq!(code("bug", "g1.json", "%%"), "invalid_cursor");
    }

    #[test]
    fn query_errors_are_the_search_ones() {
        let p = shard();
        assert_eq!(
            search_session(&p, "g", &req("  ", None, None))
                .unwrap_err()
                .code,
            "q_required"
        );
    }
}
