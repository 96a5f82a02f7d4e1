//! The local cache of other hosts' objects (`<store>/remote-cache/`): files
//! named by content (generations, segments) or by host, store id and revision
//! (catalog snapshots), checked on every read from disk, so a torn or foreign
//! file is fetched again, never trusted: a generation against its content
//! hash, a snapshot by parsing it, a segment by `Segment::open` (its CRC-32
//! and structure; its content hash only when fetched: the cache writes only
//! bytes whose hash matched, and hashing 75 MB of cached segments per search
//! was most of a warm search's time). A long-lived reader adds a [`Memo`]:
//! segments and snapshots verified once, then reused from memory. It counts
//! what one search fetched from the bucket ([`Fetched`]) and what it verified
//! ([`Verified`]), and is kept under a size cap ([`Cache::prune`]): least
//! recently used first (a read touches the file), objects the current
//! catalogs reference last.

use super::fetch::{get, Failure};
use super::memo::{Memo, Verified};
use super::{Remote, RemoteError};
use crate::store::segments::segment_name;
use recall_core::layout::{self, bucket, host as in_host, HostCatalog};
use recall_core::naming::generation_file_name;
use recall_core::{Manifest, Segment};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The cache folder inside a store folder.
pub const CACHE_DIR: &str = "remote-cache";

/// The default size cap of the cache (`--remote-cache-mb`).
pub const DEFAULT_CAP_BYTES: u64 = 1 << 30;

/// What was fetched from the bucket (object bodies; a listing is a request
/// of no counted bytes). Cache hits are not fetches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Fetched {
    /// Requests sent (GETs and listings, failed ones included).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Host listings.
    pub listings: u64,
    /// Catalogs (`catalog.json`) read.
    pub catalogs: u64,
    /// Catalog snapshots fetched.
    pub snapshots: u64,
    /// Segments fetched.
    pub segments: u64,
    /// Generations fetched.
    pub generations: u64,
}

impl std::fmt::Display for Fetched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests, {} bytes ({} listings, {} catalogs, {} snapshots, {} segments, {} generations)",
            self.requests,
            self.bytes,
            self.listings,
            self.catalogs,
            self.snapshots,
            self.segments,
            self.generations
        )
    }
}

#[derive(Clone, Copy)]
enum What {
    Catalog,
    Snapshot,
    Segment,
    Generation,
}

/// What [`Cache::prune`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Files removed.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The bytes left.
    pub kept_bytes: u64,
}

/// The local cache of remote objects, with the traffic of its owner (one
/// search: every clone shares the counters).
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
    fetched: Arc<Mutex<Fetched>>,
    verified: Arc<Mutex<Verified>>,
    memo: Option<Arc<Memo>>,
}

impl Cache {
    /// The cache of the store folder `store_dir`, with zeroed counters.
    pub fn new(store_dir: &Path) -> Cache {
        Cache {
            dir: store_dir.join(CACHE_DIR),
            fetched: Arc::default(),
            verified: Arc::default(),
            memo: None,
        }
    }

    /// The same cache, with opened segments and parsed snapshots kept in
    /// (and taken from) `memo`.
    pub fn with_memo(mut self, memo: Option<Arc<Memo>>) -> Cache {
        self.memo = memo;
        self
    }

    /// The memo, if this cache has one.
    pub fn memo(&self) -> Option<&Arc<Memo>> {
        self.memo.as_ref()
    }

    /// What was verified through this cache (and its clones) so far.
    pub fn verified(&self) -> Verified {
        *self.verified.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn verifying(&self, segment_bytes: Option<usize>) {
        let mut v = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        match segment_bytes {
            Some(n) => {
                v.segments += 1;
                v.segment_bytes += n as u64;
            }
            None => v.snapshots += 1,
        }
    }

    /// What was fetched through this cache (and its clones) so far.
    pub fn fetched(&self) -> Fetched {
        *self.fetched.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count(&self, what: Option<What>, bytes: Option<usize>) {
        let mut f = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        f.requests += 1;
        f.bytes += bytes.unwrap_or(0) as u64;
        match what {
            None => f.listings += 1,
            Some(What::Catalog) => f.catalogs += 1,
            Some(What::Snapshot) => f.snapshots += 1,
            Some(What::Segment) => f.segments += 1,
            Some(What::Generation) => f.generations += 1,
        }
    }

    async fn get(&self, remote: &Remote, key: &str, what: What) -> Result<Vec<u8>, Failure> {
        let r = get(remote, key).await;
        self.count(Some(what), r.as_ref().ok().map(Vec::len));
        r
    }

    /// The host ids under the prefix (one listing, counted).
    pub async fn host_ids(&self, remote: &Remote) -> Result<Vec<String>, RemoteError> {
        self.count(None, None);
        super::fetch::host_ids(remote).await
    }

    /// A host's current catalog (always fetched: it is what moves).
    pub async fn catalog(&self, remote: &Remote, id: &str) -> Result<HostCatalog, Failure> {
        let bytes = self
            .get(
                remote,
                &bucket::key(&remote.prefix, id, in_host::CATALOG),
                What::Catalog,
            )
            .await?;
        super::fetch::parse_catalog(&bytes)
    }

    fn read(&self, file: &str) -> Option<Vec<u8>> {
        let path = self.dir.join(file);
        let b = fs::read(&path).ok()?;
        // Least recently used = oldest modification time: a read is a use.
        if let Ok(f) = fs::OpenOptions::new().write(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(b)
    }

    /// Best effort: a failed write only costs a fetch next time.
    fn write(&self, file: &str, bytes: &[u8]) {
        let _ = fs::create_dir_all(&self.dir);
        let tmp = self.dir.join(format!(".tmp-{}-{file}", std::process::id()));
        // A full disk fails the write part-way: never leave the stub behind.
        let kept = fs::write(&tmp, bytes).is_ok() && fs::rename(&tmp, self.dir.join(file)).is_ok();
        if !kept {
            let _ = fs::remove_file(&tmp);
        }
    }

    /// Bytes stored under a content name, fetched from `key` when the cache
    /// has no copy that `valid` accepts.
    async fn content(
        &self,
        remote: &Remote,
        key: &str,
        file: &str,
        what: What,
        valid: impl Fn(&[u8]) -> bool,
    ) -> Result<Vec<u8>, Failure> {
        if let Some(b) = self.read(file).filter(|b| valid(b)) {
            return Ok(b);
        }
        let b = self.get(remote, key, what).await?;
        if !valid(&b) {
            return Err(Failure::Corrupt(format!(
                "{file}: its bytes do not match its name"
            )));
        }
        self.write(file, &b);
        Ok(b)
    }

    /// A host's generation, verified against its content name.
    pub async fn generation(
        &self,
        remote: &Remote,
        host: &str,
        name: &str,
    ) -> Result<Vec<u8>, Failure> {
        if !layout::is_generation_name(name) {
            return Err(Failure::Corrupt(format!("bad generation name {name}")));
        }
        let key = bucket::key(&remote.prefix, host, &in_host::generation(name));
        self.content(remote, &key, name, What::Generation, |b| {
            generation_file_name(b) == name
        })
        .await
    }

    /// A host's segment: from the memo, else the disk cache (opened: its CRC
    /// and structure), else fetched (its content hash checked, then opened
    /// and written to the cache).
    pub async fn segment(
        &self,
        remote: &Remote,
        host: &str,
        name: &str,
    ) -> Result<Arc<Segment>, Failure> {
        if !layout::is_segment_name(name) {
            return Err(Failure::Corrupt(format!("bad segment name {name}")));
        }
        if let Some(seg) = self.memo.as_ref().and_then(|m| m.segment(host, name)) {
            return Ok(seg);
        }
        let cached = self.read(name).and_then(|b| {
            self.verifying(Some(b.len()));
            Segment::open(b).ok()
        });
        let seg = match cached {
            Some(seg) => Arc::new(seg),
            None => {
                let key = bucket::key(&remote.prefix, host, &in_host::segment(name));
                let b = self.get(remote, &key, What::Segment).await?;
                if segment_name(&b) != name {
                    return Err(Failure::Corrupt(format!(
                        "{name}: its bytes do not match its name"
                    )));
                }
                self.verifying(Some(b.len()));
                let seg = Segment::open(b).map_err(|e| Failure::Corrupt(format!("{name}: {e}")))?;
                self.write(name, seg.bytes());
                Arc::new(seg)
            }
        };
        if let Some(m) = &self.memo {
            m.put_segment(host, name, seg.clone());
        }
        Ok(seg)
    }

    /// The cache file of a host's catalog snapshot.
    pub fn snapshot_file(host: &str, store_id: &str, revision: u64) -> String {
        format!("{host}-{store_id}-{revision}.json")
    }

    /// A host's catalog snapshot (immutable once written, so cached by
    /// host, store id and revision).
    pub async fn snapshot(
        &self,
        remote: &Remote,
        host: &str,
        store_id: &str,
        revision: u64,
    ) -> Result<Arc<Manifest>, Failure> {
        let Some(snapshot) =
            in_host::snapshot(store_id, revision).filter(|_| layout::is_host_id(host))
        else {
            return Err(Failure::Corrupt(format!("bad store id {store_id}")));
        };
        if let Some(m) = self
            .memo
            .as_ref()
            .and_then(|m| m.snapshot(host, store_id, revision))
        {
            return Ok(m);
        }
        let file = Cache::snapshot_file(host, store_id, revision);
        let parse = |b: &[u8]| {
            self.verifying(None);
            serde_json::from_slice::<Manifest>(b)
                .ok()
                .filter(|m| m.store_id == store_id && m.revision == revision)
        };
        let m = match self.read(&file).and_then(|b| parse(&b)) {
            Some(m) => Arc::new(m),
            None => {
                let key = bucket::key(&remote.prefix, host, &snapshot);
                let b = self.get(remote, &key, What::Snapshot).await?;
                let m = parse(&b).ok_or_else(|| {
                    Failure::Corrupt(format!(
                        "catalog snapshot {store_id}-{revision} does not parse or names another revision"
                    ))
                })?;
                self.write(&file, &b);
                Arc::new(m)
            }
        };
        if let Some(memo) = &self.memo {
            memo.put_snapshot(host, store_id, revision, m.clone());
        }
        Ok(m)
    }

    /// Keeps the cache at most `cap` bytes: removes the least recently used
    /// files first, those not in `keep` (what the current catalogs
    /// reference) before any in it; a file in `keep` goes only when the rest
    /// is not enough. Leftover temporary files of other processes older
    /// than a minute go too. Best effort: a file that cannot be removed is
    /// skipped.
    pub fn prune(&self, cap: u64, keep: &HashSet<String>) -> Pruned {
        let mut files = Vec::new();
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return Pruned::default();
        };
        let now = SystemTime::now();
        for e in dir.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let at = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if name.starts_with(".tmp-") {
                let old = now.duration_since(at).is_ok_and(|d| d.as_secs() > 60);
                if old {
                    let _ = fs::remove_file(e.path());
                }
                continue;
            }
            files.push((keep.contains(&name), at, name, meta.len()));
        }
        let mut total: u64 = files.iter().map(|f| f.3).sum();
        // Unreferenced first, then the oldest use.
        files.sort();
        let mut out = Pruned::default();
        for (_, _, name, len) in files {
            if total <= cap {
                break;
            }
            if fs::remove_file(self.dir.join(&name)).is_ok() {
                total -= len;
                out.files += 1;
                out.bytes += len;
            }
        }
        out.kept_bytes = total;
        out
    }
}

/// The cache files a host's current catalog references: its snapshot, its
/// segments and the generations the snapshot names (`prune`'s `keep`).
pub fn referenced(host: &str, manifest: &Manifest, segments: &[String]) -> Vec<String> {
    let snap = Cache::snapshot_file(host, &manifest.store_id, manifest.revision);
    std::iter::once(snap)
        .chain(segments.iter().cloned())
        .chain(
            manifest
                .sessions
                .values()
                .map(|e| e.generation_file.clone()),
        )
        .collect()
}
