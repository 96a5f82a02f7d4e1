//! The manifest's JSON: reading a legacy `manifest.json` (a store from
//! before the catalog, with corruption detection), the deterministic
//! serialization the browser reads (compact; struct fields in declaration
//! order, map keys sorted), the revision rule and the quarantine of a
//! corrupt catalog or manifest.

use super::StoreError;
use recall_core::model::Manifest;
use std::fs;
use std::io;
use std::path::Path;

pub use recall_core::layout::store::MANIFEST;

/// The schema this build reads and writes.
pub const SCHEMA: u32 = 1;

/// What was found on disk.
#[derive(Debug)]
pub enum ReadManifest {
    /// No manifest yet (a new or cleared store).
    Missing,
    /// A valid manifest and its exact bytes.
    Ok(Manifest, Vec<u8>),
    /// The file exists but is not a manifest (why).
    Corrupt(String),
}

/// Reads and parses `dir/manifest.json`.
pub fn read(dir: &Path) -> Result<ReadManifest, StoreError> {
    let path = dir.join(MANIFEST);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ReadManifest::Missing),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    Ok(parse(bytes))
}

/// Parses manifest bytes. A newer schema is reported as corrupt too: this
/// build cannot serve it.
pub fn parse(bytes: Vec<u8>) -> ReadManifest {
    match serde_json::from_slice::<Manifest>(&bytes) {
        Ok(m) if m.schema == SCHEMA => ReadManifest::Ok(m, bytes),
        Ok(m) => ReadManifest::Corrupt(format!("unsupported schema {}", m.schema)),
        Err(e) => ReadManifest::Corrupt(e.to_string()),
    }
}

/// The bytes of a manifest: compact JSON, the same for the same manifest
/// (its maps are ordered: `BTreeMap`s, and `serde_json::Map` without
/// `preserve_order`). Serialized directly: a publish writes the whole
/// manifest, megabytes for a large home, so no intermediate `Value` tree.
pub fn to_bytes(m: &Manifest) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(m)
}

/// How many `<file>.corrupt-*` files are kept (the newest): evidence,
/// but a store corrupted again and again must not fill the disk.
pub const KEEP_CORRUPT: usize = 3;

/// The revision after `r`; a manifest at the largest revision is refused
/// (it never wraps to 0, which would make old cursors look current).
pub fn next_revision(dir: &Path, r: u64) -> Result<u64, StoreError> {
    r.checked_add(1).ok_or_else(|| {
        StoreError::io(
            &dir.join(super::catalog::CATALOG),
            std::io::Error::other(
                "the manifest revision is at its maximum; `recall clear` starts a new store",
            ),
        )
    })
}

/// Deletes all but the newest [`KEEP_CORRUPT`] `<stem>.corrupt-<ms>[.<n>]`
/// files (ordered by their ms, then n).
fn prune_corrupt(dir: &Path, file: &str) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let prefix = format!("{}.corrupt-", stem(file));
    let mut found: Vec<((i64, u64), std::path::PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let rest = name.strip_prefix(&prefix)?;
            let (ms, n) = rest.split_once('.').unwrap_or((rest, "0"));
            Some(((ms.parse().ok()?, n.parse().ok()?), e.path()))
        })
        .collect();
    found.sort();
    let excess = found.len().saturating_sub(KEEP_CORRUPT);
    for (_, p) in found.into_iter().take(excess) {
        let _ = fs::remove_file(p);
    }
}

fn stem(file: &str) -> &str {
    file.strip_suffix(".json").unwrap_or(file)
}

/// Moves a corrupt `file` (`catalog.json`, or a legacy `manifest.json`)
/// aside as `<stem>.corrupt-<ms>` (`catalog.corrupt-…`) (evidence: the newest [`KEEP_CORRUPT`]
/// are kept). Returns the new name.
pub fn quarantine(dir: &Path, file: &str, now_ms: i64) -> Result<String, StoreError> {
    let from = dir.join(file);
    let stem = stem(file);
    let mut name = format!("{stem}.corrupt-{now_ms}");
    let mut n = 1;
    while dir.join(&name).exists() {
        name = format!("{stem}.corrupt-{now_ms}.{n}");
        n += 1;
    }
    fs::rename(&from, dir.join(&name)).map_err(|e| StoreError::io(&from, e))?;
    prune_corrupt(dir, file);
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_compact_deterministic_and_round_trip() {
        let mut m = Manifest::empty("s1".into(), 3);
        m.tombstones.insert("pi:b".into(), 2);
        m.tombstones.insert("pi:a".into(), 1);
        let bytes = to_bytes(&m).unwrap();
        let s = String::from_utf8(bytes.clone()).unwrap();
        assert!(!s.contains(' ') && !s.contains('\n'), "{s}");
        assert!(s.find("pi:a") < s.find("pi:b"), "map keys in order: {s}");
        assert_eq!(to_bytes(&m.clone()).unwrap(), bytes);
        let back: Manifest = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, m);
        // serde_json's map keeps keys sorted in this build (no
        // `preserve_order`), so free-form `state` values are ordered too.
        let mut probe = serde_json::Map::new();
        probe.insert("b".into(), serde_json::Value::Null);
        probe.insert("a".into(), serde_json::Value::Null);
        assert_eq!(probe.keys().next().map(String::as_str), Some("a"));
    }

    #[test]
    fn garbage_and_future_schemas_are_corrupt() {
        assert!(matches!(
            parse(b"{\"schema\":1".to_vec()),
            ReadManifest::Corrupt(_)
        ));
        let mut m = Manifest::empty("s".into(), 1);
        m.schema = 2;
        let b = serde_json::to_vec(&m).unwrap();
        assert!(matches!(parse(b), ReadManifest::Corrupt(_)));
    }
}
