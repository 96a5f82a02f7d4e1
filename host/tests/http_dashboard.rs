//! The routes as the dashboard uses them: a tool-row hit located at the
//! default scope, the session list's query and facets, and the status
//! route's roots and demo flag.

mod http_support;

use http_support::{b64, enc, Demo};
use serde_json::Value;

fn json(d: &Demo, path: &str) -> Value {
    let r = d.get(path);
    assert_eq!(r.status, 200, "{path}: {}", r.text());
    r.json()
}

#[test]
fn a_tool_row_hit_opened_at_the_default_scope_on_a_cold_cache_resolves() {
    // One server finds the hit (its search loads the shards with tool rows)…
    let warm = Demo::start("tool-hit-warm");
    let v = json(
        &warm,
        "/api/sessions/message-search?q=fixture&scope=all&role=tool&source=claude-code",
    );
    let session = &v["sessions"][0];
    let key = session["session_key"]
        .as_str()
        .expect("a tool hit")
        .to_string();
    let hit = &session["hits"][0];
    assert_eq!(hit["role"], "tool");
    let loc = b64(&hit["locator"]);
    // …a second server over the same demo home, whose cache is cold, opens
    // it as the dashboard does: without `scope` (the conversation only).
    let cold = Demo::start("tool-hit-cold");
    let page = json(
        &cold,
        &format!("/api/session/{}?limit=10&locate={loc}", enc(&key)),
    );
    assert_eq!(page["locate"]["state"], "resolved", "{}", page["locate"]);
    assert_eq!(
        page["locate"]["anchor"], "nearest",
        "the tool row is not listed"
    );
    assert_eq!(page["scope"], "conversation");
    let entries = page["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["role"] != "tool"));
    // At scope=all the same hit is exact and listed.
    let page = json(
        &cold,
        &format!("/api/session/{}?limit=10&scope=all&locate={loc}", enc(&key)),
    );
    assert_eq!(page["locate"]["state"], "resolved");
    assert_eq!(page["locate"]["anchor"], "exact");
    // `entry_index` is the hit's place in `entries`.
    let i = page["locate"]["entry_index"].as_u64().unwrap();
    assert_eq!(page["entries"][i as usize]["locator"], hit["locator"]);
}

fn keys(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn sessions_are_found_by_title_cwd_and_branch_with_the_search_folding() {
    let d = Demo::start("sessions-q");
    // A real title, in quotes (a phrase), and in another case and accents.
    let v = json(
        &d,
        &format!("/api/sessions?q={}", enc("\"Tide CSV parser\"")),
    );
    assert_eq!(keys(&v), ["Tide CSV parser (NOAA + Brest)"]);
    let v = json(&d, &format!("/api/sessions?q={}", enc("TÍDE csv")));
    assert_eq!(keys(&v), ["Tide CSV parser (NOAA + Brest)"]);
    // Every term must match, each in the title, cwd or branch.
    let v = json(&d, &format!("/api/sessions?q={}", enc("tidewatch release")));
    assert_eq!(keys(&v), ["Release v0.2.0"]);
    assert_eq!(
        json(&d, "/api/sessions?q=tidewatch")["total"],
        12,
        "the cwd"
    );
    let v = json(&d, "/api/sessions?q=nothing-like-this");
    assert_eq!(v["total"], 0);
    // The branch filter is exact.
    assert_eq!(
        json(&d, "/api/sessions?branch=main")["total"],
        5,
        "Claude's, Codex's, Copilot's"
    );
    assert_eq!(json(&d, "/api/sessions?branch=mai")["total"], 0);
    // A cursor belongs to its query.
    let p1 = json(&d, "/api/sessions?q=tidewatch&limit=2");
    let cursor = p1["cursor"].as_str().unwrap();
    let r = d.get(&format!("/api/sessions?q=tide&limit=2&cursor={cursor}"));
    assert_eq!(r.status, 400);
}

#[test]
fn session_facets_count_projects_and_activity_per_day_and_source() {
    let d = Demo::start("sessions-facets");
    let v = json(&d, "/api/sessions?facets=true&limit=1");
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["projects"],
        serde_json::json!([{"cwd": "/home/demo/code/tidewatch", "sessions": 12, "newest_ms": 1792913760000_i64}])
    );
    let activity = v["activity"].as_array().unwrap();
    let sessions: u64 = activity
        .iter()
        .map(|a| a["sessions"].as_u64().unwrap())
        .sum();
    let messages: u64 = activity
        .iter()
        .map(|a| a["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(sessions, 12);
    // The eight sessions of the first six agents, then Gemini, Copilot,
    // Qwen and OpenCode.
    assert_eq!(messages, 4 + 5 + 6 + 2 + 4 + 5 + 9 + 3 + 2 + 2 + 2 + 4);
    let days: Vec<&str> = activity
        .iter()
        .map(|a| a["day"].as_str().unwrap())
        .collect();
    let mut sorted = days.clone();
    sorted.sort();
    assert_eq!(days, sorted, "oldest day first");
    // 1792913760000 (the DSH session) is 2026-10-25T07:36:00Z: that day in UTC, the next one 17 hours east.
    let last = activity.last().unwrap();
    assert_eq!(
        (last["day"].as_str(), last["source"].as_str()),
        (Some("2026-10-25"), Some("dsh"))
    );
    let east = json(&d, "/api/sessions?facets=true&tz=1020");
    assert_eq!(
        east["activity"].as_array().unwrap().last().unwrap()["day"],
        "2026-10-26"
    );
    // The activity ignores the time filters (the chart stays whole when a day
    // is picked), the project list ignores the folder filter.
    let day = json(&d, "/api/sessions?facets=true&since=2026-10-25T00:00:00Z");
    assert_eq!(day["total"], 1);
    assert_eq!(day["activity"], v["activity"]);
    assert_eq!(day["projects"][0]["sessions"], 1, "since still applies");
    let elsewhere = json(&d, "/api/sessions?facets=true&cwd=/elsewhere");
    assert_eq!(elsewhere["total"], 0);
    assert_eq!(elsewhere["projects"], v["projects"]);
    assert_eq!(
        elsewhere["activity"].as_array().unwrap().len(),
        0,
        "the folder still applies"
    );
    assert_eq!(d.get("/api/sessions?facets=true&tz=east").status, 400);
}

#[test]
fn status_lists_the_agent_directories_looked_in() {
    let d = Demo::start("status-roots");
    let v = json(&d, "/api/index/status");
    let roots = v["roots"].as_array().unwrap();
    let home = d.home.0.to_string_lossy().into_owned();
    let claude = roots
        .iter()
        .find(|r| r["source"] == "claude-code")
        .expect("the Claude Code root");
    assert_eq!(claude["dir"], format!("{home}/.claude/projects"));
    assert_eq!(claude["exists"], true);
    assert!(roots.iter().any(|r| r["source"] == "pi"));
    assert_eq!(v["demo"], false, "a test home is not served as the demo");
}
