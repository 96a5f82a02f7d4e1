//! The session list filters issue #14 adds (`id`, `title`, `no_cwd`,
//! `presence`), bare ids on the session and trace routes, and the CLI
//! printing exactly the bodies the routes answer (one implementation in
//! the core), over the demo home.

mod http_support;

use http_support::{enc, Demo};
use serde_json::Value;
use std::process::Command;

fn ok(d: &Demo, path: &str) -> Value {
    let r = d.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    r.json()
}

fn keys(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_string())
        .collect()
}

fn cli(d: &Demo, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_recall"))
        .arg("--home")
        .arg(&d.home.0)
        .args(["--retention-days", "0"])
        .args(args)
        .output()
        .expect("run recall");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn list_filters_bare_ids_and_the_cli_agree() {
    let d = Demo::start("http-session-views");
    let all = ok(&d, "/api/sessions?limit=500");
    let every = keys(&all);
    assert!(every.len() >= 6);
    let first = &all["sessions"][0];
    let key = first["session_key"].as_str().unwrap();
    let id = first["session_id"].as_str().unwrap();

    // id or id prefix, title text (case-insensitive, whitespace runs), no cwd, presence.
    let by_id = ok(&d, &format!("/api/sessions?id={}", enc(&id[..6])));
    assert!(keys(&by_id).contains(&key.to_string()));
    assert!(keys(&by_id)
        .iter()
        .all(|k| k.split_once(':').unwrap().1.starts_with(&id[..6])));
    let title = first["title"].as_str().unwrap();
    let shout = title.to_uppercase().replace(' ', "   ");
    let by_title = ok(&d, &format!("/api/sessions?title={}", enc(&shout)));
    assert!(keys(&by_title).contains(&key.to_string()), "{shout}");
    for s in by_title["sessions"].as_array().unwrap() {
        let t = s["title"].as_str().unwrap().to_lowercase();
        assert!(t.contains(&title.to_lowercase()), "{t}");
    }
    let no_cwd = ok(&d, "/api/sessions?no_cwd=true&limit=500");
    assert!(no_cwd["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["cwd"].is_null()));
    assert_eq!(
        ok(&d, "/api/sessions?presence=present&limit=500")["total"],
        all["total"]
    );
    assert_eq!(ok(&d, "/api/sessions?presence=gone")["total"], 0);
    for bad in [
        "/api/sessions?presence=maybe",
        "/api/sessions?no_cwd=perhaps",
        "/api/sessions?since=2026-10-02T00:00:00Z&until=2026-10-01T00:00:00Z",
        "/api/sessions?title=%CC%81",
    ] {
        let r = d.get(bad);
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["error"], "invalid_param", "{bad}");
    }

    // A bare id on the detail and trace routes.
    let trace = ok(&d, &format!("/api/session/{}/trace", enc(key)));
    assert_eq!(ok(&d, &format!("/api/session/{}/trace", enc(id))), trace);
    let detail = ok(
        &d,
        &format!("/api/session/{}?scope=all&limit=500", enc(key)),
    );
    assert_eq!(
        ok(&d, &format!("/api/session/{}?scope=all&limit=500", enc(id))),
        detail
    );
    assert_eq!(d.get("/api/session/nothing-like-it/trace").status, 404);

    // The CLI prints the same bodies.
    assert_eq!(
        cli(&d, &["trace", key, "--json"])["descendants"],
        trace["descendants"]
    );
    let loc = detail["entries"][2]["locator"].to_string();
    let http = ok(
        &d,
        &format!("/api/session/{}?locate={}&limit=3", enc(key), enc(&loc)),
    );
    assert_eq!(http["locate"]["state"], "resolved");
    let mut shown = cli(
        &d,
        &["show", key, "--json", "--locate", &loc, "--limit", "3"],
    );
    shown["revision"] = http["revision"].clone();
    assert_eq!(shown, http);
    let rows: Vec<Value> =
        serde_json::from_value(cli(&d, &["sessions", "--json", "--limit", "0"])).unwrap();
    let mut http_rows = all["sessions"].as_array().unwrap().clone();
    for r in http_rows.iter_mut() {
        // `recall sessions` prints the rows without the page envelope.
        assert!(r.get("children").is_some());
    }
    assert_eq!(rows, http_rows);
}
