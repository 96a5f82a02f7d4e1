//! Query expressions (DESIGN.md §13: `OR` / `|`, groups, `-` exclusions,
//! `w:` whole words, inline filters) against a naive evaluator of the same
//! grammar: random expression trees over the folding-heavy vocabulary are
//! written out as `q`, and the engine's pages (every cursor followed, both
//! orders) equal the reference that evaluates the tree itself.

mod reference;

use proptest::prelude::*;
use recall_core::fold::fold_str;
use recall_core::query::Request;
use recall_core::response::{Response, SessionHits};
use reference::*;

/// An expression as the test writes it.
#[derive(Clone, Debug)]
enum Expr {
    /// A vocabulary word; whether it is a whole word.
    Term(usize, bool),
    /// An excluded word.
    Not(usize),
    And(Vec<Expr>),
    Or(Vec<Expr>, bool),
}

impl Expr {
    fn q(&self) -> String {
        match self {
            Expr::Term(w, word) => format!("{}\"{}\"", if *word { "w:" } else { "" }, WORDS[*w]),
            Expr::Not(w) => format!("-\"{}\"", WORDS[*w]),
            Expr::And(v) => v.iter().map(|e| e.q()).collect::<Vec<_>>().join(" "),
            Expr::Or(v, bar) => {
                let op = if *bar { " | " } else { " OR " };
                let parts: Vec<String> = v.iter().map(|e| e.q()).collect();
                format!("({})", parts.join(op))
            }
        }
    }

    fn eval(&self, text: &str) -> bool {
        match self {
            Expr::Term(w, word) => !occurrences(text, &fold_str(WORDS[*w]), *word).is_empty(),
            Expr::Not(w) => occurrences(text, &fold_str(WORDS[*w]), false).is_empty(),
            Expr::And(v) => v.iter().all(|e| e.eval(text)),
            Expr::Or(v, _) => v.iter().any(|e| e.eval(text)),
        }
    }

    fn positive(&self, out: &mut Vec<(String, bool)>) {
        match self {
            Expr::Term(w, word) => {
                let t = (fold_str(WORDS[*w]), *word);
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            Expr::Not(_) => {}
            Expr::And(v) | Expr::Or(v, _) => v.iter().for_each(|e| e.positive(out)),
        }
    }

    fn has_positive(&self) -> bool {
        match self {
            Expr::Term(..) => true,
            Expr::Not(_) => false,
            Expr::And(v) | Expr::Or(v, _) => v.iter().any(Expr::has_positive),
        }
    }
}

impl RefMatch for Expr {
    fn matches(&self, text: &str) -> bool {
        self.eval(text)
    }
    fn positive(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        Expr::positive(self, &mut out);
        out
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    let w = 0..WORDS.len();
    let leaf = prop_oneof![
        4 => (w.clone(), prop::bool::weighted(0.3)).prop_map(|(w, word)| Expr::Term(w, word)),
        1 => w.prop_map(Expr::Not),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
            (prop::collection::vec(inner, 2..4), any::<bool>()).prop_map(|(v, b)| Expr::Or(v, b)),
        ]
    })
}

/// Every page of `req`, following the cursor.
fn pages(index: &recall_core::MemIndex, req: &Request) -> Result<Vec<SessionHits>, TestCaseError> {
    let mut req = req.clone();
    let mut got = Vec::new();
    for _ in 0..100 {
        let resp: Response = index.search(&req).expect("search");
        got.extend(resp.sessions);
        match resp.cursor {
            Some(c) => req.cursor = Some(c),
            None => return Ok(got),
        }
    }
    Err(TestCaseError::fail("more than 100 pages"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn expression_pages_equal_the_naive_evaluator(
        spec in spec(),
        e in expr(),
        scope in prop::sample::select(vec!["conversation", "all"]),
        relevance in any::<bool>(),
        limit in 1usize..4,
    ) {
        prop_assume!(e.has_positive());
        let (index, shards) = build(&spec);
        let mut req = Request::new(&e.q());
        req.scope = Some(scope.into());
        req.limit = Some(limit.to_string());
        if relevance {
            req.sort = Some("relevance".into());
        }
        // More than 16 distinct terms is refused; the rest must parse.
        let parsed = req.parse();
        if let Err(err) = &parsed {
            prop_assert_eq!(err.code.as_str(), "too_many_terms", "{}", e.q());
            return Ok(());
        }
        let want = reference_with(&index, &shards, &req, &e);
        prop_assert_eq!(pages(&index, &req)?, want, "q = {}", e.q());
    }
}

#[test]
fn inline_filters_equal_their_parameters() {
    let spec = Spec {
        sessions: vec![
            (
                0,
                0,
                vec![
                    (0, 1, vec![0, 18], false, false),
                    (2, 2, vec![0], false, true),
                ],
            ),
            (1, 1, vec![(1, 3, vec![0, 19], true, false)]),
            (3, 2, vec![(2, 4, vec![0, 18], false, false)]),
        ],
    };
    let (index, _) = build(&spec);
    type SetParam = fn(&mut Request);
    let cases: [(&str, SetParam); 6] = [
        ("alpha role:user", |r| r.role = Some("user".into())),
        ("alpha scope:all", |r| r.scope = Some("all".into())),
        ("alpha cwd:/home/a", |r| r.cwd = Some("/home/a".into())),
        ("alpha -is:superseded", |r| {
            r.include_superseded = Some("false".into())
        }),
        ("since:1020 alpha scope:all", |r| {
            r.since = Some("1020".into());
            r.scope = Some("all".into());
        }),
        ("alpha -is:subagent scope:all", |r| {
            r.subagents = Some("false".into());
            r.scope = Some("all".into());
        }),
    ];
    for (q, set) in cases {
        let inline = index.search(&Request::new(q)).expect("inline");
        let mut p = Request::new("alpha");
        set(&mut p);
        let param = index.search(&p).expect("param");
        assert_eq!(inline.sessions, param.sessions, "{q}");
        let all = index.search(&Request::new("alpha scope:all")).expect("all");
        assert!(inline.sessions.len() <= all.sessions.len(), "{q}");
    }
    let e = Request {
        role: Some("user".into()),
        ..Request::new("alpha role:assistant")
    }
    .parse()
    .expect_err("given twice");
    assert_eq!((e.code.as_str(), e.at), ("invalid_query", Some(6)));
    let e = Request::new("alpha (beta").parse().expect_err("unclosed");
    assert_eq!((e.code.as_str(), e.at), ("invalid_query", Some(6)));
    let body: serde_json::Value = serde_json::from_str(&e.to_json()).expect("json");
    assert_eq!(body["at"], 6);
    assert_eq!(body["error"], "invalid_query");
}

#[test]
fn the_complaints_of_a_new_user_are_answered() {
    // `timeout OR deadline` is one or the other, `-flaky` excludes, and
    // `w:cause` is not `because`.
    let spec = Spec {
        sessions: vec![(0, 0, vec![(0, 1, vec![0], false, false)])],
    };
    let (index, _) = build(&spec);
    let q = |s: &str| {
        index
            .search(&Request::new(s))
            .expect("search")
            .sessions
            .len()
    };
    assert_eq!(q("alpha OR zzz"), 1);
    assert_eq!(q("alpha zzz"), 0);
    assert_eq!(q("alpha -alpha"), 0);
    assert_eq!(q("alpha -zzz"), 1);
    assert_eq!(q("w:alph"), 0);
    assert_eq!(q("alph"), 1);
    assert_eq!(q("w:alpha"), 1);
}
