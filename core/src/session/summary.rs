//! How one session is described to clients — the summary every session
//! surface (list, view, lineage, export) shows — and how a client's key
//! names a session (a key, or a bare session id when unambiguous).

use crate::model::{Manifest, ManifestEntry, Parent, Source};
use serde::{Deserialize, Serialize};

/// One session as the session surfaces show it. Fields are declared in
/// name order so the JSON keeps the bytes the routes have always sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// Git branch.
    pub branch: Option<String>,
    /// Oldest record (epoch ms).
    pub created_ms: Option<i64>,
    /// Working directory.
    pub cwd: Option<String>,
    /// user + assistant records.
    pub messages: u64,
    /// Models the source records (omitted when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// The parent session, if any.
    pub parent: Option<Parent>,
    /// Records in the shard (all roles).
    pub records: u64,
    /// The resume command.
    pub resume: Option<String>,
    /// The agent's session id.
    pub session_id: String,
    /// `<source>:<session_id>`.
    pub session_key: String,
    /// The agent.
    pub source: Source,
    /// The source files are gone (the index keeps the session).
    pub source_gone: bool,
    /// Title.
    pub title: Option<String>,
    /// Newest update (epoch ms).
    pub updated_ms: Option<i64>,
}

impl SessionSummary {
    /// The summary of the session `key` whose manifest entry is `e`.
    pub fn of(key: &str, e: &ManifestEntry) -> SessionSummary {
        let m = &e.meta;
        SessionSummary {
            branch: m.branch.clone(),
            created_ms: m.created_ms,
            cwd: m.cwd.clone(),
            messages: m.messages,
            models: m.models.clone(),
            parent: m.parent.clone(),
            records: e.records,
            resume: m.resume.clone(),
            session_id: m.session_id.clone(),
            session_key: key.to_string(),
            source: m.source,
            source_gone: e.source_gone,
            title: m.title.clone(),
            updated_ms: m.updated_ms,
        }
    }
}

/// Why a client's key names no single session.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No session has this key or id.
    #[error("no such session")]
    Unknown,
    /// Several sessions have this id (or key prefix).
    #[error("{0} sessions match; use the key <source>:<id>")]
    Ambiguous(usize),
}

/// Resolves a client's key: the exact session key, else the one session
/// whose id equals it (or, with `prefixes`, whose id or key starts with it).
pub fn resolve_key<'m>(
    m: &'m Manifest,
    key: &str,
    prefixes: bool,
) -> Result<(&'m String, &'m ManifestEntry), KeyError> {
    if let Some(hit) = m.sessions.get_key_value(key) {
        return Ok(hit);
    }
    if key.is_empty() {
        return Err(KeyError::Unknown);
    }
    let found: Vec<(&String, &ManifestEntry)> = m
        .sessions
        .iter()
        .filter(|(k, e)| {
            e.meta.session_id == key
                || (prefixes && (e.meta.session_id.starts_with(key) || k.starts_with(key)))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(KeyError::Unknown),
        many => Err(KeyError::Ambiguous(many.len())),
    }
}
