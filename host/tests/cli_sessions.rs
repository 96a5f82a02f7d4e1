//! `recall sessions`, `show`, `status` and `clear` as a user runs them.

mod store_support;

use serde_json::Value;
use store_support::*;

#[test]
fn sessions_list_newest_first_with_filters() {
    let home = temp_dir("cli-sessions");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    let v: Value = serde_json::from_str(&run_ok(&home, &["sessions", "--json"], 0)).unwrap();
    let keys: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "pi:0c3fc003-0000-7000-8000-000000000003",
            "pi:0b2fb002-0000-7000-8000-000000000002",
            "pi:0a1fa001-0000-7000-8000-000000000001"
        ]
    );
    let v: Value = serde_json::from_str(&run_ok(
        &home,
        &["sessions", "--json", "--cwd", "/home/u/code/beta"],
        0,
    ))
    .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    run_ok(&home, &["sessions", "--until", "2026-09-01"], 1);
    let out = run(&home, &["sessions", "--source", "emacs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("emacs"));
}

#[test]
fn show_prints_records_in_order_with_flags() {
    let home = temp_dir("cli-show");
    let f = add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("batches of 500", "one transaction");
    std::fs::write(&f, text).unwrap();
    run_ok(&home, &["index"], 0);
    let out = run_ok(&home, &["show", "0b2fb002-0000-7000-8000-000000000002"], 0);
    let heads: Vec<&str> = out.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(heads.len(), 3, "{out}");
    assert!(heads[0].ends_with("user"));
    assert!(heads[1].ends_with("assistant"));
    assert!(heads[2].ends_with("assistant [superseded]"), "{out}");
    let v: Value =
        serde_json::from_str(&run_ok(&home, &["show", "--json", "pi:0b2fb002"], 0)).unwrap();
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs[2]["superseded"], true);
    assert_eq!(recs[2]["generation"], 0);
    assert_eq!(recs[1]["generation"], 1);
}

#[test]
fn status_and_clear() {
    let home = temp_dir("cli-status");
    add_fixture(&home, "pi-alpha.jsonl");
    let v: Value = serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).unwrap();
    assert_eq!(v["phase"], "idle");
    assert_eq!(v["files_due"], 1);
    run_ok(&home, &["index"], 0);
    let v: Value = serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).unwrap();
    assert_eq!(v["phase"], "current");
    assert_eq!(v["files_due"], 0);
    assert_eq!(v["files_indexed"], 1);
    assert_eq!(v["coverage"]["pi"]["sessions"], 1);
    let id = v["store_id"].as_str().unwrap().to_string();
    run_ok(&home, &["clear"], 0);
    let v: Value = serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).unwrap();
    assert_ne!(v["store_id"], id.as_str());
    assert_eq!(v["sessions"], 0);
    assert_eq!(v["generations"], 0);
    // The next search rebuilds the store.
    run_ok(&home, &["search", "zebrafinch"], 0);
}

#[test]
fn model_filter_on_sessions_and_search() {
    let home = temp_dir("cli-model");
    for (f, model) in [
        ("pi-alpha.jsonl", Some("gpt-5.5")),
        ("pi-beta.jsonl", Some("claude-sonnet-4-5")),
        ("pi-gamma.jsonl", None),
    ] {
        let path = add_fixture(&home, f);
        if let Some(m) = model {
            let text = std::fs::read_to_string(&path).unwrap().replace(
                "\"role\":\"assistant\",",
                &format!("\"role\":\"assistant\",\"model\":\"{m}\","),
            );
            std::fs::write(&path, text).unwrap();
        }
    }
    let keys = |args: &[&str], code: i32| -> Vec<String> {
        let v: Value = serde_json::from_str(&run_ok(&home, args, code)).unwrap();
        let rows = v.get("sessions").unwrap_or(&v).as_array().unwrap().clone();
        rows.iter()
            .map(|s| s["session_key"].as_str().unwrap().to_string())
            .collect()
    };
    let alpha = "pi:0a1fa001-0000-7000-8000-000000000001";
    let beta = "pi:0b2fb002-0000-7000-8000-000000000002";
    let v: Value = serde_json::from_str(&run_ok(
        &home,
        &["sessions", "--json", "--model", "GPT-5.5"],
        0,
    ))
    .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["session_key"], alpha);
    assert_eq!(v[0]["models"], serde_json::json!(["gpt-5.5"]));
    assert_eq!(
        keys(
            &["sessions", "--json", "--model", "gpt-5.5,claude-sonnet-4-5"],
            0
        ),
        [beta, alpha]
    );
    // An unknown model (or a prefix of one) matches nothing; gamma records none.
    run_ok(&home, &["sessions", "--model", "gpt-5"], 1);
    assert_eq!(keys(&["search", "--json", "zebrafinch"], 0).len(), 2);
    assert_eq!(
        keys(&["search", "--json", "--model", "Gpt-5.5", "zebrafinch"], 0),
        [alpha]
    );
    run_ok(
        &home,
        &["search", "--model", "claude-sonnet-4-5", "zebrafinch"],
        1,
    );
}
