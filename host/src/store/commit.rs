//! Writing a new revision: the metas a publish adds, the superseded
//! catalog kept as a snapshot, then `catalog.json` by atomic rename (the
//! moment the revision becomes visible). Used by the publish gate, the
//! damage queue and `clear`, always under the writer lock.

use super::catalog::{self, Catalog, Entries, MetaRef};
use super::fsutil::{random_hex, sync_dir, write_atomic_with, write_content_named};
use super::generations::TMP_PREFIX;
use super::{manifest, snapshots, Store, StoreError};
use recall_core::model::Manifest;
use std::fs;
use std::io;
use std::sync::Arc;

/// Replaces `catalog.json` durably, caching `m` as what it describes before
/// it gets its name; then drops a legacy `manifest.json` (converted).
pub(crate) fn write_catalog(
    store: &Store,
    bytes: &[u8],
    m: Arc<Manifest>,
) -> Result<(), StoreError> {
    let dir = store.dir();
    let dest = dir.join(catalog::CATALOG);
    let tmp = format!(".catalog.tmp-{}", random_hex(8));
    write_atomic_with(dir, &tmp, &dest, bytes, |meta| store.remember(meta, m))
        .map_err(|e| StoreError::io(&dest, e))?;
    match fs::remove_file(dir.join(manifest::MANIFEST)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(StoreError::io(&dir.join(manifest::MANIFEST), e))
        }
        _ => Ok(()),
    }
}

/// Writes meta bytes under their content name (if absent), fsynced; the
/// folder is fsynced by the caller.
fn write_meta(store: &Store, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let mdir = store.dir().join(catalog::METAS);
    write_content_named(&mdir, TMP_PREFIX, name, bytes)
        .map_err(|e| StoreError::io(&mdir.join(name), e))
}

/// What a commit wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CommitBytes {
    /// Bytes of new metas.
    pub metas: u64,
    /// Bytes of the catalog.
    pub catalog: u64,
}

impl Store {
    /// Makes `next` the current revision (writer lock held by the caller):
    /// writes the metas of what changed since the catalog on disk, keeps
    /// that catalog (or a legacy manifest) as a snapshot, and replaces the
    /// catalog. Returns the new manifest and what was written.
    pub(crate) fn commit(
        &self,
        next: Manifest,
    ) -> Result<(Arc<Manifest>, CommitBytes), StoreError> {
        let dir = self.dir();
        let cat_path = dir.join(catalog::CATALOG);
        let (base_bytes, base): (Option<Vec<u8>>, Option<Catalog>) = match fs::read(&cat_path) {
            Ok(b) => {
                let c = catalog::parse(&b).ok();
                (Some(b), c)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match fs::read(dir.join(manifest::MANIFEST)) {
                    Ok(b) => (Some(b), None),
                    Err(_) => (None, None),
                }
            }
            Err(e) => return Err(StoreError::io(&cat_path, e)),
        };
        let mut metas: Vec<(MetaRef, Entries)> = Vec::new();
        if let Some(c) = &base {
            for r in &c.metas {
                // A meta that does not load makes the base unusable; the
                // caller read it through `load`, so this is a race with
                // damage: write every entry anew.
                match self.meta(&r.name) {
                    Ok(e) => metas.push((r.clone(), e)),
                    Err(_) => {
                        metas.clear();
                        break;
                    }
                }
            }
        }
        let written = catalog::plan(&metas, &next)?;
        let mut out = CommitBytes::default();
        for (name, bytes, _) in &written.metas {
            write_meta(self, name, bytes)?;
            out.metas += bytes.len() as u64;
        }
        if !written.metas.is_empty() {
            let mdir = dir.join(catalog::METAS);
            sync_dir(&mdir).map_err(|e| StoreError::io(&mdir, e))?;
        }
        if let (Some(bytes), Some(old)) = (
            &base_bytes,
            base_identity(base.as_ref(), base_bytes.as_deref()),
        ) {
            snapshots::save(&dir.join(snapshots::SNAPSHOTS), &old.0, old.1, bytes)?;
        }
        if let Ok(mut cache) = self.metas.lock() {
            for (name, _, entries) in &written.metas {
                cache.insert(name.clone(), Some(entries.clone()));
            }
        }
        let bytes = catalog::to_bytes(&written.catalog)?;
        out.catalog = bytes.len() as u64;
        let m = Arc::new(next);
        write_catalog(self, &bytes, m.clone())?;
        Ok((m, out))
    }
}

/// The store id and revision of the catalog (or legacy manifest) being
/// superseded.
fn base_identity(base: Option<&Catalog>, bytes: Option<&[u8]>) -> Option<(String, u64)> {
    if let Some(c) = base {
        return Some((c.store_id.clone(), c.revision));
    }
    let m = snapshots::parse_legacy(bytes?)?;
    Some((m.store_id, m.revision))
}
