//! One sweep: plan, extract on all cores, publish in batches, retire, and
//! collect garbage.
//!
//! Workers pull units (newest first) from a shared counter; each captures
//! the cursors of its unit's files *before* extracting (so anything written
//! meanwhile shows up as a change next time), extracts, builds the shard,
//! writes the generation and hands the entry to the coordinator, which
//! publishes a batch every few seconds so searches see a backfill grow.

mod absorb;
mod gc;
mod merge;
mod publish;
mod shard;
mod unit;

pub(super) use unit::STALLED;

use self::absorb::absorb;
use self::gc::collect_garbage;
use self::merge::{spawn_merger, WorkerSegments};
use self::publish::{new_batch, publish};
use self::unit::{Done, Processed, Units};
use super::helper::Helper;
use super::plan;
use super::{needs_reparse, IndexError, Indexer};
use crate::extract::SessionSource;
use crate::store::segments::{SegmentDraft, SegmentRef};
use crate::store::{wall_ms, SkipReason, SkippedUnit};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// It was the store's first full backfill.
    pub backfill: bool,
    /// Units discovered.
    pub units: usize,
    /// Units extracted.
    pub extracted: usize,
    /// Units whose session was current (not read).
    pub unchanged: usize,
    /// Sessions added.
    pub new_sessions: usize,
    /// Sessions replaced.
    pub updated_sessions: usize,
    /// Sessions flagged `source_gone`.
    pub gone: usize,
    /// Sessions dropped or skipped by retention.
    pub retired: usize,
    /// Units that yield no session.
    pub empty: usize,
    /// Units that could not be read.
    pub failed: usize,
    /// Entries refused at publish (a fresher writer or a tombstone won).
    pub refused: usize,
    /// Source files read.
    pub files_read: u64,
    /// Source bytes read.
    pub bytes_read: u64,
    /// Units read only past their offsets (resumed from a checkpoint).
    pub resumed: usize,
    /// Manifests written.
    pub publishes: usize,
    /// The revision now current.
    pub revision: u64,
    /// The store id.
    pub store_id: String,
    /// Every unit of the store that could not be indexed (this sweep's
    /// failures and older ones whose files did not change), with the reason.
    pub failures: Vec<super::FailedUnit>,
    /// Units abandoned by this sweep after the unit deadline.
    pub abandoned: usize,
    /// Corrupt manifests moved aside by this sweep.
    pub quarantined: Vec<String>,
    /// Roots that could not be listed or did not answer within the root
    /// deadline (their sessions were kept as they were).
    pub degraded_roots: Vec<super::progress::DegradedRoot>,
    /// Secondary files of indexed units left out because they are not
    /// regular files, could not be read or did not answer (`path: reason`;
    /// the unit's other files are indexed).
    pub skipped_files: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// Units a worker may have ahead of its syncer (bounds the open temp files).
const SYNC_QUEUE: usize = 32;

/// A full sweep: discovery of every root.
pub(super) fn run(ix: &Indexer) -> Result<SweepReport, IndexError> {
    // Sessions whose generation file was damaged are extracted again.
    let _ = ix.store.queue_damaged();
    let watched = ix.sources_seen();
    let mut found = super::roots::discover(&ix.opts);
    if watched && found.stalled.is_empty() {
        ix.remember(&found.units);
    }
    let units = std::mem::take(&mut found.units);
    run_over(ix, units, Some(found))
}

/// A focused sweep over `units` only (their files changed in place, and
/// nothing else under the roots did): no discovery, and no session is found
/// gone.
pub(super) fn run_units(
    ix: &Indexer,
    units: Vec<SessionSource>,
) -> Result<SweepReport, IndexError> {
    run_over(ix, units, None)
}

/// A sweep over `units`: `discovered` = they are a whole discovery (the
/// rest of it: degraded and stalled roots); `None` = a focused sweep.
fn run_over(
    ix: &Indexer,
    units: Vec<SessionSource>,
    discovered: Option<super::roots::Discovery>,
) -> Result<SweepReport, IndexError> {
    let focused = discovered.is_none();
    let found = discovered.unwrap_or_else(|| super::roots::Discovery {
        degraded: super::roots::degraded(&ix.opts.roots, ix.opts.root_deadline),
        ..Default::default()
    });
    let (degraded, stalled) = (found.degraded, found.stalled);
    let started = Instant::now();
    let watermark = wall_ms();
    let store = ix.store.as_ref();
    let m = store.current()?;
    let st = store.indexer_state()?;
    let exclude = ix.exclude_paths();
    let mut report = SweepReport {
        backfill: !st.backfilled,
        quarantined: store.take_quarantined(),
        ..SweepReport::default()
    };
    report.units = units.len();
    let reparse = needs_reparse(&m);
    let horizon = ix.horizon();
    let mut plan = match super::roots::plan_bounded(
        &ix.opts,
        units,
        &m,
        &unexcluded(&st, &exclude),
        reparse,
        horizon,
        focused,
    ) {
        Ok(plan) => plan,
        Err(e) => {
            ix.progress.abort();
            return Err(e);
        }
    };
    super::roots::spare_stalled(&mut plan, &m, &stalled);
    report.unchanged = plan.unchanged;
    report.degraded_roots = degraded.clone();
    report.skipped_files = found.skipped_files;
    ix.progress.start(
        report.backfill,
        plan.files_due(),
        plan.bytes_due(),
        degraded,
    );
    let result = execute(
        ix,
        &m,
        &st,
        plan,
        (watermark, &exclude),
        reparse,
        horizon,
        &mut report,
    );
    match result {
        Ok(files_indexed) => {
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            ix.progress
                .note_skipped_files(&report.skipped_files, !focused);
            ix.progress.finish(wall_ms(), files_indexed);
            Ok(report)
        }
        Err(e) => {
            ix.progress.abort();
            Err(e)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn execute(
    ix: &Indexer,
    m: &recall_core::Manifest,
    st: &crate::store::IndexerState,
    plan: plan::Plan,
    (watermark, exclude): (i64, &[String]),
    reparse: bool,
    horizon: Option<i64>,
    report: &mut SweepReport,
) -> Result<u64, IndexError> {
    let store = ix.store.as_ref();
    let mut batch = new_batch(&m.store_id, watermark, exclude);
    let mut claims = plan.claims.clone();
    // Keys claimed by units read in this sweep: their record counts, and
    // each owner's record should another unit take the key over.
    let mut fresh: HashMap<String, (u64, SkippedUnit)> = HashMap::new();
    let work = plan.work;
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Processed)>();
    let workers = ix.opts.worker_count().min(work.len()).max(1);
    let sweep_start = Instant::now();
    let mut last_publish = Instant::now();
    let unit_ctx = Units {
        store,
        watermark,
        backfill: report.backfill,
        hook: ix.shard_hook(),
        checkpoints: ix.live_checkpoints(),
        deadline: ix.opts.unit_deadline,
        fault: ix.opts.fault.clone(),
        file_fault: ix.opts.file_fault.clone(),
    };
    let mut failure: Option<IndexError> = None;

    // Segments the workers write go to the merger as they are written;
    // what each worker had left unwritten is appended into one last draft.
    let (seg_tx, seg_rx) = mpsc::channel::<SegmentRef>();
    let merger = spawn_merger(ix.store.clone(), seg_rx, report.backfill);
    let mut rest = SegmentDraft::default();

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            // Each worker's syncer fsyncs and names its generations, in
            // order, and only then hands the units on: the worker's core
            // prepares the next unit meanwhile instead of waiting for the
            // disk.
            let tx = tx.clone();
            let (stx, srx) = mpsc::sync_channel::<(usize, Processed)>(SYNC_QUEUE);
            scope.spawn(move || {
                for (i, mut p) in srx {
                    p.commit();
                    if tx.send((i, p)).is_err() {
                        break;
                    }
                }
            });
            let (work, next, unit_ctx) = (&work, &next, &unit_ctx);
            let written = seg_tx.clone();
            handles.push(scope.spawn(move || {
                let mut seg = WorkerSegments {
                    draft: SegmentDraft::default(),
                    written,
                };
                let mut helper = Helper::default();
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(w) = work.get(i) else { break };
                    let done = unit_ctx.process(w, &mut seg, &mut helper);
                    if stx.send((i, done)).is_err() {
                        break;
                    }
                }
                seg
            }));
        }
        drop(tx);
        drop(seg_tx);
        for (i, p) in rx.iter() {
            let w = &work[i];
            let done = p.done;
            let failed = matches!(done, Done::Failed { .. });
            ix.progress
                .unit_done(w.src.files.len() as u64, w.bytes, failed);
            report.files_read += w.src.files.len() as u64;
            report.bytes_read += p.bytes_read;
            report.resumed += usize::from(p.resumed);
            report.skipped_files.extend(p.skipped_files);
            if failure.is_some() {
                continue;
            }
            absorb(
                w,
                done,
                horizon,
                st,
                &mut claims,
                &mut fresh,
                &mut batch,
                report,
            );
            // Publish as the backfill goes, at a slowing pace (so few
            // snapshots pile up); a reparse publishes only when complete.
            let interval =
                (sweep_start.elapsed() / 5).clamp(Duration::from_secs(1), Duration::from_secs(30));
            if !reparse && last_publish.elapsed() >= interval && !batch.upserts.is_empty() {
                let b = std::mem::replace(&mut batch, new_batch(&m.store_id, watermark, exclude));
                if let Err(e) = publish(store, b, report) {
                    failure = Some(e);
                    next.store(usize::MAX / 2, Relaxed);
                }
                last_publish = Instant::now();
            }
        }
        for h in handles {
            // A worker that panicked outside extraction built nothing usable.
            if let Ok(seg) = h.join() {
                rest.append(seg.draft);
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    // A session whose files moved was re-read from its new place: only
    // keys no unit produced in this sweep lost their sources.
    batch.gone.extend(
        plan.gone
            .iter()
            .filter(|k| !claims.contains_key(*k))
            .cloned(),
    );
    for key in &plan.revived {
        if let Some(e) = m.sessions.get(key) {
            let mut e = e.clone();
            e.source_gone = false;
            e.watermark = watermark;
            batch.upserts.push((key.clone(), e));
        }
    }
    for path in plan.forget {
        batch.skipped.push((path, None));
    }
    batch.horizon_ms = horizon;
    batch.finish_sweep = Some(true);
    publish(store, batch, report)?;
    let cur = store.current()?;
    if let Ok(st) = store.indexer_state() {
        report.failures = super::FailedUnit::from_state(&st);
    }
    report.revision = cur.revision;
    report.store_id = cur.store_id.clone();
    // The index segments follow the manifest: the workers' segments are
    // listed, and anything they do not cover is indexed (never fails the
    // sweep: without segments searches scan). The last draft is written
    // while the merger may still be merging.
    let last = store.write_draft(rest);
    let (mut built, merged) = merger.and_then(|h| h.join().ok()).unwrap_or_default();
    if let Ok(Some((r, _))) = last {
        built.push(r);
    }
    if let Ok(r) = store.maintain_segments_with(built, ix.segment_deferral(), !merged) {
        ix.note_deferred(r.deferred);
    }
    if report.publishes > 0 {
        collect_garbage(ix);
    }
    Ok(cur.sessions.values().map(|e| e.files.len() as u64).sum())
}

/// The ledger as planning sees it: units excluded under a path the policy
/// no longer excludes are not skipped any more (read again).
fn unexcluded<'a>(
    st: &'a crate::store::IndexerState,
    exclude: &[String],
) -> std::borrow::Cow<'a, crate::store::IndexerState> {
    let stale = |s: &SkippedUnit| {
        s.reason == SkipReason::Excluded
            && !crate::store::policy::excluded(exclude, s.cwd.as_deref())
    };
    if !st.skipped.values().any(stale) {
        return std::borrow::Cow::Borrowed(st);
    }
    let mut st = st.clone();
    st.skipped.retain(|_, s| !stale(s));
    std::borrow::Cow::Owned(st)
}
