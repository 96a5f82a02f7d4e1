//! `recall publish`: uploads this host's snapshot under
//! `<prefix>/hosts/<host-id>/`. Objects first (generations, segments — only
//! those not already listed there: content names make uploads idempotent, so
//! a killed publish resumes where it stopped), then the catalog snapshot,
//! then `catalog.json`, which names only objects already uploaded.

use super::hostid::HostIdentity;
use super::local::{self, Kind};
use super::{Remote, RemoteError};
use crate::store::Store;
use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};
use recall_core::layout::{self, bucket, HostCatalog};
use std::collections::HashSet;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// What a publish did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PublishReport {
    /// The host id.
    pub host_id: String,
    /// The host name.
    pub host_name: String,
    /// The store id published.
    pub store_id: String,
    /// Its revision.
    pub revision: u64,
    /// Objects uploaded.
    pub uploaded: usize,
    /// Objects already there.
    pub skipped: usize,
    /// Bytes uploaded (objects and catalog).
    pub bytes: u64,
    /// What the collection after it deleted.
    pub deleted: super::gc::GcReport,
}

/// Names of the objects directly under `dir`.
async fn list_names(remote: &Remote, dir: &str) -> Result<HashSet<String>, RemoteError> {
    let listed = remote
        .store
        .list_with_delimiter(Some(&ObjPath::from(dir)))
        .await?;
    Ok(listed
        .objects
        .into_iter()
        .filter_map(|o| o.location.filename().map(str::to_string))
        .collect())
}

/// Publishes `store`'s current snapshot as host `ident`, at most
/// `concurrency` uploads at a time, then collects what expired past
/// `grace_ms` (`gc.rs`).
pub async fn publish(
    remote: &Remote,
    store: &Store,
    ident: &HostIdentity,
    concurrency: usize,
    now_ms: i64,
    grace_ms: i64,
) -> Result<PublishReport, RemoteError> {
    let snap = local::snapshot(store)?;
    let p = &remote.prefix;
    let have_gen = list_names(remote, &bucket::key(p, &ident.id, layout::GENERATIONS)).await?;
    let have_seg = list_names(remote, &bucket::key(p, &ident.id, layout::SEGMENTS)).await?;
    let mut report = PublishReport {
        host_id: ident.id.clone(),
        host_name: ident.name.clone(),
        store_id: snap.manifest.store_id.clone(),
        revision: snap.manifest.revision,
        ..PublishReport::default()
    };
    let limit = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for o in &snap.objects {
        let (have, dir) = match o.kind {
            Kind::Generation => (&have_gen, bucket::key(p, &ident.id, layout::GENERATIONS)),
            Kind::Segment => (&have_seg, bucket::key(p, &ident.id, layout::SEGMENTS)),
        };
        if have.contains(&o.name) {
            report.skipped += 1;
            continue;
        }
        let key = ObjPath::from(format!("{dir}/{}", o.name));
        let path = o.path.clone();
        let client = remote.store.clone();
        let limit = limit.clone();
        tasks.spawn(async move {
            let _slot = limit
                .acquire_owned()
                .await
                .map_err(|e| RemoteError::Invalid(e.to_string()))?;
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|source| RemoteError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
            let n = bytes.len() as u64;
            client.put(&key, PutPayload::from(bytes)).await?;
            Ok::<u64, RemoteError>(n)
        });
    }
    let mut first_error = None;
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(n)) => {
                report.uploaded += 1;
                report.bytes += n;
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(RemoteError::Invalid(format!("upload task: {e}")));
            }
        }
    }
    if let Some(e) = first_error {
        // Nothing names the uploaded objects yet; the next publish skips them.
        return Err(e);
    }
    let m = &snap.manifest;
    let snapshot = layout::host::snapshot(&m.store_id, m.revision).ok_or_else(|| {
        RemoteError::Invalid(format!("store id {:?} cannot name a snapshot", m.store_id))
    })?;
    let snap_key = bucket::key(p, &ident.id, &snapshot);
    report.bytes += snap.catalog_bytes.len() as u64;
    remote
        .store
        .put(
            &ObjPath::from(snap_key),
            PutPayload::from(snap.catalog_bytes.clone()),
        )
        .await?;
    let catalog = HostCatalog {
        schema: 1,
        name: ident.name.clone(),
        store_id: m.store_id.clone(),
        revision: m.revision,
        segments: snap.segments(),
        published_ms: now_ms,
    };
    let body = serde_json::to_vec(&catalog).map_err(|e| RemoteError::Invalid(e.to_string()))?;
    let segments = catalog.segments.clone();
    report.bytes += body.len() as u64;
    remote
        .store
        .put(
            &ObjPath::from(bucket::key(p, &ident.id, layout::host::CATALOG)),
            PutPayload::from(body),
        )
        .await?;
    report.deleted = super::gc::collect(remote, &ident.id, m, &segments, grace_ms).await?;
    Ok(report)
}
