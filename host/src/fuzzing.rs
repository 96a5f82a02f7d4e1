//! Entry points for the fuzz targets (`fuzz/`, cargo-fuzz on nightly) and
//! their stable proptest equivalents (`host/tests/fuzz_equivalents.rs`):
//! each takes arbitrary bytes to one parser the way real input reaches it,
//! and panics only on a bug. Not part of the product's API.
//!
//! - [`extract`]: the bytes become the main file of one agent's session in
//!   a home (the bundled demo home), found by the same discovery as a sweep
//!   and extracted; the unit's resumable extraction from its own checkpoint
//!   must then equal the full one.
//! - [`manifest`], [`checkpoint`]: the store's readers.
//! - [`search_cursor`], [`locator`], [`sessions_query`], [`http_query`]:
//!   the decoders of what clients send.
//! - [`wasm_abi`]: what the browser (and the report viewer) hand the core:
//!   generation bytes, manifest bytes, a request.

use crate::extract::{self, resume, Roots, SessionSource};
use crate::http::routes::sessions;
use crate::http::{locate, query};
use crate::store::{checkpoints, manifest as store_manifest};
use recall_core::model::Source;
use recall_core::naming::generation_file_name;
use recall_core::{MemIndex, Request};
use std::path::PathBuf;

/// The demo home of this process and thread (fuzzers run one input at a
/// time; the proptest equivalents run on several threads).
fn home() -> PathBuf {
    thread_local! {
        static HOME: PathBuf = {
            let dir = std::env::temp_dir().join(format!(
                "recall-fuzz-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let _ = crate::demo::write_at(&dir, 1_793_000_000_000);
            dir
        };
    }
    HOME.with(|h| h.clone())
}

fn units() -> Vec<SessionSource> {
    extract::discover(&Roots::resolve(&home(), |_| None))
}

/// The demo unit of `source` (its main file is what the fuzzer rewrites).
fn unit_of(source: Source) -> Option<SessionSource> {
    units().into_iter().find(|u| u.source == source)
}

/// Sources in the order [`extract`]'s selector byte picks them.
pub const SOURCES: [Source; 5] = [
    Source::ClaudeCode,
    Source::Codex,
    Source::Kimi,
    Source::Pi,
    Source::Intendant,
];

/// `bytes` as the main file of a `source` session, through discovery and
/// extraction; a resumed extraction must equal the full one.
pub fn extract(source: Source, bytes: &[u8]) {
    let Some(unit) = unit_of(source) else {
        return;
    };
    let Some(main) = unit.files.first() else {
        return;
    };
    // A fresh original for every input: the previous one was overwritten.
    let original = std::fs::read(main).ok();
    if std::fs::write(main, bytes).is_err() {
        return;
    }
    for u in units() {
        let full = extract::extract(&u);
        // Resuming from the checkpoint of the same bytes gives the same
        // records (or silently reads from byte 0).
        if let Ok(first) = resume::extract_resumable(&u, &[], None) {
            if let Some(cp) = &first.checkpoint {
                if let (Ok(again), Ok(Some(full))) =
                    (resume::extract_resumable(&u, &[], Some(cp)), &full)
                {
                    let again = again.extracted.map(|x| x.records);
                    assert_eq!(again.as_ref(), Some(&full.records), "resume ≠ full");
                }
            }
        }
    }
    if let Some(o) = original {
        let _ = std::fs::write(main, o);
    }
}

/// The manifest reader.
pub fn manifest(bytes: &[u8]) {
    if let store_manifest::ReadManifest::Ok(m, _) = store_manifest::parse(bytes.to_vec()) {
        let again = store_manifest::to_bytes(&m).expect("a parsed manifest serializes");
        assert!(matches!(
            store_manifest::parse(again),
            store_manifest::ReadManifest::Ok(..)
        ));
    }
}

/// The catalog reader: whatever parses serializes and parses again to the
/// same catalog, and assembling it over metas that are never found is an
/// error, never a panic.
pub fn catalog(bytes: &[u8]) {
    if let Ok(c) = crate::store::catalog::parse(bytes) {
        let again = crate::store::catalog::to_bytes(&c).expect("a parsed catalog serializes");
        assert_eq!(crate::store::catalog::parse(&again).ok(), Some(c.clone()));
        let r = crate::store::catalog::assemble(&c, |n| Err(format!("{n}: absent")));
        assert!(c.metas.is_empty() || r.is_err());
    }
}

/// The meta reader: bytes under their own content name parse or are refused,
/// and under another name they are always refused.
pub fn meta(bytes: &[u8]) {
    let name = crate::store::catalog::meta_name(bytes);
    if let Ok(entries) = crate::store::catalog::parse_meta(&name, bytes) {
        let again = crate::store::catalog::meta_bytes(&entries).expect("a parsed meta serializes");
        let name2 = crate::store::catalog::meta_name(&again);
        assert!(crate::store::catalog::parse_meta(&name2, &again).is_ok());
    }
    assert!(
        crate::store::catalog::parse_meta("0000000000000000.meta", bytes).is_err()
            || name == "0000000000000000.meta"
    );
}

/// A checkpoint file as the store reads it, then as the extractor would use
/// it on the demo's Pi and Claude sessions: never a panic.
pub fn checkpoint(bytes: &[u8]) {
    let body = checkpoints::unseal(bytes).unwrap_or(bytes);
    let Ok(cp) = serde_json::from_slice::<resume::Checkpoint>(body) else {
        return;
    };
    for source in [Source::Pi, Source::ClaudeCode, Source::Codex] {
        if let Some(u) = unit_of(source) {
            let _ = resume::extract_resumable(&u, &[], Some(&cp));
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The search cursor decoder (for one query and for another).
pub fn search_cursor(bytes: &[u8]) {
    let s = text(bytes);
    for q in ["tide", "tide -csv \"high water\""] {
        let mut r = Request::new(q);
        r.cursor = Some(s.clone());
        let _ = r.parse();
        if let Ok(query) = Request::new(q).parse() {
            let _ = recall_core::cursor::Cursor::decode(&s, &query);
        }
    }
}

/// The `?locate=` decoder.
pub fn locator(bytes: &[u8]) {
    if let Ok(loc) = locate::parse(&text(bytes)) {
        let _ = locate::content_hash(&loc);
    }
}

/// `/api/sessions` parameters: filters, limit and its keyset cursor.
pub fn sessions_query(bytes: &[u8]) {
    let s = text(bytes);
    let _ = sessions::decode_cursor(&s);
    if let Ok(pairs) = query::parse(&s) {
        let _ = sessions::check_params(&pairs);
    }
}

/// The query-string decoder and the §4 request parser behind it.
pub fn http_query(bytes: &[u8]) {
    let s = text(bytes);
    if let Ok(pairs) = query::parse(&s) {
        let r = Request::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let _ = r.parse();
    }
    let _ = Request::from_json(&s).map(|r| r.parse());
}

/// The core's byte ABI: `generation \xff manifest \xff request`.
pub fn wasm_abi(bytes: &[u8]) {
    let mut parts = bytes.splitn(3, |&b| b == 0xff);
    let generation = parts.next().unwrap_or_default();
    let manifest = parts.next().unwrap_or_default();
    let request = parts.next().unwrap_or_default();
    let mut index = MemIndex::new();
    let _ = index.add_generation(&generation_file_name(generation), generation);
    let _ = index.add_generation("0123456789abcdef.json", generation);
    let _ = index.set_manifest(manifest);
    let out = index.search_json(&text(request));
    assert!(
        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
        "search_json answers JSON"
    );
    let _ = index.search_json(r#"{"q":"tide"}"#);
}
