//! Index segments in the store: written after each sweep that changes the
//! manifest, a small one per live append, merged under the tiered policy,
//! collected once unlisted, never trusted when torn (the search scans and the
//! next sweep rebuilds), and answers identical to a search without them.

mod store_support;

use recall_core::search::Budgets;
use recall_core::{Request, Response};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::store::segments::{self, MERGE_FACTOR};
use recall_host::store::Store;
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use store_support::*;

fn open(home: &Path) -> Arc<Store> {
    Arc::new(Store::open(&store_dir(home)).unwrap())
}

fn search(store: &Arc<Store>, q: &str, sort: &str) -> Response {
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let mut r = Request::new(q);
    r.sort = Some(sort.into());
    r.scope = Some("all".into());
    r.limit = Some("100".into());
    let mut resp = catalog
        .search(&r.parse().unwrap(), false, Budgets::default())
        .unwrap();
    resp.took_ms = 0;
    resp
}

/// Every generation of the manifest is covered by exactly one live segment.
fn assert_covered(store: &Store) {
    let m = store.current().unwrap();
    let segs = store.live_segments();
    let list = store.segment_list().unwrap();
    assert_eq!(
        segs.len(),
        list.segments.len(),
        "every listed segment opens"
    );
    let mut seen = HashSet::new();
    for s in &segs {
        for n in s.names() {
            if m.sessions.values().any(|e| &e.generation_file == n) {
                assert!(seen.insert(n.clone()), "{n} is covered twice");
            }
        }
    }
    for e in m.sessions.values() {
        assert!(
            seen.contains(&e.generation_file),
            "{} is not covered",
            e.generation_file
        );
    }
}

fn append(path: &Path, n: usize, m: usize, text: &str) {
    let id = format!("{n:04x}{m:04x}");
    let parent = format!("{n:04x}{:04x}", m - 1);
    let ts = 1_790_000_000_000 + n as i64 * 3_600_000 + m as i64 * 1000;
    let line = pi_message(&id, Some(&parent), "user", text, ts);
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
}

#[test]
fn segments_cover_the_store_and_change_no_answer() {
    let home = temp_dir("seg-cover");
    for n in 1..=6 {
        write_session(&home, n, 3, 300);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let queries = ["lorem", "w3x1", "w5x0 ipsum", "am", "nothing-here", "x"];
    let mut with = Vec::new();
    for q in queries {
        for sort in ["newest", "relevance"] {
            with.push(serde_json::to_string(&search(&store, q, sort)).unwrap());
        }
    }
    assert!(with[2].contains(&session_key(3)));
    // Without the list, nothing is covered: every session is filtered and
    // scanned. The answers are the same bytes.
    fs::remove_file(store_dir(&home).join(segments::LIST)).unwrap();
    let bare = open(&home);
    assert!(bare.live_segments().is_empty());
    let mut without = Vec::new();
    for q in queries {
        for sort in ["newest", "relevance"] {
            without.push(serde_json::to_string(&search(&bare, q, sort)).unwrap());
        }
    }
    assert_eq!(with, without);
}

#[test]
fn a_live_append_writes_a_small_segment_and_small_ones_merge() {
    let home = temp_dir("seg-append");
    let mut paths = Vec::new();
    for n in 1..=8 {
        paths.push(write_session(&home, n, 2, 2000));
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let first = store.segment_list().unwrap();
    assert_eq!(first.segments.len(), 1);
    let big = first.segments[0].clone();
    assert_eq!(big.generations, 8);
    let mut most = 0;
    for (round, path) in paths.iter().enumerate().take(MERGE_FACTOR) {
        // Each round appends to another session.
        let n = round + 1;
        append(path, n, 4, &format!("freshword{round}"));
        run_ok(&home, &["index"], 0);
        let store = open(&home);
        assert_covered(&store);
        let list = store.segment_list().unwrap();
        most = most.max(list.segments.len());
        let r = search(&store, &format!("freshword{round}"), "newest");
        assert_eq!(r.sessions.len(), 1, "round {round}");
        assert_eq!(r.sessions[0].session_key, session_key(n));
        if round == 0 {
            // The big segment stays; the append got a segment of its own.
            assert!(list.segments.contains(&big), "{list:?}");
            let small = list.segments.iter().find(|s| s != &&big).unwrap();
            assert_eq!(small.generations, 1);
            let bytes = fs::metadata(store.segments_dir().join(&small.name))
                .unwrap()
                .len();
            assert!(bytes < 64 << 10, "a one-session segment is small: {bytes}");
        }
    }
    // The pass that lists a tier's MERGE_FACTOR-th segment merges the tier
    // (from postings, so a live append can afford it).
    assert_eq!(
        most,
        MERGE_FACTOR - 1,
        "small segments accumulate up to a tier"
    );
    let store = open(&home);
    let list = store.segment_list().unwrap();
    assert_eq!(
        list.segments.len(),
        2,
        "the full tier was merged into one segment, beside the newest: {list:?}"
    );
    // The merged segment still indexes the copy of the last round's session
    // that the append superseded (7 of its 8 generations are live).
    assert_covered(&store);
    assert_eq!(list.segments.iter().map(|s| s.generations).sum::<u64>(), 9);
    // Unlisted segments go once past the grace period.
    let store = open(&home);
    let listed: HashSet<String> = store
        .segment_list()
        .unwrap()
        .segments
        .into_iter()
        .map(|s| s.name)
        .collect();
    let on_disk = |store: &Store| -> HashSet<String> {
        fs::read_dir(store.segments_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert!(
        on_disk(&store).len() > listed.len(),
        "old segments wait for the grace"
    );
    store.collect_segments(0);
    assert_eq!(on_disk(&store), listed);
}

#[test]
fn a_merge_of_fresh_segments_equals_one_build_over_their_shards() {
    let home = temp_dir("seg-fresh-merge");
    for n in 1..=8 {
        write_session(&home, n, 2, 500);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let mut gens: Vec<(String, u64)> = store
        .current()
        .unwrap()
        .sessions
        .values()
        .map(|e| (e.generation_file.clone(), e.bytes))
        .collect();
    gens.sort();
    assert_eq!(gens.len(), 8);
    let shard = |g: &str| {
        recall_core::PreparedShard::from_bytes(&store.generation_bytes(g).unwrap()).unwrap()
    };
    // Four segments of two shards each, as four worker drafts would be.
    let mut fresh = Vec::new();
    for pair in gens.chunks(2) {
        let mut d = segments::SegmentDraft::default();
        for (g, b) in pair {
            d.add(g, &shard(g), *b);
        }
        fresh.push(store.write_draft(d).unwrap().unwrap().0);
    }
    let merged = store.merge_fresh(&fresh).unwrap().unwrap();
    assert_eq!(merged.generations, 8);
    assert_eq!(
        merged.source_bytes,
        gens.iter().map(|(_, b)| b).sum::<u64>()
    );
    let mut whole = segments::SegmentDraft::default();
    for (g, b) in &gens {
        whole.add(g, &shard(g), *b);
    }
    let whole = store.write_draft(whole).unwrap().unwrap().0;
    assert_eq!(merged.name, whole.name, "the same bytes, so the same name");
    assert_eq!(store.merge_fresh(&[]).unwrap(), None);
}

#[test]
fn a_torn_segment_is_never_trusted_and_is_rebuilt() {
    let home = temp_dir("seg-torn");
    for n in 1..=4 {
        write_session(&home, n, 2, 300);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let list = store.segment_list().unwrap();
    let name = list.segments[0].name.clone();
    let path = store.segments_dir().join(&name);
    let bytes = fs::read(&path).unwrap();
    // Torn: the first half only. A search scans instead of trusting it.
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let fresh = open(&home);
    assert!(
        fresh.live_segments().is_empty(),
        "a torn segment never opens"
    );
    let r = search(&fresh, "w4x1", "newest");
    assert_eq!(r.sessions.len(), 1);
    assert_eq!(r.sessions[0].session_key, session_key(4));
    // The next sweep drops it and indexes its sessions again.
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let listed = store.segment_list().unwrap();
    assert!(
        listed.segments.iter().all(|s| s.name != name) || fs::read(&path).unwrap() == bytes,
        "the torn file is no longer listed (or was replaced whole)"
    );
    // An unlisted torn file is garbage: collected after the grace.
    store.collect_segments(0);
    assert!(
        fs::read(&path).map_or(true, |b| b == bytes),
        "the torn file was replaced or collected"
    );
}
