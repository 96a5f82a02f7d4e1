//! A damaged store never hides a session silently (issue #12, items 4–5):
//! a generation file that is deleted, truncated or overwritten makes the
//! answer `partial` (`unreadable`) instead of dropping the session, and a
//! filter sidecar copied from another generation is refused, not trusted.

mod store_support;

use recall_core::response::{PartialReason, State};
use recall_core::search::Budgets;
use recall_core::{Request, Response};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::store::{generations, Store};
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use store_support::*;

fn setup(tag: &str) -> (TempDir, Arc<Store>, Vec<PathBuf>) {
    let home = temp_dir(tag);
    write_session(&home, 1, 3, 200);
    write_session(&home, 2, 3, 200);
    run_ok(&home, &["index"], 0);
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let m = store.current().unwrap();
    let gens = [session_key(1), session_key(2)]
        .iter()
        .map(|k| {
            let name = &m.sessions[k].generation_file;
            generations::path(store.generations_dir(), name).unwrap()
        })
        .collect();
    (home, store, gens)
}

/// A search from a fresh process (empty arena).
fn search(store: &Arc<Store>, q: &str) -> Response {
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    catalog
        .search(&Request::new(q).parse().unwrap(), false, Budgets::default())
        .unwrap()
}

fn keys(r: &Response) -> Vec<String> {
    r.sessions.iter().map(|s| s.session_key.clone()).collect()
}

#[test]
fn a_foreign_filter_sidecar_is_refused() {
    let (_home, store, gens) = setup("foreign-grams");
    let sidecar = |p: &PathBuf| p.with_extension("grams");
    assert!(sidecar(&gens[1]).exists());
    fs::copy(sidecar(&gens[0]), sidecar(&gens[1])).unwrap();
    let r = search(&store, "w2x0");
    assert_eq!(
        keys(&r),
        [session_key(2)],
        "the copied filter hid the match"
    );
    assert_eq!(r.state, State::Ready);
}

#[test]
fn a_deleted_generation_makes_the_answer_partial() {
    let (_home, store, gens) = setup("deleted-gen");
    fs::remove_file(&gens[1]).unwrap();
    let r = search(&store, "lorem");
    assert_eq!(keys(&r), [session_key(1)]);
    assert_eq!(r.state, State::Partial);
    assert_eq!(r.partial_reason, Some(PartialReason::Unreadable));
}

#[test]
fn a_truncated_generation_makes_the_answer_partial() {
    let (_home, store, gens) = setup("truncated-gen");
    let bytes = fs::read(&gens[1]).unwrap();
    fs::write(&gens[1], &bytes[..bytes.len() / 2]).unwrap();
    let r = search(&store, "lorem");
    assert_eq!(keys(&r), [session_key(1)]);
    assert_eq!(r.partial_reason, Some(PartialReason::Unreadable));
}

#[test]
fn an_overwritten_generation_is_not_searched_as_the_session() {
    let (_home, store, gens) = setup("overwritten-gen");
    // Another valid shard under this generation's name.
    fs::copy(&gens[0], &gens[1]).unwrap();
    let r = search(&store, "lorem");
    assert_eq!(
        keys(&r),
        [session_key(1)],
        "session 2 must not answer with 1's text"
    );
    assert_eq!(r.partial_reason, Some(PartialReason::Unreadable));
}

#[test]
fn the_next_sweep_re_extracts_a_damaged_session() {
    for (tag, damage) in [("requeue-deleted", 0), ("requeue-truncated", 1)] {
        let (home, store, gens) = setup(tag);
        if damage == 0 {
            fs::remove_file(&gens[1]).unwrap();
        } else {
            let bytes = fs::read(&gens[1]).unwrap();
            fs::write(&gens[1], &bytes[..bytes.len() - 10]).unwrap();
        }
        assert_eq!(
            search(&store, "lorem").partial_reason,
            Some(PartialReason::Unreadable)
        );
        run_ok(&home, &["index"], 0);
        let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
        let r = search(&store, "lorem");
        assert_eq!(r.state, State::Ready, "{tag}");
        assert_eq!(keys(&r), [session_key(2), session_key(1)], "{tag}");
    }
}

/// A generation overwritten at its own length is noticed by the search that
/// reads it (exit 3, saying what happened, not blaming a budget) and read
/// again from the transcript by the next sweep, which says so.
#[test]
fn a_same_length_overwrite_is_reported_and_re_extracted_at_the_next_sweep() {
    let (home, _store, gens) = setup("requeue-same-length");
    let mut bytes = fs::read(&gens[1]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'x' { b'y' } else { b'x' };
    fs::write(&gens[1], &bytes).unwrap();
    let out = run(&home, &["search", "lorem"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert!(!stderr.contains("load budget"), "{stderr}");
    let text = run_ok(&home, &["index"], 0);
    assert!(text.contains("read again: 1 session"), "{text}");
    let out = run(&home, &["search", "--json", "lorem"]);
    assert_eq!(out.status.code(), Some(0));
    let r: Response = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.state, State::Ready);
    assert_eq!(keys(&r), [session_key(2), session_key(1)]);
}
