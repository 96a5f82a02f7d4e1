//! The collect-garbage stage, after a sweep that wrote.

use super::Sweep;
use crate::store::retention::{GcMode, FULL_GC_EVERY_MS};
use crate::store::snapshots::GRACE_MS;
use crate::store::wall_ms;
use std::sync::atomic::Ordering::Relaxed;

impl Sweep<'_> {
    /// Garbage collection after a sweep that wrote: what publishes
    /// superseded, and once a day (or on a process's first sweep after a
    /// day) everything.
    pub(super) fn collect_garbage(&self) {
        let ix = self.ix;
        let now = wall_ms();
        let full_due = ix
            .store
            .indexer_state()
            .is_ok_and(|s| now.saturating_sub(s.last_full_gc_ms) > FULL_GC_EVERY_MS);
        let last = ix.last_gc_ms.load(Relaxed);
        let mode = if full_due && now.saturating_sub(last) > 60_000 {
            ix.last_gc_ms.store(now, Relaxed);
            GcMode::Full
        } else {
            GcMode::Superseded
        };
        let _ = ix.store.collect_garbage(GRACE_MS, mode);
    }
}
