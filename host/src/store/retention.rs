//! Retention and garbage collection.
//!
//! Sessions whose newest message is older than `now − retention days` are
//! dropped at publish (with a tombstone, see [`super::publish`]). Superseded
//! snapshots older than the grace period are deleted, and so are generation
//! files that neither the current manifest nor a kept snapshot references
//! once they are older than the grace period too (a concurrent writer may
//! have written one it has not published yet).

use super::fsutil::{age_ms, wall_ms};
use super::generations::{GRAMS_EXT, TMP_PREFIX};
use super::{catalog, generations, snapshots, state, Loaded, Store, StoreError};
use recall_core::model::ManifestEntry;
use std::collections::HashSet;
use std::fs;

/// Default retention in days: 0 keeps everything (DESIGN.md §13 "Default
/// policy").
pub const DEFAULT_RETENTION_DAYS: u32 = 0;

/// Tombstones are forgotten after a day: by then no stale writer can still
/// hold a view older than them (the writer lock goes stale after 5 minutes).
pub const TOMBSTONE_KEEP_MS: i64 = 24 * 60 * 60 * 1000;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The retention horizon for `days` (0 keeps everything ⇒ `None`).
pub fn horizon(now_ms: i64, days: u32) -> Option<i64> {
    (days > 0).then(|| now_ms.saturating_sub(i64::from(days) * DAY_MS))
}

/// A session's newest message: `updated_ms`, else the newest record of any kind.
pub fn newest_ms(e: &ManifestEntry) -> Option<i64> {
    e.meta.updated_ms.or(e.max_ts_ms)
}

/// What a collection removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Generation files deleted.
    pub generations: usize,
    /// Bytes freed by them.
    pub bytes: u64,
    /// Snapshots still retained.
    pub snapshots_kept: usize,
}

/// How thoroughly to collect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcMode {
    /// Only the generations that publishes superseded (cheap; after every
    /// sweep that wrote).
    Superseded,
    /// Everything in the folder, checked against the current manifest and
    /// every kept snapshot (finds what killed writers left; daily).
    Full,
}

/// How often a full collection runs.
pub const FULL_GC_EVERY_MS: i64 = DAY_MS;

impl Store {
    /// Deletes snapshots superseded more than `grace_ms` ago, and generations
    /// (with their filters) that no manifest still servable references and
    /// that are older than `grace_ms`.
    ///
    /// A generation leaves the manifest at a publish, which records it with
    /// the time in `indexer.json`; the snapshot of the revision before still
    /// references it until that snapshot is `grace_ms` old, so the cheap
    /// [`GcMode::Superseded`] mode needs no snapshot reading.
    pub fn collect_garbage(&self, grace_ms: i64, mode: GcMode) -> Result<GcReport, StoreError> {
        let _lock = self.lock()?;
        let current = match self.load()? {
            Loaded::Ok(m) => m,
            // Never collect against a manifest we cannot read.
            Loaded::Corrupt => return Ok(GcReport::default()),
            Loaded::Missing => std::sync::Arc::new(recall_core::Manifest::empty(String::new(), 0)),
        };
        let mut live: HashSet<&str> = current
            .sessions
            .values()
            .map(|e| e.generation_file.as_str())
            .collect();
        let kept = snapshots::prune(&self.dir().join(snapshots::SNAPSHOTS), grace_ms)?;
        // Metas the current catalog or a kept snapshot names; generations a
        // kept snapshot references (full mode: the cheap mode relies on
        // `garbage`'s times instead).
        let mut live_metas: HashSet<String> = HashSet::new();
        if let Some(c) = fs::read(self.dir().join(catalog::CATALOG))
            .ok()
            .and_then(|b| catalog::parse(&b).ok())
        {
            live_metas.extend(c.metas.into_iter().map(|r| r.name));
        }
        let mut snapshot_refs: Vec<String> = Vec::new();
        for bytes in &kept {
            match catalog::parse(bytes) {
                Ok(c) => {
                    if mode == GcMode::Full {
                        if let Ok(m) = self.assemble(&c) {
                            snapshot_refs
                                .extend(m.sessions.into_values().map(|e| e.generation_file));
                        }
                    }
                    live_metas.extend(c.metas.into_iter().map(|r| r.name));
                }
                Err(_) if mode == GcMode::Full => {
                    snapshot_refs.extend(snapshots::referenced(bytes).unwrap_or_default());
                }
                Err(_) => {}
            }
        }
        let kept = kept.len();
        live.extend(snapshot_refs.iter().map(String::as_str));
        let now = wall_ms();
        let mut report = GcReport {
            snapshots_kept: kept,
            ..GcReport::default()
        };
        let gdir = self.generations_dir();
        let mut st = state::read(self.dir(), &current.store_id);
        let st_before = st.clone();
        let delete = |name: &str, report: &mut GcReport| {
            let p = gdir.join(name);
            let Ok(meta) = fs::metadata(&p) else { return };
            if age_ms(&meta, now) > grace_ms && fs::remove_file(&p).is_ok() {
                report.generations += 1;
                report.bytes += meta.len();
                let _ = fs::remove_file(p.with_extension(GRAMS_EXT));
            }
        };
        st.garbage.retain(|name, at| {
            if live.contains(name.as_str()) {
                return false;
            }
            if now.saturating_sub(*at) <= grace_ms {
                return true;
            }
            delete(name, &mut report);
            false
        });
        if mode == GcMode::Full {
            for name in generations::list(gdir)? {
                if !live.contains(name.as_str()) && !st.garbage.contains_key(&name) {
                    delete(&name, &mut report);
                }
            }
            remove_strays(gdir, self.dir(), now, grace_ms);
            super::checkpoints::prune(self.dir(), now, super::checkpoints::KEEP_MS);
            st.last_full_gc_ms = now;
        }
        if !current.store_id.is_empty() {
            state::write(self.dir(), &st_before, &st).map_err(|e| StoreError::io(self.dir(), e))?;
        }
        collect_metas(&self.dir().join(catalog::METAS), &live_metas, now, grace_ms);
        drop(_lock);
        self.collect_segments(grace_ms);
        Ok(report)
    }
}

/// Deletes meta files no live catalog names (and temp files of writers
/// that died), once older than the grace period.
fn collect_metas(mdir: &std::path::Path, live: &HashSet<String>, now: i64, grace_ms: i64) {
    let Ok(rd) = fs::read_dir(mdir) else { return };
    for ent in rd.flatten() {
        let Some(n) = ent.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let garbage =
            (catalog::is_meta_name(&n) && !live.contains(&n)) || n.starts_with(TMP_PREFIX);
        if garbage && ent.metadata().is_ok_and(|m| age_ms(&m, now) > grace_ms) {
            let _ = fs::remove_file(ent.path());
        }
    }
}

/// Filters whose generation is gone and temp files of writers that died
/// mid-write, once older than the grace period.
fn remove_strays(gdir: &std::path::Path, dir: &std::path::Path, now: i64, grace_ms: i64) {
    for d in [gdir, dir] {
        let Ok(rd) = fs::read_dir(d) else { continue };
        for ent in rd.flatten() {
            let p = ent.path();
            let name = ent.file_name();
            let Some(n) = name.to_str() else { continue };
            let stray = n.starts_with(TMP_PREFIX)
                || n.starts_with(".manifest.tmp-")
                || n.starts_with(".catalog.tmp-")
                || n.starts_with(".state.tmp-")
                || (p.extension().is_some_and(|x| x == GRAMS_EXT)
                    && !p.with_extension("json").exists());
            if stray && ent.metadata().is_ok_and(|m| age_ms(&m, now) > grace_ms) {
                let _ = fs::remove_file(&p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_days_keeps_everything() {
        assert_eq!(horizon(1_000_000_000_000, 0), None);
        assert_eq!(horizon(10 * DAY_MS, 3), Some(7 * DAY_MS));
    }
}
