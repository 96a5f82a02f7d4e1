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
    classify, filter, search_session, surface, trace_record, window, Address, FilterRequest,
    SessionSearchRequest, WindowRequest,
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
            return QueryError::new(
                crate::ErrorCode::InvalidParam,
                format!("not a session query: {e}"),
            )
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
        assert_eq!(
            run(r#"{"query":"filter","filter":{"from_index":3,"to_index":1}}"#)["error"],
            "invalid_filter"
        );
    }
}
