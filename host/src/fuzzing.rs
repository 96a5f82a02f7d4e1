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
//! - [`segment`]: index segment bytes opened as the store opens them, then
//!   searched over the demo's indexed sessions; [`grams_sidecar`]: a
//!   `.grams` file as the store reads it.
//! - [`report_payload`]: a report's payload decoded as the viewer decodes
//!   it and handed to the core.
//! - [`policy`], [`indexer_state`], [`ledger`]: `policy.json`, `indexer.json`
//!   and the ledger's journal `ledger.jsonl`.

use crate::extract::{self, resume, Roots, SessionSource};
use crate::http::routes::sessions;
use crate::http::{locate, query};
use crate::index::{IndexOptions, Indexer};
use crate::store::{checkpoints, generations, manifest as store_manifest, Store};
use crate::store::{policy as store_policy, state as store_state};
use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::error::{CatalogError, LoadError};
use recall_core::model::{Manifest, ManifestEntry, Source};
use recall_core::naming::generation_file_name;
use recall_core::search::{search_request, Budgets, SearchEnv};
use recall_core::{MemIndex, PreparedShard, Request, Segment, SegmentSet, ShardGrams};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A folder removed with its thread (the proptest equivalents run on
/// threads that end with their test; a fuzzer's one thread ends with it).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        for tag in SCRATCH_TAGS {
            let path = self.0.with_extension(tag);
            let _ = std::fs::remove_dir_all(&path);
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The extensions of the scratch files and folders beside the home.
const SCRATCH_TAGS: [&str; 5] = ["policy", "state", "ledger", "grams", "store"];

/// The demo home of this process and thread (fuzzers run one input at a
/// time; the proptest equivalents run on several threads).
fn home() -> PathBuf {
    thread_local! {
        static HOME: Scratch = {
            let dir = std::env::temp_dir().join(format!(
                "recall-fuzz-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let _ = crate::demo::write_at(&dir, 1_793_000_000_000);
            let _ = write_next_seeds(&dir);
            Scratch(dir)
        };
    }
    HOME.with(|h| h.0.clone())
}

/// Sessions of the agents the demo home does not hold (its sessions are
/// fixed by the HTTP goldens), written beside it: a Gemini CLI replay log
/// (the test fixture), a Qwen Code and a Copilot CLI session of the corpus.
const NEXT_SEEDS: [(&str, &[u8]); 3] = [
    (
        ".gemini/tmp/fuzz/chats/session-2026-05-01T10-00-6f1c2a9e.jsonl",
        include_bytes!("../tests/fixtures/next-agents/gemini-replay.jsonl"),
    ),
    (
        ".qwen/projects/-work/chats/27d495d1-de2d-449d-af11-d42d4d6ef80d.jsonl",
        include_bytes!("../../tests/shared/corpus/qwen/projects__-work__chats__27d495d1-de2d-449d-af11-d42d4d6ef80d.jsonl"),
    ),
    (
        ".copilot/session-state/049410b4-c1df-44ee-87a5-caa1c349091e/events.jsonl",
        include_bytes!("../../tests/shared/corpus/copilot-cli/049410b4-c1df-44ee-87a5-caa1c349091e__events.jsonl"),
    ),
];

/// The OpenCode seed: the fixture database as SQL (`extract_opencode`),
/// written as `opencode.db` of the fuzz home.
const OPENCODE_SEED: &str = include_str!("../tests/fixtures/opencode/opencode.sql");

/// Where the fuzz home's OpenCode database is.
const OPENCODE_DB: &str = ".local/share/opencode/opencode.db";

/// Writes the sessions of the agents the demo home does not hold into
/// `dir` (a home), beside the demo's.
pub fn write_next_seeds(dir: &std::path::Path) -> std::io::Result<()> {
    for (rel, bytes) in NEXT_SEEDS {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, bytes)?;
    }
    let db = dir.join(OPENCODE_DB);
    if let Some(parent) = db.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let _ = std::fs::remove_file(&db);
    extract::opencode::db::write_from_sql(&db, OPENCODE_SEED)
}

/// The SQLite file header: such bytes are written as the database itself.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// `bytes` as OpenCode's database: a database file as it is, anything
/// else as the SQL that writes a fresh one (a hostile schema, rows whose
/// `data` is anything); a script that fails part-way leaves what it wrote.
fn write_opencode_db(db: &std::path::Path, bytes: &[u8]) {
    let _ = std::fs::remove_file(db);
    if bytes.starts_with(SQLITE_MAGIC) {
        let _ = std::fs::write(db, bytes);
    } else {
        let _ = extract::opencode::db::write_from_sql(db, &String::from_utf8_lossy(bytes));
    }
}

fn units() -> Vec<SessionSource> {
    extract::discover(&Roots::resolve(&home(), |_| None))
}

/// The demo unit of `source` (its main file is what the fuzzer rewrites).
fn unit_of(source: Source) -> Option<SessionSource> {
    units().into_iter().find(|u| u.source == source)
}

/// Whether the fuzz home holds a session of `source` (else [`extract`]
/// of it tests nothing).
pub fn has_unit(source: Source) -> bool {
    unit_of(source).is_some()
}

/// Sources in the order [`extract`]'s selector byte picks them.
pub const SOURCES: [Source; 10] = [
    Source::ClaudeCode,
    Source::Codex,
    Source::Kimi,
    Source::Pi,
    Source::Intendant,
    Source::Dsh,
    Source::Gemini,
    Source::Copilot,
    Source::Qwen,
    Source::OpenCode,
];

/// The zstd frame magic (DSH sessions are `.jsonl.zstd`).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// What is written as the main file of `source`: a DSH session is a zstd
/// frame, so bytes that are not one are compressed first (the fuzzer then
/// reaches the parser, not only the decoder); a frame is written as it is.
fn main_file_bytes(source: Source, bytes: &[u8]) -> Option<Vec<u8>> {
    if source == Source::Dsh && !bytes.starts_with(&ZSTD_MAGIC) {
        return zstd::bulk::compress(bytes, 1).ok();
    }
    Some(bytes.to_vec())
}

/// `bytes` as the main file of a `source` session, through discovery and
/// extraction; a resumed extraction must equal the full one.
pub fn extract(source: Source, bytes: &[u8]) {
    let Some(unit) = unit_of(source) else {
        return;
    };
    let Some(main) = unit.files.first() else {
        return;
    };
    // An OpenCode session is a member of its database: the bytes are the
    // database (or the SQL that writes it).
    let db = extract::member::split(main).map(|(db, _)| db.to_path_buf());
    let main = db.as_ref().unwrap_or(main);
    // A fresh original for every input: the previous one was overwritten.
    let original = std::fs::read(main).ok();
    if let Some(db) = &db {
        write_opencode_db(db, bytes);
    } else {
        let Some(bytes) = main_file_bytes(source, bytes) else {
            return;
        };
        if std::fs::write(main, bytes).is_err() {
            return;
        }
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

/// The demo home indexed into a store once per thread: its manifest and
/// prepared shards, and the segment the store builds over them.
struct Demo {
    manifest: Arc<Manifest>,
    shards: HashMap<String, Arc<PreparedShard>>,
    bodies: Vec<(String, String)>,
    segment: Vec<u8>,
}

fn demo() -> Arc<Demo> {
    thread_local! {
        static DEMO: Arc<Demo> = Arc::new(index_demo());
    }
    DEMO.with(Arc::clone)
}

fn index_demo() -> Demo {
    let dir = home().with_extension("store");
    let _ = std::fs::remove_dir_all(&dir);
    let mut shards = HashMap::new();
    let mut bodies = Vec::new();
    let mut manifest = Arc::new(Manifest::empty(String::new(), 0));
    if let Ok(store) = Store::open(&dir).map(Arc::new) {
        let mut opts = IndexOptions::new(Roots::resolve(&home(), |_| None));
        opts.retention_days = 0;
        opts.workers = 1;
        let _ = Indexer::new(store.clone(), opts).sweep();
        if let Ok(m) = store.current() {
            for e in m.sessions.values() {
                let Ok(bytes) = store.generation_bytes(&e.generation_file) else {
                    continue;
                };
                if let Ok(p) = PreparedShard::from_bytes(&bytes) {
                    shards.insert(e.generation_file.clone(), Arc::new(p));
                }
                if let Ok(body) = String::from_utf8(bytes) {
                    bodies.push((e.generation_file.clone(), body));
                }
            }
            manifest = m;
        }
    }
    let mut names: Vec<&String> = shards.keys().collect();
    names.sort();
    let list: Vec<(&str, &PreparedShard)> = names
        .iter()
        .map(|n| (n.as_str(), shards[*n].as_ref()))
        .collect();
    let segment = recall_core::segment::build(&list);
    Demo {
        manifest,
        shards,
        bodies,
        segment,
    }
}

/// A valid segment over the demo's sessions (a seed for [`segment`]).
pub fn demo_segment() -> Vec<u8> {
    demo().segment.clone()
}

/// The demo's shards, manifest and (fuzzed) segments as the search reads
/// them.
struct FuzzCatalog {
    demo: Arc<Demo>,
    segments: Option<Arc<SegmentSet>>,
}

impl Catalog for FuzzCatalog {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Ok(self.demo.manifest.clone())
    }
    fn snapshot(&self, _store_id: &str, _revision: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(&self, _key: &str, e: &ManifestEntry, _tools: bool) -> Result<LoadedShard, LoadError> {
        match self.demo.shards.get(&e.generation_file) {
            Some(shard) => Ok(LoadedShard {
                shard: shard.clone(),
                fresh_bytes: 0,
            }),
            None => Err(LoadError::Missing {
                name: e.generation_file.clone(),
            }),
        }
    }
    fn segments(&self) -> Option<Arc<SegmentSet>> {
        self.segments.clone()
    }
}

/// `bytes` with a valid checksum when they have a segment's magic, so the
/// fuzzer reaches the tables behind it (a real torn file fails the check).
fn with_segment_crc(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if v.starts_with(b"RCSEG\0\0\x04") {
        let _ = reseal(&mut v);
    } else if v.len() >= 16 && v.starts_with(b"RCSEG") {
        let crc = crc32fast::hash(&v[16..]);
        v[8..12].copy_from_slice(&crc.to_le_bytes());
    }
    v
}

/// Rewrites the block checksums and the footer checksum of bytes laid out
/// as a segment of the current version (when the trailer and the block
/// size can be read), so that what the fuzzer changed is read past them.
fn reseal(v: &mut [u8]) -> Option<()> {
    let n = v.len();
    let trailer = n.checked_sub(16)?;
    let footer_at =
        usize::try_from(u64::from_le_bytes(v[trailer..trailer + 8].try_into().ok()?)).ok()?;
    if footer_at < 16 || footer_at.checked_add(4)? > trailer {
        return None;
    }
    let shift = u32::from_le_bytes(v[footer_at..footer_at + 4].try_into().ok()?);
    if !(6..=24).contains(&shift) {
        return None;
    }
    let crcs: Vec<u32> = v[..footer_at]
        .chunks(1 << shift)
        .map(crc32fast::hash)
        .collect();
    let at = trailer.checked_sub(crcs.len() * 4)?;
    if at < footer_at + 4 {
        return None;
    }
    for (i, c) in crcs.iter().enumerate() {
        v[at + 4 * i..at + 4 * i + 4].copy_from_slice(&c.to_le_bytes());
    }
    let crc = crc32fast::hash(&v[footer_at..trailer]);
    v[trailer + 8..trailer + 12].copy_from_slice(&crc.to_le_bytes());
    Some(())
}

/// Segment bytes opened as the store opens them; one that opens is searched
/// over the demo's sessions: never a panic, and the authentic segment gives
/// the same answer as no segment.
pub fn segment(bytes: &[u8]) {
    let demo = demo();
    let search = |segments: Option<Arc<SegmentSet>>, q: &str| {
        let catalog = FuzzCatalog {
            demo: demo.clone(),
            segments,
        };
        let env = SearchEnv {
            catalog: &catalog,
            directories: None,
            clock: &|| 0,
            clock_us: None,
            budgets: Budgets::default(),
            building: false,
        };
        let mut r = Request::new(q);
        r.limit = Some("50".into());
        search_request(&r, &env).map(|resp| serde_json::to_value(resp).ok())
    };
    for data in [bytes.to_vec(), with_segment_crc(bytes)] {
        let authentic = data == demo.segment;
        let Ok(seg) = Segment::open(data) else {
            continue;
        };
        let seg = Arc::new(seg);
        let set = Some(Arc::new(SegmentSet::new(vec![seg.clone()])));
        for q in ["tide", "table -render", "\"cargo build\"", "ti"] {
            let with = search(set.clone(), q);
            if authentic {
                assert_eq!(with.ok(), search(None, q).ok(), "the segment changed {q:?}");
            }
        }
        // Every block checked; a bad one is never read past.
        let _ = seg.verify();
    }
}

/// A `.grams` sidecar as the store reads it (bound to its generation by
/// name, checksum and hash), then as the search uses it.
pub fn grams_sidecar(bytes: &[u8]) {
    let dir = home().with_extension("grams");
    let _ = std::fs::create_dir_all(&dir);
    let name = "0123456789abcdef.json";
    let Some(path) = generations::grams_path(&dir, name) else {
        return;
    };
    // As found, and with the header a sidecar of this generation would
    // have (magic, checksum, its hash16), so the filters behind it are read.
    let mut bound = b"RCG\x02\0\0\0\0".to_vec();
    bound.extend_from_slice(b"0123456789abcdef");
    bound.extend_from_slice(bytes);
    let crc = crc32fast::hash(&bound[8..]);
    bound[4..8].copy_from_slice(&crc.to_le_bytes());
    for data in [bytes, &bound[..]] {
        if std::fs::write(&path, data).is_err() {
            return;
        }
        if let Some(filters) = generations::read_grams(&dir, name) {
            if let Some(g) = ShardGrams::from_bytes(&filters) {
                let terms: [&[u8]; 3] = [b"tide", b"cargo build", "数据库".as_bytes()];
                for lanes in [(true, false), (false, true), (true, true)] {
                    let _ = g.may_match(&terms, lanes.0, lanes.1);
                    let _ = g.max_score(&terms[..1], lanes.0, lanes.1);
                }
            }
        }
    }
}

/// A report payload (`{"manifest", "generations", "query"}`, as base64 of
/// gzip or as plain JSON) decoded as the viewer decodes it, then loaded
/// into the core and searched.
pub fn report_payload(bytes: &[u8]) {
    use base64::Engine;
    use std::io::Read;
    let json = base64::engine::general_purpose::STANDARD
        .decode(
            bytes
                .iter()
                .filter(|b| !b.is_ascii_whitespace())
                .copied()
                .collect::<Vec<_>>(),
        )
        .ok()
        .and_then(|z| {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&z[..])
                .take(16 << 20)
                .read_to_end(&mut out)
                .ok()
                .map(|_| out)
        })
        .unwrap_or_else(|| bytes.to_vec());
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(&json) else {
        return;
    };
    let (Some(manifest), Some(generations)) = (
        payload["manifest"].as_str(),
        payload["generations"].as_array(),
    ) else {
        return;
    };
    let mut index = MemIndex::new();
    for g in generations {
        if let (Some(name), Some(body)) = (g[0].as_str(), g[1].as_str()) {
            let _ = index.add_generation(name, body.as_bytes());
        }
    }
    let _ = index.set_manifest(manifest.as_bytes());
    let q = payload["query"].as_str().unwrap_or("tide");
    let request = serde_json::json!({ "q": q }).to_string();
    let mut requests = vec![r#"{"query":"sessions"}"#.to_string()];
    for key in index.manifest().sessions.keys().take(3) {
        requests.push(serde_json::json!({"query": "session", "key": key}).to_string());
        requests.push(serde_json::json!({"query": "trace", "key": key}).to_string());
    }
    let answers = std::iter::once(index.search_json(&request))
        .chain(requests.iter().map(|r| index.views_json(r)));
    for out in answers {
        assert!(
            serde_json::from_str::<serde_json::Value>(&out).is_ok(),
            "the core answers JSON"
        );
    }
}

/// A scratch store folder for one reader.
fn scratch(tag: &str) -> PathBuf {
    let dir = home().with_extension(tag);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// `policy.json`: read, and a policy that reads saves and reads back equal.
pub fn policy(bytes: &[u8]) {
    let dir = scratch("policy");
    if std::fs::write(dir.join(store_policy::POLICY), bytes).is_err() {
        return;
    }
    if let Ok(p) = store_policy::load(&dir) {
        if store_policy::save(&dir, &p).is_ok() {
            assert_eq!(store_policy::load(&dir).ok(), Some(p), "policy round trip");
        }
    }
}

/// `indexer.json` (the ledger's base): read for its store (anything else is
/// the default), and a change journaled on top of what it read reads back
/// equal.
pub fn indexer_state(bytes: &[u8]) {
    let dir = scratch("state");
    let _ = std::fs::remove_file(dir.join(store_state::JOURNAL));
    if std::fs::write(dir.join(store_state::STATE), bytes).is_err() {
        return;
    }
    let id = serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| v["store_id"].as_str().map(str::to_string))
        .unwrap_or_else(|| "fuzz".to_string());
    // Whatever the base holds, a change journaled on top of it reads back.
    let before = store_state::read(&dir, &id);
    let mut after = before.clone();
    after.last_sweep_ms = after.last_sweep_ms.wrapping_add(1);
    if store_state::write(&dir, &before, &after).is_ok() {
        assert_eq!(
            store_state::read(&dir, &id),
            after,
            "indexer state round trip"
        );
    }
}

/// `ledger.jsonl` (the ledger's journal over an empty base): whatever it
/// holds reads without a panic, and a change written on top of what it read
/// is stored or refused with an error, never a panic.
pub fn ledger(bytes: &[u8]) {
    let dir = scratch("ledger");
    let _ = std::fs::remove_file(dir.join(store_state::STATE));
    if std::fs::write(dir.join(store_state::JOURNAL), bytes).is_err() {
        return;
    }
    let before = store_state::read(&dir, "fuzz");
    let mut after = before.clone();
    after.store_id = "fuzz".to_string();
    after.last_sweep_ms = after.last_sweep_ms.wrapping_add(1);
    let _ = store_state::write(&dir, &before, &after);
    let _ = store_state::read(&dir, "fuzz");
}

/// Valid inputs of the targets whose inputs are built from the demo (the
/// seeds of their stable proptest equivalents): `segment`,
/// `report_payload`, `extract_dsh` (the demo session, decompressed),
/// `extract_gemini`, `extract_copilot`, `extract_qwen`, `extract_opencode`
/// (their seed files; OpenCode's is SQL).
pub fn demo_seed(target: &str) -> Vec<u8> {
    let demo = demo();
    match target {
        "segment" => demo.segment.clone(),
        "report_payload" => serde_json::json!({
            "manifest": serde_json::to_string(&*demo.manifest).unwrap_or_default(),
            "generations": demo.bodies,
            "query": "tide",
        })
        .to_string()
        .into_bytes(),
        "extract_dsh" => unit_of(Source::Dsh)
            .and_then(|u| u.files.first().and_then(|f| std::fs::read(f).ok()))
            .and_then(|z| zstd::stream::decode_all(&z[..]).ok())
            .unwrap_or_default(),
        "extract_gemini" => NEXT_SEEDS[0].1.to_vec(),
        "extract_qwen" => NEXT_SEEDS[1].1.to_vec(),
        "extract_copilot" => NEXT_SEEDS[2].1.to_vec(),
        "extract_opencode" => OPENCODE_SEED.as_bytes().to_vec(),
        _ => Vec::new(),
    }
}
