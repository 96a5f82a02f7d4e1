//! Request JSON and cursors: parse, validate and search an empty index.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let index = recall_core::MemIndex::new();
        let _ = index.search_json(s);
        let req = recall_core::Request::from_pairs([("q", "x"), ("cursor", s)]);
        let _ = index.search(&req);
        let _ = recall_core::query::parse_terms(s);
    }
});
