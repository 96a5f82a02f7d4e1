//! `indexer.json`: the indexer's private bookkeeping beside the manifest.
//!
//! It remembers what the manifest cannot: whether the first full backfill
//! finished, when the last sweep ran, and the discovery units that yield no
//! published session (no session at all, dropped by retention, a
//! duplicate of another unit's session, or unreadable) with their file cursors, so an
//! unchanged one is not read again on every sweep. Losing it costs work,
//! never correctness: it is rewritten (without fsync) under the writer lock.

use super::fsutil::write_replace;
use recall_core::model::FileCursor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The state file name.
pub const STATE: &str = "indexer.json";

/// Why a discovered unit has no session in the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The extractor found no session in it (e.g. an Intendant wrapper log).
    Empty,
    /// Its newest message is older than the retention horizon.
    Retired,
    /// Another unit yields the same session key.
    Duplicate,
    /// It could not be read (see `error`): retried only when its files
    /// change, named in status meanwhile.
    Failed,
}

/// A unit that is not in the manifest, and the cursors it was judged on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedUnit {
    /// Why.
    pub reason: SkipReason,
    /// The session key it yielded, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Newest message timestamp (retired units: re-read if the horizon moves back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest_ms: Option<i64>,
    /// Discovery context fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The unit's files when judged.
    pub files: Vec<FileCursor>,
    /// Why it failed (`Failed` units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The whole state file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexerState {
    /// The store this state belongs to; a mismatch means the store was
    /// cleared or rebuilt and the state is void.
    pub store_id: String,
    /// The first full backfill of this store finished.
    pub backfilled: bool,
    /// Wall-clock ms when the last complete sweep finished.
    pub last_sweep_ms: i64,
    /// Wall-clock ms of the last full garbage collection.
    #[serde(default)]
    pub last_full_gc_ms: i64,
    /// Units without a published session, by main file path.
    #[serde(default)]
    pub skipped: BTreeMap<String, SkippedUnit>,
    /// Generations a publish took out of the manifest, and when: deleted once
    /// no servable snapshot can reference them.
    #[serde(default)]
    pub garbage: BTreeMap<String, i64>,
}

/// Reads the state for `store_id` (anything unreadable or for another store
/// is the default).
pub fn read(dir: &Path, store_id: &str) -> IndexerState {
    fs::read(dir.join(STATE))
        .ok()
        .and_then(|b| serde_json::from_slice::<IndexerState>(&b).ok())
        .filter(|s| s.store_id == store_id && !store_id.is_empty())
        .unwrap_or_else(|| IndexerState {
            store_id: store_id.to_string(),
            ..IndexerState::default()
        })
}

/// Replaces the state file.
pub fn write(dir: &Path, state: &IndexerState) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(state).map_err(std::io::Error::other)?;
    write_replace(dir, ".state.tmp", &dir.join(STATE), &bytes)
}
