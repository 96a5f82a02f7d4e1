//! Shards bigger than the load budget, and shards prepared in chunks
//! (issue #12 item 2): a catalog that prepares shards with
//! `recall_core::Preparing` a chunk at a time under a clock that advances
//! with the work done, so "the deadline" is measured in bytes prepared, never
//! in wall time. Paging with cursors (and retrying timeouts, as a client
//! does) must give exactly the unbudgeted answer — the oversized sessions
//! included — and no page may run past its deadline by more than a chunk.

use proptest::prelude::*;
use recall_core::catalog::{Catalog, LoadedShard};
use recall_core::model::*;
use recall_core::response::{PartialReason, Response, State};
use recall_core::search::{search_request, Budgets, SearchEnv};
use recall_core::{CatalogError, LoadError, MemIndex, PreparedShard, Preparing, Request};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Bytes of preparing work per millisecond of the work clock.
const BYTES_PER_MS: u64 = 1024;
/// Bytes of work per chunk.
const CHUNK: usize = 1024;

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
            .enumerate()
            .map(|(i, t)| MessageRecord {
                role: if i % 3 == 2 {
                    Role::Assistant
                } else {
                    Role::User
                },
                ts_ms: ts - i as i64,
                text: t.clone(),
                truncated: false,
                locator: Locator::NativeEvent {
                    line_no: i as u64 + 1,
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

/// An index of `shards`, and their bodies by generation name.
fn index_of(shards: Vec<Shard>) -> (MemIndex, HashMap<String, Vec<u8>>) {
    let mut index = MemIndex::new();
    let mut bodies = HashMap::new();
    let mut sessions = BTreeMap::new();
    for shard in shards {
        let body = serde_json::to_vec(&shard).unwrap();
        let name = recall_core::naming::generation_file_name(&body);
        index.add_generation(&name, &body).unwrap();
        sessions.insert(
            shard.session.key(),
            ManifestEntry {
                meta: shard.session.clone(),
                generation_file: name.clone(),
                records: shard.records.len() as u64,
                max_ts_ms: shard.records.iter().map(|r| r.ts_ms).max(),
                bytes: body.len() as u64,
                source_gone: false,
                files: vec![],
                watermark: 0,
                state: serde_json::Value::Null,
            },
        );
        bodies.insert(name, body);
    }
    index.set_manifest_value(Manifest {
        schema: 1,
        parser_version: 1,
        store_id: "oversized".into(),
        revision: 1,
        updated_at_ms: 0,
        sessions,
        tombstones: BTreeMap::new(),
    });
    (index, bodies)
}

/// Prepares shards in chunks, keeping unfinished preparations between
/// queries and caching finished shards no bigger than `cache_limit`.
struct Chunky<'a> {
    index: &'a MemIndex,
    bodies: &'a HashMap<String, Vec<u8>>,
    pending: RefCell<HashMap<String, Preparing>>,
    cache: RefCell<HashMap<String, Arc<PreparedShard>>>,
    cache_limit: u64,
    /// Shards bigger than `cache_limit` kept beside the cache, most recent
    /// last (the host arena keeps `OVERSIZED_KEPT` = 2).
    big: RefCell<Vec<(String, Arc<PreparedShard>)>>,
    /// Bytes of preparing work done: the clock.
    work: Cell<u64>,
}

impl<'a> Chunky<'a> {
    /// A catalog over `index`'s shards (`bodies`) whose cache keeps shards of
    /// at most `cache_limit` bytes, with nothing prepared yet.
    fn new(index: &'a MemIndex, bodies: &'a HashMap<String, Vec<u8>>, cache_limit: u64) -> Self {
        Chunky {
            index,
            bodies,
            pending: RefCell::default(),
            cache: RefCell::default(),
            cache_limit,
            big: RefCell::default(),
            work: Cell::new(0),
        }
    }
}

impl Chunky<'_> {
    fn now_ms(&self) -> u64 {
        self.work.get() / BYTES_PER_MS
    }
}

impl Catalog for Chunky<'_> {
    fn current(&self) -> Result<Arc<Manifest>, CatalogError> {
        self.index.current()
    }
    fn snapshot(&self, store_id: &str, revision: u64) -> Option<Arc<Manifest>> {
        self.index.snapshot(store_id, revision)
    }
    fn segments(&self) -> Option<Arc<recall_core::SegmentSet>> {
        self.index.segments()
    }
    fn load(
        &self,
        key: &str,
        entry: &ManifestEntry,
        tools: bool,
    ) -> Result<LoadedShard, LoadError> {
        loop {
            if let Some(l) = self.load_within(key, entry, tools, &|| false)? {
                return Ok(l);
            }
        }
    }
    fn load_within(
        &self,
        _key: &str,
        entry: &ManifestEntry,
        tools: bool,
        expired: &dyn Fn() -> bool,
    ) -> Result<Option<LoadedShard>, LoadError> {
        let name = &entry.generation_file;
        let kept = self.cache.borrow().get(name).cloned().or_else(|| {
            let big = self.big.borrow();
            big.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone())
        });
        if let Some(shard) = kept {
            return Ok(Some(LoadedShard {
                shard,
                fresh_bytes: 0,
            }));
        }
        let mut p = self
            .pending
            .borrow_mut()
            .remove(name)
            .unwrap_or_else(|| Preparing::new(self.bodies[name].clone(), None, tools));
        loop {
            let before = p.worked();
            let done = p.chunk(CHUNK).map_err(|e| LoadError::Damaged {
                name: name.clone(),
                reason: e.to_string(),
            })?;
            self.work.set(self.work.get() + (p.worked() - before));
            if let Some(shard) = done {
                let shard = Arc::new(shard);
                if entry.bytes <= self.cache_limit {
                    self.cache.borrow_mut().insert(name.clone(), shard.clone());
                } else {
                    let mut big = self.big.borrow_mut();
                    big.push((name.clone(), shard.clone()));
                    let excess = big.len().saturating_sub(2);
                    big.drain(..excess);
                }
                return Ok(Some(LoadedShard {
                    shard,
                    fresh_bytes: entry.bytes,
                }));
            }
            if expired() {
                self.pending.borrow_mut().insert(name.clone(), p);
                return Ok(None);
            }
        }
    }
    fn load_cost(&self, _: &str, entry: &ManifestEntry, _: bool) -> u64 {
        let name = &entry.generation_file;
        let kept = self.cache.borrow().contains_key(name)
            || self.big.borrow().iter().any(|(n, _)| n == name);
        match kept {
            true => 0,
            false => entry.bytes,
        }
    }
}

/// Pages through `request` with budgets, following cursors and retrying
/// timeouts; returns every session shown, in order, and the pages' reasons.
fn page_through(
    catalog: &Chunky<'_>,
    request: &Request,
    budgets: Budgets,
) -> (Vec<serde_json::Value>, Vec<Option<PartialReason>>) {
    let clock = || catalog.now_ms();
    let env = SearchEnv {
        catalog,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets,
        building: false,
    };
    let mut req = request.clone();
    let mut shown = Vec::new();
    let mut reasons = Vec::new();
    for _ in 0..5_000 {
        let resp: Response = search_request(&req, &env).unwrap();
        // Every page stops within its deadline plus one chunk (and the
        // record that ends it: records here are under 1 KiB).
        let chunk_ms = (2 * CHUNK as u64).div_ceil(BYTES_PER_MS);
        assert!(
            resp.took_ms <= budgets.scan_ms + 1 + chunk_ms,
            "a page took {} ms of work for a {} ms deadline",
            resp.took_ms,
            budgets.scan_ms
        );
        reasons.push(resp.partial_reason);
        if resp.partial_reason == Some(PartialReason::Timeout) {
            // The client retries the whole query; the catalog kept its work.
            req = request.clone();
            shown.clear();
            continue;
        }
        shown.extend(
            resp.sessions
                .iter()
                .map(|s| serde_json::to_value(s).unwrap()),
        );
        match resp.cursor {
            Some(c) => req.cursor = Some(c),
            None => return (shown, reasons),
        }
    }
    panic!("paging never ended: {:?}", &reasons[..40]);
}

fn full(index: &MemIndex, request: &Request) -> Vec<serde_json::Value> {
    let clock = || 0;
    let env = SearchEnv {
        catalog: index,
        directories: None,
        clock: &clock,
        clock_us: None,
        budgets: Budgets {
            scan_ms: u64::MAX,
            fresh_bytes: u64::MAX,
            ..Budgets::default()
        },
        building: false,
    };
    let mut req = request.clone();
    req.limit = Some("100".into());
    let resp = search_request(&req, &env).unwrap();
    assert_eq!(resp.state, State::Ready);
    assert!(resp.cursor.is_none());
    resp.sessions
        .iter()
        .map(|s| serde_json::to_value(s).unwrap())
        .collect()
}

fn texts(n: usize, word: &str, pad: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("the tide {word} {i} {}", "x".repeat(pad)))
        .collect()
}

#[test]
fn an_oversized_session_is_searched_alone_on_a_later_page() {
    let (index, bodies) = index_of(vec![
        session("a", 3_000, &texts(2, "small", 10)),
        session("big", 2_000, &texts(200, "narwhal", 300)),
        session("c", 1_000, &texts(2, "small", 10)),
    ]);
    let big = index
        .manifest()
        .sessions
        .values()
        .find(|e| e.meta.session_id == "big")
        .unwrap()
        .bytes;
    assert!(big > 40 * CHUNK as u64, "several deadlines' worth");
    let catalog = Chunky::new(&index, &bodies, u64::MAX);
    let budgets = Budgets {
        scan_ms: 4,
        fresh_bytes: 4 * CHUNK as u64,
        ..Budgets::default()
    };
    // The only session holding "narwhal" is the oversized one.
    let (shown, reasons) = page_through(&catalog, &Request::new("narwhal"), budgets);
    assert_eq!(shown, full(&index, &Request::new("narwhal")));
    assert_eq!(shown.len(), 1);
    assert!(
        reasons.len() > 5
            && reasons[..reasons.len() - 1]
                .iter()
                .all(|r| *r == Some(PartialReason::Oversized)),
        "prepared over several pages, each with a cursor: {reasons:?}"
    );
    // "tide" (nothing cached): `a` first, then the page stops before
    // `big`; `big` alone; then `c`.
    let catalog = Chunky::new(&index, &bodies, budgets.fresh_bytes);
    let (shown, reasons) = page_through(&catalog, &Request::new("tide"), budgets);
    let ids: Vec<&str> = shown
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "big", "c"]);
    assert_eq!(shown, full(&index, &Request::new("tide")));
    assert_eq!(reasons[0], Some(PartialReason::Oversized), "{reasons:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn budgeted_pages_add_up_to_the_full_answer(
        sizes in prop::collection::vec((1usize..4, 0usize..20, 0u8..4), 1..6),
        bigs in prop::collection::vec((10usize..40, 100usize..400, 0u8..4), 0..3),
        limit in 1usize..4,
        scan_ms in 1u64..6,
        budget_chunks in 1u64..12,
        relevance in any::<bool>(),
        cache in any::<bool>(),
        // Terms of 3 bytes or more: relevance bounds are then known (with
        // a shorter term a budget stop under relevance is best effort).
        q in prop::sample::select(vec!["tide", "wd1", "wd2 tide", "zebra"]),
    ) {
        // Every small session fits one chunk (so the budget); at most two
        // are oversized (what the host keeps beside its arena).
        let shards = bigs
            .iter()
            .chain(&sizes)
            .enumerate()
            .map(|(i, &(n, pad, w))| {
                session(&format!("s{i}"), 10_000 - (i as i64 * 37 % 11) * 100, &texts(n, &format!("wd{w}"), pad))
            })
            .collect();
        let (index, bodies) = index_of(shards);
        let budgets = Budgets {
            scan_ms,
            fresh_bytes: budget_chunks * CHUNK as u64,
            ..Budgets::default()
        };
        let cache_limit = if cache { u64::MAX } else { budgets.fresh_bytes };
        let catalog = Chunky::new(&index, &bodies, cache_limit);
        let mut request = Request::new(q);
        request.limit = Some(limit.to_string());
        if relevance {
            request.sort = Some("relevance".into());
        }
        let (shown, _) = page_through(&catalog, &request, budgets);
        prop_assert_eq!(shown, full(&index, &request));
    }

    #[test]
    fn chunked_preparation_equals_preparing_whole(
        sizes in prop::collection::vec(0usize..300, 0..30),
        chunk in 1usize..3000,
        tools in any::<bool>(),
        with_grams in any::<bool>(),
        ws in any::<bool>(),
    ) {
        let texts: Vec<String> = sizes.iter().map(|&n| format!("é{}ß", "ab".repeat(n))).collect();
        let mut shard = session("p", 5, &texts);
        for (i, r) in shard.records.iter_mut().enumerate() {
            if i % 4 == 1 {
                r.role = Role::Tool;
            }
        }
        let body = match ws {
            true => serde_json::to_vec_pretty(&shard).unwrap(),
            false => serde_json::to_vec(&shard).unwrap(),
        };
        let whole = PreparedShard::from_bytes_with_options(&body, None, tools).unwrap();
        let grams = with_grams.then(|| whole.grams.clone());
        let reference = PreparedShard::from_bytes_with_options(&body, grams.clone(), tools).unwrap();
        let mut p = Preparing::new(body, grams, tools);
        let mut calls = 0;
        let got = loop {
            calls += 1;
            if let Some(s) = p.chunk(chunk).unwrap() {
                break s;
            }
        };
        prop_assert!(calls <= 2 + p.worked() as usize / chunk);
        prop_assert_eq!(format!("{:?}", got), format!("{:?}", reference));
    }

    #[test]
    fn a_body_that_is_not_a_shard_is_an_error_both_ways(
        cut in 0usize..2000,
        junk in prop::sample::select(vec!["", "x", "}", ",", " ", "{}"]),
    ) {
        let shard = session("p", 5, &texts(5, "w", 20));
        let mut body = serde_json::to_vec(&shard).unwrap();
        body.truncate(cut.min(body.len()));
        body.extend_from_slice(junk.as_bytes());
        let whole = PreparedShard::from_bytes(&body).is_ok();
        let mut p = Preparing::new(body, None, true);
        let chunked = loop {
            match p.chunk(64) {
                Ok(Some(_)) => break true,
                Ok(None) => continue,
                Err(_) => break false,
            }
        };
        prop_assert_eq!(chunked, whole);
    }
}

#[test]
fn keys_in_any_order_and_unknown_keys_are_read_like_serde() {
    let shard = session("p", 5, &texts(3, "w", 5));
    let v = serde_json::to_value(&shard).unwrap();
    let body = format!(
        r#" {{ "extra": [1, {{"a": "]"}}], "marks": {}, "records": {}, "session": {} }} "#,
        v["marks"], v["records"], v["session"]
    );
    let whole = PreparedShard::from_bytes(body.as_bytes()).unwrap();
    let mut p = Preparing::new(body.into_bytes(), None, true);
    let got = loop {
        if let Some(s) = p.chunk(16).unwrap() {
            break s;
        }
    };
    assert_eq!(format!("{got:?}"), format!("{whole:?}"));
    for bad in [
        r#"{"session": {"source":"pi","session_id":"x"}}"#,
        r#"{"records": []}"#,
        r#"{"records": [], "records": [], "session": {"source":"pi","session_id":"x"}}"#,
        r#"[]"#,
    ] {
        let mut p = Preparing::new(bad.as_bytes().to_vec(), None, true);
        assert!(p.chunk(1 << 20).is_err(), "{bad}");
        assert!(PreparedShard::from_bytes(bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn a_page_preparing_an_oversized_shard_shows_nothing_it_could_pass() {
    // Under `relevance` with a 2-byte term no bound is known. `s0` is
    // scanned first (key order) and found; the oversized `s1` ranks before
    // it (shorter records). A page interrupted while preparing `s1` must not
    // show `s0` with a cursor after it: `s1` would then never be shown.
    let (index, bodies) = index_of(vec![
        session("s0", 3_000, &texts(1, "wd0", 60)),
        session("s1", 2_000, &texts(300, "wd1", 0)),
    ]);
    let catalog = Chunky::new(&index, &bodies, u64::MAX);
    let budgets = Budgets {
        scan_ms: 4,
        fresh_bytes: 4 * CHUNK as u64,
        ..Budgets::default()
    };
    let mut request = Request::new("wd");
    request.sort = Some("relevance".into());
    request.limit = Some("1".into());
    let (shown, reasons) = page_through(&catalog, &request, budgets);
    assert!(
        reasons.contains(&Some(PartialReason::Oversized)),
        "{reasons:?}"
    );
    let ids: Vec<&str> = shown
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s1", "s0"]);
    assert_eq!(shown, full(&index, &request));
}
