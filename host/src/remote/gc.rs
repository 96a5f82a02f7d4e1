//! Garbage collection of a host's folder, after each publish, with the
//! store's snapshot grace: a catalog snapshot is deleted once it was
//! superseded (the next snapshot's upload) more than the grace ago; a
//! generation once no kept snapshot names it and it is older than the grace;
//! a segment once the current catalog does not list it and it is older than
//! the grace. So a cursor stays servable for the grace, as locally.

use super::{Remote, RemoteError};
use object_store::path::Path as ObjPath;
use object_store::{ObjectMeta, ObjectStoreExt};
use recall_core::layout::{self, bucket};
use recall_core::Manifest;
use std::collections::HashSet;

/// What a collection deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    /// Snapshots deleted.
    pub snapshots: usize,
    /// Generations deleted.
    pub generations: usize,
    /// Segments deleted.
    pub segments: usize,
}

async fn list(remote: &Remote, dir: &str) -> Result<Vec<ObjectMeta>, RemoteError> {
    Ok(remote
        .store
        .list_with_delimiter(Some(&ObjPath::from(dir)))
        .await?
        .objects)
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Collects host `id`'s folder, whose current catalog is `current` with
/// `segments` listed.
pub async fn collect(
    remote: &Remote,
    id: &str,
    current: &Manifest,
    segments: &[String],
    grace_ms: i64,
) -> Result<GcReport, RemoteError> {
    let p = &remote.prefix;
    let horizon = wall_ms() - grace_ms;
    let mut report = GcReport::default();
    let current_name =
        layout::snapshot_name(&current.store_id, current.revision).unwrap_or_default();
    // Snapshots, oldest upload first; each is superseded by the next one.
    let dir = bucket::key(p, id, layout::SNAPSHOTS);
    let mut snaps = list(remote, &dir).await?;
    snaps.sort_by_key(|m| m.last_modified);
    let mut kept = Vec::new();
    for (i, m) in snaps.iter().enumerate() {
        let name = m.location.filename().unwrap_or_default().to_string();
        let superseded = snaps.get(i + 1).map(|n| n.last_modified.timestamp_millis());
        let expired = name != current_name && superseded.is_some_and(|t| t <= horizon);
        if expired {
            remote.store.delete(&m.location).await?;
            report.snapshots += 1;
        } else if name != current_name {
            kept.push(m.location.clone());
        }
    }
    // Generations some kept snapshot still names.
    let mut live: HashSet<String> = current
        .sessions
        .values()
        .map(|e| e.generation_file.clone())
        .collect();
    for loc in kept {
        let bytes = remote.store.get(&loc).await?.bytes().await?;
        match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) => live.extend(m.sessions.into_values().map(|e| e.generation_file)),
            // Unreadable: keep every generation this time.
            Err(_) => return Ok(report),
        }
    }
    for m in list(remote, &bucket::key(p, id, layout::GENERATIONS)).await? {
        let name = m.location.filename().unwrap_or_default();
        if !live.contains(name) && m.last_modified.timestamp_millis() <= horizon {
            remote.store.delete(&m.location).await?;
            report.generations += 1;
        }
    }
    let listed: HashSet<&String> = segments.iter().collect();
    for m in list(remote, &bucket::key(p, id, layout::SEGMENTS)).await? {
        let name = m.location.filename().unwrap_or_default().to_string();
        if !listed.contains(&name) && m.last_modified.timestamp_millis() <= horizon {
            remote.store.delete(&m.location).await?;
            report.segments += 1;
        }
    }
    Ok(report)
}
