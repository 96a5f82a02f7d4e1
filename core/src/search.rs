//! The search entry point (DESIGN.md §4): a parsed [`Query`], a catalog of
//! manifests and shards, a clock and budgets in; one page of sessions out.
//!
//! Three steps: [`crate::plan`] picks the snapshot and the candidate sessions,
//! each with a [`crate::plan::Bound`], in scan order; [`scan`] loads and
//! matches them, handing every matching session to a
//! [`crate::collector::Collector`] that owns ranking, limit and the early
//! exit; [`crate::page`] renders the page, applies the byte cap and mints the
//! cursor. Under `newest` bounds are each session's newest record, under
//! `relevance` an upper bound on its best score (from its trigram filters'
//! occurrence tables, when the catalog has them); either way the page is the
//! one a full scan would give.

use crate::catalog::Catalog;
use crate::collector::Collector;
use crate::directory::{Directory, DirectoryCache};
use crate::matching::{match_session, Terms};
use crate::page::{page, Outcome};
use crate::plan::{plan, snapshot, Bound, Plan};
use crate::query::{Lanes, Query, QueryError, Request};
use crate::response::{DebugReport, PartialReason, PlannerReport, Response};
use std::sync::Arc;

pub use crate::matching::HITS_PER_SESSION;

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

/// Everything a search needs besides the query.
pub struct SearchEnv<'a> {
    /// Manifests and shards.
    pub catalog: &'a dyn Catalog,
    /// The planning tables of the last snapshots searched, kept by a
    /// long-lived host so a query costs what its candidates cost (`None`:
    /// each query builds its snapshot's [`Directory`]).
    pub directories: Option<&'a DirectoryCache>,
    /// A monotonic clock in milliseconds (only differences are used).
    pub clock: &'a dyn Fn() -> u64,
    /// A monotonic clock in microseconds for `debug`'s phase times (`None`:
    /// the phases report 0). Read only when a query asks for `debug`.
    pub clock_us: Option<&'a dyn Fn() -> u64>,
    /// Limits.
    pub budgets: Budgets,
    /// True while the first backfill is still running.
    pub building: bool,
}

/// Parses `request` and searches: for edges that hold a raw request (the
/// wasm binding, [`crate::MemIndex`]). Hosts parse once and call [`search`].
pub fn search_request(request: &Request, env: &SearchEnv<'_>) -> Result<Response, QueryError> {
    search(&request.parse()?, env)
}

/// Runs a search: plan, scan, page.
pub fn search(query: &Query, env: &SearchEnv<'_>) -> Result<Response, QueryError> {
    let started = (env.clock)();
    let us = || match (query.debug, env.clock_us) {
        (true, Some(clock_us)) => clock_us(),
        _ => 0,
    };
    let t0 = us();
    let snap = snapshot(query, env.catalog)?;
    let set = env.catalog.segments();
    let dir = match env.directories {
        Some(cache) => cache.get(&snap.manifest, set),
        None => Arc::new(Directory::build(snap.manifest.clone(), set)),
    };
    // The scan deadline runs from here: opening or building the snapshot's
    // index (a `MemIndex` builds its segment on the first search, in the
    // browser under a real clock) is one-time work, not this query's scan.
    let scan_from = (env.clock)();
    let plan = plan(query, &dir, env.catalog);
    let terms = Terms::of(query);
    let t1 = us();
    let mut collector = Collector::new(query.limit, query.sort, snap.after.clone());
    let stop = scan(&plan, query, &terms, env, scan_from, &mut collector);
    let found = collector.finish(stop.stopped_before);
    let t2 = us();
    let outcome = Outcome {
        partial: stop.partial,
        building: env.building,
    };
    let mut response = page(
        &found,
        &dir,
        snap.after.as_ref(),
        query,
        &terms,
        outcome,
        env.budgets.response_bytes,
    );
    if query.debug {
        let indexed = plan.indexed();
        let route = match (dir.segments().is_some(), indexed == plan.len()) {
            (false, _) => "scan",
            (true, true) => "index",
            (true, false) => "index+scan",
        };
        response.debug = Some(DebugReport {
            route: route.to_string(),
            planner: PlannerReport {
                terms: query.terms.len() as u64,
                candidate_shards: plan.len() as u64,
                indexed_shards: indexed as u64,
                visited: stop.visited,
                shards_loaded: stop.loaded,
                bytes_read: stop.fresh,
                plan_us: t1.saturating_sub(t0),
                scan_us: t2.saturating_sub(t1),
                page_us: us().saturating_sub(t2),
                damaged_segments: dir
                    .segments()
                    .iter()
                    .flat_map(|s| s.segments())
                    .filter(|s| s.damaged())
                    .count() as u64,
            },
        });
    }
    response.took_ms = (env.clock)().saturating_sub(started);
    Ok(response)
}

/// Where the scan stopped, and what it did.
#[derive(Default)]
struct Stop {
    /// Why the answer is partial.
    partial: Option<PartialReason>,
    /// The scan stopped on the load budget before a candidate with this
    /// bound.
    stopped_before: Option<Bound>,
    /// Candidates that passed the session filters and were looked at.
    visited: u64,
    /// Shards loaded and matched.
    loaded: u64,
    /// Bytes freshly loaded.
    fresh: u64,
}

/// Loads and matches candidates in plan order until the collector's page is
/// certain, the plan is exhausted, or a budget runs out.
fn scan(
    plan: &Plan,
    query: &Query,
    terms: &Terms,
    env: &SearchEnv<'_>,
    started: u64,
    collector: &mut Collector,
) -> Stop {
    let lanes = Lanes::of(query);
    let mut st = Stop::default();
    let mut unreadable = false;
    for i in 0..plan.len() {
        let Some(c) = plan.get(i, query) else {
            continue;
        };
        // Everything left is bounded by `c.bound`.
        if collector.page_is_certain(&c.bound) {
            break;
        }
        // A budget stop keeps a cursor, so it goes first: a page that spent
        // its budget (an oversized shard, say) and its time ends with one.
        if st.fresh >= env.budgets.fresh_bytes && collector.can_stop_before(&c.bound) {
            st.partial = Some(PartialReason::Budget);
            st.stopped_before = Some(c.bound);
            return st;
        }
        if (env.clock)().saturating_sub(started) > env.budgets.scan_ms {
            st.partial = Some(PartialReason::Timeout);
            return st;
        }
        st.visited += 1;
        if !c.indexed {
            if let Some(g) = env.catalog.grams(c.key, c.entry) {
                if !crate::prune::may_match(&g, query, lanes) {
                    continue;
                }
            }
        }
        let cost = env.catalog.load_cost(c.key, c.entry, lanes.tool);
        let oversized = cost > env.budgets.fresh_bytes;
        if oversized && collector.has_certain_before(&c.bound) {
            // More than a whole budget: it is scanned alone, first on the
            // next page (whose budget admits it), which starts here.
            st.partial = Some(PartialReason::Oversized);
            st.stopped_before = Some(c.bound);
            return st;
        }
        if !oversized
            && cost > 0
            && st.fresh.saturating_add(cost) > env.budgets.fresh_bytes
            && collector.can_stop_before(&c.bound)
        {
            // Stop before reading what the budget cannot afford; the next
            // page starts with a full budget.
            st.partial = Some(PartialReason::Budget);
            st.stopped_before = Some(c.bound);
            return st;
        }
        let expired = || (env.clock)().saturating_sub(started) > env.budgets.scan_ms;
        let loaded = match env
            .catalog
            .load_within(c.key, c.entry, lanes.tool, &expired)
        {
            Ok(Some(l)) => l,
            Ok(None) if oversized => {
                // The deadline passed while preparing it: the catalog keeps
                // what it did, and the next page (same position) goes on.
                // Nothing found may pass it (no best effort here).
                collector.drop_uncertain(&c.bound);
                st.partial = Some(PartialReason::Oversized);
                st.stopped_before = Some(c.bound);
                return st;
            }
            Ok(None) => {
                st.partial = Some(PartialReason::Timeout);
                return st;
            }
            Err(_) => {
                unreadable = true;
                continue;
            }
        };
        st.loaded += 1;
        st.fresh += loaded.fresh_bytes;
        if let Some(f) = match_session(c.key, c.entry, loaded.shard, query, terms) {
            collector.offer(f);
        }
    }
    st.partial = unreadable.then_some(PartialReason::Unreadable);
    st
}
