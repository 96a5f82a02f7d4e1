//! Assembles the report page from the embedded viewer: `web/report.html`
//! with its stylesheet and module tags replaced by inline copies, the wasm
//! core and the payload in inert `<script type=…>` data elements, and one
//! boot script. The page's Content-Security-Policy allows exactly that boot
//! script and stylesheet (by hash), Blob-URL modules and wasm — no network.

use super::payload::gzip_base64;
use super::ReportError;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The viewer's entry module (a path relative to the web root).
pub const ENTRY: &str = "js/report.js";
const TEMPLATE: &str = "report.html";
const STYLESHEET: &str = "css/app.css";
const BOOT: &str = "js/report-boot.js";
const WASM: &str = "pkg/recall_core_bg.wasm";

/// Renders the report page. `find` looks an embedded file up by URL path
/// (`/report.html`, `/js/…`, `/pkg/…`); `payload` is [`super::Payload::encode`]'s
/// output; `title` names the report.
pub fn render(
    find: &dyn Fn(&str) -> Option<&'static [u8]>,
    payload: &str,
    title: &str,
) -> Result<String, ReportError> {
    let text = |path: &str| -> Result<&'static str, ReportError> {
        let bytes =
            find(&format!("/{path}")).ok_or_else(|| ReportError::MissingAsset(path.to_string()))?;
        std::str::from_utf8(bytes).map_err(|_| ReportError::BadAsset(path.to_string(), "not UTF-8"))
    };
    let template = text(TEMPLATE)?;
    let css = text(STYLESHEET)?;
    let boot = text(BOOT)?;
    let modules = module_closure(&text, ENTRY)?;
    let wasm =
        find(&format!("/{WASM}")).ok_or_else(|| ReportError::MissingAsset(WASM.to_string()))?;
    let wasm = gzip_base64(wasm)?;
    for (path, src) in modules
        .iter()
        .map(|(p, s)| (p.as_str(), *s))
        .chain([(BOOT, boot), (STYLESHEET, css)])
    {
        inline_safe(path, src)?;
    }

    let csp = format!(
        "default-src 'none'; script-src 'sha256-{}' blob: 'wasm-unsafe-eval'; style-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(boot),
        sha256_b64(css)
    );
    let head = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n<style>{css}</style>"
    );
    let mut scripts = String::new();
    for (path, src) in &modules {
        let _ = writeln!(
            scripts,
            "<script type=\"application/x-recall-module\" data-path=\"{path}\">{src}</script>"
        );
    }
    let _ = writeln!(
        scripts,
        "<script type=\"application/x-recall-wasm\">{wasm}</script>"
    );
    let _ = writeln!(
        scripts,
        "<script type=\"application/x-recall-data\">{payload}</script>"
    );
    let _ = write!(scripts, "<script>{boot}</script>");

    let page = replace_region(template, "head", &head)?;
    let page = replace_region(&page, "scripts", &scripts)?;
    let page = page.replacen(
        "<title>recall report</title>",
        &format!("<title>recall report — {}</title>", escape_text(title)),
        1,
    );
    Ok(page)
}

/// The entry module and every module it imports (relative specifiers),
/// keyed by path relative to the web root.
fn module_closure<'a>(
    text: &dyn Fn(&str) -> Result<&'static str, ReportError>,
    entry: &'a str,
) -> Result<BTreeMap<String, &'static str>, ReportError> {
    let mut out = BTreeMap::new();
    let mut todo = vec![entry.to_string()];
    while let Some(path) = todo.pop() {
        if out.contains_key(&path) {
            continue;
        }
        let src = text(&path)?;
        for spec in imports(src) {
            todo.push(resolve(&path, &spec));
        }
        out.insert(path, src);
    }
    Ok(out)
}

/// Relative import specifiers of a module (`import … from './x.js'`,
/// `export … from '../y.js'`, `import './z.js'`), one statement per line.
fn imports(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let t = line.trim_start();
        if !(t.starts_with("import ") || t.starts_with("export ")) {
            continue;
        }
        let at = t
            .rfind(" from ")
            .map(|i| i + 6)
            .or_else(|| t.starts_with("import ").then_some(7));
        let Some(rest) = at.map(|i| t[i..].trim_start()) else {
            continue;
        };
        let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        if let Some(end) = rest[1..].find(q) {
            let spec = &rest[1..1 + end];
            if spec.starts_with("./") || spec.starts_with("../") {
                out.push(spec.to_string());
            }
        }
    }
    out
}

/// Resolves `spec` against the module at `from` (paths relative to the root).
fn resolve(from: &str, spec: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in spec.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// Text inlined in a `<script>`/`<style>` element must not end it early.
fn inline_safe(path: &str, src: &str) -> Result<(), ReportError> {
    let lower = src.to_ascii_lowercase();
    if lower.contains("</script") || lower.contains("</style") || lower.contains("<!--") {
        return Err(ReportError::BadAsset(
            path.to_string(),
            "it contains an HTML end tag or comment",
        ));
    }
    Ok(())
}

/// Replaces `<!--recall:NAME-->…<!--/recall:NAME-->` (markers included).
fn replace_region(page: &str, name: &str, with: &str) -> Result<String, ReportError> {
    let open = format!("<!--recall:{name}-->");
    let close = format!("<!--/recall:{name}-->");
    let bad = || ReportError::BadAsset(TEMPLATE.to_string(), "a recall: marker is missing");
    let a = page.find(&open).ok_or_else(bad)?;
    let b = page[a..]
        .find(&close)
        .map(|i| a + i + close.len())
        .ok_or_else(bad)?;
    Ok(format!("{}{}{}", &page[..a], with, &page[b..]))
}

fn sha256_b64(text: &str) -> String {
    STANDARD.encode(Sha256::digest(text.as_bytes()))
}

/// Escapes text for an HTML text position.
pub fn escape_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_relative_imports_only() {
        let src = "import init, { Index } from '../pkg/recall_core.js';\nimport { h } from \"./dom.js\";\nimport './side.js';\nconst x = 'from ./nope.js';\nimport fs from 'node:fs';\nexport { a } from './a.js';\n";
        assert_eq!(
            imports(src),
            ["../pkg/recall_core.js", "./dom.js", "./side.js", "./a.js"]
        );
    }

    #[test]
    fn resolves_specifiers_against_the_importer() {
        assert_eq!(
            resolve("js/engine.js", "../pkg/recall_core.js"),
            "pkg/recall_core.js"
        );
        assert_eq!(resolve("js/report.js", "./dom.js"), "js/dom.js");
    }

    #[test]
    fn refuses_text_that_would_close_its_element() {
        assert!(inline_safe("a.js", "let s = '</SCRIPT>';").is_err());
        assert!(inline_safe("a.js", "let s = 1;").is_ok());
    }

    #[test]
    fn renders_the_embedded_viewer_with_a_matching_policy() {
        let page = render(&crate::assets::find, "UEFZTE9BRA==", "<b>t</b>").unwrap();
        // Every module the viewer imports is inlined, the engine's wasm glue included.
        for path in [
            "js/report.js",
            "js/engine.js",
            "js/dom.js",
            "js/bundle.js",
            "pkg/recall_core.js",
        ] {
            assert!(
                page.contains(&format!("data-path=\"{path}\"")),
                "{path} is inlined"
            );
        }
        assert!(page.contains("<script type=\"application/x-recall-data\">UEFZTE9BRA==</script>"));
        assert!(page.contains("<title>recall report — &lt;b&gt;t&lt;/b&gt;</title>"));
        assert!(
            !page.contains("src=\"/js/"),
            "no module is loaded from a server"
        );
        // The one executable inline script and the stylesheet are the ones the CSP hashes.
        let boot_at = page.rfind("<script>").unwrap() + "<script>".len();
        let boot = &page[boot_at..boot_at + page[boot_at..].find("</script>").unwrap()];
        assert!(page.contains(&format!("'sha256-{}'", sha256_b64(boot))));
        let css_at = page.find("<style>").unwrap() + "<style>".len();
        let css = &page[css_at..css_at + page[css_at..].find("</style>").unwrap()];
        assert!(page.contains(&format!("style-src 'sha256-{}'", sha256_b64(css))));
        assert!(!page.contains("unsafe-inline"));
        let executable = page.lines().filter(|l| l.starts_with("<script>")).count();
        assert_eq!(executable, 1, "one inline script runs: the boot");
    }

    #[test]
    fn titles_are_escaped() {
        assert_eq!(escape_text("<img src=x>&"), "&lt;img src=x&gt;&amp;");
    }
}
