//! The publish stage: the batches a sweep publishes, one every few seconds
//! while it runs ([`super::extract`]), then the last one (gone flags,
//! revived sessions, retention, completion).

use super::Sweep;
use crate::index::plan::Plan;
use crate::index::{FailedUnit, IndexError, PARSER_VERSION};
use crate::store::Batch;
use recall_core::Manifest;
use std::sync::Arc;

/// An empty batch of a sweep that started at `watermark` from `store_id`'s
/// manifest, under the excluded paths `exclude`.
pub(super) fn new_batch(store_id: &str, watermark: i64, exclude: &[String]) -> Batch {
    Batch {
        base_store_id: store_id.to_string(),
        parser_version: PARSER_VERSION,
        watermark,
        exclude_paths: exclude.to_vec(),
        ..Batch::default()
    }
}

impl Sweep<'_> {
    /// An empty batch of this sweep.
    pub(super) fn new_batch(&self) -> Batch {
        new_batch(&self.m.store_id, self.watermark, &self.exclude)
    }

    /// Publishes `batch`, counting what the publish gate did with it;
    /// whether a manifest was written.
    pub(super) fn publish(&mut self, batch: Batch) -> Result<bool, IndexError> {
        let report = &mut self.report;
        let out = self.store.publish(batch)?;
        report.refused += out.stale + out.tombstoned + out.missing;
        report.gone += out.gone;
        report.retired += out.retired.len();
        if out.written {
            report.publishes += 1;
        }
        Ok(out.written)
    }

    /// Publishes the last batch: what was gathered, the keys whose sources
    /// are gone, the sessions revived, the skipped units forgotten, the
    /// retention horizon, and the sweep's completion. Answers the manifest
    /// now current (its revision and store id go in the report).
    pub(super) fn publish_last(&mut self, plan: Plan) -> Result<Arc<Manifest>, IndexError> {
        let mut batch = std::mem::take(&mut self.batch);
        // A session whose files moved was re-read from its new place: only
        // keys no unit produced in this sweep lost their sources.
        batch.gone.extend(
            plan.gone
                .iter()
                .filter(|k| !self.claims.contains_key(*k))
                .cloned(),
        );
        for key in &plan.revived {
            if let Some(e) = self.m.sessions.get(key) {
                let mut e = e.clone();
                e.source_gone = false;
                e.watermark = self.watermark;
                batch.upserts.push((key.clone(), e));
            }
        }
        for path in plan.forget {
            batch.skipped.push((path, None));
        }
        batch.horizon_ms = self.horizon;
        batch.finish_sweep = Some(true);
        self.publish(batch)?;
        let cur = self.store.current()?;
        if let Ok(st) = self.store.indexer_state() {
            self.report.failures = FailedUnit::from_state(&st);
        }
        self.report.revision = cur.revision;
        self.report.store_id = cur.store_id.clone();
        Ok(cur)
    }
}
