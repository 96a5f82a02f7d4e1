//! The files embedded in the binary at build time (`build.rs`: the
//! workspace folders it lists — the dashboard `web/`, the report viewer,
//! `pkg/`): looked up by URL path, with their MIME type. Served by
//! `http::assets`; inlined into reports by `recall report`. Also the
//! service worker as served: `web/sw.js` with its app-shell list and cache
//! name filled in from these files, so the shell never misses one.

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

/// The placeholder in `web/sw.js` that [`service_worker`] replaces with the shell list.
const SHELL_SLOT: &str = "[/* SHELL */]";
/// The placeholder in `web/sw.js` for the cache version.
const VERSION_SLOT: &str = "'dev'";

/// The app shell the service worker caches: `/` and every embedded page,
/// script, stylesheet and wasm file the dashboard or the report viewer can
/// load (type declarations, maps and the worker itself left out).
pub fn shell() -> Vec<&'static str> {
    let mut out = vec!["/"];
    out.extend(ASSETS.iter().map(|(p, _)| *p).filter(|p| {
        *p != "/sw.js"
            && !p.ends_with(".d.ts")
            && [".html", ".js", ".mjs", ".css", ".wasm"]
                .iter()
                .any(|ext| p.ends_with(ext))
    }));
    out
}

/// `/sw.js` as served: the embedded worker with the shell list and a cache
/// version (a hash of the shell's bytes, so a new build replaces the cache)
/// filled in; None when no worker is embedded.
pub fn service_worker() -> Option<String> {
    static SW: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SW.get_or_init(|| {
        let source = std::str::from_utf8(find("/sw.js")?).ok()?;
        let shell = shell();
        // FNV-1a over every shell file's path and bytes.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for path in &shell {
            for b in path
                .bytes()
                .chain(find(path).unwrap_or_default().iter().copied())
            {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        let list = serde_json::to_string(&shell).ok()?;
        Some(source.replacen(SHELL_SLOT, &list, 1).replacen(
            VERSION_SLOT,
            &format!("'{hash:016x}'"),
            1,
        ))
    })
    .clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_lists_every_script_and_style_the_pages_load() {
        let shell = shell();
        for (path, _) in ASSETS {
            if path.ends_with(".js") || path.ends_with(".css") || path.ends_with(".html") {
                assert!(
                    *path == "/sw.js" || shell.contains(path),
                    "{path} is missing"
                );
            }
        }
        assert!(shell.contains(&"/js/settings.js"));
        assert!(shell.contains(&"/pkg/recall_core_bg.wasm"));
        assert!(!shell.contains(&"/sw.js"));
    }

    #[test]
    fn the_served_worker_has_the_shell_and_a_version_filled_in() {
        let sw = service_worker().expect("web/sw.js is embedded");
        assert!(!sw.contains(SHELL_SLOT) && !sw.contains(VERSION_SLOT));
        assert!(sw.contains("\"/js/settings.js\""));
        assert!(sw.contains("\"/js/toolcards.js\""));
    }
}
