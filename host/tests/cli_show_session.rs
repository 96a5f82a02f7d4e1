//! `recall show` with the one-session flags and `recall trace`, as a user
//! runs them (pi fixtures; the rewrite of pi-beta supersedes a record).

mod store_support;

use serde_json::Value;
use store_support::*;

const BETA: &str = "pi:0b2fb002-0000-7000-8000-000000000002";

/// pi-beta, indexed, then rewritten in place: record 2 is the superseded
/// first answer, record 1 its replacement.
fn rewritten_beta(tag: &str) -> TempDir {
    let home = temp_dir(tag);
    let f = add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("batches of 500", "one transaction");
    std::fs::write(&f, text).unwrap();
    run_ok(&home, &["index"], 0);
    home
}

fn json(home: &std::path::Path, args: &[&str], code: i32) -> Value {
    serde_json::from_str(&run_ok(home, args, code)).unwrap()
}

fn indices(v: &Value, field: &str) -> Vec<u64> {
    v[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn show_filters_surface_around_and_find() {
    let home = rewritten_beta("cli-show-session");
    let all = json(&home, &["show", "--json", BETA], 0);
    assert_eq!(all["records"].as_array().unwrap().len(), 3);

    let v = json(&home, &["show", "--json", "--surface", BETA], 0);
    assert_eq!(indices(&v, "entries"), vec![0, 1]);
    let v = json(&home, &["show", "--json", "--state", "superseded", BETA], 0);
    assert_eq!(indices(&v, "entries"), vec![2]);
    let v = json(&home, &["show", "--json", "--role", "user", BETA], 0);
    assert_eq!(indices(&v, "entries"), vec![0]);
    // Case-insensitive, and a space matches a run of whitespace.
    let v = json(
        &home,
        &["show", "--json", "--text", "BATCHES   of", BETA],
        0,
    );
    assert_eq!(indices(&v, "entries"), vec![2]);
    let v = json(
        &home,
        &["show", "--json", "--from", "1", "--to", "1", BETA],
        0,
    );
    assert_eq!(indices(&v, "entries"), vec![1]);
    run_ok(&home, &["show", "--role", "", BETA], 1);
    let out = run(&home, &["show", "--from", "2", "--to", "1", BETA]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid_filter"));

    let v = json(
        &home,
        &["show", "--json", "--around", "1", "--context", "0", BETA],
        0,
    );
    assert_eq!(indices(&v, "entries"), vec![1]);
    assert_eq!(v["center"], 1);

    let v = json(
        &home,
        &["show", "--json", "--find", "marmoset migration", BETA],
        0,
    );
    assert_eq!(indices(&v, "hits"), vec![0, 1, 2]);
    assert_eq!(v["hits"][2]["state"], "superseded");
    let human = run_ok(&home, &["show", "--find", "transaction", BETA], 0);
    assert!(human.starts_with("#1 "), "{human}");
    run_ok(&home, &["show", "--find", "zebra", BETA], 1);
}

#[test]
fn trace_a_session_and_a_record() {
    let home = rewritten_beta("cli-trace");
    let v = json(&home, &["trace", "--json", BETA], 0);
    assert_eq!(v["session"]["session_key"], BETA);
    assert!(v["ancestors"].as_array().unwrap().is_empty());
    let v = json(&home, &["trace", "--json", "--index", "2", BETA], 0);
    assert_eq!(v["record"]["state"], "superseded");
    assert!(v["superseded_by"]["kind"].is_string(), "{v}");
    let v = json(&home, &["trace", "--json", "--index", "0", BETA], 0);
    assert!(v["superseded_by"].is_null());
    let out = run(&home, &["trace", "--index", "9", BETA]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("record_not_found"));
}

#[test]
fn sessions_filters_by_id_title_cwd_and_presence() {
    let home = temp_dir("cli-sessions-filters");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    let keys = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["sessions", "--json"];
        all.extend_from_slice(args);
        json(&home, &all, 0)
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&["--id", "0b2fb"]), [BETA]);
    assert_eq!(keys(&["--id", "pi:0b2fb002"]), [BETA]);
    assert_eq!(keys(&["--title", "MARMOSET   migration"]), [BETA]);
    assert_eq!(keys(&["--presence", "present"]).len(), 3);
    run_ok(&home, &["sessions", "--presence", "gone"], 1);
    run_ok(&home, &["sessions", "--no-cwd"], 1);
    let out = run(&home, &["sessions", "--presence", "maybe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("presence"));
}

#[test]
fn trace_accepts_a_prefix_of_the_session_id() {
    let home = temp_dir("trace-prefix");
    add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    // The help says a unique id or key prefix names a session.
    let v = json(&home, &["trace", "0b2fb002", "--json"], 0);
    assert!(v.to_string().contains(BETA), "{v}");
    let v = json(&home, &["trace", "pi:0b2fb", "--json"], 0);
    assert!(v.to_string().contains(BETA), "{v}");
}
