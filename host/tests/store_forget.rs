//! Forget and exclude (DESIGN.md §13): `POST /api/session/{key}/forget`
//! (the clear route's rules) takes a session out of search, the session
//! list, its view and trace, and the manifest; a sweep does not bring it
//! back while its transcript is unchanged, an append does; a cursor minted
//! before answers `cursor_expired`; its text leaves the live index segments
//! at once and its generation file goes after the grace. `exclude_paths`
//! retires every session under a path at the next sweep and never extracts
//! them again while excluded, however their transcripts grow.

mod http_support;

use http_support::*;
use recall_host::engine::IndexerHandle;
use recall_host::http::ServeOptions;
use recall_host::store::policy::{self, Policy};
use recall_host::store::retention::GcMode;
use recall_host::store::{SkipReason, Store};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

fn action(addr: SocketAddr, path: &str) -> Resp {
    request(addr, "POST", path, &[("X-Recall-Action", "forget")])
}

fn keys_of(v: &serde_json::Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter_map(|s| s["session_key"].as_str().map(str::to_string))
        .collect()
}

/// Every session key a search for `q` answers (all pages).
fn search_keys(addr: SocketAddr, q: &str) -> Vec<String> {
    keys_of(
        &get(
            addr,
            &format!("/api/sessions/message-search?q={q}&limit=100"),
            &[],
        )
        .json(),
    )
}

fn listed(addr: SocketAddr) -> Vec<String> {
    keys_of(&get(addr, "/api/sessions?limit=200", &[]).json())
}

/// Appends a user record to a Claude Code transcript.
fn append_claude(main: &PathBuf, text: &str, n: u32) {
    let sid = main.file_stem().unwrap().to_string_lossy().into_owned();
    let line = serde_json::json!({
        "type": "user",
        "uuid": format!("0f0e0d0c-0000-4000-8000-{:012}", 777_000 + n),
        "sessionId": sid,
        "timestamp": "2026-10-25T10:00:00.000Z",
        "message": {"role": "user", "content": text}
    });
    let mut f = std::fs::OpenOptions::new().append(true).open(main).unwrap();
    writeln!(f, "{line}").unwrap();
}

/// A Claude Code session of the store: its key and main file.
fn a_claude_session(store: &Store) -> (String, PathBuf) {
    let m = store.current().unwrap();
    let (k, e) = m
        .sessions
        .iter()
        .find(|(k, e)| k.starts_with("claude-code:") && e.meta.parent.is_none())
        .expect("a claude session");
    (k.clone(), PathBuf::from(&e.files[0].path))
}

#[test]
fn a_forgotten_session_is_gone_everywhere_and_stays_gone_until_its_source_changes() {
    let (home, indexer, catalog) = demo_store("forget", true);
    let store = indexer.store().clone();
    let server = serve(
        store_served(
            IndexerHandle::new(indexer.clone(), catalog.clone(), false),
            catalog,
        ),
        ServeOptions::default(),
    );
    let addr = server.addr();
    let (key, main) = a_claude_session(&store);
    let enc_key = enc(&key);
    let m0 = store.current().unwrap();
    let generation = m0.sessions[&key].generation_file.clone();
    // A word of the session: every search for it lists the session now.
    let page = get(addr, &format!("/api/session/{enc_key}?limit=50"), &[]).json();
    let word = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["text"].as_str())
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
        .find(|w| w.len() >= 7 && w.chars().all(|c| c.is_ascii_lowercase()))
        .expect("a word")
        .to_string();
    assert!(search_keys(addr, &word).contains(&key));
    assert!(listed(addr).contains(&key));
    // A cursor minted now (one session per page).
    let first = get(addr, "/api/sessions/message-search?q=the&limit=1", &[]).json();
    let cursor = first["cursor"].as_str().expect("a cursor").to_string();
    let segment_names = |store: &Store| -> Vec<String> {
        store
            .live_segments()
            .iter()
            .flat_map(|s| s.names().to_vec())
            .collect()
    };
    assert!(
        segment_names(&store).contains(&generation),
        "indexed in a segment"
    );

    // The clear route's rules: the action header is required.
    let refused = request(addr, "POST", &format!("/api/session/{enc_key}/forget"), &[]);
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert_eq!(refused.json()["error"], "action_header_required");
    let cross = request(
        addr,
        "POST",
        &format!("/api/session/{enc_key}/forget"),
        &[
            ("X-Recall-Action", "forget"),
            ("Origin", "http://evil.example"),
        ],
    );
    assert_eq!(cross.status, 403, "{}", cross.text());
    assert!(store.current().unwrap().sessions.contains_key(&key));

    let done = action(addr, &format!("/api/session/{enc_key}/forget"));
    assert_eq!(done.status, 200, "{}", done.text());
    assert_eq!(done.json()["session_key"], key.as_str());

    assert!(!search_keys(addr, &word).contains(&key), "gone from search");
    assert!(!listed(addr).contains(&key), "gone from the list");
    assert_eq!(
        get(addr, &format!("/api/session/{enc_key}"), &[]).status,
        404
    );
    assert_eq!(
        get(addr, &format!("/api/session/{enc_key}/trace"), &[]).status,
        404
    );
    let manifest = get(addr, "/api/index/manifest", &[]).json();
    assert!(
        manifest["sessions"].get(&key).is_none(),
        "gone from the manifest"
    );
    assert!(
        !segment_names(&store).contains(&generation),
        "purged from the live segments"
    );
    let old = get(
        addr,
        &format!(
            "/api/sessions/message-search?q=the&limit=1&cursor={}",
            enc(&cursor)
        ),
        &[],
    );
    assert_eq!(old.status, 410, "{}", old.text());
    assert_eq!(old.json()["error"], "cursor_expired");
    // Forgetting it again: nothing to forget.
    assert_eq!(
        action(addr, &format!("/api/session/{enc_key}/forget")).status,
        404
    );

    // Sweeps (full, and after a new parser would re-read everything) leave it out.
    indexer.sweep().expect("sweep");
    indexer.sweep().expect("sweep");
    assert!(
        !store.current().unwrap().sessions.contains_key(&key),
        "not resurrected"
    );
    assert!(!search_keys(addr, &word).contains(&key));
    let st = store.indexer_state().unwrap();
    let skipped = st
        .skipped
        .get(&main.to_string_lossy().into_owned())
        .expect("skipped");
    assert_eq!(skipped.reason, SkipReason::Forgotten);

    // After the grace the generation file goes.
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.collect_garbage(0, GcMode::Superseded).unwrap();
    assert!(
        store
            .generation_path(&generation)
            .is_none_or(|p| !p.exists()),
        "the generation file is purged"
    );

    // A changed source is indexed again.
    append_claude(&main, "the forgotten one speaks again", 1);
    indexer.sweep().expect("sweep");
    assert!(
        store.current().unwrap().sessions.contains_key(&key),
        "indexed again"
    );
    assert!(search_keys(addr, &word).contains(&key));
    server.stop();
    drop(home);
}

/// Writes a Claude Code session of a client's project (cwd `cwd`) into
/// `home`; returns its key and file.
fn client_session(home: &std::path::Path, cwd: &str, sid: &str) -> (String, PathBuf) {
    let dir = home.join(".claude/projects").join(cwd.replace('/', "-"));
    std::fs::create_dir_all(&dir).unwrap();
    let main = dir.join(format!("{sid}.jsonl"));
    let line = |uuid: &str, parent: Option<&str>, role: &str, text: &str, ts: &str| {
        serde_json::json!({
            "type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid, "cwd": cwd,
            "gitBranch": "main", "version": "2.1.39", "timestamp": ts,
            "message": {"role": role, "content": text}
        })
        .to_string()
    };
    let a = "6b1f0c2e-0000-4000-8000-000000000001";
    let b = "6b1f0c2e-0000-4000-8000-000000000002";
    std::fs::write(
        &main,
        format!(
            "{}\n{}\n",
            line(
                a,
                None,
                "user",
                "the confidential clientxproject plan",
                "2026-10-20T10:00:00.000Z"
            ),
            line(
                b,
                Some(a),
                "assistant",
                "noted, clientxproject it is",
                "2026-10-20T10:00:05.000Z"
            ),
        ),
    )
    .unwrap();
    (format!("claude-code:{sid}"), main)
}

#[test]
fn excluded_paths_retire_their_sessions_and_never_extract_them_again() {
    let (home, indexer, _catalog) = demo_store("exclude", false);
    let (key, main) = client_session(
        &home.0,
        "/home/me/client-x/app",
        "6b1f0c2e-0000-4000-8000-00000000c0de",
    );
    indexer.sweep().expect("backfill");
    let store = indexer.store().clone();
    let m0 = store.current().unwrap();
    assert!(
        m0.sessions.contains_key(&key),
        "indexed before the exclusion"
    );
    let cwd = "/home/me/client-x".to_string();
    let under: Vec<String> = m0
        .sessions
        .iter()
        .filter(|(_, e)| policy::excluded(std::slice::from_ref(&cwd), e.meta.cwd.as_deref()))
        .map(|(k, _)| k.clone())
        .collect();
    assert!(under.len() < m0.sessions.len(), "other projects stay");

    let p = Policy {
        exclude_paths: vec![cwd.clone()],
        ..policy::load(store.dir()).unwrap()
    };
    policy::save(store.dir(), &p).unwrap();
    indexer.set_exclude_paths(p.exclude_paths.clone());
    indexer.sweep().expect("sweep");
    let m1 = store.current().unwrap();
    for k in &under {
        assert!(!m1.sessions.contains_key(k), "{k} retired");
    }
    assert_eq!(m1.sessions.len(), m0.sessions.len() - under.len());

    // Its transcript grows: still never extracted.
    append_claude(&main, "still under the excluded path", 2);
    let r = indexer.sweep().expect("sweep");
    assert_eq!(r.extracted, 0, "nothing extracted: {r:?}");
    assert!(!store.current().unwrap().sessions.contains_key(&key));
    let st = store.indexer_state().unwrap();
    let sk = st
        .skipped
        .get(&main.to_string_lossy().into_owned())
        .expect("skipped");
    assert_eq!(sk.reason, SkipReason::Excluded);

    // No longer excluded: indexed again.
    indexer.set_exclude_paths(Vec::new());
    indexer.sweep().expect("sweep");
    let m2 = store.current().unwrap();
    for k in &under {
        assert!(m2.sessions.contains_key(k), "{k} back");
    }
    drop(home);
}

#[test]
fn recall_forget_and_config_exclude_paths_from_the_command_line() {
    let (home, indexer, _catalog) = demo_store("forget-cli", true);
    let store = indexer.store().clone();
    let (key, _) = a_claude_session(&store);
    let bin = env!("CARGO_BIN_EXE_recall");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .arg("--home")
            .arg(&home.0)
            .args(args)
            .env_remove("RECALL_HOME")
            .output()
            .unwrap()
    };
    let out = run(&["forget", &key]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("forgot {key}")));
    assert!(!Store::open(store.dir())
        .unwrap()
        .current()
        .unwrap()
        .sessions
        .contains_key(&key));
    let again = run(&["forget", &key]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no session"));

    let set = run(&[
        "config",
        "set",
        "exclude-paths",
        "/home/me/client-x/, /srv/private",
    ]);
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    let get = run(&["config", "get", "exclude-paths"]);
    assert_eq!(
        String::from_utf8_lossy(&get.stdout).trim(),
        "/home/me/client-x,/srv/private"
    );
    let bad = run(&["config", "set", "exclude-paths", "relative/dir"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("absolute"));
    assert_eq!(
        policy::load(store.dir()).unwrap().exclude_paths,
        vec!["/home/me/client-x", "/srv/private"]
    );
    let _ = Arc::clone(&store);
}
