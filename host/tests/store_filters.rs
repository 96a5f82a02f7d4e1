//! Trigram filter sidecars and the read path: a search never writes (a lost
//! or outdated sidecar only means its shard is loaded), the index segments
//! rule sessions out without any sidecar, and the indexer — not a reader —
//! writes sidecars back when it indexes their generations again.

mod store_support;

use recall_core::search::Budgets;
use recall_core::Request;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::store::{generations, segments, Store};
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use store_support::*;

fn search(store: &Arc<Store>, q: &str) -> (Vec<String>, usize) {
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let r = catalog
        .search(&Request::new(q).parse().unwrap(), false, Budgets::default())
        .unwrap();
    let keys = r.sessions.iter().map(|s| s.session_key.clone()).collect();
    (keys, catalog.arena().stats().shards)
}

#[test]
fn searches_never_write_and_the_indexer_restores_sidecars() {
    let home = temp_dir("filters");
    write_session(&home, 1, 3, 200);
    write_session(&home, 2, 3, 200);
    run_ok(&home, &["index"], 0);
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let m = store.current().unwrap();
    let sidecars: Vec<PathBuf> = m
        .sessions
        .values()
        .map(|e| generations::grams_path(store.generations_dir(), &e.generation_file).unwrap())
        .collect();
    assert_eq!(sidecars.len(), 2);
    for (i, p) in sidecars.iter().enumerate() {
        assert!(p.exists(), "the indexer writes {p:?}");
        if i == 0 {
            fs::remove_file(p).unwrap();
        } else {
            // An older sidecar (filters of version 1, no generation binding).
            fs::write(p, [1u8, 23, 8, 0, 0, 0]).unwrap();
        }
    }
    let listing = || -> Vec<(String, u64)> {
        let mut v: Vec<_> = fs::read_dir(store.generations_dir())
            .unwrap()
            .flatten()
            .map(|e| {
                let m = e.metadata().unwrap();
                (e.file_name().to_string_lossy().into_owned(), m.len())
            })
            .collect();
        v.sort();
        v
    };
    let before = listing();
    // The segment rules both sessions out: nothing is loaded, nothing written.
    let (keys, loaded) = search(&store, "nothing-like-this-anywhere");
    assert!(keys.is_empty());
    assert_eq!(loaded, 0, "the segment answered, no shard was loaded");
    // Without segments and without usable sidecars the shards are loaded,
    // the answer is the same, and still nothing is written.
    fs::rename(
        store_dir(&home).join(segments::LIST),
        store_dir(&home).join("segments.aside"),
    )
    .unwrap();
    let bare = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let (keys, loaded) = search(&bare, "nothing-like-this-anywhere");
    assert!(keys.is_empty());
    assert_eq!(loaded, 2, "both shards had to be loaded");
    assert_eq!(search(&bare, "w2x0").0, [session_key(2)]);
    assert_eq!(listing(), before, "a search wrote nothing");
    // The next sweep indexes the uncovered generations again and, doing so,
    // writes their sidecars back.
    run_ok(&home, &["index"], 0);
    for p in &sidecars {
        let name = p.with_extension("json");
        let name = name.file_name().unwrap().to_string_lossy();
        let body = store.grams_bytes(&name).expect("the indexer restored it");
        assert!(
            recall_core::ShardGrams::from_bytes(&body).is_some(),
            "{p:?}"
        );
    }
}
