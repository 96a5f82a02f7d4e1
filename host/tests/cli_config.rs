//! The store's index policy (`recall config`): persisted in the store, read
//! by every command, changed only explicitly (saying what it retires first);
//! `--retention-days N` is that same explicit change, so no later plain
//! invocation retires what the policy keeps; disabled, the indexer stops
//! and the index stays searchable.

mod store_support;

use std::process::Output;
use store_support::*;

/// The demo home's clock: its sessions are dated over the nine days before.
const NOW: i64 = 1_793_000_000_000;

fn recall_at(home: &std::path::Path, args: &[&str]) -> Output {
    let now = NOW.to_string();
    recall_with_retention(home)
        .args(["--now", now.as_str()])
        .args(args)
        .output()
        .expect("run recall")
}

fn ok(home: &std::path::Path, args: &[&str]) -> (String, String) {
    let out = recall_at(home, args);
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "recall {args:?}: {o} {e}");
    (o, e)
}

fn fails(home: &std::path::Path, args: &[&str]) -> String {
    let out = recall_at(home, args);
    assert_eq!(out.status.code(), Some(2), "recall {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn indexed(home: &std::path::Path) -> usize {
    manifest(home).map_or(0, |m| m.sessions.len())
}

fn demo_home(tag: &str) -> TempDir {
    let home = temp_dir(tag);
    recall_host::demo::write_at(&home, NOW).expect("demo home");
    home
}

#[test]
fn history_days_persist_and_only_an_explicit_change_retires() {
    let home = demo_home("config-days");
    assert_eq!(
        ok(&home, &["config", "get"]).0,
        "enabled = true\nhistory-days = 0\nexclude-paths =\n",
        "a new store keeps everything"
    );
    ok(&home, &["index"]);
    let all = indexed(&home);
    assert!(all > 3, "the demo home is indexed");

    // The change says what it retires, and retires nothing by itself.
    let (out, err) = ok(&home, &["config", "set", "history-days", "3"]);
    assert_eq!(out, "history-days = 3\n");
    assert!(err.contains("history-days 0 → 3"), "{err}");
    let said: usize = err
        .split("; ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {err}"));
    assert!(said > 0 && said < all, "{err}");
    assert_eq!(indexed(&home), all, "nothing retired before a sweep");
    assert_eq!(ok(&home, &["config", "get", "history-days"]).0, "3\n");

    // The next sweep applies exactly what was announced and says why;
    // answers carry the window they cover.
    let (out, _) = ok(&home, &["index"]);
    assert_eq!(indexed(&home), all - said);
    let why = format!(
        "retired {said} session{} older than 3 days (recall config set history-days 0 keeps everything)",
        if said == 1 { "" } else { "s" }
    );
    assert!(out.contains(&why), "{out}");
    let st: serde_json::Value =
        serde_json::from_str(&ok(&home, &["status", "--json"]).0).expect("json");
    assert_eq!(st["retired"]["sessions"], said, "{st}");
    assert_eq!(st["retired"]["message"], why.as_str());
    assert!(ok(&home, &["status"]).0.contains(&why));
    let v: serde_json::Value =
        serde_json::from_str(&ok(&home, &["search", "--json", "the"]).0).expect("json");
    assert_eq!(v["window_days"], 3);

    // `--retention-days 0` is the same explicit change; a later plain
    // invocation keeps to it instead of falling back to a default.
    let (_, err) = ok(&home, &["--retention-days", "0", "index"]);
    assert!(
        err.contains("history-days 3 → 0: keeps everything"),
        "{err}"
    );
    assert_eq!(indexed(&home), all);
    let (_, err) = ok(&home, &["index"]);
    assert!(
        !err.contains("history-days"),
        "a plain run changes nothing: {err}"
    );
    assert_eq!(
        indexed(&home),
        all,
        "a plain index retired what the policy keeps"
    );
    assert_eq!(ok(&home, &["config", "get", "history-days"]).0, "0\n");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&home, &["search", "--json", "the"]).0).expect("json");
    assert_eq!(
        v["window_days"],
        serde_json::Value::Null,
        "0 keeps everything"
    );

    // Clearing the index keeps the policy.
    ok(&home, &["clear"]);
    assert_eq!(ok(&home, &["config", "get", "history-days"]).0, "0\n");
}

/// DESIGN.md §13 "Default policy": a plain first `recall index` keeps every
/// session, however old (the old default of 90 days hid most of a long
/// history without a word).
#[test]
fn a_new_store_indexes_a_year_old_history_in_full() {
    let home = demo_home("config-year");
    // A year after the demo home's clock every session is a year old.
    let later = (NOW + 365 * 86_400_000).to_string();
    let run = |args: &[&str]| {
        let out = recall_with_retention(&home)
            .args(["--now", later.as_str()])
            .args(args)
            .output()
            .expect("run recall");
        assert_eq!(out.status.code(), Some(0), "recall {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["index", "--json"]);
    let r: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(r["retired"], 0, "{out}");
    let sessions: serde_json::Value =
        serde_json::from_str(&run(&["sessions", "--json", "--limit", "0"])).expect("json");
    let listed = sessions.as_array().expect("rows").len();
    assert!(listed > 3, "{listed}");
    assert_eq!(indexed(&home), listed);
    assert_eq!(r["new_sessions"], listed, "every session indexed");
    let st: serde_json::Value = serde_json::from_str(&run(&["status", "--json"])).expect("json");
    assert_eq!(st["retired"], serde_json::Value::Null);
}

/// A store keeps the policy it persisted: one saved at 90 days (the old
/// default) still retires at 90 days, and says so.
#[test]
fn a_persisted_policy_is_kept() {
    let home = demo_home("config-kept");
    let dir = store_dir(&home);
    std::fs::create_dir_all(&dir).expect("store dir");
    std::fs::write(
        dir.join("policy.json"),
        b"{\"enabled\": true, \"history_days\": 90}\n",
    )
    .expect("policy");
    let later = (NOW + 365 * 86_400_000).to_string();
    let out = recall_with_retention(&home)
        .args(["--now", later.as_str(), "index"])
        .output()
        .expect("run recall");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("older than 90 days (recall config set history-days 0 keeps everything)"),
        "{text}"
    );
    assert_eq!(indexed(&home), 0, "everything is older than 90 days");
    assert_eq!(ok(&home, &["config", "get", "history-days"]).0, "90\n");
}

#[test]
fn disabled_stops_the_indexer_and_keeps_the_index_searchable() {
    let home = demo_home("config-enabled");
    ok(&home, &["index"]);
    let all = indexed(&home);
    let (out, _) = ok(&home, &["config", "set", "enabled", "false"]);
    assert_eq!(out, "enabled = false\n");
    let err = fails(&home, &["index"]);
    assert!(err.contains("indexing is disabled"), "{err}");
    let st: serde_json::Value =
        serde_json::from_str(&ok(&home, &["status", "--json"]).0).expect("json");
    assert_eq!(st["enabled"], false);
    assert_eq!(st["policy"]["enabled"], false);
    // Search answers from the index as it is, and says why it is not refreshed.
    let out = recall_at(&home, &["search", "--json", "tide"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("indexing is disabled"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(!v["sessions"].as_array().expect("sessions").is_empty());
    assert_eq!(indexed(&home), all);
    ok(&home, &["config", "set", "enabled", "true"]);
    ok(&home, &["index"]);
    assert_eq!(ok(&home, &["config", "get", "enabled"]).0, "true\n");
}

#[test]
fn bad_values_and_a_damaged_policy_are_errors_that_change_nothing() {
    let home = demo_home("config-bad");
    ok(&home, &["index"]);
    let all = indexed(&home);
    for args in [
        &["config", "set", "history-days", "many"][..],
        &["config", "set", "history-days", "-1"],
        &["config", "set", "enabled", "maybe"],
        &["config", "set", "colour", "red"],
    ] {
        recall_at(&home, args)
            .status
            .code()
            .filter(|&c| c == 2)
            .unwrap_or_else(|| panic!("{args:?} should fail with 2"));
    }
    assert_eq!(
        ok(&home, &["config", "get"]).0,
        "enabled = true\nhistory-days = 0\nexclude-paths =\n"
    );
    let policy = store_dir(&home).join("policy.json");
    std::fs::write(&policy, b"{\"enabled\": tru").expect("damage");
    let err = fails(&home, &["index"]);
    assert!(err.contains("policy"), "{err}");
    assert_eq!(std::fs::read(&policy).expect("kept"), b"{\"enabled\": tru");
    assert_eq!(indexed(&home), all);
}
