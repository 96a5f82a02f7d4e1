//! The one owner of recall's folder layouts: the names, name checks and
//! structs of a store folder (what `recall index` writes), of a host folder
//! in a team bucket (what `recall publish` writes), and of the daemon's
//! routes that serve a store's files to the browser. The store (`std::fs`),
//! `remote/` (`object_store`) and the wasm binding (`fetch`) only do I/O over
//! what this module names; none of them spells a file name or a key itself.
//!
//! The three layouts share their content-named folders:
//!
//! ```text
//! store folder            host folder (bucket)             daemon routes
//! manifest.json           catalog.json   (HostCatalog)     /api/index/manifest
//! catalog.json (sessions) snapshots/<store>-<rev>.json     /api/index/segments (SegmentListing)
//! segments/<h16>.seg      segments/<h16>.seg               /api/index/segments/<h16>.seg
//! generations/<h16>.json  generations/<h16>.json           /api/index/generations/<h16>.json
//! snapshots/<store>-<rev>.json
//! ```
//!
//! Two files are called `catalog.json` and hold different things: the store
//! folder's is the session table ([`store::CATALOG`]); a host folder's is what
//! a reader of that host fetches first ([`host::CATALOG`], [`HostCatalog`]).

use crate::naming::hash16;
use serde::{Deserialize, Serialize};

/// The folder of shard bodies, `<hash16>.json` each.
pub const GENERATIONS: &str = "generations";
/// The folder of index segments, `<hash16>.seg` each.
pub const SEGMENTS: &str = "segments";
/// The folder of superseded catalogs, `<store_id>-<revision>.json` each.
pub const SNAPSHOTS: &str = "snapshots";
/// The extension of segment files.
pub const SEGMENT_EXT: &str = "seg";

pub use crate::naming::{generation_file_name, is_generation_file_name as is_generation_name};

/// The name of segment bytes: `<hash16>.seg`.
pub fn segment_name(bytes: &[u8]) -> String {
    format!("{}.{SEGMENT_EXT}", hash16(bytes))
}

/// Whether `name` is a segment file name (`<hash16>.seg`, lowercase hex).
pub fn is_segment_name(name: &str) -> bool {
    name.strip_suffix(SEGMENT_EXT)
        .and_then(|stem| stem.strip_suffix('.'))
        .is_some_and(is_hex16)
}

/// Whether `id` is a store id safe to put into a file name or key (no `/`,
/// at most 64 characters of `[A-Za-z0-9_-]`).
pub fn is_store_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `id` is a host id: 16 lowercase hex digits.
pub fn is_host_id(id: &str) -> bool {
    is_hex16(id)
}

/// The file name of a snapshot of `store_id` at `revision`; `None` for a
/// store id that could escape its folder.
pub fn snapshot_name(store_id: &str, revision: u64) -> Option<String> {
    is_store_id(store_id).then(|| format!("{store_id}-{revision}.json"))
}

fn is_hex16(s: &str) -> bool {
    s.len() == 16
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The files of a store folder (besides the shared folders above).
pub mod store {
    /// The manifest: the store's id, revision and per-source state.
    pub const MANIFEST: &str = "manifest.json";
    /// The session table: every session's entry, by meta file.
    pub const CATALOG: &str = "catalog.json";
    /// The indexer's progress (what it last read of each source file).
    pub const STATE: &str = "indexer.json";
    /// The journal of what each sweep changed.
    pub const JOURNAL: &str = "ledger.jsonl";
    /// The live segment list (a [`super::SegmentListing`] without sizes).
    pub const SEGMENT_LIST: &str = "segments.json";
    /// The folder of session metas, `<hash16>.meta` each (the catalog's
    /// entries, in blocks).
    pub const METAS: &str = "metas";
    /// The extension of meta files.
    pub const META_EXT: &str = "meta";
    /// The extension of a generation's trigram filter sidecar
    /// (`generations/<hash16>.grams`).
    pub const GRAMS_EXT: &str = "grams";
    /// The host's team identity (id and name), kept by `recall clear`.
    pub const HOST: &str = "host.json";
    /// What is indexed: the history window and the sources.
    pub const POLICY: &str = "policy.json";
    /// The lock one writer holds.
    pub const LOCK: &str = "writer.lock";
    /// The folder of sealed checkpoints of the index state.
    pub const CHECKPOINTS: &str = "checkpoints";
    /// The folder of damage notes: an empty file per generation a reader
    /// found damaged (named like the generation), for the next sweep.
    pub const DAMAGED: &str = "damaged";
    /// The prefix of in-flight temporary files in any folder; readers skip
    /// them and the garbage collector removes stale ones.
    pub const TMP_PREFIX: &str = ".tmp-";
}

/// Paths inside a host folder of a team bucket, relative to the folder.
pub mod host {
    use super::{snapshot_name, GENERATIONS, SEGMENTS, SNAPSHOTS};

    /// What a reader fetches first ([`super::HostCatalog`]); written last.
    pub const CATALOG: &str = "catalog.json";

    /// A generation file (the name must pass `is_generation_name`).
    pub fn generation(name: &str) -> String {
        format!("{GENERATIONS}/{name}")
    }

    /// A segment file (the name must pass `is_segment_name`).
    pub fn segment(name: &str) -> String {
        format!("{SEGMENTS}/{name}")
    }

    /// The snapshot of `store_id` at `revision`; `None` for a bad store id.
    pub fn snapshot(store_id: &str, revision: u64) -> Option<String> {
        Some(format!(
            "{SNAPSHOTS}/{}",
            snapshot_name(store_id, revision)?
        ))
    }
}

/// Object keys of a team bucket: `<prefix>/hosts/<host-id>/<path in host>`.
pub mod bucket {
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

    /// `path` (a [`super::host`] path or folder) inside a host folder.
    pub fn key(prefix: &str, id: &str, path: &str) -> String {
        format!("{}/{path}", host(prefix, id))
    }
}

/// The daemon's routes that serve a store's files (local clients only).
pub mod routes {
    /// Every route below starts with this.
    pub const INDEX: &str = "/api/index/";
    /// The manifest (the current catalog's bytes).
    pub const MANIFEST: &str = "/api/index/manifest";
    /// The live segment list ([`super::SegmentListing`]).
    pub const SEGMENTS: &str = "/api/index/segments";
    /// One segment, as an axum route pattern.
    pub const SEGMENT: &str = "/api/index/segments/{file}";
    /// One generation, as an axum route pattern.
    pub const GENERATION: &str = "/api/index/generations/{file}";

    /// The route of one segment.
    pub fn segment(name: &str) -> String {
        format!("{SEGMENTS}/{name}")
    }

    /// The route of one generation.
    pub fn generation(name: &str) -> String {
        format!("{INDEX}{}/{name}", super::GENERATIONS)
    }
}

/// A host folder's `catalog.json`: what a reader needs first. Host
/// attribution comes from the folder it was read from; the name is the
/// host's own label.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCatalog {
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

/// The daemon's live segment list (`GET /api/index/segments`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentListing {
    /// The store the list belongs to.
    pub store_id: String,
    /// The list's own revision (increases on every change).
    pub revision: u64,
    /// Live segments, oldest first.
    pub segments: Vec<SegmentSummary>,
}

/// One live segment of a [`SegmentListing`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentSummary {
    /// `<hash16>.seg`: fetch it from [`routes::segment`].
    pub name: String,
    /// How many generations it indexes.
    pub generations: u64,
    /// The bytes of those generations.
    pub source_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_before_they_go_into_a_path() {
        assert!(is_segment_name("0123456789abcdef.seg"));
        assert!(!is_segment_name("0123456789ABCDEF.seg"));
        assert!(!is_segment_name("../../etc/passw.seg"));
        assert!(!is_segment_name("0123456789abcdef.segx"));
        assert!(is_host_id("00ff00ff00ff00ff"));
        assert!(!is_host_id("00ff00ff00ff00f/"));
        assert!(is_store_id("s_1-a"));
        assert!(!is_store_id("a/b") && !is_store_id("") && !is_store_id(&"x".repeat(65)));
        assert_eq!(snapshot_name("s1", 7).as_deref(), Some("s1-7.json"));
        assert_eq!(snapshot_name("../x", 7), None);
    }

    #[test]
    fn the_three_layouts_spell_the_same_files() {
        let g = "0123456789abcdef.json";
        let s = "0123456789abcdef.seg";
        assert_eq!(
            bucket::key("team", "00ff00ff00ff00ff", &host::generation(g)),
            "team/hosts/00ff00ff00ff00ff/generations/0123456789abcdef.json"
        );
        assert_eq!(
            bucket::key("", "00ff00ff00ff00ff", host::CATALOG),
            "hosts/00ff00ff00ff00ff/catalog.json"
        );
        assert_eq!(
            host::snapshot("s1", 3).as_deref(),
            Some("snapshots/s1-3.json")
        );
        assert_eq!(
            routes::segment(s),
            "/api/index/segments/0123456789abcdef.seg"
        );
        assert_eq!(
            routes::generation(g),
            "/api/index/generations/0123456789abcdef.json"
        );
        assert!(routes::SEGMENT.starts_with(routes::INDEX));
        assert!(routes::GENERATION.starts_with(routes::INDEX));
        assert_eq!(segment_name(b"abc"), "ba7816bf8f01cfea.seg");
    }
}
