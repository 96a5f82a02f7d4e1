//! Hostile source files never hang or poison a sweep (issue #12, items 1, 6
//! and 7): FIFOs named like transcripts, symlink loops, truncated zstd
//! rollouts and files that are not rollouts.

mod store_support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use store_support::*;

/// Runs `cmd` to completion, killing it (and failing the test) after `limit`.
fn run_bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn recall");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "recall hung for {limit:?}: stderr {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

const SID: &str = "11111111-2222-4333-8444-555555555555";

/// Every place a transcript-named FIFO can sit.
fn plant_fifos(home: &Path) -> Vec<std::path::PathBuf> {
    let claude = home.join(".claude/projects/-home-u-p");
    let codex = home.join(".codex");
    let fifos = vec![
        claude.join(format!("{SID}.jsonl")),
        claude.join(format!("{SID}/subagents/agent-a1.jsonl")),
        claude.join("agent-b2.jsonl"),
        codex.join(format!(
            "sessions/2026/01/02/rollout-2026-01-02T03-04-05-{SID}.jsonl"
        )),
        codex.join("session_index.jsonl"),
        home.join(".kimi-code/session_index.jsonl"),
    ];
    for f in &fifos {
        mkfifo(f);
    }
    fifos
}

#[test]
fn fifos_named_like_transcripts_never_hang_the_index() {
    let home = temp_dir("fifo");
    write_session(&home, 1, 3, 100);
    let fifos = plant_fifos(&home);
    let mut cmd = recall(&home);
    cmd.args(["index", "--json"]);
    let out = run_bounded(cmd, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    let failures = report["failures"].as_array().expect("failures listed");
    for main in [&fifos[0], &fifos[3]] {
        let named = failures.iter().any(|f| {
            f["path"].as_str() == main.to_str()
                && f["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("not a regular file (fifo)"))
        });
        assert!(named, "{main:?} is named as failed: {failures:?}");
    }
    // `recall status` names them too, without reading them again.
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).expect("status json");
    assert_eq!(
        status["failed_units"].as_array().map(Vec::len),
        Some(failures.len()),
        "{status}"
    );
    assert_eq!(
        status["files_due"], 0,
        "failed units are not due again: {status}"
    );
    let m = manifest(&home).expect("a manifest");
    assert!(
        m.sessions.contains_key(&session_key(1)),
        "the real session is indexed"
    );
    assert_eq!(m.sessions.len(), 1, "no session from a FIFO");
    // A search (which sweeps first) returns too, and finds the session.
    let mut cmd = recall(&home);
    cmd.args(["search", "--json", "lorem"]);
    let out = run_bounded(cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0));
    drop(fifos);
}
