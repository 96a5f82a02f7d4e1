//! The state-changing routes (`POST /api/index/clear|policy`) are safe from
//! other web pages: a cross-site form POST, a request without the custom
//! header and one from a foreign Origin are all refused and change nothing;
//! only a same-origin request with the header clears or changes the policy.
//! And they are POST-only.

mod http_support;

use http_support::{demo_backend, request, serve, TempDir, NOW};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::Roots;
use recall_host::http::ServeOptions;
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn only_same_origin_posts_with_the_header_change_state() {
    let (home, _ix, backend) = demo_backend("state-change");
    let s = serve(backend.clone(), ServeOptions::default());
    let addr = s.addr();
    let origin = format!("http://{addr}");
    let status = || request(addr, "GET", "/api/index/status", &[]).json();
    let before = status();
    assert!(before["sessions"].as_u64().unwrap() > 0);

    let refused: Vec<Vec<(&str, &str)>> = vec![
        // What a cross-site HTML form sends.
        vec![
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "cross-site"),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Content-Length", "0"),
        ],
        // No custom header, even from this very origin.
        vec![("Origin", origin.as_str())],
        vec![],
        // The header, from a foreign Origin.
        vec![("X-Recall-Action", "1"), ("Origin", "http://evil.example")],
        vec![("X-Recall-Action", "1"), ("Sec-Fetch-Site", "same-site")],
    ];
    for path in [
        "/api/index/clear",
        "/api/index/policy?enabled=false&history_days=1",
    ] {
        for h in &refused {
            let r = request(addr, "POST", path, h);
            assert_eq!(r.status, 403, "{path} {h:?}: {}", r.text());
            assert_eq!(r.json()["ok"], false);
        }
        // State changes are never GETs (a link or an <img> cannot make one).
        let r = request(addr, "GET", path, &[("X-Recall-Action", "1")]);
        assert_eq!(r.status, 405, "{path}");
    }
    let after = status();
    assert_eq!(after["store_id"], before["store_id"], "nothing was cleared");
    assert_eq!(after["sessions"], before["sessions"]);
    let policy = home.0.join(".recall/index/v1/policy.json");
    assert!(!policy.exists(), "the policy was not written");

    // The dashboard's own request: same origin, with the header.
    let ok = [("X-Recall-Action", "1"), ("Origin", origin.as_str())];
    let r = request(addr, "POST", "/api/index/policy?history_days=3", &ok);
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["policy"]["history_days"], 3);
    assert_eq!(v["policy"]["enabled"], true);
    assert!(v["retires"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["dry_run"], false);
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&policy).expect("policy written")).expect("json");
    assert_eq!(stored["history_days"], 3);
    let r = request(addr, "POST", "/api/index/policy?enabled=false", &ok);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["policy"]["enabled"], false);
    assert_eq!(
        r.json()["policy"]["history_days"],
        3,
        "the other value is kept"
    );
    for bad in ["", "?enabled=maybe", "?history_days=-1"] {
        let r = request(addr, "POST", &format!("/api/index/policy{bad}"), &ok);
        assert_eq!(r.status, 400, "{bad}");
    }

    let r = request(addr, "POST", "/api/index/clear", &ok);
    assert_eq!(r.status, 200, "{}", r.text());
    let after = status();
    assert_ne!(after["store_id"], before["store_id"], "a new store id");
    assert_eq!(after["sessions"], 0);
    assert!(policy.exists(), "clearing keeps the policy");
}

#[test]
fn after_a_clear_the_index_is_building_until_rebuilt_never_current_and_empty() {
    let home = TempDir::new("clear-rebuild");
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.0.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(&home.0, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    indexer.sweep().expect("backfill");
    let catalog = StoreCatalog::new(store, Arc::new(Arena::new(64 << 20)));
    let backend = Arc::new(IndexerHandle::new(indexer, catalog.clone(), true).watch_sources());
    let s = serve(
        Served::indexed(Arc::new(catalog), backend.clone()),
        ServeOptions::default(),
    );
    let addr = s.addr();
    let status = || request(addr, "GET", "/api/index/status", &[]).json();
    let all = status()["sessions"].as_u64().unwrap();
    assert!(all > 0);
    let origin = format!("http://{addr}");
    let r = request(
        addr,
        "POST",
        "/api/index/clear",
        &[("X-Recall-Action", "1"), ("Origin", origin.as_str())],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Each answer on its own: either still rebuilding (and saying so),
        // or complete — never "current" or "ready" over a half-empty index.
        let search = request(addr, "GET", "/api/sessions/message-search?q=tide", &[]).json();
        let st = status();
        let complete = st["sessions"].as_u64() == Some(all);
        if !complete {
            assert_eq!(
                st["phase"], "indexing",
                "an incomplete index is not current: {st}"
            );
        }
        if search["state"] != "building" {
            assert!(
                !search["sessions"].as_array().unwrap().is_empty(),
                "a ready answer over a cleared index: {search}"
            );
        }
        if complete && st["phase"] != "indexing" {
            break;
        }
        assert!(Instant::now() < deadline, "never rebuilt: {st}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
