//! `GET /api/session/{key}/report.html`: the page `recall report KEY`
//! writes, as a download. Locally its shards are the store's exact bytes
//! (each named by its hash, as the viewer checks); with `subagents=true`
//! it holds the session's descendants; a remote client's report holds no
//! source path and no resume command of any session, its re-encoded shards
//! still named by their bytes.

mod http_support;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use base64::Engine;
use http_support::{demo_backend, enc};
use recall_host::http::{router, AppState, Security};
use serde_json::Value;
use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;
use tower::ServiceExt;

struct Answer {
    status: u16,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

fn ask(state: &AppState, rt: &tokio::runtime::Runtime, peer: &str, path: &str) -> Answer {
    let app = router(state.clone(), Security::default());
    let peer: SocketAddr = peer.parse().expect("peer");
    let req = Request::builder()
        .uri(path)
        .header("host", "localhost")
        .extension(ConnectInfo(peer))
        .body(Body::empty())
        .expect("request");
    rt.block_on(async {
        let r = app.oneshot(req).await.expect("infallible");
        let (status, headers) = (r.status().as_u16(), r.headers().clone());
        let body = axum::body::to_bytes(r.into_body(), 256 << 20)
            .await
            .expect("body")
            .to_vec();
        Answer {
            status,
            headers,
            body,
        }
    })
}

/// The report's payload: its manifest and `(name, shard bytes)`.
fn payload(page: &[u8]) -> (Value, Vec<(String, String)>) {
    let page = std::str::from_utf8(page).expect("UTF-8 page");
    let open = "<script type=\"application/x-recall-data\">";
    // An inlined module's comment names the element too: the payload is
    // the one that holds base64.
    let zipped = page
        .match_indices(open)
        .filter_map(|(i, _)| {
            let at = i + open.len();
            let end = at + page[at..].find("</script>")?;
            base64::engine::general_purpose::STANDARD
                .decode(&page[at..end])
                .ok()
        })
        .next()
        .expect("a base64 payload");
    let mut json = String::new();
    flate2::read::GzDecoder::new(&zipped[..])
        .read_to_string(&mut json)
        .expect("gzip");
    let v: Value = serde_json::from_str(&json).expect("payload JSON");
    let manifest = serde_json::from_str(v["manifest"].as_str().expect("manifest")).expect("JSON");
    let gens = serde_json::from_value(v["generations"].clone()).expect("generations");
    (manifest, gens)
}

#[test]
fn a_session_report_holds_exact_shards_locally_and_nothing_private_remotely() {
    let (_home, _indexer, backend) = demo_backend("report-route");
    let state = AppState::new(backend, Duration::from_secs(3600));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let local = |p: &str| ask(&state, &rt, "127.0.0.1:50000", p);
    let remote = |p: &str| ask(&state, &rt, "192.0.2.7:50000", p);
    let list: Value = serde_json::from_slice(&local("/api/sessions?limit=100").body).expect("list");
    let keys: Vec<String> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["session_key"].as_str().expect("key").to_string())
        .collect();
    let mut secrets = Vec::new();
    for k in &keys {
        let d: Value =
            serde_json::from_slice(&local(&format!("/api/session/{}", enc(k))).body).expect("view");
        for p in d["session"]["paths"].as_array().expect("paths") {
            secrets.push(p.as_str().expect("path").to_string());
        }
        secrets.extend(d["session"]["resume"].as_str().map(str::to_string));
    }
    assert!(!secrets.is_empty());
    let mut with_children = 0;
    for k in &keys {
        let trace: Value =
            serde_json::from_slice(&local(&format!("/api/session/{}/trace", enc(k))).body)
                .expect("trace");
        let descendants = trace["descendants"].as_array().map_or(0, Vec::len);
        for (sub, query) in [(false, ""), (true, "?subagents=true")] {
            let path = format!("/api/session/{}/report.html{query}", enc(k));
            let r = local(&path);
            assert_eq!(r.status, 200, "{path}");
            assert!(r.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html"));
            assert!(r.headers["content-disposition"]
                .to_str()
                .unwrap()
                .starts_with("attachment; filename=\""));
            let (m, gens) = payload(&r.body);
            let sessions = m["sessions"].as_object().expect("sessions");
            assert!(sessions.contains_key(k.as_str()), "{path}");
            if sub {
                let least = if descendants > 0 { 2 } else { 1 };
                assert!(
                    sessions.len() >= least,
                    "{path}: {} sessions",
                    sessions.len()
                );
                with_children += usize::from(sessions.len() > 1);
            } else {
                assert_eq!(sessions.len(), 1, "{path}");
            }
            assert_eq!(gens.len(), sessions.len());
            for (name, body) in &gens {
                assert_eq!(
                    name,
                    &recall_core::naming::generation_file_name(body.as_bytes())
                );
                assert!(sessions
                    .values()
                    .any(|e| e["generation_file"] == name.as_str()));
            }
            // Remote: the same sessions, nothing private, names still the bytes'.
            let r = remote(&path);
            assert_eq!(r.status, 200, "{path} remote");
            let (rm, rgens) = payload(&r.body);
            let rs = rm["sessions"].as_object().expect("sessions");
            assert_eq!(
                rs.keys().collect::<Vec<_>>(),
                sessions.keys().collect::<Vec<_>>()
            );
            for (name, body) in &rgens {
                assert_eq!(
                    name,
                    &recall_core::naming::generation_file_name(body.as_bytes())
                );
                for s in &secrets {
                    assert!(
                        !body.contains(s.as_str()),
                        "{path}: a remote shard holds {s}"
                    );
                }
            }
            let text = rm.to_string();
            for s in &secrets {
                assert!(
                    !text.contains(s.as_str()),
                    "{path}: the remote manifest holds {s}"
                );
            }
        }
    }
    assert!(with_children > 0, "some demo session has descendants");
    let r = local("/api/session/pi%3Anope/report.html");
    assert_eq!(r.status, 404);
    let r = local(&format!(
        "/api/session/{}/report.html?subagents=maybe",
        enc(&keys[0])
    ));
    assert_eq!(r.status, 400);
}
