//! `recall search` through a running `recall serve` of the same store: the
//! output is identical to the local search, a new transcript shows up
//! through the daemon's own refresh, a dead daemon's advert is ignored, and
//! `--via daemon` shows a building daemon's answer as it is.

mod store_support;

use std::time::{Duration, Instant};
use store_support::*;

/// `--json` output without the one field that measures time.
fn strip_took(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("json");
    v.as_object_mut().expect("object").remove("took_ms");
    v
}

#[test]
fn search_through_a_daemon_prints_what_a_local_search_prints() {
    let home = temp_dir("daemon");
    for n in 1..=5 {
        write_session(&home, n, 3, 300);
    }
    run_ok(&home, &["index"], 0);
    let mut child = serve(&home);
    let queries: [&[&str]; 4] = [
        &["lorem"],
        &["w3x1"],
        &["lorem", "--sort", "relevance", "--limit", "2"],
        &["\"dolor sit\"", "--scope", "all"],
    ];
    for q in queries {
        for json in [true, false] {
            let mut via_daemon = vec!["search", "--via", "daemon", "--color", "never"];
            let mut local = vec!["search", "--via", "local", "--color", "never"];
            if json {
                via_daemon.push("--json");
                local.push("--json");
            }
            via_daemon.extend_from_slice(q);
            local.extend_from_slice(q);
            let a = run_ok(&home, &via_daemon, 0);
            let b = run_ok(&home, &local, 0);
            if json {
                assert_eq!(strip_took(&a), strip_took(&b), "{q:?}");
            } else {
                // The `more:` hint repeats the command as typed, `--via` included.
                assert_eq!(a.replace("--via daemon", "--via local"), b, "{q:?}");
            }
        }
    }
    // A transcript written now is found through the daemon's refresh.
    write_session(&home, 9, 2, 100);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = run(&home, &["search", "--via", "daemon", "--json", "w9x0"]);
        if out.status.code() == Some(0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the daemon never indexed the new session"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // A killed daemon leaves its advert; it is ignored.
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run(&home, &["search", "--via", "daemon", "lorem"]);
    assert_eq!(out.status.code(), Some(2), "no daemon answers any more");
    run_ok(&home, &["search", "--json", "lorem"], 0);
}

#[test]
fn a_copied_store_is_not_answered_by_the_daemon_of_the_original() {
    let home = temp_dir("daemon-copy");
    write_session(&home, 1, 2, 100);
    run_ok(&home, &["index"], 0);
    let mut child = serve(&home);
    // The copy is taken while the daemon runs: its serve.json comes along.
    let copy = temp_dir("daemon-copy-2");
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", home.display()))
        .arg(&*copy)
        .status()
        .expect("cp");
    assert!(st.success());
    assert!(store_dir(&copy).join("serve.json").exists());
    // Only the original gets a new session; its daemon indexes it.
    write_session(&home, 7, 2, 100);
    let deadline = Instant::now() + Duration::from_secs(20);
    while run(&home, &["search", "--via", "daemon", "--json", "w7x0"])
        .status
        .code()
        != Some(0)
    {
        assert!(Instant::now() < deadline, "the daemon never indexed it");
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = run(&copy, &["search", "--no-refresh", "--json", "w7x0"]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(
        out.status.code(),
        Some(0),
        "the copy answered from the original's daemon: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    run_ok(&copy, &["search", "--no-refresh", "--json", "w1x0"], 0);
}

#[test]
fn via_daemon_prints_the_answer_of_a_daemon_still_building_and_auto_searches_here() {
    let home = temp_dir("daemon-building");
    write_session(&home, 1, 3, 300);
    // Never indexed, and a daemon that does not index: it stays `building`.
    let (mut child, _) = serve_with(&home, &["--no-index"]);
    let out = run(&home, &["search", "--via", "daemon", "--json", "w1x0"]);
    let body: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(body["state"], "building", "{body}");
    assert!(body["sessions"].as_array().is_some_and(|s| s.is_empty()));
    // `--via auto` takes only a complete answer: this process sweeps and finds it.
    let auto = run_ok(&home, &["search", "--json", "w1x0"], 0);
    let auto: serde_json::Value = serde_json::from_str(&auto).unwrap();
    assert_eq!(auto["state"], "ready", "{auto}");
    assert_eq!(auto["sessions"].as_array().map(Vec::len), Some(1));
    child.kill().unwrap();
    child.wait().unwrap();
}
