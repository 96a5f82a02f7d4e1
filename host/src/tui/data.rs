//! What `recall tui` shows, read from the store directly: searches (run by
//! the same core as `recall search`, on a worker thread so typing never
//! waits for one), the recent sessions an empty query lists, the projects
//! the project filter offers, and one session's records.
//!
//! A running `recall serve` is not asked: the store has no record of where
//! a daemon listens, so the TUI always reads the store itself (the answers
//! are the same; a daemon's warm arena would only make them faster).

use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use crate::store::Store;
use recall_core::derive_active;
use recall_core::model::{Locator, ManifestEntry, Role, Shard, Source};
use recall_core::query::{path_has_prefix, Request};
use recall_core::search::Budgets;
use recall_core::Response;
use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

/// One session as the lists show it (from the manifest or a search).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// `<source>:<session_id>`.
    pub key: String,
    /// The agent.
    pub source: Source,
    /// Title.
    pub title: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Newest record (epoch ms).
    pub updated_ms: Option<i64>,
    /// user + assistant records.
    pub messages: u64,
    /// The resume command.
    pub resume: Option<String>,
}

/// One record of an opened session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Who said it.
    pub role: Role,
    /// When (epoch ms).
    pub ts_ms: i64,
    /// Superseded by a rewind, rollback, undo or branch.
    pub superseded: bool,
    /// A subagent's record.
    pub subagent: bool,
    /// The text.
    pub text: String,
    /// Where it came from (a hit names its record by this).
    pub locator: Locator,
}

/// The filters the TUI applies besides the query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// Only this agent.
    pub source: Option<Source>,
    /// Only sessions under this working directory.
    pub project: Option<String>,
}

impl Filters {
    /// The §4 request for `q` under these filters.
    pub fn request(&self, q: &str) -> Request {
        Request {
            q: Some(q.to_string()),
            source: self.source.map(|s| s.as_str().to_string()),
            cwd: self.project.clone(),
            limit: Some("50".into()),
            ..Request::default()
        }
        // Inline `since:7d` in the query reads against the host's clock.
        .with_default_clock(crate::clock::host_clock())
    }

    fn keeps(&self, e: &ManifestEntry) -> bool {
        self.source.is_none_or(|s| e.meta.source == s)
            && self
                .project
                .as_deref()
                .is_none_or(|p| e.meta.cwd.as_deref().is_some_and(|c| path_has_prefix(c, p)))
    }
}

/// The store the TUI reads.
pub struct Data {
    store: Arc<Store>,
    catalog: StoreCatalog,
    building: bool,
    daemon: Option<std::net::SocketAddr>,
}

impl Data {
    /// Reads `store`; `building` = its first backfill has not finished.
    pub fn new(store: Arc<Store>, building: bool) -> Data {
        let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
        Data {
            store,
            catalog,
            building,
            daemon: None,
        }
    }

    /// Searches through the daemon at `addr` (a running `recall serve` of
    /// this store), falling back to the store for any answer it cannot give
    /// complete (see `http::client::search`).
    pub fn through(mut self, addr: Option<std::net::SocketAddr>) -> Data {
        self.daemon = addr;
        self
    }

    /// Runs one search. Like `recall search`, without the scan deadline and
    /// load budget: the answer is complete.
    pub fn search(&self, request: &Request) -> Result<Response, String> {
        let budgets = Budgets {
            scan_ms: u64::MAX,
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        };
        let query = request.parse().map_err(|e| e.message)?;
        if let Some(r) = self
            .daemon
            .and_then(|addr| crate::http::client::search(addr, request))
        {
            return Ok(r);
        }
        self.catalog
            .search(&query, self.building, budgets)
            .map_err(|e| e.message)
    }

    /// Sessions newest first, at most `limit`, under `filters`.
    pub fn recent(&self, filters: &Filters, limit: usize) -> Result<Vec<SessionInfo>, String> {
        let m = self.store.current().map_err(|e| e.to_string())?;
        let mut rows: Vec<(&String, &ManifestEntry)> = m
            .sessions
            .iter()
            .filter(|(_, e)| filters.keeps(e))
            .collect();
        let t = |e: &ManifestEntry| e.meta.updated_ms.or(e.max_ts_ms);
        rows.sort_by(|a, b| t(b.1).cmp(&t(a.1)).then(a.0.cmp(b.0)));
        Ok(rows
            .into_iter()
            .take(limit)
            .map(|(k, e)| SessionInfo {
                key: k.clone(),
                source: e.meta.source,
                title: e.meta.title.clone(),
                cwd: e.meta.cwd.clone(),
                updated_ms: t(e),
                messages: e.meta.messages,
                resume: e.meta.resume.clone(),
            })
            .collect())
    }

    /// Every working directory with its number of sessions, most sessions first.
    pub fn projects(&self) -> Result<Vec<(String, usize)>, String> {
        let m = self.store.current().map_err(|e| e.to_string())?;
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for e in m.sessions.values() {
            if let Some(c) = e.meta.cwd.as_deref() {
                *counts.entry(c).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = counts
            .into_iter()
            .map(|(c, n)| (c.to_string(), n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(v)
    }

    /// One session's records in order.
    pub fn entries(&self, key: &str) -> Result<Vec<Entry>, String> {
        let m = self.store.current().map_err(|e| e.to_string())?;
        let entry = m
            .sessions
            .get(key)
            .ok_or_else(|| format!("no session {key}"))?;
        let bytes = self
            .store
            .generation_bytes(&entry.generation_file)
            .map_err(|e| format!("cannot read the shard of {key}: {e}"))?;
        let shard: Shard = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the shard of {key} is not valid: {e}"))?;
        let active = derive_active(&shard.records, &shard.marks);
        Ok(shard
            .records
            .into_iter()
            .enumerate()
            .map(|(i, r)| Entry {
                role: r.role,
                ts_ms: r.ts_ms,
                superseded: !active.get(i).copied().unwrap_or(true),
                subagent: r.subagent,
                text: r.text,
                locator: r.locator,
            })
            .collect())
    }
}

/// A search handed to the worker, numbered so a late answer to an older
/// query is recognised and dropped.
pub type Ticket = u64;

/// The search worker: one thread that answers the newest request queued.
pub struct Searcher {
    requests: Sender<(Ticket, Request)>,
    answers: Receiver<(Ticket, Result<Response, String>)>,
}

impl Searcher {
    /// Starts the worker over `data`.
    pub fn start(data: Arc<Data>) -> Searcher {
        let (requests, rx) = channel::<(Ticket, Request)>();
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            while let Ok(mut next) = rx.recv() {
                // Only the newest of the queued requests matters.
                while let Ok(newer) = rx.try_recv() {
                    next = newer;
                }
                let (ticket, request) = next;
                if tx.send((ticket, data.search(&request))).is_err() {
                    return;
                }
            }
        });
        Searcher { requests, answers }
    }

    /// Queues a search.
    pub fn submit(&self, ticket: Ticket, request: Request) {
        let _ = self.requests.send((ticket, request));
    }

    /// An answer, if one is ready.
    pub fn try_answer(&self) -> Option<(Ticket, Result<Response, String>)> {
        self.answers.try_recv().ok()
    }
}
