//! Claude Code rewinds (DESIGN.md §5): the main file's lines form a tree by
//! `parentUuid` (a `compact_boundary` with a null parent hangs under its
//! `logicalParentUuid`). The active path runs from the newest conversational
//! line back to the root. Where a node on that path has two or more
//! conversational children at different times, the children that are not on
//! the path start abandoned branches; every line below them is superseded.
//! When the path cannot be resolved (a parent that is not in the file, a
//! cycle), nothing is marked.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// One uuid-bearing main-file line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    parent: Option<String>,
    ts: i64,
    conversational: bool,
}

/// The parent tree of a session's main file. Serialized (in resume
/// checkpoints) as its nodes with their uuids, a parent that is a node
/// written as the node's index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Repr", into = "Repr")]
pub struct Tree {
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
}

/// A node as serialized: uuid, parent, ts, conversational.
type ReprNode = (String, Option<Link>, i64, bool);

#[derive(Serialize, Deserialize)]
struct Repr(Vec<ReprNode>);

/// A parent: a node's index, or a uuid that is no node.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Link {
    Node(usize),
    Uuid(String),
}

impl From<Tree> for Repr {
    fn from(t: Tree) -> Repr {
        let mut uuids = vec![String::new(); t.nodes.len()];
        for (u, &i) in &t.index {
            if let Some(slot) = uuids.get_mut(i) {
                slot.clone_from(u);
            }
        }
        let nodes = t
            .nodes
            .into_iter()
            .zip(uuids)
            .map(|(n, uuid)| {
                let parent = n.parent.map(|p| match t.index.get(&p) {
                    Some(&i) => Link::Node(i),
                    None => Link::Uuid(p),
                });
                (uuid, parent, n.ts, n.conversational)
            })
            .collect();
        Repr(nodes)
    }
}

impl From<Repr> for Tree {
    fn from(r: Repr) -> Tree {
        let uuids: Vec<String> = r.0.iter().map(|n| n.0.clone()).collect();
        let mut t = Tree::default();
        for (uuid, parent, ts, conversational) in r.0 {
            let parent = parent.and_then(|p| match p {
                Link::Node(i) => uuids.get(i).cloned(),
                Link::Uuid(u) => Some(u),
            });
            t.index.entry(uuid).or_insert(t.nodes.len());
            t.nodes.push(Node {
                parent,
                ts,
                conversational,
            });
        }
        t
    }
}

impl Tree {
    /// Adds a line; returns its node index (`None` for a repeated uuid).
    /// `conversational` = a user prompt or assistant line (not tool results,
    /// meta, progress, system or sidechain lines).
    pub fn add(
        &mut self,
        uuid: &str,
        parent: Option<&str>,
        ts: Option<i64>,
        conversational: bool,
    ) -> Option<usize> {
        if self.index.contains_key(uuid) {
            return None;
        }
        let i = self.nodes.len();
        self.index.insert(uuid.to_string(), i);
        self.nodes.push(Node {
            parent: parent.map(str::to_string),
            ts: ts.unwrap_or(i64::MIN),
            conversational,
        });
        Some(i)
    }

    /// Node indexes on abandoned branches (empty when there is no rewind or
    /// the active path cannot be resolved).
    pub fn abandoned(&self) -> HashSet<usize> {
        let mut out = HashSet::new();
        let Some(newest) = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].conversational)
            .max_by_key(|&i| (self.nodes[i].ts, i))
        else {
            return out;
        };
        let Some(path) = self.path_from(newest) else {
            return out;
        };
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(p) = n.parent.as_deref().and_then(|p| self.index.get(p)) {
                children.entry(*p).or_default().push(i);
            }
        }
        for &node in &path {
            let Some(kids) = children.get(&node) else {
                continue;
            };
            let conv: Vec<usize> = kids
                .iter()
                .copied()
                .filter(|&c| self.nodes[c].conversational)
                .collect();
            let times: HashSet<i64> = conv.iter().map(|&c| self.nodes[c].ts).collect();
            if conv.len() < 2 || times.len() < 2 {
                continue;
            }
            for c in conv.into_iter().filter(|c| !path.contains(c)) {
                let mut stack = vec![c];
                while let Some(x) = stack.pop() {
                    if out.insert(x) {
                        stack.extend(children.get(&x).into_iter().flatten().copied());
                    }
                }
            }
        }
        out
    }

    /// The nodes from `start` up to its root, or `None` when a parent is
    /// missing or the chain loops.
    fn path_from(&self, start: usize) -> Option<HashSet<usize>> {
        let mut path = HashSet::new();
        let mut cur = start;
        loop {
            if !path.insert(cur) {
                return None;
            }
            match self.nodes[cur].parent.as_deref() {
                None => return Some(path),
                Some(p) => cur = *self.index.get(p)?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(lines: &[(&str, Option<&str>, i64, bool)]) -> (Tree, Vec<usize>) {
        let mut t = Tree::default();
        let ids = lines
            .iter()
            .map(|(u, p, ts, c)| t.add(u, *p, Some(*ts), *c).unwrap())
            .collect();
        (t, ids)
    }

    #[test]
    fn abandoned_branch_is_found() {
        let (t, ids) = tree(&[
            ("u1", None, 1, true),
            ("a1", Some("u1"), 2, true),
            ("b1", Some("a1"), 3, true),
            ("b1a", Some("b1"), 4, true),
            ("b2", Some("a1"), 10, true),
            ("b2a", Some("b2"), 11, true),
        ]);
        let got = t.abandoned();
        assert_eq!(got, HashSet::from([ids[2], ids[3]]));
    }

    #[test]
    fn same_time_siblings_and_tool_results_are_not_rewinds() {
        let (t, _) = tree(&[
            ("u1", None, 1, true),
            ("x", Some("u1"), 2, true),
            ("y", Some("u1"), 2, true),
            ("r1", Some("y"), 3, false),
            ("r2", Some("y"), 4, false),
            ("z", Some("r2"), 5, true),
        ]);
        assert!(t.abandoned().is_empty());
    }

    #[test]
    fn unresolved_chain_marks_nothing() {
        let (t, _) = tree(&[
            ("u1", None, 1, true),
            ("b1", Some("u1"), 3, true),
            ("b2", Some("u1"), 10, true),
            ("c", Some("missing"), 11, true),
        ]);
        assert!(t.abandoned().is_empty());
    }
}
