//! recall-host: sources, extractors, store, indexer, HTTP server and CLI.

pub mod arena;
pub mod catalog;
pub mod cli;
pub mod demo;
pub mod extract;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod index;
pub mod mcp;
pub mod remote;
pub mod report;
pub mod store;
pub mod tui;
