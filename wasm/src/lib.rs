//! recall-wasm: the WebAssembly binding of `recall-core` (DESIGN.md §8),
//! compiled only for `wasm32` (natively this crate is empty).
//!
//! It owns the browser's edge: the class `Index` (wasm-bindgen), the
//! fetcher and the Cache API store of the offline copy (`fetch.rs`,
//! `copy.rs`), the page's budget clock (`clock.rs`), and the byte ABI the
//! parity tests run in wasmtime (`abi.rs`). The search itself is
//! `recall_core`'s, which does no I/O. Two faces over one [`MemIndex`]:
//!
//! **The browser class `Index`** (wasm-bindgen, `pkg/recall_core.js`), one
//! face per operation its callers use (`web/js/engine.js`, the browser tests
//! and `bench/wasm-segments*.mjs`):
//!
//! ```js
//! const index = new Index();
//! index.addGeneration("0123456789abcdef.json", bytes); // throws Error(message) on bad bytes
//! index.setManifest(manifestBytes);                     // throws Error(message) on bad bytes
//! index.hasGeneration("0123456789abcdef.json");         // → boolean
//! index.addSegment("0123456789abcdef.seg", bytes);      // a store segment; throws Error(message) on bad bytes
//! index.hasSegment(name);                               // → boolean
//! index.generationOf(key);                              // → the session's generation file name, or undefined
//! index.search({ q: "straße", limit: 5 });              // → §4 response or §7 error object (page clock)
//! index.searchJson('{"q":"straße"}');                   // → exactly MemIndex::search_json's bytes (frozen clock)
//! index.sessionQueryJson(name, '{"query":"surface"}');  // → exactly MemIndex::session_query_json's bytes
//! index.viewsJson('{"query":"trace","key":"pi:…"}');    // → exactly MemIndex::views_json's bytes
//!
//! // The offline copy, fetched by the module itself (web-sys fetch + Cache API):
//! const ix = Index.fromDaemon(location.origin);         // or Index.fromBucket("https://…/<prefix>/hosts/<id>/")
//! await ix.sync((p) => …);                              // manifest + missing segments → {revision, store_id, sessions, segments, fetched, bytes, lazy, fetched_ms}
//! await ix.load();                                      // the same from the cache alone (no network)
//! await ix.searchFetching({ q: "x" });                  // → the §4 response; fetches (and caches) the generations it needs
//! await ix.ensureGenerations([names]);                  // before a view of one session
//! await ix.fill();                                      // every missing generation → how many came from the network
//! await ix.cachedGenerations(); await ix.stored(); await ix.forget();
//! ```
//!
//! `search` and `searchFetching` run on the page's budget clock,
//! `performance.now()` (`clock.rs`): a scan past its budget answers
//! `partial`/`timeout`. `searchJson` and the byte ABI keep the frozen clock,
//! so their bytes equal the native `MemIndex`'s (the browser tests compare
//! with it; DESIGN.md §8: parity runs inject a frozen clock).
//!
//! Lazy search (`recall_core::lazy`): `searchFetching` calls
//! `search_lazy_with`; while it answers `need`, it fetches those generations
//! (cache, then network, up to `copy::PARALLEL` at once), adds them (or marks
//! them unavailable) and asks again. The final answer equals `search` over a
//! fully loaded index.
//!
//! `search` takes a plain object whose §4 fields are strings, numbers or
//! booleans (`null`/`undefined` = absent) and returns plain objects: every
//! integer (timestamps, offsets, counts) is a JS number, never a BigInt, and
//! absent values are `null`, as in the JSON body.
//!
//! **The byte ABI** (`abi.rs`: plain `extern "C"` exports that survive wasm-bindgen, so
//! wasmtime can run the very `.wasm` that ships). Pointers and lengths are
//! `u32` offsets into the module's memory; handles are small positive ints:
//!
//! | export | meaning |
//! |---|---|
//! | `recall_alloc(len) -> ptr` | a buffer of `len` bytes for the caller to fill |
//! | `recall_free(ptr, len)` | frees a buffer from `recall_alloc` or an output of `recall_search` |
//! | `recall_index_new() -> handle` | a new empty index |
//! | `recall_index_free(handle)` | drops an index |
//! | `recall_set_manifest(h, ptr, len) -> i32` | 0 ok, 1 refused bytes, -1 unknown handle |
//! | `recall_add_generation(h, name_ptr, name_len, ptr, len) -> i32` | as above |
//! | `recall_search(h, ptr, len) -> i64` | request JSON in; `(ptr << 32) \| len` of the response JSON (free it); 0 for an unknown handle |
//! | `recall_session_query(h, name_ptr, name_len, ptr, len) -> i64` | one-session query JSON over generation `name`; output as `recall_search` |
//! | `recall_views(h, ptr, len) -> i64` | view query JSON (session list, session view, lineage); output as `recall_search` |
//! | `recall_add_segment(h, name_ptr, name_len, ptr, len) -> i32` | a store segment; as `recall_add_generation` |
//! | `recall_search_lazy(h, max_need, ptr, len) -> i64` | `MemIndex::search_lazy_json`; output as `recall_search` |
//! | `recall_last_error() -> i64` | `(ptr << 32) \| len` of the last refusal's message (owned by the module; valid until the next call) |
//!
//! Input buffers stay owned by the caller (free them after the call).

#![cfg(target_arch = "wasm32")]
#![deny(missing_docs)]

mod abi;
mod clock;
mod copy;
mod fetch;

pub use abi::*;

use copy::Shared;
use fetch::Source;
use recall_core::{ErrorCode, Lazy, MemIndex, QueryError, Request};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// The browser's index object: a manifest and its generations in memory,
/// and (when made with `fromDaemon`/`fromBucket`) where to fetch them.
#[wasm_bindgen(js_name = Index)]
pub struct Index {
    inner: Shared,
    source: Option<Rc<Source>>,
}

impl Default for Index {
    fn default() -> Index {
        Index::new()
    }
}

#[wasm_bindgen(js_class = Index)]
impl Index {
    /// An empty index.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Index {
        Index {
            inner: Rc::new(RefCell::new(MemIndex::new())),
            source: None,
        }
    }

    /// An empty index that fetches from the daemon at `origin`
    /// (`location.origin`).
    #[wasm_bindgen(js_name = fromDaemon)]
    pub fn from_daemon(origin: &str) -> Index {
        Index {
            source: Some(Rc::new(Source::daemon(origin))),
            ..Index::new()
        }
    }

    /// An empty index that fetches from a team bucket's host folder
    /// (`https://…/<prefix>/hosts/<host-id>/`, readable by the page: CORS).
    #[wasm_bindgen(js_name = fromBucket)]
    pub fn from_bucket(folder: &str) -> Index {
        Index {
            source: Some(Rc::new(Source::bucket(folder))),
            ..Index::new()
        }
    }

    /// Replaces the manifest (`manifest.json` bytes).
    #[wasm_bindgen(js_name = setManifest)]
    pub fn set_manifest(&mut self, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .borrow_mut()
            .set_manifest(bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Adds a generation file; `name` must be `<hash16>.json` of `bytes`.
    #[wasm_bindgen(js_name = addGeneration)]
    pub fn add_generation(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .borrow_mut()
            .add_generation(name, bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Whether a generation is loaded.
    #[wasm_bindgen(js_name = hasGeneration)]
    pub fn has_generation(&self, name: &str) -> bool {
        self.inner.borrow().has_generation(name)
    }

    /// Searches: a request object in, the §4 response (or the §7 error body
    /// `{ok:false, error, message}`, exactly as `searchJson` gives it) out,
    /// as plain JS objects.
    pub fn search(&self, request: JsValue) -> Result<JsValue, JsError> {
        match request_from_js(request)
            .and_then(|r| self.inner.borrow().search_with(&r, &clock::page_clock()))
        {
            Ok(resp) => resp
                .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
                .map_err(|e| JsError::new(&format!("response conversion failed: {e}"))),
            Err(e) => js_sys::JSON::parse(&e.to_json())
                .map_err(|_| JsError::new("error body conversion failed")),
        }
    }

    /// A one-session query (filter, search, window, surface, classify,
    /// event_trace) over loaded generation `name`: exactly
    /// `MemIndex::session_query_json`'s bytes.
    #[wasm_bindgen(js_name = sessionQueryJson)]
    pub fn session_query_json(&self, name: &str, request_json: &str) -> String {
        self.inner.borrow().session_query_json(name, request_json)
    }

    /// `MemIndex::views_json`'s bytes: the session list, a session view or
    /// lineage, shaped like the daemon's routes.
    #[wasm_bindgen(js_name = viewsJson)]
    pub fn views_json(&self, request_json: &str) -> String {
        self.inner.borrow().views_json(request_json)
    }

    /// JSON in, JSON out: exactly the bytes `MemIndex::search_json` returns
    /// natively.
    #[wasm_bindgen(js_name = searchJson)]
    pub fn search_json(&self, request_json: &str) -> String {
        self.inner.borrow().search_json(request_json)
    }

    /// Adds a store segment; `name` must be `<hash16>.seg` of `bytes`.
    #[wasm_bindgen(js_name = addSegment)]
    pub fn add_segment(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .borrow_mut()
            .add_segment(name, bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Whether a segment was added under `name`.
    #[wasm_bindgen(js_name = hasSegment)]
    pub fn has_segment(&self, name: &str) -> bool {
        self.inner.borrow().has_segment(name)
    }
}

/// Generations asked for at once by one lazy step.
const MAX_NEED: usize = 12;

/// How often a lazy search may name the same generation before it is taken
/// as unavailable (a guard: a loaded or unavailable one is never named).
const MAX_ASKS: u8 = 3;

#[wasm_bindgen(js_class = Index)]
impl Index {
    /// The generation file of session `key` in the current manifest.
    #[wasm_bindgen(js_name = generationOf)]
    pub fn generation_of(&self, key: &str) -> Option<String> {
        self.inner
            .borrow()
            .manifest()
            .sessions
            .get(key)
            .map(|e| e.generation_file.clone())
    }

    /// Downloads the manifest and the segments the cache lacks (kept in
    /// the Cache API) and replaces this index with the new copy;
    /// `onProgress({done, total, bytes})` as segments arrive. Resolves to
    /// `{store_id, revision, sessions, segments, fetched, bytes, lazy,
    /// fetched_ms}`; rejects (keeping the old copy) on any failure.
    pub fn sync(&self, on_progress: Option<js_sys::Function>) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            let report = |p: copy::Progress| {
                if let (Some(f), Ok(v)) = (&on_progress, to_js(&p)) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            };
            let summary = copy::sync(&ix, &src, &report).await.map_err(js_err)?;
            to_js(&summary)
        })
    }

    /// Replaces this index with the copy in the cache (no network).
    /// Resolves to the summary `sync` gave (`fetched: 0`).
    pub fn load(&self) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            let summary = copy::load(&ix, &src).await.map_err(js_err)?;
            to_js(&summary)
        })
    }

    /// §4 search that fetches what it needs: resolves to the response (or
    /// the §7 error body), equal to `search` over a fully loaded index.
    /// Generations that cannot be fetched are left out (`partial`).
    #[wasm_bindgen(js_name = searchFetching)]
    pub fn search_fetching(&self, request: JsValue) -> js_sys::Promise {
        let parts = self.parts();
        let request = request_from_js(request);
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            let request = match request {
                Ok(r) => r,
                Err(e) => return error_body(&e),
            };
            let clock = clock::page_clock();
            let mut asked = std::collections::HashMap::<String, u8>::new();
            loop {
                let step = ix.borrow().search_lazy_with(&request, MAX_NEED, &clock);
                match step {
                    Ok(Lazy::Complete(resp)) => return to_js(&*resp),
                    Ok(Lazy::Need(names)) => {
                        for n in &names {
                            let count = asked.entry(n.clone()).or_insert(0);
                            *count += 1;
                            if *count >= MAX_ASKS {
                                ix.borrow_mut().mark_unavailable(n);
                            }
                        }
                        copy::provide(&ix, &src, &names).await;
                    }
                    Err(e) => return error_body(&e),
                }
            }
        })
    }

    /// Loads `names` (cache, then network) before a view that reads them.
    #[wasm_bindgen(js_name = ensureGenerations)]
    pub fn ensure_generations(&self, names: Vec<String>) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            let fetched = copy::provide(&ix, &src, &names).await;
            Ok(JsValue::from(fetched as u32))
        })
    }

    /// Fetches every generation the manifest names that is not loaded, so
    /// the copy answers without the source. Resolves to how many came from
    /// the network.
    pub fn fill(&self) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            Ok(JsValue::from(copy::fill(&ix, &src).await as u32))
        })
    }

    /// How many of the source's generations the cache holds.
    #[wasm_bindgen(js_name = cachedGenerations)]
    pub fn cached_generations(&self) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (_, src) = parts?;
            let n = copy::cached_generations(&src).await.map_err(js_err)?;
            Ok(JsValue::from(n as u32))
        })
    }

    /// What the cache holds for the source: `{revision, fetched_ms}` or null.
    pub fn stored(&self) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (_, src) = parts?;
            match copy::stored(&src).await {
                Some((revision, fetched_ms)) => {
                    to_js(&serde_json::json!({ "revision": revision, "fetched_ms": fetched_ms }))
                }
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Deletes the source's files from the cache and empties this index.
    pub fn forget(&self) -> js_sys::Promise {
        let parts = self.parts();
        wasm_bindgen_futures::future_to_promise(async move {
            let (ix, src) = parts?;
            copy::forget(&src).await.map_err(js_err)?;
            *ix.borrow_mut() = MemIndex::new();
            Ok(JsValue::UNDEFINED)
        })
    }
}

impl Index {
    /// The shared index and its source, for a promise to own.
    fn parts(&self) -> Result<(Shared, Rc<Source>), JsValue> {
        match &self.source {
            Some(src) => Ok((Rc::clone(&self.inner), Rc::clone(src))),
            None => Err(js_err(
                "this index has no source: make it with Index.fromDaemon or Index.fromBucket",
            )),
        }
    }
}

/// A value as plain JS data (integers as numbers, maps as objects).
fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| js_err(format!("response conversion failed: {e}")))
}

/// The §7 error body as a JS object.
fn error_body(e: &QueryError) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(&e.to_json())
}

/// A JS `Error` with `message`.
fn js_err(message: impl std::fmt::Display) -> JsValue {
    JsValue::from(JsError::new(&message.to_string()))
}

/// A JS request object → [`Request`], with the same value rules as
/// [`Request::from_json`] (safe integers arrive as integers, so `limit: 5`
/// means `"5"`).
fn request_from_js(request: JsValue) -> Result<Request, QueryError> {
    let value: serde_json::Value = serde_wasm_bindgen::from_value(request).map_err(|e| {
        QueryError::new(
            ErrorCode::InvalidParam,
            format!("request is not an object: {e}"),
        )
    })?;
    Request::from_json(&value.to_string())
}
