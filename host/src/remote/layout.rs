//! Object keys of a host under a team prefix. Names put into keys are
//! checked first, so no key escapes its host's folder.

use recall_core::naming::is_generation_file_name;

/// The file a host's catalog lives in (written last).
pub const CATALOG: &str = "catalog.json";

/// `<prefix>/hosts` (or `hosts` for an empty prefix).
pub fn hosts(prefix: &str) -> String {
    if prefix.is_empty() {
        "hosts".to_string()
    } else {
        format!("{prefix}/hosts")
    }
}

/// A host folder.
pub fn host(prefix: &str, id: &str) -> String {
    format!("{}/{id}", hosts(prefix))
}

/// A host's catalog.
pub fn catalog(prefix: &str, id: &str) -> String {
    format!("{}/{CATALOG}", host(prefix, id))
}

/// A host's generations folder.
pub fn generations(prefix: &str, id: &str) -> String {
    format!("{}/generations", host(prefix, id))
}

/// A host's segments folder.
pub fn segments(prefix: &str, id: &str) -> String {
    format!("{}/segments", host(prefix, id))
}

/// A host's catalog snapshot (its manifest at one revision).
pub fn snapshot(prefix: &str, id: &str, store_id: &str, revision: u64) -> String {
    format!("{}/snapshots/{store_id}-{revision}.json", host(prefix, id))
}

/// Host ids are 16 lowercase hex digits.
pub fn is_host_id(id: &str) -> bool {
    id.len() == 16
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Store ids as the store writes them (no `/`, bounded).
pub fn is_store_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `<hash16>.seg`, as the store names segments.
pub use crate::store::segments::is_segment_name;

/// A generation file name.
pub fn is_generation(name: &str) -> bool {
    is_generation_file_name(name)
}

/// `catalog.json`: what a reader needs first. Host attribution comes from
/// the folder it was read from; the name is the host's own label.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteCatalog {
    /// Always 1.
    pub schema: u32,
    /// The host's human name.
    pub name: String,
    /// The store id (incarnation) of the snapshot.
    pub store_id: String,
    /// Its revision.
    pub revision: u64,
    /// Live segments (`<hash16>.seg` under `segments/`).
    pub segments: Vec<String>,
    /// When it was published (epoch ms).
    pub published_ms: i64,
}
