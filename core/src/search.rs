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

use crate::collector::Collector;
use crate::directory::Directory;
use crate::error::{CatalogError, LoadError};
use crate::grams::ShardGrams;
use crate::matching::{match_session, Terms};
use crate::model::{Manifest, ManifestEntry};
use crate::page::{page, Outcome};
use crate::plan::{plan, snapshot, Bound, Lanes, Plan};
use crate::prepared::PreparedShard;
use crate::query::{Query, QueryError, Request};
use crate::response::{DebugReport, PartialReason, PlannerReport, Response};
use crate::segment::SegmentSet;
use std::sync::Arc;

pub use crate::matching::HITS_PER_SESSION;
pub use crate::page::coverage;

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
    fn current(&self) -> Result<Arc<Manifest>, CatalogError>;
    /// A retained snapshot, for cursors minted before a publish.
    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>>;
    /// The prepared shard of a manifest entry. `tools` = the query searches
    /// tool rows, so the shard must have them (`PreparedShard::has_tools`);
    /// without it a shard prepared without tool rows will do. An error skips
    /// the session and makes the answer `partial` (`unreadable`).
    fn load(&self, key: &str, entry: &ManifestEntry, tools: bool)
        -> Result<LoadedShard, LoadError>;
    /// The shard's trigram filters when the catalog holds them without
    /// loading the shard (`None` = unknown: the shard is loaded and scanned).
    fn grams(&self, key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let _ = (key, entry);
        None
    }
    /// The index segments the catalog holds. A session whose generation a
    /// segment covers is a candidate only if that segment says it may match;
    /// any other session falls back to its filters and a scan.
    fn segments(&self) -> Option<Arc<SegmentSet>> {
        None
    }
    /// The planning tables of `manifest` over `set` ([`Directory`]). The
    /// default builds them per query; a long-lived catalog keeps them in a
    /// [`crate::directory::DirectoryCache`] so a query costs what its
    /// candidates cost.
    fn directory(&self, manifest: &Arc<Manifest>, set: Option<Arc<SegmentSet>>) -> Arc<Directory> {
        Arc::new(Directory::build(manifest.clone(), set))
    }
    /// [`Catalog::load`] that may stop between chunks of reading and
    /// preparing once `expired()` says the scan deadline has passed:
    /// `Ok(None)` = not ready yet, the catalog keeps its progress so a later
    /// query goes on from there (each call does at least one chunk, so
    /// repeated calls finish). The default loads whole.
    fn load_within(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<LoadedShard>, LoadError> {
        let _ = expired;
        self.load(key, entry, tools).map(Some)
    }
    /// What loading the shard of `entry` would add to the query's load
    /// budget, known before reading it: its file size unless it is cached.
    /// The default, 0, means unknown (the load's own `fresh_bytes` is
    /// counted after the fact). A shard that costs more than what is left
    /// of the budget is not loaded once the page can stop before it; one
    /// that costs more than the whole budget (oversized) is loaded only as
    /// the first thing a page needs — the page before stops just before it
    /// (`partial_reason: "oversized"`, with a cursor).
    fn load_cost(&self, key: &str, entry: &ManifestEntry, tools: bool) -> u64 {
        let _ = (key, entry, tools);
        0
    }
    /// A monotonic clock in microseconds for `debug`'s phase times (`None`:
    /// the phases report 0). Read only when a query asks for `debug`.
    fn clock_us(&self) -> Option<u64> {
        None
    }
}

/// Everything a search needs besides the query.
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

/// Parses `request` and searches: for edges that hold a raw request (the
/// wasm binding, [`crate::MemIndex`]). Hosts parse once and call [`search`].
pub fn search_request(request: &Request, env: &SearchEnv<'_>) -> Result<Response, QueryError> {
    search(&request.parse()?, env)
}

/// Runs a search: plan, scan, page.
pub fn search(query: &Query, env: &SearchEnv<'_>) -> Result<Response, QueryError> {
    let started = (env.clock)();
    let us = || match query.debug {
        true => env.catalog.clock_us().unwrap_or(0),
        false => 0,
    };
    let t0 = us();
    let snap = snapshot(query, env.catalog)?;
    let dir = env
        .catalog
        .directory(&snap.manifest, env.catalog.segments());
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
    let needles: Vec<&[u8]> = query.terms.iter().map(|t| t.as_bytes()).collect();
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
                if !g.may_match(&needles, lanes.conversation, lanes.tool) {
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
