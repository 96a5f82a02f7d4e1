//! The page's budget clock: `performance.now()` of the window or the worker
//! the module runs in, through web-sys. The browser class `Index` searches
//! with it, so a scan that runs past its budget answers `partial`/`timeout`
//! as the daemon does; the byte ABI (`abi.rs`) keeps the frozen clock.

use wasm_bindgen::JsCast;
use web_sys::{Performance, Window, WorkerGlobalScope};

/// The global's `performance`, or `None` where there is none.
fn performance() -> Option<Performance> {
    let global = js_sys::global();
    if let Some(w) = global.dyn_ref::<Window>() {
        return w.performance();
    }
    global
        .dyn_ref::<WorkerGlobalScope>()
        .and_then(WorkerGlobalScope::performance)
}

/// A monotonic millisecond clock: `performance.now()`, else `Date.now()`.
pub fn page_clock() -> impl Fn() -> u64 {
    let perf = performance();
    move || {
        let ms = match &perf {
            Some(p) => p.now(),
            None => js_sys::Date::now(),
        };
        if ms.is_finite() && ms > 0.0 {
            ms as u64
        } else {
            0
        }
    }
}
