//! A running server follows what other processes do to its store: a
//! `recall clear` gives the store a new id — the server sees it, answers
//! `state: building` and status `indexing` while it rebuilds, and every old
//! cursor gets 410 — and a `recall config set` applies without a restart.

mod http_support;

use http_support::{enc, get, request, TempDir, NOW};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::Roots;
use recall_host::http::{ServeOptions, Server};
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn recall(home: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_recall"))
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("RECALL_HOME")
        .output()
        .expect("recall runs");
    assert!(
        out.status.success(),
        "recall {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for(what: &str, mut ok: impl FnMut() -> Option<Value>) -> Value {
    wait_for_in(what, Duration::from_secs(30), &mut ok)
}

fn wait_for_in(what: &str, within: Duration, ok: &mut dyn FnMut() -> Option<Value>) -> Value {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = ok() {
            return v;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server over `home` (the demo home, indexed with `NOW` as the clock)
/// whose only sweeps after the backfill are the follow loop's: the
/// periodic sweep is an hour away.
fn serve(home: &Path) -> Server {
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(home, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    let catalog = StoreCatalog::new(store, Arc::new(Arena::new(64 << 20)));
    let backend = Arc::new(IndexerHandle::new(indexer, catalog.clone(), true).watch_sources());
    Server::start(
        Served::indexed(Arc::new(catalog), backend),
        ServeOptions {
            bind: "127.0.0.1:0".parse().expect("addr"),
            index: true,
            sweep_every: Duration::from_secs(3600),
            ..ServeOptions::default()
        },
    )
    .expect("server")
}

#[test]
fn a_server_follows_a_clear_and_a_policy_change_made_by_another_process() {
    let home = TempDir::new("follow");
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let server = serve(&home.0);
    let addr = server.addr();
    let status = || get(addr, "/api/index/status", &[]).json();
    let first = wait_for("the backfill", || {
        let st = status();
        (st["phase"] == "current" && st["sessions"].as_u64() > Some(0)).then_some(st)
    });
    let all = first["sessions"].as_u64().expect("sessions");
    let page = get(addr, "/api/sessions/message-search?q=the&limit=1", &[]).json();
    let cursor = page["cursor"].as_str().expect("a cursor").to_string();

    // Another process clears the store.
    recall(&home.0, &["clear"]);
    let mut saw_building = false;
    let give_up = Instant::now() + Duration::from_secs(25);
    wait_for("the rebuild", || {
        let search = get(addr, "/api/sessions/message-search?q=the&limit=1", &[]).json();
        let st = status();
        let rebuilt = st["store_id"] != first["store_id"] && st["sessions"].as_u64() == Some(all);
        if st["store_id"] != first["store_id"] && !rebuilt {
            assert_eq!(
                st["phase"], "indexing",
                "an incomplete index is not current: {st}"
            );
        }
        if search["state"] == "building" {
            saw_building = true;
        } else if search["revision"].as_u64() <= first["revision"].as_u64()
            || st["store_id"] == first["store_id"]
        {
            // Not yet noticed, or answered from the old index.
        } else {
            assert!(
                !search["sessions"].as_array().expect("sessions").is_empty(),
                "a ready answer over a cleared index: {search}"
            );
        }
        if Instant::now() > give_up {
            panic!("never rebuilt: {st}");
        }
        (rebuilt && st["phase"] == "current").then_some(st)
    });
    assert!(
        saw_building,
        "no search said building while the store rebuilt"
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

    // Another process changes the policy.
    recall(&home.0, &["config", "set", "history-days", "7"]);
    wait_for("the new window", || {
        let st = status();
        (st["policy"]["history_days"] == 7).then_some(st)
    });
    // Answers claim the window once the sweep it started has applied it.
    wait_for("answers in the new window", || {
        let a = get(addr, "/api/sessions/message-search?q=the", &[]).json();
        (a["window_days"] == 7).then_some(a)
    });
    recall(&home.0, &["config", "set", "enabled", "false"]);
    wait_for("indexing disabled", || {
        let st = status();
        (st["availability"] == json!({"state": "unavailable", "reason": "disabled"})).then_some(st)
    });
    server.stop();
}

/// A history-window change reaches a running server at once, both ways,
/// whether it comes through the API or from another process, and no
/// answer claims a window the index does not hold yet.
#[test]
fn a_history_window_change_applies_at_once_both_ways() {
    let home = TempDir::new("window");
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let server = serve(&home.0);
    let addr = server.addr();
    let status = || get(addr, "/api/index/status", &[]).json();
    let all = wait_for("the backfill", || {
        let st = status();
        (st["phase"] == "current" && st["sessions"].as_u64() > Some(0)).then_some(st)
    })["sessions"]
        .as_u64()
        .expect("sessions");
    let origin = format!("http://{addr}");
    let post = |q: &str| {
        let h = [("X-Recall-Action", "1"), ("Origin", origin.as_str())];
        let r = request(addr, "POST", &format!("/api/index/policy?{q}"), &h);
        assert_eq!(r.status, 200, "{q}: {}", r.text());
        r.json()
    };
    // A window that retires some of the demo's sessions, not all.
    let (days, retires) = [1, 2, 3, 5, 7, 10, 14, 21, 30, 60]
        .into_iter()
        .map(|d| {
            (
                d,
                post(&format!("history_days={d}&dry_run=true"))["retires"]
                    .as_u64()
                    .unwrap_or(0),
            )
        })
        .find(|&(_, r)| r > 0 && r < all)
        .expect("a window that retires some sessions");
    // Each answer's window is one the index holds: a search claiming the
    // new window is followed by a status that no longer counts what it
    // retired, and one claiming none by a status that counts everything.
    let settled = |want_days: Option<u64>, want_sessions: u64| {
        move || {
            let search = get(addr, "/api/sessions/message-search?q=the&limit=1", &[]).json();
            let st = status();
            let claimed = search["window_days"].as_u64();
            if claimed == want_days {
                assert_eq!(
                    st["sessions"].as_u64(),
                    Some(want_sessions),
                    "window_days {claimed:?} claimed before the index held it: {st}"
                );
            }
            (claimed == want_days && st["sessions"].as_u64() == Some(want_sessions)).then_some(st)
        }
    };
    let within = Duration::from_secs(10);
    post(&format!("history_days={days}"));
    wait_for_in(
        "the narrower window",
        within,
        &mut settled(Some(days), all - retires),
    );
    post("history_days=0");
    wait_for_in("the retired sessions back", within, &mut settled(None, all));
    // The same from another process.
    recall(
        &home.0,
        &["config", "set", "history-days", &days.to_string()],
    );
    wait_for_in(
        "the narrower window again",
        within,
        &mut settled(Some(days), all - retires),
    );
    recall(&home.0, &["config", "set", "history-days", "0"]);
    wait_for_in("everything again", within, &mut settled(None, all));
    server.stop();
}
