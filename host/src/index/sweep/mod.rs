//! One sweep, as a [`Sweep`] going through its stages in order:
//!
//! 1. **plan** (here): the manifest and ledger it starts from, each unit
//!    classified against its cursors ([`crate::index::plan`]);
//! 2. **extract** ([`extract`]): workers pull units (newest first) from a
//!    shared counter; each captures the cursors of its unit's files *before*
//!    extracting (so anything written meanwhile shows up as a change next
//!    time), extracts ([`unit`]), builds the shard and writes its generation
//!    ([`shard`]); a syncer per worker names the generations in order;
//! 3. **absorb** ([`absorb`]): the coordinator folds each unit's result into
//!    the batch it gathers, and publishes a batch every few seconds so
//!    searches see a backfill grow;
//! 4. **publish** ([`publish`]): the last batch (gone flags, retention,
//!    completion);
//! 5. **maintain** ([`merge`]): the segments the workers wrote are listed
//!    and whatever no live segment covers is indexed;
//! 6. **collect garbage** ([`gc`]) when the sweep wrote.

mod absorb;
mod extract;
mod gc;
mod merge;
mod publish;
mod report;
mod shard;
mod unit;

pub use report::SweepReport;
pub(super) use unit::STALLED;

use super::plan::Plan;
use super::{needs_reparse, IndexError, Indexer};
use crate::extract::SessionSource;
use crate::store::{wall_ms, Batch, IndexerState, SkipReason, SkippedUnit, Store};
use recall_core::Manifest;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// A full sweep: discovery of every root.
pub(super) fn run(ix: &Indexer) -> Result<SweepReport, IndexError> {
    // Sessions whose generation file was damaged are extracted again.
    let requeued = ix.store.queue_damaged().unwrap_or_default();
    let watched = ix.sources_seen();
    let mut found = super::roots::discover(&ix.opts);
    if watched && found.stalled.is_empty() {
        ix.remember(&found.units);
    }
    let units = std::mem::take(&mut found.units);
    let mut report = run_over(ix, units, Some(found))?;
    report.requeued = requeued;
    Ok(report)
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
    let mut sweep = Sweep::begin(ix, focused)?;
    let result = sweep
        .plan(units, found)
        .and_then(|plan| sweep.execute(plan));
    match result {
        Ok(files_indexed) => Ok(sweep.finish(files_indexed)),
        Err(e) => {
            ix.progress.abort();
            Err(e)
        }
    }
}

/// One sweep in progress: what every stage reads (the manifest and ledger
/// it started from, its watermark and policy) and what it gathers (the
/// batch it publishes next, who claims which key, the report).
pub(super) struct Sweep<'a> {
    ix: &'a Indexer,
    store: &'a Store,
    /// The manifest it started from.
    m: Arc<Manifest>,
    /// The ledger it started from.
    st: IndexerState,
    /// Wall ms it started at: every entry it writes carries it.
    watermark: i64,
    /// The excluded paths it applies.
    exclude: Vec<String>,
    /// The store was written by an older parser: everything is read again,
    /// and published only once complete.
    reparse: bool,
    /// The history window it applies, and its horizon.
    days: u32,
    horizon: Option<i64>,
    /// Over units whose files changed in place only: no discovery, nothing
    /// found gone.
    focused: bool,
    started: Instant,
    report: SweepReport,
    /// The batch being gathered (published every few seconds).
    batch: Batch,
    /// Each key's owner (main path): the plan's, then the units read.
    claims: HashMap<String, String>,
    /// Keys claimed by units read in this sweep: their record counts, and
    /// each owner's record should another unit take the key over.
    fresh: HashMap<String, (u64, SkippedUnit)>,
}

impl<'a> Sweep<'a> {
    /// Starts a sweep: reads the manifest and the ledger it works from.
    fn begin(ix: &'a Indexer, focused: bool) -> Result<Sweep<'a>, IndexError> {
        let started = Instant::now();
        let watermark = wall_ms();
        let store = ix.store.as_ref();
        let m = store.current()?;
        let st = store.indexer_state()?;
        let exclude = ix.exclude_paths();
        let days = ix.history_days();
        let report = SweepReport {
            backfill: !st.backfilled,
            quarantined: store.take_quarantined(),
            ..SweepReport::default()
        };
        let batch = publish::new_batch(&m.store_id, watermark, &exclude);
        Ok(Sweep {
            ix,
            store,
            reparse: needs_reparse(&m),
            days,
            horizon: ix.horizon_of(days),
            m,
            st,
            watermark,
            exclude,
            focused,
            started,
            report,
            batch,
            claims: HashMap::new(),
            fresh: HashMap::new(),
        })
    }

    /// The plan stage: what of `units` is due (the rest of `found`: the
    /// roots that are degraded or stalled, whose sessions are spared), and
    /// the progress bar started over it.
    fn plan(
        &mut self,
        units: Vec<SessionSource>,
        found: super::roots::Discovery,
    ) -> Result<Plan, IndexError> {
        let ix = self.ix;
        let (degraded, stalled) = (found.degraded, found.stalled);
        self.report.units = units.len();
        let mut plan = super::roots::plan_bounded(
            &ix.opts,
            units,
            &self.m,
            &unexcluded(&self.st, &self.exclude),
            self.reparse,
            self.horizon,
            self.focused,
        )?;
        super::roots::spare_stalled(&mut plan, &self.m, &stalled);
        if ix.in_search() {
            spare_stalled_units(&mut plan, &self.st);
        }
        self.report.unchanged = plan.unchanged;
        self.report.degraded_roots = degraded.clone();
        self.report.skipped_files = found.skipped_files;
        ix.progress.start(
            self.report.backfill,
            plan.files_due(),
            plan.bytes_due(),
            degraded,
        );
        Ok(plan)
    }

    /// The stages after planning, in order; returns the files the store
    /// now indexes.
    fn execute(&mut self, mut plan: Plan) -> Result<u64, IndexError> {
        self.claims = std::mem::take(&mut plan.claims);
        let work = std::mem::take(&mut plan.work);
        let segments = self.extract(&work)?;
        let cur = self.publish_last(plan)?;
        self.maintain(segments);
        if self.report.publishes > 0 {
            self.collect_garbage();
        }
        Ok(cur.sessions.values().map(|e| e.files.len() as u64).sum())
    }

    /// The sweep is over: its report, the progress bar finished.
    fn finish(self, files_indexed: u64) -> SweepReport {
        let mut report = self.report;
        report.elapsed_ms = self.started.elapsed().as_millis() as u64;
        self.ix
            .progress
            .note_skipped_files(&report.skipped_files, !self.focused);
        self.ix.progress.finish(wall_ms(), files_indexed);
        if !self.focused {
            self.ix.applied(self.days);
        }
        report
    }
}

/// The ledger as planning sees it: units excluded under a path the policy
/// no longer excludes are not skipped any more (read again).
fn unexcluded<'a>(st: &'a IndexerState, exclude: &[String]) -> Cow<'a, IndexerState> {
    let stale = |s: &SkippedUnit| {
        s.reason == SkipReason::Excluded
            && !crate::store::policy::excluded(exclude, s.cwd.as_deref())
    };
    if !st.skipped.values().any(stale) {
        return Cow::Borrowed(st);
    }
    let mut st = st.clone();
    st.skipped.retain(|_, s| !stale(s));
    Cow::Owned(st)
}

/// A query-time refresh leaves out the units that stalled (were abandoned
/// after the unit deadline, or did not answer) in an earlier sweep, even
/// changed: a search never waits on a hung mount. `recall index` and the
/// daemon's sweeps read them again once their files change.
fn spare_stalled_units(plan: &mut Plan, st: &IndexerState) {
    let stalled = |w: &super::plan::Work| {
        let main = w.src.files.first().map(|f| f.to_string_lossy());
        main.and_then(|m| st.skipped.get(m.as_ref()))
            .is_some_and(|sk| {
                sk.reason == SkipReason::Failed && sk.error.as_deref().is_some_and(unit::is_stall)
            })
    };
    let claims = &mut plan.claims;
    plan.work.retain(|w| {
        if !stalled(w) {
            return true;
        }
        if let (Some(key), Some(main)) = (&w.old_key, w.src.files.first()) {
            claims.insert(key.clone(), main.to_string_lossy().into_owned());
        }
        false
    });
}
