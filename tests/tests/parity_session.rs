//! Native/wasm parity of the one-session queries (issue #14): for every
//! generation of a generated corpus, filter, search (with every cursor
//! page), window, surface, classify and event-trace requests give
//! byte-identical JSON from the native core and the shipped `.wasm`.

use recall_core::{MemIndex, Shard};
use recall_tests::parity::corpus;
use recall_tests::parity::shipped_wasm;
use recall_tests::parity::wasm::WasmIndex;
use serde_json::{json, Value};

fn word_of(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .find(|w| w.chars().count() >= 5)
        .map(str::to_string)
}

/// The requests asked of one shard.
fn requests(shard: &Shard, active: &[bool]) -> Vec<Value> {
    let n = shard.records.len() as u64;
    let mid = n / 2;
    let mut out = vec![
        json!({"query": "filter"}),
        json!({"query": "filter", "filter": {"state": "superseded"}}),
        json!({"query": "filter", "filter": {"roles": ["user"], "subagent": false}}),
        json!({"query": "filter", "filter": {"from_index": 1, "to_index": mid}, "offset": 1, "limit": 3}),
        json!({"query": "filter", "filter": {"from_index": mid + 1, "to_index": mid}}),
        json!({"query": "filter", "filter": {"roles": []}}),
        json!({"query": "surface", "limit": 4}),
        json!({"query": "classify"}),
        json!({"query": "classify", "offset": 2, "limit": 5}),
        json!({"query": "window", "at": {"index": mid}, "before": 3, "after": 3}),
        json!({"query": "window", "at": {"index": n}}),
        json!({"query": "event_trace", "at": {"index": 0}}),
        json!({"query": "search", "q": ""}),
        json!({"query": "bogus"}),
    ];
    if let Some(r) = shard.records.get(mid as usize) {
        out.push(json!({"query": "filter", "filter": {"since_ms": r.ts_ms, "until_ms": r.ts_ms + 60_000}}));
        out.push(
            json!({"query": "window", "at": {"locator": r.locator}, "before": 1, "after": 50}),
        );
    }
    for r in shard.records.iter().take(6) {
        if let Some(w) = word_of(&r.text) {
            out.push(json!({"query": "filter", "filter": {"text": w.to_uppercase()}}));
            out.push(json!({"query": "search", "q": w, "limit": 2, "filter": {"roles": ["user", "assistant", "tool"]}}));
        }
    }
    for (i, _) in active.iter().enumerate().filter(|(_, a)| !**a).take(3) {
        out.push(json!({"query": "event_trace", "at": {"index": i}}));
    }
    out
}

#[test]
fn one_session_queries_agree_byte_for_byte() {
    let corpus = corpus::from_seeds(&[1], 40).unwrap_or_else(|e| panic!("{e}"));
    let mut native = MemIndex::new();
    native.set_manifest(&corpus.manifest).unwrap();
    let mut wasm = WasmIndex::load(&shipped_wasm()).unwrap_or_else(|e| panic!("{e}"));
    wasm.set_manifest(&corpus.manifest)
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut compared, mut answered, mut pages, mut superseded) = (0, 0, 0, 0);
    for (name, bytes) in &corpus.generations {
        native.add_generation(name, bytes).unwrap();
        wasm.add_generation(name, bytes)
            .unwrap_or_else(|e| panic!("{e}"));
        let shard: Shard = serde_json::from_slice(bytes).unwrap();
        let active = recall_core::derive_active(&shard.records, &shard.marks);
        superseded += active.iter().filter(|a| !**a).count();
        for mut req in requests(&shard, &active) {
            loop {
                let body = req.to_string();
                let a = native.session_query_json(name, &body);
                let b = wasm
                    .session_query_json(name, &body)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(a, b, "{name} {body}");
                compared += 1;
                let v: Value = serde_json::from_str(&a).unwrap();
                if v["ok"] == true {
                    answered += 1;
                }
                match v["cursor"].as_str() {
                    Some(c) => {
                        req["cursor"] = json!(c);
                        pages += 1;
                    }
                    None => break,
                }
            }
        }
    }
    eprintln!("session parity: {compared} compared, {answered} answered, {pages} cursor pages");
    assert!(compared >= 1_000, "{compared}");
    assert!(answered * 2 >= compared, "{answered} of {compared}");
    assert!(pages >= 20, "{pages} cursor pages");
    assert!(
        superseded >= 5,
        "the corpus has {superseded} superseded records"
    );
    // An unknown generation is an error on both sides.
    let missing = r#"{"query":"surface"}"#;
    assert_eq!(
        native.session_query_json("0000000000000000.json", missing),
        wasm.session_query_json("0000000000000000.json", missing)
            .unwrap()
    );
}
