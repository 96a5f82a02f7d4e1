//! The offline copy of one source: `sync` (the manifest and the segments,
//! from the network, kept in the Cache API), `load` (the same from the cache
//! alone, for a reload without the network), `provide` (the generations a
//! lazy search names: cache first, then the network, then cached) and
//! `fill` (every generation still missing). An index is only replaced once
//! everything it needs has arrived and been accepted, so a failed download
//! loses nothing.

use crate::fetch::{self, FetchError, Kind, Source, Store};
use recall_core::layout::{host, is_generation_name, is_segment_name, HostCatalog, SegmentListing};
use recall_core::MemIndex;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

/// The index a binding object shares with its pending promises.
pub type Shared = Rc<RefCell<MemIndex>>;

/// Files fetched at once.
pub const PARALLEL: usize = 6;

/// What `sync`/`load` report.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The manifest's store id.
    pub store_id: String,
    /// The manifest's revision.
    pub revision: u64,
    /// Sessions it lists.
    pub sessions: usize,
    /// Segments the copy holds.
    pub segments: usize,
    /// Files fetched from the network by this call.
    pub fetched: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Whether searches fetch generations lazily (the source serves segments).
    pub lazy: bool,
    /// When the copy was downloaded (epoch ms).
    pub fetched_ms: f64,
}

/// Download progress: files done of total, bytes fetched.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Progress {
    /// Files present.
    pub done: usize,
    /// Files wanted.
    pub total: usize,
    /// Bytes fetched so far.
    pub bytes: u64,
}

/// The copy's own record, cached under [`Source::state_url`].
#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    store_id: String,
    revision: u64,
    manifest_url: String,
    segments: Vec<String>,
    fetched_ms: f64,
}

fn invalid(what: &str, e: impl std::fmt::Display) -> FetchError {
    FetchError::Invalid {
        what: what.to_string(),
        message: e.to_string(),
    }
}

/// The manifest (URL and bytes) and the live segment names, from the network.
async fn fetch_heads(source: &Source) -> Result<(String, Vec<u8>, Vec<String>), FetchError> {
    match source.kind {
        Kind::Daemon => {
            let url = source
                .manifest_url("", 0)
                .ok_or_else(|| invalid("the daemon's manifest", "no URL"))?;
            let bytes = fetch::get(&url, true).await?;
            let store_id = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("store_id")?.as_str().map(str::to_string))
                .unwrap_or_default();
            // A daemon without segments (or for another store) gets a copy
            // whose searches fetch every generation they scan.
            let segments = match fetch::get(&source.listing_url(), true).await {
                Ok(list) => match serde_json::from_slice::<SegmentListing>(&list) {
                    Ok(l) if l.store_id == store_id => {
                        l.segments.into_iter().map(|s| s.name).collect()
                    }
                    _ => Vec::new(),
                },
                Err(_) => Vec::new(),
            };
            Ok((url, bytes, segments))
        }
        Kind::Bucket => {
            let catalog = fetch::get(&source.listing_url(), true).await?;
            let c: HostCatalog =
                serde_json::from_slice(&catalog).map_err(|e| invalid(host::CATALOG, e))?;
            let url = source
                .manifest_url(&c.store_id, c.revision)
                .ok_or_else(|| invalid(host::CATALOG, "bad store id"))?;
            let bytes = fetch::get(&url, true).await?;
            Ok((url, bytes, c.segments))
        }
    }
}

fn summary(ix: &MemIndex, segments: usize, fetched: usize, bytes: u64, fetched_ms: f64) -> Summary {
    let m = ix.manifest();
    Summary {
        store_id: m.store_id.clone(),
        revision: m.revision,
        sessions: m.sessions.len(),
        segments,
        fetched,
        bytes,
        lazy: segments > 0,
        fetched_ms,
    }
}

/// Downloads the manifest and the segments the cache lacks, keeps them, and
/// replaces `index` with the new copy (generations are fetched by searches).
pub async fn sync(
    index: &Shared,
    source: &Source,
    progress: &dyn Fn(Progress),
) -> Result<Summary, FetchError> {
    let (manifest_url, manifest, segments) = fetch_heads(source).await?;
    if let Some(bad) = segments.iter().find(|n| !is_segment_name(n)) {
        return Err(invalid("the segment list", format!("bad name {bad:?}")));
    }
    let store = Store::open().await?;
    let mut next = MemIndex::new();
    let mut state = Progress {
        done: 0,
        total: segments.len(),
        bytes: 0,
    };
    let mut missing = Vec::new();
    for name in &segments {
        match store.get(&source.segment_url(name)).await {
            Some(b) if next.add_segment(name, &b).is_ok() => state.done += 1,
            _ => missing.push(name.clone()),
        }
    }
    progress(state);
    let mut fetched = 0;
    for chunk in missing.chunks(PARALLEL) {
        let started = chunk
            .iter()
            .map(|n| {
                let url = source.segment_url(n);
                fetch::start(&url, false).map(|p| (n, url, p))
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (name, url, pending) in started {
            let bytes = fetch::finish(&url, pending).await?;
            next.add_segment(name, &bytes)
                .map_err(|e| invalid(name, e))?;
            // Content-named: kept at once, so a download cut short resumes.
            store.put(&url, &bytes).await;
            state.done += 1;
            state.bytes += bytes.len() as u64;
            progress(state);
            fetched += 1;
        }
    }
    next.set_manifest(&manifest)
        .map_err(|e| invalid("the manifest", e))?;
    let m = next.manifest();
    let record = State {
        store_id: m.store_id.clone(),
        revision: m.revision,
        manifest_url: manifest_url.clone(),
        segments: segments.clone(),
        fetched_ms: js_sys::Date::now(),
    };
    let wanted: HashSet<String> = m
        .sessions
        .values()
        .map(|e| e.generation_file.clone())
        .collect();
    store.put(&manifest_url, &manifest).await;
    if let Ok(json) = serde_json::to_vec(&record) {
        store.put(&source.state_url(), &json).await;
    }
    prune(&store, source, &segments, &wanted).await;
    let out = summary(
        &next,
        segments.len(),
        fetched,
        state.bytes,
        record.fetched_ms,
    );
    *index.borrow_mut() = next;
    Ok(out)
}

/// Drops the cached segments and generations of `source` the copy no longer names.
async fn prune(store: &Store, source: &Source, segments: &[String], wanted: &HashSet<String>) {
    let seg_prefix = source.segments_prefix();
    let gen_prefix = source.generations_prefix();
    let live: HashSet<&str> = segments.iter().map(String::as_str).collect();
    for url in store.urls().await {
        let stale = match (url.strip_prefix(&seg_prefix), url.strip_prefix(&gen_prefix)) {
            (Some(name), _) => !live.contains(name),
            (_, Some(name)) => !wanted.contains(name),
            _ => false,
        };
        if stale {
            store.delete(&url).await;
        }
    }
}

/// Replaces `index` with the copy in the cache, without the network.
pub async fn load(index: &Shared, source: &Source) -> Result<Summary, FetchError> {
    let store = Store::open().await?;
    let state_url = source.state_url();
    let record = store
        .get(&state_url)
        .await
        .ok_or_else(|| FetchError::NotCached("its record".into()))?;
    let record: State =
        serde_json::from_slice(&record).map_err(|e| invalid("the offline record", e))?;
    let manifest = store
        .get(&record.manifest_url)
        .await
        .ok_or_else(|| FetchError::NotCached("the manifest".into()))?;
    let mut next = MemIndex::new();
    for name in &record.segments {
        let bytes = store
            .get(&source.segment_url(name))
            .await
            .ok_or_else(|| FetchError::NotCached(name.clone()))?;
        next.add_segment(name, &bytes)
            .map_err(|e| invalid(name, e))?;
    }
    next.set_manifest(&manifest)
        .map_err(|e| invalid("the manifest", e))?;
    let out = summary(&next, record.segments.len(), 0, 0, record.fetched_ms);
    *index.borrow_mut() = next;
    Ok(out)
}

/// Loads the generations `names` into `index`: from the cache, else from the
/// network (then cached). One that cannot be had is marked unavailable, so a
/// lazy search answers without it (`partial`) instead of asking again.
/// Returns how many came from the network.
pub async fn provide(index: &Shared, source: &Source, names: &[String]) -> usize {
    let store = Store::open().await.ok();
    let mut misses = Vec::new();
    for name in names {
        if index.borrow().has_generation(name) {
            continue;
        }
        if !is_generation_name(name) {
            index.borrow_mut().mark_unavailable(name);
            continue;
        }
        let url = source.generation_url(name);
        let cached = match &store {
            Some(s) => s.get(&url).await,
            None => None,
        };
        match cached {
            Some(bytes) if index.borrow_mut().add_generation(name, &bytes).is_ok() => {}
            _ => misses.push((name, url)),
        }
    }
    let mut fetched = 0;
    for chunk in misses.chunks(PARALLEL) {
        let started: Vec<_> = chunk
            .iter()
            .map(|(n, url)| (*n, url, fetch::start(url, false)))
            .collect();
        for (name, url, pending) in started {
            let got = match pending {
                Ok(p) => fetch::finish(url, p).await,
                Err(e) => Err(e),
            };
            let accepted = match got {
                Ok(bytes) => {
                    let ok = index.borrow_mut().add_generation(name, &bytes).is_ok();
                    if ok {
                        fetched += 1;
                        if let Some(s) = &store {
                            s.put(url, &bytes).await;
                        }
                    }
                    ok
                }
                Err(_) => false,
            };
            if !accepted {
                index.borrow_mut().mark_unavailable(name);
            }
        }
    }
    fetched
}

/// Loads every generation the manifest names that is missing.
pub async fn fill(index: &Shared, source: &Source) -> usize {
    let missing = index.borrow().missing_generations();
    provide(index, source, &missing).await
}

/// How many generations of `source` the cache holds.
pub async fn cached_generations(source: &Source) -> Result<usize, FetchError> {
    let store = Store::open().await?;
    let prefix = source.generations_prefix();
    Ok(store
        .urls()
        .await
        .iter()
        .filter(|u| u.starts_with(&prefix))
        .count())
}

/// What the cache holds for `source`: `(revision, fetched_ms)`.
pub async fn stored(source: &Source) -> Option<(u64, f64)> {
    let store = Store::open().await.ok()?;
    let record: State = serde_json::from_slice(&store.get(&source.state_url()).await?).ok()?;
    Some((record.revision, record.fetched_ms))
}

/// Deletes every file of `source` from the cache.
pub async fn forget(source: &Source) -> Result<(), FetchError> {
    let store = Store::open().await?;
    let prefix = source.prefix();
    for url in store.urls().await {
        if url.starts_with(&prefix) {
            store.delete(&url).await;
        }
    }
    Ok(())
}
