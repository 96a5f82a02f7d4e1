//! The indexer of `recall serve` with its roots watched: a query-time
//! refresh sweeps only when something changed, just the units whose files
//! were modified in place, and a full discovery for anything else (a file
//! created, removed or renamed).
#![cfg(target_os = "linux")]

mod store_support;

use recall_host::extract::Roots;
use recall_host::index::{IndexOptions, Indexer, ShardHook};
use recall_host::store::Store;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_support::*;

#[test]
fn refresh_sweeps_only_what_changed() {
    let home = temp_dir("watch");
    let files: Vec<_> = (0..6).map(|n| write_session(&home, n, 3, 100)).collect();
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let mut opts = IndexOptions::new(Roots::resolve(&fs::canonicalize(&*home).unwrap(), |_| None));
    opts.retention_days = 0;
    opts.workers = 1;
    let ix = Indexer::new(store.clone(), opts);
    assert!(ix.watch_sources());
    let handed: Arc<Mutex<Vec<String>>> = Arc::default();
    let h = handed.clone();
    ix.on_live_shard(ShardHook::new(move |name, shard| {
        assert!(shard.has_tools);
        h.lock().unwrap().push(name.to_string());
    }));
    let backfill = ix.sweep().unwrap();
    assert_eq!(backfill.new_sessions, 6);
    assert!(
        handed.lock().unwrap().is_empty(),
        "a backfill hands over nothing"
    );
    let refresh = || ix.refresh(Duration::ZERO);
    assert!(refresh().is_none(), "nothing changed: no sweep");

    // An append: only that unit is planned, and it is found.
    let mut w = OpenOptions::new().append(true).open(&files[2]).unwrap();
    w.write_all(
        pi_message(
            "e0000001",
            Some("00020005"),
            "user",
            "a late emu",
            1_790_100_000_000,
        )
        .as_bytes(),
    )
    .unwrap();
    drop(w);
    let r = refresh().expect("a sweep").unwrap();
    assert_eq!((r.units, r.updated_sessions, r.gone), (1, 1, 0), "{r:?}");
    assert!(refresh().is_none());
    let m = store.current().unwrap();
    assert_eq!(m.sessions.len(), 6, "no other session lost");
    assert!(m.sessions.values().all(|e| !e.source_gone));
    assert_eq!(m.sessions[&session_key(2)].meta.messages, 7);
    assert_eq!(
        *handed.lock().unwrap(),
        [m.sessions[&session_key(2)].generation_file.clone()],
        "the live session's new shard is handed over"
    );

    // A new session file: a full discovery.
    write_session(&home, 9, 2, 100);
    let r = refresh().expect("a sweep").unwrap();
    assert_eq!((r.units, r.new_sessions), (7, 1), "{r:?}");

    // A removed file: a full discovery flags its session gone.
    fs::remove_file(&files[4]).unwrap();
    let r = refresh().expect("a sweep").unwrap();
    assert_eq!((r.units, r.gone), (6, 1), "{r:?}");
    assert!(store.current().unwrap().sessions[&session_key(4)].source_gone);

    // Touching two known files: both units, nothing else.
    for f in [&files[0], &files[1]] {
        let mut w = OpenOptions::new().append(true).open(f).unwrap();
        w.write_all(b"").unwrap();
        w.set_modified(std::time::SystemTime::now()).unwrap();
    }
    let r = refresh().expect("a sweep").unwrap();
    assert_eq!(r.units, 2, "{r:?}");
    assert_eq!(store.current().unwrap().sessions.len(), 7);
}

/// `Roots::scopes` limits the watch to what discovery reads: every file of
/// every unit of a home with every source must still be seen changing
/// (a discovery reading somewhere new without a scope for it fails here).
#[test]
fn the_watch_sees_every_file_discovery_reads() {
    use recall_host::index::watch::{Pending, Watch};
    let home = temp_dir("watch-scopes");
    recall_host::demo::write_at(&home, 1_793_000_000_000).unwrap();
    // The agents the demo home does not hold yet.
    recall_host::fuzzing::write_next_seeds(&home).unwrap();
    let roots = Roots::resolve(&fs::canonicalize(&*home).unwrap(), |_| None);
    let units = recall_host::extract::discover(&roots);
    let sources: std::collections::BTreeSet<_> = units.iter().map(|u| u.source).collect();
    assert_eq!(
        sources.len(),
        recall_core::model::Source::ALL.len(),
        "the demo home has every source"
    );
    let mut w = Watch::new(&roots.scopes()).unwrap();
    assert_eq!(w.take(), Pending::Quiet);
    for f in units.iter().flat_map(|u| &u.files) {
        // A session of a database (OpenCode) changes as its database does.
        let f = &recall_host::extract::member::split(f)
            .map_or_else(|| f.clone(), |(db, _)| db.to_path_buf());
        let file = OpenOptions::new().append(true).open(f).unwrap();
        file.set_modified(std::time::SystemTime::now()).unwrap();
        drop(file);
        assert_eq!(
            w.take(),
            Pending::Files([f.clone()].into_iter().collect()),
            "a change to {f:?} is seen, by name"
        );
    }
}

/// The periodic sweep (DESIGN.md §6, every 30 s in `serve`): skipped while
/// nothing changed, focused on what did, and a full one once the last full
/// sweep is older than `full_every`.
#[test]
fn the_periodic_sweep_skips_focuses_or_runs_in_full() {
    let home = temp_dir("tick");
    let files: Vec<_> = (0..4).map(|n| write_session(&home, n, 2, 100)).collect();
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let mut opts = IndexOptions::new(Roots::resolve(&fs::canonicalize(&*home).unwrap(), |_| None));
    opts.retention_days = 0;
    opts.workers = 1;
    let ix = Indexer::new(store, opts);
    assert!(ix.watch_sources());
    let hour = Duration::from_secs(3600);
    let first = ix
        .tick(hour)
        .expect("the first tick is the backfill")
        .unwrap();
    assert!(first.backfill && first.units == 4, "{first:?}");
    assert!(ix.tick(hour).is_none(), "nothing changed: skipped");
    let mut w = OpenOptions::new().append(true).open(&files[1]).unwrap();
    w.write_all(
        pi_message(
            "f0000001",
            Some("00010003"),
            "user",
            "tick tock",
            1_790_100_000_000,
        )
        .as_bytes(),
    )
    .unwrap();
    drop(w);
    let r = ix.tick(hour).expect("a sweep").unwrap();
    assert_eq!((r.units, r.updated_sessions), (1, 1), "focused: {r:?}");
    let r = ix
        .tick(Duration::ZERO)
        .expect("a full sweep is due")
        .unwrap();
    assert_eq!(r.units, 4, "full: {r:?}");
}
