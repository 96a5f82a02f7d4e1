//! What a sweep did: the report a sweep returns (and the CLI and the status
//! route show).

use serde::Serialize;

/// What a sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// It was the store's first full backfill.
    pub backfill: bool,
    /// Units discovered.
    pub units: usize,
    /// Units extracted.
    pub extracted: usize,
    /// Units whose session was current (not read).
    pub unchanged: usize,
    /// Sessions added.
    pub new_sessions: usize,
    /// Sessions replaced.
    pub updated_sessions: usize,
    /// Sessions flagged `source_gone`.
    pub gone: usize,
    /// Sessions dropped or skipped by retention.
    pub retired: usize,
    /// Units that yield no session.
    pub empty: usize,
    /// Units that could not be read.
    pub failed: usize,
    /// Entries refused at publish (a fresher writer or a tombstone won).
    pub refused: usize,
    /// Source files read.
    pub files_read: u64,
    /// Source bytes read.
    pub bytes_read: u64,
    /// Units read only past their offsets (resumed from a checkpoint).
    pub resumed: usize,
    /// Manifests written.
    pub publishes: usize,
    /// The revision now current.
    pub revision: u64,
    /// The store id.
    pub store_id: String,
    /// Every unit of the store that could not be indexed (this sweep's
    /// failures and older ones whose files did not change), with the reason.
    pub failures: Vec<crate::index::FailedUnit>,
    /// Units abandoned by this sweep after the unit deadline.
    pub abandoned: usize,
    /// Corrupt manifests moved aside by this sweep.
    pub quarantined: Vec<String>,
    /// Roots that could not be listed or did not answer within the root
    /// deadline (their sessions were kept as they were).
    pub degraded_roots: Vec<crate::index::progress::DegradedRoot>,
    /// Secondary files of indexed units left out because they are not
    /// regular files, could not be read or did not answer (`path: reason`;
    /// the unit's other files are indexed).
    pub skipped_files: Vec<String>,
    /// Sessions whose generation file was found damaged (missing, cut, or
    /// not hashing to its name) and were extracted again by this sweep.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requeued: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}
