//! The one index status: [`phase`], the rule every face reports the
//! indexer's phase by, and [`Status`], what the store records about its
//! index when no indexer of this process runs (`recall status`; a running
//! server reports its live indexer through `IndexerHandle::status`).

use super::{Engine, EngineError};
use crate::index::{IndexStatus, Phase};
use crate::store::generations;
use recall_core::response::Coverage;
use serde::Serialize;
use std::collections::BTreeMap;

/// The indexer's phase: an enabled index being built (never backfilled, or
/// cleared and not yet rebuilt) is `indexing` while an indexer runs and
/// `idle` while none does; otherwise a running indexer's own phase; with
/// none, `degraded` when a root cannot be listed or units failed, else
/// `current`.
pub fn phase(
    enabled: bool,
    building: bool,
    running: Option<Phase>,
    degraded: bool,
    backfilled: bool,
) -> Phase {
    match running {
        Some(_) if enabled && building => Phase::Indexing,
        Some(p) => p,
        None if !backfilled => Phase::Idle,
        None if degraded => Phase::Degraded,
        None => Phase::Current,
    }
}

/// The status report.
#[derive(Debug, Serialize)]
pub struct Status {
    /// The fields of `/api/index/status` (`phase` is `idle` before the
    /// first backfill, `degraded` when a root cannot be listed or units the
    /// last sweep could not index are recorded, else `current`; no sweep
    /// runs, so `files_failed` counts those recorded units).
    #[serde(flatten)]
    pub index: IndexStatus,
    /// As in `/api/index/status`: unavailable when the policy disables
    /// indexing or the first backfill has not finished.
    pub availability: crate::index::Availability,
    /// Manifest revision.
    pub revision: u64,
    /// Store id.
    pub store_id: String,
    /// Per-source coverage.
    pub coverage: BTreeMap<String, Coverage>,
    /// The store folder.
    pub store_dir: String,
    /// Sessions in the manifest.
    pub sessions: usize,
    /// Generation files on disk.
    pub generations: usize,
    /// Their bytes.
    pub generation_bytes: u64,
    /// The first backfill finished.
    pub backfilled: bool,
    /// Parser version of the manifest.
    pub parser_version: u32,
    /// The store's index policy.
    pub policy: crate::store::policy::Policy,
}

impl Engine {
    /// The store's index as it is recorded (no sweep runs).
    pub fn status(&self) -> Result<Status, EngineError> {
        let m = self.store.current()?;
        let st = self.store.indexer_state()?;
        let plan = self.indexer.plan()?;
        let degraded_roots = plan.degraded_roots.clone();
        let names = generations::list(self.store.generations_dir())?;
        let generation_bytes = names
            .iter()
            .filter_map(|n| self.store.generation_path(n))
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let failed_units = crate::index::FailedUnit::from_state(&st);
        // No sweep runs in this process: nothing is being built. Units the
        // last sweep could not index degrade the index as a running
        // indexer's failures do.
        let phase = phase(
            self.policy.enabled,
            false,
            None,
            !degraded_roots.is_empty() || !failed_units.is_empty(),
            st.backfilled,
        );
        Ok(Status {
            index: IndexStatus {
                enabled: self.policy.enabled,
                phase,
                files_indexed: m.sessions.values().map(|e| e.files.len() as u64).sum(),
                files_due: plan.files_due(),
                files_failed: failed_units.len() as u64,
                degraded_roots,
                last_sweep_ms: (st.last_sweep_ms > 0).then_some(st.last_sweep_ms),
                // Known to a running indexer only (the store records when the
                // last sweep finished, not when it started).
                last_reconcile_ms: None,
                failed_units,
                truncated_sessions: crate::index::build::truncated_sessions(&m),
                skipped_files: plan.skipped_files.clone(),
                retired: crate::store::policy::Retired::of_state(&st, self.policy.history_days),
            },
            availability: crate::index::Availability::of(self.policy.enabled, !st.backfilled),
            revision: m.revision,
            store_id: m.store_id.clone(),
            coverage: recall_core::directory::coverage(&m),
            store_dir: self.store.dir().display().to_string(),
            sessions: m.sessions.len(),
            generations: names.len(),
            generation_bytes,
            backfilled: st.backfilled,
            parser_version: m.parser_version,
            policy: self.policy.clone(),
        })
    }
}
