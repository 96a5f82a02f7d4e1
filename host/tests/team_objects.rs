//! What another host's bucket objects may be, on a real SeaweedFS: every
//! object is bounded by its kind (a catalog padded past its bound, a
//! generation bigger than its snapshot entry says, make the host corrupt
//! before their bodies are read), and a host is answered only from objects
//! in its own prefix (a catalog that names another host's segments, or a
//! snapshot that names its generations, makes none of them available, though
//! the searcher's cache and arena hold them).

mod store_support;
mod team_support;

use object_store::path::Path as ObjPath;
use object_store::{ObjectStoreExt, PutPayload};
use recall_core::layout::{bucket, host};
use recall_core::response::{PartialReason, Response};
use recall_core::search::Budgets;
use recall_host::remote::fetch::{Fetched, CACHE_DIR};
use recall_host::remote::Remote;
use std::path::Path;
use std::time::Duration;
use store_support::*;
use team_support::hosts::*;
use team_support::Weed;

const BUCKET: &str = "recall-objects";
const URL: &str = "s3://recall-objects/o";

/// Reads and writes objects of the bucket as a hostile host would.
struct Bucket {
    remote: Remote,
    rt: tokio::runtime::Runtime,
}

impl Bucket {
    fn new(weed: &Weed) -> Bucket {
        Bucket {
            remote: Remote::connect_with(URL, Duration::from_secs(5), weed.env()).expect("remote"),
            rt: recall_host::remote::runtime().expect("runtime"),
        }
    }

    fn key(&self, id: &str, rel: &str) -> ObjPath {
        ObjPath::from(bucket::key(&self.remote.prefix, id, rel))
    }

    fn get(&self, id: &str, rel: &str) -> Vec<u8> {
        let key = self.key(id, rel);
        self.rt.block_on(async {
            let got = self.remote.store.get(&key).await.expect("get");
            got.bytes().await.expect("bytes").to_vec()
        })
    }

    fn put(&self, id: &str, rel: &str, body: Vec<u8>) {
        let key = self.key(id, rel);
        self.rt.block_on(async {
            self.remote
                .store
                .put(&key, PutPayload::from(body))
                .await
                .expect("put")
        });
    }

    /// Host `id`'s catalog and the path of its current snapshot.
    fn catalog(&self, id: &str) -> (serde_json::Value, String) {
        let cat: serde_json::Value =
            serde_json::from_slice(&self.get(id, host::CATALOG)).expect("catalog json");
        let store_id = cat["store_id"].as_str().expect("store id");
        let rev = cat["revision"].as_u64().expect("revision");
        let snap = host::snapshot(store_id, rev).expect("a store id");
        (cat, snap)
    }
}

/// One search of `a` plus the bucket, for every session holding "the".
fn search(a: &Path, weed: &Weed) -> (Response, Fetched) {
    let req = everything("100");
    let (cat, _, rt) = open(a, weed.env(), URL, Duration::from_secs(10), &req);
    let budgets = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    let r = cat
        .search(&req.parse().expect("query"), false, budgets)
        .expect("search");
    let f = cat.fetched();
    drop(cat);
    rt.shutdown_timeout(Duration::from_secs(1));
    (r, f)
}

fn state_of(r: &Response, id: &str) -> Option<String> {
    let hosts = r.hosts.as_ref()?;
    hosts.iter().find(|h| h.id == id).map(|h| h.state.clone())
}

fn sessions_of(r: &Response, id: &str) -> usize {
    r.sessions
        .iter()
        .filter(|s| s.host.as_ref().is_some_and(|h| h.id == id))
        .count()
}

#[test]
fn objects_over_their_bound_make_their_host_corrupt_before_their_bodies_are_read() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("objects-bound");
    let a = home(&root, 61, 6);
    let b_id = publish(&home(&root, 62, 8), &weed, URL, "big");
    let bucket = Bucket::new(&weed);
    let catalog = bucket.get(&b_id, host::CATALOG);

    // A catalog that parses (JSON, then whitespace) but weighs 5 MiB, over
    // the 4 MiB a catalog may: refused from its declared length.
    let mut padded = catalog.clone();
    padded.resize(5 << 20, b' ');
    bucket.put(&b_id, host::CATALOG, padded);
    let (r, f) = search(&a, &weed);
    assert_eq!(
        state_of(&r, &b_id).as_deref(),
        Some("unavailable"),
        "{:?}",
        r.hosts
    );
    assert_eq!(r.partial_reason, Some(PartialReason::Hosts));
    assert!(
        f.bytes < 1 << 20,
        "the over-size catalog's body was read: {f:?}"
    );
    assert_eq!(sessions_of(&r, &b_id), 0);
    assert!(r.sessions.len() >= 6, "this host's hits are returned");

    // The catalog back; the snapshot now says each generation weighs 16
    // bytes: each is refused from its declared length, none is read.
    bucket.put(&b_id, host::CATALOG, catalog);
    let _ = std::fs::remove_dir_all(store_dir(&a).join(CACHE_DIR));
    let (healthy, _) = search(&a, &weed);
    assert_eq!(state_of(&healthy, &b_id).as_deref(), Some("available"));
    assert!(sessions_of(&healthy, &b_id) > 0);
    let (_, snap) = bucket.catalog(&b_id);
    let mut m: serde_json::Value =
        serde_json::from_slice(&bucket.get(&b_id, &snap)).expect("snapshot json");
    for (_, e) in m["sessions"].as_object_mut().expect("sessions").iter_mut() {
        e["bytes"] = 16.into();
    }
    bucket.put(&b_id, &snap, serde_json::to_vec(&m).expect("json"));
    let _ = std::fs::remove_dir_all(store_dir(&a).join(CACHE_DIR));
    let (r, f) = search(&a, &weed);
    assert_eq!(
        sessions_of(&r, &b_id),
        0,
        "a generation over the size its snapshot gives was searched"
    );
    assert_eq!(
        r.partial_reason,
        Some(PartialReason::Hosts),
        "{:?}",
        r.hosts
    );
    assert_ne!(state_of(&r, &b_id).as_deref(), Some("available"));
    assert!(f.generations > 0, "{f:?}");
    // Warm, asked again (never cached), and still no body read: the bytes
    // are the catalog's.
    let (_, g) = search(&a, &weed);
    assert_eq!(g.generations, f.generations, "{g:?}");
    assert!(
        g.bytes < 4096,
        "a refused generation's body was read: {g:?}"
    );
}

#[test]
fn a_host_naming_another_hosts_objects_makes_none_of_them_available() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("objects-claim");
    let a = home(&root, 71, 6);
    let b_id = publish(&home(&root, 72, 8), &weed, URL, "owner");
    let bucket = Bucket::new(&weed);
    let (cat, snap) = bucket.catalog(&b_id);
    assert!(
        !cat["segments"].as_array().expect("segments").is_empty(),
        "the owner publishes segments"
    );
    // Warm: this host's cache now holds the owner's segments and
    // generations.
    let (warm, _) = search(&a, &weed);
    let owned = sessions_of(&warm, &b_id);
    assert!(owned > 0);

    // Two thieves (one sorts before any host id, one after: which of two
    // sessions naming the same generation a segment answers for follows
    // that order) copy the owner's catalog (its segments) and snapshot (its
    // generations) into their own prefixes, and upload nothing else.
    let thieves = ["0000000000000001", "fffffffffffffffe"];
    let mut stolen = cat.clone();
    stolen["name"] = "thief".into();
    let steal = |stolen: &serde_json::Value| {
        for t in thieves {
            bucket.put(t, host::CATALOG, serde_json::to_vec(stolen).expect("json"));
            bucket.put(t, &snap, bucket.get(&b_id, &snap));
        }
    };
    steal(&stolen);
    let (r, _) = search(&a, &weed);
    for t in thieves {
        assert_eq!(
            state_of(&r, t).as_deref(),
            Some("unavailable"),
            "segments it never uploaded made {t} available: {:?}",
            r.hosts
        );
        assert_eq!(sessions_of(&r, t), 0);
    }
    assert_eq!(sessions_of(&r, &b_id), owned, "the owner still answers");
    assert_eq!(r.partial_reason, Some(PartialReason::Hosts));

    // Without segments, their snapshots naming the owner's generations:
    // none of their sessions is answered from the owner's bytes, though the
    // same search loads them for the owner, and the owner loses none.
    stolen["segments"] = serde_json::json!([]);
    steal(&stolen);
    let (r, _) = search(&a, &weed);
    for t in thieves {
        assert_eq!(
            sessions_of(&r, t),
            0,
            "the owner's generations answered for {t}"
        );
    }
    assert_eq!(sessions_of(&r, &b_id), owned);
    assert_eq!(
        r.partial_reason,
        Some(PartialReason::Hosts),
        "{:?}",
        r.hosts
    );
}
