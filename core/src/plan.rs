//! The plan step of a search: the snapshot a query reads (the current
//! manifest, or the one its cursor was minted on), the sessions that may
//! match — driven by the index segments' postings, so its cost follows the
//! candidates, not the manifest — and the order they are scanned in, each
//! with its [`Bound`].

use crate::catalog::Catalog;
use crate::cursor::{Cursor, SortKey};
use crate::directory::Directory;
use crate::error::ErrorCode;
use crate::model::{Manifest, ManifestEntry};
use crate::prune::Pruner;
use crate::query::{Lanes, Query, QueryError, Sort};
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

/// The candidates of a query over one snapshot, in scan order: the sessions
/// the segments' postings name (terms ANDed per lane before anything is
/// loaded) plus every session no segment covers. Session-level filters and
/// the segments' record classes are applied to candidates only, as they are
/// visited ([`Plan::get`]).
#[derive(Debug)]
pub struct Plan<'d> {
    dir: Arc<Directory>,
    /// Per segment of `dir`, in order: its answer for the query.
    probes: Vec<Pruner<'d>>,
    items: Vec<Item>,
}

#[derive(Clone, Copy, Debug)]
struct Item {
    bound: Bound,
    rank: u32,
    /// The segment (index into `probes`) and ordinal of an indexed
    /// candidate; `None` for a session no segment covers.
    at: Option<(u32, u32)>,
}

impl Plan<'_> {
    /// Number of candidates (before the session-level filters).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is a candidate.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many candidates an index segment named (the rest are sessions no
    /// segment covers, filtered and scanned).
    pub fn indexed(&self) -> usize {
        self.items.iter().filter(|i| i.at.is_some()).count()
    }

    /// The snapshot's tables.
    pub fn directory(&self) -> &Arc<Directory> {
        &self.dir
    }

    /// The `i`-th candidate in scan order, if it passes the query's
    /// session-level filters and, when a segment covers it, some record
    /// class of it holds every probed gram.
    pub fn get(&self, i: usize, query: &Query) -> Option<Candidate<'_>> {
        let it = self.items.get(i)?;
        if let Some((seg, ord)) = it.at {
            if !self.probes.get(seg as usize)?.contains(ord) {
                return None;
            }
        }
        let (key, entry) = self.dir.session(it.rank)?;
        passes(query, entry).then_some(Candidate {
            bound: it.bound,
            key,
            entry,
            indexed: it.at.is_some(),
        })
    }
}

/// The session-level filters: source, cwd, model, `since`.
fn passes(query: &Query, e: &ManifestEntry) -> bool {
    query.source_matches(e.meta.source)
        && query.cwd_matches(e.meta.cwd.as_deref())
        && query.model_matches(&e.meta.models)
        && match (query.since, e.max_ts_ms) {
            (Some(since), Some(max)) => max >= since,
            _ => true,
        }
}

/// Plans `query` over the snapshot `dir`.
pub fn plan<'d>(query: &Query, dir: &'d Arc<Directory>, catalog: &dyn Catalog) -> Plan<'d> {
    let needles: Vec<&[u8]> = query
        .required_terms()
        .iter()
        .map(|t| t.as_bytes())
        .collect();
    let lanes = Lanes::of(query);
    let ts = |rank: u32| dir.max_ts(rank).map_or(Bound::Unknown, Bound::Ts);
    let bounded = query.score_bounds_hold();
    let mut items = Vec::new();
    let mut probes = Vec::new();
    for (i, seg) in dir.segments().iter().flat_map(|s| s.segments()).enumerate() {
        let probe = Pruner::new(seg, query, lanes);
        let mut push = |ord: u32, rank: u32| {
            let bound = match query.sort {
                Sort::Newest => ts(rank),
                // Every candidate gets a bound here, so its record classes
                // are asked now too: one refused is not planned at all.
                Sort::Relevance if !probe.contains(ord) => return,
                Sort::Relevance if !bounded => Bound::Unknown,
                Sort::Relevance => probe.score_bound(ord).map_or(Bound::Unknown, Bound::Score),
            };
            items.push(Item {
                bound,
                rank,
                at: Some((i as u32, ord)),
            })
        };
        match probe.candidates() {
            Some(ords) => ords
                .iter()
                .filter_map(|o| Some((o, dir.rank(i, o)?)))
                .for_each(|(o, r)| push(o, r)),
            None => dir.segment_ranks(i).for_each(|(o, r)| push(o, r)),
        }
        probes.push(probe);
    }
    for &rank in dir.uncovered() {
        let bound = match query.sort {
            Sort::Newest => ts(rank),
            Sort::Relevance => {
                // Only sessions that pass the filters are worth a filter load.
                let Some((k, e)) = dir.session(rank).filter(|(_, e)| passes(query, e)) else {
                    continue;
                };
                catalog
                    .grams(k, e)
                    .filter(|_| bounded)
                    .and_then(|g| g.max_score(&needles, lanes.conversation, lanes.tool))
                    .map_or(Bound::Unknown, Bound::Score)
            }
        };
        items.push(Item {
            bound,
            rank,
            at: None,
        });
    }
    match query.sort {
        // Ranks are `newest` scan order.
        Sort::Newest => items.sort_unstable_by_key(|it| it.rank),
        Sort::Relevance => items.sort_unstable_by(|a, b| {
            a.bound
                .scan_order(&b.bound)
                .then_with(|| dir.key(a.rank).cmp(dir.key(b.rank)))
        }),
    }
    Plan {
        dir: dir.clone(),
        probes,
        items,
    }
}

/// The candidates of `query` over `manifest` that pass the session-level
/// filters, in scan order (for hosts that prefetch what a scan will load).
pub fn candidates<'m>(
    query: &Query,
    manifest: &'m Arc<Manifest>,
    catalog: &dyn Catalog,
) -> Vec<Candidate<'m>> {
    let dir = Arc::new(Directory::build(manifest.clone(), catalog.segments()));
    let p = plan(query, &dir, catalog);
    (0..p.len())
        .filter_map(|i| {
            let c = p.get(i, query)?;
            let (key, entry) = manifest.sessions.get_key_value(c.key)?;
            Some(Candidate {
                bound: c.bound,
                key: key.as_str(),
                entry,
                indexed: c.indexed,
            })
        })
        .collect()
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
