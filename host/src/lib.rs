//! recall-host, in pipeline order: the agent sources and their extractors
//! (`extract`), the store and its indexer (`store`, `index`), the engine
//! every face goes through (`engine`), and the faces (`http`, `cli`, `mcp`,
//! `tui`, `report`, team search in `remote`).

pub mod assets;
pub mod cli;
pub mod clock;
pub mod deep;
pub mod demo;
pub mod engine;
pub mod export;
pub mod extract;
pub mod fit;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod index;
pub mod lineage;
pub mod mcp;
pub mod remote;
pub mod report;
pub mod store;
pub mod tui;
