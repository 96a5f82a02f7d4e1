//! OpenCode extraction: a database written from the hand-made
//! `fixtures/opencode/opencode.sql` (OpenCode's own schema) and the legacy
//! JSON tree `fixtures/opencode/storage/`, discovered through the registry
//! and checked against texts listed here by hand; reasoning, synthetic and
//! ignored parts and compaction summaries never in user or assistant
//! records; sweeps that read again only the session that moved; a locked
//! or corrupt database that fails alone and loses nothing.

mod store_support;

use recall_core::model::{Role, Source};
use recall_host::extract::opencode::db::write_from_sql;
use recall_host::extract::{discover, extract, Extracted, Roots, SessionSource};
use serde_json::Value;
use std::path::{Path, PathBuf};
use store_support::{manifest, run_ok, temp_dir};

const A: &str = "ses_5f1a0c3e1ffeAbCdEfGhIjKlMn";
const B: &str = "ses_5f1a0c3f0000BbCdEfGhIjKlMn";
const C: &str = "ses_5f1a0d000000CcCdEfGhIjKlMn";
const LEGACY: &str = "ses_4e00aa000000LegacyOnlyAbcd";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode")
}

fn data_dir(home: &Path) -> PathBuf {
    home.join(".local/share/opencode")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A home with the fixture database and, when `legacy`, the JSON tree.
fn home_with(tag: &str, legacy: bool) -> store_support::TempDir {
    let home = temp_dir(tag);
    let dir = data_dir(&home);
    std::fs::create_dir_all(&dir).unwrap();
    let sql = std::fs::read_to_string(fixtures().join("opencode.sql")).unwrap();
    write_from_sql(&dir.join("opencode.db"), &sql).unwrap();
    if legacy {
        copy_tree(&fixtures().join("storage"), &dir.join("storage"));
    }
    home
}

fn sessions(home: &Path) -> Vec<Extracted> {
    let units = discover(&Roots::resolve(home, |_| None));
    units
        .iter()
        .filter(|u| u.source == Source::OpenCode)
        .filter_map(|u| extract(u).expect("extracts"))
        .collect()
}

fn by_id<'a>(all: &'a [Extracted], id: &str) -> &'a Extracted {
    all.iter()
        .find(|x| x.meta.session_id == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

fn texts(x: &Extracted, role: Role) -> Vec<&str> {
    x.records
        .iter()
        .filter(|r| r.role == role)
        .map(|r| r.text.as_str())
        .collect()
}

#[test]
fn database_and_legacy_tree_give_the_hand_listed_conversation() {
    let home = home_with("oc-golden", true);
    let all = sessions(&home);
    let mut ids: Vec<&str> = all.iter().map(|x| x.meta.session_id.as_str()).collect();
    ids.sort();
    // D has no message; A's legacy copy gives way to the database's.
    assert_eq!(ids, [LEGACY, A, B, C]);

    let a = by_id(&all, A);
    assert_eq!(
        texts(a, Role::User),
        [
            "Why does renderRoute fail with ECONNRESET in the retry test?",
            "Add a regression test for it, please."
        ]
    );
    assert_eq!(
        texts(a, Role::Assistant),
        [
            "The socket closes before the retry; renderRoute must await the drain.",
            "Added test/retry.test.ts with a drained socket."
        ]
    );
    assert_eq!(
        texts(a, Role::Tool),
        [
            "read {\"filePath\":\"src/retry.ts\"}\nexport async function renderRoute() { await drainzebra(); }",
            "bash {\"command\":\"npm test\"}\nexit code 1: socketyak ECONNRESET",
            "task find callers\nSearch the repo for other callers of renderRoute",
        ]
    );
    assert_eq!(a.meta.title.as_deref(), Some("Fix the flaky retry test"));
    assert_eq!(a.meta.cwd.as_deref(), Some("/home/u/code/app"));
    assert_eq!(a.meta.models, ["claude-sonnet-4-5", "gpt-5.1"]);
    assert_eq!(a.meta.created_ms, Some(1_764_000_000_000));
    assert_eq!(a.meta.updated_ms, Some(1_764_000_110_000));
    assert_eq!(a.meta.messages, 4);
    assert_eq!(
        a.meta.resume.as_deref(),
        Some("opencode --session ses_5f1a0c3e1ffeAbCdEfGhIjKlMn")
    );
    assert!(a.meta.parent.is_none());
    // The user's own record keeps its part id as its locator.
    let first = serde_json::to_value(&a.records[0].locator).unwrap();
    assert_eq!(first["message_id"], "prt_5f1a0c3e2002AAAAAAAAAAAAAA");

    let b = by_id(&all, B);
    assert_eq!(
        texts(b, Role::User),
        ["Search the repo for other callers of renderRoute"]
    );
    assert_eq!(
        texts(b, Role::Assistant),
        ["Two callers: src/app.ts and src/server.ts."]
    );
    let parent = b.meta.parent.as_ref().expect("a task's child session");
    assert_eq!(parent.key, format!("opencode:{A}"));
    // "Child session - …" is OpenCode's placeholder, not a title.
    assert_eq!(
        b.meta.title.as_deref(),
        Some("Search the repo for other callers of renderRoute")
    );

    let c = by_id(&all, C);
    assert_eq!(
        texts(c, Role::User),
        ["How do I bump the lockfile without installing?"]
    );
    assert_eq!(
        texts(c, Role::Assistant),
        ["Run npm install --package-lock-only."]
    );
    assert_eq!(c.meta.cwd.as_deref(), Some("/home/u/code/lib"));
    assert_eq!(c.meta.models, ["big-pickle"]);
    assert_eq!(
        c.meta.title.as_deref(),
        Some("How do I bump the lockfile without installing?")
    );
    // The torn message row and the part that is not UTF-8 are counted.
    assert_eq!(c.diagnostics.bad_lines, 2, "{:?}", c.diagnostics);

    let l = by_id(&all, LEGACY);
    assert_eq!(
        texts(l, Role::User),
        ["Port the cron parser from Go to TypeScript."]
    );
    assert_eq!(
        texts(l, Role::Assistant),
        ["Ported: cron.ts parses the five fields."]
    );
    assert_eq!(l.meta.cwd.as_deref(), Some("/home/u/old"));
    assert_eq!(l.meta.title.as_deref(), Some("Port the cron parser"));
    assert_eq!(l.meta.models, ["claude-sonnet-4"]);

    for x in &all {
        for r in &x.records {
            for absent in [
                "quokkasynthetic",
                "Called the Read tool",
                "ignoredwombat",
                "pangolinreasoning",
                "narwhalsummary",
                "ocelotreasoning",
                "legacyduplicate",
            ] {
                assert!(!r.text.contains(absent), "{absent} in {:?}", r);
            }
        }
    }
}

/// A hit is checked (and Deep Search reads) by re-reading exactly the
/// files a session lists: for a legacy session that is its session file
/// and every message and part file, for a database session its member path.
#[test]
fn every_session_is_read_again_from_the_paths_it_lists() {
    let home = home_with("oc-paths", true);
    let all = sessions(&home);
    assert!(all.iter().any(|x| x.meta.session_id == LEGACY));
    for x in &all {
        let again = SessionSource {
            source: Source::OpenCode,
            unit: x.meta.paths[0].clone(),
            files: x.meta.paths.iter().map(PathBuf::from).collect(),
            context: Value::Null,
        };
        let y = extract(&again).expect("extracts").unwrap_or_else(|| {
            panic!(
                "{} is not read again from {:?}",
                x.meta.session_id, x.meta.paths
            )
        });
        assert_eq!(y.meta.key(), x.meta.key());
        assert_eq!(y.records, x.records, "{}", x.meta.session_id);
    }
}

/// The check of a hit re-reads every indexed session, database and legacy
/// alike, from its manifest entry.
#[test]
fn every_indexed_session_is_found_again_by_the_check_of_a_hit() {
    let home = home_with("oc-verify", true);
    run_ok(&home, &["index"], 0);
    let m = manifest(&home).expect("a manifest");
    let mut checked = 0;
    for (key, entry) in m
        .sessions
        .iter()
        .filter(|(_, e)| e.meta.source == Source::OpenCode)
    {
        let again = recall_host::index::verify::reextract(key, entry)
            .expect("reads")
            .unwrap_or_else(|| panic!("{key} is not found again from {:?}", entry.meta.paths));
        assert_eq!(&again.meta.key(), key);
        checked += 1;
    }
    assert_eq!(checked, 4, "three database sessions and the legacy one");
}

#[test]
fn roots_follow_opencode_db_and_xdg_data_home() {
    let home = Path::new("/home/u");
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    let root = |r: Roots| r.get("opencode").map(Path::to_path_buf);
    assert_eq!(
        root(Roots::resolve(home, |_| None)),
        Some(PathBuf::from("/home/u/.local/share/opencode"))
    );
    assert_eq!(
        root(Roots::resolve(home, env(&[("XDG_DATA_HOME", "/data")]))),
        Some(PathBuf::from("/data/opencode"))
    );
    assert_eq!(
        root(Roots::resolve(
            home,
            env(&[("XDG_DATA_HOME", "/data"), ("OPENCODE_DB", "/x/oc.db")])
        )),
        Some(PathBuf::from("/x/oc.db"))
    );
    // Relative to the data directory, as OpenCode resolves it.
    assert_eq!(
        root(Roots::resolve(
            home,
            env(&[("OPENCODE_DB", "opencode-beta.db")])
        )),
        Some(PathBuf::from(
            "/home/u/.local/share/opencode/opencode-beta.db"
        ))
    );
}

#[test]
fn a_database_named_by_opencode_db_is_read_alone() {
    let home = home_with("oc-env", true);
    let db = data_dir(&home).join("opencode.db");
    let r = Roots::resolve(&home, |k| (k == "OPENCODE_DB").then(|| db.clone().into()));
    let mut ids: Vec<String> = discover(&r)
        .into_iter()
        .filter(|u| u.source == Source::OpenCode)
        .filter_map(|u| extract(&u).ok().flatten())
        .map(|x| x.meta.session_id)
        .collect();
    ids.sort();
    assert_eq!(ids, [A, B, C], "the file alone: no legacy tree");
}

#[test]
fn resume_commands_only_for_opencode_ids() {
    use recall_host::extract::opencode::is_session_id;
    assert!(is_session_id(A));
    for bad in [
        "",
        "ses_",
        "-s",
        "--session",
        "ses_abc def",
        "ses_../x",
        "msg_5f1a0c3e2001AAAA",
        "ses_abc;rm",
    ] {
        assert!(!is_session_id(bad), "{bad:?}");
    }
}

fn index_json(home: &Path) -> Value {
    index_json_exit(home, 0)
}

fn index_json_exit(home: &Path, code: i32) -> Value {
    serde_json::from_str(&run_ok(home, &["index", "--json"], code)).expect("index JSON")
}

fn search_keys(home: &Path, q: &str, code: i32) -> Vec<String> {
    let out = run_ok(home, &["search", "--json", q], code);
    let r: Value = serde_json::from_str(&out).expect("search JSON");
    let mut keys: Vec<String> = r["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["session_key"].as_str().map(str::to_string))
        .collect();
    keys.sort();
    keys
}

#[test]
fn a_sweep_reads_again_only_the_session_that_moved() {
    let home = home_with("oc-sweep", true);
    let first = index_json(&home);
    assert_eq!(first["new_sessions"], 4, "{first}");
    let again = index_json(&home);
    assert_eq!(again["extracted"], 0, "{again}");

    // OpenCode appends a turn to C (through the WAL) and touches it.
    let db = data_dir(&home).join("opencode.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO message VALUES ('msg_5f1a0d009001CCCCCCCCCCCCCC', '{C}', 1764061300000, 1764061300000,
           '{{\"role\":\"user\",\"time\":{{\"created\":1764061300000}},\"agent\":\"build\"}}');
         INSERT INTO part VALUES ('prt_5f1a0d009002CCCCCCCCCCCCCC', 'msg_5f1a0d009001CCCCCCCCCCCCCC', '{C}', 1764061300000, 1764061300000,
           '{{\"type\":\"text\",\"text\":\"And pin the capybara version too.\"}}');
         UPDATE session SET time_updated = 1764061300000 WHERE id = '{C}';"
    ))
    .unwrap();
    // The writer stays open: the turn is in the WAL, not yet in the file.
    let third = index_json(&home);
    assert_eq!(third["extracted"], 1, "only C moved: {third}");
    drop(conn);
    assert_eq!(search_keys(&home, "capybara", 0), [format!("opencode:{C}")]);

    let keys = search_keys(&home, "renderRoute", 0);
    assert_eq!(keys, [format!("opencode:{A}"), format!("opencode:{B}")]);
    for absent in [
        "quokkasynthetic",
        "pangolinreasoning",
        "narwhalsummary",
        "legacyduplicate",
    ] {
        search_keys(&home, absent, 1);
    }
    let m = manifest(&home).unwrap();
    let c = &m.sessions[&format!("opencode:{C}")];
    assert_eq!(c.meta.messages, 3);

    // Deep Search reads the rows themselves: the reasoning is there, as
    // reasoning, in A's database session.
    let out = run_ok(&home, &["grep", "--json", "-F", "pangolinreasoning"], 0);
    let lines: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let hit = lines
        .iter()
        .find(|e| e.to_string().contains("pangolinreasoning socket"))
        .unwrap_or_else(|| panic!("no deep hit: {out}"));
    assert!(hit.to_string().contains("\"reasoning\""), "{hit}");
    assert!(hit.to_string().contains(A), "{hit}");
    assert!(!out.contains("left out"), "{out}");
}

#[test]
fn a_corrupt_or_locked_database_fails_alone_and_loses_nothing() {
    let home = home_with("oc-bad", false);
    // A Pi session beside it, indexed every time.
    store_support::add_fixture(&home, "pi-alpha.jsonl");
    assert_eq!(index_json(&home)["new_sessions"], 4);
    let db = data_dir(&home).join("opencode.db");

    // Locked: a rollback-journal database with a writer holding it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE;")
        .unwrap();
    let r = index_json_exit(&home, 3);
    let degraded = r["degraded_roots"].to_string();
    assert!(
        degraded.contains("opencode.db") && degraded.contains("locked"),
        "{r}"
    );
    assert_eq!(r["gone"].as_u64().unwrap_or(0), 0, "{r}");
    conn.execute_batch("ROLLBACK;").unwrap();
    drop(conn);

    // Corrupt: every session stays as it was, the rest is indexed.
    std::fs::write(&db, b"SQLite format 3\0 but not really, and then garbage").unwrap();
    let r = index_json_exit(&home, 3);
    assert!(
        r["degraded_roots"].to_string().contains("opencode.db"),
        "{r}"
    );
    assert_eq!(r["gone"], 0, "{r}");
    let m = manifest(&home).unwrap();
    for id in [A, B, C] {
        let e = &m.sessions[&format!("opencode:{id}")];
        assert!(!e.source_gone, "{id} kept");
    }
    assert_eq!(search_keys(&home, "renderRoute", 0).len(), 2);
}
