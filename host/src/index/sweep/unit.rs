//! One unit on a sweep's worker: capture its files' cursors, extract it
//! (resuming from its checkpoint when it only grew) on the worker's helper
//! thread within the unit deadline, and hand back what came of it.

use super::merge::WorkerSegments;
use crate::extract::{self, SessionSource};
use crate::index::cursor::{capture, stat_only};
use crate::index::helper::{Helper, HelperError};
use crate::index::plan::{Kind, Work};
use crate::index::resume;
use crate::index::ShardHook;
use crate::store::generations::Pending;
use crate::store::Store;
use recall_core::model::{FileCursor, ManifestEntry};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// How the reason of a unit abandoned after the deadline starts.
pub(super) const ABANDONED: &str = "abandoned";
/// What the reason of a unit whose file did not answer holds.
const NOT_ANSWERING: &str = "did not answer within";

/// Whether a failed unit's reason says it stalled (abandoned after the
/// unit deadline, or a file that did not answer).
pub(super) fn is_stall(reason: &str) -> bool {
    reason.starts_with(ABANDONED) || reason.contains(NOT_ANSWERING)
}

/// A worker's answer for one unit, and what it read.
pub(super) struct Processed {
    pub(super) done: Done,
    pub(super) bytes_read: u64,
    pub(super) resumed: bool,
    /// Secondary files left out (`path: reason`).
    pub(super) skipped_files: Vec<String>,
    /// The session's new generation body, written but not yet fsynced
    /// nor named: the worker's syncer commits it before the coordinator
    /// sees the entry, so no publish references a generation the disk
    /// does not hold.
    pub(super) pending: Option<Pending>,
}

impl Processed {
    /// Fsyncs and names the pending generation; one that cannot be
    /// committed makes the unit a store fault (retried next sweep).
    pub(super) fn commit(&mut self) {
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

/// What came of one unit.
pub(super) enum Done {
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
pub(in crate::index) static STALLED: AtomicUsize = AtomicUsize::new(0);

/// What the workers of a sweep share to process units.
pub(super) struct Units<'a> {
    pub(super) store: &'a Store,
    pub(super) watermark: i64,
    pub(super) backfill: bool,
    /// Receives the shards of live units.
    pub(super) hook: Option<ShardHook>,
    /// A long-lived indexer's in-memory checkpoints: with them, a live
    /// unit's shard also gets no `.grams` sidecar and no segment draft
    /// (its segment is deferred, see
    /// [`crate::index::Indexer::keep_live_in_memory`]).
    pub(super) checkpoints: Option<&'a resume::LiveCheckpoints>,
    /// How long one unit's extraction may take.
    pub(super) deadline: Duration,
    /// Tests' fault injection.
    pub(super) fault: Option<crate::index::FaultHook>,
    /// Tests' fault injection before a file's cursor is captured.
    pub(super) file_fault: Option<crate::index::RootHook>,
}

impl Units<'_> {
    /// A unit an agent is writing now (grown, or born after the backfill):
    /// it keeps an extraction checkpoint and its shard goes to the hook. A
    /// backfill has none.
    pub(super) fn live(&self, w: &Work) -> bool {
        !self.backfill && matches!(w.kind, Kind::New | Kind::Appended)
    }

    /// Extracts one unit (resuming from its checkpoint when it only grew)
    /// and writes its generation.
    pub(super) fn process(
        &self,
        w: &Work,
        seg: &mut WorkerSegments,
        helper: &mut Helper,
    ) -> Processed {
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
                    // Recorded with its files' metadata (itself bounded), so
                    // it is not read again until they change.
                    let (files, deadline) = (w.src.files.clone(), self.deadline);
                    let stat = helper
                        .run(deadline.min(Duration::from_secs(5)), move || {
                            files
                                .iter()
                                .filter_map(|f| stat_only(f, generation))
                                .collect()
                        })
                        .unwrap_or_default();
                    return failed(format!("cannot read {}: {e}", f.display()), stat);
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
        let unreadable = match &r.extracted {
            Some(x) => &x.diagnostics.unreadable,
            None => &r.unreadable,
        };
        for u in unreadable {
            if !skipped_files.iter().any(|s| s == u) {
                skipped_files.push(u.clone());
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
                    "{NOT_ANSWERING} {} s (a stalled file?)",
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
}
