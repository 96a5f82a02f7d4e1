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
