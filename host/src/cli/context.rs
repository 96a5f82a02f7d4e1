//! What every command resolves first: the home, the store, the source roots
//! and the indexer, plus the query-time refresh shared by the read commands.

use super::{bar, Globals};
use crate::extract::Roots;
use crate::index::{IndexError, IndexOptions, Indexer, SweepReport};
use crate::store::{self, Store, StoreError};
use anyhow::Context as _;
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

/// The resolved environment of one command.
pub struct Context {
    /// The home the roots and the store default to.
    pub home: PathBuf,
    /// The store.
    pub store: Arc<Store>,
    /// Its indexer.
    pub indexer: Indexer,
    /// The clock for retention and horizons (epoch ms).
    pub now_ms: i64,
    /// The store's index policy (after an explicit `--retention-days`).
    pub policy: crate::store::policy::Policy,
}

impl Context {
    /// Resolves `--home`/`$HOME`, `$RECALL_HOME` and the source roots.
    pub fn new(g: &Globals) -> anyhow::Result<Context> {
        let home = match &g.home {
            Some(h) => h.clone(),
            None => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .context("$HOME is not set; pass --home DIR")?,
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
        let store = Arc::new(
            Store::open(&dir)
                .with_context(|| format!("cannot open the store at {}", dir.display()))?,
        );
        let now_ms = g.now.unwrap_or_else(store::wall_ms);
        let policy = super::config::resolve(&store, g, now_ms)?;
        let roots = Roots::resolve(&home, env);
        let mut opts = IndexOptions::new(roots);
        opts.retention_days = policy.history_days;
        opts.exclude_paths = policy.exclude_paths.clone();
        opts.now_ms = g.now;
        let indexer = Indexer::new(store.clone(), opts);
        Ok(Context {
            home,
            store,
            indexer,
            now_ms,
            policy,
        })
    }

    /// Runs one sweep, with a progress bar when stderr is a terminal. A
    /// sweep whose publish found the store cleared (or rebuilt) under it by
    /// another process (`recall clear`) starts again on the new store, a few
    /// times at most.
    pub fn sweep(&self) -> anyhow::Result<SweepReport> {
        if !self.policy.enabled {
            anyhow::bail!(
                "indexing is disabled for this store (the index stays searchable); \
                 `recall config set enabled true` turns it back on"
            );
        }
        let mut attempts = 0;
        loop {
            let bar = bar::Bar::start(self.indexer.progress().clone());
            let r = self.indexer.sweep();
            bar.finish();
            match r {
                Err(IndexError::Store(StoreError::StoreChanged)) if attempts < SWEEP_RETRIES => {
                    attempts += 1;
                }
                other => return Ok(other?),
            }
        }
    }

    /// The query-time refresh: the first backfill runs in full (with a
    /// progress bar), later a sweep runs when the last is older than 1 s. A
    /// failed sweep is reported and the query answers from the store as it is;
    /// so does a store whose policy disables indexing (said on stderr).
    pub fn refresh(&self) {
        if !self.policy.enabled {
            eprintln!("recall: indexing is disabled for this store: searching the index as it is");
            return;
        }
        let result = if self.indexer.backfilled() {
            match self.indexer.refresh(REFRESH_AFTER) {
                Some(r) => r.map(|_| ()).map_err(anyhow::Error::from),
                None => Ok(()),
            }
        } else {
            self.sweep().map(|_| ())
        };
        if let Err(e) = result {
            eprintln!("recall: warning: the index was not refreshed: {e:#}");
        }
    }
}
