//! A long-lived indexer's live appends (issue #11: "a live append to one
//! session at 10 GB ≤ 64 KiB written besides its generation"): with
//! `Indexer::keep_live_in_memory` (what `recall serve` uses), an append
//! writes its generation and the catalog's bookkeeping only — its
//! extraction checkpoint stays in memory and its index segment is deferred
//! to the window's — while every search still finds every session (the
//! deferred ones are scanned), and losing what was held costs only speed.

mod store_support;

use recall_core::model::Shard;
use recall_core::search::Budgets;
use recall_core::{Request, Response};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::extract::{self, Roots};
use recall_host::index::{IndexOptions, Indexer, ShardHook};
use recall_host::store::segments::Deferral;
use recall_host::store::Store;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use store_support::*;

const NOW: i64 = 1_793_000_000_000;

fn open(home: &Path) -> Arc<Store> {
    Arc::new(Store::open(&store_dir(home)).expect("store"))
}

/// A serve-like indexer: live shards go to `arena`, live state stays in
/// memory.
fn live_indexer(store: &Arc<Store>, home: &Path, arena: &Arc<Arena>) -> Indexer {
    let mut opts = IndexOptions::new(Roots::resolve(home, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    let ix = Indexer::new(store.clone(), opts);
    let a = arena.clone();
    ix.on_live_shard(ShardHook::new(move |name, shard| a.insert(name, shard)));
    ix.keep_live_in_memory();
    ix
}

fn search(store: &Arc<Store>, arena: &Arc<Arena>, q: &str, sort: &str) -> Response {
    let catalog = StoreCatalog::new(store.clone(), arena.clone());
    let mut r = Request::new(q);
    r.sort = Some(sort.into());
    r.scope = Some("all".into());
    r.limit = Some("100".into());
    let mut resp = catalog
        .search(&r.parse().expect("query"), false, Budgets::default())
        .expect("search");
    resp.took_ms = 0;
    resp
}

fn append(path: &Path, n: usize, m: usize, text: &str) {
    let line = pi_message(
        &format!("{n:04x}{m:04x}"),
        Some(&format!("{n:04x}{:04x}", m - 1)),
        "user",
        text,
        1_790_000_000_000 + n as i64 * 3_600_000 + m as i64 * 1000,
    );
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open")
        .write_all(line.as_bytes())
        .expect("append");
}

/// Every file under `dir`: relative path → (inode, length).
fn files_of(dir: &Path) -> BTreeMap<String, (u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).expect("read_dir").flatten() {
            let m = e.metadata().expect("metadata");
            if m.is_dir() {
                todo.push(e.path());
            } else {
                let rel = e
                    .path()
                    .strip_prefix(dir)
                    .expect("inside")
                    .display()
                    .to_string();
                out.insert(rel, (m.ino(), m.len()));
            }
        }
    }
    out
}

/// Bytes written between two listings, by kind of file.
fn written(before: &BTreeMap<String, (u64, u64)>, dir: &Path) -> BTreeMap<&'static str, u64> {
    let mut by_kind = BTreeMap::new();
    for (rel, (ino, len)) in files_of(dir) {
        let w = match before.get(&rel) {
            Some((i, l)) if *i == ino => len.saturating_sub(*l),
            _ => len,
        };
        if w == 0 {
            continue;
        }
        let kind = if rel.starts_with("generations/") && rel.ends_with(".json") {
            "generation"
        } else if rel.ends_with(".grams") {
            "grams"
        } else if rel.starts_with("segments/") {
            "segment"
        } else if rel == "segments.json" {
            "segment list"
        } else if rel.starts_with("checkpoints/") {
            "checkpoint"
        } else if rel.starts_with("metas/") {
            "meta"
        } else if rel.starts_with("snapshots/") {
            "snapshot"
        } else {
            match rel.as_str() {
                "catalog.json" => "catalog",
                "ledger.jsonl" | "indexer.json" => "ledger",
                "writer.lock" => "lock",
                other => panic!("unexpected write: {other}"),
            }
        };
        *by_kind.entry(kind).or_default() += w;
    }
    by_kind
}

fn keys(r: &Response) -> Vec<String> {
    r.sessions.iter().map(|s| s.session_key.clone()).collect()
}

fn checkpoint_files(store: &Store) -> Vec<PathBuf> {
    fs::read_dir(store.dir().join("checkpoints"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Session 1's records as stored, and as a full extraction gives them.
fn stored_and_full(store: &Store, home: &Path) -> (Value, Value) {
    let m = store.current().expect("manifest");
    let e = &m.sessions[&session_key(1)];
    let shard: Shard = serde_json::from_slice(
        &store
            .generation_bytes(&e.generation_file)
            .expect("generation"),
    )
    .expect("shard");
    let full = extract::discover(&Roots::resolve(home, |_| None))
        .iter()
        .filter_map(|u| extract::extract(u).ok().flatten())
        .find(|x| x.meta.key() == session_key(1))
        .expect("the session extracts");
    (
        serde_json::to_value(&shard.records).expect("json"),
        serde_json::to_value(&full.records).expect("json"),
    )
}

#[test]
fn a_live_append_writes_only_its_generation_and_the_bookkeeping() {
    let home = temp_dir("live-append");
    let paths: Vec<PathBuf> = (1..=40).map(|n| write_session(&home, n, 3, 400)).collect();
    let store = open(&home);
    let arena = Arc::new(Arena::default());
    let ix = live_indexer(&store, &home, &arena);
    ix.sweep().expect("backfill");
    assert!(
        uncovered(&home).is_empty(),
        "the backfill is indexed at once"
    );
    let dir = store.dir().to_path_buf();

    // Two appends to two sessions, one sweep each, as an agent would.
    let mut total = BTreeMap::<&str, u64>::new();
    for (i, n) in [3usize, 9].into_iter().enumerate() {
        let before = files_of(&dir);
        append(&paths[n - 1], n, 4, &format!("liveword{i} one more line"));
        let r = ix.sweep().expect("sweep");
        assert_eq!(r.units - r.unchanged, 1, "{r:?}");
        let w = written(&before, &dir);
        eprintln!("live append {i}: {w:?}");
        assert!(w.contains_key("generation"), "{w:?}");
        for k in ["grams", "segment", "checkpoint"] {
            assert!(!w.contains_key(k), "a live append wrote a {k}: {w:?}");
        }
        let besides: u64 = w
            .iter()
            .filter(|(k, _)| **k != "generation")
            .map(|(_, v)| v)
            .sum();
        assert!(
            besides < 16 << 10,
            "{besides} B besides the generation: {w:?}"
        );
        for (k, v) in w {
            *total.entry(k).or_default() += v;
        }
    }
    assert_eq!(
        uncovered(&home).len(),
        2,
        "both appends wait for the window's segment"
    );
    assert_eq!(ix.live_pending(), (true, 2));

    // No false negative meanwhile: the deferred sessions are scanned, from
    // the arena or (another process, a fresh arena) from their generation
    // without any sidecar.
    let fresh = Arc::new(Arena::default());
    for (q, expect) in [
        ("liveword0", 1),
        ("liveword1", 1),
        ("liveword0 liveword1", 0),
    ] {
        for sort in ["newest", "relevance"] {
            assert_eq!(
                search(&store, &arena, q, sort).sessions.len(),
                expect,
                "{q} {sort}"
            );
            assert_eq!(
                search(&store, &fresh, q, sort).sessions.len(),
                expect,
                "{q} {sort}"
            );
        }
    }
    let probes = ["liveword0", "one more line", "message", "pi", "line"];
    let deferred: Vec<Vec<String>> = probes
        .iter()
        .flat_map(|q| ["newest", "relevance"].map(|s| keys(&search(&store, &fresh, q, s))))
        .collect();

    // The window closes: one segment covers both sessions, the checkpoints
    // go to disk, and every answer is the same.
    let before = files_of(&dir);
    ix.flush_live();
    let w = written(&before, &dir);
    eprintln!("the window's flush: {w:?} (after {total:?})");
    assert!(uncovered(&home).is_empty(), "the flush indexes the window");
    assert!(w.contains_key("checkpoint"), "{w:?}");
    assert!(
        !w.contains_key("grams"),
        "a covered generation needs no sidecar: {w:?}"
    );
    assert_eq!(checkpoint_files(&store).len(), 2);
    assert_eq!(ix.live_pending(), (false, 0));
    let covered: Vec<Vec<String>> = probes
        .iter()
        .flat_map(|q| ["newest", "relevance"].map(|s| keys(&search(&store, &fresh, q, s))))
        .collect();
    assert_eq!(deferred, covered);
    check_store(&home).expect("the store is sound");
}

#[test]
fn checkpoints_held_in_memory_resume_and_losing_them_costs_only_speed() {
    let home = temp_dir("live-cp");
    let path = write_session(&home, 1, 6, 200);
    let store = open(&home);
    let arena = Arc::new(Arena::default());
    let ix = live_indexer(&store, &home, &arena);
    ix.sweep().expect("backfill");
    append(&path, 1, 7, "first appended line");
    assert_eq!(ix.sweep().expect("sweep").resumed, 0, "no checkpoint yet");
    assert!(checkpoint_files(&store).is_empty(), "held in memory");
    append(&path, 1, 8, "second appended line");
    let r = ix.sweep().expect("sweep");
    assert_eq!(r.resumed, 1, "resumed from memory: {r:?}");
    let (stored, full) = stored_and_full(&store, &home);
    assert_eq!(stored, full);
    // Written out; then one more append held in memory only, and the
    // process dies (no drop, no flush).
    ix.flush_live();
    assert_eq!(checkpoint_files(&store).len(), 1);
    append(&path, 1, 9, "third appended line");
    assert_eq!(ix.sweep().expect("sweep").resumed, 1);
    std::mem::forget(ix);

    // The next indexer resumes from the older checkpoint on disk: exact.
    let ix = live_indexer(&store, &home, &arena);
    append(&path, 1, 10, "fourth appended line");
    let r = ix.sweep().expect("sweep");
    assert_eq!(
        r.resumed, 1,
        "the older checkpoint on disk still resumes: {r:?}"
    );
    let (stored, full) = stored_and_full(&store, &home);
    assert_eq!(stored, full);
    // Dropping the indexer writes out what it held.
    let before = fs::read(&checkpoint_files(&store)[0]).expect("checkpoint");
    drop(ix);
    assert_ne!(
        fs::read(&checkpoint_files(&store)[0]).expect("checkpoint"),
        before
    );

    // Without any checkpoint the unit is read whole: exact too.
    for p in checkpoint_files(&store) {
        fs::remove_file(p).expect("remove");
    }
    let ix = live_indexer(&store, &home, &arena);
    append(&path, 1, 11, "fifth appended line");
    assert_eq!(ix.sweep().expect("sweep").resumed, 0);
    let (stored, full) = stored_and_full(&store, &home);
    assert_eq!(stored, full);
    assert_eq!(search(&store, &arena, "fifth", "newest").sessions.len(), 1);
}

#[test]
fn deferral_is_bounded_and_changes_no_answer() {
    let home = temp_dir("live-bound");
    for n in 1..=30 {
        write_session(&home, n, 2, 300);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let arena = Arc::new(Arena::default());
    let probes = ["message", "pi", "0e000007"];
    let answers = |s: &Arc<Store>| -> Vec<Vec<String>> {
        probes
            .iter()
            .flat_map(|q| ["newest", "relevance"].map(|o| keys(&search(s, &arena, q, o))))
            .collect()
    };
    let indexed = answers(&store);
    // Every generation uncovered (the list lost): more than a deferral
    // allows is indexed at once ...
    fs::remove_file(store.dir().join("segments.json")).expect("rm list");
    let r = store
        .maintain_segments_deferring(
            Vec::new(),
            Some(Deferral {
                generations: 29,
                bytes: u64::MAX,
            }),
        )
        .expect("maintain");
    assert_eq!((r.deferred, r.written), (0, 1), "{r:?}");
    assert!(uncovered(&home).is_empty());
    // ... and within it nothing is written, and searches scan.
    fs::remove_file(store.dir().join("segments.json")).expect("rm list");
    let r = store
        .maintain_segments_deferring(
            Vec::new(),
            Some(Deferral {
                generations: 30,
                bytes: u64::MAX,
            }),
        )
        .expect("maintain");
    assert_eq!((r.deferred, r.written), (30, 0), "{r:?}");
    assert_eq!(uncovered(&home).len(), 30);
    assert_eq!(answers(&store), indexed);
}
