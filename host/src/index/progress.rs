//! Sweep progress and health, shared between the sweep, the CLI's progress
//! bar and the HTTP status route. Counters are atomics: readers never block
//! the sweep.

use recall_core::model::Source;
use serde::Serialize;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Why a source root that exists could not be listed (a stable string in
/// status: `not_a_directory`, `permission_denied`, `unreadable`,
/// `not_answering`). A root
/// that does not exist is not degraded: that agent is simply not installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RootProblem {
    /// The path is a file (or something else that is not a directory).
    NotADirectory,
    /// The directory may not be listed by this user.
    PermissionDenied,
    /// Any other error listing it (the message says which).
    Unreadable,
    /// Listing it did not answer within the root deadline (a hung mount?):
    /// what is under it is unknown, so nothing of it is marked gone.
    NotAnswering,
}

impl RootProblem {
    /// What keeps `dir` from being listed, if it exists and cannot be (a
    /// missing root is an agent not installed, not a problem).
    pub fn of(dir: &std::path::Path) -> Option<(RootProblem, String)> {
        let meta = std::fs::metadata(dir).ok()?;
        if !meta.is_dir() {
            return Some((RootProblem::NotADirectory, "not a directory".to_string()));
        }
        let e = std::fs::read_dir(dir).err()?;
        let reason = match e.kind() {
            io::ErrorKind::PermissionDenied => RootProblem::PermissionDenied,
            _ => RootProblem::Unreadable,
        };
        Some((reason, e.to_string()))
    }

    /// What keeps agent `source`'s root from being read: [`RootProblem::of`],
    /// except that a regular file is a root of an agent whose root may be
    /// its database file (`Agent::FILE_ROOT`).
    pub fn of_root(source: Source, root: &std::path::Path) -> Option<(RootProblem, String)> {
        let file = std::fs::metadata(root).is_ok_and(|m| m.is_file());
        if file && crate::extract::Roots::file_root(source) {
            return None;
        }
        RootProblem::of(root)
    }
}

/// A root that exists but could not be listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DegradedRoot {
    /// The agent whose root it is.
    pub source: Source,
    /// The root directory.
    pub dir: String,
    /// What is wrong, as a stable code.
    pub reason: RootProblem,
    /// The operating system's message.
    pub message: String,
}

impl DegradedRoot {
    /// The problem with `dir`, if it exists and cannot be listed.
    pub fn check(source: Source, dir: &std::path::Path) -> Option<DegradedRoot> {
        let (reason, message) = RootProblem::of_root(source, dir)?;
        Some(DegradedRoot::new(source, dir, reason, message))
    }

    /// A degraded root from its parts.
    pub fn new(
        source: Source,
        dir: &std::path::Path,
        reason: RootProblem,
        message: String,
    ) -> DegradedRoot {
        DegradedRoot {
            source,
            dir: dir.display().to_string(),
            reason,
            message,
        }
    }

    /// The degraded roots among `roots`.
    pub fn all(roots: &crate::extract::Roots) -> Vec<DegradedRoot> {
        roots
            .all()
            .into_iter()
            .filter_map(|(s, p)| DegradedRoot::check(s, p))
            .collect()
    }
}

/// Whether the index can answer as current, as a value (Orca's
/// `{state: "unavailable", reason}`): `{state: "available"}`, or
/// `{state: "unavailable", reason: "disabled" | "not-ready"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Availability {
    /// Indexing runs and the index has been built.
    Available,
    /// Answers come from the index as it is, or not at all yet.
    Unavailable {
        /// Why.
        reason: Unavailable,
    },
}

/// Why the index is unavailable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unavailable {
    /// The store policy disables indexing (the index stays readable).
    Disabled,
    /// The first backfill (or the rebuild after a clear) has not finished.
    NotReady,
}

impl Availability {
    /// Whether it is [`Availability::Available`].
    pub fn is_available(&self) -> bool {
        *self == Availability::Available
    }

    /// From whether indexing is enabled and whether the index is building.
    pub fn of(enabled: bool, building: bool) -> Availability {
        if !enabled {
            Availability::Unavailable {
                reason: Unavailable::Disabled,
            }
        } else if building {
            Availability::Unavailable {
                reason: Unavailable::NotReady,
            }
        } else {
            Availability::Available
        }
    }
}

/// What the indexer is doing (the `/api/index/status` `phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// No sweep has run in this process yet.
    Idle,
    /// A sweep is running.
    Indexing,
    /// The last sweep finished and read everything it had to.
    Current,
    /// The last sweep finished but a root or some files could not be read.
    Degraded,
}

/// A discovered unit that could not be indexed: named in `recall index
/// --json`, `recall status` and `/api/index/status`, and retried only when
/// its files change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedUnit {
    /// Its main file.
    pub path: String,
    /// The session key it had, if it was ever indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Why it failed.
    pub reason: String,
}

impl FailedUnit {
    /// The failed units an indexer state records, by path.
    pub fn from_state(st: &crate::store::IndexerState) -> Vec<FailedUnit> {
        st.skipped
            .iter()
            .filter(|(_, u)| u.reason == crate::store::SkipReason::Failed)
            .map(|(path, u)| FailedUnit {
                path: path.clone(),
                key: u.key.clone(),
                reason: u.error.clone().unwrap_or_else(|| "unreadable".into()),
            })
            .collect()
    }
}

/// The indexer's progress and health; revision, store id and coverage are
/// added by the route from the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexStatus {
    /// Whether this server runs an indexer at all.
    pub enabled: bool,
    /// What it is doing.
    pub phase: Phase,
    /// Source files indexed so far (the current sweep's progress while indexing).
    pub files_indexed: u64,
    /// Source files the current sweep still has to read.
    pub files_due: u64,
    /// Source files that could not be read in the last sweep.
    pub files_failed: u64,
    /// Roots that exist but could not be listed.
    pub degraded_roots: Vec<DegradedRoot>,
    /// Wall-clock epoch ms when the last sweep finished (`None` before the first).
    pub last_sweep_ms: Option<i64>,
    /// Wall-clock epoch ms when the last successful sweep started: the index
    /// holds every source change made before it (`None` until a sweep of
    /// this process has finished).
    pub last_reconcile_ms: Option<i64>,
    /// Units that could not be indexed (not a regular file, undecodable,
    /// abandoned after the unit deadline…), with the reason.
    #[serde(default)]
    pub failed_units: Vec<FailedUnit>,
    /// Sessions indexed only up to the per-session bounds (a bounded
    /// prefix), by key.
    #[serde(default)]
    pub truncated_sessions: Vec<String>,
    /// Files the last full discovery left out (a FIFO, a device, a file that
    /// did not answer in time: `path: reason`); their units are indexed
    /// without them.
    #[serde(default)]
    pub skipped_files: Vec<String>,
    /// Sessions the history policy retired, and why (`None` when none).
    #[serde(default)]
    pub retired: Option<crate::store::policy::Retired>,
}

impl IndexStatus {
    /// The status of a server without an indexer.
    pub fn disabled() -> IndexStatus {
        IndexStatus {
            enabled: false,
            phase: Phase::Idle,
            files_indexed: 0,
            files_due: 0,
            files_failed: 0,
            degraded_roots: Vec::new(),
            last_sweep_ms: None,
            last_reconcile_ms: None,
            failed_units: Vec::new(),
            truncated_sessions: Vec::new(),
            skipped_files: Vec::new(),
            retired: None,
        }
    }
}

/// Live counters of the running (or last) sweep.
#[derive(Debug, Default)]
pub struct Progress {
    running: AtomicBool,
    ran: AtomicBool,
    backfill: AtomicBool,
    files_due: AtomicU64,
    files_done: AtomicU64,
    files_failed: AtomicU64,
    bytes_due: AtomicU64,
    bytes_done: AtomicU64,
    sessions_done: AtomicU64,
    files_indexed: AtomicU64,
    last_sweep_ms: AtomicI64,
    started_ms: AtomicI64,
    last_reconcile_ms: AtomicI64,
    degraded_roots: Mutex<Vec<DegradedRoot>>,
    skipped_files: Mutex<Vec<String>>,
}

/// A consistent-enough copy of the counters, serializable for status routes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProgressSnapshot {
    /// What the indexer is doing.
    pub phase: Phase,
    /// The running (or last) sweep is the first full backfill.
    pub backfill: bool,
    /// Files the running sweep has to read (total).
    pub files_due: u64,
    /// Of those, files read so far.
    pub files_done: u64,
    /// Files that could not be read in the running (or last) sweep.
    pub files_failed: u64,
    /// Bytes of the files due.
    pub bytes_due: u64,
    /// Bytes of the files read so far.
    pub bytes_done: u64,
    /// Sessions extracted so far.
    pub sessions_done: u64,
    /// Source files covered by the manifest after the last sweep.
    pub files_indexed: u64,
    /// Roots that exist but could not be listed.
    pub degraded_roots: Vec<DegradedRoot>,
    /// Wall-clock ms when the last sweep in this process finished.
    pub last_sweep_ms: Option<i64>,
    /// Wall-clock ms when the last sweep that finished had started.
    pub last_reconcile_ms: Option<i64>,
    /// Files the last full discovery left out (`path: reason`).
    pub skipped_files: Vec<String>,
}

impl ProgressSnapshot {
    /// Files indexed as a status route reports them: while a sweep runs, the
    /// files it has read so far (so `indexed + files_due - files_done` is the
    /// sweep's total and a progress bar moves as files are read); otherwise
    /// the files the manifest covers after the last sweep.
    pub fn indexed_so_far(&self) -> u64 {
        match self.phase {
            Phase::Indexing => self.files_done,
            _ => self.files_indexed,
        }
    }
}

impl Progress {
    /// Resets the counters for a new sweep.
    pub(crate) fn start(
        &self,
        backfill: bool,
        files_due: u64,
        bytes_due: u64,
        degraded: Vec<DegradedRoot>,
    ) {
        self.started_ms.store(crate::store::wall_ms(), Relaxed);
        self.backfill.store(backfill, Relaxed);
        self.files_due.store(files_due, Relaxed);
        self.bytes_due.store(bytes_due, Relaxed);
        for c in [
            &self.files_done,
            &self.files_failed,
            &self.bytes_done,
            &self.sessions_done,
        ] {
            c.store(0, Relaxed);
        }
        if let Ok(mut d) = self.degraded_roots.lock() {
            *d = degraded;
        }
        self.running.store(true, Relaxed);
    }

    /// Records the files a sweep left out: a full sweep's list replaces the
    /// last one; a focused sweep (no discovery) only adds what it met.
    pub(crate) fn note_skipped_files(&self, files: &[String], full: bool) {
        if let Ok(mut s) = self.skipped_files.lock() {
            if full {
                s.clear();
            }
            for f in files {
                if !s.contains(f) {
                    s.push(f.clone());
                }
            }
        }
    }

    /// Counts one unit read.
    pub(crate) fn unit_done(&self, files: u64, bytes: u64, failed: bool) {
        self.files_done.fetch_add(files, Relaxed);
        self.bytes_done.fetch_add(bytes, Relaxed);
        if failed {
            self.files_failed.fetch_add(files, Relaxed);
        } else {
            self.sessions_done.fetch_add(1, Relaxed);
        }
    }

    /// Marks the sweep finished.
    pub(crate) fn finish(&self, now_ms: i64, files_indexed: u64) {
        self.files_indexed.store(files_indexed, Relaxed);
        self.last_sweep_ms.store(now_ms, Relaxed);
        self.last_reconcile_ms
            .store(self.started_ms.load(Relaxed), Relaxed);
        self.ran.store(true, Relaxed);
        self.running.store(false, Relaxed);
    }

    /// Marks a sweep that stopped on an error.
    pub(crate) fn abort(&self) {
        self.running.store(false, Relaxed);
    }

    /// Whether a sweep is running.
    pub fn running(&self) -> bool {
        self.running.load(Relaxed)
    }

    /// A copy of the counters.
    pub fn snapshot(&self) -> ProgressSnapshot {
        let degraded_roots = self
            .degraded_roots
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default();
        let files_failed = self.files_failed.load(Relaxed);
        let phase = if self.running.load(Relaxed) {
            Phase::Indexing
        } else if !self.ran.load(Relaxed) {
            Phase::Idle
        } else if files_failed > 0 || !degraded_roots.is_empty() {
            Phase::Degraded
        } else {
            Phase::Current
        };
        let last = self.last_sweep_ms.load(Relaxed);
        let reconciled = self.last_reconcile_ms.load(Relaxed);
        ProgressSnapshot {
            phase,
            backfill: self.backfill.load(Relaxed),
            files_due: self.files_due.load(Relaxed),
            files_done: self.files_done.load(Relaxed),
            files_failed,
            bytes_due: self.bytes_due.load(Relaxed),
            bytes_done: self.bytes_done.load(Relaxed),
            sessions_done: self.sessions_done.load(Relaxed),
            files_indexed: self.files_indexed.load(Relaxed),
            degraded_roots,
            last_sweep_ms: (last > 0).then_some(last),
            last_reconcile_ms: (reconciled > 0).then_some(reconciled),
            skipped_files: self
                .skipped_files
                .lock()
                .map(|s| s.clone())
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_indexed_rises_during_a_sweep() {
        let p = Progress::default();
        p.start(true, 10, 1000, Vec::new());
        assert_eq!(p.snapshot().indexed_so_far(), 0);
        p.unit_done(3, 300, false);
        let s = p.snapshot();
        assert_eq!(s.phase, Phase::Indexing);
        assert_eq!(s.indexed_so_far(), 3, "progress before the sweep ends");
        assert_eq!(s.files_due - s.files_done, 7);
        p.unit_done(7, 700, false);
        p.finish(1, 10);
        let s = p.snapshot();
        assert_eq!(s.phase, Phase::Current);
        assert_eq!(s.indexed_so_far(), 10);
        let r = s.last_reconcile_ms.expect("reconciled");
        assert!(r > 0 && r <= crate::store::wall_ms());
    }

    #[test]
    fn a_sweep_that_fails_is_no_reconciliation() {
        let p = Progress::default();
        p.start(true, 1, 1, Vec::new());
        p.abort();
        assert_eq!(p.snapshot().last_reconcile_ms, None);
    }

    #[test]
    fn roots_that_cannot_be_listed_say_why() {
        let dir = std::env::temp_dir().join(format!("recall-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(DegradedRoot::check(Source::Pi, &dir), None);
        assert_eq!(DegradedRoot::check(Source::Pi, &dir.join("absent")), None);
        let d = DegradedRoot::check(Source::Pi, &file).expect("degraded");
        assert_eq!(d.reason, RootProblem::NotADirectory);
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["reason"], "not_a_directory");
        assert_eq!(v["source"], "pi");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unavailability_is_a_value() {
        let v = |a: Availability| serde_json::to_value(a).unwrap();
        assert_eq!(
            v(Availability::of(true, false)),
            serde_json::json!({"state": "available"})
        );
        assert_eq!(
            v(Availability::of(false, false)),
            serde_json::json!({"state": "unavailable", "reason": "disabled"})
        );
        assert_eq!(
            v(Availability::of(true, true)),
            serde_json::json!({"state": "unavailable", "reason": "not-ready"})
        );
    }
}
