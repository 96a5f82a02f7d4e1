//! `snapshots/`: superseded manifests, kept at least [`GRACE_MS`] after they
//! were superseded so that a cursor minted on them still pages.
//!
//! A snapshot is `<store_id>-<revision>.json` holding the exact manifest
//! bytes; its mtime is the moment it was superseded.

use super::fsutil::{age_ms, random_hex, wall_ms, write_replace};
use super::StoreError;
use recall_core::model::Manifest;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The snapshots folder name.
pub const SNAPSHOTS: &str = "snapshots";

/// How long a superseded manifest stays servable (10 minutes).
pub const GRACE_MS: i64 = 10 * 60 * 1000;

/// The file of a snapshot; `None` for a store id that could escape the folder.
pub fn path(dir: &Path, store_id: &str, revision: u64) -> Option<PathBuf> {
    let ok = !store_id.is_empty()
        && store_id.len() <= 64
        && store_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then(|| dir.join(format!("{store_id}-{revision}.json")))
}

/// Keeps the bytes of a manifest that is being superseded.
pub fn save(dir: &Path, m: &Manifest, bytes: &[u8]) -> Result<(), StoreError> {
    let Some(dest) = path(dir, &m.store_id, m.revision) else {
        return Ok(());
    };
    let tmp = format!(".tmp-{}", random_hex(8));
    write_replace(dir, &tmp, &dest, bytes).map_err(|e| StoreError::io(&dest, e))
}

/// Reads a retained snapshot.
pub fn load(dir: &Path, store_id: &str, revision: u64) -> Option<Manifest> {
    let p = path(dir, store_id, revision)?;
    let bytes = fs::read(p).ok()?;
    serde_json::from_slice::<Manifest>(&bytes)
        .ok()
        .filter(|m| m.store_id == store_id && m.revision == revision)
}

/// Deletes snapshots (and stray temp files) superseded more than `grace_ms`
/// ago; returns the manifests of the ones kept (their generations stay
/// referenced).
pub fn prune(dir: &Path, grace_ms: i64) -> Result<Vec<Manifest>, StoreError> {
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
            if let Some(m) = fs::read(ent.path())
                .ok()
                .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            {
                kept.push(m);
            }
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
