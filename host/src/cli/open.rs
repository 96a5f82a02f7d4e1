//! [`Context`]: the engine as a CLI command opens it — the global flags
//! resolved, an explicit `--retention-days` change said on stderr first,
//! sweeps drawn as a progress bar on a terminal, refresh problems said as
//! warnings.

use super::{bar, Globals};
use crate::engine::{Engine, EngineOptions, Refreshed};
use crate::index::SweepReport;
use std::mem::ManuallyDrop;
use std::ops::Deref;

/// The engine of one command. It is never torn down: the process ends with
/// the command, and freeing a large store's manifest entry by entry took a
/// third of a one-shot search's time at 10 GB (nothing in the engine acts
/// on drop: files, locks and threads end with the process).
pub struct Context(ManuallyDrop<Engine>);

impl Deref for Context {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.0
    }
}

impl Context {
    /// Opens the engine as the global flags say.
    pub fn new(g: &Globals) -> anyhow::Result<Context> {
        let o = EngineOptions {
            home: g.home.clone(),
            now: g.now,
            retention_days: g.retention_days,
        };
        let engine = Engine::open(&o)?;
        if let Some(change) = &engine.history_change {
            eprintln!("recall: {change}");
        }
        Ok(Context(ManuallyDrop::new(engine)))
    }

    /// The engine itself.
    pub fn engine(&self) -> &Engine {
        &self.0
    }

    /// Runs one sweep, with a progress bar when stderr is a terminal.
    pub fn sweep(&self) -> anyhow::Result<SweepReport> {
        Ok(self.0.sweep(|p| bar::Bar::start(p.clone()))?)
    }

    /// The query-time refresh (see [`Engine::refresh`]); a problem is said
    /// on stderr and the query answers from the store as it is.
    pub fn refresh(&self) {
        match self.0.refresh(|p| bar::Bar::start(p.clone())) {
            Refreshed::Fresh => {}
            Refreshed::Disabled => {
                eprintln!(
                    "recall: indexing is disabled for this store: searching the index as it is"
                )
            }
            Refreshed::Failed(e) => {
                eprintln!("recall: warning: the index was not refreshed: {e:#}")
            }
        }
    }
}
