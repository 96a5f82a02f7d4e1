//! `GET /api/session/{key}/filter|search|window|surface|classify|event-trace`
//! end to end over the demo home; shapes pinned by golden JSON.

mod http_support;

use http_support::{enc, golden, normalize, Demo};
use serde_json::Value;

fn ok(d: &Demo, path: &str) -> Value {
    let r = d.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let mut v = r.json();
    normalize(&mut v, &d.home.0);
    v
}

fn err(d: &Demo, path: &str, status: u16, code: &str) {
    let r = d.get(path);
    assert_eq!(r.status, status, "{path}: {}", r.text());
    assert_eq!(r.json()["error"], code, "{path}");
}

/// The first session (in list order) with a superseded record, and it.
fn superseded_session(d: &Demo) -> (String, u64) {
    let list = d.get("/api/sessions?limit=100").json();
    for s in list["sessions"].as_array().unwrap() {
        let key = s["session_key"].as_str().unwrap();
        let c = d
            .get(&format!("/api/session/{}/classify?limit=500", enc(key)))
            .json();
        if let Some(r) = c["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["state"] == "superseded")
        {
            return (key.to_string(), r["index"].as_u64().unwrap());
        }
    }
    panic!("the demo home has no superseded record: {list}");
}

/// Rewrites the last message of the demo's pi session in place (pi keeps
/// the old text as a superseded record of generation 0) and re-indexes.
fn rewrite_pi_session(d: &Demo) {
    let dir = d.home.0.join(".pi/agent/sessions");
    let sub = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let file = std::fs::read_dir(&sub)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let body = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
    let last = lines
        .iter()
        .rposition(|l| l.contains("\"text\":\""))
        .unwrap();
    let at = lines[last].find("\"text\":\"").unwrap() + 8;
    lines[last].insert_str(at, "Rewritten: ");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    d.indexer.sweep().expect("sweep");
}

#[test]
fn one_session_queries() {
    let d = Demo::start("one-session");
    rewrite_pi_session(&d);
    let (key, sup) = superseded_session(&d);
    let k = enc(&key);
    let base = format!("/api/session/{k}");

    let classify = ok(&d, &format!("{base}/classify"));
    assert!(classify["superseded"].as_u64().unwrap() >= 1);
    golden("session_classify", &classify);

    let surface = ok(&d, &format!("{base}/surface"));
    assert!(surface["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["state"] == "current"));
    assert_eq!(
        surface["total"], classify["current"],
        "the surface is the current records"
    );
    golden("session_surface", &surface);

    let filtered = ok(&d, &format!("{base}/filter?state=superseded&limit=2"));
    assert_eq!(filtered["entries"][0]["index"], sup);
    golden("session_filter", &filtered);
    err(
        &d,
        &format!("{base}/filter?from=5&to=1"),
        400,
        "invalid_filter",
    );
    err(
        &d,
        &format!("{base}/filter?since=noon"),
        400,
        "invalid_filter",
    );
    let none = ok(&d, &format!("{base}/filter?role="));
    assert_eq!(none["total"], 0);

    let w = ok(&d, &format!("{base}/window?index={sup}&before=1&after=1"));
    assert_eq!(w["center"], sup);
    golden("session_window", &w);
    let loc = w["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["index"] == sup)
        .unwrap()["locator"]
        .to_string();
    let by_loc = ok(
        &d,
        &format!("{base}/window?locator={}&before=0&after=0", enc(&loc)),
    );
    // The rewritten record shares the locator; the current one is meant.
    let centre = by_loc["center"].as_u64().unwrap();
    assert_eq!(by_loc["entries"][0]["state"], "current");
    assert_eq!(by_loc["entries"][0]["locator"].to_string(), loc);
    assert_ne!(centre, sup);
    err(&d, &format!("{base}/window"), 400, "invalid_param");
    err(
        &d,
        &format!("{base}/window?index=99999"),
        404,
        "record_not_found",
    );

    let t = ok(&d, &format!("{base}/event-trace?index={sup}"));
    assert!(t["superseded_by"]["kind"].is_string(), "{t}");
    // The rewrite's new version stands in its place, and points back.
    let new = t["replaced_by"][0]["index"].as_u64().unwrap();
    let back = ok(&d, &format!("{base}/event-trace?index={new}"));
    assert_eq!(back["origin"]["previous"], serde_json::json!([sup]));
    golden("session_event_trace", &t);

    // Search: a word of the superseded record, paged one hit at a time.
    let text = w["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["index"] == sup)
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    let word = text
        .split(|c: char| !c.is_alphanumeric())
        .max_by_key(|w| w.len())
        .unwrap();
    let s = ok(
        &d,
        &format!("{base}/search?q={}&role=user,assistant,tool", enc(word)),
    );
    assert!(
        s["hits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["index"] == sup),
        "{s}"
    );
    let page = d
        .get(&format!(
            "{base}/search?q={}&role=user,assistant,tool&limit=1",
            enc(word)
        ))
        .json();
    if let Some(c) = page["cursor"].as_str() {
        let next = ok(
            &d,
            &format!(
                "{base}/search?q={}&role=user,assistant,tool&limit=1&cursor={}",
                enc(word),
                enc(c)
            ),
        );
        assert!(next["hits"][0]["index"].as_u64() > page["hits"][0]["index"].as_u64());
        err(
            &d,
            &format!("{base}/search?q=other&limit=1&cursor={}", enc(c)),
            400,
            "invalid_cursor",
        );
    }
    err(&d, &format!("{base}/search?q="), 400, "q_required");

    // A bare id works where it is unambiguous, here and on the detail route.
    let id = key.split_once(':').unwrap().1;
    assert_eq!(
        ok(&d, &format!("/api/session/{}/classify", enc(id))),
        classify
    );
    assert_eq!(d.get(&format!("/api/session/{}", enc(id))).status, 200);
    err(
        &d,
        "/api/session/nope:nothing/surface",
        404,
        "session_not_found",
    );
}
