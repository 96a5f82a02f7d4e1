//! Resuming appended units (DESIGN.md §6: "Appended: read only past the
//! offset"): the extraction checkpoint of a live unit is saved with the
//! file cursors it was taken at, and trusted again only while each file it
//! read is, by those cursors, Unchanged or Appended.
//!
//! Checkpoints are written for units seen growing (Appended) or born since
//! the backfill (New outside a backfill) — the sessions an agent is writing
//! now. A backfill writes none, so it costs nothing for the archive.

use super::cursor::{classify, Change};
use super::PARSER_VERSION;
use crate::extract::Checkpoint;
use crate::store::{checkpoints, Store};
use recall_core::model::FileCursor;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A checkpoint as stored: with the parser version and the cursors of the
/// extraction that made it.
#[derive(Serialize, Deserialize)]
struct Saved {
    parser_version: u32,
    cursors: Vec<FileCursor>,
    checkpoint: Checkpoint,
}

/// The checkpoint of `unit`, when it can still be resumed from: written by
/// this parser version, and every file it read still holds the bytes it
/// read (same path and offset in its cursor, classified Unchanged or
/// Appended now).
pub fn load(store: &Store, unit: &str) -> Option<Checkpoint> {
    let bytes = checkpoints::read(store.dir(), unit)?;
    let saved: Saved = serde_json::from_slice(&bytes).ok()?;
    if saved.parser_version != PARSER_VERSION {
        return None;
    }
    for fed in &saved.checkpoint.files {
        let c = saved
            .cursors
            .iter()
            .find(|c| Path::new(&c.path) == fed.path)?;
        if c.offset != fed.offset {
            return None;
        }
        if !matches!(classify(&fed.path, c), Change::Unchanged | Change::Appended) {
            return None;
        }
    }
    Some(saved.checkpoint)
}

/// Saves the checkpoint of `unit` taken at `cursors`. Failing to save only
/// costs a full read next time.
pub fn save(store: &Store, unit: &str, checkpoint: Checkpoint, cursors: &[FileCursor]) {
    let saved = Saved {
        parser_version: PARSER_VERSION,
        cursors: cursors.to_vec(),
        checkpoint,
    };
    if let Ok(body) = serde_json::to_vec(&saved) {
        let _ = checkpoints::write(store.dir(), unit, &body);
    }
}

/// Drops the checkpoint of `unit` (it no longer matches its files).
pub fn forget(store: &Store, unit: &str) {
    checkpoints::remove(store.dir(), unit);
}
