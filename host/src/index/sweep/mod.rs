//! One sweep: plan, extract on all cores, publish in batches, retire, and
//! collect garbage.
//!
//! Workers pull units (newest first) from a shared counter; each captures
//! the cursors of its unit's files *before* extracting (so anything written
//! meanwhile shows up as a change next time), extracts, builds the shard,
//! writes the generation and hands the entry to the coordinator, which
//! publishes a batch every few seconds so searches see a backfill grow.

use super::build::{self, Previous};
use super::cursor::{capture, stat_only};
use super::helper::{Helper, HelperError};
use super::plan::{self, expired, Kind, Work};
use super::resume;
use super::ShardHook;
use super::{needs_reparse, IndexError, Indexer, PARSER_VERSION};
use crate::extract::{self, Extracted, SessionSource};
use crate::store::generations::{Pending, Written};
use crate::store::retention::newest_ms;
use crate::store::retention::{GcMode, FULL_GC_EVERY_MS};
use crate::store::segments::{self, SegmentDraft, SegmentRef};
use crate::store::snapshots::GRACE_MS;
use crate::store::{wall_ms, Batch, SkipReason, SkippedUnit, Store};
use recall_core::model::{FileCursor, ManifestEntry, Shard};
use recall_core::PreparedShard;
use serde::Serialize;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::Arc;
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

/// How the reason of a unit abandoned after the deadline starts.
const ABANDONED: &str = "abandoned";

/// A worker's answer for one unit, and what it read.
struct Processed {
    done: Done,
    bytes_read: u64,
    resumed: bool,
    /// Secondary files left out (`path: reason`).
    skipped_files: Vec<String>,
    /// The session's new generation body, written but not yet fsynced
    /// nor named: the worker's syncer commits it before the coordinator
    /// sees the entry, so no publish references a generation the disk
    /// does not hold.
    pending: Option<Pending>,
}

impl Processed {
    /// Fsyncs and names the pending generation; one that cannot be
    /// committed makes the unit a store fault (retried next sweep).
    fn commit(&mut self) {
        let Some(p) = self.pending.take() else { return };
        if p.commit().is_ok() {
            return;
        }
        if let Done::Session { main, entry, .. } = &self.done {
            self.done = Done::Failed {
                main: main.clone(),
                reason: "cannot write its generation".into(),
                files: entry.files.clone(),
                store_fault: true,
            };
        }
    }
}

/// Units a worker may have ahead of its syncer (bounds the open temp files).
const SYNC_QUEUE: usize = 32;

/// What came of one unit.
enum Done {
    Session {
        main: String,
        key: String,
        entry: Box<ManifestEntry>,
    },
    Empty {
        main: String,
        files: Vec<FileCursor>,
    },
    Failed {
        main: String,
        /// Why (named in status).
        reason: String,
        /// Its files' cursors (stat-only when they could not be read), so
        /// the failure is retried only when they change.
        files: Vec<FileCursor>,
        /// The store failed, not the unit (e.g. ENOSPC writing its
        /// generation): nothing is recorded, it is retried next sweep.
        store_fault: bool,
    },
}

/// Extraction threads abandoned after the unit deadline and still running.
pub(super) static STALLED: AtomicUsize = AtomicUsize::new(0);

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

fn new_batch(store_id: &str, watermark: i64, exclude: &[String]) -> Batch {
    Batch {
        base_store_id: store_id.to_string(),
        parser_version: PARSER_VERSION,
        watermark,
        exclude_paths: exclude.to_vec(),
        ..Batch::default()
    }
}

fn publish(store: &Store, batch: Batch, report: &mut SweepReport) -> Result<bool, IndexError> {
    let out = store.publish(batch)?;
    report.refused += out.stale + out.tombstoned + out.missing;
    report.gone += out.gone;
    report.retired += out.retired.len();
    if out.written {
        report.publishes += 1;
    }
    Ok(out.written)
}

/// Adds one unit's result to the batch.
#[allow(clippy::too_many_arguments)]
fn absorb(
    w: &Work,
    done: Done,
    horizon: Option<i64>,
    st: &crate::store::IndexerState,
    claims: &mut HashMap<String, String>,
    fresh: &mut HashMap<String, (u64, SkippedUnit)>,
    batch: &mut Batch,
    report: &mut SweepReport,
) {
    let was_skipped = |main: &str| st.skipped.contains_key(main);
    match done {
        Done::Failed {
            main,
            reason,
            files,
            store_fault,
        } => {
            report.failed += 1;
            report.abandoned += usize::from(reason.starts_with(ABANDONED));
            if store_fault {
                return;
            }
            // The old entry (if any) stays; the unit is not re-read until
            // its files change.
            if let Some(k) = &w.old_key {
                claims.insert(k.clone(), main.clone());
            }
            let unit = SkippedUnit {
                reason: SkipReason::Failed,
                key: w.old_key.clone(),
                newest_ms: None,
                context: w.context.clone(),
                files,
                error: Some(reason),
                cwd: None,
            };
            batch.skipped.push((main, Some(unit)));
        }
        Done::Empty { main, files } => {
            report.empty += 1;
            if let Some(k) = &w.old_key {
                batch.gone.push(k.clone());
            }
            let unit = SkippedUnit {
                reason: SkipReason::Empty,
                key: None,
                newest_ms: None,
                context: w.context.clone(),
                files,
                error: None,
                cwd: None,
            };
            batch.skipped.push((main, Some(unit)));
        }
        Done::Session { main, key, entry } => {
            report.extracted += 1;
            let skip = |reason| SkippedUnit {
                reason,
                key: Some(key.clone()),
                newest_ms: newest_ms(&entry),
                context: w.context.clone(),
                files: entry.files.clone(),
                error: None,
                cwd: None,
            };
            // Under an excluded path: never indexed (an old entry leaves
            // the manifest at this batch's publish).
            if crate::store::policy::excluded(&batch.exclude_paths, entry.meta.cwd.as_deref()) {
                let unit = SkippedUnit {
                    cwd: entry.meta.cwd.clone(),
                    ..skip(SkipReason::Excluded)
                };
                batch.skipped.push((main, Some(unit)));
                return;
            }
            if expired(&entry, horizon) {
                report.retired += usize::from(w.old_key.is_none());
                batch.skipped.push((main, Some(skip(SkipReason::Retired))));
                return;
            }
            match claims.get(&key) {
                // Within one sweep the unit with more records owns a key: a
                // partial copy (or anything else yielding that id) that was
                // read first never keeps a healthy session's key. An owner
                // from an earlier sweep keeps it (DESIGN §5 identity).
                Some(owner) if *owner != main => {
                    let takes_over = fresh.get(&key).is_some_and(|(n, _)| entry.records > *n);
                    if !takes_over {
                        batch
                            .skipped
                            .push((main, Some(skip(SkipReason::Duplicate))));
                        return;
                    }
                    if let Some((_, displaced)) = fresh.remove(&key) {
                        batch.upserts.retain(|(k, _)| *k != key);
                        batch.skipped.push((owner.clone(), Some(displaced)));
                    }
                    claims.insert(key.clone(), main.clone());
                }
                _ => {
                    claims.insert(key.clone(), main.clone());
                }
            }
            fresh.insert(key.clone(), (entry.records, skip(SkipReason::Duplicate)));
            if let Some(old) = &w.old_key {
                if *old != key {
                    batch.gone.push(old.clone());
                }
            }
            if w.old_key.as_deref() == Some(key.as_str()) {
                report.updated_sessions += 1;
            } else {
                report.new_sessions += 1;
            }
            if was_skipped(&main) {
                batch.skipped.push((main, None));
            }
            batch.upserts.push((key, *entry));
        }
    }
}

/// One worker's index segments: the draft it is filling with the shards it
/// prepares, and where the full ones it writes go (the merger).
struct WorkerSegments {
    draft: SegmentDraft,
    written: mpsc::Sender<SegmentRef>,
}

impl WorkerSegments {
    fn add(&mut self, store: &Store, generation: &str, shard: &PreparedShard, bytes: u64) {
        self.draft.add(generation, shard, bytes);
        if self.draft.full() {
            // A segment that cannot be written (or listed: no merger) leaves
            // its generations uncovered: the maintenance after the sweep
            // indexes them.
            if let Ok(Some((r, _))) = store.write_draft(std::mem::take(&mut self.draft)) {
                let _ = self.written.send(r);
            }
        }
    }
}

/// Collects the segments the workers write, on a thread of its own; in a
/// backfill it also runs the sweep's one tier merge as soon as the workers
/// have written the segments it takes ([`segments::fresh_merge`]), while
/// they go on — rather than after them, with one core idle. Answers the
/// segments to list (the merged one first) and whether it merged. `None`
/// when no thread could be started (the workers' segments then go
/// unlisted and their generations are indexed again after the sweep).
fn spawn_merger(
    store: Arc<Store>,
    written: mpsc::Receiver<SegmentRef>,
    backfill: bool,
) -> Option<std::thread::JoinHandle<(Vec<SegmentRef>, bool)>> {
    std::thread::Builder::new()
        .name("recall-merge".into())
        .spawn(move || {
            let mut refs: Vec<SegmentRef> = Vec::new();
            let (mut tried, mut merged) = (!backfill, false);
            for r in written {
                refs.push(r);
                if tried {
                    continue;
                }
                let Some(group) = segments::fresh_merge(&refs) else {
                    continue;
                };
                // One attempt: a merge that fails leaves its inputs listed
                // and the pass after the sweep merges as usual.
                tried = true;
                let inputs: Vec<SegmentRef> = group.iter().map(|&i| refs[i].clone()).collect();
                if let Ok(Some(m)) = store.merge_fresh(&inputs) {
                    let kept = refs
                        .into_iter()
                        .enumerate()
                        .filter_map(|(i, r)| (!group.contains(&i)).then_some(r));
                    refs = std::iter::once(m).chain(kept).collect();
                    merged = true;
                }
            }
            (refs, merged)
        })
        .ok()
}

/// What the workers of a sweep share to process units.
struct Units<'a> {
    store: &'a Store,
    watermark: i64,
    backfill: bool,
    /// Receives the shards of live units.
    hook: Option<ShardHook>,
    /// A long-lived indexer's in-memory checkpoints: with them, a live
    /// unit's shard also gets no `.grams` sidecar and no segment draft
    /// (its segment is deferred, see [`Indexer::keep_live_in_memory`]).
    checkpoints: Option<&'a super::resume::LiveCheckpoints>,
    /// How long one unit's extraction may take.
    deadline: Duration,
    /// Tests' fault injection.
    fault: Option<super::FaultHook>,
    /// Tests' fault injection before a file's cursor is captured.
    file_fault: Option<super::RootHook>,
}

impl Units<'_> {
    /// A unit an agent is writing now (grown, or born after the backfill):
    /// it keeps an extraction checkpoint and its shard goes to the hook. A
    /// backfill has none.
    fn live(&self, w: &Work) -> bool {
        !self.backfill && matches!(w.kind, Kind::New | Kind::Appended)
    }

    /// Extracts one unit (resuming from its checkpoint when it only grew)
    /// and writes its generation.
    fn process(&self, w: &Work, seg: &mut WorkerSegments, helper: &mut Helper) -> Processed {
        let store = self.store;
        let main_path = w.src.files.first().cloned().unwrap_or_default();
        let failed = |reason: String, files: Vec<FileCursor>| Processed {
            done: Done::Failed {
                main: main_path.to_string_lossy().into_owned(),
                reason,
                files,
                store_fault: false,
            },
            bytes_read: 0,
            resumed: false,
            skipped_files: Vec::new(),
            pending: None,
        };
        let generation = match w.kind {
            Kind::Rewritten => w.old_generation.saturating_add(1),
            _ => w.old_generation,
        };
        let mut files = Vec::with_capacity(w.src.files.len());
        let mut skipped_files = Vec::new();
        let mut src = w.src.clone();
        src.files.clear();
        for f in &w.src.files {
            match self.capture_bounded(helper, f, generation) {
                Ok(c) => {
                    files.push(c);
                    src.files.push(f.clone());
                }
                // A secondary file that vanished since discovery is simply
                // not part of the session any more; one that is not a
                // regular file or does not answer is left out and named;
                // a main file that cannot be read fails the unit.
                Err(e) if !files.is_empty() => {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        skipped_files.push(format!("{}: {e}", f.display()));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    return failed(format!("cannot read {}: {e}", f.display()), Vec::new());
                }
                Err(e) => {
                    let stat = w
                        .src
                        .files
                        .iter()
                        .filter_map(|f| stat_only(f, generation))
                        .collect();
                    return failed(format!("cannot read {}: {e}", f.display()), stat);
                }
            }
        }
        let main = files.first().map(|c| c.path.clone()).unwrap_or_default();
        // Each file is read up to its cursor's offset: what lies past it is
        // the next sweep's (as an append).
        let ends: Vec<u64> = files.iter().map(|c| c.offset).collect();
        let from = match w.kind {
            Kind::Appended => resume::load(store, self.checkpoints, &w.src.unit),
            _ => None,
        };
        let had_from = from.is_some();
        let r = match self.extract_bounded(helper, src, ends, from, self.live(w)) {
            Ok(r) => r,
            Err(reason) => {
                resume::forget(store, self.checkpoints, &w.src.unit);
                return failed(reason, files);
            }
        };
        match r.checkpoint {
            Some(cp) if self.live(w) => {
                resume::save(store, self.checkpoints, &w.src.unit, cp, &files)
            }
            _ if had_from || w.kind == Kind::Rewritten => {
                resume::forget(store, self.checkpoints, &w.src.unit)
            }
            _ => {}
        }
        if let Some(x) = &r.extracted {
            for u in &x.diagnostics.unreadable {
                if !skipped_files.iter().any(|s| s == u) {
                    skipped_files.push(u.clone());
                }
            }
        }
        let mut pending = None;
        let done = match r.extracted {
            None => Done::Empty { main, files },
            Some(x) => match self.write_shard(w, x, generation, files.clone(), seg) {
                Some((key, entry, p)) => {
                    pending = p;
                    Done::Session {
                        main,
                        key,
                        entry: Box::new(entry),
                    }
                }
                None => Done::Failed {
                    main,
                    reason: "cannot write its generation".into(),
                    files,
                    store_fault: true,
                },
            },
        };
        Processed {
            done,
            bytes_read: r.bytes_read,
            resumed: r.resumed,
            skipped_files,
            pending,
        }
    }

    /// A file's cursor, captured on the worker's helper thread within the
    /// unit deadline: a file that does not answer (a stalled `open` or read
    /// on a hung mount) is a `TimedOut` error, its thread left behind.
    fn capture_bounded(
        &self,
        helper: &mut Helper,
        f: &std::path::Path,
        generation: u32,
    ) -> std::io::Result<FileCursor> {
        let (path, fault) = (f.to_path_buf(), self.file_fault.clone());
        let r = helper.run(self.deadline, move || {
            if let Some(h) = &fault {
                h.call(&path);
            }
            capture(&path, generation)
        });
        match r {
            Ok(r) => r,
            Err(HelperError::Spawn(e)) => Err(e),
            Err(HelperError::Panicked) => Err(std::io::Error::other("the cursor capture panicked")),
            Err(HelperError::TimedOut) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "did not answer within {} s (a stalled file?)",
                    self.deadline.as_secs_f64()
                ),
            )),
        }
    }

    /// Extracts on the worker's helper thread and waits for it at most the
    /// unit deadline: a unit that does not finish (a stalled read on a hung
    /// mount) is abandoned — its thread left behind, counted in [`STALLED`]
    /// until it ends — and the worker goes on. A panic is a failure too.
    fn extract_bounded(
        &self,
        helper: &mut Helper,
        src: SessionSource,
        ends: Vec<u64>,
        from: Option<extract::Checkpoint>,
        checkpoint: bool,
    ) -> Result<extract::Resumed, String> {
        let fault = self.fault.clone();
        let done = Arc::new(AtomicBool::new(false));
        let done_t = done.clone();
        let r = helper.run(self.deadline, move || {
            let r = catch_unwind(AssertUnwindSafe(|| {
                if let Some(f) = &fault {
                    f.call(&src);
                }
                extract::extract_resumable_with(&src, &ends, from.as_ref(), checkpoint)
            }));
            // Whoever comes second (this job finishing, or the waiter
            // giving up) settles the stalled count.
            if done_t.swap(true, SeqCst) {
                STALLED.fetch_sub(1, SeqCst);
            }
            r
        });
        match r {
            Ok(Ok(Ok(r))) => Ok(r),
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Err(_)) | Err(HelperError::Panicked) => Err("the extractor panicked".into()),
            Err(HelperError::Spawn(e)) => Err(format!("cannot start an extraction thread: {e}")),
            Err(HelperError::TimedOut) => {
                STALLED.fetch_add(1, SeqCst);
                if done.swap(true, SeqCst) {
                    STALLED.fetch_sub(1, SeqCst);
                }
                Err(format!(
                    "{ABANDONED} after {} s (a stalled read?)",
                    self.deadline.as_secs_f64()
                ))
            }
        }
    }

    /// Builds, writes and filters the shard of an extracted unit; returns
    /// its key, its manifest entry and its generation body when it still
    /// has to be committed ([`Processed::pending`]).
    fn write_shard(
        &self,
        w: &Work,
        x: Extracted,
        generation: u32,
        files: Vec<FileCursor>,
        seg: &mut WorkerSegments,
    ) -> Option<(String, ManifestEntry, Option<Pending>)> {
        // Only a rewrite carries old records (those of generations below the
        // current one): a session never rewritten has none to carry.
        let prev_shard = match (&w.old_file, w.kind) {
            (Some(_), Kind::Appended) if w.old_generation == 0 => None,
            (Some(name), Kind::Appended | Kind::Rewritten | Kind::Reparse) => self
                .store
                .generation_bytes(name)
                .ok()
                .and_then(|b| serde_json::from_slice::<Shard>(&b).ok()),
            _ => None,
        };
        let key = x.meta.key();
        let truncated = x.diagnostics.truncated;
        let previous = prev_shard
            .as_ref()
            .filter(|_| w.old_key.as_deref() == Some(key.as_str()))
            .map(|s| Previous {
                shard: s,
                generation: w.old_generation,
                rewritten: w.kind == Kind::Rewritten,
            });
        let shard = build::shard(x, generation, previous);
        let body = serde_json::to_vec(&shard).ok()?;
        let (name, pending) = match self.store.write_generation_pending(&body).ok()? {
            Written::Named(name) => (name, None),
            Written::Pending(p) => (p.name().to_string(), Some(p)),
        };
        let mut entry = build::entry(
            &shard,
            name,
            body.len() as u64,
            files,
            self.watermark,
            w.context.clone(),
        );
        if truncated {
            build::mark_truncated(&mut entry);
        }
        // The trigram filters let searches skip this shard without loading
        // it. Without them searches only load more: not a reason to fail.
        // A long-lived indexer's live shard gets neither filters on disk nor
        // a segment now: it goes to the arena (filters included) and its
        // segment is deferred to the window's.
        let prepared = PreparedShard::new(shard);
        if !(self.checkpoints.is_some() && self.live(w)) {
            let _ = self
                .store
                .write_grams(&entry.generation_file, &prepared.grams.to_bytes());
            seg.add(self.store, &entry.generation_file, &prepared, entry.bytes);
        }
        if let Some(hook) = self.hook.as_ref().filter(|_| self.live(w)) {
            hook.call(&entry.generation_file, Arc::new(prepared));
        }
        Some((key, entry, pending))
    }
}

/// Garbage collection after a sweep that wrote: what publishes superseded,
/// and once a day (or on a process's first sweep after a day) everything.
fn collect_garbage(ix: &Indexer) {
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
