//! `recall search` as a script sees it: grep-like exit codes, `--json`
//! printing exactly the HTTP body (the §4 response or the §7 error body),
//! human output grouped per session, and clear errors for bad flags.

mod store_support;

use recall_core::Response;
use serde_json::Value;
use std::path::Path;
use store_support::*;

fn home() -> TempDir {
    let home = temp_dir("cli");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    run_ok(&home, &["index"], 0);
    home
}

/// The JSON value with every leaf replaced by its type name and every
/// array by the shape of its first element: what the golden file pins.
fn shape(v: &Value) -> Value {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
    }
}

fn golden(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/store_support/golden")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).expect("golden file")).expect("golden JSON")
}

#[test]
fn exit_codes_are_grep_like() {
    let home = home();
    run_ok(&home, &["search", "zebrafinch"], 0);
    run_ok(&home, &["search", "nothing-like-this-anywhere"], 1);
    run_ok(&home, &["search", "zebrafinch", "--role", "wizard"], 2);
    run_ok(
        &home,
        &["search", "zebrafinch", "--since", "yesterday-ish"],
        2,
    );
    run_ok(
        &home,
        &["search", "zebrafinch", "--cursor", "not-a-cursor"],
        2,
    );
    run_ok(&home, &["search", "   "], 2);
    run_ok(&home, &["sessions"], 0);
    run_ok(&home, &["sessions", "--source", "codex"], 1);
    run_ok(&home, &["show", "pi:no-such-session"], 2);
}

#[test]
fn json_is_exactly_the_response_body() {
    let home = home();
    let out = run_ok(
        &home,
        &["search", "--json", "zebrafinch", "--limit", "1"],
        0,
    );
    let line = out.strip_suffix('\n').expect("one line");
    let r: Response = serde_json::from_str(line).expect("a §4 response");
    // Byte-identical to serializing the response type: nothing added, nothing reordered.
    assert_eq!(serde_json::to_string(&r).unwrap(), line);
    assert_eq!(
        shape(&serde_json::from_str(line).unwrap()),
        golden("search_response_shape.json")
    );
    assert_eq!(r.sessions.len(), 1);
    assert!(r.cursor.is_some());
    let hit = &r.sessions[0].hits[0];
    let start = hit.ranges[0][0] - hit.snippet_offset_bytes;
    let end = hit.ranges[0][1] - hit.snippet_offset_bytes;
    assert_eq!(&hit.snippet[start as usize..end as usize], "zebrafinch");
}

#[test]
fn json_errors_are_the_error_body_with_exit_2() {
    let home = home();
    let out = run_ok(
        &home,
        &["search", "--json", "zebrafinch", "--source", "vim"],
        2,
    );
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"ok": false, "error": "invalid_param", "message": v["message"]})
    );
    assert!(v["message"].as_str().unwrap().contains("vim"));
    let long = "x".repeat(1100);
    let out = run_ok(&home, &["search", "--json", &long], 2);
    assert_eq!(
        serde_json::from_str::<Value>(out.trim()).unwrap()["error"],
        "query_too_long"
    );
}

#[test]
fn an_invalid_query_shows_where_and_exclusions_follow_the_double_dash() {
    let home = home();
    let out = run(&home, &["search", "zebrafinch", "(pangolin"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "invalid_query: this parenthesis is never closed\n  zebrafinch (pangolin\n             ^"
        ),
        "{err}"
    );
    let out = run_ok(&home, &["search", "--json", "zebrafinch", "(pangolin"], 2);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (v["error"].as_str(), v["at"].as_u64()),
        (Some("invalid_query"), Some(11))
    );
    // After `--` a query word may begin with `-`: an exclusion. Two
    // sessions hold zebrafinch, one of them in the record with pangolin.
    let keys = |args: &[&str]| {
        let r: Response = serde_json::from_str(&run_ok(&home, args, 0)).unwrap();
        r.sessions
            .into_iter()
            .map(|s| s.session_key)
            .collect::<Vec<_>>()
    };
    let both = keys(&["search", "--json", "zebrafinch"]);
    let one = keys(&["search", "--json", "--", "zebrafinch", "-pangolin"]);
    assert_eq!((both.len(), one.len()), (2, 1), "{both:?} {one:?}");
    let either = keys(&["search", "--json", "quokka_roundtrip", "OR", "pangolin"]);
    assert_eq!(either.len(), 2, "{either:?}");
}

#[test]
fn words_are_joined_and_every_field_is_a_flag() {
    let home = home();
    // Two words = two AND-ed terms in one record.
    let r: Response = serde_json::from_str(&run_ok(
        &home,
        &["search", "--json", "quokka_roundtrip", "passes"],
        0,
    ))
    .unwrap();
    assert_eq!(r.sessions.len(), 1);
    assert_eq!(r.sessions[0].total_hits, 1);
    // Filters reach the core: source, role, cwd, since/until, sort.
    run_ok(
        &home,
        &[
            "search",
            "zebrafinch",
            "--source",
            "pi",
            "--role",
            "assistant",
            "--cwd",
            "/home/u/code/gamma",
        ],
        0,
    );
    run_ok(
        &home,
        &["search", "zebrafinch", "--cwd", "/home/u/code/beta"],
        1,
    );
    run_ok(
        &home,
        &["search", "zebrafinch", "--since", "2026-10-03T00:00:00Z"],
        0,
    );
    run_ok(&home, &["search", "zebrafinch", "--until", "2026-09-30"], 1);
    run_ok(
        &home,
        &[
            "search",
            "zebrafinch",
            "--sort",
            "relevance",
            "--scope",
            "all",
            "--subagents",
            "false",
            "--include-superseded",
            "false",
        ],
        0,
    );
}

#[test]
fn human_output_groups_hits_per_session_and_colors_only_when_asked() {
    let home = home();
    let plain = run_ok(&home, &["search", "zebrafinch"], 0);
    assert!(!plain.contains('\x1b'), "no escapes when piped");
    let headings: Vec<&str> = plain.lines().filter(|l| l.starts_with("pi:")).collect();
    assert_eq!(headings.len(), 2, "{plain}");
    assert!(
        headings[0].starts_with("pi:0c3fc003"),
        "newest session first: {plain}"
    );
    assert!(plain.contains("resume: pi --session"));
    let colored = run_ok(&home, &["search", "--color", "always", "zebrafinch"], 0);
    assert!(colored.contains("\x1b[1;31mzebrafinch\x1b[0m"));
    // "More" is a short command, not the cursor; --page finds its cursor,
    // --cursor keeps working for scripts and --json keeps the full cursor.
    let paged = run_ok(&home, &["search", "zebrafinch", "--limit", "1"], 0);
    let hint = paged
        .lines()
        .find_map(|l| l.strip_prefix("more: "))
        .unwrap_or_else(|| panic!("{paged}"));
    assert!(
        hint.ends_with(" search zebrafinch --limit 1 --page 2"),
        "{hint}"
    );
    assert!(!paged.contains("--cursor"), "{paged}");
    let first = paged
        .lines()
        .find(|l| l.starts_with("pi:"))
        .expect("heading");
    let page2 = run_ok(
        &home,
        &["search", "zebrafinch", "--limit", "1", "--page", "2"],
        0,
    );
    let second = page2
        .lines()
        .find(|l| l.starts_with("pi:"))
        .expect("heading");
    assert_ne!(
        first, second,
        "page 2 is the next session:\n{paged}\n{page2}"
    );
    let v: serde_json::Value = serde_json::from_str(&run_ok(
        &home,
        &["search", "zebrafinch", "--limit", "1", "--json"],
        0,
    ))
    .expect("json");
    let cursor = v["cursor"].as_str().expect("the full cursor");
    let by_cursor = run_ok(
        &home,
        &["search", "zebrafinch", "--limit", "1", "--cursor", cursor],
        0,
    );
    assert_eq!(
        by_cursor.lines().find(|l| l.starts_with("pi:")),
        Some(second),
        "--cursor and --page reach the same page"
    );
    // A page never printed is a clear error.
    let out = run(
        &home,
        &["search", "zebrafinch", "--limit", "1", "--page", "7"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("page 7 of this search is not known"));
}

#[test]
fn malformed_flags_are_clear_errors() {
    let home = home();
    for args in [
        vec!["search", "--bogus", "x"],
        vec!["search"],
        vec!["search", "x", "--limit"],
        vec!["--retention-days", "many", "index"],
        vec!["--now", "later", "status"],
        vec!["frobnicate"],
    ] {
        let out = run(&home, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(run(&home, &["--help"]).status.code(), Some(0));
}
