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
    // Indexed, but not everything: exit 3 (item 4), the failures listed.
    assert_eq!(
        out.status.code(),
        Some(3),
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
    // `recall serve` finishes its backfill and answers, and a search through
    // it (the daemon refreshes first) returns.
    let mut daemon = serve(&home);
    let mut cmd = recall(&home);
    cmd.args(["search", "--json", "lorem"]);
    let out = run_bounded(cmd, Duration::from_secs(60));
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(body["state"], "ready", "{body}");
    drop(fifos);
}

fn indexer(
    home: &Path,
) -> (
    std::sync::Arc<recall_host::store::Store>,
    recall_host::index::IndexOptions,
) {
    use recall_host::extract::Roots;
    let store = std::sync::Arc::new(recall_host::store::Store::open(&store_dir(home)).unwrap());
    let mut opts = recall_host::index::IndexOptions::new(Roots::resolve(
        &fs::canonicalize(home).unwrap(),
        |_| None,
    ));
    opts.retention_days = 0;
    opts.workers = 1;
    (store, opts)
}

#[test]
fn a_stalled_unit_is_abandoned_and_the_sweep_goes_on() {
    use recall_host::index::{stalled_threads, FaultHook, Indexer};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let home = temp_dir("stall");
    let stalled = write_session(&home, 1, 3, 100);
    write_session(&home, 2, 3, 100);
    write_session(&home, 3, 3, 100);
    let (store, mut opts) = indexer(&home);
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let name = stalled.file_name().unwrap().to_owned();
    // Reading this unit hangs like a read on a dead network mount.
    opts.fault = Some(FaultHook::new(move |src| {
        if src.files[0].file_name() == Some(name.as_os_str()) {
            while !r.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }));
    opts.unit_deadline = Duration::from_millis(300);
    let ix = Indexer::new(store.clone(), opts);
    let t = Instant::now();
    let report = ix.sweep().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the sweep was not stalled"
    );
    assert_eq!(report.abandoned, 1, "{report:?}");
    assert_eq!(
        report.new_sessions, 2,
        "the other units are indexed: {report:?}"
    );
    assert!(stalled_threads() >= 1, "the abandoned thread is reported");
    let named = report.failures.iter().any(|f| {
        Path::new(&f.path).file_name() == stalled.file_name() && f.reason.starts_with("abandoned")
    });
    assert!(named, "{:?}", report.failures);
    let m = store.current().unwrap();
    assert!(m.sessions.contains_key(&session_key(2)) && m.sessions.contains_key(&session_key(3)));
    // Unchanged, it is not read (nor stalled on) again; once it changes it is.
    let again = ix.sweep().unwrap();
    assert_eq!((again.abandoned, again.extracted), (0, 0), "{again:?}");
    release.store(true, Ordering::SeqCst);
    let t = Instant::now();
    while stalled_threads() > 0 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        stalled_threads(),
        0,
        "the left-behind thread ended once released"
    );
    std::thread::sleep(Duration::from_millis(20));
    let mut text = fs::read_to_string(&stalled).unwrap();
    text.push_str(&pi_message(
        "ffff0001",
        None,
        "user",
        "after the stall",
        1_790_003_700_000,
    ));
    text.push('\n');
    fs::write(&stalled, text).unwrap();
    let third = ix.sweep().unwrap();
    assert_eq!(third.new_sessions, 1, "{third:?}");
    assert!(third.failures.is_empty(), "{:?}", third.failures);
}

/// A real Codex rollout under `sessions/`, plus a copy of
/// `session_index.jsonl` (whose entries carry the rollout's `id`) and a
/// symlink loop back to `CODEX_HOME`.
#[test]
fn a_non_rollout_or_a_symlink_loop_never_takes_a_rollouts_key() {
    let home = temp_dir("codexkey");
    let codex = home.join(".codex");
    let day = codex.join("sessions/2025/12/28");
    fs::create_dir_all(&day).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/shared/corpus/codex/real/sample_codex_session-simonw-0.77.0.jsonl");
    let id = "019b64e5-57fa-7463-b644-fba7e456f905";
    fs::copy(
        &sample,
        day.join(format!("rollout-2025-12-28T12-18-30-{id}.jsonl")),
    )
    .unwrap();
    let index = format!(
        "{{\"id\":\"{id}\",\"thread_name\":\"the real title\",\"updated_at\":\"2025-12-29T00:00:00Z\"}}\n"
    );
    fs::write(codex.join("session_index.jsonl"), &index).unwrap();
    fs::write(codex.join("sessions/session_index.jsonl"), &index).unwrap();
    std::os::unix::fs::symlink("..", codex.join("sessions/loop")).unwrap();
    let out = run_ok(&home, &["index", "--json"], 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = manifest(&home).unwrap();
    let key = format!("codex:{id}");
    let e = m.sessions.get(&key).unwrap_or_else(|| panic!("{report}"));
    assert!(
        e.meta.messages > 0,
        "the rollout keeps its key and messages"
    );
    assert!(
        e.files[0].path.contains("rollout-"),
        "owned by the rollout, not {}",
        e.files[0].path
    );
    assert_eq!(m.sessions.len(), 1);
    // Nothing was found through the loop.
    assert!(m
        .sessions
        .values()
        .all(|e| !e.files[0].path.contains("/loop/")));
}

/// A `.jsonl.zst` rollout cut short: its decodable prefix is indexed.
#[test]
fn a_truncated_zst_rollout_indexes_its_prefix() {
    let home = temp_dir("zstcut");
    let day = home.join(".codex/sessions/2025/12/28");
    fs::create_dir_all(&day).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/shared/corpus/codex/real/sample_codex_session-simonw-0.77.0.jsonl");
    // The sample's session_meta, then enough distinct prose to span many
    // zstd blocks (a cut single block decodes to nothing).
    let first = fs::read_to_string(&sample)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut plain = first + "\n";
    for i in 0..6000u64 {
        let word = format!("{:x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        plain += &format!(
            "{{\"timestamp\":\"2025-12-28T12:19:{:02}.000Z\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"user_message\",\"message\":\"prompt {i} {word} {word}{i}\"}}}}\n",
            i % 60
        );
    }
    let z = zstd::encode_all(plain.as_bytes(), 3).unwrap();
    let path =
        day.join("rollout-2025-12-28T12-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl.zst");
    fs::write(&path, &z[..z.len() * 2 / 3]).unwrap();
    let out = run_ok(&home, &["index", "--json"], 0);
    let m = manifest(&home).unwrap();
    let e = m
        .sessions
        .get("codex:019b64e5-57fa-7463-b644-fba7e456f905")
        .unwrap_or_else(|| panic!("the prefix is indexed: {out}"));
    assert!(
        e.records > 100 && e.records < 6000,
        "a prefix: {}",
        e.records
    );
    // Unchanged, it is not read again.
    let again: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    assert_eq!(again["bytes_read"], 0, "{again}");
}

/// A `.jsonl.zst` rollout cut inside its first block decodes to nothing:
/// it is not a silent "empty" unit but named in `skipped_files`.
#[test]
fn a_zst_rollout_cut_inside_its_first_block_is_reported() {
    let home = temp_dir("zstfirst");
    let day = home.join(".codex/sessions/2025/12/28");
    fs::create_dir_all(&day).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/shared/corpus/codex/real/sample_codex_session-simonw-0.77.0.jsonl");
    let z = zstd::encode_all(fs::read(&sample).unwrap().as_slice(), 3).unwrap();
    let path =
        day.join("rollout-2025-12-28T12-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl.zst");
    fs::write(&path, &z[..z.len() / 2]).unwrap();
    let out: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    let named = out["skipped_files"].as_array().is_some_and(|a| {
        a.iter().any(|f| {
            f.as_str().is_some_and(|f| {
                f.contains("019b64e5-57fa-7463-b644-fba7e456f905.jsonl.zst")
                    && f.contains("cut short")
            })
        })
    });
    assert!(named, "{out}");
    let text = run_ok(&home, &["index"], 0);
    assert!(
        !text.contains("cut short"),
        "an unchanged file is not read again: {text}"
    );
}

/// Two rollout files carrying one session id (a partial copy, newer, and
/// the whole session): the one with more records owns the key, whichever
/// is read first.
#[test]
fn a_partial_copy_never_takes_a_healthy_sessions_key() {
    use recall_host::index::Indexer;
    let home = temp_dir("partial");
    let day = home.join(".codex/sessions/2025/12/28");
    fs::create_dir_all(&day).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/shared/corpus/codex/real/sample_codex_session-simonw-0.77.0.jsonl");
    let text = fs::read_to_string(&sample).unwrap();
    let id = "019b64e5-57fa-7463-b644-fba7e456f905";
    let whole = day.join(format!("rollout-2025-12-28T12-18-30-{id}.jsonl"));
    fs::write(&whole, &text).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // The copy is newer, so a backfill (newest first) reads it first.
    let head: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    fs::write(day.join("copy.jsonl"), head).unwrap();
    let (store, opts) = indexer(&home);
    Indexer::new(store.clone(), opts).sweep().unwrap();
    let m = store.current().unwrap();
    let e = &m.sessions[&format!("codex:{id}")];
    assert_eq!(
        e.files[0].path,
        whole.to_string_lossy(),
        "the whole session owns its key ({} records)",
        e.records
    );
}

/// A root whose directory never answers (readdir/stat on a hung mount):
/// the sweep ends within the root deadline, the other roots are indexed,
/// the stalled root is degraded with a reason, and its sessions are not
/// found gone (nobody looked at their sources).
#[test]
fn a_stalled_root_is_degraded_and_the_other_roots_are_indexed() {
    use recall_host::index::{Indexer, RootHook};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let home = temp_dir("stallroot");
    write_session(&home, 1, 3, 100);
    let day = home.join(".codex/sessions/2025/12/28");
    fs::create_dir_all(&day).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/shared/corpus/codex/real/sample_codex_session-simonw-0.77.0.jsonl");
    let id = "019b64e5-57fa-7463-b644-fba7e456f905";
    fs::copy(
        &sample,
        day.join(format!("rollout-2025-12-28T12-18-30-{id}.jsonl")),
    )
    .unwrap();
    let codex_key = format!("codex:{id}");
    let (store, opts) = indexer(&home);
    // Healthy first: both roots indexed.
    Indexer::new(store.clone(), opts.clone()).sweep().unwrap();
    let m = store.current().unwrap();
    assert!(m.sessions.contains_key(&codex_key) && m.sessions.contains_key(&session_key(1)));

    // Now the Codex root hangs like a dead network mount, and a new Pi
    // session appears.
    write_session(&home, 2, 3, 100);
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let mut opts = opts;
    opts.root_fault = Some(RootHook::new(move |root| {
        if root.ends_with(".codex") {
            while !r.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }));
    opts.root_deadline = Duration::from_millis(500);
    let ix = Indexer::new(store.clone(), opts);
    let t = Instant::now();
    let report = ix.sweep().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the sweep was not stalled"
    );
    assert_eq!(report.new_sessions, 1, "the Pi root is indexed: {report:?}");
    assert_eq!(
        report.gone, 0,
        "the stalled root's session is not gone: {report:?}"
    );
    let named = report
        .degraded_roots
        .iter()
        .any(|d| d.source.to_string() == "codex" && d.message.contains("did not answer"));
    assert!(named, "{:?}", report.degraded_roots);
    assert!(ix.progress().snapshot().degraded_roots == report.degraded_roots);
    let m = store.current().unwrap();
    assert!(m.sessions.contains_key(&session_key(2)));
    let e = &m.sessions[&codex_key];
    assert!(!e.source_gone && e.meta.messages > 0, "{e:?}");
    // `recall status`'s plan is bounded the same way.
    let plan = ix.plan().unwrap();
    assert!(plan.gone.is_empty() && !plan.degraded_roots.is_empty());
    release.store(true, Ordering::SeqCst);
    // Once it answers, the root is healthy again.
    let again = ix.sweep().unwrap();
    assert!(again.degraded_roots.is_empty(), "{again:?}");
    assert_eq!(again.gone, 0);
}

/// FIFOs, and a file that never answers, as *secondary* files of units
/// (Claude subagent logs and meta, Kimi's agent wire and state, Codex's and
/// Kimi's `session_index.jsonl`, Intendant's meta and turn prints): the
/// sweep never blocks, every unit keeps its main records, and each left-out
/// file is named in the sweep report.
#[test]
fn irregular_or_stalled_secondary_files_are_skipped_and_named() {
    use recall_host::extract::Roots;
    use recall_host::index::{IndexOptions, Indexer, RootHook};
    use recall_host::store::Store;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let home = temp_dir("secondary");
    recall_host::demo::write_at(&home, 1_793_000_000_000).unwrap();
    let home = fs::canonicalize(&home).unwrap();
    let opts = || {
        let mut o = IndexOptions::new(Roots::resolve(&home, |_| None));
        o.retention_days = 0;
        o.workers = 1;
        o
    };
    let healthy = Arc::new(Store::open(&home.join("store-healthy")).unwrap());
    Indexer::new(healthy.clone(), opts()).sweep().unwrap();
    let before = healthy.current().unwrap();
    assert!(before.sessions.len() >= 6, "{:?}", before.sessions.keys());

    let find = |pred: &dyn Fn(&Path) -> bool| -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![home.clone()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.starts_with(home.join("store-healthy")) {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    stack.push(p);
                } else if pred(&p) {
                    out.push(p);
                }
            }
        }
        out
    };
    let name_is = |n: &'static str| move |p: &Path| p.file_name().is_some_and(|f| f == n);
    let mut fifos = find(&name_is("session_index.jsonl"));
    fifos.extend(find(&name_is("state.json")));
    fifos.extend(find(&name_is("session_meta.json")));
    fifos.extend(find(&|p: &Path| {
        p.to_string_lossy().contains("/agents/agent-0/")
    }));
    fifos.extend(find(&|p: &Path| {
        p.to_string_lossy().contains("/turns/turn_001")
    }));
    let stalled = find(&|p: &Path| {
        p.to_string_lossy().contains("/subagents/") && p.extension().is_some_and(|e| e == "jsonl")
    });
    assert_eq!(fifos.len(), 6, "{fifos:?}");
    assert_eq!(stalled.len(), 1, "{stalled:?}");
    for f in &fifos {
        fs::remove_file(f).unwrap();
        mkfifo(f);
    }
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let hung = stalled[0].clone();
    let mut o = opts();
    o.file_fault = Some(RootHook::new(move |p| {
        if p == hung {
            while !r.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }));
    o.unit_deadline = Duration::from_millis(500);
    let store = Arc::new(Store::open(&home.join("store-hostile")).unwrap());
    let t = Instant::now();
    let ix = Indexer::new(store.clone(), o);
    let report = ix.sweep().unwrap();
    release.store(true, Ordering::SeqCst);
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "the sweep was not stalled"
    );
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let after = store.current().unwrap();
    for (key, e) in &before.sessions {
        let now = after
            .sessions
            .get(key)
            .unwrap_or_else(|| panic!("{key} lost: {report:?}"));
        assert!(now.meta.messages > 0, "{key} kept its records");
        assert_eq!(
            now.files[0].path, e.files[0].path,
            "{key} has its main file"
        );
    }
    for f in fifos.iter().chain(&stalled) {
        // Intendant names its turn prints relative to the session.
        let name = f.file_name().unwrap().to_string_lossy();
        let named = report.skipped_files.iter().any(|s| {
            s.starts_with(&*f.to_string_lossy()) || (s.starts_with("sidecar") && s.contains(&*name))
        });
        assert!(named, "{f:?} named in {:#?}", report.skipped_files);
    }
    // Status names them too, until the next full discovery.
    assert_eq!(
        ix.progress().snapshot().skipped_files,
        report.skipped_files,
        "status lists the left-out files"
    );
}

/// `recall index` exits 0 when everything was indexed and 3 when a unit of
/// the store is not (named on stdout), so a script notices; once the
/// culprit is gone it exits 0 again.
#[test]
fn index_exits_3_while_a_unit_is_not_indexed() {
    let home = temp_dir("exit3");
    write_session(&home, 1, 3, 100);
    assert!(run_ok(&home, &["index"], 0).contains("0 failed"));
    let fifo = home.join(format!(".claude/projects/-home-u-p/{SID}.jsonl"));
    mkfifo(&fifo);
    let mut cmd = recall(&home);
    cmd.arg("index");
    let out = run_bounded(cmd, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("not indexed: ") && stdout.contains(&*fifo.to_string_lossy()),
        "{stdout}"
    );
    // Unchanged, it is still not indexed: still 3 (without reading it).
    let mut cmd = recall(&home);
    cmd.args(["index", "--json"]);
    assert_eq!(
        run_bounded(cmd, Duration::from_secs(60)).status.code(),
        Some(3)
    );
    fs::remove_file(&fifo).unwrap();
    run_ok(&home, &["index"], 0);
}

#[test]
fn status_is_degraded_while_failed_units_are_listed() {
    let home = temp_dir("status-failed");
    write_session(&home, 1, 3, 100);
    run_ok(&home, &["index"], 0);
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).expect("status json");
    assert_eq!(status["phase"], "current", "{status}");
    let fifo = home.join(format!(".claude/projects/-home-u-p/{SID}.jsonl"));
    mkfifo(&fifo);
    let mut cmd = recall(&home);
    cmd.arg("index");
    assert_eq!(
        run_bounded(cmd, Duration::from_secs(60)).status.code(),
        Some(3)
    );
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).expect("status json");
    assert_eq!(status["failed_units"].as_array().map(Vec::len), Some(1));
    assert_eq!(status["phase"], "degraded", "{status}");
    assert_eq!(status["files_failed"], 1, "{status}");
    let text = run_ok(&home, &["status"], 0);
    assert!(text.contains("1 failed"), "{text}");
    fs::remove_file(&fifo).unwrap();
    run_ok(&home, &["index"], 0);
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["status", "--json"], 0)).expect("status json");
    assert_eq!(status["phase"], "current", "{status}");
}

/// Issue #12 item 6 (second half), through a sweep: a resumed Claude copy
/// caught mid-replay (its lines so far all carry the parent's session id)
/// is newer than the parent, so a backfill reads it first; the parent's key
/// still belongs to the parent's own file with all its messages.
#[test]
fn a_claude_copy_caught_mid_replay_never_takes_its_parents_key() {
    use recall_host::index::Indexer;
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../tests/shared/corpus/claude-code/claude-code-viewer-1.0.98/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    );
    let orig = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";
    let text = fs::read_to_string(&sample).unwrap();
    let alone = temp_dir("replay-alone");
    let project = |home: &Path| home.join(".claude/projects/-home-u-viewer");
    fs::create_dir_all(project(&alone)).unwrap();
    fs::write(project(&alone).join(format!("{orig}.jsonl")), &text).unwrap();
    let (store, opts) = indexer(&alone);
    Indexer::new(store.clone(), opts).sweep().unwrap();
    let key = format!("claude-code:{orig}");
    let healthy = store.current().unwrap().sessions[&key].meta.messages;
    assert!(healthy > 10);

    let home = temp_dir("replay");
    fs::create_dir_all(project(&home)).unwrap();
    let parent = project(&home).join(format!("{orig}.jsonl"));
    fs::write(&parent, &text).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let half: String = text
        .lines()
        .take(text.lines().count() / 2)
        .map(|l| format!("{l}\n"))
        .collect();
    let copy = project(&home).join("77777777-7777-4777-8777-777777777777.jsonl");
    fs::write(&copy, half).unwrap();
    let (store, opts) = indexer(&home);
    Indexer::new(store.clone(), opts).sweep().unwrap();
    let m = store.current().unwrap();
    let e = &m.sessions[&key];
    assert_eq!(
        e.files[0].path,
        parent.to_string_lossy(),
        "owned by the parent's file"
    );
    assert_eq!(e.meta.messages, healthy, "with all its messages");
    assert!(m
        .sessions
        .iter()
        .all(|(k, e)| k == &key || e.files[0].path != parent.to_string_lossy()));
}

/// Planning `stat`s every source file after discovery listed the roots; a
/// mount that hangs in between must not stall the sweep: past the root
/// deadline the sweep fails with a clear error (nothing published, nothing
/// lost), and once the mount answers the next sweep indexes as usual.
#[test]
fn a_planning_stall_fails_the_sweep_instead_of_hanging_it() {
    use recall_host::index::{IndexError, Indexer, RootHook};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let home = temp_dir("stallplan");
    write_session(&home, 1, 3, 100);
    let (store, opts) = indexer(&home);
    Indexer::new(store.clone(), opts.clone()).sweep().unwrap();
    let before = store.current().unwrap();
    write_session(&home, 2, 3, 100);
    let release = Arc::new(AtomicBool::new(false));
    let r = release.clone();
    let mut hung = opts.clone();
    hung.root_deadline = Duration::from_millis(800);
    hung.plan_fault = Some(RootHook::new(move |_| {
        while !r.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }));
    let ix = Indexer::new(store.clone(), hung);
    let t = Instant::now();
    let err = ix.sweep().expect_err("a stalled plan fails the sweep");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the sweep did not hang"
    );
    assert!(matches!(err, IndexError::PlanStalled(_)), "{err}");
    assert!(err.to_string().contains("did not answer"), "{err}");
    assert!(!ix.progress().running(), "the sweep is over");
    assert_eq!(
        store.current().unwrap().revision,
        before.revision,
        "nothing published"
    );
    release.store(true, Ordering::SeqCst);
    let report = Indexer::new(store.clone(), opts).sweep().unwrap();
    assert_eq!(report.new_sessions, 1, "{report:?}");
    assert!(store
        .current()
        .unwrap()
        .sessions
        .contains_key(&session_key(2)));
}

/// A unit whose file stopped answering while its cursor was captured is
/// recorded with its files' metadata: a later sweep (a new process) does not
/// wait on it again while it is unchanged, a search's refresh never reads it
/// even once it changed, and `recall index`'s sweep does.
#[test]
fn a_stalled_unit_is_retried_only_when_it_changes_and_never_inside_a_search() {
    use recall_host::index::{Indexer, RootHook};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let home = temp_dir("stall-again");
    let hung = write_session(&home, 1, 3, 100);
    write_session(&home, 2, 3, 100);
    let calls = Arc::new(AtomicUsize::new(0));
    let hook = |calls: Arc<AtomicUsize>, hung: std::path::PathBuf| {
        RootHook::new(move |p| {
            if p == hung {
                calls.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1500));
            }
        })
    };
    let indexer = || {
        let (store, mut opts) = indexer(&home);
        opts.file_fault = Some(hook(calls.clone(), hung.clone()));
        opts.unit_deadline = Duration::from_millis(300);
        Indexer::new(store, opts)
    };
    let first = indexer().sweep().unwrap();
    assert_eq!(first.failed, 1, "{first:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Unchanged: a new process's sweep does not read it.
    let again = indexer().sweep().unwrap();
    assert_eq!((again.failures.len(), again.extracted), (1, 0), "{again:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "read again, unchanged");
    // Changed: a search's refresh leaves it alone; a sweep reads it.
    let mut text = fs::read_to_string(&hung).unwrap();
    text.push_str(&pi_message(
        "ffff0002",
        None,
        "user",
        "later",
        1_790_003_800_000,
    ));
    text.push('\n');
    fs::write(&hung, text).unwrap();
    let ix = indexer();
    let refreshed = ix.refresh(Duration::ZERO).expect("a refresh ran").unwrap();
    assert_eq!(refreshed.extracted, 0, "{refreshed:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "read inside a search");
    ix.sweep().unwrap();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "a sweep reads the changed unit"
    );
}
