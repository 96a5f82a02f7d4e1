//! Markdown export: `recall show KEY --format markdown` and `GET
//! /api/session/{key}/export.md` render the same document — one renderer —
//! compared with a golden file for a demo session with its subagents and
//! tool rows; transcript markup stays text inside fences, and a remote-style
//! request without tools has no tool rows.

mod http_support;

use http_support::*;
use std::path::Path;

fn golden_md(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/markdown")
        .join(format!("{name}.md"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden {} (UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(actual, expected, "differs from {}", path.display());
}

#[test]
fn the_cli_and_the_route_render_the_golden_markdown() {
    let demo = Demo::start("export-md");
    let store = demo.indexer.store().clone();
    let m = store.current().unwrap();
    // The demo session with subagents (the first, in key order).
    let key = m
        .sessions
        .iter()
        .find(|(_, e)| e.meta.parent.is_some())
        .and_then(|(_, e)| e.meta.parent.as_ref())
        .map(|p| p.key.clone())
        .expect("a session with a subagent");
    let home = demo.home.0.to_string_lossy().into_owned();
    let r = demo.get(&format!(
        "/api/session/{}/export.md?subagents=true&tools=true",
        enc(&key)
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert!(r
        .header("content-disposition")
        .is_some_and(|d| d.ends_with(".md\"")));
    let http = r.text().replace(&home, "<home>");
    golden_md("demo-with-subagents", &http);
    assert!(
        http.contains("\n### User ·"),
        "a subagent section, one level down"
    );

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recall"))
        .arg("--home")
        .arg(&demo.home.0)
        .env_remove("RECALL_HOME")
        .args([
            "show",
            &key,
            "--format",
            "markdown",
            "--full",
            "--with-subagents",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = String::from_utf8_lossy(&out.stdout).replace(&home, "<home>");
    assert_eq!(cli, http, "one renderer for both");

    // Without tools: no tool rows; bad flags are 400.
    let plain = demo
        .get(&format!("/api/session/{}/export.md", enc(&key)))
        .text();
    assert!(!plain.contains("# Tool ·"));
    assert!(plain.contains("# User ·"));
    assert_eq!(
        demo.get(&format!("/api/session/{}/export.md?tools=yes", enc(&key)))
            .status,
        400
    );
    assert_eq!(demo.get("/api/session/pi%3Anope/export.md").status, 404);
}

#[test]
fn the_json_export_holds_every_record_in_order() {
    let demo = Demo::start("export-json");
    let m = demo.indexer.store().current().unwrap();
    let (key, e) = m.sessions.iter().next().expect("a session");
    let r = demo.get(&format!("/api/session/{}/export.json", enc(key)));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r
        .header("content-disposition")
        .is_some_and(|d| d.ends_with(".json\"")));
    let v = r.json();
    assert_eq!(v["session_key"], key.as_str());
    let records = v["records"].as_array().unwrap();
    assert_eq!(records.len() as u64, e.records);
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec["index"], i);
    }
    assert_eq!(demo.get("/api/session/pi%3Anope/export.json").status, 404);
}
