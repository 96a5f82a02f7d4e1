//! `freshness=wait-until-current` (DESIGN.md §4): the search reconciles
//! first; a reconcile that fails before the deadline is the answer (500
//! `store_unavailable`), one still running after 5 s is searched past with
//! `truncated.freshness: true`; the default never waits.

mod http_support;

use http_support::{get, mem_backend, serve, TempDir};
use recall_core::Catalog;
use recall_host::http::{Backend, BackendError, IndexStatus, MemBackend, ServeOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
enum Mode {
    Quick,
    Fails,
    Slow,
}

/// A [`MemBackend`] whose reconcile is quick, fails, or outlasts the deadline.
struct Reconciling {
    inner: MemBackend,
    mode: Mode,
    reconciles: AtomicUsize,
}

impl Backend for Reconciling {
    fn catalog(&self) -> &dyn Catalog {
        self.inner.catalog()
    }
    fn manifest_bytes(&self) -> Result<Vec<u8>, BackendError> {
        self.inner.manifest_bytes()
    }
    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, BackendError> {
        self.inner.generation(name)
    }
    fn status(&self) -> IndexStatus {
        self.inner.status()
    }
    fn building(&self) -> bool {
        false
    }
    fn sweep(&self) -> Result<(), BackendError> {
        Ok(())
    }
    fn refresh(&self, _: Duration) {}
    fn reconcile(&self) -> Result<(), BackendError> {
        self.reconciles.fetch_add(1, Ordering::SeqCst);
        match self.mode {
            Mode::Quick => Ok(()),
            Mode::Fails => Err(BackendError::new("the sources could not be read")),
            Mode::Slow => {
                std::thread::sleep(Duration::from_secs(7));
                Ok(())
            }
        }
    }
}

fn start(tag: &str, mode: Mode) -> (TempDir, Arc<Reconciling>, recall_host::http::Server) {
    let dir = TempDir::new(tag);
    let b = Arc::new(Reconciling {
        inner: mem_backend(&dir.0),
        mode,
        reconciles: AtomicUsize::new(0),
    });
    let s = serve(b.clone(), ServeOptions::default());
    (dir, b, s)
}

const WAIT: &str = "/api/sessions/message-search?q=tide&freshness=wait-until-current";

#[test]
fn a_quick_reconcile_answers_fresh_and_the_default_does_not_reconcile() {
    let (_d, b, s) = start("fresh-quick", Mode::Quick);
    let r = get(s.addr(), "/api/sessions/message-search?q=tide", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(b.reconciles.load(Ordering::SeqCst), 0);
    assert_eq!(r.json()["truncated"]["freshness"], false);
    let r = get(s.addr(), WAIT, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(b.reconciles.load(Ordering::SeqCst), 1);
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
    let (_d, _b, s) = start("fresh-fails", Mode::Fails);
    let r = get(s.addr(), WAIT, &[]);
    assert_eq!(r.status, 500);
    assert_eq!(r.json()["error"], "store_unavailable");
}

#[test]
fn a_slow_reconcile_is_searched_past_at_the_deadline() {
    let (_d, _b, s) = start("fresh-slow", Mode::Slow);
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
