//! The WebAssembly binding (DESIGN.md §8), compiled only for `wasm32`.
//!
//! Two faces over one [`MemIndex`]:
//!
//! **The browser class `Index`** (wasm-bindgen, `pkg/recall_core.js`):
//!
//! ```js
//! const index = new Index();
//! index.addGeneration("0123456789abcdef.json", bytes); // throws Error(message) on bad bytes
//! index.setManifest(manifestBytes);                     // throws Error(message) on bad bytes
//! index.hasGeneration("0123456789abcdef.json");         // → boolean
//! index.supersededRecords("0123456789abcdef.json");     // → Uint32Array of record indices
//! index.search({ q: "straße", limit: 5 });              // → §4 response or §7 error object
//! index.searchJson('{"q":"straße"}');                   // → exactly MemIndex::search_json's bytes
//! index.sessionQueryJson(name, '{"query":"surface"}');  // → exactly MemIndex::session_query_json's bytes
//! index.viewsJson('{"query":"trace","key":"pi:…"}');      // → exactly MemIndex::views_json's bytes
//! index.addSegment("0123456789abcdef.seg", bytes);      // a store segment; throws Error(message) on bad bytes
//! index.hasSegment(name); index.retainSegments([names]); // → boolean; drops segments not named
//! index.searchLazy({ q: "x" }, 16);                     // → the response, or { need: [generation names] }
//! index.searchLazyJson('{"q":"x"}', 16);                // → exactly MemIndex::search_lazy_json's bytes
//! index.markUnavailable(name);                          // a generation that could not be fetched
//! index.missingGenerations();                           // → names the manifest lists that are not loaded
//! ```
//!
//! Lazy search (`crate::lazy`): call `searchLazy`; while it answers `need`,
//! fetch those generations, `addGeneration` them (or `markUnavailable`),
//! and call again. The final answer equals `search` over a fully loaded
//! index.
//!
//! `search` takes a plain object whose §4 fields are strings, numbers or
//! booleans (`null`/`undefined` = absent) and returns plain objects: every
//! integer (timestamps, offsets, counts) is a JS number, never a BigInt, and
//! absent values are `null`, as in the JSON body.
//!
//! **The byte ABI** (plain `extern "C"` exports that survive wasm-bindgen, so
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

use crate::index::MemIndex;
use crate::query::QueryError;
use crate::Request;
use serde::Serialize;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// The browser's index object: a manifest and its generations in memory.
#[wasm_bindgen(js_name = Index)]
pub struct Index {
    inner: MemIndex,
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
            inner: MemIndex::new(),
        }
    }

    /// Replaces the manifest (`manifest.json` bytes).
    #[wasm_bindgen(js_name = setManifest)]
    pub fn set_manifest(&mut self, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .set_manifest(bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Adds a generation file; `name` must be `<hash16>.json` of `bytes`.
    #[wasm_bindgen(js_name = addGeneration)]
    pub fn add_generation(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .add_generation(name, bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Whether a generation is loaded.
    #[wasm_bindgen(js_name = hasGeneration)]
    pub fn has_generation(&self, name: &str) -> bool {
        self.inner.has_generation(name)
    }

    /// Indices of a loaded generation's superseded records, ascending
    /// (empty when it is not loaded).
    #[wasm_bindgen(js_name = supersededRecords)]
    pub fn superseded_records(&self, name: &str) -> Vec<u32> {
        self.inner.superseded_records(name)
    }

    /// Drops generations the current manifest no longer names.
    #[wasm_bindgen(js_name = retainReferenced)]
    pub fn retain_referenced(&mut self) {
        self.inner.retain_referenced();
    }

    /// Searches: a request object in, the §4 response (or the §7 error body
    /// `{ok:false, error, message}`, exactly as `searchJson` gives it) out,
    /// as plain JS objects.
    pub fn search(&self, request: JsValue) -> Result<JsValue, JsError> {
        match request_from_js(request).and_then(|r| self.inner.search(&r)) {
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
        self.inner.session_query_json(name, request_json)
    }

    /// `MemIndex::views_json`'s bytes: the session list, a session view or
    /// lineage, shaped like the daemon's routes.
    #[wasm_bindgen(js_name = viewsJson)]
    pub fn views_json(&self, request_json: &str) -> String {
        self.inner.views_json(request_json)
    }

    /// JSON in, JSON out: exactly the bytes `MemIndex::search_json` returns
    /// natively.
    #[wasm_bindgen(js_name = searchJson)]
    pub fn search_json(&self, request_json: &str) -> String {
        self.inner.search_json(request_json)
    }

    /// Adds a store segment; `name` must be `<hash16>.seg` of `bytes`.
    #[wasm_bindgen(js_name = addSegment)]
    pub fn add_segment(&mut self, name: &str, bytes: &[u8]) -> Result<(), JsError> {
        self.inner
            .add_segment(name, bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// Whether a segment was added under `name`.
    #[wasm_bindgen(js_name = hasSegment)]
    pub fn has_segment(&self, name: &str) -> bool {
        self.inner.has_segment(name)
    }

    /// Drops added segments not in `keep`.
    #[wasm_bindgen(js_name = retainSegments)]
    pub fn retain_segments(&mut self, keep: Vec<String>) {
        self.inner.retain_segments(&keep);
    }

    /// A generation that could not be fetched: lazy searches stop asking.
    #[wasm_bindgen(js_name = markUnavailable)]
    pub fn mark_unavailable(&mut self, name: &str) {
        self.inner.mark_unavailable(name);
    }

    /// Generations the manifest names that are not loaded.
    #[wasm_bindgen(js_name = missingGenerations)]
    pub fn missing_generations(&self) -> Vec<String> {
        self.inner.missing_generations()
    }

    /// One lazy step: the §4 response (or §7 error body) as `search` gives
    /// it, or `{need: [generation names]}` (at most `max_need`) to load
    /// first.
    #[wasm_bindgen(js_name = searchLazy)]
    pub fn search_lazy(&self, request: JsValue, max_need: u32) -> Result<JsValue, JsError> {
        let max = usize::try_from(max_need).unwrap_or(usize::MAX);
        match request_from_js(request).and_then(|r| self.inner.search_lazy(&r, max)) {
            Ok(crate::lazy::Lazy::Complete(resp)) => resp
                .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
                .map_err(|e| JsError::new(&format!("response conversion failed: {e}"))),
            Ok(crate::lazy::Lazy::Need(names)) => serde_json::json!({ "need": names })
                .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
                .map_err(|e| JsError::new(&format!("response conversion failed: {e}"))),
            Err(e) => js_sys::JSON::parse(&e.to_json())
                .map_err(|_| JsError::new("error body conversion failed")),
        }
    }

    /// Exactly `MemIndex::search_lazy_json`'s bytes.
    #[wasm_bindgen(js_name = searchLazyJson)]
    pub fn search_lazy_json(&self, request_json: &str, max_need: u32) -> String {
        self.inner.search_lazy_json(
            request_json,
            usize::try_from(max_need).unwrap_or(usize::MAX),
        )
    }
}

/// A JS request object → [`Request`], with the same value rules as
/// [`Request::from_json`] (safe integers arrive as integers, so `limit: 5`
/// means `"5"`).
fn request_from_js(request: JsValue) -> Result<Request, QueryError> {
    let value: serde_json::Value = serde_wasm_bindgen::from_value(request).map_err(|e| {
        QueryError::new(
            crate::error::ErrorCode::InvalidParam,
            format!("request is not an object: {e}"),
        )
    })?;
    Request::from_json(&value.to_string())
}

thread_local! {
    /// Indexes created through the byte ABI; a handle is its slot + 1.
    static HANDLES: RefCell<Vec<Option<MemIndex>>> = const { RefCell::new(Vec::new()) };
    /// The message of the last refused call.
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn with_index<R>(handle: u32, f: impl FnOnce(&mut MemIndex) -> R) -> Option<R> {
    HANDLES.with(|h| {
        let mut slots = h.borrow_mut();
        let slot = slots.get_mut(usize::try_from(handle).ok()?.checked_sub(1)?)?;
        slot.as_mut().map(f)
    })
}

fn report(result: Option<Result<(), crate::index::IndexError>>) -> i32 {
    match result {
        None => {
            LAST_ERROR.with(|e| *e.borrow_mut() = "unknown index handle".to_string());
            -1
        }
        Some(Ok(())) => 0,
        Some(Err(err)) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = err.to_string());
            1
        }
    }
}

/// Packs a wasm32 pointer and length into one `i64`.
fn pack(ptr: *const u8, len: usize) -> i64 {
    (((ptr as usize as u64) << 32) | (len as u64 & 0xFFFF_FFFF)) as i64
}

/// Borrows `len` bytes at `ptr` (empty when `len` is 0).
///
/// # Safety
/// `ptr..ptr+len` must be readable memory of this module.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: the caller promises `ptr..ptr+len` is readable.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Allocates `len` zeroed bytes for the caller; free with [`recall_free`].
#[no_mangle]
pub extern "C" fn recall_alloc(len: usize) -> *mut u8 {
    Box::into_raw(vec![0u8; len].into_boxed_slice()).cast::<u8>()
}

/// Frees a buffer from [`recall_alloc`] or a [`recall_search`] output.
///
/// # Safety
/// `ptr`/`len` must be exactly one such buffer, freed once.
#[no_mangle]
pub unsafe extern "C" fn recall_free(ptr: *mut u8, len: usize) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the buffer was made by `Box<[u8]>::into_raw` with this length.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
}

/// Creates an empty index and returns its handle (≥ 1).
#[no_mangle]
pub extern "C" fn recall_index_new() -> u32 {
    HANDLES.with(|h| {
        let mut slots = h.borrow_mut();
        slots.push(Some(MemIndex::new()));
        u32::try_from(slots.len()).unwrap_or(0)
    })
}

/// Drops an index; its handle is not reused.
#[no_mangle]
pub extern "C" fn recall_index_free(handle: u32) {
    HANDLES.with(|h| {
        let mut slots = h.borrow_mut();
        if let Some(slot) = (handle as usize)
            .checked_sub(1)
            .and_then(|i| slots.get_mut(i))
        {
            *slot = None;
        }
    });
}

/// Sets the manifest of index `handle` from `len` bytes at `ptr`.
///
/// # Safety
/// `ptr..ptr+len` must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_set_manifest(handle: u32, ptr: *const u8, len: usize) -> i32 {
    // SAFETY: forwarded caller contract.
    let data = unsafe { bytes(ptr, len) };
    report(with_index(handle, |ix| ix.set_manifest(data)))
}

/// Adds generation `name` (UTF-8 at `name_ptr`) with `len` bytes at `ptr`.
///
/// # Safety
/// Both ranges must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_add_generation(
    handle: u32,
    name_ptr: *const u8,
    name_len: usize,
    ptr: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded caller contract.
    let (name, data) = unsafe { (bytes(name_ptr, name_len), bytes(ptr, len)) };
    let Ok(name) = std::str::from_utf8(name) else {
        LAST_ERROR.with(|e| *e.borrow_mut() = "generation name is not UTF-8".to_string());
        return 1;
    };
    report(with_index(handle, |ix| ix.add_generation(name, data)))
}

/// Adds store segment `name` (UTF-8 at `name_ptr`) with `len` bytes at `ptr`.
///
/// # Safety
/// Both ranges must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_add_segment(
    handle: u32,
    name_ptr: *const u8,
    name_len: usize,
    ptr: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: forwarded caller contract.
    let (name, data) = unsafe { (bytes(name_ptr, name_len), bytes(ptr, len)) };
    let Ok(name) = std::str::from_utf8(name) else {
        LAST_ERROR.with(|e| *e.borrow_mut() = "segment name is not UTF-8".to_string());
        return 1;
    };
    report(with_index(handle, |ix| ix.add_segment(name, data)))
}

/// One lazy search step: request JSON (`len` bytes at `ptr`) in,
/// `MemIndex::search_lazy_json`'s output out as `(ptr << 32) | len` — free
/// it with [`recall_free`]. 0 for an unknown handle.
///
/// # Safety
/// `ptr..ptr+len` must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_search_lazy(
    handle: u32,
    max_need: u32,
    ptr: *const u8,
    len: usize,
) -> i64 {
    // SAFETY: forwarded caller contract.
    let data = unsafe { bytes(ptr, len) };
    let max = usize::try_from(max_need).unwrap_or(usize::MAX);
    let out = with_index(handle, |ix| match std::str::from_utf8(data) {
        Ok(json) => ix.search_lazy_json(json, max),
        Err(_) => QueryError::new(crate::ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
    });
    match out {
        None => 0,
        Some(s) => {
            let b = s.into_bytes().into_boxed_slice();
            let len = b.len();
            pack(Box::into_raw(b).cast::<u8>(), len)
        }
    }
}

/// Runs a search: request JSON (`len` bytes at `ptr`) in, response JSON out
/// as `(ptr << 32) | len` — free it with [`recall_free`]. Returns 0 for an
/// unknown handle.
///
/// # Safety
/// `ptr..ptr+len` must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_search(handle: u32, ptr: *const u8, len: usize) -> i64 {
    // SAFETY: forwarded caller contract.
    let data = unsafe { bytes(ptr, len) };
    let out = with_index(handle, |ix| match std::str::from_utf8(data) {
        Ok(json) => ix.search_json(json),
        Err(_) => QueryError::new(
            crate::error::ErrorCode::InvalidParam,
            "request is not UTF-8",
        )
        .to_json(),
    });
    match out {
        None => 0,
        Some(s) => {
            let b = s.into_bytes().into_boxed_slice();
            let len = b.len();
            pack(Box::into_raw(b).cast::<u8>(), len)
        }
    }
}

/// Runs a one-session query over generation `name` (UTF-8 at `name_ptr`):
/// request JSON (`len` bytes at `ptr`) in, response JSON out as
/// `(ptr << 32) | len` — free it with [`recall_free`]. 0 for an unknown handle.
///
/// # Safety
/// Both ranges must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_session_query(
    handle: u32,
    name_ptr: *const u8,
    name_len: usize,
    ptr: *const u8,
    len: usize,
) -> i64 {
    // SAFETY: forwarded caller contract.
    let (name, data) = unsafe { (bytes(name_ptr, name_len), bytes(ptr, len)) };
    let out = with_index(handle, |ix| {
        match (std::str::from_utf8(name), std::str::from_utf8(data)) {
            (Ok(name), Ok(json)) => ix.session_query_json(name, json),
            _ => QueryError::new(crate::ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
        }
    });
    match out {
        None => 0,
        Some(s) => {
            let b = s.into_bytes().into_boxed_slice();
            let len = b.len();
            pack(Box::into_raw(b).cast::<u8>(), len)
        }
    }
}

/// Runs a view query (session list, session view, lineage): request JSON
/// (`len` bytes at `ptr`) in, response JSON out as `(ptr << 32) | len` —
/// free it with [`recall_free`]. 0 for an unknown handle.
///
/// # Safety
/// The range must be readable memory of this module.
#[no_mangle]
pub unsafe extern "C" fn recall_views(handle: u32, ptr: *const u8, len: usize) -> i64 {
    // SAFETY: forwarded caller contract.
    let data = unsafe { bytes(ptr, len) };
    let out = with_index(handle, |ix| match std::str::from_utf8(data) {
        Ok(json) => ix.views_json(json),
        Err(_) => QueryError::new(crate::ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
    });
    match out {
        None => 0,
        Some(s) => {
            let b = s.into_bytes().into_boxed_slice();
            let len = b.len();
            pack(Box::into_raw(b).cast::<u8>(), len)
        }
    }
}

/// The message of the last refused call, as `(ptr << 32) | len`; the bytes
/// belong to the module and stay valid until the next ABI call.
#[no_mangle]
pub extern "C" fn recall_last_error() -> i64 {
    LAST_ERROR.with(|e| {
        let e = e.borrow();
        pack(e.as_ptr(), e.len())
    })
}
