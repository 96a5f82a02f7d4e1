//! `manifest.json`: reading (with corruption detection), canonical
//! serialization (every object's keys sorted, compact) and the durable
//! atomic replace.

use super::fsutil::{random_hex, write_atomic};
use super::StoreError;
use recall_core::model::Manifest;
use serde_json::{Map, Value};
use std::fs;
use std::io;
use std::path::Path;

/// The manifest file name.
pub const MANIFEST: &str = "manifest.json";

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

/// Canonical bytes: compact JSON with every object's keys sorted.
pub fn to_bytes(m: &Manifest) -> Result<Vec<u8>, serde_json::Error> {
    let v = serde_json::to_value(m)?;
    // serde_json's default map is already sorted; rebuild only when a
    // feature (`preserve_order`) made it keep insertion order.
    let v = if maps_are_sorted() { v } else { sort_keys(v) };
    serde_json::to_vec(&v)
}

/// Whether `serde_json::Map` iterates in key order in this build.
fn maps_are_sorted() -> bool {
    let mut probe = Map::new();
    probe.insert("b".into(), Value::Null);
    probe.insert("a".into(), Value::Null);
    probe.keys().next().map(String::as_str) == Some("a")
}

/// Rebuilds every object with its keys in sorted order (whatever map type
/// serde_json was built with).
fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = Map::new();
            for (k, v) in entries {
                out.insert(k, sort_keys(v));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// Replaces `dir/manifest.json` durably (temp → fsync → rename → fsync dir).
pub fn write(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = format!(".manifest.tmp-{}", random_hex(8));
    let dest = dir.join(MANIFEST);
    write_atomic(dir, &tmp, &dest, bytes).map_err(|e| StoreError::io(&dest, e))
}

/// Moves a corrupt manifest aside as `manifest.corrupt-<ms>` (never
/// deleted: it is evidence). Returns the new name.
pub fn quarantine(dir: &Path, now_ms: i64) -> Result<String, StoreError> {
    let from = dir.join(MANIFEST);
    let mut name = format!("manifest.corrupt-{now_ms}");
    let mut n = 1;
    while dir.join(&name).exists() {
        name = format!("manifest.corrupt-{now_ms}.{n}");
        n += 1;
    }
    fs::rename(&from, dir.join(&name)).map_err(|e| StoreError::io(&from, e))?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_bytes_sort_every_key() {
        let m = Manifest::empty("s1".into(), 3);
        let s = String::from_utf8(to_bytes(&m).unwrap()).unwrap();
        assert_eq!(
            s,
            r#"{"parser_version":3,"revision":0,"schema":1,"sessions":{},"store_id":"s1","tombstones":{},"updated_at_ms":0}"#
        );
    }

    #[test]
    fn sorting_works_whatever_the_map_order() {
        let v = serde_json::json!({"z": {"b": 1, "a": [{"d": 2, "c": 3}]}, "y": 0});
        assert_eq!(
            serde_json::to_string(&sort_keys(v)).unwrap(),
            r#"{"y":0,"z":{"a":[{"c":3,"d":2}],"b":1}}"#
        );
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
