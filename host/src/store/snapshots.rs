//! `snapshots/`: superseded manifests, kept at least [`GRACE_MS`] after they
//! were superseded so that a cursor minted on them still pages.
//!
//! A snapshot is `<store_id>-<revision>.json` holding the exact manifest
//! bytes; its mtime is the moment it was superseded.

use super::fsutil::{age_ms, wall_ms, write_replace};
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
    write_replace(dir, ".tmp", &dest, bytes).map_err(|e| StoreError::io(&dest, e))
}

/// Reads a retained snapshot.
pub fn load(dir: &Path, store_id: &str, revision: u64) -> Option<Manifest> {
    let p = path(dir, store_id, revision)?;
    let bytes = fs::read(p).ok()?;
    serde_json::from_slice::<Manifest>(&bytes)
        .ok()
        .filter(|m| m.store_id == store_id && m.revision == revision)
}

/// Just what the garbage collector needs from a manifest: the generation
/// each session references (everything else is skipped unparsed).
#[derive(serde::Deserialize)]
struct Refs {
    sessions: std::collections::HashMap<String, Ref>,
}

#[derive(serde::Deserialize)]
struct Ref {
    generation_file: String,
}

/// The generation files a manifest's bytes reference (`None` if unreadable).
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
/// ago; returns how many are kept and, with `refs`, the generations they
/// reference.
pub fn prune(dir: &Path, grace_ms: i64, refs: bool) -> Result<(usize, Vec<String>), StoreError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((0, Vec::new())),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let now = wall_ms();
    let mut kept = 0;
    let want = refs;
    let mut refs = Vec::new();
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
            kept += 1;
            if want {
                refs.extend(
                    fs::read(ent.path())
                        .ok()
                        .and_then(|b| referenced(&b))
                        .unwrap_or_default(),
                );
            }
        }
    }
    Ok((kept, refs))
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
