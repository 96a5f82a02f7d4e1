//! Native/wasm parity of the session list, the session view (pages and
//! `locate`) and lineage (issue #14): the same view queries give
//! byte-identical JSON from the native core and the shipped `.wasm`, and
//! the native answers say what they must (paging adds up, filters hold,
//! a locator lands on its record, lineage follows the parent links).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use recall_core::{Manifest, MemIndex, Shard};
use recall_tests::parity::corpus;
use recall_tests::parity::shipped_wasm;
use recall_tests::parity::wasm::WasmIndex;
use serde_json::{json, Value};
use std::collections::BTreeSet;

struct Both {
    native: MemIndex,
    wasm: WasmIndex,
    compared: usize,
}

impl Both {
    /// Asks both sides; they must agree byte for byte. The native answer.
    fn ask(&mut self, req: &Value) -> Value {
        let body = req.to_string();
        let a = self.native.views_json(&body);
        let b = self
            .wasm
            .views_json(&body)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a, b, "{body}");
        self.compared += 1;
        serde_json::from_str(&a).unwrap()
    }

    /// Every page of a list request, following the cursors: the keys.
    fn all_pages(&mut self, params: &Value) -> Vec<String> {
        let mut p = params.clone();
        let mut keys = Vec::new();
        loop {
            let v = self.ask(&json!({"query": "sessions", "params": p}));
            assert_eq!(v["ok"], true, "{params} {v}");
            for s in v["sessions"].as_array().unwrap() {
                keys.push(s["session_key"].as_str().unwrap().to_string());
            }
            match v["cursor"].as_str() {
                Some(c) => p["cursor"] = json!(c),
                None => return keys,
            }
        }
    }
}

fn keys_of(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn session_views_agree_byte_for_byte() {
    let corpus = corpus::from_seeds(&[1, 2], 40).unwrap_or_else(|e| panic!("{e}"));
    let manifest: Manifest = serde_json::from_slice(&corpus.manifest).unwrap();
    let mut native = MemIndex::new();
    native.set_manifest(&corpus.manifest).unwrap();
    let mut wasm = WasmIndex::load(&shipped_wasm()).unwrap_or_else(|e| panic!("{e}"));
    wasm.set_manifest(&corpus.manifest)
        .unwrap_or_else(|e| panic!("{e}"));
    for (name, bytes) in &corpus.generations {
        native.add_generation(name, bytes).unwrap();
        wasm.add_generation(name, bytes)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut both = Both {
        native,
        wasm,
        compared: 0,
    };
    let n = manifest.sessions.len();

    // The list: unfiltered, paged, and filtered by each kind of clause.
    let whole = both.ask(&json!({"query": "sessions", "params": {"limit": 500}}));
    let all = keys_of(&whole);
    assert_eq!(all.len(), n);
    assert_eq!(whole["total"], n);
    for limit in [1, 7, 50] {
        assert_eq!(
            both.all_pages(&json!({"limit": limit})),
            all,
            "pages of {limit}"
        );
    }
    let mut filtered = 0;
    for (k, e) in &manifest.sessions {
        let m = &e.meta;
        let mut cases = vec![
            json!({"source": m.source.as_str(), "limit": 500}),
            json!({"id": m.session_id.chars().take(4).collect::<String>(), "limit": 500}),
            json!({"parent": k}),
        ];
        if let Some(cwd) = &m.cwd {
            cases.push(json!({"cwd": cwd, "facets": true, "tz": 90}));
        }
        if let Some(t) = m.updated_ms.or(e.max_ts_ms) {
            cases.push(json!({"since": t, "limit": 500}));
            cases.push(json!({"until": t, "limit": 3}));
        }
        if let Some(b) = &m.branch {
            cases.push(json!({"branch": b, "limit": 500}));
        }
        if let Some(word) = m.title.as_deref().and_then(|t| t.split_whitespace().next()) {
            cases.push(json!({"title": word.to_uppercase(), "limit": 500}));
            cases.push(json!({"q": word, "limit": 500}));
        }
        for p in cases {
            let v = both.ask(&json!({"query": "sessions", "params": p}));
            assert_eq!(v["ok"], true, "{p} {v}");
            let got = keys_of(&v);
            if p.get("cursor").is_none() && p["limit"] == 500 {
                assert!(got.contains(k), "{k} passes its own filter {p}");
            }
            for s in v["sessions"].as_array().unwrap() {
                if let Some(src) = p["source"].as_str() {
                    assert_eq!(s["source"], src);
                }
                if let Some(b) = p["branch"].as_str() {
                    assert_eq!(s["branch"], b);
                }
                if p.get("parent").is_some() {
                    assert_eq!(s["parent"]["key"], p["parent"]);
                }
            }
            filtered += 1;
        }
    }
    for p in [
        json!({"no_cwd": true}),
        json!({"presence": "gone"}),
        json!({"presence": "present", "parent": "none"}),
        json!({"facets": "1", "tz": -600, "limit": 2}),
    ] {
        assert_eq!(
            both.ask(&json!({"query": "sessions", "params": p}))["ok"],
            true,
            "{p}"
        );
    }
    let gone =
        both.ask(&json!({"query": "sessions", "params": {"presence": "gone", "limit": 500}}));
    let want: BTreeSet<&String> = manifest
        .sessions
        .iter()
        .filter(|(_, e)| e.source_gone)
        .map(|(k, _)| k)
        .collect();
    assert!(
        !want.is_empty(),
        "the corpus has sessions whose source is gone"
    );
    assert_eq!(keys_of(&gone).iter().collect::<BTreeSet<_>>(), want);
    // Refused alike.
    let c = both.ask(&json!({"query": "sessions", "params": {"limit": 1}}))["cursor"].clone();
    for (p, code) in [
        (json!({"source": "emacs"}), "invalid_param"),
        (json!({"tz": "east"}), "invalid_param"),
        (json!({"since": 5, "until": 4}), "invalid_param"),
        (json!({"cursor": "!!"}), "invalid_cursor"),
        (json!({"cursor": c, "source": "codex"}), "invalid_cursor"),
    ] {
        assert_eq!(
            both.ask(&json!({"query": "sessions", "params": p}))["error"],
            code,
            "{p}"
        );
    }

    // The session view: pages at both scopes, and every kind of locate.
    let mut located = 0;
    let mut parents = 0;
    for (k, e) in &manifest.sessions {
        let bytes = &corpus
            .generations
            .iter()
            .find(|(g, _)| *g == e.generation_file)
            .unwrap()
            .1;
        let shard: Shard = serde_json::from_slice(bytes).unwrap();
        for p in [
            json!({}),
            json!({"scope": "all", "limit": 5}),
            json!({"offset": 3, "limit": "4"}),
            json!({"offset": 100000}),
        ] {
            let v = both.ask(&json!({"query": "session", "key": k, "params": p}));
            assert_eq!(v["ok"], true, "{k} {p} {v}");
            assert_eq!(v["session"]["session_key"], json!(k));
        }
        let step = (shard.records.len() / 3).max(1);
        for (i, r) in shard.records.iter().enumerate().step_by(step) {
            let loc = serde_json::to_string(&r.locator).unwrap();
            for (scope, locate) in [
                ("all", loc.clone()),
                ("conversation", URL_SAFE_NO_PAD.encode(&loc)),
            ] {
                let v = both.ask(&json!({"query": "session", "key": k, "params": {"scope": scope, "locate": locate, "limit": 5}}));
                let l = &v["locate"];
                assert_eq!(l["state"], "resolved", "{k} {v}");
                assert_eq!(
                    l["total_index"], i,
                    "{k}: the first record with this locator"
                );
                let at = l["entry_index"].as_u64().unwrap();
                let shown = &v["entries"][at as usize];
                if scope == "all" {
                    assert_eq!(l["anchor"], "exact");
                    assert_eq!(shown["locator"], serde_json::to_value(&r.locator).unwrap());
                } else {
                    assert!(shown["total_index"].as_u64().unwrap() <= i as u64);
                }
                located += 1;
            }
        }
        let lost = json!({"kind": "external_record_id", "record_id": "never-indexed"});
        let v = both.ask(&json!({"query": "session", "key": k, "params": {"locate": lost}}));
        assert_eq!(
            v["error"], "invalid_param",
            "a locate parameter is a string: {v}"
        );
        let v = both
            .ask(&json!({"query": "session", "key": k, "params": {"locate": lost.to_string()}}));
        assert_eq!(v["locate"]["state"], "unavailable", "{v}");
        // Lineage, by key and by bare id.
        let t = both.ask(&json!({"query": "trace", "key": k}));
        assert_eq!(t["ok"], true);
        if let Some(p) = &e.meta.parent {
            let anc = t["ancestors"].as_array().unwrap();
            assert_eq!(anc.last().unwrap()["session_key"], json!(p.key), "{k}");
            parents += 1;
        }
        let by_id = both.ask(&json!({"query": "trace", "key": e.meta.session_id}));
        let unique = manifest
            .sessions
            .values()
            .filter(|x| x.meta.session_id == e.meta.session_id)
            .count()
            == 1;
        if unique {
            assert_eq!(by_id, t, "a bare id names its session");
        }
    }
    assert!(located >= n, "{located} locates");
    assert!(
        parents >= 3,
        "the corpus has {parents} sessions with a parent"
    );
    for q in [
        json!({"query": "session", "key": "pi:nope"}),
        json!({"query": "trace", "key": "pi:nope"}),
        json!({"query": "session", "key": all[0], "params": {"scope": "tools"}}),
        json!({"query": "session", "key": all[0], "params": {"offset": -1}}),
        json!({"query": "nope"}),
    ] {
        assert_eq!(both.ask(&q)["ok"], false, "{q}");
    }
    eprintln!(
        "view parity: {} compared ({filtered} filtered lists, {located} locates)",
        both.compared
    );
    assert!(both.compared >= 1_000, "{}", both.compared);
}
