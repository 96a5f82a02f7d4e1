//! `snapshots/`: superseded catalogs, kept at least [`GRACE_MS`] after they
//! were superseded so that a cursor minted on them still pages.
//!
//! A snapshot is `<store_id>-<revision>.json` holding the exact catalog
//! bytes (a few KiB: the metas it names are kept by the garbage collector
//! while it is); its mtime is the moment it was superseded. A store from
//! before the catalog may still hold whole manifests here for one grace
//! period; they are read as they are.

use super::fsutil::{age_ms, wall_ms, write_replace};
use super::StoreError;
use recall_core::model::Manifest;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use recall_core::layout::SNAPSHOTS;

/// How long a superseded manifest stays servable (10 minutes).
pub const GRACE_MS: i64 = 10 * 60 * 1000;

/// The file of a snapshot; `None` for a store id that could escape the folder.
pub fn path(dir: &Path, store_id: &str, revision: u64) -> Option<PathBuf> {
    Some(dir.join(recall_core::layout::snapshot_name(store_id, revision)?))
}

/// Keeps the bytes of a catalog that is being superseded.
pub fn save(dir: &Path, store_id: &str, revision: u64, bytes: &[u8]) -> Result<(), StoreError> {
    let Some(dest) = path(dir, store_id, revision) else {
        return Ok(());
    };
    write_replace(dir, ".tmp", &dest, bytes).map_err(|e| StoreError::io(&dest, e))
}

/// The bytes of a retained snapshot.
pub fn load_bytes(dir: &Path, store_id: &str, revision: u64) -> Option<Vec<u8>> {
    fs::read(path(dir, store_id, revision)?).ok()
}

/// A whole manifest (a snapshot or `manifest.json` from before the catalog).
pub fn parse_legacy(bytes: &[u8]) -> Option<Manifest> {
    serde_json::from_slice::<Manifest>(bytes).ok()
}

/// Just what the garbage collector needs from a legacy manifest snapshot:
/// the generation each session references (everything else unparsed).
#[derive(serde::Deserialize)]
struct Refs {
    sessions: std::collections::HashMap<String, Ref>,
}

#[derive(serde::Deserialize)]
struct Ref {
    generation_file: String,
}

/// The generation files a legacy manifest's bytes reference (`None` if unreadable).
pub fn referenced(bytes: &[u8]) -> Option<Vec<String>> {
    let r: Refs = serde_json::from_slice(bytes).ok()?;
    Some(
        r.sessions
            .into_values()
            .map(|e| e.generation_file)
            .collect(),
    )
}

/// Deletes snapshots (and stray temp files) superseded more than `grace_ms`
/// ago; returns the bytes of the kept ones.
pub fn prune(dir: &Path, grace_ms: i64) -> Result<Vec<Vec<u8>>, StoreError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let now = wall_ms();
    let mut kept = Vec::new();
    for ent in rd.flatten() {
        let Ok(meta) = ent.metadata() else { continue };
        if age_ms(&meta, now) > grace_ms {
            let _ = fs::remove_file(ent.path());
            continue;
        }
        let is_json = ent
            .file_name()
            .to_str()
            .is_some_and(|n| !n.starts_with('.') && n.ends_with(".json"));
        if is_json {
            // Unreadable: counted, referencing nothing known.
            kept.push(fs::read(ent.path()).unwrap_or_default());
        }
    }
    Ok(kept)
}

/// Deletes every snapshot (the store was cleared: all cursors expire).
pub fn remove_all(dir: &Path) -> Result<(), StoreError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(StoreError::io(dir, e)),
    }
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))
}
