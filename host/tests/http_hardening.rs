//! The daemon against hostile clients (issue 12): security headers on every
//! response, duplicate `Host`, a 1 MB query, invalid UTF-8 in parameters,
//! huge integers, header-read and idle timeouts, the connection cap, the
//! export and locate caps (a flood of them answers 429 and never stalls
//! searches), the one-time login link and its cookie, and exports that never
//! follow a symlink out of the roots.

mod http_support;

use http_support::{
    b64, demo_store, enc, get, mem_backend, mem_served, serve, store_served, Demo, TempDir,
};
use recall_host::engine::mem::Gate;
use recall_host::engine::{EngineError, IndexerHandle, Served};
use recall_host::http::{ConnLimits, Security, ServeOptions};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The demo home's sessions in memory, served without an indexer.
fn mem(tag: &str) -> (TempDir, Served) {
    let dir = TempDir::new(tag);
    let b = mem_served(Arc::new(mem_backend(&dir.0)));
    (dir, b)
}

/// Reads until the server closes the connection (or `limit` passes);
/// returns what was read and how long the server took to close.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, Option<Duration>) {
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(200))).ok();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return (out, Some(start.elapsed())),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return (out, Some(start.elapsed())),
        }
    }
    (out, None)
}

#[test]
fn every_response_carries_the_security_headers() {
    let (_d, b) = mem("headers");
    let s = serve(b, ServeOptions::default());
    for (path, host) in [
        ("/", "localhost"),
        ("/api/sessions", "localhost"),
        ("/api/index/status", "localhost"),
        ("/api/nope", "localhost"),
        ("/no-such-file.js", "localhost"),
        ("/api/sessions/message-search?q=", "localhost"),
        ("/api/sessions", "evil.example"),
    ] {
        let r = get(s.addr(), path, &[("Host", host)]);
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("frame-ancestors 'none'"),
            "{path} ({}): CSP {csp:?}",
            r.status
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{path}");
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
}

#[test]
fn duplicate_host_headers_are_refused() {
    let (_d, b) = mem("duphost");
    let s = serve(b, ServeOptions::default());
    let r = get(
        s.addr(),
        "/api/index/status",
        &[("Host", "localhost"), ("Host", "evil.example")],
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["ok"], false);
    let r = get(
        s.addr(),
        "/api/index/status",
        &[("Host", "localhost"), ("Host", "localhost")],
    );
    assert_eq!(
        r.status, 400,
        "two Host headers are refused even when equal"
    );
}

#[test]
fn a_megabyte_query_gets_the_json_414() {
    let (_d, b) = mem("bigq");
    let s = serve(b, ServeOptions::default());
    let path = format!("/api/sessions/message-search?q={}", "a".repeat(1 << 20));
    let r = get(s.addr(), &path, &[]);
    assert_eq!(r.status, 414);
    assert_eq!(r.json()["error"], "uri_too_long");
    assert!(r.header("content-security-policy").is_some());
    // Huge headers (not the request line) get a JSON 431.
    let big = "b".repeat(1 << 20);
    let r = get(s.addr(), "/api/index/status", &[("X-Big", &big)]);
    assert_eq!(r.status, 431);
    assert_eq!(r.json()["ok"], false);
    // The server still answers afterwards.
    assert_eq!(get(s.addr(), "/api/index/status", &[]).status, 200);
}

#[test]
fn invalid_utf8_in_parameters_is_invalid_param() {
    let (_d, b) = mem("utf8");
    let s = serve(b, ServeOptions::default());
    for path in [
        "/api/sessions/message-search?q=%ff%fe",
        "/api/sessions/message-search?q=tide&cwd=%c3",
        "/api/sessions?cwd=%ff",
        "/api/session/pi:x?scope=%ff",
        "/api/session/pi:x/trace?x=%80",
    ] {
        let r = get(s.addr(), path, &[]);
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.json()["error"], "invalid_param", "{path}");
    }
    // Valid UTF-8, percent-encoded or with `+`, still decodes.
    let r = get(
        s.addr(),
        "/api/sessions/message-search?q=%E6%BD%AE+tide",
        &[],
    );
    assert_eq!(r.status, 200);
}

#[test]
fn twenty_digit_limits_are_clamped() {
    let (_d, b) = mem("limit");
    let s = serve(b, ServeOptions::default());
    let all = get(s.addr(), "/api/sessions?limit=500", &[]).json()["sessions"]
        .as_array()
        .unwrap()
        .len();
    assert!(all > 1);
    let v = get(s.addr(), "/api/sessions?limit=99999999999999999999", &[]).json();
    assert_eq!(v["sessions"].as_array().unwrap().len(), all, "{v}");
    let v = get(s.addr(), "/api/sessions?limit=-99999999999999999999", &[]).json();
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1, "{v}");
    // Search: integers clamped to 1–100 (DESIGN §4), however many digits.
    let q = "/api/sessions/message-search?q=tide&limit=-99999999999999999999";
    let r = get(s.addr(), q, &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["sessions"].as_array().unwrap().len(), 1);
    let q = "/api/sessions/message-search?q=tide&limit=99999999999999999999";
    let r = get(s.addr(), q, &[]);
    assert_eq!(r.status, 200);
    assert!(r.json()["sessions"].as_array().unwrap().len() > 1);
}

fn quick_limits() -> ConnLimits {
    ConnLimits {
        header_read: Duration::from_secs(1),
        idle: Duration::from_secs(2),
        max_connections: 4,
        loopback_connections: 4,
    }
}

#[test]
fn half_sent_and_idle_connections_are_closed() {
    let (_d, b) = mem("timeouts");
    let opts = ServeOptions {
        conn: quick_limits(),
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    // Half a request head.
    let mut half = TcpStream::connect(s.addr()).unwrap();
    half.write_all(b"GET /api/index/status HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let (_, closed) = read_until_closed(&mut half, Duration::from_secs(8));
    let closed = closed.expect("a half-sent request is dropped");
    assert!(closed < Duration::from_secs(5), "{closed:?}");
    // A connection that never sends anything.
    let mut silent = TcpStream::connect(s.addr()).unwrap();
    let (_, closed) = read_until_closed(&mut silent, Duration::from_secs(8));
    assert!(closed.is_some(), "a silent connection is dropped");
    // A kept-alive connection after its answer.
    let mut kept = TcpStream::connect(s.addr()).unwrap();
    kept.write_all(b"GET /api/index/status HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let (got, closed) = read_until_closed(&mut kept, Duration::from_secs(8));
    assert!(got.starts_with(b"HTTP/1.1 200"), "answered first");
    assert!(closed.is_some(), "an idle keep-alive connection is dropped");
}

/// Opens `GET /api/events` (a response that streams until closed) and
/// reads its head: the connection is serving.
fn streaming(addr: std::net::SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    assert!(
        buf[..n].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&buf[..n])
    );
    s
}

#[test]
fn connections_beyond_the_cap_are_turned_away() {
    let (_d, b) = mem("conncap");
    let opts = ServeOptions {
        conn: ConnLimits {
            header_read: Duration::from_secs(30),
            idle: Duration::from_secs(30),
            max_connections: 4,
            loopback_connections: 4,
        },
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    // Every slot serving a request: nothing to make room with.
    let held: Vec<TcpStream> = (0..4).map(|_| streaming(s.addr())).collect();
    std::thread::sleep(Duration::from_millis(300));
    let r = get(s.addr(), "/api/index/status", &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"], "busy");
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = get(s.addr(), "/api/index/status", &[]);
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the slots never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// 130 connections that never finish their request head (more than every
/// slot) lock no one out: a full pool closes the one that has waited
/// longest for its head to admit a client that sends its request.
#[test]
fn slow_connections_beyond_the_cap_lock_no_one_out() {
    let (_d, b) = mem("slowloris");
    let opts = ServeOptions {
        conn: ConnLimits {
            header_read: Duration::from_secs(30),
            idle: Duration::from_secs(30),
            max_connections: 128,
            loopback_connections: 128,
        },
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    let mut slow: Vec<TcpStream> = (0..130)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr()).unwrap();
            c.write_all(b"GET /api/index/status HTTP/1.1\r\nHost: local")
                .unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    let mut ok = 0;
    for _ in 0..47 {
        let r = get(s.addr(), "/api/index/status", &[]);
        assert_eq!(r.status, 200, "{}", r.text());
        ok += 1;
        // The attacker keeps opening slow connections in between.
        let mut c = TcpStream::connect(s.addr()).unwrap();
        let _ = c.write_all(b"GET / HTTP/1.1\r\n");
        slow.push(c);
    }
    assert_eq!(ok, 47);
}

#[test]
fn locate_beyond_its_cap_is_busy_and_searches_still_answer() {
    let (_dir, indexer, catalog) = demo_store("locatecap", true);
    let gate = Arc::new(Gate::new());
    let g = gate.clone();
    let handle = IndexerHandle::new(indexer, catalog.clone(), false).with_reextract(Box::new(
        move |_, _| {
            g.pass();
            Err(EngineError::unavailable("held"))
        },
    ));
    let s = serve(store_served(handle, catalog), ServeOptions::default());
    let addr = s.addr();
    let v = get(addr, "/api/sessions/message-search?q=tide", &[]).json();
    let session = &v["sessions"][0];
    let key = session["session_key"].as_str().unwrap().to_string();
    let loc = session["hits"][0]["locator"].clone();
    let url = format!("/api/session/{}?locate={}", enc(&key), b64(&loc));
    let held: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || get(addr, &url, &[]).status)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while gate.waiting() < 2 {
        assert!(Instant::now() < deadline, "two locates never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = get(addr, &url, &[]);
    assert_eq!(r.status, 429);
    assert_eq!(r.json()["error"], "busy");
    let t = Instant::now();
    let r = get(addr, "/api/sessions/message-search?q=tide", &[]);
    assert_eq!(r.status, 200);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // A page without `locate` is not a locate.
    assert_eq!(
        get(addr, &format!("/api/session/{}", enc(&key)), &[]).status,
        200
    );
    gate.open();
    for h in held {
        assert_eq!(h.join().unwrap(), 200);
    }
    assert_eq!(get(addr, &url, &[]).status, 200);
}

/// Sends a GET and reads only its status line, leaving the rest of the
/// response unread on the returned connection.
fn status_line(addr: std::net::SocketAddr, path: &str) -> (TcpStream, u16) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n") && head.len() < 200 {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => break,
        }
    }
    let code = String::from_utf8_lossy(&head)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (s, code)
}

/// The status of a GET, reading only the status line (then hanging up).
fn status_only(addr: std::net::SocketAddr, path: &str) -> u16 {
    status_line(addr, path).1
}

/// The demo's first Codex session: its key and its (first) source file.
fn codex_session(d: &Demo) -> (String, String) {
    let v = d.get("/api/sessions?source=codex").json();
    let key = v["sessions"][0]["session_key"]
        .as_str()
        .unwrap()
        .to_string();
    let path = d.get(&format!("/api/session/{}", enc(&key))).json()["session"]["paths"][0]
        .as_str()
        .unwrap()
        .to_string();
    (key, path)
}

/// Deterministic incompressible bytes.
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn export_beyond_its_cap_is_busy_and_searches_still_answer() {
    let d = Demo::start("exportcap");
    let (key, path) = codex_session(&d);
    // An export larger than every buffer between the server and a client
    // that does not read.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&noise(24 << 20)).unwrap();
    drop(f);
    let url = format!("/api/session/{}/export", enc(&key));
    // Two exports started one after the other (each answered 200, so each
    // holds its slot) by clients that then stop reading.
    let stalled: Vec<TcpStream> = (0..2)
        .map(|_| {
            let (s, code) = status_line(d.addr, &url);
            assert_eq!(code, 200, "an export within the cap was refused");
            s
        })
        .collect();
    assert_eq!(
        status_only(d.addr, &url),
        429,
        "a third export was not refused"
    );
    assert_eq!(d.get(&url).json()["error"], "busy");
    let t = Instant::now();
    assert_eq!(d.get("/api/sessions/message-search?q=tide").status, 200);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    drop(stalled);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = d.get(&format!("/api/session/{}/trace", enc(&key)));
        assert_eq!(r.status, 200);
        if status_only(d.addr, &url) == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "export slots never came back");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_one_time_login_link_sets_a_strict_http_only_cookie() {
    let (_d, b) = mem("login");
    let opts = ServeOptions {
        security: Security {
            allow_hosts: vec![],
            token: Some("s3cret-token".into()),
        },
        ..ServeOptions::default()
    };
    let s = serve(b, opts);
    let link = s.login_link().expect("a token server has login links");
    let path = link
        .split_once(&s.addr().to_string())
        .map(|(_, p)| p.to_string())
        .expect("the link points at this server");
    assert!(path.starts_with("/login?code="), "{link}");
    let r = get(s.addr(), &path, &[]);
    assert_eq!(r.status, 303, "{}", r.text());
    assert_eq!(r.header("location"), Some("/"));
    let cookie = r.header("set-cookie").expect("a cookie").to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(
        !cookie.contains("s3cret-token"),
        "the token itself is not the cookie"
    );
    let pair = cookie.split(';').next().unwrap().trim().to_string();
    // The cookie opens the API instead of the bearer header.
    assert_eq!(
        get(s.addr(), "/api/sessions", &[("Cookie", &pair)]).status,
        200
    );
    let other = format!("theme=dark; {pair}");
    assert_eq!(
        get(s.addr(), "/api/sessions", &[("Cookie", &other)]).status,
        200
    );
    assert_eq!(get(s.addr(), "/api/sessions", &[]).status, 401);
    let (name, _) = pair.split_once('=').unwrap();
    let forged = format!("{name}=0000");
    assert_eq!(
        get(s.addr(), "/api/sessions", &[("Cookie", &forged)]).status,
        401
    );
    // Single use.
    let again = get(s.addr(), &path, &[]);
    assert_eq!(again.status, 401);
    assert!(again.header("set-cookie").is_none());
    assert_eq!(get(s.addr(), "/login?code=nope", &[]).status, 401);
    // No token, no login.
    let (_d2, b2) = mem("login-none");
    let open = serve(b2, ServeOptions::default());
    assert!(open.login_link().is_none());
}

#[test]
fn export_never_follows_a_symlink_out_of_the_roots() {
    let d = Demo::start("exportlink");
    let (key, path) = codex_session(&d);
    let secret = d.home.0.join("outside-the-roots.txt");
    std::fs::write(&secret, "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&secret, &path).unwrap();
    let r = d.get(&format!("/api/session/{}/export", enc(&key)));
    assert_eq!(r.status, 200);
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(r.body.clone())).unwrap();
    let mut index = String::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        let name = f.name().expect("utf-8 name").to_string();
        assert!(
            !String::from_utf8_lossy(&b).contains("PRIVATE-KEY-MATERIAL"),
            "{name} holds the outside file"
        );
        if name == "recall-export.json" {
            index = String::from_utf8_lossy(&b).into_owned();
        }
    }
    let index: serde_json::Value = serde_json::from_str(&index).unwrap();
    assert_eq!(
        index["missing"].as_array().map(Vec::len),
        Some(1),
        "the refused file is listed as missing: {index}"
    );
}
