//! The one-session queries as JSON in, JSON out — what the wasm binding
//! (and its byte ABI, run by the parity harness) exposes, so every surface
//! answers with the same bytes.
//!
//! The request is an object tagged by `query`:
//! `{"query":"filter", "filter":{…}, "offset":0, "limit":100}`,
//! `{"query":"search", "q":"…", "filter":{…}, "limit":20, "cursor":"…"}`,
//! `{"query":"window", "at":{"index":3}|{"locator":{…}}, "before":5, "after":5}`,
//! `{"query":"surface"|"classify", "offset":0, "limit":100}`,
//! `{"query":"event_trace", "at":{"index":3}}`.

use super::{
    classify, filter, search_session, surface, trace_record, window, Address, Filter,
    FilterRequest, SessionSearchRequest, WindowRequest,
};
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::{Deserialize, Serialize};

/// A page of records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Page {
    /// Records skipped.
    pub offset: u64,
    /// Page size (default 100, at most 500).
    pub limit: Option<u64>,
}

/// The record a trace is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRequest {
    /// The record.
    pub at: Address,
}

/// One one-session query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "query", rename_all = "snake_case")]
pub enum SessionQuery {
    /// [`filter`].
    Filter(FilterRequest),
    /// [`search_session`].
    Search(SessionSearchRequest),
    /// [`window`].
    Window(WindowRequest),
    /// [`surface`].
    Surface(Page),
    /// [`classify`].
    Classify(Page),
    /// [`trace_record`].
    EventTrace(TraceRequest),
}

fn to_json<T: Serialize>(r: Result<T, QueryError>) -> String {
    match r {
        Ok(v) => serde_json::to_string(&v).unwrap_or_else(|e| {
            QueryError::new(
                crate::ErrorCode::Internal,
                format!("serialization failed: {e}"),
            )
            .to_json()
        }),
        Err(e) => e.to_json(),
    }
}

/// Runs `request_json` over `p` (whose generation file is `generation`):
/// the response JSON, or the §7 error body (`invalid_param` for a request
/// that does not parse).
pub fn query_json(p: &PreparedShard, generation: &str, request_json: &str) -> String {
    let q: SessionQuery = match serde_json::from_str(request_json) {
        Ok(q) => q,
        Err(e) => {
            return bad_filter(request_json)
                .unwrap_or_else(|| {
                    QueryError::new(
                        crate::ErrorCode::InvalidParam,
                        format!("not a session query: {e}"),
                    )
                })
                .to_json()
        }
    };
    match q {
        SessionQuery::Filter(r) => to_json(filter(p, &r)),
        SessionQuery::Search(r) => to_json(search_session(p, generation, &r)),
        SessionQuery::Window(r) => to_json(window(p, &r)),
        SessionQuery::Surface(r) => to_json(Ok(surface(p, r.offset, r.limit))),
        SessionQuery::Classify(r) => to_json(Ok(classify(p, r.offset, r.limit))),
        SessionQuery::EventTrace(r) => to_json(trace_record(p, &r.at)),
    }
}

/// The error of a filter request whose `filter` object does not parse:
/// the same `invalid_filter` (code and message) the query-string form of
/// those values gets from [`Filter::from_pairs`], so the HTTP route and the
/// JSON call (wasm, reports) answer one error. `None` when the request is
/// not a filter request or its filter's values parse as pairs.
fn bad_filter(request_json: &str) -> Option<QueryError> {
    let v: serde_json::Value = serde_json::from_str(request_json).ok()?;
    if v.get("query")?.as_str()? != "filter" {
        return None;
    }
    let f = v.get("filter")?.as_object()?;
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    };
    let pairs: Vec<(&str, String)> = f
        .iter()
        .filter_map(|(k, v)| {
            let key = match k.as_str() {
                "from_index" => "from",
                "to_index" => "to",
                "since_ms" => "since",
                "until_ms" => "until",
                "roles" => "role",
                "state" | "subagent" | "text" => k.as_str(),
                _ => return None,
            };
            Some((key, text(v)))
        })
        .collect();
    Filter::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        .err()
        .filter(|e| e.code == crate::ErrorCode::InvalidFilter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    #[test]
    fn every_query_kind_dispatches() {
        let p = shard();
        let run = |j: &str| -> serde_json::Value {
            serde_json::from_str(&query_json(&p, "g.json", j)).unwrap()
        };
        assert_eq!(
            run(r#"{"query":"filter","filter":{"state":"superseded"}}"#)["total"],
            3
        );
        assert_eq!(run(r#"{"query":"search","q":"bug fix"}"#)["total_hits"], 4);
        assert_eq!(
            run(r#"{"query":"window","at":{"index":3},"before":0,"after":0}"#)["center"],
            3
        );
        assert_eq!(run(r#"{"query":"surface"}"#)["total"], 7);
        assert_eq!(run(r#"{"query":"classify","limit":1}"#)["more"], true);
        assert_eq!(
            run(r#"{"query":"event_trace","at":{"index":7}}"#)["superseded_by"]["reason"],
            "undo"
        );
        assert_eq!(run(r#"{"query":"nope"}"#)["error"], "invalid_param");
        // A malformed filter value answers the query-string form's error.
        for (json, pairs) in [
            (
                r#"{"query":"filter","filter":{"state":"bogus"}}"#,
                &[("state", "bogus")][..],
            ),
            (
                r#"{"query":"filter","filter":{"roles":["robot"]}}"#,
                &[("role", "robot")],
            ),
            (
                r#"{"query":"filter","filter":{"subagent":"maybe"}}"#,
                &[("subagent", "maybe")],
            ),
        ] {
            let want = Filter::from_pairs(pairs.iter().copied())
                .unwrap_err()
                .to_json();
            assert_eq!(query_json(&p, "g.json", json), want, "{json}");
            assert_eq!(run(json)["error"], "invalid_filter");
        }
        assert_eq!(
            run(r#"{"query":"filter","filter":{"from_index":3,"to_index":1}}"#)["error"],
            "invalid_filter"
        );
    }
}
