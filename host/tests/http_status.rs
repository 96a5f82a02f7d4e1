//! `/api/index/status` reports progress as it goes (Orca's contract):
//! `files_indexed` rises during a backfill instead of jumping at its end,
//! `last_reconcile_ms` says how current the index is, each degraded root
//! carries a typed reason, and unavailability is a value
//! (`availability: {state: "unavailable", reason: "not-ready"}` while the
//! first backfill runs) — on status always, on search answers when
//! unavailable.

mod http_support;

use http_support::{get, serve, TempDir, NOW};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::Roots;
use recall_host::http::ServeOptions;
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

fn generated_home(tag: &str) -> TempDir {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared/corpus-gen/gen.py");
    let out = TempDir::new(tag);
    let status = Command::new("python3")
        .arg(&gen)
        .arg("--out")
        .arg(&out.0)
        .args(["--seed", "7", "--sessions", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("python3");
    assert!(status.success(), "gen.py");
    out
}

#[test]
fn files_indexed_rises_during_the_backfill_and_the_index_is_not_ready_until_it_ends() {
    let out = generated_home("status-progress");
    let home = out.0.join("home");
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(&home, |_| None));
    opts.retention_days = 0;
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    let catalog = StoreCatalog::new(store, Arc::new(Arena::new(64 << 20)));
    let backend =
        Arc::new(IndexerHandle::new(indexer.clone(), catalog.clone(), true).watch_sources());
    let s = serve(
        Served::indexed(Arc::new(catalog), backend.clone()),
        ServeOptions::default(),
    );
    let before = get(s.addr(), "/api/index/status", &[]).json();
    assert_eq!(before["last_reconcile_ms"], Value::Null);
    assert_eq!(
        before["availability"],
        json!({"state": "unavailable", "reason": "not-ready"})
    );
    let started = recall_host::store::wall_ms();
    let sweep = std::thread::spawn(move || indexer.sweep().map(|_| ()));
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let mut searched_while_building = false;
    while !sweep.is_finished() {
        let st = get(s.addr(), "/api/index/status", &[]).json();
        if st["phase"] == "indexing" {
            let done = st["files_indexed"].as_u64().expect("files_indexed");
            let due = st["files_due"].as_u64().expect("files_due");
            seen.push((done, due));
            if st["building"] == true {
                assert_eq!(
                    st["availability"],
                    json!({"state": "unavailable", "reason": "not-ready"}),
                    "{st}"
                );
            }
            if !searched_while_building {
                let a = get(s.addr(), "/api/sessions/message-search?q=the", &[]).json();
                if a["state"] == "building" {
                    assert_eq!(
                        a["availability"],
                        json!({"state": "unavailable", "reason": "not-ready"}),
                        "{a}"
                    );
                    searched_while_building = true;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    sweep.join().expect("sweep thread").expect("backfill");
    assert!(
        searched_while_building,
        "no search answered during the backfill"
    );
    let after = get(s.addr(), "/api/index/status", &[]).json();
    let total = after["files_indexed"].as_u64().expect("total");
    assert!(total > 60, "{after}");
    // Each sample of the running sweep (after it planned: before, nothing
    // is due yet): done + due = the sweep's total, and the count only rises.
    seen.retain(|&(d, due)| d + due > 0);
    assert!(
        seen.iter().any(|&(d, _)| d > 0 && d < total),
        "no intermediate progress among {} samples",
        seen.len()
    );
    for w in seen.windows(2) {
        assert!(w[0].0 <= w[1].0, "files_indexed went down: {w:?}");
        assert_eq!(w[0].0 + w[0].1, w[1].0 + w[1].1, "{w:?}");
    }
    assert_eq!(after["phase"], "current");
    assert_eq!(after["availability"], json!({"state": "available"}));
    let reconciled = after["last_reconcile_ms"]
        .as_i64()
        .expect("last_reconcile_ms");
    let swept = after["last_sweep_ms"].as_i64().expect("last_sweep_ms");
    assert!(started <= reconciled && reconciled <= swept, "{after}");
    // A current index answers with the core's bytes only (as offline).
    let a = get(s.addr(), "/api/sessions/message-search?q=the", &[]).json();
    assert_eq!(a["availability"], Value::Null, "{a}");
}

#[test]
fn a_degraded_root_says_why_and_a_disabled_store_is_unavailable_as_a_value() {
    let home = TempDir::new("status-degraded");
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    // The demo has no legacy Kimi root: make it a file.
    let kimi = home.0.join(".kimi");
    std::fs::write(&kimi, b"not a directory").expect("write");
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.0.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(&home.0, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    indexer.sweep().expect("backfill");
    let catalog = StoreCatalog::new(store, Arc::new(Arena::new(64 << 20)));
    let backend = Arc::new(IndexerHandle::new(indexer, catalog.clone(), true).watch_sources());
    let s = serve(
        Served::indexed(Arc::new(catalog), backend.clone()),
        ServeOptions::default(),
    );
    let st = get(s.addr(), "/api/index/status", &[]).json();
    assert_eq!(st["phase"], "degraded", "{st}");
    assert_eq!(st["availability"], json!({"state": "available"}));
    let roots = st["degraded_roots"].as_array().expect("degraded_roots");
    assert_eq!(roots.len(), 1, "{st}");
    assert_eq!(roots[0]["source"], "kimi");
    assert_eq!(roots[0]["reason"], "not_a_directory");
    assert_eq!(roots[0]["dir"], kimi.display().to_string());
    assert!(roots[0]["message"].is_string());
    // Disabled through the policy: answers still come; unavailable says why.
    backend
        .set_policy(Some(false), None, false)
        .expect("policy");
    let st = get(s.addr(), "/api/index/status", &[]).json();
    assert_eq!(
        st["availability"],
        json!({"state": "unavailable", "reason": "disabled"})
    );
    let a = get(s.addr(), "/api/sessions/message-search?q=tide", &[]).json();
    assert_eq!(
        a["availability"],
        json!({"state": "unavailable", "reason": "disabled"})
    );
    assert!(!a["sessions"].as_array().expect("sessions").is_empty());
}
