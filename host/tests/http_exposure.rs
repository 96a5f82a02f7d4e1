//! Exposure by transport (DESIGN.md §7, Orca's `redactForTransport`): every
//! route answered once to a loopback peer and once to a remote peer (a
//! simulated peer address, the `ConnectInfo` the connection loop attaches),
//! compared field by field. A remote client gets no file path, no resume
//! command, no root directory, no offline shards and no export (unless the
//! server allows it); everything else is the same answer.

mod http_support;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use http_support::{demo_backend, enc, get, serve};
use recall_host::http::{router, AppState, Security, ServeOptions};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tower::ServiceExt;

const TOKEN: &str = "s3cret-token";

struct Answer {
    status: u16,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

struct Harness {
    state: AppState,
    rt: tokio::runtime::Runtime,
}

impl Harness {
    fn ask(&self, peer: &str, path: &str) -> Answer {
        let app = router(
            self.state.clone(),
            Security {
                allow_hosts: vec![],
                token: Some(TOKEN.into()),
            },
        );
        let peer: SocketAddr = peer.parse().expect("peer");
        let req = Request::builder()
            .uri(path)
            .header("host", "localhost")
            .header("authorization", format!("Bearer {TOKEN}"))
            .extension(ConnectInfo(peer))
            .body(Body::empty())
            .expect("request");
        self.rt.block_on(async {
            let r = app.oneshot(req).await.expect("infallible");
            let status = r.status().as_u16();
            let body = axum::body::to_bytes(r.into_body(), 64 << 20)
                .await
                .expect("body");
            Answer {
                status,
                body: body.to_vec(),
            }
        })
    }

    /// A state-changing POST (with `X-Recall-Action`) from `peer`.
    fn post(&self, peer: &str, path: &str) -> Answer {
        let app = router(
            self.state.clone(),
            Security {
                allow_hosts: vec![],
                token: Some(TOKEN.into()),
            },
        );
        let peer: SocketAddr = peer.parse().expect("peer");
        let req = Request::builder()
            .method("POST")
            .uri(path)
            .header("host", "localhost")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("x-recall-action", "1")
            .extension(ConnectInfo(peer))
            .body(Body::empty())
            .expect("request");
        self.rt.block_on(async {
            let r = app.oneshot(req).await.expect("infallible");
            let status = r.status().as_u16();
            let body = axum::body::to_bytes(r.into_body(), 64 << 20)
                .await
                .expect("body");
            Answer {
                status,
                body: body.to_vec(),
            }
        })
    }

    fn local(&self, path: &str) -> Answer {
        self.ask("127.0.0.1:50000", path)
    }

    fn remote(&self, path: &str) -> Answer {
        self.ask("192.0.2.7:50000", path)
    }
}

fn harness(tag: &str) -> (http_support::TempDir, Harness) {
    let (home, _indexer, backend) = demo_backend(tag);
    let state = AppState::new(backend, Duration::from_secs(3600));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    (home, Harness { state, rt })
}

/// What a remote client is owed from a local answer: every `resume` null,
/// every `paths` empty, every root without its `dir`.
fn redacted(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "dir")
                .map(|(k, x)| match k.as_str() {
                    "resume" => (k.clone(), Value::Null),
                    "paths" => (k.clone(), Value::Array(vec![])),
                    "took_ms" => (k.clone(), Value::from(0)),
                    _ => (k.clone(), redacted(x)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(redacted).collect()),
        x => x.clone(),
    }
}

fn zero_took(mut v: Value) -> Value {
    if v.get("took_ms").is_some() {
        v["took_ms"] = Value::from(0);
    }
    v
}

/// Every string under `v` (to look for leaked paths).
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Compares one route: both 200, the remote answer is exactly the local one
/// redacted, and holds none of `secrets`. Returns the local answer.
fn same_but_redacted(h: &Harness, path: &str, secrets: &[String]) -> Value {
    let (l, r) = (h.local(path), h.remote(path));
    assert_eq!(l.status, 200, "{path} local");
    assert_eq!(r.status, 200, "{path} remote");
    let (l, r) = (l.json(), zero_took(r.json()));
    assert_eq!(
        r,
        redacted(&l),
        "{path}: remote answer differs beyond redaction"
    );
    let mut seen = Vec::new();
    strings(&r, &mut seen);
    for s in secrets {
        assert!(
            !seen.iter().any(|x| x.contains(s.as_str())),
            "{path}: remote answer holds {s}"
        );
    }
    l
}

#[test]
fn every_route_withholds_paths_and_resume_from_remote_clients_only() {
    let (home, h) = harness("exposure");
    let list = h.local("/api/sessions?limit=100").json();
    let keys: Vec<String> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["session_key"].as_str().expect("key").to_string())
        .collect();
    assert!(keys.len() > 3, "the demo home has sessions");

    // Everything a remote answer must not hold: every source file path and
    // every resume command of every session, and the home directory (roots).
    let mut secrets = vec![home.0.to_string_lossy().into_owned()];
    let mut resumes = 0;
    for k in &keys {
        let d = h.local(&format!("/api/session/{}", enc(k))).json();
        for p in d["session"]["paths"].as_array().expect("paths") {
            secrets.push(p.as_str().expect("path").to_string());
        }
        if let Some(r) = d["session"]["resume"].as_str() {
            secrets.push(r.to_string());
            resumes += 1;
        }
    }
    assert!(resumes > 0, "some demo sessions can be resumed");
    assert!(secrets.len() > keys.len(), "sessions list their files");

    same_but_redacted(&h, "/api/sessions?limit=100", &secrets);
    same_but_redacted(&h, "/api/sessions?limit=3&facets=true", &secrets);
    for q in ["brest", "tide", "the"] {
        let l = same_but_redacted(
            &h,
            &format!("/api/sessions/message-search?q={q}&limit=100"),
            &secrets,
        );
        assert!(!l["sessions"].as_array().expect("hits").is_empty(), "{q}");
    }
    let status = same_but_redacted(&h, "/api/index/status", &secrets);
    assert!(
        status["roots"][0]["dir"].is_string(),
        "local sees root dirs"
    );
    for k in &keys {
        let k = enc(k);
        same_but_redacted(&h, &format!("/api/session/{k}?scope=all"), &secrets);
        same_but_redacted(&h, &format!("/api/session/{k}/trace"), &secrets);
        same_but_redacted(&h, &format!("/api/session/{k}/window?index=0"), &secrets);
        same_but_redacted(&h, &format!("/api/session/{k}/surface"), &secrets);
        same_but_redacted(&h, &format!("/api/session/{k}/filter"), &secrets);
        same_but_redacted(&h, &format!("/api/session/{k}/classify"), &secrets);
    }

    // The offline shards name files: local only.
    let manifest = h.local("/api/index/manifest");
    assert_eq!(manifest.status, 200);
    let m = manifest.json();
    let (_, entry) = m["sessions"]
        .as_object()
        .and_then(|s| s.iter().next())
        .expect("an entry");
    let generation = entry["generation_file"].as_str().expect("generation");
    let gen_path = format!("/api/index/generations/{generation}");
    assert_eq!(h.local(&gen_path).status, 200);
    let segs = h.local("/api/index/segments");
    assert_eq!(segs.status, 200);
    let seg_path = format!(
        "/api/index/segments/{}",
        segs.json()["segments"][0]["name"]
            .as_str()
            .expect("a segment")
    );
    assert_eq!(h.local(&seg_path).status, 200);
    for path in [
        "/api/index/manifest",
        gen_path.as_str(),
        "/api/index/segments",
        seg_path.as_str(),
    ] {
        let r = h.remote(path);
        assert_eq!(r.status, 403, "{path}");
        assert_eq!(r.json()["error"], "remote_forbidden", "{path}");
    }

    // Export: local yes, remote no.
    let export = format!("/api/session/{}/export", enc(&keys[0]));
    assert_eq!(h.local(&export).status, 200);
    let r = h.remote(&export);
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"], "remote_forbidden");
}

#[test]
fn remote_export_needs_the_servers_permission() {
    let (_home, mut h) = harness("exposure-export");
    let keys = h.local("/api/sessions").json()["sessions"][0]["session_key"]
        .as_str()
        .expect("a session")
        .to_string();
    let export = format!("/api/session/{}/export", enc(&keys));
    assert_eq!(h.remote(&export).status, 403);
    h.state.allow_remote_export = true;
    let r = h.remote(&export);
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..2], b"PK", "a ZIP");
}

#[test]
fn a_request_with_no_known_peer_is_remote() {
    let (_home, h) = harness("exposure-nopeer");
    let app = router(h.state.clone(), Security::default());
    let req = Request::builder()
        .uri("/api/index/manifest")
        .header("host", "localhost")
        .body(Body::empty())
        .expect("request");
    let r = h.rt.block_on(app.oneshot(req)).expect("infallible");
    assert_eq!(r.status().as_u16(), 403);
}

#[test]
fn loopback_connections_are_local_clients() {
    // Over real TCP the connection loop attaches the loopback peer: the
    // full answer.
    let (_home, _ix, backend) = demo_backend("exposure-tcp");
    let s = serve(backend.clone(), ServeOptions::default());
    assert_eq!(get(s.addr(), "/api/index/manifest", &[]).status, 200);
    let list = get(s.addr(), "/api/sessions", &[]).json();
    let key = list["sessions"][0]["session_key"].as_str().expect("key");
    let d = get(s.addr(), &format!("/api/session/{}", enc(key)), &[]).json();
    assert!(!d["session"]["paths"].as_array().expect("paths").is_empty());
}

#[test]
fn a_session_whose_files_are_gone_is_missing_and_offers_no_resume() {
    let (_home, indexer, backend) = demo_backend("presence");
    let s = serve(backend.clone(), ServeOptions::default());
    let search = || {
        get(
            s.addr(),
            "/api/sessions/message-search?q=the&limit=100",
            &[],
        )
        .json()
    };
    let before = search();
    let victim = before["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|x| x["resume"].is_string())
        .expect("a resumable session")
        .clone();
    assert_eq!(victim["source_presence"], "present");
    let key = victim["session_key"].as_str().expect("key");
    let d = get(s.addr(), &format!("/api/session/{}", enc(key)), &[]).json();
    for p in d["session"]["paths"].as_array().expect("paths") {
        let p = std::path::Path::new(p.as_str().expect("path"));
        // A database session (OpenCode) goes with its database.
        let file = recall_host::extract::member::split(p).map_or(p, |(db, _)| db);
        let _ = std::fs::remove_file(file);
    }
    indexer.sweep().expect("sweep");
    let after = search();
    let gone = after["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|x| x["session_key"] == victim["session_key"])
        .expect("the session stays until retention");
    assert_eq!(gone["source_gone"], true);
    assert_eq!(gone["source_presence"], "missing");
    assert_eq!(gone["resume"], Value::Null);
    for other in after["sessions"].as_array().expect("sessions") {
        if other["session_key"] != victim["session_key"] {
            assert_eq!(other["source_presence"], "present");
        }
    }
    // The session list and the session view say the same.
    let list = get(s.addr(), "/api/sessions?limit=500", &[]).json();
    let rows = list["sessions"].as_array().expect("rows");
    for row in rows {
        if row["session_key"] == victim["session_key"] {
            assert_eq!(row["source_presence"], "missing");
            assert_eq!(row["resume"], Value::Null);
        } else {
            assert_eq!(row["source_presence"], "present", "{row}");
        }
    }
    assert!(rows
        .iter()
        .any(|r| r["session_key"] == victim["session_key"]));
    assert!(rows.iter().any(|r| r["resume"].is_string()));
    let view = get(s.addr(), &format!("/api/session/{}", enc(key)), &[]).json();
    assert_eq!(view["session"]["source_presence"], "missing");
    assert_eq!(view["session"]["resume"], Value::Null);
}

#[test]
fn remote_token_holders_cannot_clear_or_change_the_policy_unless_the_server_allows_it() {
    let (_home, mut h) = harness("exposure-admin");
    for path in ["/api/index/policy?enabled=false", "/api/index/clear"] {
        let r = h.post("192.0.2.7:50000", path);
        assert_eq!(r.status, 403, "{path} from a remote token holder");
        assert_eq!(r.json()["error"], "remote_forbidden", "{path}");
    }
    assert_eq!(
        h.post("127.0.0.1:50000", "/api/index/policy?enabled=true")
            .status,
        200
    );
    h.state.allow_remote_admin = true;
    let r = h.post("192.0.2.7:50000", "/api/index/policy?enabled=true");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

#[test]
fn a_host_filter_without_team_search_is_refused() {
    let (_home, h) = harness("exposure-host-filter");
    let r = h.local("/api/sessions/message-search?q=the&host=laptop");
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["error"], "invalid_param");
    assert_eq!(h.local("/api/sessions/message-search?q=the").status, 200);
}
