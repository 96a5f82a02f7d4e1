//! The index segment against a naive full scan, on random Unicode: its
//! candidates are a superset of the shards where every term occurs in one
//! record's folded text, and its relevance bound is at least the best score
//! the exact matcher gives. Searches with and without the segment answer
//! byte for byte the same.

use proptest::prelude::*;
use recall_core::fold::fold_str;
use recall_core::lane::Lane;
use recall_core::matcher::Term;
use recall_core::model::*;
use recall_core::prepared::PreparedShard;
use recall_core::query::Lanes;
use recall_core::segment::{build, Builder, Segment};
use recall_core::{MemIndex, Request};
use std::collections::BTreeMap;

/// Characters that stress folding: ASCII, ß/ﬁ (fold to several bytes),
/// combining marks, Greek final sigma, CJK, Hangul, kana, emoji, fullwidth.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'A', 'B', ' ', '-', 'ß', 'ẞ', 'ﬁ', 'é', 'e', '\u{301}', 'Σ', 'ς', 'σ', '数',
    '据', '库', '한', '국', 'か', 'が', '😀', 'Ａ', 'İ', 'ı', 'ǅ', 'ﬀ', '\u{3000}',
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..24)
        .prop_map(|c| c.into_iter().collect())
}

/// Per shard: records of (tool?, text).
fn shards() -> impl Strategy<Value = Vec<Vec<(bool, String)>>> {
    prop::collection::vec(prop::collection::vec((any::<bool>(), text()), 0..6), 1..8)
}

/// Shards of more records than a lane has mask classes (64), so records
/// share classes: short texts over a small alphabet, mostly conversation.
fn long_shards() -> impl Strategy<Value = Vec<Vec<(bool, String)>>> {
    let short = prop::collection::vec(prop::sample::select(&['a', 'b', 'c', ' ', 'ß'][..]), 0..8)
        .prop_map(|c| c.into_iter().collect::<String>());
    prop::collection::vec(
        prop::collection::vec((prop::bool::weighted(0.1), short), 60..150),
        1..4,
    )
}

fn prepared(records: &[(bool, String)], n: usize) -> PreparedShard {
    PreparedShard::new(shard_of(records, n))
}

fn shard_of(records: &[(bool, String)], n: usize) -> Shard {
    Shard {
        session: SessionMeta {
            source: Source::Pi,
            session_id: format!("s{n}"),
            title: None,
            cwd: None,
            branch: None,
            created_ms: Some(1),
            updated_ms: Some(1),
            messages: records.len() as u64,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        },
        records: records
            .iter()
            .enumerate()
            .map(|(i, (tool, t))| MessageRecord {
                role: if *tool { Role::Tool } else { Role::User },
                ts_ms: 1 + i as i64,
                text: t.clone(),
                truncated: false,
                locator: Locator::ExternalRecordId {
                    record_id: format!("r{i}"),
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

/// The best exact score of a lane's records holding every term (`None` when
/// no record holds them all), and whether a record holds every term as a
/// raw substring of its folded text (the weakest notion of a match).
fn naive(lane: &Lane, terms: &[String]) -> (Option<u64>, bool) {
    let compiled: Vec<Term> = terms.iter().map(|t| Term::new(t)).collect();
    let mut best = None;
    let mut raw = false;
    for i in 0..lane.len() {
        let text = lane.text(i);
        let map = lane.maps[i].as_ref();
        raw |= terms
            .iter()
            .all(|t| memchr::memmem::find(text, t.as_bytes()).is_some());
        if compiled.iter().all(|t| t.occurs(text, map)) {
            let s: u64 = compiled.iter().map(|t| t.count(text, map)).sum();
            best = Some(best.map_or(s, |b: u64| b.max(s)));
        }
    }
    (best, raw)
}

/// The shards prepared, and one segment over them (ordinals in order).
fn segment_over(shards: &[Vec<(bool, String)>]) -> (Vec<PreparedShard>, Segment) {
    let (prepared, seg) = segment_flipped(shards, None);
    (prepared, seg.unwrap())
}

/// [`segment_over`], with one byte before the segment's footer (whose
/// offset its trailer gives) flipped by `flip` (at a position modulo that
/// offset): `None` when the flipped segment is refused.
fn segment_flipped(
    shards: &[Vec<(bool, String)>],
    flip: Option<(usize, u8)>,
) -> (Vec<PreparedShard>, Option<Segment>) {
    let prepared: Vec<PreparedShard> = shards
        .iter()
        .enumerate()
        .map(|(n, r)| prepared(r, n))
        .collect();
    let names: Vec<String> = (0..prepared.len())
        .map(|i| format!("{i:016x}.json"))
        .collect();
    let input: Vec<(&str, &PreparedShard)> = names
        .iter()
        .map(String::as_str)
        .zip(prepared.iter())
        .collect();
    // Blocks of 64 bytes when flipping: small segments span many of them.
    let mut b = Builder::default();
    if flip.is_some() {
        b = b.block_shift(6);
    }
    for (name, shard) in &input {
        b.add(name, shard);
    }
    let mut bytes = b.finish();
    if let Some((at, x)) = flip {
        let n = bytes.len();
        let footer = u64::from_le_bytes(bytes[n - 16..n - 8].try_into().unwrap()) as usize;
        bytes[at % footer] ^= x;
    }
    let seg = Segment::open(bytes).ok();
    (prepared, seg)
}

fn terms_from(
    shards: &[Vec<(bool, String)>],
    picks: &[(usize, usize, usize, usize)],
) -> Vec<String> {
    let mut out = Vec::new();
    for &(s, r, a, len) in picks {
        let recs = &shards[s % shards.len()];
        let t = match recs.get(r % recs.len().max(1)) {
            Some((_, t)) => fold_str(t),
            None => continue,
        };
        let chars: Vec<char> = t.chars().collect();
        if chars.is_empty() {
            continue;
        }
        let a = a % chars.len();
        let term: String = chars[a..(a + 1 + len % 6).min(chars.len())]
            .iter()
            .collect();
        let term = fold_str(&term);
        if !term.is_empty() && !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn candidates_cover_the_naive_scan(
        shards in shards(),
        picks in prop::collection::vec((0usize..8, 0usize..6, 0usize..24, 0usize..6), 1..4),
        random in prop::option::of(text()),
        flip in prop::option::of((any::<usize>(), 1u8..=255)),
    ) {
        let mut terms = terms_from(&shards, &picks);
        if let Some(r) = random.map(|r| fold_str(&r)).filter(|r| !r.is_empty()) {
            terms.push(r);
        }
        prop_assume!(!terms.is_empty());
        // A flipped byte (a bad block) never hides a shard either: its
        // lookups name every shard; a flipped header or name is refused.
        let (prepared, seg) = segment_flipped(&shards, flip);
        let Some(seg) = seg else {
            prop_assert!(flip.is_some(), "an intact segment opens");
            return Ok(());
        };
        let needles: Vec<&[u8]> = terms.iter().map(|t| t.as_bytes()).collect();
        for lanes in [
            Lanes { conversation: true, tool: false },
            Lanes { conversation: false, tool: true },
            Lanes { conversation: true, tool: true },
        ] {
            let probe = seg.probe(&needles, lanes);
            for (ord, s) in prepared.iter().enumerate() {
                let ord = ord as u32;
                let mut best = None;
                let mut raw = false;
                for (wanted, lane) in [(lanes.conversation, &s.conversation), (lanes.tool, &s.tool)] {
                    if wanted {
                        let (b, r) = naive(lane, &terms);
                        raw |= r;
                        best = best.max(b);
                    }
                }
                if raw {
                    prop_assert!(probe.contains(ord), "shard {ord} hidden for {terms:?} {lanes:?}");
                }
                if let (Some(score), Some(bound)) = (best, probe.score_bound(ord)) {
                    prop_assert!(bound >= score, "bound {bound} < score {score} for {terms:?}");
                }
            }
        }
    }

    /// Terms ANDed within one record: the record-class masks of the
    /// conversation lane never hide a shard where one record holds every
    /// term, also when many records share a class.
    #[test]
    fn masks_never_hide_a_record_holding_every_term(
        shards in long_shards(),
        picks in prop::collection::vec((0usize..4, 0usize..150, 0usize..8, 0usize..4), 1..4),
    ) {
        let terms = terms_from(&shards, &picks);
        prop_assume!(!terms.is_empty());
        let (prepared, seg) = segment_over(&shards);
        let needles: Vec<&[u8]> = terms.iter().map(|t| t.as_bytes()).collect();
        let lanes = Lanes { conversation: true, tool: false };
        let probe = seg.probe(&needles, lanes);
        let listed = probe.candidates().map(|c| c.iter().collect::<Vec<_>>());
        for (ord, s) in prepared.iter().enumerate() {
            let ord = ord as u32;
            if naive(&s.conversation, &terms).1 {
                prop_assert!(probe.contains(ord), "shard {ord} hidden for {terms:?}");
                prop_assert!(listed.as_ref().is_none_or(|l| l.contains(&ord)));
            }
        }
    }

    #[test]
    fn searches_with_and_without_the_segment_agree(
        shards in shards(),
        picks in prop::collection::vec((0usize..8, 0usize..6, 0usize..24, 0usize..6), 1..3),
        sort in prop::sample::select(vec!["newest", "relevance"]),
        scope in prop::sample::select(vec!["conversation", "all"]),
    ) {
        let terms = terms_from(&shards, &picks);
        prop_assume!(!terms.is_empty());
        let q: Vec<String> = terms.iter().map(|t| format!("\"{t}\"")).collect();
        let mut index = MemIndex::new();
        let mut sessions = BTreeMap::new();
        for (n, recs) in shards.iter().enumerate() {
            let shard = shard_of(recs, n);
            let body = serde_json::to_vec(&shard).unwrap();
            let name = recall_core::naming::generation_file_name(&body);
            index.add_generation(&name, &body).unwrap();
            sessions.insert(shard.session.key(), ManifestEntry {
                meta: shard.session.clone(),
                generation_file: name,
                records: shard.records.len() as u64,
                max_ts_ms: shard.records.iter().map(|r| r.ts_ms).max(),
                bytes: body.len() as u64,
                source_gone: false,
                files: vec![],
                watermark: 0,
                state: serde_json::Value::Null,
            });
        }
        index.set_manifest_value(Manifest {
            schema: 1,
            parser_version: 1,
            store_id: "s".into(),
            revision: 1,
            updated_at_ms: 0,
            sessions,
            tombstones: BTreeMap::new(),
        });
        let mut req = Request::new(&q.join(" "));
        req.sort = Some(sort.to_string());
        req.scope = Some(scope.to_string());
        req.limit = Some("2".into());
        prop_assume!(req.parse().is_ok());
        let json = serde_json::to_string(&req).unwrap();
        let with = index.search_json(&json);
        index.set_use_index(false);
        let without = index.search_json(&json);
        prop_assert_eq!(with, without);
    }

    /// A merge reads postings, not shards: appending builders, or adding
    /// built segments with some generations dropped (and some named twice),
    /// gives the bytes a build over the kept shards in the same order gives.
    #[test]
    fn merges_equal_a_build_over_the_kept_shards(
        shards in shards(),
        split in 0usize..8,
        dropped in prop::collection::vec(any::<bool>(), 8),
    ) {
        let prepared: Vec<PreparedShard> =
            shards.iter().enumerate().map(|(n, r)| prepared(r, n)).collect();
        let names: Vec<String> = (0..prepared.len()).map(|i| format!("{i:016x}.json")).collect();
        let split = split.min(prepared.len());
        let part = |range: std::ops::Range<usize>| {
            let mut b = Builder::default();
            for i in range {
                b.add(&names[i], &prepared[i]);
            }
            b
        };
        let all: Vec<(&str, &PreparedShard)> =
            names.iter().map(String::as_str).zip(prepared.iter()).collect();
        // Builders appended in memory (the second one repeats a name).
        let mut a = part(0..split);
        let mut b = part(split..prepared.len());
        if split > 0 {
            b.add(&names[0], &prepared[0]);
        }
        a.append(b);
        prop_assert_eq!(a.finish(), build(&all));
        // Segments merged from their bytes, dropping some generations.
        let first = Segment::open(part(0..split).finish()).unwrap();
        let second = Segment::open(part(split..prepared.len()).finish()).unwrap();
        let keep = |n: &str| {
            let i = names.iter().position(|m| m == n).unwrap();
            !dropped[i]
        };
        let mut m = Builder::default();
        m.add_segment(&first, keep).unwrap();
        m.add_segment(&second, keep).unwrap();
        m.add_segment(&first, |_| true).unwrap();
        let kept: Vec<(&str, &PreparedShard)> =
            all.iter().copied().filter(|(n, _)| keep(n)).collect();
        let mut expected = Builder::default();
        for (n, s) in &kept {
            expected.add(n, s);
        }
        // The third add re-adds nothing but the dropped ones (after the rest).
        for (i, (n, s)) in all.iter().enumerate().take(split) {
            if dropped[i] {
                expected.add(n, s);
            }
        }
        prop_assert_eq!(m.finish(), expected.finish());
    }
}
