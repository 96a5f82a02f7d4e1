//! `recall clear` racing `recall index` (issue 12, item 11): whichever
//! order they run in, both succeed, and the store is consistent after.

mod store_support;

use std::process::Stdio;
use store_support::{check_store, recall, temp_dir, write_session};

#[test]
fn clear_racing_index_never_fails() {
    let home = temp_dir("clear-race");
    for n in 0..120 {
        write_session(&home, n, 4, 300);
    }
    let mut failures = Vec::new();
    for round in 0..10 {
        let index = recall(&home)
            .arg("index")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn index");
        // Let the indexer get going, by a different amount each round.
        std::thread::sleep(std::time::Duration::from_millis(20 * round));
        let clear = recall(&home).arg("clear").output().expect("run clear");
        let index = index.wait_with_output().expect("index ends");
        if !clear.status.success() {
            failures.push(format!(
                "round {round}: clear failed: {}",
                String::from_utf8_lossy(&clear.stderr)
            ));
        }
        if !index.status.success() {
            failures.push(format!(
                "round {round}: index failed: {}",
                String::from_utf8_lossy(&index.stderr)
            ));
        }
        if let Err(e) = check_store(&home) {
            failures.push(format!("round {round}: store inconsistent: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // And the next index still finds every session.
    let out = recall(&home).arg("index").output().unwrap();
    assert!(out.status.success());
    let m = store_support::manifest(&home).expect("a manifest");
    assert_eq!(m.sessions.len(), 120);
}
