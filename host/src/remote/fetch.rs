//! Reading other hosts: their ids (folders under `<prefix>/hosts/`), their
//! catalogs, and single objects with the failure kinds a reader reports.
//! Catalog snapshots and content-named objects go through the local cache
//! (`cache.rs`), which also counts what a search fetched.

use super::{Remote, RemoteError};
use object_store::path::Path as ObjPath;
use object_store::ObjectStoreExt;
use recall_core::layout::{self, bucket, host, HostCatalog};

pub use super::cache::{Cache, Fetched, CACHE_DIR};

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
    let dir = ObjPath::from(bucket::hosts(&remote.prefix));
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
pub async fn catalog(remote: &Remote, id: &str) -> Result<HostCatalog, Failure> {
    let bytes = get(remote, &bucket::key(&remote.prefix, id, host::CATALOG)).await?;
    parse_catalog(&bytes)
}

/// Parses and checks `catalog.json`.
pub fn parse_catalog(bytes: &[u8]) -> Result<HostCatalog, Failure> {
    let c: HostCatalog = serde_json::from_slice(bytes)
        .map_err(|e| Failure::Corrupt(format!("catalog.json: {e}")))?;
    if c.schema != 1 || !layout::is_store_id(&c.store_id) {
        return Err(Failure::Corrupt(
            "catalog.json: unknown schema or store id".into(),
        ));
    }
    Ok(c)
}
