//! The manifest entry's wire form for reading: every field of
//! [`SessionMeta`] and [`ManifestEntry`] at one level, as the entry is
//! written (`#[serde(flatten)]`). Deserializing through this struct instead
//! of the flattened derive spares serde's buffering of each entry into
//! untyped content first: an entry's strings are allocated once. The
//! attributes must match the two structs' own; a field added to either
//! fails to compile here until it is added (the `From` builds both whole),
//! and the test compares with the flattened derive itself.

use super::{FileCursor, ManifestEntry, Parent, SessionMeta, Source};
use serde::Deserialize;

/// A manifest entry as it reads from JSON.
#[derive(Deserialize)]
pub(super) struct FlatEntry {
    source: Source,
    session_id: String,
    title: Option<String>,
    cwd: Option<String>,
    branch: Option<String>,
    created_ms: Option<i64>,
    updated_ms: Option<i64>,
    messages: u64,
    parent: Option<Parent>,
    resume: Option<String>,
    paths: Vec<String>,
    #[serde(default)]
    models: Vec<String>,
    generation_file: String,
    records: u64,
    #[serde(default)]
    max_ts_ms: Option<i64>,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    source_gone: bool,
    #[serde(default)]
    files: Vec<FileCursor>,
    #[serde(default)]
    watermark: i64,
    #[serde(default)]
    state: serde_json::Value,
}

impl From<FlatEntry> for ManifestEntry {
    fn from(f: FlatEntry) -> ManifestEntry {
        ManifestEntry {
            meta: SessionMeta {
                source: f.source,
                session_id: f.session_id,
                title: f.title,
                cwd: f.cwd,
                branch: f.branch,
                created_ms: f.created_ms,
                updated_ms: f.updated_ms,
                messages: f.messages,
                parent: f.parent,
                resume: f.resume,
                paths: f.paths,
                models: f.models,
            },
            generation_file: f.generation_file,
            records: f.records,
            max_ts_ms: f.max_ts_ms,
            bytes: f.bytes,
            source_gone: f.source_gone,
            files: f.files,
            watermark: f.watermark,
            state: f.state,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FileCursor, ManifestEntry, Parent, Relation, SessionMeta, Source};

    /// The flattened derive, as entries were read before: the reference.
    #[derive(serde::Deserialize)]
    struct Flattened {
        #[serde(flatten)]
        meta: SessionMeta,
        generation_file: String,
        records: u64,
        #[serde(default)]
        max_ts_ms: Option<i64>,
        #[serde(default)]
        bytes: u64,
        #[serde(default)]
        source_gone: bool,
        #[serde(default)]
        files: Vec<FileCursor>,
        #[serde(default)]
        watermark: i64,
        #[serde(default)]
        state: serde_json::Value,
    }

    fn reference(json: &str) -> Result<ManifestEntry, serde_json::Error> {
        let f: Flattened = serde_json::from_str(json)?;
        Ok(ManifestEntry {
            meta: f.meta,
            generation_file: f.generation_file,
            records: f.records,
            max_ts_ms: f.max_ts_ms,
            bytes: f.bytes,
            source_gone: f.source_gone,
            files: f.files,
            watermark: f.watermark,
            state: f.state,
        })
    }

    fn full() -> ManifestEntry {
        ManifestEntry {
            meta: SessionMeta {
                source: Source::Codex,
                session_id: "s1".into(),
                title: Some("a \"title\" é".into()),
                cwd: Some("/w".into()),
                branch: Some("main".into()),
                created_ms: Some(-5),
                updated_ms: Some(9),
                messages: 3,
                parent: Some(Parent {
                    key: "codex:p".into(),
                    relation: Relation::Fork,
                }),
                resume: Some("codex resume s1".into()),
                paths: vec!["/a".into(), "/b".into()],
                models: vec!["m".into()],
            },
            generation_file: "0123456789abcdef.json".into(),
            records: 7,
            max_ts_ms: Some(11),
            bytes: 100,
            source_gone: true,
            files: vec![FileCursor {
                path: "/a".into(),
                mtime_ns: -(1i128 << 70),
                generation: 2,
                ..FileCursor::default()
            }],
            watermark: 4,
            state: serde_json::json!({"n": [1, 2]}),
        }
    }

    #[test]
    fn reads_what_the_flattened_derive_read() {
        let written = serde_json::to_string(&full()).unwrap();
        let minimal = r#"{"source":"pi","session_id":"x","messages":0,"paths":[],
            "generation_file":"g.json","records":0}"#;
        let extra = r#"{"source":"pi","session_id":"x","messages":0,"paths":[],
            "generation_file":"g.json","records":0,"future":{"a":1},"title":null}"#;
        for json in [written.as_str(), minimal, extra] {
            let ours: ManifestEntry = serde_json::from_str(json).unwrap();
            assert_eq!(ours, reference(json).unwrap(), "{json}");
        }
        assert_eq!(
            serde_json::from_str::<ManifestEntry>(&written).unwrap(),
            full()
        );
        // A missing required field is refused by both.
        for json in [
            r#"{"source":"pi","session_id":"x","messages":0,"generation_file":"g","records":0}"#,
            r#"{"source":"pi","session_id":"x","messages":0,"paths":[],"records":0}"#,
            r#"{"source":"nope","session_id":"x","messages":0,"paths":[],"generation_file":"g","records":0}"#,
        ] {
            assert!(
                serde_json::from_str::<ManifestEntry>(json).is_err(),
                "{json}"
            );
            assert!(reference(json).is_err(), "{json}");
        }
    }
}
