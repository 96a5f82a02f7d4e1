//! recall-host: sources, extractors, store, indexer, HTTP server and CLI.

pub mod arena;
pub mod assets;
pub mod budget;
pub mod catalog;
pub mod chunked;
pub mod cli;
pub mod demo;
pub mod export;
pub mod extract;
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
