//! How one session is described to clients — the summary every session
//! surface (list, view, lineage, export) shows — and how a client's key
//! names a session (a key, or a bare session id when unambiguous).

use crate::model::{Manifest, ManifestEntry, Parent, Source};
use crate::response::SourcePresence;
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
    /// The resume command; only for a present source.
    pub resume: Option<String>,
    /// The agent's session id.
    pub session_id: String,
    /// `<source>:<session_id>`.
    pub session_key: String,
    /// The agent.
    pub source: Source,
    /// The source files are gone (the index keeps the session).
    pub source_gone: bool,
    /// Whether the source files can be vouched for (as on search hits).
    #[serde(default = "unverifiable")]
    pub source_presence: SourcePresence,
    /// Title.
    pub title: Option<String>,
    /// Newest update (epoch ms).
    pub updated_ms: Option<i64>,
}

impl SessionSummary {
    /// The summary of the session `key` whose manifest entry is `e`.
    pub fn of(key: &str, e: &ManifestEntry) -> SessionSummary {
        let m = &e.meta;
        let presence = SourcePresence::of(e.source_gone, &m.paths);
        SessionSummary {
            branch: m.branch.clone(),
            created_ms: m.created_ms,
            cwd: m.cwd.clone(),
            messages: m.messages,
            models: m.models.clone(),
            parent: m.parent.clone(),
            records: e.records,
            resume: m
                .resume
                .clone()
                .filter(|_| presence == SourcePresence::Present),
            session_id: m.session_id.clone(),
            session_key: key.to_string(),
            source: m.source,
            source_gone: e.source_gone,
            source_presence: presence,
            title: m.title.clone(),
            updated_ms: m.updated_ms,
        }
    }
}

fn unverifiable() -> SourcePresence {
    SourcePresence::Unverifiable
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SessionMeta;

    fn entry(paths: &[&str], gone: bool) -> ManifestEntry {
        ManifestEntry {
            meta: SessionMeta {
                source: Source::Codex,
                session_id: "s1".into(),
                title: None,
                cwd: None,
                branch: None,
                created_ms: Some(1),
                updated_ms: Some(2),
                messages: 1,
                parent: None,
                resume: Some("codex resume s1".into()),
                paths: paths.iter().map(|p| p.to_string()).collect(),
                models: Vec::new(),
            },
            generation_file: String::new(),
            records: 1,
            max_ts_ms: None,
            bytes: 0,
            source_gone: gone,
            files: vec![],
            watermark: 0,
            state: serde_json::Value::Null,
        }
    }

    #[test]
    fn resume_is_offered_only_for_a_present_source() {
        let present = SessionSummary::of("codex:s1", &entry(&["/a.jsonl"], false));
        assert_eq!(present.source_presence, SourcePresence::Present);
        assert_eq!(present.resume.as_deref(), Some("codex resume s1"));
        let gone = SessionSummary::of("codex:s1", &entry(&["/a.jsonl"], true));
        assert_eq!(gone.source_presence, SourcePresence::Missing);
        assert_eq!(gone.resume, None);
        let unlisted = SessionSummary::of("codex:s1", &entry(&[], false));
        assert_eq!(unlisted.source_presence, SourcePresence::Unverifiable);
        assert_eq!(unlisted.resume, None);
        let json = serde_json::to_value(&gone).unwrap();
        assert_eq!(json["source_presence"], "missing");
    }
}
