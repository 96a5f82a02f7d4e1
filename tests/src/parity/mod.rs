//! Native/wasm parity (DESIGN.md §8, §10): the same requests give
//! byte-identical JSON from the native core and from the shipped
//! `pkg/recall_core_bg.wasm` run in wasmtime.
//!
//! * [`corpus`] turns corpus-gen truth files into shards and a manifest;
//!   [`agents`] adds the real sessions of the agents corpus-gen does not write.
//! * [`requests`] generates thousands of varied requests from a seed, each
//!   with what it must find (so parity cannot pass vacuously).
//! * [`wasm`] runs the committed `.wasm` through its byte ABI.
//! * [`run`] sends every request (and every page its cursors lead to) to
//!   both, compares the bytes and checks the expectations.

pub mod agents;
pub mod corpus;
pub mod filters;
pub mod requests;
pub mod rng;
pub mod run;
pub mod segmented;
pub mod wasm;

use std::path::{Path, PathBuf};

/// Why the harness could not run (as opposed to a parity difference).
#[derive(Debug, thiserror::Error)]
pub enum ParityError {
    /// corpus-gen failed or is missing.
    #[error("corpus generation: {0}")]
    Generate(String),
    /// truth.jsonl could not be read or parsed.
    #[error("truth {path}: {message}")]
    Truth {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The native index refused the corpus.
    #[error("native index: {0}")]
    Native(String),
    /// wasmtime failed to load or run the module.
    #[error("wasm: {0}")]
    Wasm(String),
}

/// The repository root (`tests/..`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// The committed wasm module the browser loads.
pub fn shipped_wasm() -> PathBuf {
    repo_root().join("pkg").join("recall_core_bg.wasm")
}
