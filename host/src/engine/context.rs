//! [`Engine`]: the resolved environment every face starts from — the home,
//! the store, its indexer, the clock and the policy in force — with the
//! sweep and the query-time refresh the read commands share.

use super::EngineError;
use crate::extract::Roots;
use crate::index::{IndexError, IndexOptions, Indexer, Progress, SweepReport};
use crate::store::policy::{self, Policy};
use crate::store::{self, Store, StoreError};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A query first sweeps when the last sweep is older than this (DESIGN.md §6).
pub const REFRESH_AFTER: Duration = Duration::from_secs(1);

/// Sweeps started again after the store was cleared under them.
const SWEEP_RETRIES: u32 = 3;

/// `p` canonicalized when it exists, else made absolute.
fn stable_path(p: PathBuf) -> PathBuf {
    std::fs::canonicalize(&p)
        .or_else(|_| std::path::absolute(&p))
        .unwrap_or(p)
}

/// How to open the engine (the CLI's global flags).
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    /// The home the roots and the store default to (`None` = `$HOME`).
    pub home: Option<PathBuf>,
    /// A fixed clock (epoch ms) for retention and horizons.
    pub now: Option<i64>,
    /// Set the store's history policy to this many days first (as `recall
    /// config set history-days N`).
    pub retention_days: Option<u32>,
}

/// Why opening the engine failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No home: `$HOME` is unset and none was given.
    #[error("$HOME is not set; pass --home DIR")]
    NoHome,
    /// The store folder could not be opened.
    #[error("cannot open the store at {}", .0.display())]
    Store(PathBuf, #[source] StoreError),
    /// The policy could not be read or changed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// What changing the history window retires, to say before it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryChange {
    /// The window before (0 = everything).
    pub from_days: u32,
    /// The window after.
    pub to_days: u32,
    /// Indexed sessions the new window retires at the next sweep.
    pub retired: usize,
    /// Indexed sessions.
    pub sessions: usize,
}

impl std::fmt::Display for HistoryChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keep = match self.to_days {
            0 => "everything".to_string(),
            d => format!("{d} days"),
        };
        let verb = if self.retired == 1 { "is" } else { "are" };
        write!(
            f,
            "history-days {} → {}: keeps {keep}; {} of {} indexed sessions {verb} older and {verb} retired at the next sweep",
            self.from_days, self.to_days, self.retired, self.sessions
        )
    }
}

/// Sets the store's `history_days` to `days`. Returns the policy now stored
/// and, when the value changed, what the change retires.
pub fn set_history_days(
    store: &Store,
    now_ms: i64,
    days: u32,
) -> Result<(Policy, Option<HistoryChange>), EngineError> {
    let mut p = policy::load(store.dir())?;
    if p.history_days == days {
        return Ok((p, None));
    }
    let manifest = store.current()?;
    let change = HistoryChange {
        from_days: p.history_days,
        to_days: days,
        retired: policy::would_retire(&manifest, now_ms, days).len(),
        sessions: manifest.sessions.len(),
    };
    p.history_days = days;
    policy::save(store.dir(), &p)?;
    Ok((p, Some(change)))
}

/// How a query-time refresh went.
#[derive(Debug)]
pub enum Refreshed {
    /// The index is as fresh as the refresh rule asks.
    Fresh,
    /// The store's policy disables indexing: the index is searched as it is.
    Disabled,
    /// The sweep failed; the index is searched as it is.
    Failed(EngineError),
}

/// The resolved environment of one command or server.
pub struct Engine {
    /// The home the roots and the store default to.
    pub home: PathBuf,
    /// The store.
    pub store: Arc<Store>,
    /// Its indexer.
    pub indexer: Indexer,
    /// The clock for retention and horizons (epoch ms).
    pub now_ms: i64,
    /// The store's index policy (after an explicit retention change).
    pub policy: Policy,
    /// What an explicit retention change retires (for the face to say).
    pub history_change: Option<HistoryChange>,
}

impl Engine {
    /// Resolves the home (`$HOME` unless given), `$RECALL_HOME` and the
    /// source roots, and opens the store.
    pub fn open(o: &EngineOptions) -> Result<Engine, OpenError> {
        let home = match &o.home {
            Some(h) => h.clone(),
            None => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .ok_or(OpenError::NoHome)?,
        };
        // Paths are stored in cursors: they must not depend on the cwd or
        // on which symlink led to them.
        let home = stable_path(home);
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(|v| stable_path(PathBuf::from(v)).into_os_string())
        };
        let dir = store::store_dir(&store::recall_home(&home, env));
        let store = Arc::new(Store::open(&dir).map_err(|e| OpenError::Store(dir.clone(), e))?);
        let now_ms = o.now.unwrap_or_else(store::wall_ms);
        let (policy, history_change) = match o.retention_days {
            Some(days) => set_history_days(&store, now_ms, days)?,
            None => (policy::load(store.dir()).map_err(EngineError::from)?, None),
        };
        let roots = Roots::resolve(&home, env);
        let mut opts = IndexOptions::new(roots);
        opts.retention_days = policy.history_days;
        opts.exclude_paths = policy.exclude_paths.clone();
        opts.now_ms = o.now;
        let indexer = Indexer::new(store.clone(), opts);
        Ok(Engine {
            home,
            store,
            indexer,
            now_ms,
            policy,
            history_change,
        })
    }

    /// Runs one sweep; `observe` is handed the sweep's progress first and
    /// what it returns is dropped when the sweep ends (a progress bar). A
    /// sweep whose publish found the store cleared (or rebuilt) under it by
    /// another process (`recall clear`) starts again on the new store, a few
    /// times at most.
    pub fn sweep<G>(
        &self,
        observe: impl Fn(&Arc<Progress>) -> G,
    ) -> Result<SweepReport, EngineError> {
        if !self.policy.enabled {
            return Err(EngineError::unavailable(
                "indexing is disabled for this store (the index stays searchable); \
                 `recall config set enabled true` turns it back on",
            ));
        }
        let mut attempts = 0;
        loop {
            let guard = observe(self.indexer.progress());
            let r = self.indexer.sweep();
            drop(guard);
            match r {
                Err(IndexError::Store(StoreError::StoreChanged)) if attempts < SWEEP_RETRIES => {
                    attempts += 1;
                }
                other => return Ok(other?),
            }
        }
    }

    /// The query-time refresh: the first backfill runs in full (observed
    /// like [`Engine::sweep`]), later a sweep runs when the last is older
    /// than [`REFRESH_AFTER`]. A failed sweep leaves the store as it is.
    pub fn refresh<G>(&self, observe: impl Fn(&Arc<Progress>) -> G) -> Refreshed {
        if !self.policy.enabled {
            return Refreshed::Disabled;
        }
        let result = if self.indexer.backfilled() {
            match self.indexer.refresh(REFRESH_AFTER) {
                Some(r) => r.map(|_| ()).map_err(EngineError::from),
                None => Ok(()),
            }
        } else {
            self.sweep(observe).map(|_| ())
        };
        match result {
            Ok(()) => Refreshed::Fresh,
            Err(e) => Refreshed::Failed(e),
        }
    }
}
