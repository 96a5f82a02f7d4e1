//! Matching one session: every record of the wanted lanes that holds every
//! term and passes the record filters, ranked, with the session's sort key
//! (DESIGN.md §4 "Order").

use crate::cursor::SortKey;
use crate::expr::Compiled;
use crate::fold::OffsetMap;
use crate::lane::Lane;
use crate::matcher::Term;
use crate::model::ManifestEntry;
use crate::prepared::PreparedShard;
use crate::query::Lanes;
use crate::query::{Query, Sort};
use std::sync::Arc;

/// Hits returned per session.
pub const HITS_PER_SESSION: usize = 3;

/// The query's terms, ready to match.
pub struct Terms {
    /// Compiled positive terms, in query order (what relevance counts and
    /// snippets highlight).
    pub terms: Vec<Term>,
    /// The required term that drives the lane scan: the longest, usually
    /// the rarest (`None`: no term is required, every record is visited).
    pub driver: Option<usize>,
    /// The expression, when the query is more than its terms ANDed.
    expr: Option<Compiled>,
}

impl Terms {
    /// Compiles the terms of a query.
    pub fn of(query: &Query) -> Terms {
        if let Some(e) = &query.expr {
            let c = Compiled::new(e);
            return Terms {
                terms: c.terms.clone(),
                driver: c.driver,
                expr: Some(c),
            };
        }
        let terms: Vec<Term> = query.terms.iter().map(|t| Term::new(t)).collect();
        let driver =
            (0..terms.len()).max_by_key(|&i| (terms[i].needle().len(), std::cmp::Reverse(i)));
        Terms {
            terms,
            driver,
            expr: None,
        }
    }

    /// Whether a record's folded text matches. `driver_found`: the driver's
    /// raw hit lies in this ASCII text (so it occurs; plain queries only).
    pub fn matches(&self, hay: &[u8], map: Option<&OffsetMap>, driver_found: bool) -> bool {
        if let Some(e) = &self.expr {
            return e.matches(hay, map);
        }
        self.terms.iter().enumerate().all(|(t, term)| {
            (driver_found && Some(t) == self.driver && map.is_none()) || term.occurs(hay, map)
        })
    }
}

/// One matching record of a session.
pub struct Match {
    /// Its index in the shard.
    pub record: usize,
    /// Its entry in its lane.
    pub lane_entry: usize,
    /// Whether it is in the tool lane.
    pub tool: bool,
    /// Its relevance score (0 under `newest`).
    pub score: u64,
}

/// A session with at least one match.
pub struct Found {
    /// The session key.
    pub key: String,
    /// Its place in the result order.
    pub sort_key: SortKey,
    /// Matching records (uncapped).
    pub total_hits: u64,
    /// The best [`HITS_PER_SESSION`] matches, in hit order.
    pub hits: Vec<Match>,
    /// The shard the matches index.
    pub shard: Arc<PreparedShard>,
    /// The manifest entry's `source_gone`.
    pub source_gone: bool,
}

/// Matches a session's shard; `None` when no record matches.
pub fn match_session(
    key: &str,
    entry: &ManifestEntry,
    shard: Arc<PreparedShard>,
    query: &Query,
    terms: &Terms,
) -> Option<Found> {
    let mut matches = Vec::new();
    let lanes = Lanes::of(query);
    if lanes.conversation {
        scan_lane(
            &shard,
            &shard.conversation,
            false,
            query,
            terms,
            &mut matches,
        );
    }
    if lanes.tool {
        scan_lane(&shard, &shard.tool, true, query, terms, &mut matches);
    }
    if matches.is_empty() {
        return None;
    }
    let records = &shard.shard.records;
    let relevance = query.sort == Sort::Relevance;
    // Rank records: newest = ts desc, later record first; relevance = score
    // desc, length asc, ts desc, later record first.
    matches.sort_by(|a, b| {
        let (ra, rb) = (&records[a.record], &records[b.record]);
        let by_time = rb.ts_ms.cmp(&ra.ts_ms).then(b.record.cmp(&a.record));
        if relevance {
            b.score
                .cmp(&a.score)
                .then(ra.text.len().cmp(&rb.text.len()))
                .then(by_time)
        } else {
            by_time
        }
    });
    let total_hits = matches.len() as u64;
    let best = &matches[0];
    let best_rec = &records[best.record];
    let sort_key = SortKey {
        score: relevance.then_some(best.score),
        len: relevance.then_some(best_rec.text.len() as u64),
        ts: best_rec.ts_ms,
        key: key.to_string(),
    };
    matches.truncate(HITS_PER_SESSION);
    Some(Found {
        key: key.to_string(),
        sort_key,
        total_hits,
        hits: matches,
        shard,
        source_gone: entry.source_gone,
    })
}

fn scan_lane(
    shard: &PreparedShard,
    lane: &Lane,
    tool: bool,
    query: &Query,
    terms: &Terms,
    out: &mut Vec<Match>,
) {
    let relevance = query.sort == Sort::Relevance;
    let mut visit = |entry: usize, driver_found: bool| {
        let record = lane.records[entry] as usize;
        if !record_passes(shard, record, query) {
            return;
        }
        let text = lane.text(entry);
        let map = lane.maps[entry].as_ref();
        if !terms.matches(text, map, driver_found) {
            return;
        }
        let score = if relevance {
            terms.terms.iter().map(|t| t.count(text, map)).sum()
        } else {
            0
        };
        out.push(Match {
            record,
            lane_entry: entry,
            tool,
            score,
        });
    };
    let Some(driver) = terms.driver.map(|d| &terms.terms[d]) else {
        // No required term (`a OR b`): every record is a candidate.
        (0..lane.len()).for_each(|e| visit(e, false));
        return;
    };
    let buf = &lane.buf;
    let mut pos = 0;
    let mut entry = 0;
    while pos < buf.len() {
        let Some(i) = driver.find(&buf[pos..]) else {
            return;
        };
        let hit = pos + i;
        entry = lane.entry_at(hit, entry);
        pos = lane
            .starts
            .get(entry + 1)
            .map_or(buf.len(), |&s| s as usize);
        // The raw driver hit is already a valid occurrence in ASCII text.
        visit(entry, true);
    }
}

fn record_passes(shard: &PreparedShard, record: usize, query: &Query) -> bool {
    let r = &shard.shard.records[record];
    if !query.roles.contains(&r.role) {
        return false;
    }
    if !query.include_superseded && !shard.active[record] {
        return false;
    }
    if !query.subagents && r.subagent {
        return false;
    }
    if query.since.is_some_and(|s| r.ts_ms < s) || query.until.is_some_and(|u| r.ts_ms > u) {
        return false;
    }
    true
}
