//! One huge session is bounded (issue #12, item 2): past the per-session
//! line bound only a bounded prefix is indexed, the session is flagged
//! truncated and status says so. (Its own test binary: the bounds are
//! process-wide.)

mod store_support;

use recall_host::extract::common::{set_session_bounds, MAX_SESSION_BYTES};
use recall_host::extract::Roots;
use recall_host::index::{build::truncated_sessions, IndexOptions, Indexer};
use recall_host::store::Store;
use std::fs;
use std::sync::Arc;
use store_support::*;

#[test]
fn a_session_past_the_bound_is_indexed_as_a_flagged_prefix() {
    let home = temp_dir("bounds");
    let big = write_session(&home, 1, 100, 50); // 201 lines
    write_session(&home, 2, 3, 50);
    set_session_bounds(40, MAX_SESSION_BYTES);
    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let mut opts = IndexOptions::new(Roots::resolve(&fs::canonicalize(&*home).unwrap(), |_| None));
    opts.retention_days = 0;
    let ix = Indexer::new(store.clone(), opts);
    ix.sweep().unwrap();
    let m = store.current().unwrap();
    let e = &m.sessions[&session_key(1)];
    assert!(
        e.records > 0 && e.records < 40,
        "a bounded prefix: {}",
        e.records
    );
    assert_eq!(truncated_sessions(&m), vec![session_key(1)]);
    assert_eq!(
        m.sessions[&session_key(2)].records,
        6,
        "small sessions are whole"
    );
    // Growing, it stays bounded (a resumed read stops at the bound too).
    let mut text = fs::read_to_string(&big).unwrap();
    text.push_str(&pi_message(
        "ffff0001",
        None,
        "user",
        "later",
        1_790_009_000_000,
    ));
    text.push('\n');
    fs::write(&big, text).unwrap();
    ix.sweep().unwrap();
    let m = store.current().unwrap();
    assert!(m.sessions[&session_key(1)].records < 40);
    // `recall status` names it.
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).unwrap();
    assert_eq!(status["truncated_sessions"][0], session_key(1), "{status}");
}
