//! Search behaviours a user relies on: the response shape (golden JSON),
//! budgets and partial answers, cursors across publishes, the page byte cap.

use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::model::*;
use recall_core::response::{PartialReason, State};
use recall_core::search::{search_request, Budgets, SearchEnv};
use recall_core::{CatalogError, ErrorCode, LoadError, MemIndex, Request};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Loads `fixtures/<name>.json` — a list of shards — into an index.
fn load_fixture(name: &str, revision: u64) -> MemIndex {
    let path = fixture_dir().join("fixtures").join(format!("{name}.json"));
    let shards: Vec<Shard> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    index_of(shards, revision)
}

fn index_of(shards: Vec<Shard>, revision: u64) -> MemIndex {
    let mut index = MemIndex::new();
    let mut sessions = BTreeMap::new();
    for shard in shards {
        let body = serde_json::to_vec(&shard).unwrap();
        let name = recall_core::naming::generation_file_name(&body);
        index.add_generation(&name, &body).unwrap();
        sessions.insert(
            shard.session.key(),
            ManifestEntry {
                meta: shard.session.clone(),
                generation_file: name,
                records: shard.records.len() as u64,
                max_ts_ms: shard.records.iter().map(|r| r.ts_ms).max(),
                bytes: body.len() as u64,
                source_gone: false,
                files: vec![],
                watermark: 0,
                state: serde_json::Value::Null,
            },
        );
    }
    index.set_manifest_value(Manifest {
        schema: 1,
        parser_version: 1,
        store_id: "fixture-store".into(),
        revision,
        updated_at_ms: 0,
        sessions,
        tombstones: BTreeMap::new(),
    });
    index
}

fn check_golden(name: &str, actual: &str) {
    let path = fixture_dir().join("golden").join(format!("{name}.json"));
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(actual).unwrap())
            .unwrap()
            + "\n";
    if std::env::var_os("RECALL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &pretty).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden {path:?}; run with RECALL_BLESS=1"));
    assert_eq!(pretty, want, "golden {name} differs");
}

fn req(pairs: &[(&str, &str)]) -> String {
    let m: BTreeMap<&str, &str> = pairs.iter().copied().collect();
    serde_json::to_string(&m).unwrap()
}

#[test]
fn golden_responses() {
    let index = load_fixture("small", 7);
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("strasse", &[("q", "strasse")]),
        (
            "phrase_relevance",
            &[("q", "\"connection pool\""), ("sort", "relevance")],
        ),
        (
            "scope_all_tool",
            &[("q", "cargo"), ("scope", "all"), ("limit", "1")],
        ),
        (
            "no_superseded",
            &[("q", "retry"), ("include_superseded", "false")],
        ),
        (
            "no_subagents",
            &[("q", "retry"), ("subagents", "false"), ("source", "cc")],
        ),
        (
            "cwd_filter",
            &[("q", "the"), ("cwd", "/home/mara/code/ledger")],
        ),
        ("cjk_infix", &[("q", "数据库")]),
        ("error_q_required", &[("q", "  ")]),
        ("error_bad_role", &[("q", "x"), ("role", "tool")]),
    ];
    for (name, pairs) in cases {
        check_golden(name, &index.search_json(&req(pairs)));
    }
}

#[test]
fn cursor_survives_limit_change_and_expires_on_publish() {
    let index = load_fixture("small", 7);
    let first = index
        .search(&Request::from_pairs([("q", "the"), ("limit", "1")]))
        .unwrap();
    let cursor = first.cursor.clone().expect("more than one session matches");
    // Same query, bigger page: allowed.
    let next = index
        .search(&Request::from_pairs([
            ("q", "the"),
            ("limit", "5"),
            ("cursor", cursor.as_str()),
        ]))
        .unwrap();
    assert!(!next
        .sessions
        .iter()
        .any(|s| s.session_key == first.sessions[0].session_key));
    // Another query: invalid.
    let err = index
        .search(&Request::from_pairs([
            ("q", "retry"),
            ("cursor", cursor.as_str()),
        ]))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidCursor);
    // Garbage: invalid.
    let err = index
        .search(&Request::from_pairs([("q", "the"), ("cursor", "!!")]))
        .unwrap_err();
    assert_eq!(err.code, "invalid_cursor");
    // A publish without a retained snapshot: expired.
    let newer = load_fixture("small", 8);
    let err = newer
        .search(&Request::from_pairs([
            ("q", "the"),
            ("cursor", cursor.as_str()),
        ]))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::CursorExpired);
}

/// A catalog that keeps an old snapshot, as the host does for 10 minutes.
struct Snapshots {
    old: MemIndex,
    new: MemIndex,
}

impl Catalog for Snapshots {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.new.current()
    }
    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        let m = self.old.current().ok()?;
        (m.store_id == store_id && m.revision == revision).then_some(m)
    }
    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        self.new
            .load(key, entry, tools)
            .or_else(|_| self.old.load(key, entry, tools))
    }
}

#[test]
fn cursor_pages_a_retained_snapshot() {
    let snaps = Snapshots {
        old: load_fixture("small", 7),
        new: load_fixture("small", 8),
    };
    let clock = || 0;
    let env = SearchEnv {
        catalog: &snaps,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: false,
    };
    let first = snaps
        .old
        .search(&Request::from_pairs([("q", "the"), ("limit", "1")]))
        .unwrap();
    let c = first.cursor.unwrap();
    let page = search_request(
        &Request::from_pairs([("q", "the"), ("limit", "1"), ("cursor", c.as_str())]),
        &env,
    )
    .unwrap();
    assert_eq!(page.revision, 7, "paging stays on the cursor's snapshot");
}

#[test]
fn timeout_gives_partial_without_cursor() {
    let index = load_fixture("small", 7);
    let t = Cell::new(0u64);
    let clock = || {
        t.set(t.get() + 100);
        t.get()
    };
    let env = SearchEnv {
        catalog: &index,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: false,
    };
    let resp = search_request(
        &Request::from_pairs([("q", "the"), ("sort", "relevance")]),
        &env,
    )
    .unwrap();
    assert_eq!(resp.state, State::Partial);
    assert_eq!(resp.partial_reason, Some(PartialReason::Timeout));
    assert!(resp.cursor.is_none());
    assert!(resp.took_ms > 150);
}

/// A catalog that pretends every shard was read from disk.
struct Cold<'a>(&'a MemIndex, u64);

impl Catalog for Cold<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.0.current()
    }
    fn snapshot(&self, _: &str, _: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        let mut l = self.0.load(key, entry, tools)?;
        l.fresh_bytes = self.1;
        Ok(l)
    }
}

#[test]
fn load_budget_gives_partial_with_a_cursor_that_continues() {
    let index = load_fixture("small", 7);
    let all = index
        .search(&Request::from_pairs([("q", "the"), ("limit", "100")]))
        .unwrap();
    assert!(all.sessions.len() >= 3);
    let cold = Cold(&index, 30 << 20);
    let clock = || 0;
    let env = SearchEnv {
        catalog: &cold,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: false,
    };
    let mut seen = Vec::new();
    let mut r = Request::from_pairs([("q", "the"), ("limit", "100")]);
    for _ in 0..20 {
        let resp = search_request(&r, &env).unwrap();
        seen.extend(resp.sessions.iter().map(|s| s.session_key.clone()));
        match (resp.partial_reason, resp.cursor) {
            (Some(PartialReason::Budget), Some(c)) => r.cursor = Some(c),
            (None, None) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    let want: Vec<String> = all.sessions.iter().map(|s| s.session_key.clone()).collect();
    assert_eq!(
        seen, want,
        "budget pages add up to the full answer, in order"
    );
}

#[test]
fn page_stops_before_the_byte_cap() {
    // 100 sessions whose snippets carry ~140 separate highlight ranges each.
    let text = "a b ".repeat(200);
    let shards: Vec<Shard> = (0..100)
        .map(|i| Shard {
            session: SessionMeta {
                source: Source::Pi,
                session_id: format!("s{i:03}"),
                title: None,
                cwd: None,
                branch: None,
                created_ms: Some(1),
                updated_ms: Some(1),
                messages: 3,
                parent: None,
                resume: None,
                paths: vec![],
                models: Vec::new(),
            },
            records: (0..3)
                .map(|j| MessageRecord {
                    role: Role::User,
                    ts_ms: 1 + j,
                    text: text.clone(),
                    truncated: false,
                    locator: Locator::NativeEvent {
                        line_no: 1,
                        content_hash16: "0".repeat(16),
                    },
                    seq: None,
                    turn: None,
                    item_id: None,
                    subagent: false,
                    generation: 0,
                })
                .collect(),
            marks: vec![],
        })
        .collect();
    let index = index_of(shards, 1);
    let json = index.search_json(&req(&[("q", "a"), ("limit", "100")]));
    assert!(json.len() <= 256 << 10, "response is {} bytes", json.len());
    let resp: recall_core::Response = serde_json::from_str(&json).unwrap();
    assert!(resp.sessions.len() < 100 && !resp.sessions.is_empty());
    assert!(resp.cursor.is_some(), "the rest is one cursor away");
}

#[test]
fn building_state_is_reported() {
    let index = load_fixture("small", 7);
    let clock = || 0;
    let env = SearchEnv {
        catalog: &index,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: true,
    };
    let resp = search_request(&Request::new("the"), &env).unwrap();
    assert_eq!(resp.state, State::Building);
}

/// A catalog whose shard of one session cannot be read.
struct Damaged<'a>(&'a MemIndex, String);

impl Catalog for Damaged<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.0.current()
    }
    fn snapshot(&self, _: &str, _: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        if key == self.1 {
            return Err(LoadError::Damaged {
                name: entry.generation_file.clone(),
                reason: "truncated".into(),
            });
        }
        self.0.load(key, entry, tools)
    }
}

#[test]
fn an_unreadable_shard_makes_the_answer_partial_not_silently_smaller() {
    let index = load_fixture("small", 7);
    let r = Request::from_pairs([("q", "the"), ("limit", "100")]);
    let all = index.search(&r).unwrap();
    assert_eq!(all.partial_reason, None);
    let lost = all.sessions[0].session_key.clone();
    let damaged = Damaged(&index, lost.clone());
    let clock = || 0;
    let env = SearchEnv {
        catalog: &damaged,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: false,
    };
    let resp = search_request(&r, &env).unwrap();
    assert_eq!(resp.state, State::Partial);
    assert_eq!(resp.partial_reason, Some(PartialReason::Unreadable));
    let keys: Vec<&str> = resp
        .sessions
        .iter()
        .map(|s| s.session_key.as_str())
        .collect();
    let want: Vec<&str> = all
        .sessions
        .iter()
        .map(|s| s.session_key.as_str())
        .filter(|k| *k != lost)
        .collect();
    assert_eq!(keys, want, "every readable session is still found");
    let json = serde_json::to_string(&resp).unwrap();
    assert!(json.contains(r#""partial_reason":"unreadable""#));
}

/// A catalog whose manifest cannot be read.
struct NoManifest;

impl Catalog for NoManifest {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        Err(CatalogError("manifest.json: permission denied".into()))
    }
    fn snapshot(&self, _: &str, _: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(&self, _: &str, e: &ManifestEntry, _: bool) -> Result<LoadedShard, LoadError> {
        Err(LoadError::Missing {
            name: e.generation_file.clone(),
        })
    }
}

#[test]
fn an_unreadable_catalog_is_an_error_not_an_empty_answer() {
    let clock = || 0;
    let env = SearchEnv {
        catalog: &NoManifest,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets::default(),
        building: false,
    };
    let err = search_request(&Request::new("the"), &env).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreUnavailable);
}

#[test]
fn model_filter_keeps_sessions_that_record_a_named_model() {
    let shard = |id: &str, models: &[&str]| Shard {
        session: SessionMeta {
            source: Source::ClaudeCode,
            session_id: id.to_string(),
            title: None,
            cwd: None,
            branch: None,
            created_ms: Some(1),
            updated_ms: Some(1),
            messages: 1,
            parent: None,
            resume: None,
            paths: vec![],
            models: models.iter().map(|m| m.to_string()).collect(),
        },
        records: vec![MessageRecord {
            role: Role::User,
            ts_ms: 1,
            text: "deploy the widget".into(),
            truncated: false,
            locator: Locator::NativeEvent {
                line_no: 1,
                content_hash16: "0".repeat(16),
            },
            seq: None,
            turn: None,
            item_id: None,
            subagent: false,
            generation: 0,
        }],
        marks: vec![],
    };
    let index = index_of(
        vec![
            shard("opus", &["claude-opus-4-6"]),
            shard("both", &["claude-sonnet-4", "claude-opus-4-6"]),
            shard("sonnet", &["claude-sonnet-4"]),
            shard("none", &[]),
        ],
        1,
    );
    let keys = |pairs: &[(&str, &str)]| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&index.search_json(&req(pairs))).unwrap();
        let mut k: Vec<String> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_key"].as_str().unwrap().to_string())
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(&[("q", "widget")]).len(), 4);
    assert_eq!(
        keys(&[("q", "widget"), ("model", "Claude-Opus-4-6")]),
        ["claude-code:both", "claude-code:opus"]
    );
    assert_eq!(
        keys(&[
            ("q", "widget"),
            ("model", "claude-opus-4-6,claude-sonnet-4")
        ]),
        ["claude-code:both", "claude-code:opus", "claude-code:sonnet"]
    );
    assert!(keys(&[("q", "widget"), ("model", "claude")]).is_empty());
}

#[test]
fn debug_reports_the_plan_only_when_asked_and_never_changes_the_answer() {
    let mut index = load_fixture("small", 7);
    let clock = || 0;
    let run = |index: &MemIndex, q: &str, debug: bool| {
        let mut query = Request::new(q).parse().unwrap();
        query.debug = debug;
        let env = SearchEnv {
            catalog: index,
            directories: None,
            clock: &clock,
            clock_us: None,
            budgets: Budgets::default(),
            building: false,
        };
        recall_core::search(&query, &env).unwrap()
    };
    let plain = run(&index, "the", false);
    assert!(!plain.sessions.is_empty());
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("\"debug\""), "debug appears only when asked");
    let asked = run(&index, "the", true);
    let report = asked.debug.clone().expect("a debug report");
    assert_eq!(report.route, "index");
    assert_eq!(report.planner.terms, 1);
    assert_eq!(
        report.planner.indexed_shards,
        report.planner.candidate_shards
    );
    assert!(report.planner.candidate_shards >= plain.sessions.len() as u64);
    assert!(report.planner.shards_loaded >= plain.sessions.len() as u64);
    assert_eq!(
        report.planner.bytes_read, 0,
        "the in-memory index reads nothing"
    );
    assert_eq!(report.planner.plan_us, 0, "no fine clock in memory");
    let mut same = asked.clone();
    same.debug = None;
    assert_eq!(same, plain, "debug never changes the answer");
    // The postings drive the plan: a term no shard holds plans nothing and
    // loads nothing; without the index every session is a candidate.
    let none = run(&index, "zqxjkw", true).debug.unwrap().planner;
    assert_eq!((none.candidate_shards, none.shards_loaded), (0, 0));
    index.set_use_index(false);
    let scan = run(&index, "zqxjkw", true).debug.unwrap();
    assert_eq!(scan.route, "scan");
    assert_eq!(
        scan.planner.candidate_shards,
        index.manifest().sessions.len() as u64
    );
}

/// A catalog that knows each shard's size before reading it (as the store
/// does) and counts what it loads.
struct Sized<'a> {
    index: &'a MemIndex,
    loads: Cell<u64>,
    loaded: std::cell::RefCell<Vec<String>>,
}

impl Catalog for Sized<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.index.current()
    }
    fn snapshot(&self, _: &str, _: u64) -> Option<Arc<Manifest>> {
        None
    }
    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        self.loads.set(self.loads.get() + entry.bytes);
        self.loaded.borrow_mut().push(key.to_string());
        let mut l = self.index.load(key, entry, tools)?;
        l.fresh_bytes = entry.bytes;
        Ok(l)
    }
    fn segments(&self) -> Option<Arc<recall_core::SegmentSet>> {
        self.index.segments()
    }
    fn load_cost(&self, _: &str, entry: &ManifestEntry, _: bool) -> u64 {
        entry.bytes
    }
}

/// One Pi session `id` whose records (one per text, at `ts_ms` = `ts`) say
/// `texts`.
fn session(id: &str, ts: i64, texts: &[String]) -> Shard {
    Shard {
        session: SessionMeta {
            source: Source::Pi,
            session_id: id.into(),
            title: None,
            cwd: None,
            branch: None,
            created_ms: Some(ts),
            updated_ms: Some(ts),
            messages: texts.len() as u64,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        },
        records: texts
            .iter()
            .map(|t| MessageRecord {
                role: Role::User,
                ts_ms: ts,
                text: t.clone(),
                truncated: false,
                locator: Locator::NativeEvent {
                    line_no: 1,
                    content_hash16: "0".repeat(16),
                },
                seq: None,
                turn: None,
                item_id: None,
                subagent: false,
                generation: 0,
            })
            .collect(),
        marks: vec![],
    }
}

fn sized_env<'a>(sized: &'a Sized<'a>, clock: &'a dyn Fn() -> u64, budget: u64) -> SearchEnv<'a> {
    SearchEnv {
        catalog: sized,
        directories: None,
        clock,
        clock_us: None,
        budgets: Budgets {
            fresh_bytes: budget,
            ..Budgets::default()
        },
        building: false,
    }
}

fn bytes_of(index: &MemIndex, id: &str) -> u64 {
    index
        .manifest()
        .sessions
        .values()
        .find(|e| e.meta.session_id == id)
        .unwrap()
        .bytes
}

#[test]
fn a_shard_bigger_than_the_load_budget_is_searched_alone_on_the_next_page() {
    let small = vec!["the tide".to_string()];
    let huge: Vec<String> = (0..400)
        .map(|i| format!("the tide, record {i} {}", "x".repeat(200)))
        .collect();
    let index = index_of(
        vec![
            session("a", 30, &small),
            session("b", 20, &huge),
            session("c", 10, &small),
        ],
        1,
    );
    let (a, b, c) = (
        bytes_of(&index, "a"),
        bytes_of(&index, "b"),
        bytes_of(&index, "c"),
    );
    let budget = a + c;
    assert!(b > budget);
    let sized = Sized {
        index: &index,
        loads: Cell::new(0),
        loaded: Default::default(),
    };
    let clock = || 0;
    let env = sized_env(&sized, &clock, budget);
    let ids = |r: &recall_core::Response| -> Vec<String> {
        r.sessions.iter().map(|s| s.session_id.clone()).collect()
    };
    // Page 1 stops just before the oversized shard, without reading it.
    let page1 = search_request(&Request::new("tide"), &env).unwrap();
    assert!(
        !sized.loaded.borrow().iter().any(|k| k.ends_with(":b")),
        "the oversized shard was read on page 1"
    );
    assert_eq!(page1.state, State::Partial);
    assert_eq!(page1.partial_reason, Some(PartialReason::Oversized));
    assert_eq!(ids(&page1), ["a"]);
    // Page 2 starts with it, alone (its budget admits one oversized shard).
    let mut req = Request::new("tide");
    req.cursor = page1.cursor.clone();
    assert!(req.cursor.is_some());
    let page2 = search_request(&req, &env).unwrap();
    assert_eq!(ids(&page2), ["b"]);
    assert!(sized.loaded.borrow().iter().any(|k| k.ends_with(":b")));
    req.cursor = page2.cursor.clone();
    let page3 = search_request(&req, &env).unwrap();
    assert_eq!(ids(&page3), ["c"]);
    assert!(page3.cursor.is_none());
    // Unbudgeted (the CLI), one page.
    let env = sized_env(&sized, &clock, u64::MAX);
    let resp = search_request(&Request::new("tide"), &env).unwrap();
    assert_eq!(resp.sessions.len(), 3);
    assert_eq!(resp.partial_reason, None);
}

#[test]
fn the_load_budget_stops_before_reading_what_it_cannot_afford() {
    let small = vec!["the tide".to_string()];
    let big: Vec<String> = (0..50)
        .map(|i| format!("the tide, record {i} {}", "x".repeat(200)))
        .collect();
    let index = index_of(vec![session("a", 30, &small), session("b", 20, &big)], 1);
    let (a, b) = (bytes_of(&index, "a"), bytes_of(&index, "b"));
    // Either fits; both do not. Page 1 is certain of `a` before reading `b`.
    let budget = a + b - 1;
    let sized = Sized {
        index: &index,
        loads: Cell::new(0),
        loaded: Default::default(),
    };
    let clock = || 0;
    let env = sized_env(&sized, &clock, budget);
    let first = search_request(&Request::new("tide"), &env).unwrap();
    assert_eq!(sized.loads.get(), a, "only `a` was read");
    assert_eq!(first.partial_reason, Some(PartialReason::Budget));
    assert_eq!(first.sessions.len(), 1);
    let mut r = Request::new("tide");
    r.cursor = first.cursor.clone();
    let second = search_request(&r, &env).unwrap();
    assert_eq!(second.partial_reason, None);
    let ids: Vec<&str> = first
        .sessions
        .iter()
        .chain(&second.sessions)
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"], "budget pages add up to the full answer");
}
