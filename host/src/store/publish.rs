//! The publish gate: how one writer's batch becomes a new manifest revision.
//!
//! Under the writer lock the manifest is read again and the batch merged
//! into *that* manifest, key by key:
//! - a manifest from a newer parser version is never overwritten (error);
//! - a batch based on another store id (cleared or rebuilt meanwhile) is refused;
//! - an entry is not replaced by one with an older watermark (a stale writer
//!   that looked at the sources before the entry's writer did);
//! - a tombstoned key is not revived by a writer whose sweep started before
//!   the tombstone;
//! - an entry whose generation file is missing is dropped (re-extracted on
//!   the next sweep);
//! - a forgotten session (`forget`), and every session whose cwd lies under
//!   an excluded path (`exclude_paths`), leaves the manifest with a
//!   tombstone; its unit is recorded as skipped (`Forgotten`: until its
//!   files change; `Excluded`: while excluded), its generation goes to the
//!   garbage collector, and every retained snapshot is deleted, so that no
//!   cursor minted before pages through it again (`cursor_expired`).
//!
//! Nothing changed ⇒ nothing is written. Otherwise the new revision is
//! committed (a meta of the changed entries, the superseded catalog to
//! `snapshots/`, the new catalog by atomic rename: see `commit.rs`), and
//! `indexer.json` is updated in the same critical section.

use super::fsutil::{random_hex, wall_ms};
use super::manifest;
use super::policy::excluded;
use super::retention::{newest_ms, TOMBSTONE_KEEP_MS};
use super::state::{self, SkipReason, SkippedUnit};
use super::{generations, Loaded, Store, StoreError};
use recall_core::model::{Manifest, ManifestEntry};
use std::sync::Arc;

/// One writer's changes.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// The store id the writer's view was read from (empty: no store yet).
    pub base_store_id: String,
    /// The writer's parser version.
    pub parser_version: u32,
    /// Wall-clock ms when the writer's sweep started looking at sources.
    pub watermark: i64,
    /// New or updated entries.
    pub upserts: Vec<(String, ManifestEntry)>,
    /// Keys whose sources are gone.
    pub gone: Vec<String>,
    /// Retention horizon: drop sessions whose newest message is older.
    pub horizon_ms: Option<i64>,
    /// Skipped-unit changes by main path (`None` = no longer skipped).
    pub skipped: Vec<(String, Option<SkippedUnit>)>,
    /// Set when the batch completes a sweep: whether it was a full backfill.
    pub finish_sweep: Option<bool>,
    /// Keys to forget (`recall forget`).
    pub forget: Vec<String>,
    /// The policy's excluded paths: sessions whose cwd lies under one leave
    /// the index, and no upsert of one is taken.
    pub exclude_paths: Vec<String>,
}

impl Batch {
    /// Whether the batch carries nothing to merge.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty()
            && self.gone.is_empty()
            && self.horizon_ms.is_none()
            && self.skipped.is_empty()
            && self.finish_sweep.is_none()
            && self.forget.is_empty()
    }
}

/// What a publish did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The store id after the publish.
    pub store_id: String,
    /// The revision now current.
    pub revision: u64,
    /// Whether a new manifest was written.
    pub written: bool,
    /// Entries added or replaced.
    pub applied: usize,
    /// Entries refused because a fresher writer had published them.
    pub stale: usize,
    /// Entries refused because they were tombstoned after the sweep started.
    pub tombstoned: usize,
    /// Entries dropped because their generation file is missing.
    pub missing: usize,
    /// Sessions newly flagged `source_gone`.
    pub gone: usize,
    /// Sessions dropped by retention.
    pub retired: Vec<String>,
    /// Sessions forgotten or excluded, and their generation files (whose
    /// text the index segments are purged of).
    pub forgotten: Vec<(String, String)>,
    /// Bytes of metas and catalog written (generations not included).
    pub bytes_written: u64,
}

impl Store {
    /// Merges a batch into the manifest under the writer lock.
    pub fn publish(&self, batch: Batch) -> Result<Outcome, StoreError> {
        let lock = self.lock()?;
        let now = wall_ms();
        let (base, existed) = match self.load()? {
            Loaded::Ok(m) => (m, true),
            Loaded::Missing => (
                Arc::new(Manifest::empty(random_hex(12), batch.parser_version)),
                false,
            ),
            Loaded::Corrupt => {
                drop(lock);
                // Quarantines it and writes an empty manifest with a new id.
                self.current()?;
                return Err(StoreError::StoreChanged);
            }
        };
        if base.parser_version > batch.parser_version {
            return Err(StoreError::NewerParser {
                found: base.parser_version,
                ours: batch.parser_version,
            });
        }
        if existed && !batch.base_store_id.is_empty() && base.store_id != batch.base_store_id {
            return Err(StoreError::StoreChanged);
        }
        let mut out = Outcome::default();
        let mut st = state::read(self.dir(), &base.store_id);
        let st_before = st.clone();
        st.store_id = base.store_id.clone();
        let mut revision = base.revision;
        if !batch.upserts.is_empty() && self.sync_generations {
            generations::sync_names(self.generations_dir())?;
        }
        // A store from before the catalog is converted by its first publish.
        let legacy = existed && !self.dir().join(super::catalog::CATALOG).exists();
        if legacy || may_change(&base, existed, &batch, now) {
            let mut m = (*base).clone();
            let mut changed = merge(self, &mut m, &batch, now, &mut st, &mut out);
            changed |= legacy || !existed || m.parser_version != batch.parser_version;
            if changed {
                m.revision = manifest::next_revision(self.dir(), m.revision)?;
                m.updated_at_ms = now;
                m.parser_version = batch.parser_version;
                revision = m.revision;
                // Under the writer lock nobody else writes it: readers find
                // the new manifest already assembled from the moment the
                // catalog has its name.
                let (_, bytes) = self.commit(m)?;
                out.bytes_written = bytes.metas + bytes.catalog;
                out.written = true;
                if !out.forgotten.is_empty() {
                    // Every snapshot before this one holds what was
                    // forgotten: their cursors expire.
                    super::snapshots::remove_all(&self.dir().join(super::snapshots::SNAPSHOTS))?;
                }
            }
        }
        for (path, unit) in batch.skipped {
            match unit {
                Some(u) => st.skipped.insert(path, u),
                None => st.skipped.remove(&path),
            };
        }
        if let Some(backfill) = batch.finish_sweep {
            st.last_sweep_ms = now;
            st.backfilled |= backfill;
        }
        state::write(self.dir(), &st_before, &st).map_err(|e| StoreError::io(self.dir(), e))?;
        drop(lock);
        if !out.forgotten.is_empty() {
            // Their text leaves the index segments now (the files after the
            // grace period); without segments searches scan, so a failure
            // here loses nothing.
            let gens = out.forgotten.iter().map(|(_, g)| g.clone()).collect();
            if let Err(e) = self.purge_segments(&gens) {
                tracing::warn!(target: "recall::index", error = %e, "purging the segments failed");
            }
        }
        out.store_id = st.store_id;
        out.revision = revision;
        Ok(out)
    }
}

impl Store {
    /// Forgets session `key` (`recall forget`, `POST
    /// /api/session/{key}/forget`): it leaves the index with a tombstone
    /// and stays out until its source files change (see the module doc).
    /// `Ok(None)` = no such session is indexed.
    pub fn forget(&self, key: &str) -> Result<Option<Outcome>, StoreError> {
        let m = self.current()?;
        if !m.sessions.contains_key(key) {
            return Ok(None);
        }
        let out = self.publish(Batch {
            base_store_id: m.store_id.clone(),
            parser_version: m.parser_version,
            watermark: wall_ms(),
            forget: vec![key.to_string()],
            ..Batch::default()
        })?;
        // Forgotten meanwhile by someone else: not ours to report.
        Ok(out.forgotten.iter().any(|(k, _)| k == key).then_some(out))
    }
}

/// Whether the batch can change the manifest at all (a cheap read-only
/// check, so a sweep that found nothing new never copies the manifest).
fn may_change(m: &Manifest, existed: bool, b: &Batch, now: i64) -> bool {
    !existed
        || m.parser_version != b.parser_version
        || !b.upserts.is_empty()
        || b.gone
            .iter()
            .any(|k| m.sessions.get(k).is_some_and(|e| !e.source_gone))
        || b.horizon_ms.is_some_and(|h| {
            m.sessions
                .values()
                .any(|e| newest_ms(e).is_some_and(|n| n < h))
        })
        || m.tombstones
            .values()
            .any(|t| now.saturating_sub(*t) > TOMBSTONE_KEEP_MS)
        || b.forget.iter().any(|k| m.sessions.contains_key(k))
        || (!b.exclude_paths.is_empty()
            && m.sessions
                .values()
                .any(|e| excluded(&b.exclude_paths, e.meta.cwd.as_deref())))
}

/// Applies the batch to `m` through the gate; returns whether `m` changed.
fn merge(
    store: &Store,
    m: &mut Manifest,
    batch: &Batch,
    now: i64,
    st: &mut state::IndexerState,
    out: &mut Outcome,
) -> bool {
    let mut changed = false;
    for (key, entry) in &batch.upserts {
        if m.tombstones.get(key).is_some_and(|&t| t >= batch.watermark)
            || excluded(&batch.exclude_paths, entry.meta.cwd.as_deref())
        {
            out.tombstoned += 1;
            continue;
        }
        if m.sessions
            .get(key)
            .is_some_and(|e| e.watermark > batch.watermark)
        {
            out.stale += 1;
            continue;
        }
        let present = store
            .generation_path(&entry.generation_file)
            .is_some_and(|p| p.exists());
        if !present {
            out.missing += 1;
            continue;
        }
        if m.sessions.get(key) != Some(entry) {
            changed = true;
            out.applied += 1;
        }
        if let Some(old) = m.sessions.get(key) {
            if old.generation_file != entry.generation_file {
                st.garbage.insert(old.generation_file.clone(), now);
            }
        }
        st.garbage.remove(&entry.generation_file);
        changed |= m.tombstones.remove(key).is_some();
        m.sessions.insert(key.clone(), entry.clone());
    }
    for key in &batch.gone {
        if let Some(e) = m.sessions.get_mut(key) {
            // Strictly older: an entry this very sweep wrote is not gone.
            if !e.source_gone && e.watermark < batch.watermark {
                e.source_gone = true;
                e.watermark = batch.watermark;
                out.gone += 1;
                changed = true;
            }
        }
    }
    if let Some(horizon) = batch.horizon_ms {
        let expired: Vec<String> = m
            .sessions
            .iter()
            .filter(|(_, e)| newest_ms(e).is_some_and(|n| n < horizon))
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            let Some(e) = m.sessions.remove(&key) else {
                continue;
            };
            st.garbage.insert(e.generation_file.clone(), now);
            if let Some(main) = e.files.first() {
                st.skipped.insert(
                    main.path.clone(),
                    SkippedUnit {
                        reason: SkipReason::Retired,
                        key: Some(key.clone()),
                        newest_ms: newest_ms(&e),
                        context: context_of(&e),
                        files: e.files.clone(),
                        error: None,
                        cwd: None,
                    },
                );
            }
            m.tombstones.insert(key.clone(), now);
            out.retired.push(key);
            changed = true;
        }
    }
    changed |= drop_forgotten(m, batch, now, st, out);
    let before = m.tombstones.len();
    m.tombstones
        .retain(|_, t| now.saturating_sub(*t) <= TOMBSTONE_KEEP_MS);
    changed | (m.tombstones.len() != before)
}

/// Takes the forgotten and the excluded sessions out of `m` (see the
/// module doc); returns whether any was.
fn drop_forgotten(
    m: &mut Manifest,
    batch: &Batch,
    now: i64,
    st: &mut state::IndexerState,
    out: &mut Outcome,
) -> bool {
    let mut leaving: Vec<(String, SkipReason)> = batch
        .forget
        .iter()
        .filter(|k| m.sessions.contains_key(*k))
        .map(|k| (k.clone(), SkipReason::Forgotten))
        .collect();
    if !batch.exclude_paths.is_empty() {
        leaving.extend(
            m.sessions
                .iter()
                .filter(|(k, e)| {
                    !batch.forget.contains(k)
                        && excluded(&batch.exclude_paths, e.meta.cwd.as_deref())
                })
                .map(|(k, _)| (k.clone(), SkipReason::Excluded)),
        );
    }
    for (key, reason) in &leaving {
        let Some(e) = m.sessions.remove(key) else {
            continue;
        };
        st.garbage.insert(e.generation_file.clone(), now);
        if let Some(main) = e.files.first() {
            st.skipped.insert(
                main.path.clone(),
                SkippedUnit {
                    reason: *reason,
                    key: Some(key.clone()),
                    newest_ms: newest_ms(&e),
                    context: context_of(&e),
                    files: e.files.clone(),
                    error: None,
                    cwd: e.meta.cwd.clone(),
                },
            );
        }
        m.tombstones.insert(key.clone(), now);
        out.forgotten.push((key.clone(), e.generation_file));
    }
    !leaving.is_empty()
}

/// The discovery-context fingerprint an entry was extracted with.
pub fn context_of(e: &ManifestEntry) -> Option<String> {
    e.state
        .get("context")
        .and_then(|v| v.as_str())
        .map(str::to_string)
}
