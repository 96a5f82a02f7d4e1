//! The incremental indexer (DESIGN.md §6): discover every source's
//! sessions, classify their files against the manifest's cursors, extract
//! what changed on all cores, write generations and publish them.
//!
//! One [`Indexer`] per store and process. [`Indexer::sweep`] runs a sweep
//! (the first one for a store is the full backfill); [`Indexer::refresh`] is
//! the query-time refresh; [`Indexer::progress`] feeds progress bars and the
//! status route.

pub mod build;
pub mod cursor;
mod helper;
pub mod plan;
pub mod progress;
mod resume;
pub mod roots;
mod sweep;
pub mod verify;
pub mod watch;

pub use progress::{
    Availability, DegradedRoot, FailedUnit, IndexStatus, Phase, Progress, ProgressSnapshot,
};
pub use roots::{RootHook, ROOT_DEADLINE};
pub use sweep::SweepReport;

use crate::extract::{Roots, SessionSource};
use crate::store::{retention, Store, StoreError};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Version of the extractors' output. A store written by an older version
/// is re-extracted from scratch; an older recall never overwrites a store
/// written by a newer one. Bump it whenever an extractor's output changes
/// (2: `SessionMeta.models`).
pub const PARSER_VERSION: u32 = 2;

/// Why a sweep failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Planning (a `stat` of every source file) did not answer within the
    /// root deadline: a source directory hung after discovery listed it.
    /// The sweep publishes nothing; its planning thread is left behind and
    /// the next sweep plans afresh.
    #[error("planning the sweep did not answer within {} s (a hung mount?)", .0.as_secs_f64())]
    PlanStalled(Duration),
}

/// How the indexer runs.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    /// Where the sources are.
    pub roots: Roots,
    /// Retention in days (0 keeps everything).
    pub retention_days: u32,
    /// The policy's excluded paths (sessions whose cwd lies under one are
    /// never indexed).
    pub exclude_paths: Vec<String>,
    /// A fixed clock (epoch ms) for retention; `None` = the wall clock.
    pub now_ms: Option<i64>,
    /// Extraction threads (0 = one per core).
    pub workers: usize,
    /// How long one unit's extraction may take: past it the unit is
    /// abandoned (its thread is left behind, counted in
    /// [`stalled_threads`]) and reported failed, and the sweep goes on — a
    /// hung network mount must not stall the sweep.
    pub unit_deadline: Duration,
    /// Fault injection for tests: called on the extraction thread before a
    /// unit is read (e.g. to stall like a hung mount). `None` in production.
    pub fault: Option<FaultHook>,
    /// How long listing and walking one root may take (discovery, on a
    /// thread per root): past it the root is degraded with a reason, its
    /// sessions are kept as they are, and the other roots are indexed.
    pub root_deadline: Duration,
    /// Fault injection for tests: called on a root's discovery thread
    /// before it is read. `None` in production.
    pub root_fault: Option<RootHook>,
    /// Fault injection for tests: called with each source file's path
    /// before its cursor is captured (e.g. to hang like a stalled file).
    pub file_fault: Option<RootHook>,
    /// Fault injection for tests: called on the planning thread with each
    /// unit's main file before the plan `stat`s it. `None` in production.
    pub plan_fault: Option<RootHook>,
}

/// Default [`IndexOptions::unit_deadline`].
pub const UNIT_DEADLINE: Duration = Duration::from_secs(120);

/// A test's fault injected before a unit's extraction ([`IndexOptions::fault`]).
#[derive(Clone)]
pub struct FaultHook(Arc<dyn Fn(&SessionSource) + Send + Sync>);

impl FaultHook {
    /// A hook calling `f`.
    pub fn new(f: impl Fn(&SessionSource) + Send + Sync + 'static) -> FaultHook {
        FaultHook(Arc::new(f))
    }

    pub(crate) fn call(&self, src: &SessionSource) {
        (self.0)(src)
    }
}

impl std::fmt::Debug for FaultHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultHook")
    }
}

/// Extraction threads abandoned after the unit deadline that have not
/// finished yet (in this process).
pub fn stalled_threads() -> usize {
    sweep::STALLED.load(std::sync::atomic::Ordering::Relaxed)
}

impl IndexOptions {
    /// Defaults for `roots`: every session kept, the wall clock, one worker per core.
    pub fn new(roots: Roots) -> IndexOptions {
        IndexOptions {
            roots,
            retention_days: retention::DEFAULT_RETENTION_DAYS,
            exclude_paths: Vec::new(),
            now_ms: None,
            workers: 0,
            unit_deadline: UNIT_DEADLINE,
            fault: None,
            root_deadline: ROOT_DEADLINE,
            root_fault: None,
            file_fault: None,
            plan_fault: None,
        }
    }

    /// The retention horizon now.
    pub fn horizon(&self) -> Option<i64> {
        retention::horizon(
            self.now_ms.unwrap_or_else(crate::store::wall_ms),
            self.retention_days,
        )
    }

    fn worker_count(&self) -> usize {
        if self.workers > 0 {
            return self.workers;
        }
        std::thread::available_parallelism().map_or(2, |n| n.get())
    }
}

/// Receives the prepared shard of every live unit a sweep writes (its
/// generation file name and the shard, tool rows included), e.g. to put it
/// in the search arena before the first search asks for it.
#[derive(Clone)]
pub struct ShardHook(Arc<HookFn>);

type HookFn = dyn Fn(&str, Arc<recall_core::PreparedShard>) + Send + Sync;

impl ShardHook {
    /// A hook calling `f`.
    pub fn new(f: impl Fn(&str, Arc<recall_core::PreparedShard>) + Send + Sync + 'static) -> Self {
        ShardHook(Arc::new(f))
    }

    /// Hands over one shard.
    pub fn call(&self, generation_file: &str, shard: Arc<recall_core::PreparedShard>) {
        (self.0)(generation_file, shard)
    }
}

impl std::fmt::Debug for ShardHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShardHook")
    }
}

/// The indexer of one store.
#[derive(Debug)]
pub struct Indexer {
    store: Arc<Store>,
    opts: IndexOptions,
    progress: Arc<Progress>,
    sweeping: Mutex<()>,
    last_gc_ms: AtomicI64,
    /// Change notification over the roots (`serve` only; see [`watch`]).
    watch: Mutex<Option<watch::Watch>>,
    /// With a watch: the units of the last discovery, by each of their
    /// files, so a change to known files sweeps just their units.
    units: Mutex<HashMap<PathBuf, Arc<SessionSource>>>,
    /// Wall ms when this process's last full sweep started.
    last_full_ms: AtomicI64,
    /// A query-time refresh is sweeping: units that stalled before are not
    /// read (a search never waits out a unit deadline for them).
    in_search: std::sync::atomic::AtomicBool,
    shard_hook: Mutex<Option<ShardHook>>,
    /// The history window in days (starts as `opts.retention_days`; a
    /// running server follows the store policy's changes).
    history_days: std::sync::atomic::AtomicU32,
    /// The history window the last full sweep applied: the one the index
    /// holds (starts as `opts.retention_days`, the window of the store as
    /// this process found it).
    applied_days: std::sync::atomic::AtomicU32,
    /// The excluded paths (starts as `opts.exclude_paths`; a running server
    /// follows the store policy's changes).
    exclude_paths: Mutex<Vec<String>>,
    /// The store id whose first backfill this indexer has seen finished: a
    /// store never un-finishes it (a clear makes a new store id), so
    /// [`Indexer::backfilled`], asked on every search, reads the ledger only
    /// until then.
    backfilled_store: Mutex<Option<String>>,
    /// A long-lived indexer's live state ([`Indexer::keep_live_in_memory`]).
    live: std::sync::OnceLock<Live>,
}

/// What a long-lived indexer keeps in memory instead of writing at every
/// live append: the live units' extraction checkpoints, and the segment
/// of the sessions changed in the current window.
#[derive(Debug, Default)]
struct Live {
    checkpoints: resume::LiveCheckpoints,
    /// Since when generations are left uncovered ([`DEFER_WINDOW`]).
    deferred_since: Mutex<Option<std::time::Instant>>,
}

/// How long a long-lived indexer leaves the generations of live appends
/// out of the index segments (they are scanned through their filters, their
/// shards in the arena): one segment then covers every session changed in
/// the window.
pub const DEFER_WINDOW: Duration = Duration::from_secs(30);

impl Indexer {
    /// An indexer over `store`.
    pub fn new(store: Arc<Store>, opts: IndexOptions) -> Indexer {
        Indexer {
            store,
            progress: Arc::new(Progress::default()),
            sweeping: Mutex::new(()),
            last_gc_ms: AtomicI64::new(0),
            watch: Mutex::new(None),
            units: Mutex::new(HashMap::new()),
            last_full_ms: AtomicI64::new(0),
            in_search: std::sync::atomic::AtomicBool::new(false),
            shard_hook: Mutex::new(None),
            history_days: std::sync::atomic::AtomicU32::new(opts.retention_days),
            applied_days: std::sync::atomic::AtomicU32::new(opts.retention_days),
            exclude_paths: Mutex::new(opts.exclude_paths.clone()),
            backfilled_store: Mutex::new(None),
            opts,
            live: std::sync::OnceLock::new(),
        }
    }

    /// For a long-lived indexer (`recall serve`, which hands live shards to
    /// its arena with [`Indexer::on_live_shard`]): a live append keeps its
    /// unit's extraction checkpoint in memory (written out lazily, see
    /// `resume`), writes no `.grams` sidecar for its generation and no
    /// segment — the generations of the sessions changed within
    /// [`DEFER_WINDOW`] are indexed together by the first sweep or
    /// [`Indexer::tick`] after it (sooner when more than
    /// [`crate::store::segments::Deferral`] allows accumulate).
    pub fn keep_live_in_memory(&self) {
        let _ = self.live.set(Live::default());
    }

    /// Live checkpoints (`None` for a one-shot indexer).
    fn live_checkpoints(&self) -> Option<&resume::LiveCheckpoints> {
        self.live.get().map(|l| &l.checkpoints)
    }

    /// The deferral the next maintenance pass may use: a long-lived
    /// indexer's, [`crate::store::segments::Deferral::CLOSED`] once the
    /// current window is over; `None` for a one-shot indexer.
    fn segment_deferral(&self) -> Option<crate::store::segments::Deferral> {
        use crate::store::segments::Deferral;
        let live = self.live.get()?;
        let open = lock(&live.deferred_since).is_none_or(|t| t.elapsed() < DEFER_WINDOW);
        Some(if open {
            Deferral::default()
        } else {
            Deferral::CLOSED
        })
    }

    /// After a maintenance pass: opens the window when it deferred, closes
    /// it when it covered everything.
    fn note_deferred(&self, deferred: usize) {
        if let Some(live) = self.live.get() {
            let mut since = lock(&live.deferred_since);
            match (deferred, *since) {
                (0, _) => *since = None,
                (_, None) => *since = Some(std::time::Instant::now()),
                _ => {}
            }
        }
    }

    /// (sessions whose generation a long-lived indexer has deferred
    /// indexing, checkpoints held in memory not yet written).
    pub fn live_pending(&self) -> (bool, usize) {
        match self.live.get() {
            Some(l) => (lock(&l.deferred_since).is_some(), l.checkpoints.counts().1),
            None => (false, 0),
        }
    }

    /// Writes out what a long-lived indexer holds (on shutdown): every
    /// checkpoint not yet on disk, and — unless a sweep is running — a
    /// segment over the deferred generations (left undone, they are only
    /// scanned until the next indexer's maintenance covers them).
    pub fn flush_live(&self) {
        let Some(live) = self.live.get() else { return };
        live.checkpoints.flush(&self.store, Duration::ZERO);
        if lock(&live.deferred_since).is_some() {
            if let Ok(_guard) = self.sweeping.try_lock() {
                let closed = Some(crate::store::segments::Deferral::CLOSED);
                if let Ok(r) = self.store.maintain_segments_deferring(Vec::new(), closed) {
                    self.note_deferred(r.deferred);
                }
            }
        }
    }

    /// The periodic part of a long-lived indexer's laziness: the window's
    /// segment once [`DEFER_WINDOW`] passed, checkpoints idle for
    /// [`resume::IDLE_FLUSH`]. Called with the sweep lock held.
    fn settle_live(&self) {
        let Some(live) = self.live.get() else { return };
        let due = lock(&live.deferred_since).is_some_and(|t| t.elapsed() >= DEFER_WINDOW);
        if due {
            let closed = Some(crate::store::segments::Deferral::CLOSED);
            if let Ok(r) = self.store.maintain_segments_deferring(Vec::new(), closed) {
                self.note_deferred(r.deferred);
            }
        }
        live.checkpoints.flush(&self.store, resume::IDLE_FLUSH);
    }

    /// Watches the roots for changes (the platform's file watch, see
    /// [`watch`]), so that the query-time refresh and the periodic sweep
    /// skip a home where nothing changed. Returns whether a watch is in
    /// place (false where none is available: every refresh then sweeps on
    /// age alone).
    pub fn watch_sources(&self) -> bool {
        if let Ok(w) = watch::Watch::new(&self.opts.roots.scopes()) {
            *lock(&self.watch) = Some(w);
            return true;
        }
        false
    }

    /// Sets the hook that receives live units' prepared shards.
    pub fn on_live_shard(&self, hook: ShardHook) {
        *lock(&self.shard_hook) = Some(hook);
    }

    fn shard_hook(&self) -> Option<ShardHook> {
        lock(&self.shard_hook).clone()
    }

    /// Whether the sources may have changed since the last sweep began:
    /// true without a watch (nothing vouches for them).
    pub fn sources_changed(&self) -> bool {
        if let Some(w) = lock(&self.watch).as_mut() {
            return w.changed();
        }
        true
    }

    /// A full sweep is starting: changes seen so far are its to find, and
    /// (with a watch) its discovery is remembered.
    fn sources_seen(&self) -> bool {
        self.last_full_ms.store(
            crate::store::wall_ms(),
            std::sync::atomic::Ordering::Relaxed,
        );
        if let Some(w) = lock(&self.watch).as_mut() {
            w.reset();
            return true;
        }
        false
    }

    /// The units of the store that could not be indexed, with the reason
    /// (from the indexer state: they stay listed until their files change
    /// and read well).
    pub fn failed_units(&self) -> Vec<FailedUnit> {
        self.store
            .indexer_state()
            .map(|st| FailedUnit::from_state(&st))
            .unwrap_or_default()
    }

    /// The sessions the history policy in force keeps out, and why.
    pub fn retired(&self) -> Option<crate::store::policy::Retired> {
        let st = self.store.indexer_state().ok()?;
        crate::store::policy::Retired::of_state(&st, self.history_days())
    }

    /// The keys of the sessions indexed only up to the per-session bounds.
    pub fn truncated_sessions(&self) -> Vec<String> {
        self.store
            .current()
            .map(|m| build::truncated_sessions(&m))
            .unwrap_or_default()
    }

    /// Remembers a full discovery's units (see [`Indexer::units_of`]).
    fn remember(&self, units: &[SessionSource]) {
        let mut map = HashMap::new();
        for u in units {
            let u = Arc::new(u.clone());
            for f in &u.files {
                map.insert(f.clone(), u.clone());
            }
        }
        *lock(&self.units) = map;
    }

    /// The units of `files` when every one of them is a known unit's file.
    fn units_of(&self, files: &HashSet<PathBuf>) -> Option<Vec<SessionSource>> {
        let map = lock(&self.units);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for f in files {
            let u = map.get(f)?;
            if seen.insert(u.unit.clone()) {
                out.push(SessionSource::clone(u));
            }
        }
        Some(out)
    }

    /// Sweeps what changed: with a watch that saw only known files modified
    /// in place, just their units; otherwise everything.
    fn sweep_changes(&self) -> Result<SweepReport, IndexError> {
        {
            let pending = lock(&self.watch).as_mut().map(|w| w.take());
            if let Some(watch::Pending::Files(files)) = &pending {
                if let Some(units) = self.units_of(files) {
                    return sweep::run_units(self, units);
                }
            }
        }
        sweep::run(self)
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The options.
    pub fn options(&self) -> &IndexOptions {
        &self.opts
    }

    /// The history window the next sweep applies, in days (0 = keep all).
    pub fn history_days(&self) -> u32 {
        self.history_days.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The history window the index holds: the one the last full sweep
    /// applied (0 = keep all). Answers report this one, never a window
    /// still to be applied.
    pub fn applied_days(&self) -> u32 {
        self.applied_days.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Changes the history window of the next sweeps (the store policy was
    /// changed while serving). A change makes the next sweep a full one:
    /// only a full sweep retires sessions, or brings retired ones back.
    pub fn set_history_days(&self, days: u32) {
        let was = self
            .history_days
            .swap(days, std::sync::atomic::Ordering::Relaxed);
        if was != days {
            self.full_sweep_due();
        }
    }

    /// The excluded paths the next sweep applies.
    pub fn exclude_paths(&self) -> Vec<String> {
        lock(&self.exclude_paths).clone()
    }

    /// Changes the excluded paths of the next sweeps; a change makes the
    /// next sweep a full one.
    pub fn set_exclude_paths(&self, paths: Vec<String>) {
        let mut cur = lock(&self.exclude_paths);
        if *cur != paths {
            *cur = paths;
            drop(cur);
            self.full_sweep_due();
        }
    }

    /// The next [`Indexer::tick`] sweeps in full, whatever the watch says.
    fn full_sweep_due(&self) {
        self.last_full_ms
            .store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// A full sweep that applied `days` finished: the index holds it.
    fn applied(&self, days: u32) {
        self.applied_days
            .store(days, std::sync::atomic::Ordering::Relaxed);
    }

    /// The retention horizon now, under the current history window.
    pub fn horizon(&self) -> Option<i64> {
        self.horizon_of(self.history_days())
    }

    /// The retention horizon now, under a window of `days`.
    fn horizon_of(&self, days: u32) -> Option<i64> {
        retention::horizon(self.opts.now_ms.unwrap_or_else(crate::store::wall_ms), days)
    }

    /// Live progress (shared; cheap to read).
    pub fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// Whether the store's first full backfill has finished.
    pub fn backfilled(&self) -> bool {
        let Ok(current) = self.store.current() else {
            return false;
        };
        let mut seen = self
            .backfilled_store
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if seen.as_deref() == Some(current.store_id.as_str()) {
            return true;
        }
        let done = self.store.indexer_state().is_ok_and(|s| s.backfilled);
        if done {
            *seen = Some(current.store_id.clone());
        }
        done
    }

    /// Wall-clock ms of the store's last finished sweep (by any process).
    pub fn last_sweep_ms(&self) -> Option<i64> {
        self.store
            .indexer_state()
            .ok()
            .map(|s| s.last_sweep_ms)
            .filter(|&t| t > 0)
    }

    /// Runs one sweep, waiting for a sweep of this indexer already running.
    pub fn sweep(&self) -> Result<SweepReport, IndexError> {
        let _guard = self.sweeping.lock().unwrap_or_else(|p| p.into_inner());
        sweep::run(self)
    }

    /// The query-time refresh: sweeps when the store's last sweep finished
    /// more than `max_age` ago. Never before the first backfill finished,
    /// never waiting behind a running sweep. `None` = no sweep was due.
    pub fn refresh(&self, max_age: Duration) -> Option<Result<SweepReport, IndexError>> {
        // A reader found a damaged generation: sweep (in full) now.
        if self.store.has_damage_notes() {
            let _guard = self.sweeping.try_lock().ok()?;
            return Some(self.searching(|| sweep::run(self)));
        }
        // The watch answers without I/O: a quiet home reads no state file.
        if !self.sources_changed() {
            return None;
        }
        let st = self.store.indexer_state().ok()?;
        if !st.backfilled {
            return None;
        }
        let age = crate::store::wall_ms().saturating_sub(st.last_sweep_ms);
        if age >= 0 && (age as u128) < max_age.as_millis() {
            return None;
        }
        let _guard = self.sweeping.try_lock().ok()?;
        Some(self.searching(|| self.sweep_changes()))
    }

    /// Runs `f` (a sweep) as a query-time refresh.
    fn searching<T>(&self, f: impl FnOnce() -> T) -> T {
        use std::sync::atomic::Ordering::SeqCst;
        self.in_search.store(true, SeqCst);
        let r = f();
        self.in_search.store(false, SeqCst);
        r
    }

    /// Whether the running sweep is a query-time refresh.
    pub(crate) fn in_search(&self) -> bool {
        self.in_search.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The periodic sweep: skipped when a watch vouches that no source
    /// changed since the last sweep, focused when only known files changed;
    /// a full one at least every `full_every` (retention, garbage
    /// collection, and whatever inotify cannot see).
    /// `None` = skipped.
    pub fn tick(&self, full_every: Duration) -> Option<Result<SweepReport, IndexError>> {
        let _guard = self.sweeping.lock().unwrap_or_else(|p| p.into_inner());
        let last_full = self.last_full_ms.load(std::sync::atomic::Ordering::Relaxed);
        let age = crate::store::wall_ms().saturating_sub(last_full);
        let recent = last_full > 0 && age >= 0 && (age as u128) < full_every.as_millis();
        let r = if !self.backfilled() || !recent || self.store.has_damage_notes() {
            Some(sweep::run(self))
        } else if !self.sources_changed() {
            None
        } else {
            Some(self.sweep_changes())
        };
        self.settle_live();
        r
    }

    /// What a sweep would read now, without reading it.
    pub fn plan(&self) -> Result<plan::Plan, IndexError> {
        let m = self.store.current()?;
        let st = self.store.indexer_state()?;
        let found = roots::discover(&self.opts);
        let reparse = needs_reparse(&m);
        let mut plan = roots::plan_bounded(
            &self.opts,
            found.units,
            &m,
            &st,
            reparse,
            self.horizon(),
            false,
        )?;
        roots::spare_stalled(&mut plan, &m, &found.stalled);
        plan.degraded_roots = found.degraded;
        plan.skipped_files = found.skipped_files;
        Ok(plan)
    }
}

impl Drop for Indexer {
    /// A long-lived indexer writes out what it held (a process that dies
    /// without dropping it loses only speed).
    fn drop(&mut self) {
        self.flush_live();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the manifest was written by an older parser and holds sessions.
fn needs_reparse(m: &recall_core::Manifest) -> bool {
    m.parser_version < PARSER_VERSION && !m.sessions.is_empty()
}
