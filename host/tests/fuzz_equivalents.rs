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
