//! `--max-tokens` and `--fields` of `recall search`, `sessions` and `show`:
//! the budgeted JSON an agent that shells out reads. Every answer stays
//! within its budget, and following its `cursor` / `next_offset` to the end
//! gives disjoint pages that together are the unbudgeted answer, in order.

mod store_support;

use serde_json::Value;
use std::collections::BTreeSet;
use store_support::*;

const SESSIONS: usize = 40;

fn home() -> TempDir {
    let home = temp_dir("budget");
    for n in 0..SESSIONS {
        write_session(&home, n, 3, 1_500);
    }
    run_ok(&home, &["index"], 0);
    home
}

fn json(home: &std::path::Path, args: &[&str]) -> (Value, usize) {
    json_code(home, args, 0)
}

fn json_code(home: &std::path::Path, args: &[&str], code: i32) -> (Value, usize) {
    let out = run_ok(home, args, code);
    let text = out.trim_end();
    (
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}")),
        text.chars().count(),
    )
}

fn keys(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| {
            s.get("session")
                .or_else(|| s.get("session_key"))
                .and_then(Value::as_str)
                .expect("key")
                .to_string()
        })
        .collect()
}

#[test]
fn a_budgeted_search_pages_to_the_whole_answer() {
    let home = home();
    let (full, _) = json(&home, &["search", "lorem", "--json", "--limit", "100"]);
    let all = keys(&full);
    assert_eq!(all.len(), SESSIONS);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = vec!["search", "lorem", "--limit", "100", "--max-tokens", "600"];
        if let Some(c) = &cursor {
            args.extend(["--cursor", c.as_str()]);
        }
        let (page, chars) = json(&home, &args);
        assert!(chars <= 600 * 4, "page of {chars} chars over its budget");
        assert_eq!(page["index"]["via"], "store");
        let k = keys(&page);
        assert!(
            !k.is_empty(),
            "a page with a cursor before it is never empty"
        );
        if page["cursor"].is_string() {
            assert!(page["truncated"]["sessions"].as_u64() > Some(0));
        }
        seen.extend(k);
        pages += 1;
        match page["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
        assert!(pages <= SESSIONS, "paging does not end");
    }
    assert!(pages > 1, "the budget cut the answer");
    let distinct: BTreeSet<_> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "pages overlap");
    assert_eq!(seen, all, "the pages together are the unbudgeted answer");
}

#[test]
fn fields_choose_the_detail_and_the_default_budget_applies() {
    let home = home();
    let (min, chars) = json(&home, &["search", "lorem", "--fields", "minimal"]);
    assert!(chars <= 8_000 * 4);
    let s = &min["sessions"][0];
    assert!(s.get("source").is_none() && s.get("cwd").is_none());
    let hit = s["hits"][0].as_object().expect("a hit");
    assert_eq!(hit.keys().collect::<Vec<_>>(), ["snippet"]);
    let (full, _) = json(
        &home,
        &["search", "lorem", "--fields", "full", "--limit", "3"],
    );
    assert!(full["sessions"][0]["session_id"].is_string());
    assert!(full["sessions"][0]["hits"][0]["locator"].is_object());
    // Nothing matched: the answer says why.
    // (exit 1, as every search that finds nothing).
    let (none, _) = json_code(&home, &["search", "zyzzyvaqx", "--max-tokens", "300"], 1);
    assert!(none["sessions"].as_array().unwrap().is_empty());
    assert!(none["empty"]["hint"]
        .as_str()
        .unwrap()
        .contains("40 indexed sessions"));
}

#[test]
fn a_budgeted_session_list_pages_by_offset() {
    let home = home();
    let (full, _) = json(&home, &["sessions", "--json", "--limit", "0"]);
    let all = keys(&Value::Object(
        [("sessions".to_string(), full)].into_iter().collect(),
    ));
    let mut seen = Vec::new();
    let mut offset = 0u64;
    for _ in 0..=SESSIONS {
        let o = offset.to_string();
        let (page, chars) = json(
            &home,
            &[
                "sessions",
                "--limit",
                "0",
                "--offset",
                &o,
                "--max-tokens",
                "300",
            ],
        );
        assert!(chars <= 300 * 4);
        assert_eq!(page["total"], SESSIONS as u64);
        seen.extend(keys(&page));
        match page["next_offset"].as_u64() {
            Some(n) => {
                assert!(n > offset);
                offset = n;
            }
            None => break,
        }
    }
    assert_eq!(seen, all);
}

#[test]
fn a_budgeted_show_pages_the_session_view() {
    let home = home();
    let key = session_key(3);
    let mut indexes = Vec::new();
    let mut offset = 0u64;
    let mut clipped = false;
    for _ in 0..20 {
        let o = offset.to_string();
        let (page, chars) = json(
            &home,
            &[
                "show",
                &key,
                "--scope",
                "all",
                "--offset",
                &o,
                "--max-tokens",
                "300",
            ],
        );
        assert!(chars <= 300 * 4, "{chars}");
        assert_eq!(page["session"]["session"], key.as_str());
        for e in page["entries"].as_array().unwrap() {
            indexes.push(e["index"].as_u64().unwrap());
            clipped |= e.get("chars").is_some();
        }
        match page["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(indexes, (0..6).collect::<Vec<u64>>());
    assert!(clipped, "1,500-byte texts do not fit 300 tokens uncut");
}

#[test]
fn bad_budgets_are_refused_with_a_reason() {
    let home = home();
    for args in [
        &["search", "lorem", "--max-tokens", "10"][..],
        &["search", "lorem", "--max-tokens", "999999999"],
        &["search", "lorem", "--fields", "everything"],
        &["sessions", "--max-tokens", "-5"],
    ] {
        let out = run(&home, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("max-tokens") || err.contains("fields") || err.contains("-5"),
            "{err}"
        );
    }
    let key = session_key(1);
    let out = run(
        &home,
        &["show", &key, "--max-tokens", "500", "--find", "lorem"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("do not combine"));
}
