//! `freshness=wait-until-current` (DESIGN.md §4): the search reconciles
//! first; a reconcile that fails before the deadline is the answer (500
//! `store_unavailable`), one still running after 5 s is searched past with
//! `truncated.freshness: true`; the default never waits.

mod http_support;

use http_support::{demo_store, get, serve, store_served, TempDir, NOW};
use recall_host::engine::IndexerHandle;
use recall_host::http::ServeOptions;
use recall_host::index::{IndexOptions, Indexer, RootHook};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
enum Mode {
    Quick,
    Fails,
    Slow,
}

/// The demo home served by a real indexer whose sweeps, once `armed`, are
/// quick, fail (planning stalls past the root deadline), or outlast the
/// freshness deadline (planning takes 7 s). `plans` counts the sweeps that
/// planned while armed.
struct Started {
    _home: TempDir,
    plans: Arc<AtomicUsize>,
    server: recall_host::http::Server,
}

fn start(tag: &str, mode: Mode) -> Started {
    let (home, backfilled, catalog) = demo_store(tag, true);
    let armed = Arc::new(AtomicBool::new(false));
    let plans = Arc::new(AtomicUsize::new(0));
    let mut opts: IndexOptions = backfilled.options().clone();
    opts.now_ms = Some(NOW);
    if let Mode::Fails = mode {
        opts.root_deadline = Duration::from_secs(2);
    }
    let (a, n) = (armed.clone(), plans.clone());
    // Called for each unit a sweep plans: once armed, the first call stalls
    // past the root deadline (`fails`: 4 s of 2) or past the freshness
    // deadline (`slow`: 7 s of 5).
    opts.plan_fault = Some(RootHook::new(move |_| {
        if !a.load(Ordering::SeqCst) || n.fetch_add(1, Ordering::SeqCst) > 0 {
            return;
        }
        match mode {
            Mode::Quick => {}
            Mode::Fails => std::thread::sleep(Duration::from_secs(4)),
            Mode::Slow => std::thread::sleep(Duration::from_secs(7)),
        }
    }));
    let indexer = Arc::new(Indexer::new(catalog.store().clone(), opts));
    indexer.sweep().expect("the backfill of this indexer");
    armed.store(true, Ordering::SeqCst);
    let handle = IndexerHandle::new(indexer, catalog.clone(), true);
    // The query-time refresh never sweeps here: only a reconcile does.
    let server = serve(
        store_served(handle, catalog),
        ServeOptions {
            refresh_after: Duration::from_secs(3600),
            ..ServeOptions::default()
        },
    );
    Started {
        _home: home,
        plans,
        server,
    }
}

const WAIT: &str = "/api/sessions/message-search?q=tide&freshness=wait-until-current";

#[test]
fn a_quick_reconcile_answers_fresh_and_the_default_does_not_reconcile() {
    let started = start("fresh-quick", Mode::Quick);
    let (b, s) = (&started.plans, &started.server);
    let r = get(s.addr(), "/api/sessions/message-search?q=tide", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(b.load(Ordering::SeqCst), 0);
    assert_eq!(r.json()["truncated"]["freshness"], false);
    let r = get(s.addr(), WAIT, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(b.load(Ordering::SeqCst) > 0, "the search swept first");
    let v = r.json();
    assert_eq!(v["truncated"]["freshness"], false);
    assert!(!v["sessions"].as_array().unwrap().is_empty());
    let r = get(
        s.addr(),
        "/api/sessions/message-search?q=tide&freshness=soon",
        &[],
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "invalid_param");
}

#[test]
fn a_failed_reconcile_is_the_error() {
    let started = start("fresh-fails", Mode::Fails);
    let s = &started.server;
    let r = get(s.addr(), WAIT, &[]);
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["error"], "store_unavailable");
}

#[test]
fn a_slow_reconcile_is_searched_past_at_the_deadline() {
    let started = start("fresh-slow", Mode::Slow);
    let s = &started.server;
    let t = Instant::now();
    let r = get(s.addr(), WAIT, &[]);
    let took = t.elapsed();
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["truncated"]["freshness"], true);
    assert!(!v["sessions"].as_array().unwrap().is_empty());
    assert!(
        took >= Duration::from_secs(5),
        "answered before the deadline"
    );
}
