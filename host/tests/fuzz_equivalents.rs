//! The stable equivalents of the cargo-fuzz targets (`fuzz/`): the same
//! entry points (`recall_host::fuzzing`) fed random bytes and random
//! mutations of valid inputs, for machines without a nightly toolchain.
//! Each must never panic.

use proptest::prelude::*;
use recall_core::model::Source;
use recall_host::fuzzing;

/// A valid input and random edits of it: byte flips, insertions, cuts.
fn mutated(seed: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 0..8);
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        edits.prop_map(move |edits| {
            let mut v = seed.to_vec();
            for (at, b, op) in edits {
                let i = if v.is_empty() { 0 } else { at % v.len() };
                match op {
                    0 if !v.is_empty() => v[i] = b,
                    1 => v.insert(i, b),
                    _ if !v.is_empty() => v.truncate(i),
                    _ => {}
                }
            }
            v
        }),
    ]
}

const CLAUDE: &[u8] = br#"{"type":"user","sessionId":"7f0d2c1e-0000-4000-8000-000000000001","uuid":"a1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","cwd":"/w","message":{"role":"user","content":"hello tide"}}
{"type":"assistant","sessionId":"7f0d2c1e-0000-4000-8000-000000000001","uuid":"a2","parentUuid":"a1","timestamp":"2026-01-01T00:00:01Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"hi"}]}}
"#;
const CODEX: &[u8] = br#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"tide"}]}}
"#;
const PI: &[u8] = br#"{"type":"session","version":3,"id":"0e000001-0000-7000-8000-000000000000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"tide","timestamp":1767225601000}}
"#;
const KIMI: &[u8] =
    br#"{"timestamp":1767225600.0,"message":{"type":"TurnBegin","payload":{"user_input":"tide"}}}
{"timestamp":1767225601.0,"message":{"type":"ContentPart","payload":{"type":"text","text":"ok"}}}
"#;
const INTENDANT: &[u8] = br#"{"type":"session_start","session_id":"s1","ts":"2026-01-01T00:00:00Z"}
{"type":"user","text":"tide","ts":"2026-01-01T00:00:01Z"}
"#;
const MANIFEST: &[u8] = br#"{"schema":1,"store_id":"abc","revision":3,"parser_version":1,"updated_at_ms":0,"sessions":{}}"#;

const CATALOG: &[u8] = br#"{"schema":2,"parser_version":1,"store_id":"abc","revision":3,"updated_at_ms":0,"metas":[{"name":"0123456789abcdef.meta","sessions":1,"live":1,"deleted":["pi:a"]}],"tombstones":{}}"#;

#[test]
fn every_fuzzed_source_has_a_seed_session() {
    for source in fuzzing::SOURCES {
        assert!(
            fuzzing::has_unit(source),
            "{source:?}: no unit in the fuzz home"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn extract_claude(b in mutated(CLAUDE)) { fuzzing::extract(Source::ClaudeCode, &b); }
    #[test]
    fn extract_codex(b in mutated(CODEX)) { fuzzing::extract(Source::Codex, &b); }
    #[test]
    fn extract_kimi(b in mutated(KIMI)) { fuzzing::extract(Source::Kimi, &b); }
    #[test]
    fn extract_pi(b in mutated(PI)) { fuzzing::extract(Source::Pi, &b); }
    #[test]
    fn extract_intendant(b in mutated(INTENDANT)) { fuzzing::extract(Source::Intendant, &b); }
    #[test]
    fn manifest(b in mutated(MANIFEST)) { fuzzing::manifest(&b); }
    #[test]
    fn catalog(b in mutated(CATALOG)) { fuzzing::catalog(&b); }
    #[test]
    fn meta(b in mutated(br#"{"sessions":{}}"#)) { fuzzing::meta(&b); }
    #[test]
    fn checkpoint(b in mutated(br#"{"version":1,"source":"pi","files":[{"path":"/x","offset":10,"lines":1}],"tally":{"lines":1},"state":{"pi":{}}}"#)) {
        fuzzing::checkpoint(&b);
    }
    #[test]
    fn search_cursor(b in mutated(b"eyJ2IjoxLCJxaCI6IjAwIn0")) { fuzzing::search_cursor(&b); }
    #[test]
    fn locator(b in mutated(br#"{"kind":"native_event","line_no":3,"content_hash16":"0123456789abcdef"}"#)) {
        fuzzing::locator(&b);
    }
    #[test]
    fn sessions_query(b in mutated(b"source=pi&cwd=%2Fw&since=2026-01-01&limit=5&cursor=eyJ2IjoxfQ")) {
        fuzzing::sessions_query(&b);
    }
    #[test]
    fn http_query(b in mutated(b"q=tide+-csv&source=claude&role=user&limit=3&sort=relevance")) {
        fuzzing::http_query(&b);
    }
    #[test]
    fn wasm_abi(b in mutated(b"{\"session\":{}}\xff{\"schema\":1}\xff{\"q\":\"tide\"}")) {
        fuzzing::wasm_abi(&b);
    }
}

/// A seed built from the demo home (`fuzzing::demo_seed`), kept for the
/// process.
fn demo_seed(target: &'static str) -> &'static [u8] {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEDS: OnceLock<Mutex<HashMap<&'static str, &'static [u8]>>> = OnceLock::new();
    let mut seeds = SEEDS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    seeds
        .entry(target)
        .or_insert_with(|| Box::leak(fuzzing::demo_seed(target).into_boxed_slice()))
}

const POLICY: &[u8] = b"{\"enabled\": true, \"history_days\": 30}\n";
const INDEXER_STATE: &[u8] = br#"{"store_id":"fuzz","backfilled":true,"last_sweep_ms":1793000000000,"last_full_gc_ms":0,"skipped":{"/h/.codex/sessions/x.jsonl":{"reason":"failed","key":"codex:x","files":[{"path":"/h/.codex/sessions/x.jsonl","dev":1,"ino":2,"len":10,"mtime_ns":3,"offset":10,"head_sha":"00"}],"error":"truncated"}},"garbage":{"0123456789abcdef.json":1793000000000}}"#;

/// Two journal lines over epoch 0 (a torn third line).
const LEDGER: &[u8] = br#"{"epoch":0,"store_id":"fuzz","backfilled":true,"last_sweep_ms":1793000000000}
{"epoch":0,"store_id":"fuzz","skipped":[["/h/.codex/sessions/x.jsonl",null]],"garbage":[["0123456789abcdef.json",1793000000000]]}
{"epoch":0,"sto"#;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn extract_dsh(b in mutated(demo_seed("extract_dsh"))) { fuzzing::extract(Source::Dsh, &b); }
    #[test]
    fn extract_gemini(b in mutated(demo_seed("extract_gemini"))) { fuzzing::extract(Source::Gemini, &b); }
    #[test]
    fn extract_copilot(b in mutated(demo_seed("extract_copilot"))) { fuzzing::extract(Source::Copilot, &b); }
    #[test]
    fn extract_qwen(b in mutated(demo_seed("extract_qwen"))) { fuzzing::extract(Source::Qwen, &b); }
    #[test]
    fn extract_opencode(b in mutated(demo_seed("extract_opencode"))) { fuzzing::extract(Source::OpenCode, &b); }
    #[test]
    fn segment(b in mutated(demo_seed("segment"))) { fuzzing::segment(&b); }
    #[test]
    fn grams_sidecar(b in mutated(b"RCG\x02\0\0\0\x000123456789abcdef\x01\x02\x03")) { fuzzing::grams_sidecar(&b); }
    #[test]
    fn report_payload(b in mutated(demo_seed("report_payload"))) { fuzzing::report_payload(&b); }
    #[test]
    fn policy(b in mutated(POLICY)) { fuzzing::policy(&b); }
    #[test]
    fn indexer_state(b in mutated(INDEXER_STATE)) { fuzzing::indexer_state(&b); }

    #[test]
    fn ledger(b in mutated(LEDGER)) { fuzzing::ledger(&b); }
}

/// The seeds are what their targets parse (a seed that fails to parse
/// would leave its equivalent fuzzing only the refusal path).
#[test]
fn the_demo_seeds_are_valid_inputs() {
    assert!(recall_core::Segment::open(demo_seed("segment").to_vec()).is_ok());
    let payload: serde_json::Value =
        serde_json::from_slice(demo_seed("report_payload")).expect("payload JSON");
    assert!(!payload["generations"]
        .as_array()
        .expect("generations")
        .is_empty());
    assert!(std::str::from_utf8(demo_seed("extract_dsh")).is_ok_and(|s| s.lines().count() > 3));
    let state: recall_host::store::IndexerState =
        serde_json::from_slice(INDEXER_STATE).expect("indexer state");
    assert_eq!(state.skipped.len(), 1);
    assert!(serde_json::from_slice::<recall_host::store::policy::Policy>(POLICY).is_ok());
}
