//! The query-time refresh of `recall serve` (DESIGN.md §6): a search sweeps
//! first when the last sweep is old *and* a source changed. A quiet home is
//! not swept again (the roots are watched), and a line appended to a
//! transcript is found by the very next search.

mod http_support;

use http_support::*;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::Roots;
use recall_host::http::ServeOptions;
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

fn hits(addr: std::net::SocketAddr, word: &str) -> usize {
    let v = get(addr, &format!("/api/sessions/message-search?q={word}"), &[]).json();
    v["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .len()
}

#[test]
fn a_quiet_home_is_not_swept_and_an_append_is_found_at_once() {
    let home = TempDir::new("refresh");
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let store =
        Arc::new(Store::open(&recall_host::store::store_dir(&home.0.join(".recall"))).unwrap());
    let mut opts = IndexOptions::new(Roots::resolve(&home.0, |_| None));
    opts.retention_days = 0;
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    indexer.sweep().expect("backfill");
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::new(64 << 20)));
    // Indexing on (the roots are watched); no periodic loop; every search
    // is old enough to refresh.
    let backend =
        Arc::new(IndexerHandle::new(indexer.clone(), catalog.clone(), true).watch_sources());
    let server = serve(
        Served::indexed(Arc::new(catalog), backend),
        ServeOptions {
            refresh_after: Duration::ZERO,
            ..ServeOptions::default()
        },
    );
    let addr = server.addr();
    let revision = || store.current().unwrap().revision;
    let swept = || indexer.last_sweep_ms().unwrap();

    let (rev0, t0) = (revision(), swept());
    std::thread::sleep(Duration::from_millis(20));
    for _ in 0..5 {
        assert_eq!(hits(addr, "quokka"), 0);
    }
    assert_eq!(swept(), t0, "nothing changed: no search swept");
    assert_eq!(revision(), rev0);

    // Append a prompt to a Claude Code transcript of the demo home.
    let projects = home.0.join(".claude/projects");
    let main = std::fs::read_dir(&projects)
        .unwrap()
        .flatten()
        .flat_map(|p| std::fs::read_dir(p.path()).unwrap().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a claude transcript");
    let sid = main.file_stem().unwrap().to_string_lossy().into_owned();
    let line = serde_json::json!({
        "type": "user",
        "uuid": "0f0e0d0c-0000-4000-8000-000000000001",
        "sessionId": sid,
        "timestamp": "2026-10-25T10:00:00.000Z",
        "message": {"role": "user", "content": "Does the quokka importer handle leap seconds?"}
    });
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&main)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);
    assert_eq!(hits(addr, "quokka"), 1, "the next search finds the line");
    assert!(swept() > t0, "that search swept");
    assert!(revision() > rev0);

    let t1 = swept();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(hits(addr, "quokka"), 1);
    assert_eq!(swept(), t1, "quiet again: no further sweep");
    server.stop();
}
