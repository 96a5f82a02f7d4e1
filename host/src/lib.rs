//! recall-host: sources, extractors, store, indexer, HTTP server and CLI.

pub mod cli;
pub mod extract;
