//! The CLI in a shell pipeline and at its edges: a reader that closes early
//! (`recall show … | head`) ends every command quietly, a search of an empty
//! index says where it looked, and a busy address is reported once with
//! what to do about it.

mod store_support;

use std::process::{Output, Stdio};
use store_support::*;

fn home() -> TempDir {
    let home = temp_dir("pipes");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    run_ok(&home, &["index"], 0);
    home
}

/// Runs `recall <args>` with stdout a pipe whose reader is already closed:
/// the first write fails with EPIPE, as after `head` has read its lines.
fn into_closed_pipe(home: &std::path::Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    recall(home)
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run recall")
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let home = home();
    let key = "pi:0a1fa001-0000-7000-8000-000000000001";
    for args in [
        &["show", key][..],
        &["show", "--json", key],
        &["sessions"],
        &["sessions", "--json"],
        &["search", "zebrafinch"],
        &["search", "--json", "zebrafinch"],
        &["status"],
        &["status", "--json"],
        &["index"],
        &["show", key, "--find", "the"],
        &["show", key, "--find", "the", "--json"],
        &["show", key, "--text", "the"],
        &["trace", key],
        &["trace", "--json", key],
        &["trace", key, "--index", "0"],
        &["config", "get"],
        &["completions", "bash"],
        &["--help"],
        &["--version"],
    ] {
        let out = into_closed_pipe(&home, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "recall {args:?} into a closed pipe: stderr {stderr}"
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "recall {args:?} is quiet: {stderr}"
        );
    }
}

#[test]
fn a_search_of_an_empty_index_says_where_it_looked() {
    let home = temp_dir("pipes-empty");
    let out = run(&home, &["search", "anything"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the index is empty"), "{stderr}");
    let real = std::fs::canonicalize(&home).unwrap();
    for root in [".claude/projects", ".codex", ".pi/agent/sessions"] {
        let p = real.join(root);
        assert!(
            stderr.contains(&p.display().to_string()),
            "names {}: {stderr}",
            p.display()
        );
    }
    assert!(stderr.contains("--home"), "says how to look elsewhere");
    // --json keeps stdout the body alone; the note still goes to stderr.
    let out = run(&home, &["search", "--json", "anything"]);
    assert_eq!(out.status.code(), Some(1));
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON body");
    assert_eq!(body["sessions"], serde_json::json!([]));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the index is empty"));
    // A populated index that does not match stays silent.
    let home = self::home();
    let out = run(&home, &["search", "nothing-like-this-anywhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("the index is empty"));
}

#[test]
fn an_address_in_use_is_reported_once_with_the_fix() {
    let home = temp_dir("pipes-bind");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = busy.local_addr().unwrap().to_string();
    let out = recall(&home)
        .args(["serve", "--no-demo", "--no-index", "--bind", &addr])
        .stdout(Stdio::null())
        .output()
        .expect("run recall serve");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("cannot listen"))
        .unwrap_or_else(|| panic!("says it cannot listen: {stderr}"));
    assert_eq!(
        line.to_lowercase().matches("in use").count(),
        1,
        "the cause is printed once: {line}"
    );
    assert!(
        line.contains(&format!("http://{addr}")),
        "names the address: {line}"
    );
    assert!(
        line.contains("recall serve") && line.contains("--bind"),
        "{line}"
    );
}
