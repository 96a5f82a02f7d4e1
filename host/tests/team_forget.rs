//! Team publish honours forget and exclude (DESIGN.md §13), on a real
//! SeaweedFS: after `recall forget` or `recall config set exclude-paths`,
//! the next `recall publish` leaves the session out of the bucket — another
//! machine's team search no longer finds it — and, past the grace, its
//! generation object is deleted.

mod store_support;
mod team_support;

use object_store::path::Path as ObjPath;
use object_store::ObjectStoreExt;
use recall_core::layout::{self, bucket};
use recall_core::Response;
use recall_host::remote::Remote;
use std::path::Path;
use std::time::Duration;
use store_support::*;
use team_support::Weed;

const URL: &str = "s3://recall-forget/p";

fn cli(home: &Path, weed: &Weed, args: &[&str]) -> std::process::Output {
    let mut c = recall(home);
    for (k, v) in weed.env() {
        c.env(k, v);
    }
    c.args(args).output().expect("run recall")
}

fn publish(home: &Path, weed: &Weed, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["publish", URL, "--json"];
    args.extend_from_slice(extra);
    let out = cli(home, weed, &args);
    assert!(
        out.status.success(),
        "publish: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("report")
}

/// The session keys another machine's team search for `word` finds.
fn team_finds(viewer: &Path, weed: &Weed, word: &str) -> Vec<String> {
    let out = cli(
        viewer,
        weed,
        &["search", "--no-refresh", "--remote", URL, "--json", word],
    );
    let r: Response = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    // Another host's sessions are keyed `<host-id>/<key>`: the key as published.
    r.sessions
        .into_iter()
        .map(|s| match s.session_key.split_once('/') {
            Some((_, key)) => key.to_string(),
            None => s.session_key,
        })
        .collect()
}

#[test]
fn the_next_publish_removes_forgotten_and_excluded_sessions_from_the_bucket() {
    let Some(weed) = Weed::start("recall-forget") else {
        panic!("SeaweedFS (`weed`) is needed for this test");
    };
    let home = temp_dir("team-forget");
    let viewer = temp_dir("team-forget-viewer");
    for n in 1..=3 {
        write_session(&home, n, 3, 200);
    }
    run_ok(&home, &["index"], 0);
    publish(&home, &weed, &[]);
    assert_eq!(team_finds(&viewer, &weed, "w1x0"), vec![session_key(1)]);
    assert_eq!(team_finds(&viewer, &weed, "w2x0"), vec![session_key(2)]);
    let forgotten_gen = manifest(&home).expect("m").sessions[&session_key(1)]
        .generation_file
        .clone();

    // Forget session 1; exclude session 2's project (/home/u/code/p2).
    run_ok(&home, &["forget", &session_key(1)], 0);
    run_ok(
        &home,
        &["config", "set", "exclude-paths", "/home/u/code/p2"],
        0,
    );
    run_ok(&home, &["index"], 0);
    let m = manifest(&home).expect("m");
    assert!(!m.sessions.contains_key(&session_key(1)));
    assert!(!m.sessions.contains_key(&session_key(2)));
    assert!(m.sessions.contains_key(&session_key(3)));

    let report = publish(&home, &weed, &["--grace-secs", "0"]);
    assert!(
        team_finds(&viewer, &weed, "w1x0").is_empty(),
        "forgotten: gone from the bucket"
    );
    assert!(
        team_finds(&viewer, &weed, "w2x0").is_empty(),
        "excluded: gone from the bucket"
    );
    assert_eq!(team_finds(&viewer, &weed, "w3x0"), vec![session_key(3)]);

    // Past the grace (0 here), the forgotten generation object is deleted.
    let id = report["host_id"].as_str().expect("id").to_string();
    let remote = Remote::connect_with(URL, Duration::from_secs(5), weed.env()).expect("remote");
    let rt = recall_host::remote::runtime().expect("rt");
    let gens = bucket::key("p", &id, layout::GENERATIONS);
    let exists =
        |key: String| rt.block_on(async { remote.store.head(&ObjPath::from(key)).await.is_ok() });
    // One more publish: the snapshot that still named it was superseded
    // by the one above and is collected now, and the generation with it.
    publish(&home, &weed, &["--grace-secs", "0"]);
    assert!(
        !exists(format!("{gens}/{forgotten_gen}")),
        "the forgotten generation left the bucket"
    );
}
