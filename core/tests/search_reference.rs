//! The search engine against a naive reference of DESIGN.md §4, on random
//! small corpora and random requests, paging through every cursor.

mod reference;

use proptest::prelude::*;
use recall_core::fold::fold_str;
use recall_core::query::Request;
use recall_core::response::{Response, SessionHits};
use reference::*;

fn request_strategy() -> impl Strategy<Value = Request> {
    let q = prop::collection::vec(
        prop_oneof![
            prop::sample::select(WORDS).prop_map(str::to_string),
            prop::sample::select(WORDS).prop_map(|w| w.to_uppercase()),
            prop::sample::select(WORDS).prop_map(|w| w.chars().take(2).collect::<String>()),
            (prop::sample::select(WORDS), prop::sample::select(WORDS))
                .prop_map(|(a, b)| format!("\"{a} {b}\"")),
        ],
        1..4,
    );
    (
        q,
        prop::option::of(prop::sample::select(vec![
            "codex",
            "claude,pi",
            "kimi-code,intendant",
        ])),
        prop::option::of(prop::sample::select(vec![
            "user",
            "assistant",
            "user,assistant",
        ])),
        prop::option::of(prop::sample::select(vec!["all", "conversation"])),
        prop::option::of(1_000i64..1_120),
        prop::option::of(prop::sample::select(vec!["/home/a", "/home/a/b,/home/ab"])),
        prop::option::of(any::<bool>()),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::sample::select(vec!["newest", "relevance"])),
        1usize..4,
    )
        .prop_map(
            |(q, source, role, scope, since, cwd, sup, sub, sort, limit)| Request {
                q: Some(q.join(" ")),
                source: source.map(str::to_string),
                role: role.map(str::to_string),
                scope: scope.map(str::to_string),
                since: since.map(|s| s.to_string()),
                until: since.map(|s| (s + 60).to_string()),
                cwd: cwd.map(str::to_string),
                include_superseded: sup.map(|b| b.to_string()),
                subagents: sub.map(|b| b.to_string()),
                sort: sort.map(str::to_string),
                limit: Some(limit.to_string()),
                cursor: None,
                model: None,
                ..Request::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn pages_equal_reference(spec in spec(), req in request_strategy()) {
        prop_assume!(req.parse().is_ok());
        let (index, shards) = build(&spec);
        let want = reference(&index, &shards, &req);
        let limit: usize = req.limit.as_deref().unwrap().parse().unwrap();
        let mut got: Vec<SessionHits> = Vec::new();
        let mut req = req.clone();
        let mut pages = 0;
        loop {
            let resp: Response = index.search(&req).unwrap();
            prop_assert!(resp.sessions.len() <= limit);
            pages += 1;
            let done = resp.cursor.is_none();
            prop_assert!(done || resp.sessions.len() == limit);
            got.extend(resp.sessions);
            match resp.cursor {
                Some(c) => req.cursor = Some(c),
                None => break,
            }
            prop_assert!(pages < 100);
        }
        prop_assert_eq!(got, want);
    }
}

#[test]
fn folded_query_words_are_in_vocabulary() {
    // Guard: the vocabulary really exercises folding (so the property test
    // above is not vacuous).
    assert_eq!(fold_str("Straße"), fold_str("strasse"));
    assert_ne!(fold_str("が"), fold_str("かな"));
}

/// Sessions whose newest record is not a hit must not end the early-out
/// scan too soon: the page must still order ties by session key.
#[test]
fn early_out_respects_key_ties() {
    // Words: 19 = "needle", 18 = "the". Sessions 0 and 1 have a newer
    // non-matching record (bound 1300) and a hit at 1100; session 2's only
    // record is a hit at 1100. Session keys: pi:s0, pi:s1, codex:s2.
    let rec = |ts: i64, w: u8| (1u8, ts, vec![w], false, false);
    let spec = Spec {
        sessions: vec![
            (3, 0, vec![rec(10, 19), rec(30, 18)]),
            (3, 0, vec![rec(10, 19), rec(30, 18)]),
            (1, 0, vec![rec(10, 19)]),
        ],
    };
    let (index, shards) = build(&spec);
    let mut req = Request::new("needle");
    req.limit = Some("1".into());
    let want = reference(&index, &shards, &req);
    assert_eq!(want[0].session_key, "codex:s2");
    let resp = index.search(&req).unwrap();
    assert_eq!(resp.sessions[0].session_key, "codex:s2");
    assert!(resp.cursor.is_some());
}

/// Relevance pages on corpora where one term repeats a lot in some records:
/// the scan order and early-out by the filters' occurrence bounds must give
/// exactly the full-scan pages.
fn repetitive_spec() -> impl Strategy<Value = Spec> {
    // Words 0 = "alpha", 18 = "the", 19 = "needle".
    let record = (
        0u8..3,
        0i64..12,
        prop::collection::vec(prop::sample::select(vec![0u8, 18, 19, 19]), 1..24),
        any::<bool>(),
        any::<bool>(),
    );
    let session = (0u8..5, 0u8..3, prop::collection::vec(record, 1..6));
    prop::collection::vec(session, 2..14).prop_map(|sessions| Spec { sessions })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn relevance_pages_equal_reference(
        spec in repetitive_spec(),
        q in prop::sample::select(vec!["needle", "needle the", "alpha", "eedl", "the needle alpha"]),
        limit in 1usize..4,
    ) {
        let (index, shards) = build(&spec);
        let mut req = Request::new(q);
        req.sort = Some("relevance".into());
        req.limit = Some(limit.to_string());
        let want = reference(&index, &shards, &req);
        let mut got: Vec<SessionHits> = Vec::new();
        for _ in 0..100 {
            let resp: Response = index.search(&req).unwrap();
            got.extend(resp.sessions);
            match resp.cursor {
                Some(c) => req.cursor = Some(c),
                None => break,
            }
        }
        prop_assert_eq!(got, want);
    }
}
