//! Session lineage from the `parent` links in the manifest: the chain of
//! ancestors and the tree of descendants (subagents, forks, resumes,
//! branches). Cycles and dangling links in bad data are cut, never followed
//! forever.

use recall_core::model::{Manifest, ManifestEntry};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Deepest tree walked (deeper levels are cut and flagged).
pub const MAX_DEPTH: usize = 64;

/// The summary of one session as the session routes show it.
pub fn summary(key: &str, e: &ManifestEntry) -> Value {
    let m = &e.meta;
    json!({
        "session_key": key,
        "source": m.source,
        "session_id": m.session_id,
        "title": m.title,
        "cwd": m.cwd,
        "branch": m.branch,
        "created_ms": m.created_ms,
        "updated_ms": m.updated_ms,
        "messages": m.messages,
        "records": e.records,
        "parent": m.parent,
        "resume": m.resume,
        "source_gone": e.source_gone,
    })
}

/// Children of every session, ordered by creation time then key.
pub fn children(manifest: &Manifest) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, e) in &manifest.sessions {
        if let Some(p) = &e.meta.parent {
            if p.key != *k {
                out.entry(p.key.as_str()).or_default().push(k.as_str());
            }
        }
    }
    for kids in out.values_mut() {
        kids.sort_by_key(|k| {
            let created = manifest.sessions.get(*k).and_then(|e| e.meta.created_ms);
            (created.unwrap_or(i64::MAX), *k)
        });
    }
    out
}

/// Ancestors of `key`, root first. A parent that is not indexed appears as
/// `{session_key, missing: true}` and ends the chain.
pub fn ancestors(manifest: &Manifest, key: &str) -> Vec<Value> {
    let mut chain = Vec::new();
    let mut seen = HashSet::from([key.to_string()]);
    let mut cur = manifest
        .sessions
        .get(key)
        .and_then(|e| e.meta.parent.clone());
    while let Some(p) = cur {
        if !seen.insert(p.key.clone()) || chain.len() >= MAX_DEPTH {
            break;
        }
        match manifest.sessions.get(&p.key) {
            Some(e) => {
                chain.push(summary(&p.key, e));
                cur = e.meta.parent.clone();
            }
            None => {
                chain.push(json!({"session_key": p.key, "missing": true}));
                cur = None;
            }
        }
    }
    chain.reverse();
    chain
}

/// The descendant tree of `key`: each node is a summary plus `children`.
pub fn descendants(manifest: &Manifest, key: &str) -> Vec<Value> {
    let kids = children(manifest);
    let mut seen = HashSet::from([key.to_string()]);
    tree(manifest, &kids, key, 0, &mut seen)
}

fn tree(
    manifest: &Manifest,
    kids: &BTreeMap<&str, Vec<&str>>,
    key: &str,
    depth: usize,
    seen: &mut HashSet<String>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for k in kids.get(key).map(Vec::as_slice).unwrap_or(&[]) {
        let Some(e) = manifest.sessions.get(*k) else {
            continue;
        };
        if !seen.insert(k.to_string()) {
            continue;
        }
        let mut node = summary(k, e);
        let sub = if depth + 1 >= MAX_DEPTH {
            node["truncated"] = json!(true);
            Vec::new()
        } else {
            tree(manifest, kids, k, depth + 1, seen)
        };
        node["children"] = Value::Array(sub);
        out.push(node);
    }
    out
}

/// `key` and all its descendants, parents before children (the export order).
pub fn subtree_keys(manifest: &Manifest, key: &str) -> Vec<String> {
    let kids = children(manifest);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<(&str, usize)> = vec![(key, 0)];
    while let Some((k, depth)) = stack.pop() {
        if !seen.insert(k.to_string()) {
            continue;
        }
        out.push(k.to_string());
        if depth < MAX_DEPTH {
            let list = kids.get(k).map(Vec::as_slice).unwrap_or(&[]);
            stack.extend(list.iter().rev().map(|c| (*c, depth + 1)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use recall_core::model::{Parent, Relation, SessionMeta, Source};

    fn entry(id: &str, parent: Option<&str>, created: i64) -> (String, ManifestEntry) {
        let meta = SessionMeta {
            source: Source::Pi,
            session_id: id.into(),
            title: None,
            cwd: None,
            branch: None,
            created_ms: Some(created),
            updated_ms: Some(created),
            messages: 1,
            parent: parent.map(|p| Parent {
                key: format!("pi:{p}"),
                relation: Relation::Fork,
            }),
            resume: None,
            paths: vec![],
        };
        (
            meta.key(),
            ManifestEntry {
                meta,
                generation_file: String::new(),
                records: 1,
                max_ts_ms: None,
                bytes: 0,
                source_gone: false,
                files: vec![],
                watermark: 0,
                state: Value::Null,
            },
        )
    }

    fn manifest(entries: &[(&str, Option<&str>, i64)]) -> Manifest {
        let mut m = Manifest::empty("s".into(), 1);
        for (id, p, t) in entries {
            let (k, e) = entry(id, *p, *t);
            m.sessions.insert(k, e);
        }
        m
    }

    #[test]
    fn tree_and_chain() {
        let m = manifest(&[
            ("a", None, 1),
            ("b", Some("a"), 3),
            ("c", Some("a"), 2),
            ("d", Some("c"), 4),
        ]);
        let chain = ancestors(&m, "pi:d");
        let anc: Vec<&str> = chain
            .iter()
            .map(|v| v["session_key"].as_str().unwrap())
            .collect();
        assert_eq!(anc, ["pi:a", "pi:c"]);
        let down = descendants(&m, "pi:a");
        assert_eq!(down[0]["session_key"], "pi:c", "children by creation time");
        assert_eq!(down[0]["children"][0]["session_key"], "pi:d");
        assert_eq!(down[1]["session_key"], "pi:b");
        assert_eq!(subtree_keys(&m, "pi:a"), ["pi:a", "pi:c", "pi:d", "pi:b"]);
    }

    #[test]
    fn cycles_and_missing_parents_end() {
        let m = manifest(&[
            ("a", Some("b"), 1),
            ("b", Some("a"), 2),
            ("c", Some("gone"), 3),
        ]);
        assert_eq!(ancestors(&m, "pi:a").len(), 1);
        assert_eq!(subtree_keys(&m, "pi:a"), ["pi:a", "pi:b"]);
        assert_eq!(descendants(&m, "pi:a").len(), 1);
        let c = ancestors(&m, "pi:c");
        assert_eq!(c[0]["missing"], true);
    }
}
