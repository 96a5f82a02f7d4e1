//! The planner's tables over one snapshot: the sessions of a manifest in
//! `newest` scan order, each segment's ordinal → session map, the sessions no
//! segment covers, and per-source coverage. Built once per (manifest,
//! segment set) and shared by every query on that snapshot, so a query costs
//! what its candidates cost, not what the history holds.

use crate::model::{Manifest, ManifestEntry, Source};
use crate::response::Coverage;
use crate::segment::SegmentSet;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// No session: the segment's generation is not current in this manifest (or
/// another segment answers for it).
const NONE: u32 = u32::MAX;

/// A snapshot's planning tables. Sessions are numbered by *rank*: their
/// place in `newest` scan order (no `max_ts_ms` first, then `max_ts_ms`
/// descending, then key ascending).
#[derive(Debug)]
pub struct Directory {
    manifest: Arc<Manifest>,
    set: Option<Arc<SegmentSet>>,
    keys: Vec<String>,
    max_ts: Vec<Option<i64>>,
    /// Per segment of `set`: ordinal → rank, or [`NONE`].
    ranks: Vec<Vec<u32>>,
    /// Ranks no segment covers, ascending.
    uncovered: Vec<u32>,
    coverage: BTreeMap<String, Coverage>,
}

impl Directory {
    /// Builds the tables of `manifest` over `set`.
    pub fn build(manifest: Arc<Manifest>, set: Option<Arc<SegmentSet>>) -> Directory {
        let mut order: Vec<(&String, &ManifestEntry)> = manifest.sessions.iter().collect();
        // Stable: keys stay ascending within one max_ts_ms.
        order.sort_by(|a, b| match (a.1.max_ts_ms, b.1.max_ts_ms) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(&x),
        });
        let mut ranks: Vec<Vec<u32>> = set
            .iter()
            .flat_map(|s| s.segments())
            .map(|s| vec![NONE; s.names().len()])
            .collect();
        let mut uncovered = Vec::new();
        let mut keys = Vec::with_capacity(order.len());
        let mut max_ts = Vec::with_capacity(order.len());
        for (rank, (k, e)) in order.iter().enumerate() {
            let rank = u32::try_from(rank).unwrap_or(NONE - 1);
            let slot = set
                .as_ref()
                .and_then(|s| s.locate(&e.generation_file))
                .and_then(|(i, o)| ranks.get_mut(i)?.get_mut(o as usize));
            match slot {
                Some(slot) if *slot == NONE => *slot = rank,
                // A generation another session already holds (two hosts
                // with the same bytes): the segment answers for one, this
                // one is scanned, so neither is lost.
                _ => uncovered.push(rank),
            }
            keys.push((*k).clone());
            max_ts.push(e.max_ts_ms);
        }
        let coverage = coverage(&manifest);
        Directory {
            manifest,
            set,
            keys,
            max_ts,
            ranks,
            uncovered,
            coverage,
        }
    }

    /// Whether these tables were built over exactly `manifest` and `set`.
    pub fn is_for(&self, manifest: &Arc<Manifest>, set: Option<&Arc<SegmentSet>>) -> bool {
        Arc::ptr_eq(&self.manifest, manifest)
            && match (&self.set, set) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }

    /// The manifest.
    pub fn manifest(&self) -> &Arc<Manifest> {
        &self.manifest
    }

    /// The segment set.
    pub fn segments(&self) -> Option<&Arc<SegmentSet>> {
        self.set.as_ref()
    }

    /// Number of sessions.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the manifest has no session.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key of the session at `rank`.
    pub fn key(&self, rank: u32) -> &str {
        self.keys.get(rank as usize).map_or("", String::as_str)
    }

    /// The session at `rank`: its key and manifest entry.
    pub fn session(&self, rank: u32) -> Option<(&str, &ManifestEntry)> {
        let key = self.keys.get(rank as usize)?;
        Some((key.as_str(), self.manifest.sessions.get(key)?))
    }

    /// The newest record time of the session at `rank`.
    pub fn max_ts(&self, rank: u32) -> Option<i64> {
        self.max_ts.get(rank as usize).copied().flatten()
    }

    /// The rank of ordinal `ord` of segment `segment`, if it is a current
    /// session that segment answers for.
    pub fn rank(&self, segment: usize, ord: u32) -> Option<u32> {
        let r = *self.ranks.get(segment)?.get(ord as usize)?;
        (r != NONE).then_some(r)
    }

    /// Every `(ordinal, rank)` of a segment's current sessions (for probes
    /// that keep every ordinal).
    pub fn segment_ranks(&self, segment: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.ranks
            .get(segment)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, r)| **r != NONE)
            .map(|(o, r)| (o as u32, *r))
    }

    /// Ranks no segment covers, ascending.
    pub fn uncovered(&self) -> &[u32] {
        &self.uncovered
    }

    /// Per-source coverage of the manifest.
    pub fn coverage(&self) -> &BTreeMap<String, Coverage> {
        &self.coverage
    }
}

/// Per-source coverage over a whole manifest (all five sources, always).
pub fn coverage(manifest: &Manifest) -> BTreeMap<String, Coverage> {
    let mut out: BTreeMap<String, Coverage> = Source::ALL
        .iter()
        .map(|s| {
            (
                s.as_str().to_string(),
                Coverage {
                    sessions: 0,
                    oldest_ts_ms: None,
                    newest_ts_ms: None,
                    source_gone: 0,
                    legacy: legacy_notes(*s),
                },
            )
        })
        .collect();
    for e in manifest.sessions.values() {
        let Some(c) = out.get_mut(e.meta.source.as_str()) else {
            continue;
        };
        c.sessions += 1;
        if let Some(t) = e.meta.created_ms {
            c.oldest_ts_ms = Some(c.oldest_ts_ms.map_or(t, |o| o.min(t)));
        }
        if let Some(t) = e.meta.updated_ms {
            c.newest_ts_ms = Some(c.newest_ts_ms.map_or(t, |o| o.max(t)));
        }
        if e.source_gone {
            c.source_gone += 1;
        }
    }
    out
}

/// What a source can never yield, whatever recall does.
fn legacy_notes(source: Source) -> Vec<String> {
    match source {
        Source::Intendant => vec![
            "ask-human answers given before Intendant's conversation-message lane are not in its logs"
                .to_string(),
        ],
        _ => Vec::new(),
    }
}

/// The directories of the last two snapshots searched (the current one and,
/// while a user pages through an older one, its cursor's).
#[derive(Debug, Default)]
pub struct DirectoryCache {
    slots: Mutex<Vec<Arc<Directory>>>,
}

impl DirectoryCache {
    /// The directory of `manifest` over `set`, built on first use.
    pub fn get(&self, manifest: &Arc<Manifest>, set: Option<Arc<SegmentSet>>) -> Arc<Directory> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = slots.iter().position(|d| d.is_for(manifest, set.as_ref())) {
            let d = slots.remove(i);
            slots.insert(0, d.clone());
            return d;
        }
        let d = Arc::new(Directory::build(manifest.clone(), set));
        slots.insert(0, d.clone());
        slots.truncate(2);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SessionMeta, Source};

    fn entry(generation: &str, max_ts: Option<i64>) -> ManifestEntry {
        ManifestEntry {
            meta: SessionMeta {
                source: Source::Pi,
                session_id: generation.into(),
                title: None,
                cwd: None,
                branch: None,
                created_ms: None,
                updated_ms: None,
                messages: 0,
                parent: None,
                resume: None,
                paths: vec![],
                models: vec![],
            },
            generation_file: generation.into(),
            records: 0,
            max_ts_ms: max_ts,
            bytes: 0,
            source_gone: false,
            files: vec![],
            watermark: 0,
            state: serde_json::Value::Null,
        }
    }

    #[test]
    fn ranks_follow_newest_scan_order_and_the_cache_reuses_a_snapshot() {
        let mut m = Manifest::empty("s".into(), 1);
        m.sessions.insert("a".into(), entry("ga", Some(5)));
        m.sessions.insert("b".into(), entry("gb", None));
        m.sessions.insert("c".into(), entry("gc", Some(9)));
        m.sessions.insert("d".into(), entry("gd", Some(5)));
        let m = Arc::new(m);
        let d = Directory::build(m.clone(), None);
        let keys: Vec<&str> = (0..4).map(|r| d.key(r)).collect();
        assert_eq!(keys, ["b", "c", "a", "d"]);
        assert_eq!(d.uncovered(), [0, 1, 2, 3]);
        assert_eq!(d.max_ts(1), Some(9));
        let cache = DirectoryCache::default();
        let first = cache.get(&m, None);
        assert!(Arc::ptr_eq(&first, &cache.get(&m, None)));
        let other = Arc::new((*m).clone());
        assert!(!Arc::ptr_eq(&first, &cache.get(&other, None)));
        assert!(Arc::ptr_eq(&first, &cache.get(&m, None)));
    }

    #[test]
    fn two_sessions_naming_one_covered_generation_are_both_planned() {
        let shard = serde_json::json!({
            "session": {"source": "pi", "session_id": "s", "title": null, "cwd": null, "branch": null,
                "created_ms": 1, "updated_ms": 1, "messages": 1, "parent": null, "resume": null, "paths": []},
            "records": [{"role": "user", "ts_ms": 1, "text": "hello", "seq": 1,
                "locator": {"kind": "native_event", "line_no": 1, "content_hash16": "0000000000000000"}}],
        });
        let bytes = serde_json::to_vec(&shard).expect("json");
        let prepared = crate::PreparedShard::from_bytes(&bytes).expect("shard");
        let name = crate::naming::generation_file_name(&bytes);
        let seg = crate::segment::build(&[(&name, &prepared)]);
        let set = SegmentSet::new(vec![Arc::new(crate::Segment::open(seg).expect("segment"))]);
        let mut m = Manifest::empty("s".into(), 1);
        m.sessions.insert("a/k".into(), entry(&name, Some(5)));
        m.sessions.insert("b/k".into(), entry(&name, Some(5)));
        m.sessions.insert("c".into(), entry("gc", Some(4)));
        let d = Directory::build(Arc::new(m), Some(Arc::new(set)));
        // "a/k" holds the segment's ordinal; "b/k" and "c" are scanned.
        assert_eq!(d.ranks[0], [0]);
        assert_eq!(d.uncovered(), [1, 2]);
    }
}
