//! The collector of a search: it owns ranking, the page limit and the early
//! exit. The scan offers it each matching session and asks it, before every
//! shard, whether the page is already certain.

use crate::cursor::SortKey;
use crate::matching::Found;
use crate::plan::Bound;
use crate::query::Sort;

/// Sessions found so far, and what they prove about the page.
pub struct Collector {
    limit: usize,
    sort: Sort,
    after: Option<SortKey>,
    found: Vec<Found>,
}

impl Collector {
    /// A collector for a page of `limit` sessions after `after`.
    pub fn new(limit: usize, sort: Sort, after: Option<SortKey>) -> Collector {
        Collector {
            limit,
            sort,
            after,
            found: Vec::new(),
        }
    }

    fn certain(&self, next: &Bound) -> usize {
        self.found
            .iter()
            .filter(|f| next.is_below(&f.sort_key))
            .count()
    }

    /// True once `limit + 1` sessions rank before everything bounded by
    /// `next` (and so before everything still unscanned): the page and
    /// whether another follows are then known.
    pub fn page_is_certain(&self, next: &Bound) -> bool {
        *next != Bound::Unknown && self.certain(next) > self.limit
    }

    /// Whether a stop before `next` still lets the page make progress: some
    /// session's place is certain (or, under `relevance` with no bound, some
    /// session was found at all).
    pub fn can_stop_before(&self, next: &Bound) -> bool {
        if *next == Bound::Unknown && self.sort == Sort::Relevance {
            !self.found.is_empty()
        } else {
            self.certain(next) > 0
        }
    }

    /// Whether some session found is certain to rank before everything
    /// bounded by `next` (never for an unknown bound: no best effort).
    pub fn has_certain_before(&self, next: &Bound) -> bool {
        self.certain(next) > 0
    }

    /// Forgets every session found that is not certain to rank before
    /// everything bounded by `next` (all of them for an unknown bound): for
    /// a stop whose cursor must not pass a session left unscanned.
    pub fn drop_uncertain(&mut self, next: &Bound) {
        self.found.retain(|f| next.is_below(&f.sort_key));
    }

    /// Takes a matching session unless it is at or before the cursor.
    pub fn offer(&mut self, f: Found) {
        if self
            .after
            .as_ref()
            .is_none_or(|a| f.sort_key.order(a).is_gt())
        {
            self.found.push(f);
        }
    }

    /// The cursor position the page continues from.
    pub fn after(&self) -> Option<&SortKey> {
        self.after.as_ref()
    }

    /// The sessions in result order. `stopped_before` = the scan stopped on
    /// the load budget before a session with this bound: only sessions
    /// certain to rank before it keep their place (all of them, best effort,
    /// when it is unknown under `relevance`).
    pub fn finish(mut self, stopped_before: Option<Bound>) -> Vec<Found> {
        self.found.sort_by(|a, b| a.sort_key.order(&b.sort_key));
        if let Some(b) = stopped_before {
            if self.sort == Sort::Newest || b != Bound::Unknown {
                self.found.retain(|f| b.is_below(&f.sort_key));
            }
        }
        self.found
    }
}
