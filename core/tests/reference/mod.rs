//! The naive reference of DESIGN.md §4 (and §13's expressions) shared by
//! the search property tests: random small corpora of a folding-heavy
//! vocabulary, built into a `MemIndex`, and every session matched in full.

#![allow(dead_code)]

use proptest::prelude::*;
use recall_core::fold::fold;
use recall_core::model::*;
use recall_core::query::{parse_terms, Request};
use recall_core::response::{Hit, SessionHits, SourcePresence};
use recall_core::MemIndex;
use std::collections::BTreeMap;

pub const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "Straße",
    "strasse",
    "café",
    "cafe",
    "かな",
    "が",
    "数据库",
    "한국",
    "하다",
    "don’t",
    "don't",
    "a–b",
    "x",
    "ΣΊΣΥΦΟΣ",
    "e\u{301}",
    "ﬁle",
    "the",
    "needle",
    "😀",
];

/// A record: (role, ts step, word indices, superseded, subagent).
pub type RecSpec = (u8, i64, Vec<u8>, bool, bool);

/// Sessions: (source index, cwd index, records).
#[derive(Debug, Clone)]
pub struct Spec {
    pub sessions: Vec<(u8, u8, Vec<RecSpec>)>,
}

pub fn spec() -> impl Strategy<Value = Spec> {
    let record = (
        0u8..3,
        0i64..12,
        prop::collection::vec(0u8..WORDS.len() as u8, 1..12),
        any::<bool>(),
        any::<bool>(),
    );
    let session = (0u8..5, 0u8..3, prop::collection::vec(record, 1..9));
    prop::collection::vec(session, 1..9).prop_map(|sessions| Spec { sessions })
}

pub fn build(spec: &Spec) -> (MemIndex, Vec<Shard>) {
    let mut sessions = BTreeMap::new();
    let mut index = MemIndex::new();
    let mut shards = Vec::new();
    for (n, (src, cwd, recs)) in spec.sessions.iter().enumerate() {
        let source = Source::ALL[*src as usize];
        let mut records = Vec::new();
        let mut superseded_ids = Vec::new();
        for (i, (role, ts, words, sup, sub)) in recs.iter().enumerate() {
            let text: Vec<&str> = words.iter().map(|w| WORDS[*w as usize]).collect();
            let id = format!("r{i}");
            if *sup {
                superseded_ids.push(id.clone());
            }
            records.push(MessageRecord {
                role: [Role::User, Role::Assistant, Role::Tool][*role as usize],
                ts_ms: 1_000 + ts * 10,
                text: text.join(if i % 2 == 0 { " " } else { "" }),
                truncated: false,
                locator: Locator::NativeEvent {
                    line_no: i as u64 + 1,
                    content_hash16: "0".repeat(16),
                },
                seq: Some(i as u64),
                turn: None,
                item_id: Some(id),
                subagent: *sub,
                generation: 0,
            });
        }
        let marks = vec![Mark::RecordIds {
            at: records.len() as u64,
            ids: superseded_ids,
            reason: "test".into(),
        }];
        let meta = SessionMeta {
            source,
            session_id: format!("s{n}"),
            title: Some(format!("session {n}")),
            cwd: Some(["/home/a", "/home/a/b", "/home/ab"][*cwd as usize].to_string()),
            branch: None,
            created_ms: records.iter().map(|r| r.ts_ms).min(),
            updated_ms: records.iter().map(|r| r.ts_ms).max(),
            messages: records.len() as u64,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        };
        let shard = Shard {
            session: meta.clone(),
            records,
            marks,
        };
        let body = serde_json::to_vec(&shard).unwrap();
        let name = recall_core::naming::generation_file_name(&body);
        index.add_generation(&name, &body).unwrap();
        sessions.insert(
            meta.key(),
            ManifestEntry {
                meta,
                generation_file: name,
                records: shard.records.len() as u64,
                max_ts_ms: shard.records.iter().map(|r| r.ts_ms).max(),
                bytes: body.len() as u64,
                source_gone: n % 4 == 3,
                files: vec![],
                watermark: 0,
                state: serde_json::Value::Null,
            },
        );
        shards.push(shard);
    }
    let manifest = Manifest {
        schema: 1,
        parser_version: 1,
        store_id: "store".into(),
        revision: 3,
        updated_at_ms: 0,
        sessions,
        tombstones: BTreeMap::new(),
    };
    index.set_manifest_value(manifest);
    (index, shards)
}

/// Naive occurrences (original byte ranges) of a folded term, per §3; of a
/// whole word (`word`), those that also start and end on a UAX #29 word
/// boundary of the folded text (§13).
pub fn occurrences(text: &str, term: &str, word: bool) -> Vec<(usize, usize)> {
    use unicode_segmentation::UnicodeSegmentation;
    let f = fold(text);
    let map: Vec<usize> = (0..f.text.len()).map(|i| f.original_offset(i)).collect();
    let (h, t) = (f.text.as_bytes(), term.as_bytes());
    let words: Vec<usize> = f.text.split_word_bound_indices().map(|(i, _)| i).collect();
    let at_word = |i: usize| !word || i == h.len() || words.contains(&i);
    let boundary = |i: usize| i == 0 || i == h.len() || map[i - 1] != map[i];
    let mut out = Vec::new();
    let mut i = 0;
    while i + t.len() <= h.len() {
        let whole = boundary(i) && boundary(i + t.len()) && at_word(i) && at_word(i + t.len());
        if &h[i..i + t.len()] == t && whole {
            let e = if i + t.len() < h.len() {
                map[i + t.len()]
            } else {
                text.len()
            };
            out.push((map[i], e));
            i += t.len();
        } else {
            i += 1;
        }
    }
    out
}

/// What a naive reference matches a record's text with.
pub trait RefMatch {
    /// Whether the record's text matches.
    fn matches(&self, text: &str) -> bool;
    /// The positive terms (folded, whole-word), each once: what relevance
    /// counts and snippets highlight.
    fn positive(&self) -> Vec<(String, bool)>;
}

/// A plain query: its terms ANDed (as `parse_terms` splits them).
pub struct AllTerms(pub Vec<String>);

impl RefMatch for AllTerms {
    fn matches(&self, text: &str) -> bool {
        self.0
            .iter()
            .all(|t| !occurrences(text, t, false).is_empty())
    }
    fn positive(&self) -> Vec<(String, bool)> {
        self.0.iter().map(|t| (t.clone(), false)).collect()
    }
}

/// The naive reference of a plain request.
pub fn reference(index: &MemIndex, shards: &[Shard], req: &Request) -> Vec<SessionHits> {
    let terms = AllTerms(parse_terms(req.q.as_deref().unwrap()));
    reference_with(index, shards, req, &terms)
}

/// The naive reference: every session in full, then sorted and paged.
pub fn reference_with(
    index: &MemIndex,
    shards: &[Shard],
    req: &Request,
    matcher: &dyn RefMatch,
) -> Vec<SessionHits> {
    let q = req.parse().unwrap();
    let terms = matcher.positive();
    let manifest = index.manifest();
    let mut out: Vec<(Vec<i64>, String, SessionHits)> = Vec::new();
    for shard in shards {
        let key = shard.session.key();
        let entry = &manifest.sessions[&key];
        if !q.source_matches(shard.session.source) || !q.cwd_matches(shard.session.cwd.as_deref()) {
            continue;
        }
        let active = recall_core::derive_active(&shard.records, &shard.marks);
        let mut hits: Vec<(usize, u64)> = Vec::new();
        for (i, r) in shard.records.iter().enumerate() {
            let ok = q.roles.contains(&r.role)
                && (q.include_superseded || active[i])
                && (q.subagents || !r.subagent)
                && q.since.is_none_or(|s| r.ts_ms >= s)
                && q.until.is_none_or(|u| r.ts_ms <= u);
            if !ok {
                continue;
            }
            if matcher.matches(&r.text) {
                let score: usize = terms
                    .iter()
                    .map(|(t, w)| occurrences(&r.text, t, *w).len())
                    .sum();
                hits.push((i, score as u64));
            }
        }
        if hits.is_empty() {
            continue;
        }
        let mut m = hits;
        let recs = &shard.records;
        let relevance = req.sort.as_deref() == Some("relevance");
        m.sort_by(|a, b| {
            let (ra, rb) = (&recs[a.0], &recs[b.0]);
            let t = rb.ts_ms.cmp(&ra.ts_ms).then(b.0.cmp(&a.0));
            if relevance {
                b.1.cmp(&a.1)
                    .then(ra.text.len().cmp(&rb.text.len()))
                    .then(t)
            } else {
                t
            }
        });
        let best = &recs[m[0].0];
        let rank = if relevance {
            vec![-(m[0].1 as i64), best.text.len() as i64, -best.ts_ms]
        } else {
            vec![-best.ts_ms]
        };
        let hits: Vec<Hit> = m
            .iter()
            .take(3)
            .map(|&(i, _)| {
                let r = &recs[i];
                let all: Vec<(usize, usize)> = terms
                    .iter()
                    .flat_map(|(t, w)| occurrences(&r.text, t, *w))
                    .collect();
                let first = all.iter().map(|o| o.0).min().unwrap_or(0);
                let mut s = first.saturating_sub(120);
                while !r.text.is_char_boundary(s) {
                    s -= 1;
                }
                let mut e = (s + 280).min(r.text.len());
                while !r.text.is_char_boundary(e) {
                    e += 1;
                }
                let mut rs: Vec<(usize, usize)> = all
                    .into_iter()
                    .filter(|o| o.0 < e && o.1 > s)
                    .map(|o| (o.0.max(s), o.1.min(e)))
                    .collect();
                rs.sort();
                let mut merged: Vec<[u64; 2]> = Vec::new();
                for (a, b) in rs {
                    match merged.last_mut() {
                        Some(l) if a as u64 <= l[1] => l[1] = l[1].max(b as u64),
                        _ => merged.push([a as u64, b as u64]),
                    }
                }
                Hit {
                    role: r.role,
                    ts_ms: r.ts_ms,
                    seq: r.seq,
                    superseded: !active[i],
                    truncated: r.truncated,
                    subagent: r.subagent,
                    snippet: r.text[s..e].to_string(),
                    snippet_offset_bytes: s as u64,
                    ranges: merged,
                    locator: r.locator.clone(),
                    host: None,
                }
            })
            .collect();
        let meta = &shard.session;
        let presence = match (entry.source_gone, meta.paths.is_empty()) {
            (true, _) => SourcePresence::Missing,
            (false, true) => SourcePresence::Unverifiable,
            (false, false) => SourcePresence::Present,
        };
        out.push((
            rank,
            key.clone(),
            SessionHits {
                session_key: key,
                source: meta.source,
                session_id: meta.session_id.clone(),
                title: meta.title.clone(),
                cwd: meta.cwd.clone(),
                branch: meta.branch.clone(),
                best_ts_ms: hits[0].ts_ms,
                updated_ms: meta.updated_ms,
                messages: meta.messages,
                relevance: relevance.then(|| recall_core::response::Relevance { score: m[0].1 }),
                total_hits: m.len() as u64,
                source_gone: entry.source_gone,
                source_presence: presence,
                resume: if presence == SourcePresence::Present {
                    meta.resume.clone()
                } else {
                    None
                },
                hits,
                host: None,
            },
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|x| x.2).collect()
}
