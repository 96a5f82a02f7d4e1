//! Union search: this host plus every host under a team prefix, as one
//! `recall_core::Catalog`. Per remote host it reads the catalog, the catalog
//! snapshot, the live segments (cached by content name), and then only the
//! generations the core asks for (candidates). The union manifest is the
//! union of the hosts' manifests, so the core's answer is the one a single
//! index over the union would give; each session and hit is then stamped with
//! the host it came from (the folder read, never the object's content).
//!
//! The union's store id names every host part (`team:<id>=<store>@<rev>,…`),
//! so a cursor carries each host's store id and revision: a later page
//! reads the same snapshots, and a host whose snapshot is gone expires the
//! cursor (410). A host that cannot be read is left out of the answer and
//! listed in `hosts` as unavailable (`state: partial`, `partial_reason:
//! "hosts"`).

use super::cache::{self, Cache, Fetched};
use super::fetch::Failure;
use super::hostid::HostIdentity;
use super::memo::{Memo, Verified};
use super::Remote;
use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use base64::Engine;
use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::error::ErrorCode;
use recall_core::model::{Manifest, ManifestEntry};
use recall_core::query::{Query, QueryError};
use recall_core::response::{HostCoverage, HostRef, PartialReason, State};
use recall_core::search::{Budgets, SearchEnv};
use recall_core::{CatalogError, LoadError, Response, Segment, SegmentSet, ShardGrams};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

/// Another host's session as [`UnionCatalog::foreign`] gives it: its host
/// and, when asked for, its shard.
pub type ForeignShard = (HostRef, Option<Arc<recall_core::PreparedShard>>);

/// How a team search reaches other hosts.
#[derive(Clone, Debug)]
pub struct TeamOptions {
    /// Hosts fetched at once.
    pub parallel: usize,
    /// Per host: the time to read its catalog and segments; per generation:
    /// the time to fetch it.
    pub deadline: Duration,
    /// Only these hosts (ids or names); `None` = all.
    pub hosts: Option<Vec<String>>,
    /// The size cap of the local cache of remote objects (pruned after a
    /// search that fetched something).
    pub cache_cap: u64,
}

impl Default for TeamOptions {
    fn default() -> TeamOptions {
        TeamOptions {
            parallel: 8,
            deadline: Duration::from_secs(20),
            hosts: None,
            cache_cap: cache::DEFAULT_CAP_BYTES,
        }
    }
}

/// One host's part of the union.
#[derive(Clone, Debug)]
struct Part {
    host: HostRef,
    manifest: Arc<Manifest>,
    segments: Vec<Arc<Segment>>,
    /// Their names (remote hosts; for the cache's keep list).
    seg_names: Vec<String>,
    local: bool,
}

/// A host part named by a union store id.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Want {
    id: String,
    store_id: String,
    revision: u64,
}

const TEAM: &str = "team:";

/// Generations fetched at once before a scan.
const PREFETCH: usize = 8;

fn union_id(parts: &[Want]) -> String {
    let list: Vec<String> = parts
        .iter()
        .map(|w| format!("{}={}@{}", w.id, w.store_id, w.revision))
        .collect();
    format!("{TEAM}{}", list.join(","))
}

fn parse_union_id(s: &str) -> Option<Vec<Want>> {
    let rest = s.strip_prefix(TEAM)?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    rest.split(',')
        .map(|p| {
            let (id, at) = p.split_once('=')?;
            let (store_id, rev) = at.rsplit_once('@')?;
            // A cursor is input: its ids name cache files and bucket keys,
            // so they must have the layout's syntax before any is built.
            if !recall_core::layout::is_host_id(id) || !recall_core::layout::is_store_id(store_id) {
                return None;
            }
            Some(Want {
                id: id.to_string(),
                store_id: store_id.to_string(),
                revision: rev.parse().ok()?,
            })
        })
        .collect()
}

/// The union store id and revision a cursor names, if it is a team cursor.
fn cursor_union(cursor: &str) -> Option<(String, u64, Vec<Want>)> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let store = v.get("store")?.as_str()?.to_string();
    let rev = v.get("rev")?.as_u64()?;
    let wants = parse_union_id(&store)?;
    Some((store, rev, wants))
}

/// This host plus the hosts under a prefix, as one catalog.
pub struct UnionCatalog {
    local: StoreCatalog,
    remote: Option<Arc<Remote>>,
    cache: Cache,
    rt: Handle,
    deadline: Duration,
    cache_cap: u64,
    arena: Arc<Arena>,
    manifest: Arc<Manifest>,
    parts: Vec<Part>,
    owner: HashMap<String, usize>,
    set: Option<Arc<SegmentSet>>,
    status: Vec<HostCoverage>,
    failures: Mutex<BTreeMap<String, String>>,
    /// Per remote host, the time the current search spent waiting on it:
    /// all its requests of that search (prefetch and loads) share one
    /// deadline, and once it is spent its further loads fail at once.
    spent: Mutex<HashMap<String, Duration>>,
    /// Milliseconds the current search spent waiting on other hosts; the
    /// scan's clock leaves them out, so a slow host never spends the local
    /// store's budget.
    waited_ms: std::sync::atomic::AtomicU64,
    /// How long `open` took (listing, catalogs, snapshots, segments, the
    /// union manifest).
    open_time: Duration,
}

fn unavailable(id: &str, name: &str, reason: String) -> HostCoverage {
    HostCoverage {
        id: id.to_string(),
        name: name.to_string(),
        state: "unavailable".to_string(),
        reason: Some(reason),
        store_id: None,
        revision: None,
        sessions: 0,
    }
}

/// A `host` filter value: comma list of ids or names.
pub fn host_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

fn wanted(filter: &Option<Vec<String>>, host: &HostRef) -> bool {
    filter
        .as_ref()
        .is_none_or(|f| f.iter().any(|x| *x == host.id || *x == host.name))
}

/// The host filter must name hosts that were read, and a cursor must be
/// used with the filter it was made with (issue 24.19): a filter value that
/// names no host is 400 `invalid_param` (unless an unreadable host, whose
/// name is unknown, could be it); with a cursor, a host the cursor names that
/// the filter now leaves out, or a filter value the cursor's hosts do not
/// match, is 400 `invalid_cursor`.
fn check_host_filter(
    parts: &[Part],
    status: &[HostCoverage],
    opts: &TeamOptions,
    wants: Option<&Vec<Want>>,
) -> Result<(), QueryError> {
    let Some(filter) = &opts.hosts else {
        return Ok(());
    };
    let known = |x: &str| {
        parts.iter().any(|p| p.host.id == x || p.host.name == x)
            || status.iter().any(|h| h.id == x || h.name == x)
    };
    let nameless = status.iter().any(|h| h.name.is_empty() || h.id.is_empty());
    if let Some(w) = wants {
        let left_out = w.iter().any(|w| {
            !parts.iter().any(|p| p.host.id == w.id) && !status.iter().any(|h| h.id == w.id)
        });
        if left_out || filter.iter().any(|x| !known(x) && !nameless) {
            return Err(QueryError::new(
                ErrorCode::InvalidCursor,
                "this cursor was made with another host filter; start again at page 1",
            ));
        }
        return Ok(());
    }
    match filter.iter().find(|x| !known(x)) {
        Some(x) if !nameless => Err(QueryError::new(
            ErrorCode::InvalidParam,
            format!("host: no host is named {x:?}"),
        )),
        _ => Ok(()),
    }
}

/// 410 `cursor_expired`: a snapshot a cursor names is gone.
fn expired() -> QueryError {
    QueryError::new(
        ErrorCode::CursorExpired,
        "a host's catalog changed too much since this cursor; start again at page 1",
    )
}

/// This host's part: its current manifest, or the snapshot a cursor names
/// (`None` when the cursor did not include it or the filter leaves it out).
fn local_part(
    local: &StoreCatalog,
    ident: &HostIdentity,
    wants: Option<&Vec<Want>>,
    opts: &TeamOptions,
) -> Result<Option<Part>, QueryError> {
    let unavailable_store =
        |e: &dyn std::fmt::Display| QueryError::new(ErrorCode::StoreUnavailable, e.to_string());
    let me = HostRef {
        id: ident.id.clone(),
        name: ident.name.clone(),
    };
    let local_want = wants.map(|w| w.iter().find(|w| w.id == ident.id).cloned());
    let local_manifest = match local_want {
        None => Some(local.store().current().map_err(|e| unavailable_store(&e))?),
        Some(None) => None,
        Some(Some(w)) => {
            let cur = local.store().current().map_err(|e| unavailable_store(&e))?;
            if cur.store_id == w.store_id && cur.revision == w.revision {
                Some(cur)
            } else {
                Some(
                    local
                        .store()
                        .snapshot(&w.store_id, w.revision)
                        .ok_or_else(expired)?,
                )
            }
        }
    };
    Ok(local_manifest
        .filter(|_| wanted(&opts.hosts, &me))
        .map(|m| Part {
            host: me,
            segments: local.store().live_segments(),
            seg_names: Vec::new(),
            manifest: m,
            local: true,
        }))
}

/// The other hosts to read: a cursor's, else the bucket's listing (a
/// failing listing is one unavailable entry in `status`).
fn remote_ids(
    remote: &Remote,
    cache: &Cache,
    rt: &Handle,
    ident: &HostIdentity,
    wants: Option<&Vec<Want>>,
    opts: &TeamOptions,
    status: &mut Vec<HostCoverage>,
) -> Vec<(String, Option<Want>)> {
    if let Some(w) = wants {
        return w
            .iter()
            .filter(|w| w.id != ident.id)
            .map(|w| (w.id.clone(), Some(w.clone())))
            .collect();
    }
    match rt.block_on(async { tokio::time::timeout(opts.deadline, cache.host_ids(remote)).await }) {
        Ok(Ok(ids)) => {
            if let Some(m) = cache.memo() {
                m.keep_hosts(&ids);
            }
            ids.into_iter()
                .filter(|i| *i != ident.id)
                .map(|i| (i, None))
                .collect()
        }
        Ok(Err(e)) => {
            status.push(unavailable("", &remote.url, format!("unreachable: {e}")));
            Vec::new()
        }
        Err(_) => {
            status.push(unavailable(
                "",
                &remote.url,
                "unreachable: deadline passed".into(),
            ));
            Vec::new()
        }
    }
}

/// Reads `ids` in parallel (the host bound, each within the deadline); a
/// host that fails is an unavailable entry in `status`, a cursor snapshot
/// that is gone expires the cursor.
fn remote_parts(
    remote: &Arc<Remote>,
    cache: &Cache,
    rt: &Handle,
    ids: Vec<(String, Option<Want>)>,
    opts: &TeamOptions,
    status: &mut Vec<HostCoverage>,
) -> Result<Vec<Part>, QueryError> {
    let limit = Arc::new(Semaphore::new(opts.parallel.max(1)));
    let deadline = opts.deadline;
    let results = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for (n, (id, want)) in ids.into_iter().enumerate() {
            let (remote, cache, limit) = (remote.clone(), cache.clone(), limit.clone());
            tasks.spawn(async move {
                let _slot = limit.acquire_owned().await;
                let r = tokio::time::timeout(deadline, read_host(remote, cache, id.clone(), want))
                    .await
                    .unwrap_or_else(|_| {
                        Err((
                            String::new(),
                            Some(Failure::Unreachable("deadline passed".into())),
                        ))
                    });
                (n, id, r)
            });
        }
        let mut out = Vec::new();
        while let Some(done) = tasks.join_next().await {
            if let Ok(x) = done {
                out.push(x);
            }
        }
        out.sort_by_key(|x| x.0);
        out
    });
    let mut parts = Vec::new();
    for (_, id, r) in results {
        if let (Ok(p), Some(m)) = (&r, cache.memo()) {
            m.keep_segments(&id, &p.seg_names);
        }
        match r {
            Ok(p) if wanted(&opts.hosts, &p.host) => parts.push(p),
            Ok(_) => {}
            Err((_, None)) => return Err(expired()),
            Err((name, Some(f))) => {
                let h = HostRef {
                    id: id.clone(),
                    name: name.clone(),
                };
                if name.is_empty() || wanted(&opts.hosts, &h) {
                    status.push(unavailable(&id, &name, f.to_string()));
                }
            }
        }
    }
    Ok(parts)
}

/// The key another host's session has in the union: `<host-id>/<key>`, so
/// no host can take over a key of this host or of another host (issue 24.1).
pub fn qualified_key(host_id: &str, key: &str) -> String {
    format!("{host_id}/{key}")
}

/// Splits a union key into its host id and the host's own key (`None` for
/// this host's keys, which are never qualified).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once('/')
        .filter(|(id, _)| recall_core::layout::is_host_id(id))
}

/// Another host's manifest entry as the union holds it: its parent key
/// qualified like its own, and nothing the local machine would run or
/// vouch for — no resume command, no source paths (its presence is then
/// `unverifiable`).
fn foreign_entry(host_id: &str, e: &ManifestEntry) -> ManifestEntry {
    let mut e = e.clone();
    e.meta.resume = None;
    e.meta.paths.clear();
    e.source_gone = false;
    e.files.clear();
    if let Some(p) = &mut e.meta.parent {
        p.key = qualified_key(host_id, &p.key);
    }
    e
}

/// The union manifest of `parts` with each key's owning part, and each
/// part's coverage entry pushed to `status`. This host's keys are its own;
/// every other host's are qualified by its id ([`qualified_key`]), so two
/// hosts never merge into one session. A cursor's union id and revision
/// are kept, so its next page reads the same snapshots.
fn union_manifest(
    parts: &[Part],
    from_cursor: Option<&(String, u64, Vec<Want>)>,
    status: &mut Vec<HostCoverage>,
) -> (Arc<Manifest>, HashMap<String, usize>) {
    let mut sessions = BTreeMap::new();
    let mut tombstones = BTreeMap::new();
    let mut owner = HashMap::new();
    let mut wants_now = Vec::new();
    let (mut revision, mut parser_version, mut updated) = (0u64, 0u32, 0i64);
    for (i, p) in parts.iter().enumerate() {
        let m = &p.manifest;
        let mut count = 0u64;
        for (k, e) in &m.sessions {
            let (k, e) = if p.local {
                (k.clone(), e.clone())
            } else {
                (qualified_key(&p.host.id, k), foreign_entry(&p.host.id, e))
            };
            if let std::collections::btree_map::Entry::Vacant(v) = sessions.entry(k.clone()) {
                v.insert(e);
                owner.insert(k, i);
                count += 1;
            }
        }
        tombstones.extend(m.tombstones.iter().map(|(k, t)| {
            let k = if p.local {
                k.clone()
            } else {
                qualified_key(&p.host.id, k)
            };
            (k, *t)
        }));
        revision += m.revision;
        parser_version = parser_version.max(m.parser_version);
        updated = updated.max(m.updated_at_ms);
        wants_now.push(Want {
            id: p.host.id.clone(),
            store_id: m.store_id.clone(),
            revision: m.revision,
        });
        status.push(HostCoverage {
            id: p.host.id.clone(),
            name: p.host.name.clone(),
            state: "available".to_string(),
            reason: None,
            store_id: Some(m.store_id.clone()),
            revision: Some(m.revision),
            sessions: count,
        });
    }
    let (store_id, revision) = match from_cursor {
        Some((store, rev, _)) => (store.clone(), *rev),
        None => (union_id(&wants_now), revision),
    };
    let manifest = Arc::new(Manifest {
        schema: 1,
        parser_version,
        store_id,
        revision,
        updated_at_ms: updated,
        sessions,
        tombstones,
    });
    (manifest, owner)
}

/// Reads one remote host: at `want` (a cursor's snapshot) or its current
/// catalog. `Err(None)` = the wanted snapshot is gone (the cursor expired).
async fn read_host(
    remote: Arc<Remote>,
    cache: Cache,
    id: String,
    want: Option<Want>,
) -> Result<Part, (String, Option<Failure>)> {
    let cat = cache.catalog(&remote, &id).await;
    let (name, store_id, revision, seg_names) = match (&cat, &want) {
        (Ok(c), None) => (
            c.name.clone(),
            c.store_id.clone(),
            c.revision,
            c.segments.clone(),
        ),
        (Ok(c), Some(w)) => (
            c.name.clone(),
            w.store_id.clone(),
            w.revision,
            c.segments.clone(),
        ),
        (Err(e), _) => return Err((String::new(), Some(e.clone()))),
    };
    let manifest = match cache.snapshot(&remote, &id, &store_id, revision).await {
        Ok(m) => m,
        Err(Failure::Missing(_)) if want.is_some() => return Err((name, None)),
        Err(e) => return Err((name, Some(e))),
    };
    let mut segments = Vec::new();
    for s in &seg_names {
        match cache.segment(&remote, &id, s).await {
            Ok(seg) => segments.push(seg),
            Err(e) => return Err((name, Some(e))),
        }
    }
    Ok(Part {
        host: HostRef { id, name },
        manifest,
        segments,
        seg_names,
        local: false,
    })
}

impl UnionCatalog {
    /// Reads every host for `query` (its cursor's snapshots, else the current
    /// catalogs), in parallel with a bound and a deadline per host.
    pub fn open(
        local: StoreCatalog,
        ident: &HostIdentity,
        remote: Option<Arc<Remote>>,
        rt: Handle,
        opts: &TeamOptions,
        query: &Query,
    ) -> Result<UnionCatalog, QueryError> {
        UnionCatalog::open_with(local, ident, remote, rt, opts, query, None)
    }

    /// [`UnionCatalog::open`], taking opened segments and parsed snapshots
    /// from `memo` and keeping there what it verified (a long-lived reader,
    /// `reader.rs`); the memo keeps only what the catalogs read list.
    pub fn open_with(
        local: StoreCatalog,
        ident: &HostIdentity,
        remote: Option<Arc<Remote>>,
        rt: Handle,
        opts: &TeamOptions,
        query: &Query,
        memo: Option<Arc<Memo>>,
    ) -> Result<UnionCatalog, QueryError> {
        let cursor = query.cursor.as_deref();
        UnionCatalog::open_at(local, ident, remote, rt, opts, cursor, memo)
    }

    /// [`UnionCatalog::open_with`] at the snapshots `cursor` names, else
    /// at the hosts' current catalogs (`None`: session views).
    pub fn open_at(
        local: StoreCatalog,
        ident: &HostIdentity,
        remote: Option<Arc<Remote>>,
        rt: Handle,
        opts: &TeamOptions,
        cursor: Option<&str>,
        memo: Option<Arc<Memo>>,
    ) -> Result<UnionCatalog, QueryError> {
        let opened_at = Instant::now();
        let from_cursor = cursor.and_then(cursor_union);
        let wants: Option<&Vec<Want>> = from_cursor.as_ref().map(|c| &c.2);
        let cache = Cache::new(local.store().dir()).with_memo(memo);
        let mut parts = Vec::new();
        let mut status = Vec::new();
        parts.extend(local_part(&local, ident, wants, opts)?);
        if let Some(remote) = &remote {
            let ids = remote_ids(remote, &cache, &rt, ident, wants, opts, &mut status);
            parts.extend(remote_parts(remote, &cache, &rt, ids, opts, &mut status)?);
        }
        check_host_filter(&parts, &status, opts, wants)?;
        parts.sort_by(|a, b| a.host.id.cmp(&b.host.id));
        let (manifest, owner) = union_manifest(&parts, from_cursor.as_ref(), &mut status);
        status.sort_by(|a, b| a.id.cmp(&b.id));
        let segs: Vec<Arc<Segment>> = parts
            .iter()
            .flat_map(|p| p.segments.iter().cloned())
            .collect();
        let set = (!segs.is_empty()).then(|| Arc::new(SegmentSet::new(segs)));
        Ok(UnionCatalog {
            arena: local.arena().clone(),
            local,
            remote,
            cache,
            rt,
            deadline: opts.deadline,
            cache_cap: opts.cache_cap,
            manifest,
            parts,
            owner,
            set,
            status,
            failures: Mutex::new(BTreeMap::new()),
            spent: Mutex::new(HashMap::new()),
            waited_ms: Default::default(),
            open_time: opened_at.elapsed(),
        })
    }

    /// Fetches, in parallel (the host bound, each within the deadline), the
    /// remote generations of the first candidates in scan order — about what
    /// a page needs — into the cache, so the scan does not wait for them one
    /// by one. Failures are left for the scan's own load to report.
    /// Those the arena already holds are not fetched.
    fn prefetch(&self, query: &Query) {
        let Some(remote) = &self.remote else {
            return;
        };
        let plan = recall_core::plan::candidates(query, &self.manifest, self);
        let tools = recall_core::query::Lanes::of(query).tool;
        let want: Vec<(String, String, u64)> = plan
            .iter()
            .filter_map(|c| {
                let part = &self.parts[*self.owner.get(c.key)?];
                let name = c.entry.generation_file.clone();
                (!part.local).then(|| (part.host.id.clone(), name, c.entry.bytes))
            })
            .take(query.limit * 2 + 8)
            // One the arena holds (a long-lived reader's earlier search) is
            // not loaded again.
            .filter(|(host, name, _)| !self.arena.has_shard(&arena_name(host, name), tools))
            .collect();
        if want.is_empty() {
            return;
        }
        let mut by_host: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
        for (host, name, bytes) in want {
            by_host.entry(host).or_default().push((name, bytes));
        }
        let waited = Instant::now();
        let spent = self.rt.block_on(async {
            // Each host on its own: its own slots and its own deadline, so
            // a stalled host holds up no other.
            let mut hosts = tokio::task::JoinSet::new();
            for (host, names) in by_host {
                let left = self.time_left(&host);
                let (remote, cache) = (remote.clone(), self.cache.clone());
                hosts.spawn(async move {
                    let started = Instant::now();
                    let limit = Arc::new(Semaphore::new(PREFETCH));
                    let mut tasks = tokio::task::JoinSet::new();
                    for (name, bytes) in names {
                        let (remote, cache, limit, host) =
                            (remote.clone(), cache.clone(), limit.clone(), host.clone());
                        tasks.spawn(async move {
                            let _slot = limit.acquire_owned().await;
                            let _ = cache.generation(&remote, &host, &name, bytes).await;
                        });
                    }
                    // What is still running when the deadline passes is
                    // dropped (the host's loads then report it).
                    let _ = tokio::time::timeout(left, async {
                        while tasks.join_next().await.is_some() {}
                    })
                    .await;
                    (host, started.elapsed())
                });
            }
            let mut out = Vec::new();
            while let Some(done) = hosts.join_next().await {
                out.extend(done.ok());
            }
            out
        });
        for (host, took) in spent {
            self.spend(&host, took);
        }
        self.waited(waited);
    }

    /// The time the current search still gives host `host`.
    fn time_left(&self, host: &str) -> Duration {
        let spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        self.deadline
            .saturating_sub(spent.get(host).copied().unwrap_or_default())
    }

    fn spend(&self, host: &str, took: Duration) {
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        *spent.entry(host.to_string()).or_default() += took;
    }

    fn waited(&self, since: Instant) {
        let ms = since.elapsed().as_millis() as u64;
        self.waited_ms
            .fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs a §4 search over the union and stamps hosts on the answer.
    pub fn search(
        &self,
        query: &Query,
        building: bool,
        budgets: Budgets,
    ) -> Result<Response, QueryError> {
        self.spent.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.waited_ms
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.prefetch(query);
        let started = Instant::now();
        let waited = &self.waited_ms;
        // The scan's budget is the local work's: time spent waiting on other
        // hosts (bounded by their deadline) is not counted.
        let clock = move || {
            (started.elapsed().as_millis() as u64)
                .saturating_sub(waited.load(std::sync::atomic::Ordering::Relaxed))
        };
        let env = SearchEnv {
            catalog: self,
            directories: None,
            clock: &clock,
            clock_us: None,
            budgets,
            building,
        };
        let mut r = recall_core::search(query, &env)?;
        for s in &mut r.sessions {
            let host = self
                .owner
                .get(&s.session_key)
                .map(|&i| self.parts[i].host.clone());
            for h in &mut s.hits {
                h.host = host.clone();
            }
            s.host = host;
        }
        let failures = self
            .failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut status = self.status.clone();
        for h in &mut status {
            if let Some(why) = failures.get(&h.id) {
                h.state = "unavailable".to_string();
                h.reason = Some(why.clone());
            }
        }
        if status.iter().any(|h| h.state != "available")
            && matches!(r.partial_reason, None | Some(PartialReason::Unreadable))
        {
            r.state = State::Partial;
            r.partial_reason = Some(PartialReason::Hosts);
        }
        r.hosts = Some(status);
        let f = self.cache.fetched();
        if f.snapshots + f.segments + f.generations > 0 {
            // Only what was written can push the cache over its cap.
            self.prune();
        }
        Ok(r)
    }

    /// Another host's session under its union key: that host and, with
    /// `load`, its shard (tool rows included) fetched and verified like a
    /// search's (within one deadline). `None` = no other host holds `key`.
    pub fn foreign(&self, key: &str, load: bool) -> Option<Result<ForeignShard, String>> {
        let part = &self.parts[*self.owner.get(key)?];
        if part.local {
            return None;
        }
        if !load {
            return Some(Ok((part.host.clone(), None)));
        }
        let entry = self.manifest.sessions.get(key)?;
        self.spent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&part.host.id);
        Some(
            self.load(key, entry, true)
                .map(|l| (part.host.clone(), Some(l.shard)))
                .map_err(|e| format!("host {}: {e}", part.host.name)),
        )
    }

    /// Each host's coverage as opened (`available` or `unavailable` with why).
    pub fn hosts(&self) -> &[HostCoverage] {
        &self.status
    }

    /// What this union fetched from the bucket so far (its open and its
    /// searches); cache hits are not counted.
    pub fn fetched(&self) -> Fetched {
        self.cache.fetched()
    }

    /// How long opening it took (what a search costs before the core runs).
    pub fn open_time(&self) -> Duration {
        self.open_time
    }

    /// What this union verified so far (segments opened, snapshots parsed);
    /// what came from a memo is not counted.
    pub fn verified(&self) -> Verified {
        self.cache.verified()
    }

    /// Keeps the cache under its cap, what the hosts' current catalogs
    /// reference last.
    fn prune(&self) {
        let mut keep = std::collections::HashSet::new();
        for p in self.parts.iter().filter(|p| !p.local) {
            keep.extend(cache::referenced(&p.host.id, &p.manifest, &p.seg_names));
        }
        self.cache.prune(self.cache_cap, &keep);
    }

    fn fail(&self, host: &str, why: String) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(host.to_string())
            .or_insert(why);
    }
}

impl Catalog for UnionCatalog {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Ok(self.manifest.clone())
    }

    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        (self.manifest.store_id == store_id && self.manifest.revision == revision)
            .then(|| self.manifest.clone())
    }

    fn segments(&self) -> Option<Arc<SegmentSet>> {
        self.set.clone()
    }

    fn grams(&self, key: &str, entry: &ManifestEntry) -> Option<Arc<ShardGrams>> {
        let part = &self.parts[*self.owner.get(key)?];
        part.local.then(|| self.local.grams(key, entry)).flatten()
    }

    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        let name = entry.generation_file.clone();
        let Some(part) = self.owner.get(key).map(|&i| &self.parts[i]) else {
            return Err(LoadError::Missing { name });
        };
        if part.local {
            return self.local.load(key, entry, tools);
        }
        let Some(remote) = &self.remote else {
            return Err(LoadError::Missing { name });
        };
        let id = part.host.id.clone();
        let mut why = None;
        // Keyed by host: another host's copy of the same bytes does not
        // make this host's claim good.
        let loaded = self.arena.get_or_load(&arena_name(&id, &name), tools, || {
            let stalled = || Failure::Unreachable("deadline passed".into());
            let left = self.time_left(&id);
            let got = if left.is_zero() {
                Err(stalled())
            } else {
                let since = Instant::now();
                let got = self.rt.block_on(async {
                    tokio::time::timeout(
                        left,
                        self.cache.generation(remote, &id, &name, entry.bytes),
                    )
                    .await
                    .unwrap_or_else(|_| Err(stalled()))
                });
                self.spend(&id, since.elapsed());
                self.waited(since);
                if matches!(&got, Err(Failure::Unreachable(_))) {
                    // An unreachable host is not asked again this search.
                    self.spend(&id, self.deadline);
                }
                got
            };
            got.map_err(|f| {
                let s = f.to_string();
                why = Some(f);
                s
            })
        });
        match loaded {
            Ok(l) => Ok(LoadedShard {
                shard: l.shard,
                fresh_bytes: l.fresh_bytes,
            }),
            Err(e) => {
                let f = why.unwrap_or_else(|| Failure::Corrupt(e.to_string()));
                self.fail(&id, f.to_string());
                Err(match f {
                    Failure::Missing(_) => LoadError::Missing { name },
                    Failure::Corrupt(reason) => LoadError::Damaged { name, reason },
                    Failure::Unreachable(reason) => LoadError::Io { name, reason },
                })
            }
        }
    }
}

/// The arena's name of another host's generation: the host, then the
/// content name, so a host is only answered from bytes its own prefix gave.
fn arena_name(host: &str, name: &str) -> String {
    format!("{host}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_ids_round_trip() {
        let w = vec![
            Want {
                id: "00aa00aa00aa00aa".into(),
                store_id: "s-1".into(),
                revision: 3,
            },
            Want {
                id: "00bb00bb00bb00bb".into(),
                store_id: "x_2".into(),
                revision: 0,
            },
        ];
        assert_eq!(parse_union_id(&union_id(&w)), Some(w));
        assert_eq!(parse_union_id("team:"), Some(vec![]));
        assert_eq!(parse_union_id("abc"), None);
        assert_eq!(parse_union_id("team:a=b"), None);
    }

    #[test]
    fn a_cursor_naming_a_host_id_outside_the_layout_is_not_a_team_cursor() {
        assert_eq!(parse_union_id("team:../../x=s@1"), None);
        assert_eq!(parse_union_id("team:00aa00aa00aa00aa=../s@1"), None);
        assert_eq!(parse_union_id("team:00AA00aa00aa00aa=s@1"), None);
    }
}
