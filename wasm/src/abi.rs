//! The byte ABI: plain `extern "C"` exports that survive wasm-bindgen, so
//! wasmtime (the parity tests) runs the very `.wasm` that ships. Every
//! search here takes the frozen clock of `MemIndex::search` /
//! `MemIndex::search_lazy`, so answers are byte-identical to native; nothing
//! here calls a web-sys import. The table of exports is in the module doc of
//! the crate root (`lib.rs`).

use recall_core::index::IndexError;
use recall_core::{ErrorCode, MemIndex, QueryError};
use std::cell::RefCell;

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

fn report(result: Option<Result<(), IndexError>>) -> i32 {
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

/// A named file's name (UTF-8) and bytes; `None` (the refusal recorded for
/// `recall_last_error`) when the name is not UTF-8.
///
/// # Safety
/// Both ranges must be readable memory of this module.
unsafe fn named<'a>(
    name_ptr: *const u8,
    name_len: usize,
    ptr: *const u8,
    len: usize,
    what: &str,
) -> Option<(&'a str, &'a [u8])> {
    // SAFETY: forwarded caller contract.
    let (name, data) = unsafe { (bytes(name_ptr, name_len), bytes(ptr, len)) };
    match std::str::from_utf8(name) {
        Ok(name) => Some((name, data)),
        Err(_) => {
            LAST_ERROR.with(|e| *e.borrow_mut() = format!("{what} name is not UTF-8"));
            None
        }
    }
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
    let Some((name, data)) = (unsafe { named(name_ptr, name_len, ptr, len, "generation") }) else {
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
    let Some((name, data)) = (unsafe { named(name_ptr, name_len, ptr, len, "segment") }) else {
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
        Err(_) => QueryError::new(ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
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
        Err(_) => QueryError::new(ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
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
            _ => QueryError::new(ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
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
        Err(_) => QueryError::new(ErrorCode::InvalidParam, "request is not UTF-8").to_json(),
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
