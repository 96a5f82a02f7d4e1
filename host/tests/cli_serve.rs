//! `recall serve` as a user starts it: on a machine with no agent
//! transcripts it serves the bundled demo home (so the README's first command
//! shows something real), and with `--no-demo` the empty index.

mod http_support;
mod store_support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Stdio};

/// Starts `recall serve` on a free loopback port in an empty home (temp
/// files under `tmp`); returns the child and its address.
fn serve(home: &std::path::Path, tmp: &std::path::Path, extra: &[&str]) -> (Child, SocketAddr) {
    let mut child = store_support::recall(home)
        .env("TMPDIR", tmp)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn recall serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("recall serve says where it listens")
            .expect("stderr");
        if let Some(rest) = line.split("serving http://").nth(1) {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn sessions(addr: SocketAddr) -> Vec<serde_json::Value> {
    for _ in 0..100 {
        let v = http_support::get(addr, "/api/sessions", &[]).json();
        let list = v["sessions"].as_array().cloned().unwrap_or_default();
        if !list.is_empty() || v["state"] != "building" {
            return list;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the index never finished building");
}

#[test]
fn an_empty_machine_gets_the_demo_home_unless_no_demo() {
    let home = store_support::temp_dir("serve-empty");
    let tmp = store_support::temp_dir("serve-tmp");
    let (mut child, addr) = serve(&home, &tmp, &[]);
    // The backfill of the demo home runs in the background: wait for it.
    let mut list = Vec::new();
    for _ in 0..100 {
        list = sessions(addr);
        let seen: std::collections::BTreeSet<&str> =
            list.iter().filter_map(|s| s["source"].as_str()).collect();
        if seen.len() == recall_core::model::Source::ALL.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let sources: std::collections::BTreeSet<&str> =
        list.iter().filter_map(|s| s["source"].as_str()).collect();
    assert_eq!(
        sources.into_iter().collect::<Vec<_>>(),
        [
            "claude-code",
            "codex",
            "copilot",
            "dsh",
            "gemini",
            "intendant",
            "kimi",
            "opencode",
            "pi",
            "qwen"
        ],
        "every agent's demo sessions are served"
    );
    assert!(
        tmp.join("recall-demo").is_dir(),
        "the demo home lives in TMPDIR"
    );
    assert!(
        !home
            .join(".recall")
            .join("index")
            .join("v1")
            .join("catalog.json")
            .exists()
            || store_support::manifest(&home).is_none_or(|m| m.sessions.is_empty()),
        "the user's own store stays empty"
    );

    let (mut child, addr) = serve(&home, &tmp, &["--no-demo"]);
    let list = sessions(addr);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        list.is_empty(),
        "--no-demo serves the empty index: {list:?}"
    );
}

/// A service manager stops the daemon with SIGTERM: it shuts down as on
/// Ctrl-C (exit 0, after writing out what it holds in memory), not killed
/// by the signal.
#[test]
fn sigterm_stops_the_daemon_cleanly() {
    let home = store_support::temp_dir("serve-term");
    let tmp = store_support::temp_dir("serve-term-tmp");
    let (mut child, addr) = serve(&home, &tmp, &["--no-demo"]);
    let _ = sessions(addr);
    let term = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(term.success(), "kill -TERM");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("recall serve did not stop on SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "a SIGTERM stop exits 0: {status:?}");
}
