//! The extract stage's threads: one worker per core pulling units from a
//! shared counter ([`super::unit`]), a syncer per worker naming its
//! generations in order, the merger ([`super::merge`]), and the coordinator
//! (this thread) absorbing what the syncers hand on and publishing as the
//! sweep goes.

use super::merge::{spawn_merger, Segments, WorkerSegments};
use super::unit::{Done, Processed, Units};
use super::Sweep;
use crate::index::helper::Helper;
use crate::index::plan::Work;
use crate::index::IndexError;
use crate::store::segments::{SegmentDraft, SegmentRef};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Units a worker may have ahead of its syncer (bounds the open temp files).
const SYNC_QUEUE: usize = 32;

impl Sweep<'_> {
    /// Extracts `work` on all cores and absorbs every unit's result,
    /// publishing a batch every `clamp(elapsed / 5, 1 s, 30 s)` (a reparse
    /// only once complete). A publish that fails stops the workers and is
    /// the sweep's error. Answers the segments the workers leave for the
    /// maintenance stage.
    pub(super) fn extract(&mut self, work: &[Work]) -> Result<Segments, IndexError> {
        let ix = self.ix;
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(usize, Processed)>();
        let workers = ix.opts.worker_count().min(work.len()).max(1);
        let sweep_start = Instant::now();
        let mut last_publish = Instant::now();
        let unit_ctx = Units {
            store: self.store,
            watermark: self.watermark,
            backfill: self.report.backfill,
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
        let merger = spawn_merger(ix.store.clone(), seg_rx, self.report.backfill);
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
                let (next, unit_ctx) = (&next, &unit_ctx);
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
                self.report.files_read += w.src.files.len() as u64;
                self.report.bytes_read += p.bytes_read;
                self.report.resumed += usize::from(p.resumed);
                self.report.skipped_files.extend(p.skipped_files);
                if failure.is_some() {
                    continue;
                }
                self.absorb(w, done);
                // Publish as the backfill goes, at a slowing pace (so few
                // snapshots pile up); a reparse publishes only when complete.
                let interval = (sweep_start.elapsed() / 5)
                    .clamp(Duration::from_secs(1), Duration::from_secs(30));
                if !self.reparse
                    && last_publish.elapsed() >= interval
                    && !self.batch.upserts.is_empty()
                {
                    let next_batch = self.new_batch();
                    let b = std::mem::replace(&mut self.batch, next_batch);
                    if let Err(e) = self.publish(b) {
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
        match failure {
            Some(e) => Err(e),
            None => Ok(Segments { merger, rest }),
        }
    }
}
