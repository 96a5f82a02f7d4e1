//! Searching before every generation is loaded (DESIGN.md §8, wave 2): one
//! pure step that either answers or says which generations the search needs
//! next. The caller (the browser, a test) fetches them, hands them to the
//! [`MemIndex`], and asks again, until the answer is complete; that answer
//! is the one a fully loaded index gives, byte for byte.
//!
//! How: the search runs as usual over a catalog that records every
//! candidate whose generation is not loaded (the plan comes from the
//! segments and manifest, so no generation is needed to know the
//! candidates). Those are skipped, so the scan may run past where a full
//! search would stop: the list is a superset of what the answer needs, in
//! scan order, cut to `max_need`. Each round loads at least one generation,
//! so the loop ends; a round that meets no unloaded candidate scanned
//! exactly what a fully loaded search scans (bounds only order the scan and
//! never change the page), so its answer is final.

use crate::catalog::{Catalog, LoadedShard};
use crate::error::{CatalogError, ErrorCode, LoadError};
use crate::index::MemIndex;
use crate::model::{Manifest, ManifestEntry};
use crate::query::{QueryError, Request};
use crate::response::Response;
use crate::search::{search_request, Budgets, SearchEnv};
use crate::segment::SegmentSet;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

/// What one lazy step answered.
#[derive(Debug)]
pub enum Lazy {
    /// The answer: every candidate the scan reached was loaded.
    Complete(Box<Response>),
    /// Load these generations (file names, in scan order, at most the
    /// `max_need` asked for) and ask again.
    Need(Vec<String>),
}

/// A [`MemIndex`] seen by one search, noting the unloaded candidates.
struct Recording<'a> {
    index: &'a MemIndex,
    need: RefCell<Vec<String>>,
    seen: RefCell<HashSet<String>>,
}

impl Catalog for Recording<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.index.current()
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        self.index.snapshot(store_id, revision)
    }

    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        let got = self.index.load(key, entry, tools);
        if let Err(LoadError::Missing { name }) = &got {
            if !self.index.unavailable.contains(name) && self.seen.borrow_mut().insert(name.clone())
            {
                self.need.borrow_mut().push(name.clone());
            }
        }
        got
    }

    fn grams(&self, key: &str, entry: &ManifestEntry) -> Option<Arc<crate::ShardGrams>> {
        self.index.grams(key, entry)
    }

    fn segments(&self) -> Option<Arc<SegmentSet>> {
        self.index.segments()
    }
}

impl MemIndex {
    /// One lazy step with a frozen clock (as [`MemIndex::search`]): the
    /// answer, or up to `max_need` (at least 1) generations to load first.
    pub fn search_lazy(&self, request: &Request, max_need: usize) -> Result<Lazy, QueryError> {
        let clock = || 0u64;
        self.search_lazy_with(request, max_need, &clock)
    }

    /// [`MemIndex::search_lazy`] with the given monotonic clock.
    pub fn search_lazy_with(
        &self,
        request: &Request,
        max_need: usize,
        clock: &dyn Fn() -> u64,
    ) -> Result<Lazy, QueryError> {
        let catalog = Recording {
            index: self,
            need: RefCell::new(Vec::new()),
            seen: RefCell::new(HashSet::new()),
        };
        let env = SearchEnv {
            catalog: &catalog,
            directories: Some(&self.directories),
            clock,
            clock_us: None,
            budgets: Budgets::default(),
            building: false,
        };
        let response = search_request(request, &env)?;
        let mut need = catalog.need.into_inner();
        if need.is_empty() {
            return Ok(Lazy::Complete(Box::new(response)));
        }
        need.truncate(max_need.max(1));
        Ok(Lazy::Need(need))
    }

    /// JSON in, JSON out: the response body exactly as
    /// [`MemIndex::search_json`] gives it once complete, `{"need":[names]}`
    /// while generations are missing, or the §7 error body.
    pub fn search_lazy_json(&self, request_json: &str, max_need: usize) -> String {
        let result = Request::from_json(request_json).and_then(|r| self.search_lazy(&r, max_need));
        match result {
            Ok(Lazy::Complete(resp)) => serde_json::to_string(&resp).unwrap_or_else(|e| {
                QueryError::new(ErrorCode::Internal, format!("serialization failed: {e}")).to_json()
            }),
            Ok(Lazy::Need(names)) => serde_json::json!({ "need": names }).to_string(),
            Err(e) => e.to_json(),
        }
    }
}
