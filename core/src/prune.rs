//! What the index may prune a query by, before anything is loaded. A plain
//! query is one segment probe of all its terms, as always. An expression is
//! a tree of probes: the terms an AND requires are probed together (their
//! grams in one record class), an OR is the union of its branches, and an
//! exclusion prunes nothing (only a loaded record can show a term is
//! absent). Sessions no segment covers are asked the same tree of their
//! trigram filters. Every answer is a superset of what matches: the matcher
//! verifies each candidate.

use crate::expr::Node;
use crate::grams::ShardGrams;
use crate::query::{Lanes, Query};
use crate::segment::{Probe, Segment};
use roaring::RoaringBitmap;

/// One segment's answer for a query.
#[derive(Debug)]
pub enum Pruner<'s> {
    /// Every ordinal may match.
    Every,
    /// The ordinals one probe admits.
    Probe(Probe<'s>),
    /// Those every part admits.
    All(Vec<Pruner<'s>>),
    /// Those some part admits.
    Any(Vec<Pruner<'s>>),
}

/// The terms directly under `v` (an AND), as needles.
fn leaves(v: &[Node]) -> Vec<&[u8]> {
    v.iter()
        .filter_map(|n| match n {
            Node::Leaf(l) => Some(l.text.as_bytes()),
            _ => None,
        })
        .collect()
}

impl<'s> Pruner<'s> {
    /// The answer of `seg` for `query`.
    pub fn new(seg: &'s Segment, query: &Query, lanes: Lanes) -> Pruner<'s> {
        match &query.expr {
            None => {
                let needles: Vec<&[u8]> = query.terms.iter().map(|t| t.as_bytes()).collect();
                Pruner::Probe(seg.probe(&needles, lanes))
            }
            Some(n) => Pruner::of(seg, n, lanes),
        }
    }

    fn of(seg: &'s Segment, n: &Node, lanes: Lanes) -> Pruner<'s> {
        match n {
            Node::Leaf(l) => Pruner::Probe(seg.probe(&[l.text.as_bytes()], lanes)),
            Node::Not(_) => Pruner::Every,
            Node::And(v) => {
                let terms = leaves(v);
                let mut parts = Vec::new();
                if !terms.is_empty() {
                    parts.push(Pruner::Probe(seg.probe(&terms, lanes)));
                }
                for c in v.iter().filter(|c| !matches!(c, Node::Leaf(_))) {
                    match Pruner::of(seg, c, lanes) {
                        Pruner::Every => {}
                        p => parts.push(p),
                    }
                }
                match parts.len() {
                    0 => Pruner::Every,
                    1 => parts.pop().unwrap_or(Pruner::Every),
                    _ => Pruner::All(parts),
                }
            }
            Node::Or(v) => {
                let parts: Vec<Pruner<'s>> = v.iter().map(|c| Pruner::of(seg, c, lanes)).collect();
                if parts.iter().any(|p| matches!(p, Pruner::Every)) {
                    Pruner::Every
                } else {
                    Pruner::Any(parts)
                }
            }
        }
    }

    /// The ordinals that may match, a superset of those
    /// [`Pruner::contains`] admits; `None` = every ordinal.
    pub fn candidates(&self) -> Option<RoaringBitmap> {
        match self {
            Pruner::Every => None,
            Pruner::Probe(p) => p.candidates(),
            Pruner::All(v) => v.iter().filter_map(Pruner::candidates).reduce(|a, b| a & b),
            Pruner::Any(v) => {
                let mut out = RoaringBitmap::new();
                for p in v {
                    out |= p.candidates()?;
                }
                Some(out)
            }
        }
    }

    /// Whether the shard at `ord` may match (record classes asked).
    pub fn contains(&self, ord: u32) -> bool {
        match self {
            Pruner::Every => true,
            Pruner::Probe(p) => p.contains(ord),
            Pruner::All(v) => v.iter().all(|p| p.contains(ord)),
            Pruner::Any(v) => v.iter().any(|p| p.contains(ord)),
        }
    }

    /// An upper bound on the shard's best record score: a single probe's
    /// (every positive term required); `None` = unbounded.
    pub fn score_bound(&self, ord: u32) -> Option<u64> {
        match self {
            Pruner::Probe(p) => p.score_bound(ord),
            _ => None,
        }
    }
}

/// Whether a shard whose trigram filters are `g` may match `query`.
pub fn may_match(g: &ShardGrams, query: &Query, lanes: Lanes) -> bool {
    let (c, t) = (lanes.conversation, lanes.tool);
    fn tree(g: &ShardGrams, n: &Node, c: bool, t: bool) -> bool {
        match n {
            Node::Leaf(l) => g.may_match(&[l.text.as_bytes()], c, t),
            Node::Not(_) => true,
            Node::And(v) => {
                g.may_match(&leaves(v), c, t)
                    && v.iter()
                        .filter(|n| !matches!(n, Node::Leaf(_)))
                        .all(|n| tree(g, n, c, t))
            }
            Node::Or(v) => v.iter().any(|n| tree(g, n, c, t)),
        }
    }
    match &query.expr {
        None => {
            let needles: Vec<&[u8]> = query.terms.iter().map(|t| t.as_bytes()).collect();
            g.may_match(&needles, c, t)
        }
        Some(n) => tree(g, n, c, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Request;

    fn shard(text: &str) -> crate::PreparedShard {
        let body = serde_json::json!({
            "session": {"source": "pi", "session_id": text, "title": null, "cwd": null, "branch": null,
                "created_ms": 1, "updated_ms": 1, "messages": 1, "parent": null, "resume": null, "paths": []},
            "records": [{"role": "user", "ts_ms": 1, "text": text, "seq": 1,
                "locator": {"kind": "native_event", "line_no": 1, "content_hash16": "0000000000000000"}}],
        });
        crate::PreparedShard::from_bytes(&serde_json::to_vec(&body).expect("json")).expect("shard")
    }

    fn ords(seg: &Segment, q: &str) -> Option<Vec<u32>> {
        let query = Request::new(q).parse().expect("query");
        let lanes = Lanes::of(&query);
        let p = Pruner::new(seg, &query, lanes);
        let c = p.candidates()?;
        Some(c.iter().filter(|&o| p.contains(o)).collect())
    }

    #[test]
    fn or_is_a_union_and_exclusions_prune_nothing() {
        let shards = [shard("alpha gamma"), shard("beta"), shard("delta gamma")];
        let named: Vec<(String, &crate::PreparedShard)> = shards
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("{i:016x}.json"), s))
            .collect();
        let refs: Vec<(&str, &crate::PreparedShard)> =
            named.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let seg = Segment::open(crate::segment::build(&refs)).expect("segment");
        assert_eq!(ords(&seg, "alpha"), Some(vec![0]));
        assert_eq!(ords(&seg, "alpha OR beta"), Some(vec![0, 1]));
        assert_eq!(ords(&seg, "(alpha | delta) gamma"), Some(vec![0, 2]));
        assert_eq!(
            ords(&seg, "gamma -alpha"),
            Some(vec![0, 2]),
            "verified later"
        );
        assert_eq!(
            ords(&seg, "alpha OR -beta"),
            None,
            "an exclusion admits all"
        );
        assert_eq!(
            ords(&seg, "w:gamm"),
            Some(vec![0, 2]),
            "a whole word is a substring first"
        );
    }
}
