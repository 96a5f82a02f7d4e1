//! Reading other hosts: their ids (folders under `<prefix>/hosts/`), their
//! catalogs and catalog snapshots, and content-named objects through a local
//! cache (`<store>/remote-cache/`, verified by name on every read, so a torn
//! or foreign file is fetched again, never trusted).

use super::layout::{self, RemoteCatalog};
use super::{Remote, RemoteError};
use crate::store::segments::segment_name;
use object_store::path::Path as ObjPath;
use object_store::ObjectStoreExt;
use recall_core::naming::generation_file_name;
use recall_core::{Manifest, Segment};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The cache folder inside a store folder.
pub const CACHE_DIR: &str = "remote-cache";

/// Why a host, or one of its objects, could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The object is not there.
    Missing(String),
    /// The object is there but not what its name or format says.
    Corrupt(String),
    /// The bucket did not answer.
    Unreachable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Missing(s) => write!(f, "missing: {s}"),
            Failure::Corrupt(s) => write!(f, "corrupt: {s}"),
            Failure::Unreachable(s) => write!(f, "unreachable: {s}"),
        }
    }
}

/// Fetches one object's bytes.
pub async fn get(remote: &Remote, key: &str) -> Result<Vec<u8>, Failure> {
    let what = key.rsplit('/').next().unwrap_or(key).to_string();
    let r = match remote.store.get(&ObjPath::from(key)).await {
        Ok(r) => r.bytes().await,
        Err(e) => Err(e),
    };
    match r {
        Ok(b) => Ok(b.to_vec()),
        Err(object_store::Error::NotFound { .. }) => Err(Failure::Missing(what)),
        Err(e) => Err(Failure::Unreachable(format!("{what}: {e}"))),
    }
}

/// The host ids under the prefix (folders that are not host ids are skipped).
pub async fn host_ids(remote: &Remote) -> Result<Vec<String>, RemoteError> {
    let dir = ObjPath::from(layout::hosts(&remote.prefix));
    let listed = remote.store.list_with_delimiter(Some(&dir)).await?;
    let mut ids: Vec<String> = listed
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().map(str::to_string))
        .filter(|id| layout::is_host_id(id))
        .collect();
    ids.sort();
    Ok(ids)
}

/// A host's current catalog.
pub async fn catalog(remote: &Remote, id: &str) -> Result<RemoteCatalog, Failure> {
    let bytes = get(remote, &layout::catalog(&remote.prefix, id)).await?;
    let c: RemoteCatalog = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::Corrupt(format!("catalog.json: {e}")))?;
    if c.schema != 1 || !layout::is_store_id(&c.store_id) {
        return Err(Failure::Corrupt(
            "catalog.json: unknown schema or store id".into(),
        ));
    }
    Ok(c)
}

/// The local cache of remote objects.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache of the store folder `store_dir`.
    pub fn new(store_dir: &Path) -> Cache {
        Cache {
            dir: store_dir.join(CACHE_DIR),
        }
    }

    fn read(&self, file: &str) -> Option<Vec<u8>> {
        fs::read(self.dir.join(file)).ok()
    }

    /// Best effort: a failed write only costs a fetch next time.
    fn write(&self, file: &str, bytes: &[u8]) {
        let _ = fs::create_dir_all(&self.dir);
        let tmp = self.dir.join(format!(".tmp-{}-{file}", std::process::id()));
        if fs::write(&tmp, bytes).is_ok() && fs::rename(&tmp, self.dir.join(file)).is_err() {
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
        valid: impl Fn(&[u8]) -> bool,
    ) -> Result<Vec<u8>, Failure> {
        if let Some(b) = self.read(file).filter(|b| valid(b)) {
            return Ok(b);
        }
        let b = get(remote, key).await?;
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
        if !layout::is_generation(name) {
            return Err(Failure::Corrupt(format!("bad generation name {name}")));
        }
        let key = format!("{}/{name}", layout::generations(&remote.prefix, host));
        self.content(remote, &key, name, |b| generation_file_name(b) == name)
            .await
    }

    /// A host's segment, verified against its content name and opened.
    pub async fn segment(
        &self,
        remote: &Remote,
        host: &str,
        name: &str,
    ) -> Result<Arc<Segment>, Failure> {
        if !layout::is_segment_name(name) {
            return Err(Failure::Corrupt(format!("bad segment name {name}")));
        }
        let key = format!("{}/{name}", layout::segments(&remote.prefix, host));
        let b = self
            .content(remote, &key, name, |b| segment_name(b) == name)
            .await?;
        Segment::open(b)
            .map(Arc::new)
            .map_err(|e| Failure::Corrupt(format!("{name}: {e}")))
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
        if !layout::is_store_id(store_id) {
            return Err(Failure::Corrupt(format!("bad store id {store_id}")));
        }
        let file = format!("{host}-{store_id}-{revision}.json");
        let parse = |b: &[u8]| {
            serde_json::from_slice::<Manifest>(b)
                .ok()
                .filter(|m| m.store_id == store_id && m.revision == revision)
        };
        if let Some(m) = self.read(&file).and_then(|b| parse(&b)) {
            return Ok(Arc::new(m));
        }
        let key = layout::snapshot(&remote.prefix, host, store_id, revision);
        let b = get(remote, &key).await?;
        let m = parse(&b).ok_or_else(|| {
            Failure::Corrupt(format!(
                "catalog snapshot {store_id}-{revision} does not parse or names another revision"
            ))
        })?;
        self.write(&file, &b);
        Ok(Arc::new(m))
    }
}
