//! The plan step of a search: the snapshot a query reads (the current
//! manifest, or the one its cursor was minted on), the sessions that may
//! match, and the order they are scanned in, each with its [`Bound`].

use crate::cursor::{Cursor, SortKey};
use crate::error::ErrorCode;
use crate::model::{Manifest, ManifestEntry, Role};
use crate::query::{Query, QueryError, Scope, Sort};
use crate::search::Catalog;
use std::cmp::Ordering;
use std::sync::Arc;

/// The most any record of a session can rank, known before loading it: the
/// scan visits sessions by descending bound and stops once the page is
/// certain to rank before every bound left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `newest`: no record is newer than this `ts_ms`.
    Ts(i64),
    /// `relevance`: no record scores more than this.
    Score(u64),
    /// Nothing is known: the session ranks above every known bound.
    Unknown,
}

impl Bound {
    /// Order of the scan: `Unknown` first, then by value descending. `Ts`
    /// and `Score` never meet in one plan.
    fn scan_order(&self, other: &Bound) -> Ordering {
        let v = |b: &Bound| match *b {
            Bound::Ts(t) => (1, i128::from(t)),
            Bound::Score(s) => (1, i128::from(s)),
            Bound::Unknown => (2, 0),
        };
        v(other).cmp(&v(self))
    }

    /// Whether a session at `key` ranks strictly before every session bounded
    /// by `self` (never, for `Unknown`).
    pub fn is_below(&self, key: &SortKey) -> bool {
        match *self {
            Bound::Ts(t) => key.ts > t,
            Bound::Score(s) => key.score.unwrap_or(0) > s,
            Bound::Unknown => false,
        }
    }
}

/// Which lanes a query reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    /// user + assistant records.
    pub conversation: bool,
    /// tool rows.
    pub tool: bool,
}

impl Lanes {
    /// The lanes of a query's roles and scope.
    pub fn of(query: &Query) -> Lanes {
        Lanes {
            conversation: query.roles.iter().any(|r| *r != Role::Tool),
            tool: query.scope == Scope::All && query.roles.contains(&Role::Tool),
        }
    }
}

/// One session to scan.
#[derive(Clone, Debug)]
pub struct Candidate<'m> {
    /// Its bound.
    pub bound: Bound,
    /// Its key.
    pub key: &'m str,
    /// Its manifest entry.
    pub entry: &'m ManifestEntry,
    /// An index segment covers it (and says it may match): its filters need
    /// no second look.
    pub indexed: bool,
}

/// The snapshot a query reads and where its page starts.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The manifest searched.
    pub manifest: Arc<Manifest>,
    /// The cursor's position (sessions at or before it are skipped).
    pub after: Option<SortKey>,
}

/// Resolves the manifest a query reads: the current one, or its cursor's.
pub fn snapshot(query: &Query, catalog: &dyn Catalog) -> Result<Snapshot, QueryError> {
    let current = catalog
        .current()
        .map_err(|e| QueryError::new(ErrorCode::StoreUnavailable, e.to_string()))?;
    let Some(c) = &query.cursor else {
        return Ok(Snapshot {
            manifest: current,
            after: None,
        });
    };
    let cursor = Cursor::decode(c, query)?;
    let snap = if cursor.store == current.store_id && cursor.rev == current.revision {
        Some(current)
    } else {
        catalog.snapshot(&cursor.store, cursor.rev)
    };
    match snap {
        Some(m) if m.store_id == cursor.store && m.revision == cursor.rev => Ok(Snapshot {
            manifest: m,
            after: Some(cursor.after),
        }),
        _ => Err(QueryError::new(
            ErrorCode::CursorExpired,
            "the index changed too much since this cursor; start again at page 1",
        )),
    }
}

/// The sessions of `manifest` that pass the session-level filters, in scan
/// order (descending bound, then key).
pub fn candidates<'m>(
    query: &Query,
    manifest: &'m Manifest,
    catalog: &dyn Catalog,
) -> Vec<Candidate<'m>> {
    let needles: Vec<&[u8]> = query.terms.iter().map(|t| t.as_bytes()).collect();
    let lanes = Lanes::of(query);
    let set = catalog.segments();
    let probes: Vec<_> = set
        .iter()
        .flat_map(|set| set.segments())
        .map(|s| s.probe(&needles, lanes))
        .collect();
    let mut out: Vec<Candidate<'m>> = manifest
        .sessions
        .iter()
        .filter(|(_, e)| query.source_matches(e.meta.source))
        .filter(|(_, e)| query.cwd_matches(e.meta.cwd.as_deref()))
        .filter(|(_, e)| query.model_matches(&e.meta.models))
        .filter(|(_, e)| match (query.since, e.max_ts_ms) {
            (Some(since), Some(max)) => max >= since,
            _ => true,
        })
        .filter_map(|(k, e)| {
            let covered = set
                .as_ref()
                .and_then(|set| set.locate(&e.generation_file))
                .and_then(|(i, o)| Some((probes.get(i)?, o)));
            if covered.is_some_and(|(p, o)| !p.contains(o)) {
                return None;
            }
            let bound = match (query.sort, covered) {
                (Sort::Newest, _) => e.max_ts_ms.map_or(Bound::Unknown, Bound::Ts),
                (Sort::Relevance, Some((p, o))) => {
                    p.score_bound(o).map_or(Bound::Unknown, Bound::Score)
                }
                (Sort::Relevance, None) => catalog
                    .grams(k, e)
                    .and_then(|g| g.max_score(&needles, lanes.conversation, lanes.tool))
                    .map_or(Bound::Unknown, Bound::Score),
            };
            Some(Candidate {
                bound,
                key: k.as_str(),
                entry: e,
                indexed: covered.is_some(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.bound.scan_order(&b.bound).then(a.key.cmp(b.key)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_scans_first_then_descending() {
        let mut v = [Bound::Ts(3), Bound::Unknown, Bound::Ts(9), Bound::Ts(-1)];
        v.sort_by(|a, b| a.scan_order(b));
        assert_eq!(
            v,
            [Bound::Unknown, Bound::Ts(9), Bound::Ts(3), Bound::Ts(-1)]
        );
        let key = |ts, score| SortKey {
            score,
            len: None,
            ts,
            key: String::new(),
        };
        assert!(Bound::Ts(5).is_below(&key(6, None)));
        assert!(!Bound::Ts(5).is_below(&key(5, None)));
        assert!(Bound::Score(2).is_below(&key(0, Some(3))));
        assert!(!Bound::Unknown.is_below(&key(i64::MAX, Some(u64::MAX))));
    }
}
