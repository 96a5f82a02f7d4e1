//! Every route end to end: the demo home indexed into a real store, served
//! on an ephemeral loopback port, answers compared with golden JSON.

mod http_support;

use http_support::{b64, enc, golden, normalize, Demo};
use serde_json::Value;
use std::io::Read;

fn search(d: &Demo, query: &str) -> Value {
    let r = d.get(&format!("/api/sessions/message-search?{query}"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    r.json()
}

fn normalized(d: &Demo, mut v: Value) -> Value {
    normalize(&mut v, &d.home.0);
    v
}

fn key_of(d: &Demo, source: &str, title_part: &str) -> String {
    let v = d.get(&format!("/api/sessions?source={source}")).json();
    v["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["title"].as_str().is_some_and(|t| t.contains(title_part)))
        .and_then(|s| s["session_key"].as_str())
        .unwrap_or_else(|| panic!("no {source} session titled like {title_part}"))
        .to_string()
}

#[test]
fn search_answers_and_pages() {
    let d = Demo::start("search");
    let v = search(&d, "q=brest");
    assert_eq!(v["state"], "ready");
    golden("search_brest", &normalized(&d, v));

    // Pages follow the cursor to the end, without repeating a session.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    for _ in 0..10 {
        let v = search(
            &d,
            &format!("q=tide&limit=2&sort=relevance&cursor={}", enc(&cursor)),
        );
        for s in v["sessions"].as_array().unwrap() {
            seen.push(s["session_key"].as_str().unwrap().to_string());
        }
        match v["cursor"].as_str() {
            Some(c) => cursor = c.to_string(),
            None => break,
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "a session repeated across pages");
    assert!(seen.len() >= 3, "tide is in several sessions: {seen:?}");
}

#[test]
fn search_errors_are_400_bodies() {
    let d = Demo::start("search-errors");
    for (query, code) in [
        ("", "q_required"),
        ("q=%20%20", "q_required"),
        ("q=x&source=nope", "invalid_param"),
        ("q=x&role=robot", "invalid_param"),
        ("q=x&since=yesterday-ish", "invalid_param"),
        ("q=x&sort=sideways", "invalid_param"),
        ("q=x&cursor=%25%25%25", "invalid_cursor"),
        ("q=x&cursor=e30", "invalid_cursor"),
        ("q=tide%20(ferry", "invalid_query"),
        ("q=tide%20OR", "invalid_query"),
        ("q=-tide", "invalid_query"),
        ("q=tide%20role:user&role=user", "invalid_query"),
    ] {
        let r = d.get(&format!("/api/sessions/message-search?{query}"));
        assert_eq!(r.status, 400, "{query}: {}", r.text());
        let v = r.json();
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"], code, "{query}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let long = "a".repeat(1100);
    let r = d.get(&format!("/api/sessions/message-search?q={long}"));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "query_too_long");
    golden(
        "error_q_required",
        &d.get("/api/sessions/message-search").json(),
    );
    // The byte offset the error points at: the parenthesis never closed.
    golden(
        "error_invalid_query",
        &d.get("/api/sessions/message-search?q=tide%20(ferry").json(),
    );
}

#[test]
fn sessions_list_filters_and_pages() {
    let d = Demo::start("sessions");
    let all = d.get("/api/sessions");
    assert_eq!(all.status, 200);
    let all = all.json();
    assert_eq!(all["total"], 12);
    golden("sessions", &normalized(&d, all.clone()));
    let count = |q: &str| {
        d.get(&format!("/api/sessions?{q}")).json()["total"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(count("source=codex"), 2);
    assert_eq!(count("source=claude,pi"), 3);
    assert_eq!(count("cwd=/home/demo/code"), 12);
    assert_eq!(count("source=dsh"), 1);
    assert_eq!(count("source=deepseek-harness,kimi%20code"), 2);
    assert_eq!(
        count("cwd=/home/demo/code/tide"),
        0,
        "cwd compares whole components"
    );
    assert_eq!(count("parent=none"), 11);
    let parent = key_of(&d, "codex", "next command");
    let kids = d
        .get(&format!("/api/sessions?parent={}", enc(&parent)))
        .json();
    assert_eq!(kids["total"], 1);
    assert_eq!(kids["sessions"][0]["parent"]["relation"], "fork");
    assert_eq!(count(&format!("since={}", http_support::NOW)), 0);
    assert_eq!(count("until=2000-01-01T00:00:00Z"), 0);
    // Newest first, and a cursor walks the rest.
    let p1 = d.get("/api/sessions?limit=6").json();
    let cursor = p1["cursor"].as_str().expect("a second page").to_string();
    let p2 = d
        .get(&format!("/api/sessions?limit=6&cursor={cursor}"))
        .json();
    assert!(p2["cursor"].is_null());
    let keys: Vec<&str> = p1["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p2["sessions"].as_array().unwrap())
        .map(|s| s["session_key"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, expected);
    let ts: Vec<i64> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["updated_ms"].as_i64().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] >= w[1]), "newest first: {ts:?}");
    // A cursor of another filter, and bad filters, are 400s.
    let r = d.get(&format!(
        "/api/sessions?limit=4&source=codex&cursor={cursor}"
    ));
    assert_eq!(
        (r.status, r.json()["error"].as_str()),
        (400, Some("invalid_cursor"))
    );
    let r = d.get("/api/sessions?source=nope");
    assert_eq!(
        (r.status, r.json()["error"].as_str()),
        (400, Some("invalid_param"))
    );
    let r = d.get("/api/sessions?since=soon");
    assert_eq!(r.status, 400);
}

#[test]
fn session_detail_pages_and_refuses_unknown_keys() {
    let d = Demo::start("detail");
    let key = key_of(&d, "claude-code", "Tide CSV parser");
    let r = d.get(&format!("/api/session/{}?limit=3", enc(&key)));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    golden("session_detail", &normalized(&d, r.json()));
    let conv = d.get(&format!("/api/session/{}", enc(&key))).json();
    let all = d
        .get(&format!("/api/session/{}?scope=all", enc(&key)))
        .json();
    assert!(
        all["total"].as_u64() > conv["total"].as_u64(),
        "scope=all adds tool rows"
    );
    assert!(conv["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["role"] != "tool"));
    let page = d
        .get(&format!("/api/session/{}?offset=2&limit=2", enc(&key)))
        .json();
    assert_eq!(page["offset"], 2);
    assert_eq!(page["entries"][0]["index"], 2);
    assert_eq!(page["entries"][0]["text"], conv["entries"][2]["text"]);
    for bad in [
        "offset=-1",
        "offset=x",
        "scope=some",
        "locate=%7B",
        "locate=bm90IGpzb24",
    ] {
        let r = d.get(&format!("/api/session/{}?{bad}", enc(&key)));
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["error"], "invalid_param");
    }
    for missing in [
        "claude-code:nope",
        "..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "pi:..%2F..",
    ] {
        for suffix in ["", "/trace", "/export"] {
            let r = d.get(&format!("/api/session/{missing}{suffix}"));
            assert_eq!(r.status, 404, "{missing}{suffix}");
            assert_eq!(r.json()["error"], "session_not_found");
        }
    }
}

#[test]
fn locate_resolves_then_turns_stale_then_unavailable() {
    let d = Demo::start("locate");
    let v = search(&d, "q=daylight%20saving&source=claude-code");
    let session = &v["sessions"][0];
    let key = session["session_key"].as_str().unwrap().to_string();
    let hit = session["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["role"] == "assistant")
        .expect("the assistant's answer about daylight saving")
        .clone();
    let loc = hit["locator"].clone();
    let url = |l: &str| format!("/api/session/{}?limit=4&locate={l}", enc(&key));
    for form in [b64(&loc), enc(&loc.to_string())] {
        let page = d.get(&url(&form)).json();
        assert_eq!(page["locate"]["state"], "resolved", "{page}");
        assert_eq!(page["locate"]["anchor"], "exact");
        // `entry_index` is the hit's place in `entries`, whatever the offset.
        let i = page["locate"]["entry_index"].as_u64().unwrap();
        let e = &page["entries"][i as usize];
        assert_eq!(e["locator"], loc);
        assert!(e["text"].as_str().unwrap().contains("daylight saving"));
    }
    // The source changes under the index: the hit is stale.
    let main = d.get(&format!("/api/session/{}", enc(&key))).json()["session"]["paths"][0]
        .as_str()
        .unwrap()
        .to_string();
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, text.replace("no daylight saving", "no summer time")).unwrap();
    let page = d.get(&url(&b64(&loc))).json();
    assert_eq!(page["locate"]["state"], "stale", "{}", page["locate"]);
    assert!(page["locate"]["reason"].as_str().is_some());
    // The source disappears: it cannot be checked.
    std::fs::remove_file(&main).unwrap();
    let page = d.get(&url(&b64(&loc))).json();
    assert_eq!(page["locate"]["state"], "unavailable", "{}", page["locate"]);
    // A locator this session never had is stale, not an error.
    let other = serde_json::json!({"kind": "native_message_id", "message_id": "nope"});
    let page = d.get(&url(&b64(&other))).json();
    assert_eq!(page["locate"]["state"], "stale");
}

#[test]
fn trace_shows_ancestors_and_descendants() {
    let d = Demo::start("trace");
    let parent = key_of(&d, "codex", "next command");
    let fork = key_of(&d, "codex", "Newton");
    let down = d
        .get(&format!("/api/session/{}/trace", enc(&parent)))
        .json();
    assert_eq!(down["ancestors"].as_array().unwrap().len(), 0);
    assert_eq!(down["descendants"][0]["session_key"], fork.as_str());
    let up = d.get(&format!("/api/session/{}/trace", enc(&fork)));
    assert_eq!(up.status, 200);
    let up = up.json();
    assert_eq!(up["ancestors"][0]["session_key"], parent.as_str());
    golden("trace_fork", &normalized(&d, up));
}

fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("a zip");
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            (f.name().expect("utf-8 name").to_string(), b)
        })
        .collect()
}

#[test]
fn export_zips_the_session_and_its_descendants() {
    let d = Demo::start("export");
    let parent = key_of(&d, "codex", "next command");
    let r = d.get(&format!("/api/session/{}/export", enc(&parent)));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/zip"));
    assert!(
        r.header("content-encoding").is_none(),
        "a zip is not gzipped again"
    );
    assert!(r.header("content-disposition").unwrap().contains(".zip"));
    let files = unzip(&r.body);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(names[2], "recall-export.json");
    let index: Value = serde_json::from_slice(&files[2].1).unwrap();
    golden("export_index", &normalized(&d, index.clone()));
    let sessions = index["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "the fork comes along");
    for s in sessions {
        let f = &s["files"][0];
        let original = std::fs::read(f["original_path"].as_str().unwrap()).unwrap();
        let inside = &files
            .iter()
            .find(|(n, _)| n == f["name"].as_str().unwrap())
            .unwrap()
            .1;
        assert_eq!(&original, inside, "exported byte for byte");
    }
    // `recall export` writes the same entries.
    let out = d.home.0.join("out.zip");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_recall"))
        .args([
            "--home",
            d.home.0.to_str().unwrap(),
            "--retention-days",
            "0",
            "export",
            &parent,
            "-o",
            out.to_str().unwrap(),
        ])
        .env_remove("RECALL_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("KIMI_CODE_HOME")
        .env_remove("KIMI_SHARE_DIR")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("INTENDANT_HOME")
        .status()
        .unwrap();
    assert!(status.success());
    let cli = unzip(&std::fs::read(&out).unwrap());
    let cli_names: Vec<&str> = cli.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(cli_names, names);
    assert_eq!(cli[0].1, files[0].1);
}

#[test]
fn status_reports_the_index() {
    let d = Demo::start("status");
    let r = d.get("/api/index/status");
    assert_eq!(r.status, 200);
    let v = r.json();
    assert!(v["last_sweep_ms"].as_i64().is_some());
    assert_eq!(v["revision"], 1);
    golden("status", &normalized(&d, v));
}

#[test]
fn generations_are_immutable_cached_and_gzipped() {
    let d = Demo::start("shards");
    let m = d.get("/api/index/manifest");
    assert_eq!(m.status, 200);
    let etag = m.header("etag").unwrap().to_string();
    let r = http_support::get(d.addr, "/api/index/manifest", &[("If-None-Match", &etag)]);
    assert_eq!(r.status, 304);
    let manifest = m.json();
    let name = manifest["sessions"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["generation_file"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/index/generations/{name}");
    let g = d.get(&path);
    assert_eq!(g.status, 200);
    assert_eq!(
        g.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(
        g.header("etag"),
        Some(format!("\"{}\"", &name[..16]).as_str())
    );
    assert_eq!(recall_core::naming::generation_file_name(&g.body), name);
    let r = http_support::get(
        d.addr,
        &path,
        &[("If-None-Match", g.header("etag").unwrap())],
    );
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    let z = http_support::get(d.addr, &path, &[("Accept-Encoding", "gzip")]);
    assert_eq!(z.status, 200);
    assert_eq!(z.header("content-encoding"), Some("gzip"));
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&z.body[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, g.body);
    for bad in [
        "..%2Fmanifest.json",
        "..%2F..%2Fetc%2Fpasswd",
        "ABCDEF0123456789.json",
        "x.json",
    ] {
        let r = d.get(&format!("/api/index/generations/{bad}"));
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["error"], "invalid_param");
    }
    let r = d.get("/api/index/generations/0123456789abcdef.json");
    assert_eq!(r.status, 404);
}

#[test]
fn front_end_is_embedded() {
    let d = Demo::start("assets");
    let r = d.get("/");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.text().contains("<html"));
    let pkg = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pkg/recall_core.js");
    if pkg.exists() {
        let r = d.get("/pkg/recall_core.js");
        assert_eq!(r.status, 200);
        assert!(r.header("content-type").unwrap().contains("javascript"));
    }
    assert_eq!(d.get("/nope.txt").status, 404);
    let r = d.get("/api/nope");
    assert_eq!(
        (r.status, r.json()["error"].as_str()),
        (404, Some("not_found"))
    );
}
