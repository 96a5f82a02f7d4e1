//! One sweep: plan, extract on all cores, publish in batches, retire, and
//! collect garbage.
//!
//! Workers pull units (newest first) from a shared counter; each captures
//! the cursors of its unit's files *before* extracting (so anything written
//! meanwhile shows up as a change next time), extracts, builds the shard,
//! writes the generation and hands the entry to the coordinator, which
//! publishes a batch every few seconds so searches see a backfill grow.

use super::build::{self, Previous};
use super::cursor::capture;
use super::plan::{self, expired, Kind, Work};
use super::resume;
use super::ShardHook;
use super::{needs_reparse, IndexError, Indexer, PARSER_VERSION};
use crate::extract::{self, Extracted, SessionSource};
use crate::store::retention::newest_ms;
use crate::store::retention::{GcMode, FULL_GC_EVERY_MS};
use crate::store::segments::{SegmentDraft, SegmentRef};
use crate::store::snapshots::GRACE_MS;
use crate::store::{wall_ms, Batch, SkipReason, SkippedUnit, Store};
use recall_core::model::{FileCursor, ManifestEntry, Shard};
use recall_core::PreparedShard;
use serde::Serialize;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
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
    /// Corrupt manifests moved aside by this sweep.
    pub quarantined: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// A worker's answer for one unit, and what it read.
struct Processed {
    done: Done,
    bytes_read: u64,
    resumed: bool,
}

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
    Failed,
}

/// A full sweep: discovery of every root.
pub(super) fn run(ix: &Indexer) -> Result<SweepReport, IndexError> {
    // Sessions whose generation file was damaged are extracted again.
    let _ = ix.store.queue_damaged();
    let watched = ix.sources_seen();
    let units = extract::discover(&ix.opts.roots);
    if watched {
        ix.remember(&units);
    }
    run_over(ix, units, false)
}

/// A focused sweep over `units` only (their files changed in place, and
/// nothing else under the roots did): no discovery, and no session is found
/// gone.
pub(super) fn run_units(
    ix: &Indexer,
    units: Vec<SessionSource>,
) -> Result<SweepReport, IndexError> {
    run_over(ix, units, true)
}

fn run_over(
    ix: &Indexer,
    units: Vec<SessionSource>,
    focused: bool,
) -> Result<SweepReport, IndexError> {
    let started = Instant::now();
    let watermark = wall_ms();
    let store = ix.store.as_ref();
    let m = store.current()?;
    let st = store.indexer_state()?;
    let mut report = SweepReport {
        backfill: !st.backfilled,
        quarantined: store.take_quarantined(),
        ..SweepReport::default()
    };
    report.units = units.len();
    let reparse = needs_reparse(&m);
    let horizon = ix.opts.horizon();
    let plan = plan::plan(units, &m, &st, reparse, horizon, focused);
    report.unchanged = plan.unchanged;
    ix.progress.start(
        report.backfill,
        plan.files_due(),
        plan.bytes_due(),
        plan::degraded_roots(&ix.opts.roots),
    );
    let result = execute(ix, &m, &st, plan, watermark, reparse, horizon, &mut report);
    match result {
        Ok(files_indexed) => {
            report.elapsed_ms = started.elapsed().as_millis() as u64;
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
    watermark: i64,
    reparse: bool,
    horizon: Option<i64>,
    report: &mut SweepReport,
) -> Result<u64, IndexError> {
    let store = ix.store.as_ref();
    let mut batch = new_batch(&m.store_id, watermark);
    let mut claims = plan.claims.clone();
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
    };
    let mut failure: Option<IndexError> = None;

    // Segments the workers wrote, and what each had left unwritten.
    let mut built: Vec<SegmentRef> = Vec::new();
    let mut rest = SegmentDraft::default();

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            let tx = tx.clone();
            let (work, next, unit_ctx) = (&work, &next, &unit_ctx);
            handles.push(scope.spawn(move || {
                let mut seg = WorkerSegments::default();
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(w) = work.get(i) else { break };
                    let done = unit_ctx.process(w, &mut seg);
                    if tx.send((i, done)).is_err() {
                        break;
                    }
                }
                seg
            }));
        }
        drop(tx);
        for (i, p) in rx.iter() {
            let w = &work[i];
            let done = p.done;
            let failed = matches!(done, Done::Failed);
            ix.progress
                .unit_done(w.src.files.len() as u64, w.bytes, failed);
            report.files_read += w.src.files.len() as u64;
            report.bytes_read += p.bytes_read;
            report.resumed += usize::from(p.resumed);
            if failure.is_some() {
                continue;
            }
            absorb(w, done, horizon, st, &mut claims, &mut batch, report);
            // Publish as the backfill goes, at a slowing pace (so few
            // snapshots pile up); a reparse publishes only when complete.
            let interval =
                (sweep_start.elapsed() / 5).clamp(Duration::from_secs(1), Duration::from_secs(30));
            if !reparse && last_publish.elapsed() >= interval && !batch.upserts.is_empty() {
                let b = std::mem::replace(&mut batch, new_batch(&m.store_id, watermark));
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
                built.extend(seg.written);
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
    report.revision = cur.revision;
    report.store_id = cur.store_id.clone();
    // The index segments follow the manifest: the workers' segments are
    // listed, and anything they do not cover is indexed (never fails the
    // sweep: without segments searches scan).
    if let Ok(Some((r, _))) = store.write_draft(rest) {
        built.push(r);
    }
    let _ = store.maintain_segments(built);
    if report.publishes > 0 {
        collect_garbage(ix);
    }
    Ok(cur.sessions.values().map(|e| e.files.len() as u64).sum())
}

fn new_batch(store_id: &str, watermark: i64) -> Batch {
    Batch {
        base_store_id: store_id.to_string(),
        parser_version: PARSER_VERSION,
        watermark,
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
fn absorb(
    w: &Work,
    done: Done,
    horizon: Option<i64>,
    st: &crate::store::IndexerState,
    claims: &mut HashMap<String, String>,
    batch: &mut Batch,
    report: &mut SweepReport,
) {
    let was_skipped = |main: &str| st.skipped.contains_key(main);
    match done {
        Done::Failed => report.failed += 1,
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
            };
            if expired(&entry, horizon) {
                report.retired += usize::from(w.old_key.is_none());
                batch.skipped.push((main, Some(skip(SkipReason::Retired))));
                return;
            }
            match claims.get(&key) {
                Some(owner) if *owner != main => {
                    batch
                        .skipped
                        .push((main, Some(skip(SkipReason::Duplicate))));
                    return;
                }
                _ => {
                    claims.insert(key.clone(), main.clone());
                }
            }
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
/// prepares, and the full ones it wrote.
#[derive(Default)]
struct WorkerSegments {
    draft: SegmentDraft,
    written: Vec<SegmentRef>,
}

impl WorkerSegments {
    fn add(&mut self, store: &Store, generation: &str, shard: &PreparedShard, bytes: u64) {
        self.draft.add(generation, shard, bytes);
        if self.draft.full() {
            // A segment that cannot be written leaves its generations
            // uncovered: the maintenance after the sweep indexes them.
            if let Ok(Some((r, _))) = store.write_draft(std::mem::take(&mut self.draft)) {
                self.written.push(r);
            }
        }
    }
}

/// What the workers of a sweep share to process units.
struct Units<'a> {
    store: &'a Store,
    watermark: i64,
    backfill: bool,
    /// Receives the shards of live units.
    hook: Option<ShardHook>,
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
    fn process(&self, w: &Work, seg: &mut WorkerSegments) -> Processed {
        let store = self.store;
        let failed = |bytes_read| Processed {
            done: Done::Failed,
            bytes_read,
            resumed: false,
        };
        let generation = match w.kind {
            Kind::Rewritten => w.old_generation.saturating_add(1),
            _ => w.old_generation,
        };
        let mut files = Vec::with_capacity(w.src.files.len());
        let mut src = w.src.clone();
        src.files.clear();
        for f in &w.src.files {
            match capture(f, generation) {
                Ok(c) => {
                    files.push(c);
                    src.files.push(f.clone());
                }
                // A secondary file that vanished since discovery is simply
                // not part of the session any more; a vanished main file
                // fails.
                Err(_) if !files.is_empty() => {}
                Err(_) => return failed(0),
            }
        }
        let main = files.first().map(|c| c.path.clone()).unwrap_or_default();
        // Each file is read up to its cursor's offset: what lies past it is
        // the next sweep's (as an append).
        let ends: Vec<u64> = files.iter().map(|c| c.offset).collect();
        let from = match w.kind {
            Kind::Appended => resume::load(store, &w.src.unit),
            _ => None,
        };
        let run = catch_unwind(AssertUnwindSafe(|| {
            extract::extract_resumable(&src, &ends, from.as_ref())
        }));
        let r = match run {
            Ok(Ok(r)) => r,
            Ok(Err(_)) | Err(_) => {
                resume::forget(store, &w.src.unit);
                return failed(0);
            }
        };
        match r.checkpoint {
            Some(cp) if self.live(w) => resume::save(store, &w.src.unit, cp, &files),
            _ if from.is_some() || w.kind == Kind::Rewritten => resume::forget(store, &w.src.unit),
            _ => {}
        }
        let done = match r.extracted {
            None => Done::Empty { main, files },
            Some(x) => match self.write_shard(w, x, generation, files, seg) {
                Some((key, entry)) => Done::Session {
                    main,
                    key,
                    entry: Box::new(entry),
                },
                None => Done::Failed,
            },
        };
        Processed {
            done,
            bytes_read: r.bytes_read,
            resumed: r.resumed,
        }
    }

    /// Builds, writes and filters the shard of an extracted unit; returns
    /// its key and manifest entry.
    fn write_shard(
        &self,
        w: &Work,
        x: Extracted,
        generation: u32,
        files: Vec<FileCursor>,
        seg: &mut WorkerSegments,
    ) -> Option<(String, ManifestEntry)> {
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
        let name = self.store.write_generation(&body).ok()?;
        let entry = build::entry(
            &shard,
            name,
            body.len() as u64,
            files,
            self.watermark,
            w.context.clone(),
        );
        // The trigram filters let searches skip this shard without loading
        // it. Without them searches only load more: not a reason to fail.
        let prepared = PreparedShard::new(shard);
        let _ = self
            .store
            .write_grams(&entry.generation_file, &prepared.grams.to_bytes());
        seg.add(self.store, &entry.generation_file, &prepared, entry.bytes);
        if let Some(hook) = self.hook.as_ref().filter(|_| self.live(w)) {
            hook.call(&entry.generation_file, Arc::new(prepared));
        }
        Some((key, entry))
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
