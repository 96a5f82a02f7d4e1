//! Untrusted bytes (requests, cursors, manifests, generation files, filter
//! files) give errors, never panics. The `fuzz/` targets explore the same
//! entry points with libFuzzer; this runs a seeded sample on every `cargo test`.

use proptest::prelude::*;
use recall_core::{MemIndex, PreparedShard, Request, ShardGrams};

fn small_index() -> MemIndex {
    let body = r#"{"session":{"source":"pi","session_id":"s","title":null,"cwd":null,"branch":null,"created_ms":1,"updated_ms":1,"messages":1,"parent":null,"resume":null,"paths":[]},"records":[{"role":"user","ts_ms":1,"text":"Straße und café","locator":{"kind":"native_event","line_no":1,"content_hash16":"0000000000000000"},"turn":1}],"marks":[{"kind":"turn_count","at":99,"num_turns":5}]}"#.as_bytes();
    let name = recall_core::naming::generation_file_name(body);
    let mut index = MemIndex::new();
    index.add_generation(&name, body).unwrap();
    let manifest = format!(
        r#"{{"schema":1,"parser_version":1,"store_id":"x","revision":1,"updated_at_ms":0,"sessions":{{"pi:s":{{"source":"pi","session_id":"s","title":null,"cwd":null,"branch":null,"created_ms":1,"updated_ms":1,"messages":1,"parent":null,"resume":null,"paths":[],"generation_file":"{name}","records":1}}}}}}"#
    );
    index.set_manifest(manifest.as_bytes()).unwrap();
    index
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn requests_and_cursors(s in ".{0,64}", cursor in "[A-Za-z0-9_=-]{0,80}") {
        let index = small_index();
        let out = index.search_json(&s);
        prop_assert!(out.starts_with('{'), "not JSON: {}", out);
        let r = Request::from_pairs([("q", s.as_str()), ("cursor", cursor.as_str())]);
        let _ = index.search(&r);
        let r = Request::from_pairs([("q", "stra"), ("since", s.as_str()), ("limit", s.as_str()), ("cwd", s.as_str())]);
        let _ = index.search(&r);
    }

    #[test]
    fn storage_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = PreparedShard::from_bytes(&bytes);
        let _ = ShardGrams::from_bytes(&bytes);
        let mut index = MemIndex::new();
        let ok = index.set_manifest(&bytes).is_ok();
        prop_assert!(!ok || bytes.starts_with(b"{"), "accepted a non-object manifest");
        prop_assert!(index.add_generation("0000000000000000.json", &bytes).is_err());
    }
}

#[test]
fn marks_past_the_end_and_hostile_cursor_json() {
    let index = small_index();
    let resp = index.search(&Request::new("strasse")).unwrap();
    assert_eq!(resp.sessions.len(), 1);
    assert!(
        resp.sessions[0].hits[0].superseded,
        "turn_count at 99 covers the one user turn"
    );
    // A well-formed cursor body with absurd values is refused, not trusted.
    use base64::Engine;
    let c = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
        br#"{"v":1,"qh":"zz","rev":18446744073709551615,"store":"x","after":{"ts":0,"key":""}}"#,
    );
    let err = index
        .search(&Request::from_pairs([("q", "x"), ("cursor", c.as_str())]))
        .unwrap_err();
    assert_eq!(err.code, "invalid_cursor");
}
