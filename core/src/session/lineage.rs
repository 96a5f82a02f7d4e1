//! Session lineage (`/api/session/{key}/trace`, `recall trace`, offline
//! mode, reports) from the `parent` links in the manifest: the chain of
//! ancestors and the tree of descendants (subagents, forks, resumes,
//! branches). Cycles and dangling links in bad data are cut, never
//! followed forever.

use super::summary::SessionSummary;
use crate::model::Manifest;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// Deepest tree walked (deeper levels are cut and flagged).
pub const MAX_DEPTH: usize = 64;

/// An ancestor: an indexed session, or a parent that is not indexed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Ancestor {
    /// A parent the index does not hold (it ends the chain).
    Missing {
        /// Its key, as the child names it.
        session_key: String,
        /// Always true.
        missing: bool,
    },
    /// An indexed session.
    Known(Box<SessionSummary>),
}

/// A descendant and its own descendants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineageNode {
    /// The session.
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// Its children, by creation time then key.
    pub children: Vec<LineageNode>,
    /// Deeper levels were cut at [`MAX_DEPTH`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A session's lineage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceResponse {
    /// Always true.
    pub ok: bool,
    /// The manifest revision read.
    pub revision: u64,
    /// The session.
    pub session: SessionSummary,
    /// Its ancestors, root first.
    pub ancestors: Vec<Ancestor>,
    /// Its descendant tree.
    pub descendants: Vec<LineageNode>,
}

/// The lineage of `key`, or `None` when the manifest has no such session.
pub fn trace(m: &Manifest, key: &str) -> Option<TraceResponse> {
    let e = m.sessions.get(key)?;
    Some(TraceResponse {
        ok: true,
        revision: m.revision,
        session: SessionSummary::of(key, e),
        ancestors: ancestors(m, key),
        descendants: descendants(m, key),
    })
}

/// Children of every session, ordered by creation time then key.
pub fn children(m: &Manifest) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, e) in &m.sessions {
        if let Some(p) = &e.meta.parent {
            if p.key != *k {
                out.entry(p.key.as_str()).or_default().push(k.as_str());
            }
        }
    }
    for kids in out.values_mut() {
        kids.sort_by_key(|k| {
            let created = m.sessions.get(*k).and_then(|e| e.meta.created_ms);
            (created.unwrap_or(i64::MAX), *k)
        });
    }
    out
}

/// Ancestors of `key`, root first. A parent that is not indexed appears as
/// [`Ancestor::Missing`] and ends the chain.
pub fn ancestors(m: &Manifest, key: &str) -> Vec<Ancestor> {
    let mut chain = Vec::new();
    let mut seen = HashSet::from([key.to_string()]);
    let mut cur = m.sessions.get(key).and_then(|e| e.meta.parent.clone());
    while let Some(p) = cur {
        if !seen.insert(p.key.clone()) || chain.len() >= MAX_DEPTH {
            break;
        }
        match m.sessions.get(&p.key) {
            Some(e) => {
                chain.push(Ancestor::Known(Box::new(SessionSummary::of(&p.key, e))));
                cur = e.meta.parent.clone();
            }
            None => {
                chain.push(Ancestor::Missing {
                    session_key: p.key,
                    missing: true,
                });
                cur = None;
            }
        }
    }
    chain.reverse();
    chain
}

/// The descendant tree of `key`.
pub fn descendants(m: &Manifest, key: &str) -> Vec<LineageNode> {
    let kids = children(m);
    let mut seen = HashSet::from([key.to_string()]);
    tree(m, &kids, key, 0, &mut seen)
}

fn tree(
    m: &Manifest,
    kids: &BTreeMap<&str, Vec<&str>>,
    key: &str,
    depth: usize,
    seen: &mut HashSet<String>,
) -> Vec<LineageNode> {
    let mut out = Vec::new();
    for k in kids.get(key).map(Vec::as_slice).unwrap_or(&[]) {
        let Some(e) = m.sessions.get(*k) else {
            continue;
        };
        if !seen.insert(k.to_string()) {
            continue;
        }
        let truncated = depth + 1 >= MAX_DEPTH;
        let children = if truncated {
            Vec::new()
        } else {
            tree(m, kids, k, depth + 1, seen)
        };
        out.push(LineageNode {
            summary: SessionSummary::of(k, e),
            children,
            truncated,
        });
    }
    out
}

/// `key` and all its descendants, parents before children (the export order).
pub fn subtree_keys(m: &Manifest, key: &str) -> Vec<String> {
    let kids = children(m);
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
    use crate::model::{ManifestEntry, Parent, Relation, SessionMeta, Source};

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
            models: Vec::new(),
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
                state: serde_json::Value::Null,
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

    fn key(a: &Ancestor) -> &str {
        match a {
            Ancestor::Known(s) => &s.session_key,
            Ancestor::Missing { session_key, .. } => session_key,
        }
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
        let anc: Vec<&str> = chain.iter().map(key).collect();
        assert_eq!(anc, ["pi:a", "pi:c"]);
        let down = descendants(&m, "pi:a");
        assert_eq!(
            down[0].summary.session_key, "pi:c",
            "children by creation time"
        );
        assert_eq!(down[0].children[0].summary.session_key, "pi:d");
        assert_eq!(down[1].summary.session_key, "pi:b");
        assert_eq!(subtree_keys(&m, "pi:a"), ["pi:a", "pi:c", "pi:d", "pi:b"]);
        let t = serde_json::to_value(trace(&m, "pi:c").unwrap()).unwrap();
        assert_eq!(t["ancestors"][0]["session_key"], "pi:a");
        assert_eq!(t["descendants"][0]["children"], serde_json::json!([]));
        assert!(t["descendants"][0].get("truncated").is_none());
        assert!(trace(&m, "pi:zz").is_none());
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
        let c = serde_json::to_value(ancestors(&m, "pi:c")).unwrap();
        assert_eq!(
            c[0],
            serde_json::json!({"session_key": "pi:gone", "missing": true})
        );
    }

    #[test]
    fn deep_chains_are_cut_and_flagged() {
        let ids: Vec<String> = (0..70).map(|i| format!("n{i:02}")).collect();
        let rows: Vec<(&str, Option<&str>, i64)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), (i > 0).then(|| ids[i - 1].as_str()), i as i64))
            .collect();
        let m = manifest(&rows);
        assert_eq!(ancestors(&m, "pi:n69").len(), MAX_DEPTH);
        let mut node = &descendants(&m, "pi:n00")[0];
        let mut depth = 1;
        while let Some(next) = node.children.first() {
            node = next;
            depth += 1;
        }
        assert_eq!(depth, MAX_DEPTH);
        assert!(node.truncated);
    }
}
