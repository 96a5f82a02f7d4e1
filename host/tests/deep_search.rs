//! Deep Search (`recall grep`, `GET /api/sessions/deep-search`): what the
//! message index leaves out (a record of another kind) is found in the
//! source file with its byte offset, an indexed record comes back with its
//! locator and role, filters and `--kind` narrow it, and the HTTP route
//! streams NDJSON ending with its summary.

mod store_support;

use std::io::{Read, Write};
use store_support::*;

/// A pi session with one user message holding `alpha-word`, and a
/// non-message record (never indexed) holding `tail-needle`.
fn home() -> TempDir {
    let home = temp_dir("deep");
    write_session(&home, 1, 2, 60);
    let p = write_session(&home, 2, 1, 60);
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    let mut text = pi_message(
        "u9",
        Some("00020001"),
        "user",
        "please check alpha-word now",
        1_790_007_300_000,
    );
    text += r#"{"type":"custom","customType":"probe","data":{"output":"line one\nthe tail-needle sits here"}}"#;
    text += "\n";
    f.write_all(text.as_bytes()).unwrap();
    run_ok(&home, &["index"], 0);
    home
}

fn ndjson(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
        .collect()
}

#[test]
fn grep_finds_what_the_index_leaves_out_with_file_and_offset() {
    let home = home();
    // The message search does not see the custom record…
    let out = run(&home, &["search", "tail-needle"]);
    assert_eq!(out.status.code(), Some(1), "not in the message index");
    // …Deep Search does, decoded to the field that matched.
    let out = run(&home, &["grep", "--json", "-F", "tail-needle"]);
    assert_eq!(out.status.code(), Some(0));
    let events = ndjson(&out.stdout);
    let sessions: Vec<_> = events.iter().filter(|e| e["type"] == "session").collect();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0]["session"];
    assert_eq!(s["session_key"], session_key(2));
    let hit = &s["hits"][0];
    assert_eq!(hit["kind"], "other");
    assert_eq!(hit["field"], "data.output");
    assert_eq!(hit["text"], "line one\nthe tail-needle sits here");
    assert!(hit["locator"].is_null(), "not an indexed record");
    let file = hit["file"].as_str().expect("the file");
    let bytes = std::fs::read(file).unwrap();
    let offset = hit["offset"].as_u64().unwrap() as usize;
    let line = &bytes[offset..];
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap()];
    assert!(
        String::from_utf8_lossy(line).contains("tail-needle"),
        "offset starts the line"
    );
    let [a, b] = [
        hit["highlights"][0][0].as_u64().unwrap() as usize,
        hit["highlights"][0][1].as_u64().unwrap() as usize,
    ];
    assert_eq!(&hit["text"].as_str().unwrap()[a..b], "tail-needle");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["summary"]["hits"], 1);
    assert_eq!(done["summary"]["truncated"], false);
}

#[test]
fn an_indexed_record_comes_back_with_its_locator_and_role() {
    let home = home();
    let out = run(&home, &["grep", "--json", "alpha-w[o]rd"]);
    let events = ndjson(&out.stdout);
    let hit = &events
        .iter()
        .find(|e| e["type"] == "session")
        .expect("a session")["session"]["hits"][0];
    assert_eq!(hit["kind"], "user");
    assert!(hit["locator"].is_object(), "{hit}");
    // --kind narrows, case folding widens, filters apply.
    assert_eq!(
        run(&home, &["grep", "--kind", "assistant", "alpha-word"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        run(&home, &["grep", "-F", "-i", "ALPHA-WORD"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&home, &["grep", "--source", "codex", "alpha-word"])
            .status
            .code(),
        Some(1)
    );
    // Human output: one header per session, one line per hit.
    let text = run_ok(&home, &["grep", "w1x"], 0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&session_key(1)), "{text}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("  line ")),
        "{text}"
    );
    // max-results stops early and says so.
    let out = run(&home, &["grep", "--json", "--max-results", "1", "w"]);
    let events = ndjson(&out.stdout);
    let done = events.last().unwrap();
    assert_eq!(done["summary"]["hits"], 1);
    assert_eq!(done["summary"]["truncated"], true);
    // A bad pattern is a clear error.
    let out = run(&home, &["grep", "a(b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid pattern"));
}

fn get(addr: &str, path: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

/// The chunked body's payload.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

#[test]
fn the_http_route_streams_ndjson_to_its_summary() {
    let home = home();
    let mut daemon = serve(&home);
    let advert: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store_dir(&home).join("serve.json")).unwrap())
            .unwrap();
    let addr = advert["addr"].as_str().unwrap().to_string();
    let (head, body) = get(
        &addr,
        "/api/sessions/deep-search?pattern=tail-needle&fixed_strings=true",
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("application/x-ndjson"),
        "{head}"
    );
    let events: Vec<serde_json::Value> = dechunk(&body)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.iter().any(|e| e["type"] == "session"));
    assert_eq!(events.last().unwrap()["summary"]["hits"], 1);
    let (head, _) = get(&addr, "/api/sessions/deep-search?pattern=a(b");
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let (head, _) = get(&addr, "/api/sessions/deep-search");
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// The chunked payload of a raw HTTP/1.1 response with `Accept-Encoding`.
fn get_gzip(addr: &str, path: &str) -> (String, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let at = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..at]).into_owned();
    let (mut rest, mut out) = (&raw[at + 4..], Vec::new());
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            panic!("the chunked body ends without its last chunk");
        };
        let n =
            usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        out.extend_from_slice(&rest[eol + 2..eol + 2 + n]);
        rest = &rest[eol + 2 + n + 2..];
    }
    (head, out)
}

/// A client that takes gzip (every browser, Node's fetch) gets the whole
/// stream: the compression layer polls the body once more after its end.
#[test]
fn the_http_route_streams_gzip_to_its_summary_too() {
    let home = home();
    let mut daemon = serve(&home);
    let advert: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store_dir(&home).join("serve.json")).unwrap())
            .unwrap();
    let addr = advert["addr"].as_str().unwrap().to_string();
    let (head, body) = get_gzip(
        &addr,
        "/api/sessions/deep-search?pattern=tail-needle&fixed_strings=true",
    );
    assert!(
        head.to_ascii_lowercase().contains("content-encoding: gzip"),
        "{head}"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_string(&mut text)
        .expect("a complete gzip stream");
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "done", "{text}");
    assert_eq!(last["summary"]["hits"], 1);
    let _ = daemon.kill();
    let _ = daemon.wait();
}
