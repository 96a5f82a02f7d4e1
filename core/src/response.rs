//! The §4 response shapes. Field order here is the serialized order, which
//! parity tests compare byte for byte.

use crate::model::{Locator, Role, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The message-search response body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// Always true (errors use the §7 error body).
    pub ok: bool,
    /// `ready`, `building` or `partial`.
    pub state: State,
    /// `timeout`, `budget` or `unreadable` when `state` is `partial`.
    pub partial_reason: Option<PartialReason>,
    /// The manifest revision searched.
    pub revision: u64,
    /// One page of sessions.
    pub sessions: Vec<SessionHits>,
    /// Cursor for the next page; absent on the last page.
    pub cursor: Option<String>,
    /// What the manifest covers, per source.
    pub coverage: BTreeMap<String, Coverage>,
    /// What this answer left out, and why (Orca's `truncated` block).
    #[serde(default)]
    pub truncated: Truncated,
    /// The store's history window in days (its policy), `None` when the
    /// caller has none or keeps everything. Set by the host.
    #[serde(default)]
    pub window_days: Option<u32>,
    /// Team search only: every host searched or skipped (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<HostCoverage>>,
    /// Milliseconds spent, by the clock the host passed in.
    pub took_ms: u64,
    /// The planner's report, only when the request asked for it
    /// (`debug=true`); absent otherwise, so answers keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<DebugReport>,
}

/// `debug` (DESIGN.md §4): how the answer was planned and what it cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DebugReport {
    /// How candidates were found: `index` (every candidate came from the
    /// segments' postings), `index+scan` (some sessions no segment covers
    /// were filtered and scanned too) or `scan` (no segment).
    pub route: String,
    /// The planner's figures.
    pub planner: PlannerReport,
}

/// What the plan and the scan did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerReport {
    /// Folded terms searched.
    pub terms: u64,
    /// Sessions planned (before the session-level filters): named by a
    /// segment's postings, or covered by no segment.
    pub candidate_shards: u64,
    /// Of those, sessions a segment named.
    pub indexed_shards: u64,
    /// Candidates visited by the scan.
    pub visited: u64,
    /// Shards loaded and matched (from the cache or storage).
    pub shards_loaded: u64,
    /// Shard bytes read from storage (0 for cached shards).
    pub bytes_read: u64,
    /// Microseconds per phase, by the catalog's fine clock (0 where the
    /// catalog has none, e.g. the in-memory index: answers stay
    /// deterministic).
    pub plan_us: u64,
    /// The scan.
    pub scan_us: u64,
    /// Rendering the page.
    pub page_us: u64,
    /// Segments a read found a bad block in: their lookups named every
    /// shard they cover (scanned, not skipped) until the indexer rebuilds
    /// them. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub damaged_segments: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What an answer left out (DESIGN.md §4, Orca's `truncated`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncated {
    /// The candidate scan stopped early (a deadline or the load budget):
    /// sessions beyond it may match too.
    pub candidates: bool,
    /// Matching records on this page whose snippet is not given (each
    /// session shows at most 3 of its `total_hits`).
    pub snippets: u64,
    /// The query itself was cut. Always false here: a query past the limits
    /// is refused with a 400 instead.
    pub query: bool,
    /// `freshness=wait-until-current` searched before the index was current
    /// (set by the host).
    pub freshness: bool,
}

/// Whether a session's source files can be vouched for (Orca's presence).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourcePresence {
    /// Its files were there at the last sweep.
    Present,
    /// Nothing says where they are (no file listed).
    Unverifiable,
    /// The indexer found them gone.
    Missing,
}

impl SourcePresence {
    /// The presence of a session from its manifest entry's facts.
    pub fn of(source_gone: bool, paths: &[String]) -> SourcePresence {
        if source_gone {
            SourcePresence::Missing
        } else if paths.is_empty() {
            SourcePresence::Unverifiable
        } else {
            SourcePresence::Present
        }
    }
}

/// How a session ranks under `sort=relevance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relevance {
    /// Occurrences of the terms in its best record.
    pub score: u64,
}

/// Whether the answer is complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Complete over a finished index.
    Ready,
    /// Complete over what is indexed so far; the first backfill is running.
    Building,
    /// Cut short (see `partial_reason`).
    Partial,
}

/// Why a response is partial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialReason {
    /// The scan deadline passed; retry the whole query.
    Timeout,
    /// The per-query load budget was spent; the cursor continues.
    Budget,
    /// Some session's shard could not be read (missing, truncated or
    /// overwritten): it is left out until the indexer re-extracts it.
    Unreadable,
    /// Team search: some host could not be read (see `hosts`).
    Hosts,
    /// The next session's shard is bigger than the whole per-query load
    /// budget: the page stops just before it, or while it is being prepared
    /// in chunks, and the cursor continues there — that session is scanned
    /// first on the next page (whose budget admits it), over as many pages
    /// as preparing it takes.
    Oversized,
}

/// Team search: which host a session or hit comes from, stamped by the
/// reader from the prefix it read (never from the object's content).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRef {
    /// The host's stable id (its folder under the prefix).
    pub id: String,
    /// Its human name.
    pub name: String,
}

/// Team search: one host's part in an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCoverage {
    /// The host's stable id.
    pub id: String,
    /// Its human name (empty when its catalog could not be read).
    pub name: String,
    /// `available` or `unavailable`.
    pub state: String,
    /// Why it is unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its store id (incarnation) searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_id: Option<String>,
    /// Its catalog revision searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// Sessions it contributed to the searched catalog.
    pub sessions: u64,
}

/// One session's hits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHits {
    /// `<source>:<session_id>`.
    pub session_key: String,
    /// The agent.
    pub source: Source,
    /// The source's session id.
    pub session_id: String,
    /// Title.
    pub title: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// `ts_ms` of the first hit.
    pub best_ts_ms: i64,
    /// Newest message of the session.
    #[serde(default)]
    pub updated_ms: Option<i64>,
    /// User and assistant records of the session.
    #[serde(default)]
    pub messages: u64,
    /// Under `sort=relevance`: the session's score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<Relevance>,
    /// Number of matching records (uncapped).
    pub total_hits: u64,
    /// True when the source files are gone.
    pub source_gone: bool,
    /// Whether the source files can be vouched for.
    #[serde(default = "unverifiable")]
    pub source_presence: SourcePresence,
    /// The resume command; only for a present source.
    pub resume: Option<String>,
    /// Up to 3 hits.
    pub hits: Vec<Hit>,
    /// Team search: the host it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRef>,
}

fn unverifiable() -> SourcePresence {
    SourcePresence::Unverifiable
}

/// One matching record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// Who said it.
    pub role: Role,
    /// When.
    pub ts_ms: i64,
    /// Native seq, if any.
    pub seq: Option<u64>,
    /// Superseded by a rewind/rollback/undo/branch.
    pub superseded: bool,
    /// The record text was cut by the cap.
    pub truncated: bool,
    /// A subagent record.
    pub subagent: bool,
    /// The snippet window of the original text.
    pub snippet: String,
    /// Byte offset of the snippet in the record text.
    pub snippet_offset_bytes: u64,
    /// Highlight ranges `[start, end]`, byte offsets into the record text.
    pub ranges: Vec<[u64; 2]>,
    /// Where the record lives.
    pub locator: Locator,
    /// Team search: the host it comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRef>,
}

/// Per-source coverage over the whole manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Sessions of this source.
    pub sessions: u64,
    /// Oldest `created_ms`.
    pub oldest_ts_ms: Option<i64>,
    /// Newest `updated_ms`.
    pub newest_ts_ms: Option<i64>,
    /// Sessions whose source files are gone.
    pub source_gone: u64,
    /// What this source can never yield.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub legacy: Vec<String>,
}
