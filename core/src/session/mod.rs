//! Session queries (issue #14): the session list ([`sessions`]), the
//! session view ([`view`]), lineage ([`lineage`]) over the manifest, and
//! the one-session queries — filter, search, window, surface, classify and
//! trace a record — over one [`PreparedShard`].
//!
//! Every query takes a typed request and returns a typed, serde response;
//! the HTTP routes, the CLI, the MCP server and the wasm binding are thin
//! adapters over these functions. Errors are [`QueryError`]s with the §7
//! codes (`invalid_filter`, `invalid_param`, `invalid_cursor`,
//! `cursor_expired`, `record_not_found`).

pub mod classify;
pub mod filter;
pub mod json;
pub mod lineage;
pub mod list;
pub mod locate;
pub mod search;
pub mod sessions;
pub mod summary;
pub mod text;
pub mod trace;
pub mod view;
pub mod views;
pub mod window;

pub use classify::{classify, surface, ClassifyResponse, RecordClass, SurfaceResponse};
pub use filter::{filter, Filter, FilterRequest, FilterResponse, StateFilter};
pub use json::{query_json, SessionQuery};
pub use lineage::{trace, Ancestor, LineageNode, TraceResponse};
pub use list::{activity_ms, list_sessions, Presence, SessionListRequest};
pub use locate::{parse_locate, Found, Verdict};
pub use search::{search_session, SessionHit, SessionSearchRequest, SessionSearchResponse};
pub use sessions::{sessions, SessionRow, SessionsRequest, SessionsResponse};
pub use summary::{resolve_key, KeyError, SessionSummary};
pub use text::TextClause;
pub use trace::{trace_record, RecordTrace};
pub use view::{session_view, Scope, SessionViewRequest, SessionViewResponse};
pub use views::views_json;
pub use window::{window, Address, WindowRequest, WindowResponse};

use crate::model::{Locator, Mark, MessageRecord, Role};
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::{Deserialize, Serialize};

/// Largest page of entries one call returns.
pub const MAX_PAGE: usize = 500;
/// Default page of entries.
pub const DEFAULT_PAGE: usize = 100;

/// Whether a record still stands in the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordState {
    /// Active: part of the current surface.
    Current,
    /// Superseded by a rollback, rewind, undo or branch choice.
    Superseded,
}

/// One record of a session, in full.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Index of the record in the shard (source order).
    pub index: u64,
    /// Who said it.
    pub role: Role,
    /// When (epoch ms).
    pub ts_ms: i64,
    /// `current` or `superseded`.
    pub state: RecordState,
    /// A subagent record.
    pub subagent: bool,
    /// The text was cut by the cap.
    pub truncated: bool,
    /// Native seq, if any.
    pub seq: Option<u64>,
    /// Source generation of the record.
    pub generation: u32,
    /// The record text.
    pub text: String,
    /// Where the record lives.
    pub locator: Locator,
}

impl Entry {
    /// The entry of record `i` of `p` (`i` in range).
    pub fn of(p: &PreparedShard, i: usize) -> Entry {
        let r: &MessageRecord = &p.shard.records[i];
        Entry {
            index: i as u64,
            role: r.role,
            ts_ms: r.ts_ms,
            state: state_of(p, i),
            subagent: r.subagent,
            truncated: r.truncated,
            seq: r.seq,
            generation: r.generation,
            text: r.text.clone(),
            locator: r.locator.clone(),
        }
    }
}

/// A mark as clients see it: its kind, where it sits, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkRef {
    /// `seq_cut`, `turn_count`, `item_anchor`, `record_ids` or `generation_restore`.
    pub kind: String,
    /// Number of records that preceded the mark in source order.
    pub at: u64,
    /// Position of the mark in the shard's mark list.
    pub mark_index: u64,
    /// The mark's reason (`rewind`, `undo`, `branch`, …) where it has one.
    pub reason: Option<String>,
}

impl MarkRef {
    /// Describes mark `k` of `marks`.
    pub fn of(marks: &[Mark], k: usize) -> MarkRef {
        let m = &marks[k];
        let (kind, reason) = match m {
            Mark::SeqCut { .. } => ("seq_cut", None),
            Mark::TurnCount { .. } => ("turn_count", None),
            Mark::ItemAnchor { .. } => ("item_anchor", None),
            Mark::RecordIds { reason, .. } => ("record_ids", Some(reason.clone())),
            Mark::GenerationRestore { .. } => ("generation_restore", None),
        };
        MarkRef {
            kind: kind.to_string(),
            at: m.at(),
            mark_index: k as u64,
            reason,
        }
    }
}

/// Which session a response answers for, and the generation it read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRef {
    /// `<source>:<session_id>`.
    pub session_key: String,
    /// Records in the shard (all roles).
    pub records: u64,
}

impl SessionRef {
    /// The reference of `p`.
    pub fn of(p: &PreparedShard) -> SessionRef {
        SessionRef {
            session_key: p.shard.session.key(),
            records: p.shard.records.len() as u64,
        }
    }
}

fn state_of(p: &PreparedShard, i: usize) -> RecordState {
    if p.active.get(i).copied().unwrap_or(true) {
        RecordState::Current
    } else {
        RecordState::Superseded
    }
}

/// Clamps a requested page size (`None` ⇒ [`DEFAULT_PAGE`]) to 1..=[`MAX_PAGE`].
pub fn page_size(limit: Option<u64>) -> usize {
    limit.map_or(DEFAULT_PAGE, |n| (n as usize).clamp(1, MAX_PAGE))
}

fn not_found(what: impl Into<String>) -> QueryError {
    QueryError::new(crate::ErrorCode::RecordNotFound, what)
}

#[cfg(test)]
pub(crate) mod fixture;
