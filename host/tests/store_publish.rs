//! The publish gate, driven directly through the store API: stale writers,
//! parser versions, tombstones, missing generations, cleared stores, and
//! snapshots of superseded manifests.

mod store_support;

use recall_core::model::{Locator, ManifestEntry, MessageRecord, Role, SessionMeta, Shard, Source};
use recall_host::store::{Batch, Store, StoreError};
use store_support::*;

fn shard(id: &str, text: &str) -> Vec<u8> {
    let s = Shard {
        session: SessionMeta {
            source: Source::Pi,
            session_id: id.into(),
            title: None,
            cwd: None,
            branch: None,
            created_ms: Some(1_790_000_000_000),
            updated_ms: Some(1_790_000_000_000),
            messages: 1,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        },
        records: vec![MessageRecord {
            role: Role::User,
            ts_ms: 1_790_000_000_000,
            text: text.into(),
            truncated: false,
            locator: Locator::ExternalRecordId {
                record_id: "r".into(),
            },
            seq: None,
            turn: None,
            item_id: None,
            subagent: false,
            generation: 0,
        }],
        marks: vec![],
    };
    serde_json::to_vec(&s).unwrap()
}

fn entry(store: &Store, id: &str, text: &str, watermark: i64) -> (String, ManifestEntry) {
    let body = shard(id, text);
    let name = store.write_generation(&body).unwrap();
    let s: Shard = serde_json::from_slice(&body).unwrap();
    let e = ManifestEntry {
        meta: s.session.clone(),
        generation_file: name,
        records: 1,
        max_ts_ms: Some(1_790_000_000_000),
        bytes: body.len() as u64,
        source_gone: false,
        files: vec![],
        watermark,
        state: serde_json::Value::Null,
    };
    (format!("pi:{id}"), e)
}

fn batch(store_id: &str, pv: u32, watermark: i64, upserts: Vec<(String, ManifestEntry)>) -> Batch {
    Batch {
        base_store_id: store_id.into(),
        parser_version: pv,
        watermark,
        upserts,
        ..Batch::default()
    }
}

#[test]
fn a_stale_writer_never_replaces_a_fresher_entry() {
    let dir = temp_dir("gate-stale");
    let store = Store::open(&dir).unwrap();
    let fresh = entry(&store, "a", "fresh text", 2000);
    let out = store
        .publish(batch("", 1, 2000, vec![fresh.clone()]))
        .unwrap();
    assert!(out.written && out.revision == 1);
    let id = out.store_id.clone();
    // A writer whose sweep started earlier publishes late.
    let stale = entry(&store, "a", "stale text", 1000);
    let out = store.publish(batch(&id, 1, 1000, vec![stale])).unwrap();
    assert_eq!((out.stale, out.written, out.revision), (1, false, 1));
    assert_eq!(store.current().unwrap().sessions["pi:a"], fresh.1);
    // A fresher one wins.
    let newer = entry(&store, "a", "newer text", 3000);
    let out = store
        .publish(batch(&id, 1, 3000, vec![newer.clone()]))
        .unwrap();
    assert_eq!((out.applied, out.revision), (1, 2));
    assert_eq!(store.current().unwrap().sessions["pi:a"], newer.1);
}

#[test]
fn an_older_parser_never_overwrites_a_newer_manifest() {
    let dir = temp_dir("gate-parser");
    let store = Store::open(&dir).unwrap();
    let out = store
        .publish(batch("", 7, 1000, vec![entry(&store, "a", "v7", 1000)]))
        .unwrap();
    let err = store
        .publish(batch(
            &out.store_id,
            6,
            2000,
            vec![entry(&store, "a", "v6", 2000)],
        ))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NewerParser { found: 7, ours: 6 }),
        "{err}"
    );
    let m = store.current().unwrap();
    assert_eq!((m.parser_version, m.revision), (7, 1));
}

#[test]
fn tombstones_stop_writers_that_started_before_them() {
    let dir = temp_dir("gate-tomb");
    let store = Store::open(&dir).unwrap();
    let out = store
        .publish(batch("", 1, 1000, vec![entry(&store, "old", "old", 1000)]))
        .unwrap();
    // Retention drops it (newest message before the horizon) with a tombstone.
    let mut b = batch(&out.store_id, 1, 1000, vec![]);
    b.horizon_ms = Some(1_795_000_000_000);
    let out = store.publish(b).unwrap();
    assert_eq!(out.retired, vec!["pi:old".to_string()]);
    let m = store.current().unwrap();
    let tomb = m.tombstones["pi:old"];
    // A writer whose sweep began before the tombstone cannot revive it…
    let out = store
        .publish(batch(
            &out.store_id,
            1,
            tomb - 1,
            vec![entry(&store, "old", "old", tomb - 1)],
        ))
        .unwrap();
    assert_eq!(out.tombstoned, 1);
    assert!(!store.current().unwrap().sessions.contains_key("pi:old"));
    // …one that began after it may (e.g. retention was turned off).
    let out = store
        .publish(batch(
            &out.store_id,
            1,
            tomb + 1,
            vec![entry(&store, "old", "old", tomb + 1)],
        ))
        .unwrap();
    assert_eq!(out.applied, 1);
    let m = store.current().unwrap();
    assert!(m.sessions.contains_key("pi:old") && !m.tombstones.contains_key("pi:old"));
}

#[test]
fn missing_generations_and_cleared_stores_are_refused() {
    let dir = temp_dir("gate-missing");
    let store = Store::open(&dir).unwrap();
    let out = store
        .publish(batch("", 1, 1000, vec![entry(&store, "a", "a", 1000)]))
        .unwrap();
    let mut ghost = entry(&store, "b", "b", 2000);
    ghost.1.generation_file = "0123456789abcdef.json".into();
    let r = store
        .publish(batch(&out.store_id, 1, 2000, vec![ghost]))
        .unwrap();
    assert_eq!((r.missing, r.written), (1, false));
    store.clear().unwrap();
    let err = store
        .publish(batch(
            &out.store_id,
            1,
            3000,
            vec![entry(&store, "c", "c", 3000)],
        ))
        .unwrap_err();
    assert!(matches!(err, StoreError::StoreChanged));
}

#[test]
fn superseded_manifests_stay_servable_as_snapshots() {
    let dir = temp_dir("gate-snap");
    let store = Store::open(&dir).unwrap();
    let r1 = store
        .publish(batch("", 1, 1000, vec![entry(&store, "a", "one", 1000)]))
        .unwrap();
    let r2 = store
        .publish(batch(
            &r1.store_id,
            1,
            2000,
            vec![entry(&store, "b", "two", 2000)],
        ))
        .unwrap();
    assert_eq!(r2.revision, r1.revision + 1);
    let old = store
        .snapshot(&r1.store_id, r1.revision)
        .expect("revision 1 is retained");
    assert_eq!(old.sessions.len(), 1);
    assert_eq!(
        store
            .snapshot(&r1.store_id, r2.revision)
            .unwrap()
            .sessions
            .len(),
        2
    );
    assert!(store.snapshot("../etc", 1).is_none());
    assert!(store.snapshot(&r1.store_id, 99).is_none());
    // The revision went up by one per write; sessions are in key order.
    let bytes = store.manifest_bytes().unwrap().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.starts_with(r#"{"schema":1,"parser_version":1,"store_id":"#),
        "{text}"
    );
    assert!(text.contains(r#","revision":2,"#), "{text}");
    assert!(
        text.find(r#""pi:a":{"#) < text.find(r#""pi:b":{"#),
        "{text}"
    );
}

/// A store written before the catalog (one `manifest.json`) is read as it
/// is, and its first publish converts it: same store id, same sessions, the
/// old revision still servable as a snapshot; nothing is rebuilt or lost.
#[test]
fn a_legacy_manifest_is_read_and_converted_by_the_first_publish() {
    let dir = temp_dir("legacy");
    let store = Store::open(&dir).unwrap();
    let out = store
        .publish(batch(
            "",
            1,
            1000,
            vec![
                entry(&store, "a", "one", 1000),
                entry(&store, "b", "two", 1000),
            ],
        ))
        .unwrap();
    let before = store.current().unwrap();
    // Make it an old store: manifest.json, no catalog, no metas.
    let bytes = store.manifest_bytes().unwrap().unwrap();
    drop(store);
    std::fs::write(dir.join("manifest.json"), &bytes).unwrap();
    std::fs::remove_file(dir.join("catalog.json")).unwrap();
    for e in std::fs::read_dir(dir.join("metas")).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let store = Store::open(&dir).unwrap();
    assert_eq!(*store.current().unwrap(), *before, "read as it is");
    assert!(!dir.join("catalog.json").exists(), "a read never writes");
    let out2 = store
        .publish(Batch {
            base_store_id: out.store_id.clone(),
            parser_version: 1,
            watermark: 2000,
            finish_sweep: Some(false),
            ..Batch::default()
        })
        .unwrap();
    assert!(out2.written, "the first publish converts");
    assert_eq!(
        (out2.store_id.as_str(), out2.revision),
        (out.store_id.as_str(), out.revision + 1)
    );
    assert!(dir.join("catalog.json").exists() && !dir.join("manifest.json").exists());
    let fresh = Store::open(&dir).unwrap();
    let after = fresh.current().unwrap();
    assert_eq!(after.sessions, before.sessions);
    let snap = fresh.snapshot(&out.store_id, out.revision).unwrap();
    assert_eq!(
        snap.sessions, before.sessions,
        "the legacy revision pages on"
    );
}

/// A meta whose bytes are not its name (altered on disk) is never trusted:
/// the catalog naming it is quarantined and the store starts again (a new
/// store id, rebuilt from the sources by the next sweep).
#[test]
fn an_altered_meta_is_refused_not_trusted() {
    let dir = temp_dir("bad-meta");
    let store = Store::open(&dir).unwrap();
    let out = store
        .publish(batch("", 1, 1000, vec![entry(&store, "a", "one", 1000)]))
        .unwrap();
    drop(store);
    let meta = std::fs::read_dir(dir.join("metas"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "meta"))
        .unwrap();
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, text.replace("\"records\":1", "\"records\":9")).unwrap();
    let store = Store::open(&dir).unwrap();
    let cur = store.current().unwrap();
    assert_ne!(cur.store_id, out.store_id);
    assert!(cur.sessions.is_empty());
    let q = store.take_quarantined();
    assert!(
        q.len() == 1 && q[0].starts_with("catalog.corrupt-"),
        "{q:?}"
    );
}

/// A publish of one changed session among many writes one small meta and
/// the catalog, not every session's entry.
#[test]
fn a_one_session_publish_writes_in_proportion_to_the_change() {
    let dir = temp_dir("proportional");
    let store = Store::open(&dir).unwrap();
    let many: Vec<_> = (0..300)
        .map(|i| entry(&store, &format!("s{i:03}"), &format!("text {i}"), 1000))
        .collect();
    let first = store.publish(batch("", 1, 1000, many)).unwrap();
    let whole = store.manifest_bytes().unwrap().unwrap().len() as u64;
    let mut most = 0;
    for w in 0..20 {
        let one = entry(
            &store,
            &format!("s{:03}", w * 7),
            &format!("appended {w}"),
            2000 + w,
        );
        let out = store
            .publish(batch(&first.store_id, 1, 2000 + w, vec![one]))
            .unwrap();
        assert!(out.written);
        most = most.max(out.bytes_written);
    }
    assert!(
        most * 20 < whole,
        "{most} B per one-session publish vs a {whole} B manifest"
    );
    let catalog = std::fs::metadata(dir.join("catalog.json")).unwrap().len();
    assert!(catalog < 4096, "catalog.json is {catalog} B");
}

/// Metas follow the snapshots that name them: while a superseded revision
/// is kept its metas stay (it still assembles), past the grace only what
/// the current catalog names is left.
#[test]
fn metas_no_kept_catalog_names_are_collected() {
    use recall_host::store::retention::GcMode;
    let dir = temp_dir("gc-metas");
    let store = Store::open(&dir).unwrap();
    let first = store
        .publish(batch(
            "",
            1,
            1000,
            (0..8)
                .map(|i| entry(&store, &format!("k{i}"), "x", 1000))
                .collect(),
        ))
        .unwrap();
    for w in 0..6 {
        let e = entry(&store, &format!("k{w}"), &format!("v{w}"), 2000 + w);
        store
            .publish(batch(&first.store_id, 1, 2000 + w, vec![e]))
            .unwrap();
    }
    let metas = |d: &std::path::Path| std::fs::read_dir(d.join("metas")).unwrap().count();
    let before = metas(&dir);
    store.collect_garbage(60_000, GcMode::Full).unwrap();
    assert_eq!(metas(&dir), before, "kept snapshots keep their metas");
    let fresh = Store::open(&dir).unwrap();
    assert_eq!(
        fresh
            .snapshot(&first.store_id, first.revision)
            .unwrap()
            .sessions
            .len(),
        8
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.collect_garbage(0, GcMode::Full).unwrap();
    let named: Vec<String> = serde_json::from_slice::<serde_json::Value>(
        &std::fs::read(dir.join("catalog.json")).unwrap(),
    )
    .unwrap()["metas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(metas(&dir) < before, "superseded metas went");
    assert_eq!(
        metas(&dir),
        named.len(),
        "only the current catalog's metas are left"
    );
    let fresh = Store::open(&dir).unwrap();
    assert_eq!(fresh.current().unwrap().sessions.len(), 8);
}
