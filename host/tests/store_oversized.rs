//! A session bigger than the load budget is searched, and preparing any shard
//! is bounded by the deadline (issue #12 item 2), over a real store: the
//! daemon's catalog with small budgets, under a clock that follows the work
//! the arena's chunked loads did (never wall time), so "within the deadline"
//! is exact: no page may do more than its deadline's worth of work plus one
//! chunk. Before, a shard over the budget was never loaded (a session only
//! it held was never found) and a shard under it was prepared whole.

mod store_support;

use recall_core::response::PartialReason;
use recall_core::search::Budgets;
use recall_core::{Request, Response};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::chunked::CHUNK_BYTES;
use recall_host::store::Store;
use std::sync::Arc;
use store_support::*;

/// Bytes of chunked work per millisecond of the test clock.
const BYTES_PER_MS: u64 = 256 << 10;

/// A home of five sessions; session 3 is ~5 MB (many chunks), the rest a
/// few KB.
fn setup(tag: &str) -> (TempDir, Arc<Store>) {
    let home = temp_dir(tag);
    for n in [1, 2, 4, 5] {
        write_session(&home, n, 3, 200);
    }
    write_session(&home, 3, 300, 8_000);
    run_ok(&home, &["index"], 0);
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let big = &store.current().unwrap().sessions[&session_key(3)];
    assert!(big.bytes > 4 * CHUNK_BYTES as u64, "{} bytes", big.bytes);
    (home, store)
}

/// A daemon's catalog from a fresh process, with a small arena (so the big
/// shard is bigger than the arena's budget too).
fn daemon(store: &Arc<Store>) -> (StoreCatalog, Arc<Arena>) {
    let arena = Arc::new(Arena::new(1 << 20));
    (StoreCatalog::new(store.clone(), arena.clone()), arena)
}

fn request(q: &str, limit: usize, cursor: Option<String>) -> recall_core::Query {
    let mut r = Request::new(q);
    r.limit = Some(limit.to_string());
    r.cursor = cursor;
    r.parse().unwrap()
}

/// Pages through `q` as a client does (following cursors, retrying a
/// timeout from page 1): the session keys shown, and each page's reason.
fn page_through(
    catalog: &StoreCatalog,
    arena: &Arena,
    q: &str,
    limit: usize,
    budgets: Budgets,
) -> (Vec<String>, Vec<Option<PartialReason>>) {
    let clock = || arena.stats().worked_bytes / BYTES_PER_MS;
    let chunk_ms = (CHUNK_BYTES as u64).div_ceil(BYTES_PER_MS);
    let mut cursor = None;
    let mut keys = Vec::new();
    let mut reasons = Vec::new();
    for _ in 0..500 {
        let r: Response = catalog
            .search_with_clock(&request(q, limit, cursor.clone()), false, budgets, &clock)
            .unwrap();
        // One chunk past the deadline at most (plus the record that ends
        // it, and the clock's rounding).
        assert!(
            r.took_ms <= budgets.scan_ms + chunk_ms + 2,
            "a page did {} ms of work for a {} ms deadline",
            r.took_ms,
            budgets.scan_ms
        );
        reasons.push(r.partial_reason);
        if r.partial_reason == Some(PartialReason::Timeout) {
            cursor = None;
            keys.clear();
            continue;
        }
        keys.extend(r.sessions.iter().map(|s| s.session_key.clone()));
        match r.cursor {
            Some(c) => cursor = Some(c),
            None => return (keys, reasons),
        }
    }
    panic!("paging never ended: {:?}", &reasons[..20]);
}

/// The answer with no budget at all.
fn full(store: &Arc<Store>, q: &str) -> Vec<String> {
    let (catalog, _) = daemon(store);
    let unbounded = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    let r = catalog
        .search(&request(q, 100, None), false, unbounded)
        .unwrap();
    assert_eq!(r.partial_reason, None);
    r.sessions.iter().map(|s| s.session_key.clone()).collect()
}

#[test]
fn a_session_bigger_than_the_load_budget_is_found_on_a_later_page() {
    let (_home, store) = setup("oversized-found");
    let budgets = Budgets {
        scan_ms: 8,
        fresh_bytes: 1 << 20,
        ..Budgets::default()
    };
    // "w3x599": only the big session holds it.
    let (catalog, arena) = daemon(&store);
    let (keys, reasons) = page_through(&catalog, &arena, "w3x599", 20, budgets);
    assert_eq!(keys, [session_key(3)], "{reasons:?}");
    assert!(
        reasons.len() > 2
            && reasons[..reasons.len() - 1]
                .iter()
                .all(|r| *r == Some(PartialReason::Oversized)),
        "prepared over several pages, each ending with a cursor: {reasons:?}"
    );
    assert!(arena.stats().oversized >= 1, "kept beside the arena");
    // A word every session holds, two per page, from a fresh process: the
    // pages add up to the full answer, the big session in its place.
    let (catalog, arena) = daemon(&store);
    let (keys, reasons) = page_through(&catalog, &arena, "lorem", 2, budgets);
    assert_eq!(keys, full(&store, "lorem"), "{reasons:?}");
    assert!(keys.contains(&session_key(3)));
    assert!(
        reasons.contains(&Some(PartialReason::Oversized)),
        "{reasons:?}"
    );
}

#[test]
fn a_shard_within_the_budget_is_prepared_in_chunks_across_retries() {
    let (_home, store) = setup("chunked-within");
    // The budget admits the big shard, the deadline is a few chunks.
    let budgets = Budgets {
        scan_ms: 8,
        fresh_bytes: 64 << 20,
        ..Budgets::default()
    };
    let (catalog, arena) = daemon(&store);
    let (keys, reasons) = page_through(&catalog, &arena, "lorem", 20, budgets);
    assert_eq!(keys, full(&store, "lorem"));
    assert!(
        reasons
            .iter()
            .filter(|r| **r == Some(PartialReason::Timeout))
            .count()
            >= 2,
        "the big shard took several deadlines: {reasons:?}"
    );
    assert_eq!(reasons.last(), Some(&None));
    assert_eq!(arena.stats().pending, 0, "nothing left half-prepared");
}
