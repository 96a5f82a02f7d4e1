//! The files embedded in the binary at build time (`build.rs`: the
//! workspace folders it lists — the dashboard `web/`, the report viewer,
//! `pkg/`): looked up by URL path, with their MIME type. Served by
//! `http::assets`; inlined into reports by `recall report`.

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// Looks an embedded file up by URL path (`/` ⇒ `/index.html`, `/report` ⇒
/// `/report.html`).
pub fn find(path: &str) -> Option<&'static [u8]> {
    let path = match path {
        "/" => "/index.html",
        "/report" => "/report.html",
        p => p,
    };
    ASSETS.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

/// The MIME type for a file name.
pub fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "ts" | "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
