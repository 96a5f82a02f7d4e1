//! Team search's traffic and its local cache on a real SeaweedFS (issue #17):
//! a cold search fetches the catalog, the snapshot, the segments and only
//! candidate generations; a warm second search fetches the catalog alone
//! (nothing else twice); the cache is kept under its cap, foreign and
//! unreferenced files going before what the current catalogs name; and
//! `recall search --remote --stats` reports the traffic on stderr.

mod store_support;
mod team_support;

use recall_core::query::Request;
use recall_core::search::Budgets;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::remote::fetch::{Fetched, CACHE_DIR};
use recall_host::remote::hostid;
use recall_host::remote::memo::Verified;
use recall_host::remote::reader::TeamReader;
use recall_host::remote::union::{TeamOptions, UnionCatalog};
use recall_host::remote::Remote;
use recall_host::store::Store;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use store_support::*;
use team_support::Weed;

use team_support::hosts::NOW;
const BUCKET: &str = "recall-cache";
const URL: &str = "s3://recall-cache/t";

/// A generated home of 30 sessions, indexed.
fn home(root: &Path, seed: u32) -> PathBuf {
    team_support::hosts::home(root, seed, 30)
}

fn cli(home: &Path, weed: &Weed, args: &[&str]) -> std::process::Output {
    let mut c = recall(home);
    for (k, v) in weed.env() {
        c.env(k, v);
    }
    c.args(args).output().expect("run recall")
}

/// One search of `home`'s store plus the bucket; what it fetched.
fn search(home: &Path, weed: &Weed, q: &str, cap: u64) -> (recall_core::Response, Fetched) {
    let store = Arc::new(Store::open(&store_dir(home)).expect("store"));
    let ident = hostid::identity(store.dir(), None).expect("identity");
    let remote = Remote::connect_with(URL, Duration::from_secs(5), weed.env()).expect("remote");
    let rt = recall_host::remote::runtime().expect("runtime");
    let opts = TeamOptions {
        deadline: Duration::from_secs(5),
        cache_cap: cap,
        ..TeamOptions::default()
    };
    let query = Request {
        q: Some(q.to_string()),
        scope: Some("all".into()),
        limit: Some("5".into()),
        ..Request::default()
    }
    .parse()
    .expect("query");
    let local = StoreCatalog::new(store, Arc::new(Arena::default()));
    let cat = UnionCatalog::open(
        local,
        &ident,
        Some(Arc::new(remote)),
        rt.handle().clone(),
        &opts,
        &query,
    )
    .expect("open");
    let budgets = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    let r = cat.search(&query, false, budgets).expect("search");
    let f = cat.fetched();
    drop(cat);
    rt.shutdown_timeout(Duration::from_secs(1));
    (r, f)
}

/// Every file of the cache (one folder per host), as `<host-id>/<file>` (or
/// `<file>` outside a host folder), with its length.
fn cache_files(home: &Path) -> Vec<(String, u64)> {
    let root = store_dir(home).join(CACHE_DIR);
    let mut out: Vec<(String, u64)> = cache_paths(home)
        .into_iter()
        .map(|p| {
            let len = fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            let rel = p.strip_prefix(&root).expect("under the cache");
            (rel.to_string_lossy().into_owned(), len)
        })
        .collect();
    out.sort();
    out
}

fn cache_paths(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![store_dir(home).join(CACHE_DIR)];
    while let Some(d) = dirs.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn a_warm_search_fetches_only_the_catalog_and_the_cache_stays_under_its_cap() {
    let Some(weed) = Weed::start(BUCKET) else {
        return;
    };
    let root = temp_dir("team-cache");
    let (a, b) = (home(&root, 1), home(&root, 2));
    let out = cli(&b, &weed, &["publish", URL, "--host-name", "bee"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let big = 1 << 30;

    // Cold: one listing, one catalog, its snapshot, its segments, some generations.
    let (r1, cold) = search(&a, &weed, "the", big);
    assert!(
        r1.sessions
            .iter()
            .any(|s| s.host.as_ref().is_some_and(|h| h.name == "bee")),
        "the remote host answers"
    );
    assert_eq!(
        (cold.listings, cold.catalogs, cold.snapshots),
        (1, 1, 1),
        "{cold:?}"
    );
    assert!(cold.segments >= 1, "{cold:?}");
    assert!(cold.generations >= 1, "{cold:?}");
    let published = manifest(&b).expect("manifest").sessions.len() as u64;
    assert!(
        cold.generations < published,
        "only candidates are fetched: {} of {published}",
        cold.generations
    );
    assert!(cold.bytes > 0);
    assert_eq!(
        cold.requests,
        cold.listings + cold.catalogs + cold.snapshots + cold.segments + cold.generations
    );

    // Warm, the same query: the listing and the catalog, nothing else.
    let (r2, warm) = search(&a, &weed, "the", big);
    assert_eq!(
        serde_json::to_string(&r2.sessions).expect("json"),
        serde_json::to_string(&r1.sessions).expect("json")
    );
    let catalog_bytes = warm.bytes;
    assert_eq!(
        warm,
        Fetched {
            requests: 2,
            bytes: catalog_bytes,
            listings: 1,
            catalogs: 1,
            ..Fetched::default()
        }
    );
    assert!(catalog_bytes > 0 && catalog_bytes < cold.bytes);

    // No `.grams` are published: after an index pass the segments cover
    // every generation, so a query nothing matches fetches no generation.
    assert!(uncovered(&b).is_empty(), "{:?}", uncovered(&b));
    let (none, f) = search(&a, &weed, "zzqxnotawordanywhere", big);
    assert!(none.sessions.is_empty());
    assert_eq!((f.generations, f.segments, f.snapshots), (0, 0, 0), "{f:?}");

    // The cap: foreign old files go first, what the catalog names stays.
    let files = cache_files(&a);
    let referenced: u64 = files.iter().map(|f| f.1).sum();
    let dir = store_dir(&a).join(CACHE_DIR);
    for i in 0..5 {
        let p = dir.join(format!("{:016x}.json", 0xdead_0000u64 + i));
        fs::write(&p, vec![b'x'; 4096]).expect("junk");
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_modified(old))
            .expect("age");
    }
    // One referenced generation gone from the cache: the search fetches it
    // again and prunes, under a cap that fits what is referenced.
    let gone = files
        .iter()
        .find(|(n, _)| n.ends_with(".json") && !n.contains('-'))
        .expect("a cached generation")
        .0
        .clone();
    fs::remove_file(dir.join(&gone)).expect("remove");
    let cap = referenced + 1024;
    let (_, refetch) = search(&a, &weed, "the", cap);
    assert_eq!(refetch.generations, 1, "{refetch:?}");
    let after = cache_files(&a);
    assert!(
        after.iter().all(|(n, _)| !n.starts_with("00000000dead")),
        "junk pruned first: {after:?}"
    );
    assert_eq!(after, files, "what the catalog references stays");

    // A tiny cap: the cache shrinks below it, the search still answers.
    fs::remove_file(dir.join(&gone)).expect("remove");
    let (r3, _) = search(&a, &weed, "the", 1);
    assert_eq!(r3.sessions.len(), r1.sessions.len());
    let left: u64 = cache_files(&a).iter().map(|f| f.1).sum();
    assert!(left <= 1, "{left} bytes left under a 1-byte cap");

    // The CLI reports the traffic on stderr (and the answer on stdout as before).
    let out = cli(
        &a,
        &weed,
        &[
            "--now",
            &NOW.to_string(),
            "search",
            "--remote",
            URL,
            "--stats",
            "--json",
            "the",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("recall: fetched ") && l.contains("1 catalogs")),
        "{err}"
    );
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json body");
    assert!(body.get("hosts").is_some());
}

/// The query of [`search`], and the CLI's unlimited budgets.
fn query_of(q: &str) -> (recall_core::query::Query, Budgets) {
    let query = Request {
        q: Some(q.to_string()),
        scope: Some("all".into()),
        limit: Some("5".into()),
        ..Request::default()
    }
    .parse()
    .expect("query");
    let budgets = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    (query, budgets)
}

#[test]
fn a_long_lived_reader_verifies_each_segment_once_and_holds_only_the_current_catalogs() {
    let Some(weed) = Weed::start("recall-reader") else {
        return;
    };
    let url = "s3://recall-reader/t";
    let root = temp_dir("team-reader");
    let (a, b) = (home(&root, 3), home(&root, 4));
    let out = cli(&b, &weed, &["publish", url, "--host-name", "bee"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b_id = hostid::identity(&store_dir(&b), None).expect("id").id;
    let store = Arc::new(Store::open(&store_dir(&a)).expect("store"));
    let ident = hostid::identity(store.dir(), None).expect("identity");
    let remote =
        Arc::new(Remote::connect_with(url, Duration::from_secs(5), weed.env()).expect("remote"));
    let rt = recall_host::remote::runtime().expect("runtime");
    let local = StoreCatalog::new(store, Arc::new(Arena::default()));
    let opts = TeamOptions {
        deadline: Duration::from_secs(5),
        ..TeamOptions::default()
    };
    let reader = TeamReader::new(local, ident, remote.clone(), rt.handle().clone(), opts);
    let (query, budgets) = query_of("the");
    let run = || {
        let cat = reader.open(&query, None).expect("open");
        let r = cat.search(&query, false, budgets).expect("search");
        (r, cat.fetched(), cat.verified())
    };

    // Cold: every segment fetched and verified once, the snapshot parsed once.
    let (r1, f1, v1) = run();
    assert!(f1.segments >= 1, "{f1:?}");
    assert_eq!(
        (v1.segments, v1.snapshots),
        (f1.segments, 1),
        "{v1:?} {f1:?}"
    );
    assert!(v1.segment_bytes > 0);
    let held = reader.memo().segment_names(&b_id);
    assert_eq!(held.len() as u64, f1.segments, "{held:?}");

    // Warm, the cached segments and snapshot even gone from disk (they are
    // held in memory): the listing and the catalog, nothing verified again,
    // the same answer.
    let dir = store_dir(&a).join(CACHE_DIR).join(&b_id);
    let mut removed = 0;
    for e in fs::read_dir(&dir).expect("cache").flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        // Its segments and its snapshot (`<store-id>-<revision>.json`).
        if n.ends_with(".seg") || n.contains('-') {
            fs::remove_file(e.path()).expect("rm");
            removed += 1;
        }
    }
    assert_eq!(removed as u64, f1.segments + 1);
    for _ in 0..2 {
        let (r, f, v) = run();
        assert_eq!(
            serde_json::to_string(&r.sessions).expect("json"),
            serde_json::to_string(&r1.sessions).expect("json")
        );
        assert_eq!(
            (f.requests, f.listings, f.catalogs),
            (2, 1, 1),
            "only the listing and the catalog: {f:?}"
        );
        assert_eq!(v, Verified::default(), "nothing verified twice");
    }

    // The host's catalog moves on (here: it lists no segment any more): the
    // reader drops what the catalog no longer names and still answers (by
    // scanning the candidates' generations).
    let key = object_store::path::Path::from(format!("t/hosts/{b_id}/catalog.json"));
    rt.block_on(async {
        use object_store::ObjectStoreExt;
        let cur = remote
            .store
            .get(&key)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes");
        let mut c: serde_json::Value = serde_json::from_slice(&cur).expect("catalog");
        c["segments"] = serde_json::json!([]);
        let body = serde_json::to_vec(&c).expect("json");
        remote
            .store
            .put(&key, object_store::PutPayload::from(body))
            .await
            .expect("put");
    });
    let (r4, f4, v4) = run();
    assert_eq!(v4.snapshots, 0, "the snapshot is still held: {v4:?}");
    assert!(reader.memo().segment_names(&b_id).is_empty());
    assert_eq!((f4.segments, v4.segments), (0, 0), "{f4:?} {v4:?}");
    assert_eq!(
        r4.sessions
            .iter()
            .map(|s| &s.session_key)
            .collect::<Vec<_>>(),
        r1.sessions
            .iter()
            .map(|s| &s.session_key)
            .collect::<Vec<_>>()
    );
    drop(reader);
    rt.shutdown_timeout(Duration::from_secs(1));
}

/// The segments count of the `--stats` line.
fn fetched_segments(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("recall: fetched "))
        .unwrap_or_else(|| panic!("no stats line: {stderr}"));
    let before = line
        .split(" segments, ")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok());
    before.unwrap_or_else(|| panic!("no segment count: {line}"))
}

#[test]
fn a_damaged_cached_segment_is_caught_by_its_checksum_and_fetched_again() {
    let Some(weed) = Weed::start("recall-damaged") else {
        return;
    };
    let root = temp_dir("team-damaged");
    let (a, b) = (home(&root, 5), home(&root, 6));
    // `search` reads URL's bucket: publish there under this test's bucket.
    let url = "s3://recall-damaged/t";
    let out = cli(&b, &weed, &["publish", url, "--host-name", "bee"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let args = [
        "--now",
        &NOW.to_string(),
        "search",
        "--remote",
        url,
        "--stats",
        "--json",
        "the",
    ];
    let run = || {
        let out = cli(&a, &weed, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        (body["sessions"].clone(), err)
    };
    let (cold, err) = run();
    assert!(
        fetched_segments(&err) >= 1,
        "a cold process fetches the segments: {err}"
    );
    let (warm, err) = run();
    assert_eq!(warm, cold);
    assert!(
        err.contains(" 0 segments, 0 generations)"),
        "a warm process fetches no segment: {err}"
    );
    // One byte of every cached segment flipped (its name still says it is
    // fine): the CRC refuses it, the segment is fetched again, same answer.
    let mut flipped = 0;
    for p in cache_paths(&a) {
        if p.to_string_lossy().ends_with(".seg") {
            let mut bytes = fs::read(&p).expect("read");
            let at = bytes.len() / 2;
            bytes[at] ^= 0x55;
            fs::write(&p, &bytes).expect("write");
            flipped += 1;
        }
    }
    assert!(flipped >= 1);
    let (again, err) = run();
    assert_eq!(again, cold);
    assert_eq!(
        fetched_segments(&err),
        flipped,
        "the damaged segments are fetched again: {err}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn tree_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => tree_bytes(&e.path()),
                    _ => e.metadata().map(|m| m.len()).unwrap_or(0),
                })
                .sum()
        })
        .unwrap_or(0)
}

/// A searcher whose store sits on a full disk, that has never published
/// (no `host.json` yet): the team search still answers, from the store and
/// the bucket, and leaves no temporary file in the remote cache.
#[test]
fn a_full_disk_neither_fails_a_team_search_nor_leaves_temporary_files() {
    let Some(weed) = Weed::start("recall-full") else {
        return;
    };
    let root = temp_dir("team-full");
    let (a, b) = (home(&root, 7), home(&root, 8));
    let url = "s3://recall-full/t";
    let out = cli(&b, &weed, &["publish", url, "--host-name", "bee"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Move a's store onto a tmpfs with a little room, then fill the room.
    let recall_dir = a.join(".recall");
    let saved = root.join("a-recall");
    fs::rename(&recall_dir, &saved).unwrap();
    let size = tree_bytes(&saved) + (4 << 20);
    if !mount_tmpfs(&recall_dir, &size.to_string()) {
        fs::rename(&saved, &recall_dir).unwrap();
        panic!("cannot mount a tmpfs (this test needs root, as CI has)");
    }
    copy_tree(&saved, &recall_dir);
    let _ = fs::remove_file(store_dir(&a).join(hostid::HOST_FILE));
    {
        use std::io::Write;
        let mut f = fs::File::create(recall_dir.join("filler")).unwrap();
        let chunk = vec![0u8; 64 << 10];
        while f.write_all(&chunk).is_ok() {}
    }
    let args = [
        "--now",
        &NOW.to_string(),
        "search",
        "--remote",
        url,
        "--json",
        "the",
    ];
    let out = cli(&a, &weed, &args);
    let leftovers: Vec<String> = cache_files(&a)
        .into_iter()
        .filter(|(n, _)| n.starts_with(".tmp-"))
        .map(|(n, len)| format!("{n} ({len} bytes)"))
        .collect();
    let _ = std::process::Command::new("umount")
        .arg(&recall_dir)
        .status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let sessions = body["sessions"].as_array().expect("sessions");
    let keys: Vec<&str> = sessions
        .iter()
        .filter_map(|s| s["session_key"].as_str())
        .collect();
    assert!(
        sessions.iter().any(|s| s["host"]["name"] == "bee"),
        "the remote host answers: {keys:?}"
    );
    // The local store's own keys are not qualified by a host.
    assert!(
        keys.iter().any(|k| !k.contains('/')),
        "the local store answers: {keys:?}"
    );
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
