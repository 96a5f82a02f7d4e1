//! The shard store (DESIGN.md §6): `$RECALL_HOME/index/v1/` holding
//! `manifest.json`, `generations/`, `snapshots/`, `segments/` with
//! `segments.json` (the index), `writer.lock` and the indexer's private
//! `indexer.json`.
//!
//! Readers never lock: they read the manifest (replaced by atomic rename)
//! and immutable generation files. Writers write generations first, then
//! publish a manifest under the writer lock through the gate in [`publish`].
//! This type is what the CLI and the HTTP server share: open a store, get
//! the current manifest or a retained snapshot, read a generation's bytes.

pub mod checkpoints;
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

pub use fsutil::{random_hex, wall_ms};
pub use publish::{Batch, Outcome};
pub use state::{IndexerState, SkipReason, SkippedUnit};

use lock::WriterLock;
use manifest::ReadManifest;
use recall_core::model::Manifest;
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
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

fn stamp(path: &Path) -> Option<Stamp> {
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

/// An open store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    generations: PathBuf,
    snapshots: PathBuf,
    cached: Mutex<Option<(Stamp, Arc<Manifest>)>>,
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
        for d in [dir, &generations, &snapshots, &segs] {
            fs::create_dir_all(d).map_err(|e| StoreError::io(d, e))?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            generations,
            snapshots,
            cached: Mutex::new(None),
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
    /// manifest is renamed `manifest.corrupt-<ms>` and replaced by an empty
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
                let name = manifest::quarantine(&self.dir, wall_ms())?;
                if let Ok(mut q) = self.quarantined.lock() {
                    q.push(name);
                }
                let mut fresh = Manifest::empty(random_hex(12), 0);
                fresh.revision = 1;
                fresh.updated_at_ms = wall_ms();
                manifest::write(&self.dir, &manifest::to_bytes(&fresh)?)?;
                Ok(Arc::new(fresh))
            }
        }
    }

    /// Reads the manifest without locking, reusing the parsed copy while
    /// the file is unchanged.
    pub(crate) fn load(&self) -> Result<Loaded, StoreError> {
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

    /// Caches `m` as the manifest whose file has `meta` (being written under
    /// the lock).
    pub(crate) fn remember(&self, meta: &fs::Metadata, m: Arc<Manifest>) {
        if let Ok(mut guard) = self.cached.lock() {
            *guard = Some((stamp_of(meta), m));
        }
    }

    /// The exact bytes of the current manifest (`None` before the first publish).
    pub fn manifest_bytes(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.dir.join(manifest::MANIFEST);
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
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
        let m = Arc::new(snapshots::load(&self.snapshots, store_id, revision)?);
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
        let revision = match manifest::read(&self.dir)? {
            ReadManifest::Ok(m, _) => m.revision,
            _ => 0,
        };
        let mut fresh = Manifest::empty(random_hex(12), 0);
        // The new store id expires every cursor anyway, so a store at the
        // largest revision starts again from 1 (it never overflows).
        fresh.revision = revision.checked_add(1).unwrap_or(1);
        fresh.updated_at_ms = wall_ms();
        manifest::write(&self.dir, &manifest::to_bytes(&fresh)?)?;
        let _ = fs::remove_file(self.dir.join(state::STATE));
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
        let sdir = self.dir.join(segments::SEGMENTS);
        if let Ok(rd) = fs::read_dir(&sdir) {
            for ent in rd.flatten() {
                let p = ent.path();
                fs::remove_file(&p).map_err(|e| StoreError::io(&p, e))?;
            }
        }
        if let Ok(mut c) = self.snapshot_cache.lock() {
            c.clear();
        }
        Ok(Arc::new(fresh))
    }
}
