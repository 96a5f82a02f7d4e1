//! `GET /api/index/segments` and `GET /api/index/segments/{file}`: the
//! store's index segments for offline search — the live list (golden shape),
//! immutable content-named files that open as segments and together cover
//! every generation of the manifest, gzip, conditional requests, and
//! refused names.

mod http_support;

use http_support::{golden, normalize, Demo};
use recall_core::naming::hash16;
use recall_core::segment::Segment;
use serde_json::Value;
use std::collections::HashSet;
use std::io::Read;

#[test]
fn segments_are_listed_immutable_cached_and_cover_the_manifest() {
    let d = Demo::start("segments");
    let l = d.get("/api/index/segments");
    assert_eq!(l.status, 200);
    assert_eq!(l.header("cache-control"), Some("no-cache"));
    let etag = l.header("etag").expect("etag").to_string();
    let again = http_support::get(d.addr, "/api/index/segments", &[("If-None-Match", &etag)]);
    assert_eq!(again.status, 304);
    let list = l.json();
    let manifest = d.get("/api/index/manifest").json();
    assert_eq!(list["store_id"], manifest["store_id"]);
    let segs = list["segments"].as_array().expect("segments").clone();
    assert!(!segs.is_empty(), "the backfill indexes a segment");

    let mut covered = HashSet::new();
    for s in &segs {
        let name = s["name"].as_str().expect("name");
        let path = format!("/api/index/segments/{name}");
        let r = d.get(&path);
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
        assert_eq!(r.header("content-type"), Some("application/octet-stream"));
        assert_eq!(format!("{}.seg", hash16(&r.body)), name, "content-named");
        let seg = Segment::open(r.body.clone()).expect("a served segment opens");
        assert_eq!(seg.names().len() as u64, s["generations"].as_u64().unwrap());
        covered.extend(seg.names().iter().cloned());
        let etag = r.header("etag").expect("etag");
        assert_eq!(etag, format!("\"{}\"", &name[..16]));
        let nm = http_support::get(d.addr, &path, &[("If-None-Match", etag)]);
        assert_eq!(nm.status, 304);
        assert!(nm.body.is_empty());
        let z = http_support::get(d.addr, &path, &[("Accept-Encoding", "gzip")]);
        assert_eq!(z.header("content-encoding"), Some("gzip"));
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(&z.body[..])
            .read_to_end(&mut plain)
            .expect("gzip");
        assert_eq!(plain, r.body);
    }
    for e in manifest["sessions"].as_object().expect("sessions").values() {
        let g = e["generation_file"].as_str().expect("generation");
        assert!(covered.contains(g), "{g} is in no served segment");
    }

    // The shape: names and sizes vary with the temp home's paths.
    let mut shape = list.clone();
    normalize(&mut shape, &d.home.0);
    for s in shape["segments"].as_array_mut().expect("segments") {
        s["name"] = Value::from("<segment>");
        s["source_bytes"] = Value::from(0);
    }
    shape["revision"] = Value::from(0);
    golden("segments", &shape);

    for bad in [
        "..%2Fsegments.json",
        "..%2F..%2Fetc%2Fpasswd",
        "ABCDEF0123456789.seg",
        "0123456789abcdef.json",
        "x.seg",
    ] {
        let r = d.get(&format!("/api/index/segments/{bad}"));
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.json()["error"], "invalid_param");
    }
    let r = d.get("/api/index/segments/0123456789abcdef.seg");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "not_found");
}

/// The browser's path, natively: an index holding only the served manifest
/// and segments, loading each generation a lazy search step names from
/// `/api/index/generations/{name}`, answers as the daemon does.
#[test]
fn lazy_search_over_served_segments_answers_as_the_daemon() {
    use recall_core::{Lazy, MemIndex, Request};
    let d = Demo::start("segments-lazy");
    let mut index = MemIndex::new();
    index
        .set_manifest(&d.get("/api/index/manifest").body)
        .expect("manifest");
    let list = d.get("/api/index/segments").json();
    for s in list["segments"].as_array().expect("segments") {
        let name = s["name"].as_str().expect("name");
        let bytes = d.get(&format!("/api/index/segments/{name}")).body;
        index
            .add_segment(name, &bytes)
            .expect("a served segment is accepted");
    }
    let total = index.missing_generations().len();
    let mut fetched = 0;
    let queries = [
        "q=brest",
        "q=tide&sort=relevance",
        "q=the&limit=2",
        "q=the&scope=all&limit=100",
        "q=zzzz-nothing-matches",
        "q=e&role=user",
    ];
    for (i, qs) in queries.iter().enumerate() {
        let pairs: Vec<(String, String)> = url_pairs(qs);
        let req = Request::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let answer = loop {
            match index.search_lazy(&req, 3).expect("search") {
                Lazy::Complete(r) => break *r,
                Lazy::Need(names) => {
                    assert!(!names.is_empty() && names.len() <= 3, "{names:?}");
                    for n in names {
                        let g = d.get(&format!("/api/index/generations/{n}"));
                        assert_eq!(g.status, 200);
                        index.add_generation(&n, &g.body).expect("generation");
                        fetched += 1;
                    }
                }
            }
        };
        if i == 0 {
            assert!(fetched < total, "a rare word fetched every generation");
        }
        let mut native = d.get(&format!("/api/sessions/message-search?{qs}")).json();
        let mut lazy = serde_json::to_value(&answer).expect("json");
        native["took_ms"] = Value::from(0);
        lazy["took_ms"] = Value::from(0);
        // What the host adds: its policy window, and whether its indexer
        // answers (this daemon serves a store without one).
        lazy["window_days"] = native["window_days"].clone();
        if let Some(m) = native.as_object_mut() {
            m.remove("availability");
        }
        assert_eq!(lazy, native, "{qs}");
    }
}

fn url_pairs(qs: &str) -> Vec<(String, String)> {
    qs.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
