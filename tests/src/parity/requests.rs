//! Deterministic request generation: thousands of varied §4 requests over a
//! [`Facts`] corpus, each with what it must find ([`Expect`]).
//!
//! Kinds: unique prose tokens (in several spellings, under random filters),
//! token substrings, multi-term and phrase queries, the §3 fold variants of
//! the non-ASCII words in the texts (with the token, so the expectation is
//! exact, and alone), tool tokens per scope, per-source tokens under `source=`
//! filters naming their source or only others, distractors, common words with
//! small limits (followed through every cursor), and every error code.

use super::corpus::{Facts, RecordFacts, SessionFacts};
use super::filters::{add_random, add_sort_and_limit, source_spellings};
use super::rng::Rng;
use recall_core::model::Source;
use serde_json::{Map, Value};

/// What a request must produce, beyond native/wasm equality.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Only parity.
    Any,
    /// The §7 error body with this code.
    Error(&'static str),
    /// `ok:true` and no session on any page.
    Nothing,
    /// Exactly this session, with exactly one matching record.
    OnlyRecord(String),
    /// Exactly this session (any number of matching records).
    OnlySession(String),
    /// This session is on some page.
    Includes(String),
    /// At least one session.
    Hits,
}

/// One request and its expectation.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The kind of request (for reports).
    pub kind: &'static str,
    /// The request JSON as sent to both sides.
    pub request: String,
    /// What it must find.
    pub expect: Expect,
}

/// The §3 rows as they occur in corpus-gen prose: a needle in the original
/// text, spellings that must match it, spellings that must not (checked only
/// where the record has no other form of them).
struct FoldRow {
    needle: &'static str,
    matches: &'static [&'static str],
    misses: &'static [&'static str],
}

const FOLD_ROWS: &[FoldRow] = &[
    FoldRow {
        needle: "Straße",
        matches: &["strasse", "STRASSE", "Straße", "STRAẞE", "straß"],
        misses: &["stras"],
    },
    FoldRow {
        needle: "straẞe",
        matches: &["strasse", "Straße"],
        misses: &[],
    },
    FoldRow {
        needle: "ΣΊΣΥΦΟΣ",
        matches: &["σίσυφος", "ΣΊΣΥΦΟΣ", "σισυφοσ", "Σίσυφος"],
        misses: &[],
    },
    FoldRow {
        needle: "İstanbul",
        matches: &["istanbul", "İstanbul", "ISTANBUL", "İSTANBUL"],
        misses: &[],
    },
    FoldRow {
        needle: "cafés",
        matches: &["cafes", "cafés", "CAFÉS", "Cafe\u{301}s"],
        misses: &[],
    },
    FoldRow {
        needle: "ﬁle ligature",
        matches: &["\"file ligature\"", "\"ﬁle ligature\"", "FILE"],
        misses: &[],
    },
    FoldRow {
        needle: "ｆｉｌｅ",
        matches: &["file", "ｆｉｌｅ", "FILE", "Ｆｉｌｅ"],
        misses: &[],
    },
    FoldRow {
        needle: "don’t",
        matches: &["don't", "don’t", "DON'T", "DON’T"],
        misses: &[],
    },
    FoldRow {
        needle: "a–b",
        matches: &["a-b", "a–b", "a—b", "A‐B"],
        misses: &[],
    },
    FoldRow {
        needle: "使用数据库连接",
        matches: &["数据库", "使用数据库连接", "据库连", "数据"],
        misses: &[],
    },
    FoldRow {
        needle: "한국어",
        matches: &["한국", "한국어", "국어", "하다"],
        misses: &[],
    },
    FoldRow {
        needle: "연결 시간이",
        matches: &["연결", "시간이"],
        misses: &["하", "한"],
    },
    FoldRow {
        needle: "かな",
        matches: &["かな", "か", "がな", "が"],
        misses: &[],
    },
    FoldRow {
        needle: "接続がタイムアウト",
        matches: &["が", "タイムアウト"],
        misses: &["か", "カ"],
    },
    FoldRow {
        needle: "12\u{a0}000",
        matches: &["\"12 000\"", "\"12\u{a0}000\""],
        misses: &["12000"],
    },
    FoldRow {
        needle: "ellipsis…",
        matches: &["ellipsis...", "ellipsis…", "ELLIPSIS..."],
        misses: &[],
    },
    FoldRow {
        needle: "Größenänderung",
        matches: &["grossenanderung", "GRÖSSENÄNDERUNG", "Größenänderung"],
        misses: &["gros"],
    },
    FoldRow {
        needle: "résumé.md",
        matches: &["resume.md", "RÉSUMÉ.MD", "résumé"],
        misses: &[],
    },
    FoldRow {
        needle: "Ошибка",
        matches: &["ошибка", "ОШИБКА"],
        misses: &[],
    },
    FoldRow {
        needle: "🚀",
        matches: &["🚀"],
        misses: &[],
    },
    FoldRow {
        needle: "✅",
        matches: &["✅"],
        misses: &[],
    },
];

/// Words common in corpus-gen prose, for paging through many sessions.
const COMMON: &[&str] = &[
    "the",
    "error",
    "cargo",
    "test",
    "src/",
    "config",
    "shard",
    "return",
    "cache",
    "TODO",
    "the build",
    "\"root cause\"",
    "fn",
    "ok",
    "Straße",
    "file",
    "数据库",
    "が",
];

/// Token requests per source in [`Gen::by_source`] (two each: naming the
/// source, naming others), plus as many tool-token requests.
pub const PER_SOURCE: usize = 12;

/// Generates the probes for `facts` from `seed`.
pub fn generate(facts: &Facts, seed: u64) -> Vec<Probe> {
    let mut g = Gen {
        rng: Rng::new(seed),
        facts,
        out: Vec::new(),
    };
    let tokened: Vec<(usize, usize)> = facts
        .sessions
        .iter()
        .enumerate()
        .flat_map(|(s, sf)| {
            sf.records
                .iter()
                .enumerate()
                .filter(|(_, r)| r.token.is_some())
                .map(move |(r, _)| (s, r))
        })
        .collect();
    if tokened.is_empty() {
        return g.out;
    }
    for _ in 0..700 {
        let (s, r) = tokened[g.rng.below(tokened.len())];
        g.token(s, r);
    }
    for _ in 0..150 {
        let (s, r) = tokened[g.rng.below(tokened.len())];
        g.substring(s, r);
    }
    for _ in 0..200 {
        let (s, r) = tokened[g.rng.below(tokened.len())];
        g.multi_term(s, r);
    }
    for _ in 0..200 {
        let (s, r) = tokened[g.rng.below(tokened.len())];
        g.phrase(s, r);
    }
    g.fold_rows(&tokened);
    for _ in 0..200 {
        g.variant_alone();
    }
    g.tools();
    g.by_source(&tokened);
    g.distractors();
    for _ in 0..150 {
        g.common();
    }
    for _ in 0..120 {
        let (s, r) = tokened[g.rng.below(tokened.len())];
        let (s2, r2) = tokened[g.rng.below(tokened.len())];
        g.expression(s, r, (s2, r2));
    }
    g.errors();
    g.out
}

struct Gen<'a> {
    rng: Rng,
    facts: &'a Facts,
    out: Vec<Probe>,
}

fn req(q: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("q".into(), q.into());
    m
}

impl<'a> Gen<'a> {
    fn push(&mut self, kind: &'static str, request: Map<String, Value>, expect: Expect) {
        self.out.push(Probe {
            kind,
            request: Value::Object(request).to_string(),
            expect,
        });
    }

    fn at(&self, s: usize, r: usize) -> (&'a SessionFacts, &'a RecordFacts, &'a str) {
        let facts: &'a Facts = self.facts;
        let sf = &facts.sessions[s];
        let rf = &sf.records[r];
        (sf, rf, rf.token.as_deref().unwrap_or(""))
    }

    /// A prose token in one of several spellings, under random filters.
    fn token(&mut self, s: usize, r: usize) {
        let (sf, rf, token) = self.at(s, r);
        let q = match self.rng.below(6) {
            0 => token.to_uppercase(),
            1 => fullwidth(token),
            2 => format!("{token} {}", token.to_uppercase()),
            3 => format!("\"{token}\""),
            _ => token.to_string(),
        };
        let mut m = req(&q);
        let passes = add_random(&mut self.rng, &mut m, sf, rf);
        let expect = if passes {
            Expect::OnlyRecord(sf.key.clone())
        } else {
            Expect::Nothing
        };
        self.push("token", m, expect);
    }

    /// The query grammar (§13) around a token: `OR` with a miss or with
    /// another record's token, exclusions, whole words, inline filters, and
    /// the `invalid_query` errors.
    fn expression(&mut self, s: usize, r: usize, other: (usize, usize)) {
        const MISS: &str = "qqzzxnotaword";
        let (sf, _, token) = self.at(s, r);
        let (of, _, other_token) = self.at(other.0, other.1);
        let key = sf.key.clone();
        let source = sf.key.split(':').next().unwrap_or("").to_string();
        let elsewhere = of.key.split(':').next().unwrap_or("").to_string();
        let upper = token.to_uppercase();
        let (q, expect) = match self.rng.below(12) {
            0 => (format!("{token} OR {MISS}"), Expect::OnlyRecord(key)),
            1 => (format!("({MISS} | {upper})"), Expect::OnlyRecord(key)),
            2 => (format!("{token} OR {other_token}"), Expect::Includes(key)),
            3 => (format!("{token} -{upper}"), Expect::Nothing),
            4 => (format!("{token} -\"{MISS}\""), Expect::OnlyRecord(key)),
            5 => (format!("w:{token}"), Expect::Any),
            6 => (format!("{token} source:{source}"), Expect::OnlyRecord(key)),
            7 if elsewhere != source => (format!("{token} source:{elsewhere}"), Expect::Nothing),
            8 => (format!("({token}"), Expect::Error("invalid_query")),
            9 => (format!("{token} OR"), Expect::Error("invalid_query")),
            10 => (format!("-{token}"), Expect::Error("invalid_query")),
            _ => (
                format!("({token} | {other_token}) -{MISS}"),
                Expect::Includes(key),
            ),
        };
        self.push("expression", req(&q), expect);
    }

    /// A prefix or suffix of a token: its session is among the results.
    fn substring(&mut self, s: usize, r: usize) {
        let (sf, _, token) = self.at(s, r);
        let key = sf.key.clone();
        let k = self.rng.range(6, 10);
        let q = if self.rng.chance(50) {
            token[..k].to_string()
        } else {
            token[token.len() - k..].to_string()
        };
        let mut m = req(&q);
        m.insert("limit".into(), "100".into());
        self.push("substring", m, Expect::Includes(key));
    }

    /// The token with another word of its record (AND in one record), or
    /// with the token of another record (never in one record).
    fn multi_term(&mut self, s: usize, r: usize) {
        let (sf, rf, token) = self.at(s, r);
        let key = sf.key.clone();
        let words: Vec<&str> = rf
            .text
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 4 && w.as_bytes()[0] != b'u')
            .collect();
        let other = sf
            .records
            .iter()
            .filter_map(|o| o.token.as_deref())
            .find(|t| *t != token)
            .map(str::to_string);
        let token = token.to_string();
        let pick = self.rng.below(words.len().max(1));
        if let (Some(o), true) = (other, self.rng.chance(25)) {
            self.push("multi_term", req(&format!("{o} {token}")), Expect::Nothing);
        } else if let Some(w) = words.get(pick) {
            let w = if self.rng.chance(50) {
                w.to_uppercase()
            } else {
                w.to_string()
            };
            let q = if self.rng.chance(50) {
                format!("{w} {token}")
            } else {
                format!("{token} {w}")
            };
            self.push("multi_term", req(&q), Expect::OnlyRecord(key));
        }
    }

    /// A verbatim run of words around the token, as a phrase (sometimes
    /// without its closing quote); or a run of words elsewhere in the text.
    fn phrase(&mut self, s: usize, r: usize) {
        let (sf, rf, token) = self.at(s, r);
        let key = sf.key.clone();
        let Some(at) = rf.text.find(token) else {
            return;
        };
        let text = rf.text.clone();
        let (a, b) = if self.rng.chance(70) {
            (
                word_start(&text, at, 2),
                word_end(&text, at + token.len(), 2),
            )
        } else {
            let start = word_start(&text, self.rng.below(text.len()), 0);
            (start, word_end(&text, start, 3))
        };
        let phrase = &text[a..b];
        if phrase.trim().is_empty() || phrase.contains('"') || phrase.trim() != phrase {
            return;
        }
        let has_token = phrase.contains(token);
        let q = if self.rng.chance(20) {
            format!("\"{phrase}")
        } else {
            format!("\"{phrase}\"")
        };
        let mut m = req(&q);
        let expect = if has_token {
            Expect::OnlyRecord(key)
        } else {
            m.insert("limit".into(), "100".into());
            m.insert("sort".into(), "relevance".into());
            Expect::Includes(key)
        };
        self.push("phrase", m, expect);
    }

    /// For records holding a §3 row's needle: token + each spelling that
    /// must match (exactly that record) and each that must not (nothing).
    fn fold_rows(&mut self, tokened: &[(usize, usize)]) {
        let mut per_row = vec![0usize; FOLD_ROWS.len()];
        for &(s, r) in tokened {
            let (sf, rf, token) = self.at(s, r);
            for (i, row) in FOLD_ROWS.iter().enumerate() {
                if per_row[i] >= 12 || !rf.text.contains(row.needle) {
                    continue;
                }
                per_row[i] += 1;
                let mut probes = Vec::new();
                for m in row.matches {
                    probes.push((format!("{token} {m}"), Expect::OnlyRecord(sf.key.clone())));
                }
                for miss in row.misses {
                    if !loosely_contains(&rf.text, miss) {
                        probes.push((format!("{miss} {token}"), Expect::Nothing));
                    }
                }
                for (q, e) in probes {
                    self.push("fold", req(&q), e);
                }
            }
        }
    }

    /// A fold spelling alone, under random filters, sorts and limits.
    fn variant_alone(&mut self) {
        let Some(row) = self.rng.pick(FOLD_ROWS) else {
            return;
        };
        let q = *self.rng.pick(row.matches).unwrap_or(&"file");
        let present = self
            .facts
            .sessions
            .iter()
            .any(|s| s.records.iter().any(|r| r.text.contains(row.needle)));
        let mut m = req(q);
        let expect = if self.rng.chance(30) && present {
            Expect::Hits
        } else {
            self.random_filters(&mut m);
            Expect::Any
        };
        self.push("fold_alone", m, expect);
    }

    /// Filters not tied to one record: sources (with aliases), roles,
    /// scope, times, cwd, activity, subagents, sort, limit.
    fn random_filters(&mut self, m: &mut Map<String, Value>) {
        let rng = &mut self.rng;
        if rng.chance(30) {
            let n = rng.range(1, 3);
            let list: Vec<&str> = (0..n)
                .map(|_| {
                    let s = Source::ALL[rng.below(Source::ALL.len())];
                    let sp = source_spellings(s);
                    sp[rng.below(sp.len())]
                })
                .collect();
            m.insert("source".into(), list.join(",").into());
        }
        let all = rng.chance(30);
        if all {
            m.insert("scope".into(), "all".into());
        }
        if rng.chance(20) {
            let roles = if all {
                ["user", "assistant", "tool", "tool,user"]
            } else {
                ["user", "assistant", "assistant,user", "user,tool"]
            };
            m.insert("role".into(), roles[rng.below(4)].into());
        }
        let stamps: Vec<i64> = self
            .facts
            .sessions
            .iter()
            .flat_map(|s| s.records.iter().map(|r| r.ts_ms))
            .collect();
        if rng.chance(25) {
            if let Some(&t) = stamps.get(rng.below(stamps.len())) {
                let key = if rng.chance(50) { "since" } else { "until" };
                let v: Value = if rng.chance(50) {
                    t.into()
                } else {
                    format!("{}Z", super::filters::rfc3339(t)).into()
                };
                m.insert(key.into(), v);
            }
        }
        if rng.chance(15) {
            let cwds: Vec<&str> = self
                .facts
                .sessions
                .iter()
                .filter_map(|s| s.cwd.as_deref())
                .collect();
            if let Some(c) = cwds.get(rng.below(cwds.len())) {
                let v = if rng.chance(50) {
                    c.to_string()
                } else {
                    "/home/mara/code".to_string()
                };
                m.insert("cwd".into(), v.into());
            }
        }
        if rng.chance(25) {
            m.insert("include_superseded".into(), "false".into());
        }
        if rng.chance(20) {
            m.insert("subagents".into(), false.into());
        }
        add_sort_and_limit(rng, m);
    }

    /// Tool tokens: found only with scope=all (and a role list holding tool).
    fn tools(&mut self) {
        let all: Vec<(String, String)> = self
            .facts
            .sessions
            .iter()
            .flat_map(|s| {
                s.tool_tokens
                    .iter()
                    .map(move |t| (s.key.clone(), t.clone()))
            })
            .collect();
        for _ in 0..250 {
            let Some((key, token)) = self.rng.pick(&all).cloned() else {
                return;
            };
            let mut m = req(&token);
            let expect = match self.rng.below(5) {
                0 => Expect::Nothing,
                1 => {
                    m.insert("scope".into(), "conversation".into());
                    Expect::Nothing
                }
                2 => {
                    m.insert("scope".into(), "all".into());
                    m.insert("role".into(), "tool".into());
                    Expect::OnlySession(key)
                }
                3 => {
                    m.insert("scope".into(), "all".into());
                    m.insert("role".into(), "user,assistant".into());
                    Expect::Nothing
                }
                _ => {
                    m.insert("scope".into(), "all".into());
                    Expect::OnlySession(key)
                }
            };
            self.push("tool", m, expect);
        }
    }

    /// For every source with sessions in the corpus: [`PER_SOURCE`] of its
    /// tokens under a `source=` list naming it (in any spelling, maybe with
    /// another source) — exactly that record — or naming only other sources —
    /// nothing; its tool tokens likewise with `scope=all`; and its sessions
    /// paged through a common word.
    fn by_source(&mut self, tokened: &[(usize, usize)]) {
        for src in Source::ALL {
            let mine: Vec<(usize, usize)> = tokened
                .iter()
                .copied()
                .filter(|&(s, _)| self.facts.sessions[s].source == src)
                .collect();
            let tools: Vec<(String, String)> = self
                .facts
                .sessions
                .iter()
                .filter(|s| s.source == src)
                .flat_map(|s| s.tool_tokens.iter().map(|t| (s.key.clone(), t.clone())))
                .collect();
            if mine.is_empty() && tools.is_empty() {
                continue;
            }
            for _ in 0..PER_SOURCE {
                if let Some(&(s, r)) = self.rng.pick(&mine) {
                    let (sf, _, token) = self.at(s, r);
                    let key = sf.key.clone();
                    let mut m = req(token);
                    m.insert("source".into(), self.naming(src, true).into());
                    self.push("source", m, Expect::OnlyRecord(key));
                    let mut m = req(token);
                    m.insert("source".into(), self.naming(src, false).into());
                    self.push("source", m, Expect::Nothing);
                }
                if let Some((key, token)) = self.rng.pick(&tools).cloned() {
                    let mut m = req(&token);
                    m.insert("scope".into(), "all".into());
                    let own = self.rng.chance(70);
                    m.insert("source".into(), self.naming(src, own).into());
                    let expect = if own {
                        Expect::OnlySession(key)
                    } else {
                        Expect::Nothing
                    };
                    self.push("source_tool", m, expect);
                }
            }
            let q = *self.rng.pick(COMMON).unwrap_or(&"the");
            let mut m = req(q);
            m.insert("source".into(), self.naming(src, true).into());
            m.insert("scope".into(), "all".into());
            m.insert("limit".into(), self.rng.range(1, 3).to_string().into());
            self.push("source_paging", m, Expect::Any);
        }
    }

    /// A `source=` list: with `own`, `src` in one of its spellings (and
    /// half the time another source before it); without, one or two other
    /// sources.
    fn naming(&mut self, src: Source, own: bool) -> String {
        let others: Vec<Source> = Source::ALL.iter().copied().filter(|s| *s != src).collect();
        let mut list = Vec::new();
        if !own || self.rng.chance(50) {
            for _ in 0..self.rng.range(1, if own { 1 } else { 2 }) {
                let o = others[self.rng.below(others.len())];
                let sp = source_spellings(o);
                list.push(sp[self.rng.below(sp.len())]);
            }
        }
        if own {
            let sp = source_spellings(src);
            list.push(sp[self.rng.below(sp.len())]);
        }
        list.join(",")
    }

    /// Distractors are never indexed.
    fn distractors(&mut self) {
        for _ in 0..150 {
            let Some(d) = self.rng.pick(&self.facts.distractors).cloned() else {
                return;
            };
            let mut m = req(&d);
            if self.rng.chance(50) {
                m.insert("scope".into(), "all".into());
            }
            self.push("distractor", m, Expect::Nothing);
        }
    }

    /// Common words under random filters with small limits: many pages.
    fn common(&mut self) {
        let q = *self.rng.pick(COMMON).unwrap_or(&"the");
        let mut m = req(q);
        self.random_filters(&mut m);
        let limit = self.rng.range(1, 7);
        m.insert("limit".into(), limit.to_string().into());
        self.push("paging", m, Expect::Any);
    }

    /// Every error code, and requests right at the limits.
    fn errors(&mut self) {
        let raw = |q: Value| {
            let mut m = Map::new();
            m.insert("q".into(), q);
            m
        };
        let with = |k: &str, v: &str| {
            let mut m = req("error");
            m.insert(k.into(), v.into());
            m
        };
        let many: Vec<String> = (0..17).map(|i| format!("w{i}")).collect();
        let cases: Vec<(Map<String, Value>, Expect)> = vec![
            (Map::new(), Expect::Error("q_required")),
            (req(""), Expect::Error("q_required")),
            (req(" \t\u{3000} "), Expect::Error("q_required")),
            (req("\"\""), Expect::Error("q_required")),
            (req("\u{301}\u{301}"), Expect::Error("q_required")),
            (raw(Value::Null), Expect::Error("q_required")),
            (req(&many.join(" ")), Expect::Error("too_many_terms")),
            (req(&many[..16].join(" ")), Expect::Any),
            (req(&format!("{} w0 W0", many[..16].join(" "))), Expect::Any),
            (req(&"x".repeat(1025)), Expect::Error("query_too_long")),
            (req(&"é".repeat(513)), Expect::Error("query_too_long")),
            (req(&"x".repeat(1024)), Expect::Nothing),
            (with("source", "aider"), Expect::Error("invalid_param")),
            (with("source", "gemini"), Expect::Any),
            (
                with("source", "codex,aider"),
                Expect::Error("invalid_param"),
            ),
            (with("source", " , "), Expect::Error("invalid_param")),
            // Source names are case-insensitive and take spaces for dashes.
            (with("source", "CODEX"), Expect::Any),
            (with("source", "Claude Code,DeepSeek Harness"), Expect::Any),
            (
                with("source", "claude  code"),
                Expect::Error("invalid_param"),
            ),
            (with("source", "deepseek"), Expect::Error("invalid_param")),
            (with("role", "robot"), Expect::Error("invalid_param")),
            (with("role", "tool"), Expect::Error("invalid_param")),
            (with("scope", "everything"), Expect::Error("invalid_param")),
            (with("sort", "oldest"), Expect::Error("invalid_param")),
            (with("since", "yesterday"), Expect::Error("invalid_param")),
            (with("until", "2026-13-01"), Expect::Error("invalid_param")),
            (
                with("until", "2026-02-30T00:00:00Z"),
                Expect::Error("invalid_param"),
            ),
            (
                with("include_superseded", "maybe"),
                Expect::Error("invalid_param"),
            ),
            (with("subagents", "nah"), Expect::Error("invalid_param")),
            (
                with("cursor", "not a cursor!"),
                Expect::Error("invalid_cursor"),
            ),
            (
                with("cursor", "eyJ2IjoxfQ"),
                Expect::Error("invalid_cursor"),
            ),
            (with("limit", "many"), Expect::Any),
            (raw(Value::from(42)), Expect::Any),
            (raw(Value::Bool(true)), Expect::Any),
        ];
        for (m, e) in cases {
            self.push("error", m, e);
        }
        for bad in [
            "[]",
            "not json",
            "{\"q\":[\"a\"]}",
            "{\"q\":{\"x\":1}}",
            "\"q\"",
        ] {
            self.out.push(Probe {
                kind: "error",
                request: bad.to_string(),
                expect: Expect::Error("invalid_param"),
            });
        }
    }
}

/// `s` with ASCII letters and digits in their fullwidth forms.
fn fullwidth(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Whether `text` holds `needle` in any letter case: a record that does is
/// not used for a "must not match" expectation (the misses are about
/// boundaries inside one folded char, which plain lowercasing keeps).
fn loosely_contains(text: &str, needle: &str) -> bool {
    text.to_lowercase().contains(&needle.to_lowercase())
}

/// The start of the word `words` words before the one at `at` (stopping at
/// a line break or quote).
fn word_start(text: &str, at: usize, words: usize) -> usize {
    let mut i = floor(text, at);
    let mut seen = 0;
    while i > 0 {
        let prev = floor(text, i - 1);
        let c = text[prev..].chars().next().unwrap_or(' ');
        if c == '\n' || c == '"' {
            break;
        }
        if c == ' ' {
            if seen == words {
                break;
            }
            seen += 1;
        }
        i = prev;
    }
    while text[i..].starts_with(' ') {
        i += 1;
    }
    i
}

/// The end of the word `words` words after the one ending at or after `at`.
fn word_end(text: &str, at: usize, words: usize) -> usize {
    let mut i = floor(text, at.min(text.len()));
    let mut seen = 0;
    while let Some(c) = text[i..].chars().next() {
        if c == '\n' || c == '"' {
            break;
        }
        if c == ' ' {
            if seen == words {
                break;
            }
            seen += 1;
        }
        i += c.len_utf8();
    }
    while text[..i].ends_with(' ') {
        i -= 1;
    }
    i
}

fn floor(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_windows() {
        let t = "one two three four five";
        let at = t.find("three").unwrap_or(0);
        assert_eq!(
            &t[word_start(t, at, 1)..word_end(t, at + 5, 1)],
            "two three four"
        );
        assert_eq!(&t[word_start(t, at, 0)..word_end(t, at, 0)], "three");
    }

    #[test]
    fn fullwidth_maps_ascii() {
        assert_eq!(fullwidth("ab1-"), "ａｂ１-");
    }
}
