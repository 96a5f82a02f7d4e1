//! `recall report`: one self-contained HTML file that shows and searches a
//! set of sessions offline (DESIGN.md §9).
//!
//! The file inlines the report viewer (the dashboard's ES modules, booted
//! from Blob URLs by one hashed inline script), the wasm core (gzip + base64)
//! and the selected sessions' shards with a manifest naming only them (one
//! gzip + base64 JSON payload). Opened from `file://` with no server and no
//! network, it searches those shards with the same core as `recall search`.
//!
//! One concern per module: [`select`] decides which sessions go in,
//! [`payload`] encodes them, [`html`] assembles the page.

pub mod html;
pub mod payload;
pub mod select;

pub use html::render;
pub use payload::Payload;
pub use select::{subset, with_descendants};

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A requested session key is not in the store.
    #[error("no indexed session has the key {0}")]
    UnknownSession(String),
    /// Nothing was selected.
    #[error("the report would hold no session")]
    Empty,
    /// A viewer asset is missing from the binary.
    #[error("the report viewer is not embedded in this binary (missing {0})")]
    MissingAsset(String),
    /// An asset cannot be inlined safely.
    #[error("asset {0} cannot be inlined: {1}")]
    BadAsset(String, &'static str),
    /// Encoding failed.
    #[error("cannot encode the report: {0}")]
    Encode(String),
}
