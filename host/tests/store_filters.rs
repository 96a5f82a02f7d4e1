//! Trigram filter sidecars: a store that lacks them (written before filters
//! existed, or a lost file) gets them back from the first search that loads
//! the shard (an older format is replaced), and later searches need no
//! shard to rule a session out.

mod store_support;

use recall_core::search::Budgets;
use recall_core::Request;
use recall_host::arena::Arena;
use recall_host::catalog::StoreCatalog;
use recall_host::store::{generations, Store};
use std::fs;
use std::sync::Arc;
use store_support::*;

#[test]
fn missing_filter_sidecars_are_rewritten_by_search() {
    let home = temp_dir("filters");
    write_session(&home, 1, 3, 200);
    write_session(&home, 2, 3, 200);
    run_ok(&home, &["index"], 0);
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let m = store.current().unwrap();
    let sidecars: Vec<_> = m
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
            // An older sidecar (a SHA-256 prefix, filters of version 1).
            let body = [1u8, 23, 8, 0, 0, 0];
            let mut old = recall_core::naming::hash16(&body).into_bytes();
            old.extend_from_slice(&body);
            fs::write(p, old).unwrap();
        }
    }
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let r = catalog.search(
        &Request::new("nothing-like-this-anywhere").parse().unwrap(),
        false,
        Budgets::default(),
    );
    assert!(r.unwrap().sessions.is_empty());
    for p in &sidecars {
        let body = store.grams_bytes(&name_of(p)).expect("search restored it");
        assert!(
            recall_core::ShardGrams::from_bytes(&body).is_some(),
            "{p:?} is current"
        );
    }
    // A fresh process (empty arena) now rules both sessions out from the
    // sidecars alone: nothing is loaded.
    let cold = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let r = cold.search(
        &Request::new("nothing-like-this-anywhere").parse().unwrap(),
        false,
        Budgets::default(),
    );
    assert!(r.unwrap().sessions.is_empty());
    assert_eq!(cold.arena().stats().shards, 0, "no shard was loaded");
}

fn name_of(sidecar: &std::path::Path) -> String {
    sidecar
        .with_extension("json")
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}
