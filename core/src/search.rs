//! The search entry point (DESIGN.md §4): a manifest snapshot, a way to obtain
//! each shard, a clock and budgets in; one page of sessions with their hits out.
//!
//! Under `newest`, shards are scanned in descending order of their newest
//! record, so a page is complete as soon as `limit + 1` sessions are known to
//! rank before anything still unscanned; the answer is the same as a full scan.
//! Under `relevance` the order is by an upper bound on a shard's best score
//! (from its trigram filters' occurrence tables, when the catalog has them),
//! with the same early-out on scores.

use crate::cursor::{fingerprint, Cursor, SortKey, VERSION};
use crate::grams::ShardGrams;
use crate::matcher::Term;
use crate::model::{Manifest, ManifestEntry, Role, Source};
use crate::prepared::{Lane, PreparedShard};
use crate::query::{Query, QueryError, Request, Scope, Sort};
use crate::response::{Coverage, Hit, PartialReason, Response, SessionHits, State};
use crate::snippet::snippet;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Hits returned per session.
pub const HITS_PER_SESSION: usize = 3;

/// Per-query limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// Milliseconds of scanning before the answer is `partial`/`timeout`.
    pub scan_ms: u64,
    /// Shard bytes freshly loaded before the answer is `partial`/`budget`.
    pub fresh_bytes: u64,
    /// Largest serialized response (the first session always fits).
    pub response_bytes: usize,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            scan_ms: 150,
            fresh_bytes: 48 << 20,
            response_bytes: 256 << 10,
        }
    }
}

/// A prepared shard handed to the search, and how many bytes were read from
/// storage to produce it (0 when it came from a cache).
#[derive(Clone, Debug)]
pub struct LoadedShard {
    /// The shard.
    pub shard: Arc<PreparedShard>,
    /// Bytes freshly loaded for this query.
    pub fresh_bytes: u64,
}

/// What the search reads: manifests and shards. The host implements it over
/// its store and arena; [`crate::MemIndex`] over bytes in memory.
pub trait Catalog {
    /// The manifest to search when no cursor is given.
    fn current(&self) -> Arc<Manifest>;
    /// A retained snapshot, for cursors minted before a publish.
    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>>;
    /// The prepared shard of a manifest entry. `tools` = the query searches
    /// tool rows, so the shard must have them (`PreparedShard::has_tools`);
    /// without it a shard prepared without tool rows will do. An error skips
    /// the session.
    fn load(&self, key: &str, entry: &ManifestEntry, tools: bool) -> Result<LoadedShard, String>;
    /// The shard's trigram filters when the catalog holds them without
    /// loading the shard (`None` = unknown: the shard is loaded and scanned).
    fn grams(&self, key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let _ = (key, entry);
        None
    }
}

/// Everything a search needs besides the request.
pub struct SearchEnv<'a> {
    /// Manifests and shards.
    pub catalog: &'a dyn Catalog,
    /// A monotonic clock in milliseconds (only differences are used).
    pub clock: &'a dyn Fn() -> u64,
    /// Limits.
    pub budgets: Budgets,
    /// True while the first backfill is still running.
    pub building: bool,
}

/// One matching record of a session.
struct Match {
    record: usize,
    lane_entry: usize,
    tool: bool,
    score: u64,
}

/// A session with at least one match.
struct Found {
    key: String,
    sort_key: SortKey,
    total_hits: u64,
    hits: Vec<SessionHitsPending>,
    shard: Arc<PreparedShard>,
    entry_source_gone: bool,
}

struct SessionHitsPending {
    m: Match,
}

/// Runs a search.
pub fn search(request: &Request, env: &SearchEnv<'_>) -> Result<Response, QueryError> {
    let started = (env.clock)();
    let query = request.parse()?;
    let current = env.catalog.current();
    let (manifest, after) = match &query.cursor {
        None => (current, None),
        Some(c) => {
            let cursor = Cursor::decode(c, &query)?;
            let snap = if cursor.store == current.store_id && cursor.rev == current.revision {
                Some(current.clone())
            } else {
                env.catalog.snapshot(&cursor.store, cursor.rev)
            };
            match snap {
                Some(m) if m.store_id == cursor.store && m.revision == cursor.rev => {
                    (m, Some(cursor.after))
                }
                _ => {
                    return Err(QueryError::new(
                        "cursor_expired",
                        "the index changed too much since this cursor; start again at page 1",
                    ))
                }
            }
        }
    };
    let terms: Vec<Term> = query.terms.iter().map(|t| Term::new(t)).collect();
    // Drive the scan with the longest term: usually the rarest.
    let driver = (0..terms.len())
        .max_by_key(|&i| (terms[i].needle().len(), std::cmp::Reverse(i)))
        .unwrap_or(0);

    let needles: Vec<&[u8]> = query.terms.iter().map(|t| t.as_bytes()).collect();
    let want_conv = query.roles.iter().any(|r| *r != Role::Tool);
    let want_tool = query.scope == Scope::All && query.roles.contains(&Role::Tool);
    let newest = query.sort == Sort::Newest;
    // Each candidate with the bound the scan is ordered by: its newest
    // record (newest), or the best score a record of it may have
    // (relevance; `unknown` without filters, scanned first).
    let unknown = i128::from(u64::MAX);
    let mut candidates: Vec<(i128, &String, &ManifestEntry)> = manifest
        .sessions
        .iter()
        .filter(|(_, e)| query.source_matches(e.meta.source))
        .filter(|(_, e)| query.cwd_matches(e.meta.cwd.as_deref()))
        .filter(|(_, e)| match (query.since, e.max_ts_ms) {
            (Some(since), Some(max)) => max >= since,
            _ => true,
        })
        .map(|(k, e)| {
            let b = if newest {
                i128::from(bound(e))
            } else {
                env.catalog
                    .grams(k, e)
                    .and_then(|g| g.max_score(&needles, want_conv, want_tool))
                    .map_or(unknown, i128::from)
            };
            (b, k, e)
        })
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    // What a found session is compared with against a bound.
    let rank = |f: &Found| -> i128 {
        if newest {
            i128::from(f.sort_key.ts)
        } else {
            i128::from(f.sort_key.score.unwrap_or(0))
        }
    };

    let mut found: Vec<Found> = Vec::new();
    let mut fresh: u64 = 0;
    let mut partial = None;
    let mut scanned = 0;
    for (i, &(next, key, entry)) in candidates.iter().enumerate() {
        // Everything left ranks at or below `next`.
        if next < unknown {
            let certain = found.iter().filter(|f| rank(f) > next).count();
            if certain > query.limit {
                break;
            }
        }
        if (env.clock)().saturating_sub(started) > env.budgets.scan_ms {
            partial = Some(PartialReason::Timeout);
            break;
        }
        if fresh >= env.budgets.fresh_bytes {
            // Stop only once the page can make progress: at least one session
            // whose place is certain (or, with no bound, found).
            let progress = if next < unknown || newest {
                found.iter().any(|f| rank(f) > next)
            } else {
                !found.is_empty()
            };
            if progress {
                partial = Some(PartialReason::Budget);
                break;
            }
        }
        scanned = i + 1;
        if let Some(g) = env.catalog.grams(key, entry) {
            if !g.may_match(&needles, want_conv, want_tool) {
                continue;
            }
        }
        let loaded = match env.catalog.load(key, entry, want_tool) {
            Ok(l) => l,
            Err(_) => continue,
        };
        fresh += loaded.fresh_bytes;
        if let Some(f) = match_session(key, entry, loaded.shard, &query, &terms, driver) {
            if after.as_ref().is_none_or(|a| f.sort_key.order(a).is_gt()) {
                found.push(f);
            }
        }
    }
    found.sort_by(|a, b| a.sort_key.order(&b.sort_key));

    // Under a budget stop, only sessions known to rank before everything
    // unscanned keep their place (best effort without a bound); the cursor
    // resumes after them.
    if partial == Some(PartialReason::Budget) {
        if let Some(&(b, _, _)) = candidates.get(scanned) {
            if newest || b < unknown {
                found.retain(|f| rank(f) > b);
            }
        }
    }

    let state = match partial {
        Some(_) => State::Partial,
        None if env.building => State::Building,
        None => State::Ready,
    };
    let mut response = Response {
        ok: true,
        state,
        partial_reason: partial,
        revision: manifest.revision,
        sessions: Vec::new(),
        cursor: None,
        coverage: coverage(&manifest),
        took_ms: 0,
    };
    let base = serde_json::to_string(&response).map_or(0, |s| s.len()) + 512;
    let mut size = base;
    let mut more = false;
    for f in found.iter() {
        if response.sessions.len() == query.limit {
            more = true;
            break;
        }
        let s = render(f, &manifest, &query, &terms);
        let len = serde_json::to_string(&s).map_or(0, |j| j.len()) + 1;
        if !response.sessions.is_empty() && size + len > env.budgets.response_bytes {
            more = true;
            break;
        }
        size += len;
        response.sessions.push(s);
    }
    let make_cursor = |after: SortKey| {
        Cursor {
            v: VERSION,
            qh: fingerprint(&query),
            rev: manifest.revision,
            store: manifest.store_id.clone(),
            after,
        }
        .encode()
    };
    response.cursor = match partial {
        Some(PartialReason::Timeout) => None,
        Some(PartialReason::Budget) => {
            let last = response
                .sessions
                .len()
                .checked_sub(1)
                .map(|i| found[i].sort_key.clone());
            Some(make_cursor(
                last.or(after).unwrap_or_else(|| start_key(&query)),
            ))
        }
        None if more => {
            let last = response.sessions.len() - 1;
            Some(make_cursor(found[last].sort_key.clone()))
        }
        None => None,
    };
    response.took_ms = (env.clock)().saturating_sub(started);
    Ok(response)
}

/// A key that ranks before every session.
fn start_key(query: &Query) -> SortKey {
    match query.sort {
        Sort::Newest => SortKey {
            score: None,
            len: None,
            ts: i64::MAX,
            key: String::new(),
        },
        Sort::Relevance => SortKey {
            score: Some(u64::MAX),
            len: Some(0),
            ts: i64::MAX,
            key: String::new(),
        },
    }
}

/// Upper bound on any record timestamp of a session, before loading it.
fn bound(e: &ManifestEntry) -> i64 {
    e.max_ts_ms.unwrap_or(i64::MAX)
}

fn match_session(
    key: &str,
    entry: &ManifestEntry,
    shard: Arc<PreparedShard>,
    query: &Query,
    terms: &[Term],
    driver: usize,
) -> Option<Found> {
    let mut matches = Vec::new();
    let want_conv = query.roles.iter().any(|r| *r != Role::Tool);
    let want_tool = query.scope == Scope::All && query.roles.contains(&Role::Tool);
    if want_conv {
        scan_lane(
            &shard,
            &shard.conversation,
            false,
            query,
            terms,
            driver,
            &mut matches,
        );
    }
    if want_tool {
        scan_lane(
            &shard,
            &shard.tool,
            true,
            query,
            terms,
            driver,
            &mut matches,
        );
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
        hits: matches
            .into_iter()
            .map(|m| SessionHitsPending { m })
            .collect(),
        shard,
        entry_source_gone: entry.source_gone,
    })
}

fn scan_lane(
    shard: &PreparedShard,
    lane: &Lane,
    tool: bool,
    query: &Query,
    terms: &[Term],
    driver: usize,
    out: &mut Vec<Match>,
) {
    let buf = &lane.buf;
    let relevance = query.sort == Sort::Relevance;
    let mut pos = 0;
    let mut entry = 0;
    while pos < buf.len() {
        let Some(i) = terms[driver].find(&buf[pos..]) else {
            return;
        };
        let hit = pos + i;
        entry = lane.entry_at(hit, entry);
        let next_start = lane
            .starts
            .get(entry + 1)
            .map_or(buf.len(), |&s| s as usize);
        pos = next_start;
        let record = lane.records[entry] as usize;
        if !record_passes(shard, record, query) {
            continue;
        }
        let text = lane.text(entry);
        let map = lane.maps[entry].as_ref();
        let all = terms.iter().enumerate().all(|(t, term)| {
            // The raw driver hit is already a valid occurrence in ASCII text.
            (t == driver && map.is_none()) || term.occurs(text, map)
        });
        if !all {
            continue;
        }
        let score = if relevance {
            terms.iter().map(|t| t.count(text, map)).sum()
        } else {
            0
        };
        out.push(Match {
            record,
            lane_entry: entry,
            tool,
            score,
        });
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

fn render(f: &Found, manifest: &Manifest, query: &Query, terms: &[Term]) -> SessionHits {
    let _ = query;
    let meta = &f.shard.shard.session;
    let entry = manifest.sessions.get(&f.key);
    let meta = entry.map_or(meta, |e| &e.meta);
    let hits = f
        .hits
        .iter()
        .map(|p| {
            let m = &p.m;
            let r = &f.shard.shard.records[m.record];
            let lane = if m.tool {
                &f.shard.tool
            } else {
                &f.shard.conversation
            };
            let s = snippet(
                &r.text,
                lane.text(m.lane_entry),
                lane.maps[m.lane_entry].as_ref(),
                terms,
            );
            Hit {
                role: r.role,
                ts_ms: r.ts_ms,
                seq: r.seq,
                superseded: !f.shard.active[m.record],
                truncated: r.truncated,
                subagent: r.subagent,
                snippet: s.text,
                snippet_offset_bytes: s.offset as u64,
                ranges: s.ranges,
                locator: r.locator.clone(),
            }
        })
        .collect::<Vec<_>>();
    SessionHits {
        session_key: f.key.clone(),
        source: meta.source,
        session_id: meta.session_id.clone(),
        title: meta.title.clone(),
        cwd: meta.cwd.clone(),
        branch: meta.branch.clone(),
        best_ts_ms: hits.first().map_or(f.sort_key.ts, |h| h.ts_ms),
        total_hits: f.total_hits,
        source_gone: f.entry_source_gone,
        resume: meta.resume.clone(),
        hits,
    }
}

/// Per-source coverage over a whole manifest (all five sources, always).
pub fn coverage(manifest: &Manifest) -> BTreeMap<String, Coverage> {
    let mut out: BTreeMap<String, Coverage> = Source::ALL
        .iter()
        .map(|s| {
            (
                s.as_str().to_string(),
                Coverage {
                    sessions: 0,
                    oldest_ts_ms: None,
                    newest_ts_ms: None,
                    source_gone: 0,
                    legacy: legacy_notes(*s),
                },
            )
        })
        .collect();
    for e in manifest.sessions.values() {
        let Some(c) = out.get_mut(e.meta.source.as_str()) else {
            continue;
        };
        c.sessions += 1;
        if let Some(t) = e.meta.created_ms {
            c.oldest_ts_ms = Some(c.oldest_ts_ms.map_or(t, |o| o.min(t)));
        }
        if let Some(t) = e.meta.updated_ms {
            c.newest_ts_ms = Some(c.newest_ts_ms.map_or(t, |o| o.max(t)));
        }
        if e.source_gone {
            c.source_gone += 1;
        }
    }
    out
}

/// What a source can never yield, whatever recall does.
fn legacy_notes(source: Source) -> Vec<String> {
    match source {
        Source::Intendant => vec![
            "ask-human answers given before Intendant's conversation-message lane are not in its logs"
                .to_string(),
        ],
        _ => Vec::new(),
    }
}
