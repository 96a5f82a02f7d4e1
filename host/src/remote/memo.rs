//! The in-memory part of a long-lived team reader (`serve --remote`): other
//! hosts' opened segments (by host and content name) and parsed catalog
//! snapshots (by host, store id and revision), verified once — when fetched
//! or first read from the disk cache — and then reused by every search, so a
//! warm search reads only the listing and the catalogs. Bounded: a host's
//! segments are exactly those its last-read catalog lists (the others are
//! dropped when it moves on), a host keeps its [`SNAPSHOTS`] most recently
//! used snapshots (a cursor page reads an older one), and a host no longer
//! listed under the prefix is forgotten.
//!
//! It also counts what the searches through it verified ([`Verified`]):
//! what a warm search did not have to verify again.

use recall_core::{Manifest, Segment};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

/// Snapshots kept per host.
pub const SNAPSHOTS: usize = 4;

/// What was verified (a segment: its `Segment::open` checks, and its content
/// hash when fetched; a snapshot: parsed and its store id and revision
/// checked). What came from memory is not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// Segments opened (and checked).
    pub segments: u64,
    /// Their bytes.
    pub segment_bytes: u64,
    /// Catalog snapshots parsed.
    pub snapshots: u64,
}

impl std::fmt::Display for Verified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} segments ({} bytes), {} snapshots",
            self.segments, self.segment_bytes, self.snapshots
        )
    }
}

type Snapshot = (String, u64, Arc<Manifest>);

#[derive(Default)]
struct Held {
    /// Per host: content name → opened segment.
    segments: HashMap<String, HashMap<String, Arc<Segment>>>,
    /// Per host: most recently used first.
    snapshots: HashMap<String, VecDeque<Snapshot>>,
}

/// Opened segments and parsed snapshots shared by the searches of one
/// long-lived reader.
#[derive(Default)]
pub struct Memo {
    held: Mutex<Held>,
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let h = self.lock();
        f.debug_struct("Memo")
            .field("hosts", &h.segments.len())
            .finish()
    }
}

impl Memo {
    fn lock(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A host's opened segment, if held.
    pub fn segment(&self, host: &str, name: &str) -> Option<Arc<Segment>> {
        self.lock().segments.get(host)?.get(name).cloned()
    }

    /// Holds a host's segment (verified by the caller).
    pub fn put_segment(&self, host: &str, name: &str, seg: Arc<Segment>) {
        self.lock()
            .segments
            .entry(host.to_string())
            .or_default()
            .insert(name.to_string(), seg);
    }

    /// A host's parsed snapshot, if held (it becomes the most recently used).
    pub fn snapshot(&self, host: &str, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        let mut h = self.lock();
        let list = h.snapshots.get_mut(host)?;
        let at = list
            .iter()
            .position(|(s, r, _)| s == store_id && *r == revision)?;
        let hit = list.remove(at)?;
        let m = hit.2.clone();
        list.push_front(hit);
        Some(m)
    }

    /// Holds a host's snapshot (checked by the caller), dropping its least
    /// recently used beyond [`SNAPSHOTS`].
    pub fn put_snapshot(&self, host: &str, store_id: &str, revision: u64, m: Arc<Manifest>) {
        let mut h = self.lock();
        let list = h.snapshots.entry(host.to_string()).or_default();
        list.retain(|(s, r, _)| !(s == store_id && *r == revision));
        list.push_front((store_id.to_string(), revision, m));
        list.truncate(SNAPSHOTS);
    }

    /// A host's catalog was read: keeps only the segments it lists.
    pub fn keep_segments(&self, host: &str, names: &[String]) {
        let keep: HashSet<&str> = names.iter().map(String::as_str).collect();
        if let Some(s) = self.lock().segments.get_mut(host) {
            s.retain(|n, _| keep.contains(n.as_str()));
        }
    }

    /// The prefix was listed: forgets the hosts not in `ids`.
    pub fn keep_hosts(&self, ids: &[String]) {
        let keep: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let mut h = self.lock();
        h.segments.retain(|id, _| keep.contains(id.as_str()));
        h.snapshots.retain(|id, _| keep.contains(id.as_str()));
    }

    /// The names of a host's held segments, sorted.
    pub fn segment_names(&self, host: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .lock()
            .segments
            .get(host)
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    /// How many snapshots a host holds.
    pub fn snapshot_count(&self, host: &str) -> usize {
        self.lock().snapshots.get(host).map_or(0, VecDeque::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(store_id: &str, revision: u64) -> Arc<Manifest> {
        Arc::new(Manifest {
            schema: 1,
            parser_version: 1,
            store_id: store_id.into(),
            revision,
            updated_at_ms: 0,
            sessions: Default::default(),
            tombstones: Default::default(),
        })
    }

    #[test]
    fn snapshots_are_bounded_per_host_most_recently_used_kept() {
        let m = Memo::default();
        for r in 0..6 {
            m.put_snapshot("a", "s", r, manifest("s", r));
        }
        assert_eq!(m.snapshot_count("a"), SNAPSHOTS);
        assert!(m.snapshot("a", "s", 0).is_none() && m.snapshot("a", "s", 1).is_none());
        // 2 used now: it outlives 3 when two more come.
        assert_eq!(m.snapshot("a", "s", 2).map(|x| x.revision), Some(2));
        m.put_snapshot("a", "s", 6, manifest("s", 6));
        m.put_snapshot("a", "s", 7, manifest("s", 7));
        assert!(m.snapshot("a", "s", 2).is_some());
        assert!(m.snapshot("a", "s", 3).is_none());
        assert!(m.snapshot("b", "s", 7).is_none());
        m.keep_hosts(&["b".to_string()]);
        assert_eq!(m.snapshot_count("a"), 0);
    }
}
