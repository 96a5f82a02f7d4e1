//! The access policy and the limits: Host allowlist, bearer token, the
//! non-loopback bind rule, 429 beyond two concurrent searches, request size
//! limits, JSON errors for everything, `building` state, 500 when the store
//! cannot be read — and that query text never reaches the logs.

mod http_support;

use http_support::{
    demo_store, get, mem_backend, mem_served, request, serve, store_served, TempDir,
};
use recall_core::model::Manifest;
use recall_core::{
    Catalog, CatalogError, LoadError, LoadedShard, ManifestEntry, Query, QueryError, Response,
    SearchEnv,
};
use recall_host::engine::mem::Gate;
use recall_host::engine::{EngineError, IndexerHandle, ReadCatalog, SegmentListing, Served};
use recall_host::http::{Security, ServeError, ServeOptions};
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Everything logged by this test binary (any thread), at every level.
fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        buf
    })
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The demo home's sessions in memory, served without an indexer.
fn mem(tag: &str) -> (TempDir, Served) {
    let dir = TempDir::new(tag);
    let b = mem_served(Arc::new(mem_backend(&dir.0)));
    (dir, b)
}

#[test]
fn foreign_hosts_are_refused() {
    let (_d, b) = mem("hosts");
    let opts = ServeOptions {
        security: Security {
            allow_hosts: vec!["recall.lan".into()],
            token: None,
        },
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    let status = |host: &str| get(s.addr(), "/api/index/status", &[("Host", host)]).status;
    for ok in [
        "localhost",
        &format!("localhost:{}", s.addr().port()),
        "127.0.0.1",
        "[::1]:7979",
        "recall.lan:7979",
    ] {
        assert_eq!(status(ok), 200, "{ok}");
    }
    for bad in [
        "evil.example",
        "evil.example:7979",
        "localhost.evil.example",
        "192.168.1.5",
        "",
    ] {
        let r = get(s.addr(), "/api/index/status", &[("Host", bad)]);
        assert_eq!(r.status, 403, "{bad}");
        assert_eq!(r.json()["error"], "forbidden_host");
    }
    // The dashboard too: a rebinding page must not even load it.
    assert_eq!(get(s.addr(), "/", &[("Host", "evil.example")]).status, 403);
}

#[test]
fn token_guards_the_api() {
    let (_d, b) = mem("token");
    let opts = ServeOptions {
        security: Security {
            allow_hosts: vec![],
            token: Some("s3cret-token".into()),
        },
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    let path = "/api/sessions/message-search?q=tide";
    let r = get(s.addr(), path, &[]);
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["error"], "unauthorized");
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_eq!(
        get(s.addr(), path, &[("Authorization", "Bearer wrong")]).status,
        401
    );
    assert_eq!(
        get(s.addr(), path, &[("Authorization", "s3cret-token")]).status,
        401
    );
    assert_eq!(
        get(s.addr(), path, &[("Authorization", "Bearer s3cret-token")]).status,
        200
    );
    assert_eq!(
        get(s.addr(), "/", &[]).status,
        200,
        "static pages hold no transcript data"
    );
}

#[test]
fn non_loopback_bind_needs_a_token() {
    let (_d, b) = mem("bind");
    let opts = ServeOptions {
        bind: "0.0.0.0:0".parse().unwrap(),
        index: false,
        ..ServeOptions::default()
    };
    match recall_host::http::Server::start(b, opts) {
        Err(ServeError::Security(e)) => assert!(e.to_string().contains("--token")),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a non-loopback bind without a token must be refused"),
    }
}

#[test]
fn third_concurrent_search_is_busy() {
    let dir = TempDir::new("busy");
    let gate = Arc::new(Gate::new());
    let b = mem_served(Arc::new(mem_backend(&dir.0).with_gate(gate.clone())));
    let s = serve(b, ServeOptions::default());
    let addr = s.addr();
    let held: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || get(addr, "/api/sessions/message-search?q=tide", &[]).status)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while gate.waiting() < 2 {
        assert!(Instant::now() < deadline, "two searches never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = get(addr, "/api/sessions/message-search?q=tide", &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"], "busy");
    // Other routes still answer while searches are held.
    assert_eq!(get(addr, "/api/index/status", &[]).status, 200);
    gate.open();
    for h in held {
        assert_eq!(h.join().unwrap(), 200);
    }
    assert_eq!(
        get(addr, "/api/sessions/message-search?q=tide", &[]).status,
        200
    );
}

#[test]
fn oversized_and_odd_requests_get_json_errors() {
    let (_d, b) = mem("limits");
    let s = serve(b, ServeOptions::default());
    let long = format!(
        "/api/sessions/message-search?q=x&cursor={}",
        "a".repeat(9000)
    );
    let r = get(s.addr(), &long, &[]);
    assert_eq!(r.status, 414);
    assert_eq!(r.json()["error"], "uri_too_long");
    let r = request(
        s.addr(),
        "POST",
        "/api/sessions",
        &[("Content-Length", "100000000")],
    );
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["error"], "body_too_large");
    let r = request(
        s.addr(),
        "POST",
        "/api/sessions",
        &[("Content-Length", "0")],
    );
    assert_eq!(r.status, 405);
    assert_eq!(r.json()["error"], "method_not_allowed");
    let r = get(
        s.addr(),
        "/api/sessions/message-search?q=%FF%FE&limit=%ZZ",
        &[],
    );
    assert!(
        r.status == 200 || r.status == 400,
        "never a 500: {}",
        r.status
    );
    assert!(r.json().get("ok").is_some());
}

#[test]
fn the_dashboard_files_answer_only_get_and_head() {
    let (_d, b) = mem("methods");
    let s = serve(b, ServeOptions::default());
    assert_eq!(get(s.addr(), "/", &[]).status, 200);
    assert_eq!(request(s.addr(), "HEAD", "/", &[]).status, 200);
    for (method, path) in [
        ("TRACE", "/"),
        ("PUT", "/"),
        ("DELETE", "/index.html"),
        ("POST", "/js/app.js"),
        ("OPTIONS", "/nowhere"),
    ] {
        let r = request(s.addr(), method, path, &[("Content-Length", "0")]);
        assert_eq!(r.status, 405, "{method} {path}");
        assert_eq!(r.json()["error"], "method_not_allowed", "{method} {path}");
    }
}

#[test]
fn building_until_backfilled() {
    let (_d, indexer, catalog) = demo_store("building", false);
    let handle = IndexerHandle::new(indexer.clone(), catalog.clone(), false);
    let s = serve(store_served(handle, catalog), ServeOptions::default());
    let v = get(s.addr(), "/api/sessions/message-search?q=tide", &[]).json();
    assert_eq!(v["state"], "building");
    indexer.sweep().expect("backfill");
    let v = get(s.addr(), "/api/sessions/message-search?q=tide", &[]).json();
    assert_eq!(v["state"], "ready");
    assert!(!v["sessions"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn a_server_without_an_indexer_says_so_and_changes_nothing() {
    let (_d, b) = mem("no-indexer");
    let s = serve(b, ServeOptions::default());
    let st = get(s.addr(), "/api/index/status", &[]).json();
    assert_eq!(st["enabled"], false, "{st}");
    assert_eq!(st["building"], false);
    assert_eq!(st["policy"], serde_json::Value::Null);
    assert_eq!(st["roots"], serde_json::json!([]));
    assert_eq!(
        st["availability"],
        serde_json::json!({"state": "unavailable", "reason": "disabled"})
    );
    // Searches answer from the catalog as it is, even when asked to wait.
    let v = get(
        s.addr(),
        "/api/sessions/message-search?q=tide&freshness=wait-until-current",
        &[],
    )
    .json();
    assert!(!v["sessions"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["window_days"], serde_json::Value::Null);
    // A located hit cannot be checked against its source without an indexer.
    let hit = &v["sessions"][0];
    let key = hit["session_key"].as_str().unwrap();
    let url = format!(
        "/api/session/{}?locate={}",
        http_support::enc(key),
        http_support::b64(&hit["hits"][0]["locator"])
    );
    let page = get(s.addr(), &url, &[]).json();
    assert_eq!(page["locate"]["state"], "unavailable", "{page}");
    // State changes have no store to change.
    for path in ["/api/index/clear", "/api/index/policy?enabled=false"] {
        let r = request(s.addr(), "POST", path, &[("X-Recall-Action", "1")]);
        assert_eq!(r.status, 500, "{path}: {}", r.text());
        assert_eq!(r.json()["error"], "store_unavailable", "{path}");
    }
}

/// A store that cannot be read.
struct Broken;

impl Catalog for Broken {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Err(CatalogError("the manifest cannot be read".into()))
    }
    fn snapshot(&self, _: &str, _: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(&self, _: &str, e: &ManifestEntry, _: bool) -> Result<LoadedShard, LoadError> {
        Err(LoadError::Missing {
            name: e.generation_file.clone(),
        })
    }
}

impl ReadCatalog for Broken {
    fn catalog(&self) -> &dyn Catalog {
        self
    }
    fn manifest(&self) -> Result<Arc<Manifest>, EngineError> {
        Err(EngineError::unavailable("the manifest cannot be read"))
    }
    fn manifest_bytes(&self) -> Result<Vec<u8>, EngineError> {
        Err(EngineError::unavailable("the manifest cannot be read"))
    }
    fn generation(&self, _: &str) -> Result<Option<Vec<u8>>, EngineError> {
        Err(EngineError::unavailable("generations cannot be read"))
    }
    fn segment_list(&self) -> Result<SegmentListing, EngineError> {
        Err(EngineError::unavailable("segments cannot be read"))
    }
    fn segment(&self, _: &str) -> Result<Option<Vec<u8>>, EngineError> {
        Err(EngineError::unavailable("segments cannot be read"))
    }
    fn search(
        &self,
        q: &Query,
        _: Option<&str>,
        env: &SearchEnv<'_>,
    ) -> Result<Response, QueryError> {
        recall_core::search(q, env)
    }
}

#[test]
fn unreadable_store_is_500_store_unavailable() {
    let s = serve(Served::read_only(Arc::new(Broken)), ServeOptions::default());
    for path in [
        "/api/sessions/message-search?q=tide",
        "/api/sessions",
        "/api/session/pi:x",
        "/api/session/pi:x/trace",
        "/api/session/pi:x/export",
        "/api/index/status",
        "/api/index/manifest",
        "/api/index/generations/0123456789abcdef.json",
    ] {
        let r = get(s.addr(), path, &[]);
        assert_eq!(r.status, 500, "{path}");
        assert_eq!(r.json()["error"], "store_unavailable", "{path}");
    }
}

#[test]
fn query_text_is_never_logged() {
    let logs = logs();
    let (_d, b) = mem("logs");
    let s = serve(b, ServeOptions::default());
    let secret = "zebracornflake";
    for path in [
        format!("/api/sessions/message-search?q={secret}"),
        format!("/api/sessions/message-search?q=tide&cursor={secret}"),
        format!("/api/sessions?cwd={secret}"),
        format!("/api/session/pi:nope?locate={secret}"),
    ] {
        get(s.addr(), &path, &[]);
    }
    get(
        s.addr(),
        "/api/sessions/message-search?q=x",
        &[("Host", "evil.example")],
    );
    drop(s);
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        text.contains("/api/sessions/message-search"),
        "the access log is captured: {text}"
    );
    assert!(
        !text.contains(secret),
        "query text leaked into the logs:\n{text}"
    );
}
