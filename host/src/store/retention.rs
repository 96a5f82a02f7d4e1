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
use super::manifest::{self, ReadManifest};
use super::{generations, snapshots, Store, StoreError};
use recall_core::model::ManifestEntry;
use std::collections::HashSet;
use std::fs;

/// Default retention in days.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

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

impl Store {
    /// Deletes expired snapshots, stray temp files and unreferenced
    /// generations older than `grace_ms`.
    pub fn collect_garbage(&self, grace_ms: i64) -> Result<GcReport, StoreError> {
        let _lock = self.lock()?;
        let kept = snapshots::prune(&self.dir().join(snapshots::SNAPSHOTS), grace_ms)?;
        let mut live: HashSet<String> = HashSet::new();
        match manifest::read(self.dir())? {
            ReadManifest::Ok(m, _) => {
                live.extend(m.sessions.values().map(|e| e.generation_file.clone()));
            }
            // Never collect against a manifest we cannot read.
            ReadManifest::Corrupt(_) => return Ok(GcReport::default()),
            ReadManifest::Missing => {}
        }
        for m in &kept {
            live.extend(m.sessions.values().map(|e| e.generation_file.clone()));
        }
        let now = wall_ms();
        let mut report = GcReport {
            snapshots_kept: kept.len(),
            ..GcReport::default()
        };
        let gdir = self.generations_dir();
        for name in generations::list(gdir)? {
            if live.contains(&name) {
                continue;
            }
            let p = gdir.join(&name);
            let Ok(meta) = fs::metadata(&p) else { continue };
            if age_ms(&meta, now) > grace_ms && fs::remove_file(&p).is_ok() {
                report.generations += 1;
                report.bytes += meta.len();
                let _ = fs::remove_file(p.with_extension(GRAMS_EXT));
            }
        }
        // Filters whose generation is gone (a writer died between the two).
        if let Ok(rd) = fs::read_dir(gdir) {
            for ent in rd.flatten() {
                let p = ent.path();
                let orphan = p.extension().is_some_and(|x| x == GRAMS_EXT)
                    && !p.with_extension("json").exists()
                    && ent.metadata().is_ok_and(|m| age_ms(&m, now) > grace_ms);
                if orphan {
                    let _ = fs::remove_file(&p);
                }
            }
        }
        // Temp files of writers that died mid-write.
        for dir in [gdir, self.dir()] {
            let Ok(rd) = fs::read_dir(dir) else { continue };
            for ent in rd.flatten() {
                let name = ent.file_name();
                let Some(n) = name.to_str() else { continue };
                let temp = n.starts_with(TMP_PREFIX)
                    || n.starts_with(".manifest.tmp-")
                    || n.starts_with(".state.tmp-");
                if temp && ent.metadata().is_ok_and(|m| age_ms(&m, now) > grace_ms) {
                    let _ = fs::remove_file(ent.path());
                }
            }
        }
        Ok(report)
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
