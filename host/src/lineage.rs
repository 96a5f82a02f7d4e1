//! Session lineage for the host's JSON surfaces (export, MCP): thin
//! wrappers over the core's one implementation
//! (`recall_core::session::lineage`), as JSON values the callers redact or
//! extend.

use recall_core::model::{Manifest, ManifestEntry};
use recall_core::session::{lineage, SessionSummary};
use serde_json::Value;

pub use lineage::{children, subtree_keys, MAX_DEPTH};

fn value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The summary of one session as the session routes show it.
pub fn summary(key: &str, e: &ManifestEntry) -> Value {
    value(&SessionSummary::of(key, e))
}

/// Ancestors of `key`, root first (a parent not indexed is
/// `{session_key, missing: true}` and ends the chain).
pub fn ancestors(manifest: &Manifest, key: &str) -> Vec<Value> {
    lineage::ancestors(manifest, key)
        .iter()
        .map(value)
        .collect()
}

/// The descendant tree of `key`: each node is a summary plus `children`.
pub fn descendants(manifest: &Manifest, key: &str) -> Vec<Value> {
    lineage::descendants(manifest, key)
        .iter()
        .map(value)
        .collect()
}
