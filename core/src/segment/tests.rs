//! Unit tests of segments: candidates, bounds and refusals; follow masks;
//! segments of earlier versions.

use super::layout::{put_entry, put_u32, HEADER, MAGIC_V2, MAGIC_V3};
use super::*;
use crate::model::*;
use crate::PreparedShard;

fn shard(texts: &[&str]) -> PreparedShard {
    PreparedShard::new(Shard {
        session: SessionMeta {
            source: Source::Pi,
            session_id: "x".into(),
            title: None,
            cwd: None,
            branch: None,
            created_ms: None,
            updated_ms: None,
            messages: 0,
            parent: None,
            resume: None,
            paths: vec![],
            models: Vec::new(),
        },
        records: texts
            .iter()
            .map(|t| MessageRecord {
                role: if t.starts_with('$') {
                    Role::Tool
                } else {
                    Role::User
                },
                ts_ms: 1,
                text: t.to_string(),
                truncated: false,
                locator: Locator::ExternalRecordId {
                    record_id: "r".into(),
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
}

const BOTH: Lanes = Lanes {
    conversation: true,
    tool: true,
};
const CONV: Lanes = Lanes {
    conversation: true,
    tool: false,
};

#[test]
fn candidates_bounds_and_refusals() {
    let a = shard(&["Die Straße pool pool pool", "$ cargo build"]);
    let b = shard(&["connection pool", "数据库 migration"]);
    let bytes = build(&[("a.json", &a), ("b.json", &b)]);
    let seg = Segment::open(bytes.clone()).unwrap();
    assert_eq!(seg.ordinal("b.json"), Some(1));
    assert_eq!(seg.ordinal("c.json"), None);
    let probe = |terms: &[&str], lanes| {
        let t: Vec<&[u8]> = terms.iter().map(|t| t.as_bytes()).collect();
        let p = seg.probe(&t, lanes);
        (
            (0..2).filter(|&o| p.contains(o)).collect::<Vec<_>>(),
            p.score_bound(0),
        )
    };
    assert_eq!(probe(&["pool"], CONV), (vec![0, 1], Some(3)));
    assert_eq!(probe(&["strasse"], CONV).0, vec![0]);
    assert_eq!(probe(&["数据"], CONV).0, vec![1]);
    assert_eq!(probe(&["cargo"], CONV).0, Vec::<u32>::new());
    assert_eq!(probe(&["cargo"], BOTH).0, vec![0]);
    assert_eq!(probe(&["zebra"], BOTH).0, Vec::<u32>::new());
    // Too short for a gram: everything is a candidate, unbounded.
    assert_eq!(probe(&["po"], CONV), (vec![0, 1], None));
    // "pool" and "mig" meet in b only across records: no candidate.
    assert_eq!(probe(&["pool", "mig"], CONV).0, Vec::<u32>::new());
    assert_eq!(probe(&["数据", "mig"], CONV).0, vec![1]);
    // The candidate set agrees with `contains`, lane by lane.
    let t: [&[u8]; 1] = [b"cargo"];
    let ords = |lanes| {
        seg.probe(&t, lanes)
            .candidates()
            .map(|c| c.iter().collect::<Vec<_>>())
    };
    assert_eq!(ords(CONV), Some(vec![]));
    assert_eq!(ords(BOTH), Some(vec![0]));
    assert_eq!(seg.probe(&[b"po"], CONV).candidates(), None);
    // Record classes: terms (and one term's grams) met only across
    // records do not make a conversation candidate; records 64 apart
    // share a class, so they do; the tool lane has no masks.
    let filler = |n: usize| vec!["filler"; n];
    let mut apart = filler(63);
    apart.splice(0..0, ["alpha one", "omega two"]);
    let mut wrapped = filler(63);
    wrapped.insert(0, "alpha");
    wrapped.push("omega");
    let scattered = shard(&["abcd", "cdef", "$ alpha", "$ omega"]);
    let (apart, wrapped) = (shard(&apart), shard(&wrapped));
    let seg = Segment::open(build(&[
        ("apart.json", &apart),
        ("wrapped.json", &wrapped),
        ("scattered.json", &scattered),
    ]))
    .unwrap();
    let ords = |terms: &[&str], lanes| {
        let t: Vec<&[u8]> = terms.iter().map(|t| t.as_bytes()).collect();
        let p = seg.probe(&t, lanes);
        let listed: Vec<u32> = p.candidates().unwrap().iter().collect();
        let admitted: Vec<u32> = (0..3).filter(|&o| p.contains(o)).collect();
        assert!(admitted.iter().all(|o| listed.contains(o)));
        admitted
    };
    assert_eq!(ords(&["alpha", "omega"], CONV), vec![1]);
    assert_eq!(ords(&["alpha", "omega"], BOTH), vec![1, 2]);
    assert_eq!(ords(&["abcdef"], CONV), Vec::<u32>::new());
    assert_eq!(ords(&["abcd"], CONV), vec![2]);
    // Torn, flipped or foreign bytes are refused.
    assert_eq!(
        Segment::open(bytes[..bytes.len() - 1].to_vec()).unwrap_err(),
        SegmentError::Checksum
    );
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert_eq!(Segment::open(flipped).unwrap_err(), SegmentError::Checksum);
    assert_eq!(
        Segment::open(b"{}".to_vec()).unwrap_err(),
        SegmentError::Magic
    );
}

/// The bytes version 2 (no follow masks) or 3 (follow masks) wrote for the
/// same postings: one checksum over the file, each lane's widths, gram
/// count, table and blob inline.
fn earlier_version(seg: &Segment, version: u8) -> Vec<u8> {
    let mut out = if version == 2 { MAGIC_V2 } else { MAGIC_V3 }.to_vec();
    out.extend_from_slice(&[0; HEADER - 8]);
    put_u32(&mut out, seg.names().len() as u32);
    for name in seg.names() {
        put_u32(&mut out, name.len() as u32);
        out.extend_from_slice(name.as_bytes());
    }
    for lane in 0..2 {
        let (mut table, mut blob) = (Vec::new(), Vec::new());
        let l = &seg.lanes[lane];
        for (g, entry) in seg.entries(lane) {
            let p = split_entry(entry, l).unwrap();
            let start = blob.len();
            p.bitmap.serialize_into(&mut blob).unwrap();
            blob.extend_from_slice(p.occ);
            blob.extend_from_slice(p.masks);
            if version == 3 {
                blob.extend_from_slice(p.follows);
            }
            put_entry(&mut table, g, start, blob.len());
        }
        put_u32(&mut out, l.mask_bytes as u32);
        if version == 3 {
            put_u32(&mut out, l.follow_bytes as u32);
        }
        put_u32(&mut out, (table.len() / 12) as u32);
        out.extend_from_slice(&table);
        put_u32(&mut out, blob.len() as u32);
        out.extend_from_slice(&blob);
    }
    let crc = crc32fast::hash(&out[HEADER..]);
    out[8..12].copy_from_slice(&crc.to_le_bytes());
    out
}

#[test]
fn follow_masks_refuse_grams_that_are_never_adjacent() {
    // Every trigram of "renderroute" in one record, its junctions
    // nowhere: "rende|rro|ute" never follow each other.
    let apart = shard(&["renderwriter handles errout and the route"]);
    let whole = shard(&["call renderroute() first"]);
    // One term's window needs two different followers of one gram.
    let twice = shard(&["abcab abcx"]);
    let seg = Segment::open(build(&[
        ("apart.json", &apart),
        ("whole.json", &whole),
        ("twice.json", &twice),
    ]))
    .unwrap();
    let admitted = |seg: &Segment, term: &str| {
        let t: [&[u8]; 1] = [term.as_bytes()];
        let p = seg.probe(&t, CONV);
        (0..3).filter(|&o| p.contains(o)).collect::<Vec<u32>>()
    };
    assert_eq!(admitted(&seg, "renderroute"), vec![1]);
    assert_eq!(admitted(&seg, "render"), vec![0, 1]);
    // The last windows of a term need no follower.
    assert_eq!(admitted(&seg, "route"), vec![0, 1]);
    assert_eq!(admitted(&seg, "abcabcx"), Vec::<u32>::new());
    assert_eq!(admitted(&seg, "abcab"), vec![2]);
    // The tool lane carries none: its candidates are as before.
    let tool = Segment::open(build(&[(
        "t.json",
        &shard(&["$ renderwriter errout route"]),
    )]))
    .unwrap();
    let t: [&[u8]; 1] = [b"renderroute"];
    assert!(tool.probe(&t, BOTH).contains(0));
    // A segment of the previous version opens, searches as it always
    // did (no follow masks: every follow bit), and merges into this
    // version without losing a candidate.
    let old = Segment::open(earlier_version(&seg, 2)).unwrap();
    assert_eq!(old.names(), seg.names());
    assert_eq!(admitted(&old, "renderroute"), vec![0, 1]);
    assert_eq!(admitted(&old, "abcab"), vec![2]);
    let mut b = Builder::default();
    b.add_segment(&old, |_| true).unwrap();
    let merged = Segment::open(b.finish()).unwrap();
    assert_eq!(admitted(&merged, "renderroute"), vec![0, 1]);
    // Rebuilt from its shards, it prunes again.
    let mut b = Builder::default();
    b.add_segment(&seg, |_| true).unwrap();
    assert_eq!(b.finish(), seg.bytes());
}

#[test]
fn version_3_segments_read_as_they_were_written() {
    let a = shard(&["call renderroute() first", "$ cargo build"]);
    let b = shard(&["renderwriter handles errout and the route"]);
    let seg = Segment::open(build(&[("a.json", &a), ("b.json", &b)])).unwrap();
    let old = Segment::open(earlier_version(&seg, 3)).unwrap();
    assert_eq!(old.names(), seg.names());
    for term in ["renderroute", "route", "cargo", "zebra", "po"] {
        for lanes in [CONV, BOTH] {
            let t: [&[u8]; 1] = [term.as_bytes()];
            let (p, q) = (seg.probe(&t, lanes), old.probe(&t, lanes));
            assert_eq!(p.candidates(), q.candidates(), "{term}");
            for o in 0..2 {
                assert_eq!(p.contains(o), q.contains(o), "{term}");
                assert_eq!(p.score_bound(o), q.score_bound(o), "{term}");
            }
        }
    }
    // Merged into this version: the same bytes as building anew.
    let mut b = Builder::default();
    b.add_segment(&old, |_| true).unwrap();
    assert_eq!(b.finish(), seg.bytes());
    // Torn or altered, a whole-file checksum refuses it at open.
    let mut flipped = earlier_version(&seg, 3);
    *flipped.last_mut().unwrap() ^= 1;
    assert_eq!(Segment::open(flipped).unwrap_err(), SegmentError::Checksum);
}

#[test]
fn a_bad_block_makes_its_lookups_name_every_shard() {
    // Enough shards for several blocks of postings.
    let shards: Vec<PreparedShard> = (0..3000)
        .map(|i| {
            let rare = format!("token{i:05}x");
            shard(&[&format!("common words here and {rare}")])
        })
        .collect();
    let named: Vec<(String, &PreparedShard)> = shards
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("{i:05}.json"), s))
        .collect();
    let refs: Vec<(&str, &PreparedShard)> = named.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let bytes = build(&refs);
    let good = Segment::open(bytes.clone()).unwrap();
    assert!(good.verify().is_ok());
    // Corrupt the postings of "words" (every shard holds it) in one block.
    let probe = |seg: &Segment, term: &str| {
        let t: [&[u8]; 1] = [term.as_bytes()];
        seg.probe(&t, CONV).candidates().map(|c| c.len())
    };
    assert_eq!(probe(&good, "words"), Some(3000));
    assert_eq!(probe(&good, "token01234x"), Some(1));
    let entry = good.entry(0, gram(b"wor")).unwrap().unwrap();
    let at = entry.as_ptr() as usize - good.bytes().as_ptr() as usize;
    let mut torn = bytes.clone();
    torn[at + entry.len() / 2] ^= 0x40;
    let seg = Segment::open(torn).unwrap();
    assert!(
        !seg.damaged(),
        "opening reads only the footer and the names"
    );
    // A lookup elsewhere still prunes; one through the bad block names
    // every shard (unbounded), and marks the segment damaged.
    assert_eq!(probe(&seg, "token01234x"), Some(1));
    assert!(!seg.damaged());
    assert_eq!(probe(&seg, "words"), None);
    let t: [&[u8]; 1] = [b"words"];
    assert!(seg.probe(&t, CONV).contains(7));
    assert_eq!(seg.probe(&t, CONV).score_bound(7), None);
    assert!(seg.damaged());
    // A merge refuses it whole.
    let mut b = Builder::default();
    assert_eq!(b.add_segment(&seg, |_| true), Err(SegmentError::Checksum));
    assert!(b.is_empty());
    // A torn footer or names block refuses the segment at open.
    let mut names = bytes.clone();
    names[HEADER + 6] ^= 1;
    assert_eq!(Segment::open(names).unwrap_err(), SegmentError::Checksum);
    let mut footer = bytes.clone();
    let n = footer.len();
    footer[n - 40] ^= 1;
    assert_eq!(Segment::open(footer).unwrap_err(), SegmentError::Checksum);
}
