//! The wasm build's I/O edge, as the host is natively: HTTP GETs through
//! web-sys `fetch` and the Cache API store the offline copy lives in. Only
//! here does the wasm module touch the network or storage; the search it
//! feeds (`MemIndex`) stays pure. Compiled only for `wasm32`.
//!
//! A [`Source`] names where a store's files are: the daemon
//! (`/api/index/…`) or a team bucket's host folder (`…/hosts/<id>/`); both
//! are named by `recall_core::layout` (`routes` and `host`). Every file is
//! cached under the URL it was fetched from, so a reload finds it without
//! the network.

use js_sys::{Array, Promise, Uint8Array};
use recall_core::layout::{host, routes, GENERATIONS, SEGMENTS};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Cache, CacheStorage, RequestCache, RequestInit, Response, Window, WorkerGlobalScope,
};

/// The Cache API store every source's files go into.
pub const CACHE_NAME: &str = "recall-offline-v1";

/// Why a fetch or a cache access failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The request did not complete (offline, refused, blocked by CORS).
    #[error("{url} could not be fetched: {message}")]
    Network {
        /// What was asked.
        url: String,
        /// The browser's reason.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// What was asked.
        url: String,
        /// The status.
        status: u16,
    },
    /// Bytes arrived but are not what they should be.
    #[error("{what} is not valid: {message}")]
    Invalid {
        /// Which file.
        what: String,
        /// Why.
        message: String,
    },
    /// Neither a window nor a worker (no `fetch`, no `caches`).
    #[error("this context has no fetch or Cache API: {0}")]
    NoGlobal(String),
    /// The offline copy lacks a file.
    #[error("the offline copy is missing {0}; download it again")]
    NotCached(String),
}

/// Where a store's files are fetched from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `recall serve` daemon's `/api/index/…` routes.
    Daemon,
    /// A host folder of a team bucket (`catalog.json`, `snapshots/`, …).
    Bucket,
}

/// A store's origin: the daemon at `base` or a bucket host folder at `base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Daemon or bucket.
    pub kind: Kind,
    /// The daemon's origin (no trailing `/`), or the host folder's URL
    /// (ending in `/`).
    base: String,
}

impl Source {
    /// The daemon at `origin` (e.g. `location.origin`).
    pub fn daemon(origin: &str) -> Source {
        Source {
            kind: Kind::Daemon,
            base: origin.trim_end_matches('/').to_string(),
        }
    }

    /// A bucket host folder, `https://…/<prefix>/hosts/<host-id>/`.
    pub fn bucket(folder: &str) -> Source {
        let mut base = folder.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Source {
            kind: Kind::Bucket,
            base,
        }
    }

    /// The prefix every generation URL of this source starts with.
    pub fn generations_prefix(&self) -> String {
        match self.kind {
            Kind::Daemon => format!("{}{}{GENERATIONS}/", self.base, routes::INDEX),
            Kind::Bucket => format!("{}{GENERATIONS}/", self.base),
        }
    }

    /// The prefix every segment URL of this source starts with.
    pub fn segments_prefix(&self) -> String {
        match self.kind {
            Kind::Daemon => format!("{}{}/", self.base, routes::SEGMENTS),
            Kind::Bucket => format!("{}{SEGMENTS}/", self.base),
        }
    }

    /// The prefix of every URL this source's copy is cached under.
    pub fn prefix(&self) -> String {
        match self.kind {
            Kind::Daemon => format!("{}{}", self.base, routes::INDEX),
            Kind::Bucket => self.base.clone(),
        }
    }

    /// A generation's URL (`name` must be a generation file name).
    pub fn generation_url(&self, name: &str) -> String {
        format!("{}{name}", self.generations_prefix())
    }

    /// A segment's URL (`name` must be a segment name).
    pub fn segment_url(&self, name: &str) -> String {
        format!("{}{name}", self.segments_prefix())
    }

    /// What lists the live segments: the daemon's listing or the catalog.
    pub fn listing_url(&self) -> String {
        match self.kind {
            Kind::Daemon => format!("{}{}", self.base, routes::SEGMENTS),
            Kind::Bucket => format!("{}{}", self.base, host::CATALOG),
        }
    }

    /// The manifest's URL (a bucket's snapshot of `store_id` at
    /// `revision`); `None` for a store id that cannot name a snapshot.
    pub fn manifest_url(&self, store_id: &str, revision: u64) -> Option<String> {
        match self.kind {
            Kind::Daemon => Some(format!("{}{}", self.base, routes::MANIFEST)),
            Kind::Bucket => Some(format!(
                "{}{}",
                self.base,
                host::snapshot(store_id, revision)?
            )),
        }
    }

    /// The cache key of the offline copy's own record (never fetched).
    pub fn state_url(&self) -> String {
        format!("{}recall-offline-copy.json", self.prefix())
    }
}

/// The page's or worker's global scope.
enum Global {
    Window(Window),
    Worker(WorkerGlobalScope),
}

fn global() -> Result<Global, FetchError> {
    let g = js_sys::global();
    if let Some(w) = g.dyn_ref::<Window>() {
        return Ok(Global::Window(w.clone()));
    }
    match g.dyn_into::<WorkerGlobalScope>() {
        Ok(w) => Ok(Global::Worker(w)),
        Err(_) => Err(FetchError::NoGlobal("neither a window nor a worker".into())),
    }
}

/// A readable message for a thrown JS value.
pub fn describe(value: &JsValue) -> String {
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// Starts a GET of `url` (`fresh`: bypass the HTTP cache); the request runs
/// while the caller awaits others, so starting several fetches them in
/// parallel.
pub fn start(url: &str, fresh: bool) -> Result<Promise, FetchError> {
    let init = RequestInit::new();
    init.set_method("GET");
    if fresh {
        init.set_cache(RequestCache::NoStore);
    }
    Ok(match global()? {
        Global::Window(w) => w.fetch_with_str_and_init(url, &init),
        Global::Worker(w) => w.fetch_with_str_and_init(url, &init),
    })
}

/// Awaits a fetch from [`start`] and reads its body.
pub async fn finish(url: &str, pending: Promise) -> Result<Vec<u8>, FetchError> {
    let network = |e: JsValue| FetchError::Network {
        url: url.to_string(),
        message: describe(&e),
    };
    let response: Response = JsFuture::from(pending)
        .await
        .map_err(network)?
        .dyn_into()
        .map_err(|_| FetchError::Network {
            url: url.to_string(),
            message: "not a response".into(),
        })?;
    if !response.ok() {
        return Err(FetchError::Status {
            url: url.to_string(),
            status: response.status(),
        });
    }
    let body = JsFuture::from(response.array_buffer().map_err(network)?)
        .await
        .map_err(network)?;
    Ok(Uint8Array::new(&body).to_vec())
}

/// One GET: `url`'s body.
pub async fn get(url: &str, fresh: bool) -> Result<Vec<u8>, FetchError> {
    finish(url, start(url, fresh)?).await
}

fn caches() -> Result<CacheStorage, FetchError> {
    let found = match global()? {
        Global::Window(w) => w.caches(),
        Global::Worker(w) => w.caches(),
    };
    found.map_err(|e| FetchError::NoGlobal(describe(&e)))
}

/// The Cache API store of the offline copy.
pub struct Store {
    cache: Cache,
}

impl Store {
    /// Opens [`CACHE_NAME`].
    pub async fn open() -> Result<Store, FetchError> {
        let opened = JsFuture::from(caches()?.open(CACHE_NAME))
            .await
            .map_err(|e| FetchError::NoGlobal(describe(&e)))?;
        let cache = opened
            .dyn_into::<Cache>()
            .map_err(|_| FetchError::NoGlobal("caches.open gave no cache".into()))?;
        Ok(Store { cache })
    }

    /// The bytes cached under `url`, if any.
    pub async fn get(&self, url: &str) -> Option<Vec<u8>> {
        let hit = JsFuture::from(self.cache.match_with_str(url)).await.ok()?;
        let response = hit.dyn_into::<Response>().ok()?;
        let body = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
        Some(Uint8Array::new(&body).to_vec())
    }

    /// Keeps `bytes` under `url`; a full quota only costs a later refetch.
    pub async fn put(&self, url: &str, bytes: &[u8]) -> bool {
        let body = Uint8Array::from(bytes);
        let Ok(response) = Response::new_with_opt_buffer_source(Some(&body)) else {
            return false;
        };
        JsFuture::from(self.cache.put_with_str(url, &response))
            .await
            .is_ok()
    }

    /// Drops `url`.
    pub async fn delete(&self, url: &str) {
        let _ = JsFuture::from(self.cache.delete_with_str(url)).await;
    }

    /// Every cached URL.
    pub async fn urls(&self) -> Vec<String> {
        let Ok(keys) = JsFuture::from(self.cache.keys()).await else {
            return Vec::new();
        };
        Array::from(&keys)
            .iter()
            .filter_map(|r| r.dyn_into::<web_sys::Request>().ok())
            .map(|r| r.url())
            .collect()
    }
}
