//! Which sessions a report holds: the requested keys plus all their
//! descendants (subagents, forks, resumed copies, branches), and the
//! manifest restricted to them.

use super::ReportError;
use recall_core::model::Manifest;
use std::collections::{BTreeMap, BTreeSet};

/// `keys` and every session that descends from one of them, in manifest
/// (key) order. An unknown key is an error; an empty selection too.
pub fn with_descendants(manifest: &Manifest, keys: &[String]) -> Result<Vec<String>, ReportError> {
    for k in keys {
        if !manifest.sessions.contains_key(k) {
            return Err(ReportError::UnknownSession(k.clone()));
        }
    }
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, e) in &manifest.sessions {
        if let Some(p) = &e.meta.parent {
            if p.key != *k {
                children.entry(p.key.as_str()).or_default().push(k.as_str());
            }
        }
    }
    let mut chosen: BTreeSet<String> = BTreeSet::new();
    let mut stack: Vec<&str> = keys.iter().map(String::as_str).collect();
    while let Some(k) = stack.pop() {
        if chosen.insert(k.to_string()) {
            stack.extend(children.get(k).map(Vec::as_slice).unwrap_or(&[]));
        }
    }
    if chosen.is_empty() {
        return Err(ReportError::Empty);
    }
    Ok(chosen.into_iter().collect())
}

/// The manifest restricted to `keys`, keeping its store id and revision (so
/// cursors and coverage describe the same snapshot). File cursors and
/// parser state are dropped: the viewer never reads them. Tombstones too.
pub fn subset(manifest: &Manifest, keys: &[String]) -> Manifest {
    let mut out = Manifest::empty(manifest.store_id.clone(), manifest.parser_version);
    out.schema = manifest.schema;
    out.revision = manifest.revision;
    out.updated_at_ms = manifest.updated_at_ms;
    for k in keys {
        if let Some(e) = manifest.sessions.get(k) {
            let mut e = e.clone();
            e.files.clear();
            e.state = serde_json::Value::Null;
            out.sessions.insert(k.clone(), e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use recall_core::model::{ManifestEntry, Parent, Relation, SessionMeta, Source};

    fn entry(id: &str, parent: Option<&str>) -> ManifestEntry {
        let meta: SessionMeta = serde_json::from_value(serde_json::json!({
            "source": "codex", "session_id": id, "title": null, "cwd": null, "branch": null,
            "created_ms": 1, "updated_ms": 2, "messages": 1, "parent": null, "resume": null, "paths": [],
        }))
        .unwrap();
        let mut e = ManifestEntry {
            meta,
            generation_file: format!("{id:0>16}.json"),
            records: 1,
            max_ts_ms: None,
            bytes: 0,
            source_gone: false,
            files: Vec::new(),
            watermark: 0,
            state: serde_json::Value::Null,
        };
        e.meta.parent = parent.map(|p| Parent {
            key: format!("codex:{p}"),
            relation: Relation::Subagent,
        });
        assert_eq!(e.meta.source, Source::Codex);
        e
    }

    fn manifest() -> Manifest {
        let mut m = Manifest::empty("s".into(), 1);
        m.revision = 7;
        for (id, p) in [
            ("a", None),
            ("b", Some("a")),
            ("c", Some("b")),
            ("d", None),
            ("e", Some("e")),
        ] {
            m.sessions.insert(format!("codex:{id}"), entry(id, p));
        }
        m
    }

    #[test]
    fn a_key_brings_its_whole_subtree_and_nothing_else() {
        let m = manifest();
        let got = with_descendants(&m, &["codex:a".into()]).unwrap();
        assert_eq!(got, ["codex:a", "codex:b", "codex:c"]);
        let got = with_descendants(&m, &["codex:b".into(), "codex:d".into()]).unwrap();
        assert_eq!(got, ["codex:b", "codex:c", "codex:d"]);
        // A self-parent is not a cycle to follow forever.
        assert_eq!(
            with_descendants(&m, &["codex:e".into()]).unwrap(),
            ["codex:e"]
        );
    }

    #[test]
    fn unknown_and_empty_selections_are_errors() {
        let m = manifest();
        assert!(matches!(
            with_descendants(&m, &["codex:zz".into()]),
            Err(ReportError::UnknownSession(_))
        ));
        assert!(matches!(with_descendants(&m, &[]), Err(ReportError::Empty)));
    }

    #[test]
    fn the_subset_keeps_the_snapshot_identity() {
        let m = manifest();
        let s = subset(&m, &["codex:d".into()]);
        assert_eq!(s.revision, 7);
        assert_eq!(s.store_id, "s");
        assert_eq!(s.sessions.keys().collect::<Vec<_>>(), ["codex:d"]);
    }
}
