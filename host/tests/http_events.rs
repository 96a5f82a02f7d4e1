//! `GET /api/events` (DESIGN.md §13 "Events"): the stream is behind the
//! same guard as the API (401 without the token), holds one of a bounded
//! number of slots (429 beyond, a slot freed when its stream closes), opens
//! with `hello`, and announces a revision naming the session a line
//! appended to its transcript changed — with no periodic sweep due, so the
//! live refresh of the indexer loop is what found it.

mod http_support;

use http_support::*;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::Roots;
use recall_host::http::events::MAX_SUBSCRIBERS;
use recall_host::http::{Security, ServeOptions, Server};
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An open event stream: the status line, then events as they come.
struct Stream {
    status: u16,
    content_type: String,
    reader: BufReader<TcpStream>,
}

impl Stream {
    fn open(addr: SocketAddr, headers: &[(&str, &str)]) -> Stream {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let mut req =
            format!("GET /api/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).expect("send");
        let mut reader = BufReader::new(s);
        let mut line = String::new();
        reader.read_line(&mut line).expect("status line");
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status");
        let mut content_type = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).expect("header");
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-type") {
                    content_type = v.trim().to_string();
                }
            }
        }
        Stream {
            status,
            content_type,
            reader,
        }
    }

    /// The next event (`event` name, `data` JSON), skipping comments and
    /// chunk-size lines; `None` at the deadline or the end of the stream.
    fn next(&mut self, deadline: Instant) -> Option<(String, serde_json::Value)> {
        let (mut name, mut data) = (String::new(), String::new());
        let mut line = String::new();
        while Instant::now() < deadline {
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue
                }
                Err(_) => return None,
            }
            let l = line.trim_end_matches(['\r', '\n']);
            if let Some(v) = l.strip_prefix("event:") {
                name = v.trim().to_string();
            } else if let Some(v) = l.strip_prefix("data:") {
                data.push_str(v.trim());
            } else if l.is_empty() && !name.is_empty() {
                let v = serde_json::from_str(&data).expect("event data is JSON");
                return Some((name, v));
            }
        }
        None
    }
}

fn indexing_server(tag: &str, security: Security) -> (TempDir, Server, Arc<Store>) {
    let home = TempDir::new(tag);
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let store =
        Arc::new(Store::open(&recall_host::store::store_dir(&home.0.join(".recall"))).unwrap());
    let mut opts = IndexOptions::new(Roots::resolve(&home.0, |_| None));
    opts.retention_days = 0;
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    indexer.sweep().expect("backfill");
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::new(64 << 20)));
    let handle = Arc::new(IndexerHandle::new(indexer, catalog.clone(), true).watch_sources());
    // The indexer loop runs, but its periodic sweep is an hour away: only
    // the live refresh can pick up an append in time.
    let server = Server::start(
        Served::indexed(Arc::new(catalog), handle),
        ServeOptions {
            bind: "127.0.0.1:0".parse().unwrap(),
            security,
            index: true,
            sweep_every: Duration::from_secs(3600),
            ..ServeOptions::default()
        },
    )
    .expect("server starts");
    (home, server, store)
}

#[test]
fn an_append_is_announced_with_its_session_key() {
    let (home, server, store) = indexing_server("events-append", Security::default());
    let addr = server.addr();
    // The hub has read the manifest once (its baseline) before we listen.
    std::thread::sleep(Duration::from_millis(300));
    let mut s = Stream::open(addr, &[]);
    assert_eq!(s.status, 200);
    assert!(
        s.content_type.starts_with("text/event-stream"),
        "{}",
        s.content_type
    );
    let (name, hello) = s
        .next(Instant::now() + Duration::from_secs(5))
        .expect("hello");
    assert_eq!(name, "hello");
    let rev0 = store.current().unwrap().revision;
    assert_eq!(hello["revision"], rev0);

    let projects = home.0.join(".claude/projects");
    let main = std::fs::read_dir(&projects)
        .unwrap()
        .flatten()
        .flat_map(|p| std::fs::read_dir(p.path()).unwrap().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a claude transcript");
    let sid = main.file_stem().unwrap().to_string_lossy().into_owned();
    let line = serde_json::json!({
        "type": "user",
        "uuid": "0f0e0d0c-0000-4000-8000-000000000002",
        "sessionId": sid,
        "timestamp": "2026-10-25T10:00:00.000Z",
        "message": {"role": "user", "content": "Is the wombat exporter live yet?"}
    });
    let started = Instant::now();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&main)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);
    let key = format!("claude-code:{sid}");
    let deadline = started + Duration::from_secs(5);
    let got = loop {
        let (name, v) = s.next(deadline).expect("a revision event within 5 s");
        assert_eq!(name, "revision");
        let changed: Vec<&str> = v["changed"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|k| k.as_str())
            .collect();
        if changed.contains(&key.as_str()) {
            break v;
        }
    };
    assert!(got["revision"].as_u64().unwrap() > rev0);
    assert_eq!(got["reset"], false);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "announced after {:?}",
        started.elapsed()
    );
    // The session view already holds the new line.
    let v = get(addr, "/api/sessions/message-search?q=wombat", &[]).json();
    assert_eq!(v["sessions"][0]["session_key"], key.as_str());
    server.stop();
}

#[test]
fn the_stream_needs_the_token_and_its_slots_are_bounded() {
    let security = Security {
        allow_hosts: vec![],
        token: Some("s3cret".into()),
    };
    let (_home, server, _store) = indexing_server("events-auth", security);
    let addr = server.addr();
    let refused = get(addr, "/api/events", &[]);
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"], "unauthorized");

    let auth = [("Authorization", "Bearer s3cret")];
    let mut open: Vec<Stream> = (0..MAX_SUBSCRIBERS)
        .map(|_| {
            let s = Stream::open(addr, &auth);
            assert_eq!(s.status, 200);
            s
        })
        .collect();
    let busy = get(addr, "/api/events", &auth);
    assert_eq!(busy.status, 429, "{}", busy.text());
    assert_eq!(busy.json()["error"], "busy");

    // Closing one frees its slot (once the server notices the hang-up, at
    // its next write: the keep-alive, or here an event it cannot send).
    let mut first = open.remove(0);
    assert_eq!(
        first
            .next(Instant::now() + Duration::from_secs(5))
            .unwrap()
            .0,
        "hello"
    );
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = Stream::open(addr, &auth);
        if s.status == 200 {
            break;
        }
        assert_eq!(s.status, 429);
        assert!(Instant::now() < deadline, "the slot was never freed");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(open);
    server.stop();
}
