//! Retention and garbage collection: superseded generations outlive the
//! snapshot grace period and no longer; orphans from dead writers go in a
//! full collection; retention drops old sessions with a tombstone.

mod store_support;

use recall_host::store::retention::GcMode;
use recall_host::store::snapshots::GRACE_MS;
use recall_host::store::Store;
use std::fs;
use std::thread::sleep;
use std::time::Duration;
use store_support::*;

const BETA: &str = "pi:0b2fb002-0000-7000-8000-000000000002";

fn gen_path(home: &std::path::Path, name: &str) -> std::path::PathBuf {
    store_dir(home).join("generations").join(name)
}

#[test]
fn superseded_generation_lives_through_the_grace_period_only() {
    let home = temp_dir("gc");
    let f = add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    let old = manifest(&home).unwrap().sessions[BETA]
        .generation_file
        .clone();
    let text = fs::read_to_string(&f).unwrap().replace("500", "5000");
    fs::write(&f, text).unwrap();
    run_ok(&home, &["index"], 0);
    let new = manifest(&home).unwrap().sessions[BETA]
        .generation_file
        .clone();
    assert_ne!(old, new);
    // Within the grace period the old generation stays: a snapshot names it.
    assert!(gen_path(&home, &old).exists());
    let store = Store::open(&store_dir(&home)).unwrap();
    store.collect_garbage(GRACE_MS, GcMode::Superseded).unwrap();
    assert!(gen_path(&home, &old).exists());
    // Past it, it goes (with its filters); the current one stays.
    sleep(Duration::from_millis(20));
    let r = store.collect_garbage(5, GcMode::Superseded).unwrap();
    assert_eq!(r.generations, 1);
    assert!(!gen_path(&home, &old).exists());
    assert!(!gen_path(&home, &old).with_extension("grams").exists());
    assert!(gen_path(&home, &new).exists());
    assert!(gen_path(&home, &new).with_extension("grams").exists());
    check_store(&home).unwrap();
    run_ok(&home, &["search", "--no-refresh", "5000"], 0);
}

#[test]
fn full_collection_removes_orphans_of_dead_writers() {
    let home = temp_dir("gc-full");
    add_fixture(&home, "pi-alpha.jsonl");
    run_ok(&home, &["index"], 0);
    let store = Store::open(&store_dir(&home)).unwrap();
    let orphan = store.write_generation(b"{\"orphan\":true}").unwrap();
    fs::write(store_dir(&home).join("generations/.tmp-deadbeef"), b"half").unwrap();
    sleep(Duration::from_millis(20));
    store.collect_garbage(5, GcMode::Superseded).unwrap();
    assert!(
        gen_path(&home, &orphan).exists(),
        "the cheap mode only knows what publishes superseded"
    );
    let r = store.collect_garbage(5, GcMode::Full).unwrap();
    assert_eq!(r.generations, 1);
    assert!(!gen_path(&home, &orphan).exists());
    assert!(!store_dir(&home).join("generations/.tmp-deadbeef").exists());
    check_store(&home).unwrap();
    run_ok(&home, &["search", "--no-refresh", "zebrafinch"], 0);
}

#[test]
fn retention_drops_old_sessions_and_zero_keeps_everything() {
    let home = temp_dir("retention");
    add_fixture(&home, "pi-alpha.jsonl"); // newest message 2026-10-01
    add_fixture(&home, "pi-gamma.jsonl"); // newest message 2026-10-03
                                          // --now 2026-10-12: with 10 days, alpha (11 days old) goes, gamma stays.
    let now = "1791763200000";
    let out = recall_with_retention(&home)
        .args(["--now", now, "--retention-days", "10", "index", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let m = manifest(&home).unwrap();
    assert_eq!(
        m.sessions.keys().collect::<Vec<_>>(),
        ["pi:0c3fc003-0000-7000-8000-000000000003"]
    );
    let again = recall_with_retention(&home)
        .args(["--now", now, "--retention-days", "10", "index", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        v["extracted"], 0,
        "a retired unit is not read again while unchanged"
    );
    // A later clock retires gamma too (from the manifest, with a tombstone).
    let later = recall_with_retention(&home)
        .args(["--now", "1791936000000", "--retention-days", "10", "index"])
        .output()
        .unwrap();
    assert!(later.status.success());
    let m = manifest(&home).unwrap();
    assert!(m.sessions.is_empty());
    assert!(m
        .tombstones
        .contains_key("pi:0c3fc003-0000-7000-8000-000000000003"));
    // Retention 0 keeps everything: both come back.
    run_ok(&home, &["index"], 0);
    assert_eq!(manifest(&home).unwrap().sessions.len(), 2);
}
