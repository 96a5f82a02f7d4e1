//! The one place team search reads this host's store layout: "a host
//! snapshot" = its catalog bytes (the whole manifest, as assembled) and the
//! content-named objects they reference (generations, live segments).
//!
//! Files read: `catalog.json` and `metas/*.meta` (through `Store::current`,
//! which assembles the manifest; a legacy `manifest.json` likewise),
//! `segments.json` (through `Store::segment_list`),
//! `generations/<hash16>.json`, `segments/<hash16>.seg`.

use super::RemoteError;
use crate::store::Store;
use recall_core::Manifest;
use std::path::PathBuf;
use std::sync::Arc;

/// What kind of object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A session generation (`<hash16>.json`).
    Generation,
    /// An index segment (`<hash16>.seg`).
    Segment,
}

/// One content-named object of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Its kind.
    pub kind: Kind,
    /// Its content name.
    pub name: String,
    /// Where it is on disk.
    pub path: PathBuf,
}

/// This host's searchable state at one revision.
#[derive(Clone, Debug)]
pub struct HostSnapshot {
    /// The catalog (manifest) it describes.
    pub manifest: Arc<Manifest>,
    /// Its serialized bytes, as uploaded.
    pub catalog_bytes: Vec<u8>,
    /// The generations it references, then the live segments.
    pub objects: Vec<Object>,
}

impl HostSnapshot {
    /// The live segment names.
    pub fn segments(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|o| o.kind == Kind::Segment)
            .map(|o| o.name.clone())
            .collect()
    }
}

/// Reads the store's current snapshot.
pub fn snapshot(store: &Store) -> Result<HostSnapshot, RemoteError> {
    let manifest = store.current()?;
    let catalog_bytes =
        serde_json::to_vec(&*manifest).map_err(|e| RemoteError::Invalid(e.to_string()))?;
    let mut objects = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in manifest.sessions.values() {
        let name = &e.generation_file;
        if !seen.insert(name.clone()) {
            continue;
        }
        let path = store
            .generation_path(name)
            .ok_or_else(|| RemoteError::Invalid(format!("bad generation name {name}")))?;
        objects.push(Object {
            kind: Kind::Generation,
            name: name.clone(),
            path,
        });
    }
    let list = store.segment_list()?;
    if list.store_id == manifest.store_id {
        let dir = store.segments_dir();
        for s in list.segments {
            if recall_core::layout::is_segment_name(&s.name) {
                objects.push(Object {
                    kind: Kind::Segment,
                    path: dir.join(&s.name),
                    name: s.name,
                });
            }
        }
    }
    Ok(HostSnapshot {
        manifest,
        catalog_bytes,
        objects,
    })
}
