//! The engine: what every face (HTTP, CLI, MCP, TUI, report, team search)
//! talks to, and none bypasses. It owns the resolved store and its indexer
//! ([`Engine`]), the read side of a served index ([`ReadCatalog`], with the
//! store's [`StoreCatalog`] over the shard [`arena`]), the write side
//! ([`IndexerHandle`]), the one index status and the one error type faces
//! map to their own answers ([`EngineError`]).

pub mod answer;
pub mod arena;
pub mod budget;
pub mod catalog;
pub mod chunked;
mod context;
mod error;
pub mod indexer;
#[cfg(any(test, feature = "test-support"))]
pub mod mem;
mod read;
pub mod served;
pub mod status;
pub mod verify;

pub use catalog::StoreCatalog;
pub use context::{
    set_history_days, Engine, EngineOptions, HistoryChange, OpenError, Refreshed, REFRESH_AFTER,
};
pub use error::EngineError;
pub use indexer::IndexerHandle;
#[cfg(any(test, feature = "test-support"))]
pub use mem::MemCatalog;
pub use served::{ForeignSession, ReadCatalog, SegmentListing, SegmentSummary, Served};
