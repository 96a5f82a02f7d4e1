//! `debug=true` on message search (DESIGN.md §4, issue #15): the planner's
//! report appears only when asked, never changes the answer, and a bad value
//! is a 400.

mod http_support;

use http_support::Demo;
use serde_json::Value;

fn search(d: &Demo, query: &str) -> Value {
    let r = d.get(&format!("/api/sessions/message-search?{query}"));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

#[test]
fn debug_reports_the_planner_only_when_asked() {
    let d = Demo::start("debug");
    let mut plain = search(&d, "q=brest");
    assert!(plain.get("debug").is_none(), "no debug unless asked");
    assert!(!plain["sessions"].as_array().unwrap().is_empty());
    let mut asked = search(&d, "q=brest&debug=true");
    let debug = asked
        .as_object_mut()
        .unwrap()
        .remove("debug")
        .expect("a debug object");
    assert!(
        ["index", "index+scan", "scan"].contains(&debug["route"].as_str().unwrap()),
        "{debug}"
    );
    let p = &debug["planner"];
    assert_eq!(p["terms"], 1);
    let n = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    assert!(n("candidate_shards") >= 1);
    assert!(n("shards_loaded") >= 1 && n("shards_loaded") <= n("candidate_shards"));
    for k in [
        "indexed_shards",
        "visited",
        "bytes_read",
        "plan_us",
        "scan_us",
        "page_us",
    ] {
        n(k);
    }
    // Everything else is the plain answer (took_ms aside).
    asked["took_ms"] = Value::Null;
    plain["took_ms"] = Value::Null;
    assert_eq!(asked, plain);
    assert!(search(&d, "q=brest&debug=false").get("debug").is_none());
    let r = d.get("/api/sessions/message-search?q=brest&debug=maybe");
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "invalid_param");
}
