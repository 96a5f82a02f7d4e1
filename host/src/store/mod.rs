//! The shard store (DESIGN.md §6): `$RECALL_HOME/index/v1/` holding
//! `catalog.json` with `metas/` (the manifest, split: see [`catalog`]),
//! `generations/`, `snapshots/` (superseded catalogs), `segments/` with
//! `segments.json` (the index), `writer.lock` and the indexer's private
//! `indexer.json`. A store from before the split has `manifest.json`
//! instead: it is read as it is and converted by the first publish.
//!
//! Readers never lock and never write: they read the catalog (replaced by
//! atomic rename), the immutable metas it names and immutable generation
//! files. Writers write generations first, then publish under the writer
//! lock through the gate in [`publish`]. This type is what the CLI and the
//! HTTP server share: open a store, get the current manifest or a retained
//! snapshot, read a generation's bytes.

pub mod catalog;
pub mod checkpoints;
mod commit;
mod fsutil;
pub mod generations;
pub mod lock;
pub mod manifest;
pub mod policy;
pub mod publish;
mod repair;
pub mod retention;
pub mod segments;
pub mod snapshots;
pub mod state;

pub use fsutil::{random_hex, wall_ms, write_replace};
pub use publish::{Batch, Outcome};
pub use state::{IndexerState, SkipReason, SkippedUnit};

use lock::WriterLock;
use manifest::ReadManifest;
use recall_core::model::{Manifest, ManifestEntry};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Another writer held the lock for longer than we waited.
    #[error("the store is busy: another recall is publishing")]
    Busy,
    /// A generation name that is not `<16 hex>.json`.
    #[error("not a generation file name: {0:?}")]
    BadName(String),
    /// The manifest was written by a newer recall; an older one never overwrites it.
    #[error(
        "the store was written by a newer recall (parser version {found}, this one is {ours})"
    )]
    NewerParser {
        /// The manifest's parser version.
        found: u32,
        /// Ours.
        ours: u32,
    },
    /// The store was cleared or rebuilt while this writer was working.
    #[error("the store was cleared or rebuilt meanwhile; sweep again")]
    StoreChanged,
    /// Serialization failed.
    #[error("cannot serialize: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    pub(crate) fn io(path: &Path, source: io::Error) -> StoreError {
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// `$RECALL_HOME` when set, else `<home>/.recall`.
pub fn recall_home(home: &Path, env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    env("RECALL_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home.join(".recall"), PathBuf::from)
}

/// The store folder inside a recall home.
pub fn store_dir(recall_home: &Path) -> PathBuf {
    recall_home.join("index").join("v1")
}

/// What identifies one version of the manifest file on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

pub(crate) fn stamp(path: &Path) -> Option<Stamp> {
    fs::metadata(path).ok().map(|m| stamp_of(&m))
}

fn stamp_of(m: &fs::Metadata) -> Stamp {
    Stamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    }
}

/// The current manifest's JSON bytes, by store id and revision.
type ManifestJson = (String, u64, Arc<Vec<u8>>);

/// An open store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    generations: PathBuf,
    snapshots: PathBuf,
    cached: Mutex<Option<(Stamp, Arc<Manifest>)>>,
    /// `None`: a meta one manifest was assembled from, not kept (the cache
    /// takes a meta the second time: see [`Store::assemble`]).
    metas: Mutex<std::collections::HashMap<String, Option<catalog::Entries>>>,
    manifest_json: Mutex<Option<ManifestJson>>,
    snapshot_cache: Mutex<Vec<Arc<Manifest>>>,
    quarantined: Mutex<Vec<String>>,
    segment_cache: Mutex<segments::SegmentCache>,
    lock_timeout: Duration,
    /// Fsync generation bodies before naming them (on by default).
    pub sync_generations: bool,
}

/// The manifest as found on disk.
#[derive(Debug)]
pub(crate) enum Loaded {
    /// None yet.
    Missing,
    /// A valid one.
    Ok(Arc<Manifest>),
    /// Unreadable as a manifest.
    Corrupt,
}

/// Snapshots kept parsed in memory.
const SNAPSHOT_CACHE: usize = 4;

impl Store {
    /// Opens (creating the folders of) the store at `dir`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let generations = dir.join(generations::GENERATIONS);
        let snapshots = dir.join(snapshots::SNAPSHOTS);
        let segs = dir.join(segments::SEGMENTS);
        let metas = dir.join(catalog::METAS);
        for d in [dir, &generations, &snapshots, &segs, &metas] {
            fs::create_dir_all(d).map_err(|e| StoreError::io(d, e))?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            generations,
            snapshots,
            cached: Mutex::new(None),
            metas: Mutex::new(Default::default()),
            manifest_json: Mutex::new(None),
            snapshot_cache: Mutex::new(Vec::new()),
            quarantined: Mutex::new(Vec::new()),
            segment_cache: Mutex::new(segments::SegmentCache::default()),
            lock_timeout: Duration::from_secs(60),
            sync_generations: true,
        })
    }

    /// The store folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The generations folder.
    pub fn generations_dir(&self) -> &Path {
        &self.generations
    }

    /// Takes the writer lock.
    pub fn lock(&self) -> Result<WriterLock, StoreError> {
        WriterLock::acquire(&self.dir, self.lock_timeout)
    }

    /// The current manifest (cached until the file changes). No manifest
    /// yet ⇒ an empty one with revision 0 and no store id. A corrupt
    /// catalog (one that does not parse, or names a meta that is missing or
    /// altered) is renamed `catalog.corrupt-<ms>` and replaced by an empty
    /// one with a new store id; the next sweep rebuilds it from the sources.
    pub fn current(&self) -> Result<Arc<Manifest>, StoreError> {
        match self.load()? {
            Loaded::Missing => Ok(Arc::new(Manifest::empty(String::new(), 0))),
            Loaded::Ok(m) => Ok(m),
            Loaded::Corrupt => {
                let _lock = self.lock()?;
                // Another writer may have repaired it meanwhile.
                if !matches!(self.load()?, Loaded::Corrupt) {
                    drop(_lock);
                    return self.current();
                }
                let file = if self.dir.join(catalog::CATALOG).exists() {
                    catalog::CATALOG
                } else {
                    manifest::MANIFEST
                };
                let name = manifest::quarantine(&self.dir, file, wall_ms())?;
                if let Ok(mut q) = self.quarantined.lock() {
                    q.push(name);
                }
                let fresh = self.write_empty(random_hex(12), 1)?;
                Ok(fresh)
            }
        }
    }

    /// Reads the manifest without locking or writing, reusing the parsed
    /// copy while `catalog.json` is unchanged: the catalog, then the metas
    /// it names (parsed once per process each). No catalog ⇒ the legacy
    /// `manifest.json`, if any.
    pub(crate) fn load(&self) -> Result<Loaded, StoreError> {
        let path = self.dir.join(catalog::CATALOG);
        let st = stamp(&path);
        if let (Some(st), Ok(guard)) = (st, self.cached.lock()) {
            if let Some((s, m)) = guard.as_ref() {
                if *s == st {
                    return Ok(Loaded::Ok(m.clone()));
                }
            }
        }
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return self.load_legacy(),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let Ok(cat) = catalog::parse(&bytes) else {
            return Ok(Loaded::Corrupt);
        };
        let Ok(m) = self.assemble(&cat) else {
            return Ok(Loaded::Corrupt);
        };
        let m = Arc::new(m);
        if let Ok(mut metas) = self.metas.lock() {
            metas.retain(|k, _| cat.metas.iter().any(|r| r.name == *k));
        }
        if let (Some(st), Ok(mut guard)) = (st, self.cached.lock()) {
            *guard = Some((st, m.clone()));
        }
        Ok(Loaded::Ok(m))
    }

    /// A store from before the catalog: `manifest.json` as it is.
    fn load_legacy(&self) -> Result<Loaded, StoreError> {
        let path = self.dir.join(manifest::MANIFEST);
        let st = stamp(&path);
        if let (Some(st), Ok(guard)) = (st, self.cached.lock()) {
            if let Some((s, m)) = guard.as_ref() {
                if *s == st {
                    return Ok(Loaded::Ok(m.clone()));
                }
            }
        }
        Ok(match manifest::read(&self.dir)? {
            ReadManifest::Missing => Loaded::Missing,
            ReadManifest::Corrupt(_) => Loaded::Corrupt,
            ReadManifest::Ok(m, _) => {
                let m = Arc::new(m);
                if let (Some(st), Ok(mut guard)) = (st, self.cached.lock()) {
                    *guard = Some((st, m.clone()));
                }
                Loaded::Ok(m)
            }
        })
    }

    /// A meta's entries (cached by name); one that is missing or does not
    /// match its name is an error.
    pub(crate) fn meta(&self, name: &str) -> Result<catalog::Entries, String> {
        if let Some(e) = self
            .metas
            .lock()
            .ok()
            .and_then(|m| m.get(name).cloned().flatten())
        {
            return Ok(e);
        }
        let entries = Arc::new(self.parse_meta_file(name)?);
        if let Ok(mut m) = self.metas.lock() {
            m.insert(name.to_string(), Some(entries.clone()));
        }
        Ok(entries)
    }

    /// Reads and parses `metas/<name>`, uncached.
    fn parse_meta_file(&self, name: &str) -> Result<BTreeMap<String, ManifestEntry>, String> {
        if !catalog::is_meta_name(name) {
            return Err(format!("not a meta name: {name:?}"));
        }
        let path = self.dir.join(catalog::METAS).join(name);
        let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        catalog::parse_meta(name, &bytes)
    }

    /// The manifest a catalog describes.
    ///
    /// A meta is kept in the cache from the second manifest that needs it
    /// on: a one-shot command parses each meta once and moves its entries
    /// (copying 20,000 entries was an eighth of a search at 10 GB), a
    /// daemon keeps the metas that outlive a catalog change.
    pub(crate) fn assemble(&self, cat: &catalog::Catalog) -> Result<Manifest, String> {
        catalog::assemble(cat, |n| {
            // Seen before (kept or not): keep it; else note it and move.
            let seen = self.metas.lock().map(|mut m| match m.get(n) {
                Some(_) => true,
                None => {
                    m.insert(n.to_string(), None);
                    false
                }
            });
            if seen.unwrap_or(false) {
                return self.meta(n).map(catalog::MetaEntries::Shared);
            }
            self.parse_meta_file(n).map(catalog::MetaEntries::Owned)
        })
    }

    /// Caches `m` as the manifest whose file has `meta` (being written under
    /// the lock).
    pub(crate) fn remember(&self, meta: &fs::Metadata, m: Arc<Manifest>) {
        if let Ok(mut guard) = self.cached.lock() {
            *guard = Some((stamp_of(meta), m));
        }
    }

    /// The current manifest as `manifest.json` bytes (the shape the
    /// browser reads; `None` before the first publish). Serialized from the
    /// assembled manifest once per revision.
    pub fn manifest_bytes(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let m = match self.load()? {
            Loaded::Missing => return Ok(None),
            Loaded::Ok(m) => m,
            Loaded::Corrupt => self.current()?,
        };
        if let Ok(guard) = self.manifest_json.lock() {
            if let Some((id, rev, b)) = guard.as_ref() {
                if *id == m.store_id && *rev == m.revision {
                    return Ok(Some(b.to_vec()));
                }
            }
        }
        let bytes = manifest::to_bytes(&m)?;
        if let Ok(mut guard) = self.manifest_json.lock() {
            *guard = Some((m.store_id.clone(), m.revision, Arc::new(bytes.clone())));
        }
        Ok(Some(bytes))
    }

    /// Names of manifests this handle quarantined (drained).
    pub fn take_quarantined(&self) -> Vec<String> {
        self.quarantined
            .lock()
            .map(|mut q| std::mem::take(&mut *q))
            .unwrap_or_default()
    }

    /// A manifest snapshot by store id and revision: the current one, or a
    /// superseded one still retained in `snapshots/`.
    pub fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        if let Ok(cur) = self.current() {
            if cur.store_id == store_id && cur.revision == revision {
                return Some(cur);
            }
        }
        if let Ok(cache) = self.snapshot_cache.lock() {
            if let Some(m) = cache
                .iter()
                .find(|m| m.store_id == store_id && m.revision == revision)
            {
                return Some(m.clone());
            }
        }
        let bytes = snapshots::load_bytes(&self.snapshots, store_id, revision)?;
        let m = match catalog::parse(&bytes) {
            Ok(cat) => self.assemble(&cat).ok()?,
            Err(_) => snapshots::parse_legacy(&bytes)?,
        };
        if m.store_id != store_id || m.revision != revision {
            return None;
        }
        let m = Arc::new(m);
        if let Ok(mut cache) = self.snapshot_cache.lock() {
            if cache.len() >= SNAPSHOT_CACHE {
                cache.remove(0);
            }
            cache.push(m.clone());
        }
        Some(m)
    }

    /// The path of a generation file (`None` for a malformed name).
    pub fn generation_path(&self, name: &str) -> Option<PathBuf> {
        generations::path(&self.generations, name)
    }

    /// A generation's bytes.
    pub fn generation_bytes(&self, name: &str) -> Result<Vec<u8>, StoreError> {
        generations::read(&self.generations, name)
    }

    /// Writes a shard body as a generation (if absent); returns its name.
    pub fn write_generation(&self, body: &[u8]) -> Result<String, StoreError> {
        generations::write(&self.generations, body, self.sync_generations)
    }

    /// [`Store::write_generation`] in two steps: the body goes to a temp
    /// file now, [`generations::Pending::commit`] fsyncs and names it later
    /// (a sweep commits on a thread of its own, before the publish that
    /// references it).
    pub fn write_generation_pending(
        &self,
        body: &[u8],
    ) -> Result<generations::Written, StoreError> {
        generations::write_pending(&self.generations, body, self.sync_generations)
    }

    /// Writes the trigram filters of a generation (if absent).
    pub fn write_grams(&self, name: &str, grams: &[u8]) -> Result<(), StoreError> {
        generations::write_grams(&self.generations, name, grams)
    }

    /// The verified trigram filter bytes of a generation, if present.
    pub fn grams_bytes(&self, name: &str) -> Option<Vec<u8>> {
        generations::read_grams(&self.generations, name)
    }

    /// The indexer's bookkeeping for the current store.
    pub fn indexer_state(&self) -> Result<IndexerState, StoreError> {
        let cur = self.current()?;
        Ok(state::read(&self.dir, &cur.store_id))
    }

    /// Empties the store: every session, generation and snapshot goes, and
    /// a new store id expires every cursor. Returns the new manifest.
    pub fn clear(&self) -> Result<Arc<Manifest>, StoreError> {
        let _lock = self.lock()?;
        let revision = match self.load()? {
            Loaded::Ok(m) => m.revision,
            _ => 0,
        };
        // The new store id expires every cursor anyway, so a store at the
        // largest revision starts again from 1 (it never overflows).
        let fresh = self.write_empty(random_hex(12), revision.checked_add(1).unwrap_or(1))?;
        remove_files(&self.dir.join(catalog::METAS))?;
        let _ = fs::remove_file(self.dir.join(state::STATE));
        let _ = fs::remove_file(self.dir.join(state::JOURNAL));
        snapshots::remove_all(&self.snapshots)?;
        for ent in fs::read_dir(&self.generations)
            .map_err(|e| StoreError::io(&self.generations, e))?
            .flatten()
        {
            let p = ent.path();
            // A writer's temp file may be renamed or removed meanwhile:
            // gone is what clearing wants.
            match fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(StoreError::io(&p, e))
                }
                _ => {}
            }
        }
        checkpoints::prune(&self.dir, wall_ms(), 0);
        let _ = fs::remove_file(self.dir.join(segments::LIST));
        remove_files(&self.dir.join(segments::SEGMENTS))?;
        if let Ok(mut c) = self.snapshot_cache.lock() {
            c.clear();
        }
        Ok(fresh)
    }

    /// Writes an empty catalog (a new or cleared store) and drops a legacy
    /// manifest; returns the manifest it describes.
    fn write_empty(&self, store_id: String, revision: u64) -> Result<Arc<Manifest>, StoreError> {
        let cat = catalog::empty(store_id, 0, revision, wall_ms());
        let m = Arc::new(
            self.assemble(&cat)
                .unwrap_or_else(|_| Manifest::empty(String::new(), 0)),
        );
        let bytes = catalog::to_bytes(&cat)?;
        commit::write_catalog(self, &bytes, m.clone())?;
        Ok(m)
    }
}

/// Deletes every file in `dir` (a missing folder is fine).
fn remove_files(dir: &Path) -> Result<(), StoreError> {
    if let Ok(rd) = fs::read_dir(dir) {
        for ent in rd.flatten() {
            let p = ent.path();
            match fs::remove_file(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(StoreError::io(&p, e)),
                _ => {}
            }
        }
    }
    Ok(())
}
