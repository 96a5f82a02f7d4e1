//! The local cache of other hosts' objects (`<store>/remote-cache/<host-id>/`):
//! one folder per host, so a host is only ever answered from objects fetched
//! from its own prefix (naming another host's segment in a catalog makes
//! nothing available). Files are named by content (generations, segments)
//! or by store id and revision (catalog snapshots), and checked on every
//! read from disk, so a torn or foreign file is fetched again, never
//! trusted: a generation against its content hash, a snapshot by parsing
//! it, a segment by `Segment::open` through a memory map and
//! `Segment::verify` (every block's CRC-32, and structure; its content hash
//! only when fetched: the cache writes only bytes whose hash matched, and
//! hashing 75 MB of cached segments per search was most of a warm search's
//! time). A fetched object streams to a temp
//! file, hashed on the way and bounded by its kind ([`Kind::max_bytes`]; a
//! generation also by the size its snapshot entry gives), so no object is
//! held whole in memory before it is known to be what its name says; when
//! the disk will not take it, it is fetched into memory instead (still
//! bounded) and not cached. A long-lived reader adds a [`Memo`]:
//! segments and snapshots verified once, then reused from memory. It counts
//! what one search fetched from the bucket ([`Fetched`]) and what it verified
//! ([`Verified`]), and is kept under a size cap ([`Cache::prune`]): least
//! recently used first (a read touches the file), objects the current
//! catalogs reference last.

use super::fetch::{self, Failure, Kind, StreamError};
use super::memo::{Memo, Verified};
use super::{Remote, RemoteError};
use crate::store::random_hex;
use crate::store::segments;
use recall_core::layout::{self, bucket, host as in_host, HostCatalog};
use recall_core::{Manifest, Segment};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fs;
use std::io::Write;
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

    fn count(&self, kind: Option<Kind>, bytes: u64) {
        let mut f = self.fetched.lock().unwrap_or_else(|p| p.into_inner());
        f.requests += 1;
        f.bytes += bytes;
        match kind {
            None => f.listings += 1,
            Some(Kind::Catalog) => f.catalogs += 1,
            Some(Kind::Snapshot) => f.snapshots += 1,
            Some(Kind::Segment) => f.segments += 1,
            Some(Kind::Generation) => f.generations += 1,
        }
    }

    /// One object into memory, at most `bound` bytes (counted).
    async fn get(
        &self,
        remote: &Remote,
        key: &str,
        kind: Kind,
        bound: u64,
    ) -> Result<Vec<u8>, Failure> {
        let r = fetch::get(remote, key, kind, bound).await;
        self.count(Some(kind), r.as_ref().map_or(0, |b| b.len() as u64));
        r
    }

    /// The folder of one host's files (`host` is a host id: checked).
    fn host_dir(&self, host: &str) -> Result<PathBuf, Failure> {
        if !layout::is_host_id(host) {
            return Err(Failure::Corrupt(format!("bad host id {host:?}")));
        }
        Ok(self.dir.join(host))
    }

    /// One object streamed to a temp file in `dir`, hashed on the way, at
    /// most `bound` bytes (counted); into memory when the disk will not
    /// take it (a full disk, a read-only cache).
    async fn download(
        &self,
        remote: &Remote,
        dir: &Path,
        key: &str,
        kind: Kind,
        bound: u64,
    ) -> Result<Downloaded, Failure> {
        let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), random_hex(8)));
        let file = fs::create_dir_all(dir).and_then(|_| {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
        });
        if let Ok(file) = file {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            let (mut hash, mut got) = (Sha256::new(), 0u64);
            let r = fetch::stream(remote, key, kind, bound, |c| {
                got += c.len() as u64;
                hash.update(c);
                out.write_all(c)
            })
            .await;
            let flushed = r.and_then(|len| {
                out.flush().map_err(StreamError::Local)?;
                Ok(len)
            });
            self.count(Some(kind), got);
            match flushed {
                Ok(_) => {
                    return Ok(Downloaded {
                        body: Body::File(tmp),
                        hash16: hex16(&hash.finalize()),
                    })
                }
                Err(e) => {
                    let _ = fs::remove_file(&tmp);
                    if let StreamError::Remote(f) = e {
                        return Err(f);
                    }
                }
            }
        }
        let b = self.get(remote, key, kind, bound).await?;
        Ok(Downloaded {
            hash16: recall_core::naming::hash16(&b),
            body: Body::Memory(b),
        })
    }

    /// [`Cache::download`] of an object named by content (`<hash16>.<ext>`):
    /// bytes that do not hash to `name` are dropped and the host is corrupt.
    async fn named(
        &self,
        remote: &Remote,
        dir: &Path,
        key: &str,
        kind: Kind,
        bound: u64,
        name: &str,
    ) -> Result<Body, Failure> {
        let got = self.download(remote, dir, key, kind, bound).await?;
        if name.split_once('.').map(|(hash, _)| hash) != Some(got.hash16.as_str()) {
            got.body.discard();
            return Err(Failure::Corrupt(format!(
                "{name}: its bytes do not match its name"
            )));
        }
        Ok(got.body)
    }

    /// Puts a verified download under its name in `dir` (best effort: a
    /// failed write only costs a fetch next time).
    fn keep(&self, body: &Body, dir: &Path, file: &str) {
        match body {
            Body::File(tmp) => {
                if fs::rename(tmp, dir.join(file)).is_err() {
                    let _ = fs::remove_file(tmp);
                }
            }
            Body::Memory(b) => self.write(dir, file, b),
        }
    }

    /// The host ids under the prefix (one listing, counted).
    pub async fn host_ids(&self, remote: &Remote) -> Result<Vec<String>, RemoteError> {
        self.count(None, 0);
        super::fetch::host_ids(remote).await
    }

    /// A host's current catalog (always fetched: it is what moves).
    pub async fn catalog(&self, remote: &Remote, id: &str) -> Result<HostCatalog, Failure> {
        let key = bucket::key(&remote.prefix, id, in_host::CATALOG);
        let bytes = self
            .get(remote, &key, Kind::Catalog, Kind::Catalog.max_bytes())
            .await?;
        fetch::parse_catalog(&bytes)
    }

    fn read(&self, dir: &Path, file: &str) -> Option<Vec<u8>> {
        let path = dir.join(file);
        let b = fs::read(&path).ok()?;
        touch(&path);
        Some(b)
    }

    /// Best effort: a failed write only costs a fetch next time.
    fn write(&self, dir: &Path, file: &str, bytes: &[u8]) {
        let _ = fs::create_dir_all(dir);
        let tmp = dir.join(format!(".tmp-{}-{file}", std::process::id()));
        // A full disk fails the write part-way: never leave the stub behind.
        let kept = fs::write(&tmp, bytes).is_ok() && fs::rename(&tmp, dir.join(file)).is_ok();
        if !kept {
            let _ = fs::remove_file(&tmp);
        }
    }

    /// A host's generation, verified against its content name. `claimed`
    /// is the size the host's snapshot gives it (0 = not given): an object
    /// that weighs more is refused before its body is read.
    pub async fn generation(
        &self,
        remote: &Remote,
        host: &str,
        name: &str,
        claimed: u64,
    ) -> Result<Vec<u8>, Failure> {
        let dir = self.host_dir(host)?;
        let Some(stem) = name
            .strip_suffix(".json")
            .filter(|_| layout::is_generation_name(name))
        else {
            return Err(Failure::Corrupt(format!("bad generation name {name}")));
        };
        if let Some(b) = self
            .read(&dir, name)
            .filter(|b| recall_core::naming::hash16(b) == stem)
        {
            return Ok(b);
        }
        let max = Kind::Generation.max_bytes();
        let bound = if claimed > 0 { claimed.min(max) } else { max };
        let key = bucket::key(&remote.prefix, host, &in_host::generation(name));
        let body = self
            .named(remote, &dir, &key, Kind::Generation, bound, name)
            .await?;
        let bytes = match &body {
            Body::File(tmp) => fs::read(tmp).map_err(|e| {
                body.discard();
                Failure::Unreachable(format!("{name}: the cache: {e}"))
            })?,
            Body::Memory(b) => b.clone(),
        };
        self.keep(&body, &dir, name);
        Ok(bytes)
    }

    /// A host's segment: from the memo, else the disk cache (opened and
    /// every block checked: a cached copy that fails is fetched again), else
    /// fetched (its content hash checked, then opened and written to the
    /// cache).
    pub async fn segment(
        &self,
        remote: &Remote,
        host: &str,
        name: &str,
    ) -> Result<Arc<Segment>, Failure> {
        let dir = self.host_dir(host)?;
        if !layout::is_segment_name(name) {
            return Err(Failure::Corrupt(format!("bad segment name {name}")));
        }
        if let Some(seg) = self.memo.as_ref().and_then(|m| m.segment(host, name)) {
            return Ok(seg);
        }
        let cached = segments::open(&dir, name)
            .ok()
            .filter(|seg| seg.verify().is_ok())
            .inspect(|seg| {
                touch(&dir.join(name));
                self.verifying(Some(seg.bytes().len()));
            });
        let seg = match cached {
            Some(seg) => Arc::new(seg),
            None => {
                let key = bucket::key(&remote.prefix, host, &in_host::segment(name));
                let bound = Kind::Segment.max_bytes();
                let body = self
                    .named(remote, &dir, &key, Kind::Segment, bound, name)
                    .await?;
                let corrupt = |e: String| Failure::Corrupt(format!("{name}: {e}"));
                let seg = match body {
                    Body::Memory(b) => {
                        self.verifying(Some(b.len()));
                        let seg = Segment::open(b).map_err(|e| corrupt(e.to_string()))?;
                        self.write(&dir, name, seg.bytes());
                        seg
                    }
                    file @ Body::File(_) => {
                        // Renamed into place, then mapped: the segment is
                        // never copied into memory.
                        self.keep(&file, &dir, name);
                        let seg = segments::open(&dir, name).map_err(|e| {
                            let _ = fs::remove_file(dir.join(name));
                            corrupt(e)
                        })?;
                        self.verifying(Some(seg.bytes().len()));
                        seg
                    }
                };
                Arc::new(seg)
            }
        };
        if let Some(m) = &self.memo {
            m.put_segment(host, name, seg.clone());
        }
        Ok(seg)
    }

    /// The cache file of a host's catalog snapshot, in the host's folder.
    pub fn snapshot_file(store_id: &str, revision: u64) -> String {
        format!("{store_id}-{revision}.json")
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
        let dir = self.host_dir(host)?;
        let Some(snapshot) = in_host::snapshot(store_id, revision) else {
            return Err(Failure::Corrupt(format!("bad store id {store_id}")));
        };
        if let Some(m) = self
            .memo
            .as_ref()
            .and_then(|m| m.snapshot(host, store_id, revision))
        {
            return Ok(m);
        }
        let file = Cache::snapshot_file(store_id, revision);
        let parse = |b: &[u8]| {
            self.verifying(None);
            serde_json::from_slice::<Manifest>(b)
                .ok()
                .filter(|m| m.store_id == store_id && m.revision == revision)
        };
        let m = match self.read(&dir, &file).and_then(|b| parse(&b)) {
            Some(m) => Arc::new(m),
            None => {
                let key = bucket::key(&remote.prefix, host, &snapshot);
                let bound = Kind::Snapshot.max_bytes();
                let got = self
                    .download(remote, &dir, &key, Kind::Snapshot, bound)
                    .await?;
                let parsed = match &got.body {
                    Body::File(tmp) => fs::read(tmp).ok().and_then(|b| parse(&b)),
                    Body::Memory(b) => parse(b),
                };
                let Some(m) = parsed else {
                    got.body.discard();
                    return Err(Failure::Corrupt(format!(
                        "catalog snapshot {store_id}-{revision} does not parse or names another revision"
                    )));
                };
                self.keep(&got.body, &dir, &file);
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
    /// reference, as `<host-id>/<file>`) before any in it; a file in `keep`
    /// goes only when the rest is not enough. Files outside a host folder
    /// (an older layout, strays) are never referenced. Leftover temporary
    /// files of other processes older than a minute go too. Best effort: a
    /// file that cannot be removed is skipped.
    pub fn prune(&self, cap: u64, keep: &HashSet<String>) -> Pruned {
        let mut files = Vec::new();
        let now = SystemTime::now();
        let mut dirs = vec![(String::new(), self.dir.clone())];
        while let Some((rel, dir)) = dirs.pop() {
            let Ok(listing) = fs::read_dir(&dir) else {
                continue;
            };
            for e in listing.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                let name = e.file_name().to_string_lossy().into_owned();
                if meta.is_dir() && rel.is_empty() && layout::is_host_id(&name) {
                    dirs.push((format!("{name}/"), e.path()));
                    continue;
                }
                if !meta.is_file() {
                    continue;
                }
                let at = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if name.starts_with(".tmp-") {
                    let old = now.duration_since(at).is_ok_and(|d| d.as_secs() > 60);
                    if old {
                        let _ = fs::remove_file(e.path());
                    }
                    continue;
                }
                let name = format!("{rel}{name}");
                files.push((keep.contains(&name), at, name, meta.len()));
            }
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

/// A fetched object in its temp file, or in memory when the disk would not
/// take it.
enum Body {
    File(PathBuf),
    Memory(Vec<u8>),
}

impl Body {
    /// Drops a download that failed its check.
    fn discard(&self) {
        if let Body::File(tmp) = self {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// What [`Cache::download`] fetched, and the hash16 of its bytes.
struct Downloaded {
    body: Body,
    hash16: String,
}

/// `recall_core::naming::hash16`'s form of a SHA-256 digest: its first 8
/// bytes as 16 lowercase hex digits.
fn hex16(digest: &[u8]) -> String {
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    format!("{:016x}", u64::from_be_bytes(first))
}

/// Least recently used = oldest modification time: a read is a use.
fn touch(path: &Path) {
    if let Ok(f) = fs::OpenOptions::new().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// The cache files a host's current catalog references, as
/// `<host-id>/<file>`: its snapshot, its segments and the generations the
/// snapshot names (`prune`'s `keep`).
pub fn referenced(host: &str, manifest: &Manifest, segments: &[String]) -> Vec<String> {
    let snap = Cache::snapshot_file(&manifest.store_id, manifest.revision);
    std::iter::once(snap)
        .chain(segments.iter().cloned())
        .chain(
            manifest
                .sessions
                .values()
                .map(|e| e.generation_file.clone()),
        )
        .map(|file| format!("{host}/{file}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex16_is_the_naming_hash16() {
        use sha2::Digest;
        for b in [&b""[..], b"abc", &[0u8; 300][..]] {
            let d = sha2::Sha256::digest(b);
            assert_eq!(super::hex16(&d), recall_core::naming::hash16(b));
        }
    }
}
