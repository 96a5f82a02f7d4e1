//! Index segments: an immutable inverted trigram index over the folded text
//! of a set of generations (shards), one table per lane (conversation,
//! tool). A gram's postings are the roaring bitmap of the shard ordinals
//! whose lane holds it, followed by one byte per posting: the most windows
//! equal to that gram any one record of the shard has (255 = saturated), so
//! `relevance` can bound a shard's best score before loading it.
//!
//! A query intersects, per lane, the postings of each term's most selective
//! grams; a term shorter than a gram constrains nothing (its lane is
//! scanned). Every candidate is still verified by the exact matcher, and a
//! term that occurs in a record has every one of its 3-byte windows in that
//! record's folded text, so the index never hides a match.
//!
//! Bytes (little-endian): magic, CRC-32 of everything after the header,
//! the generation names (ordinal order), then per lane a sorted table of
//! `(gram, offset, len)` and the postings blob. A segment is refused unless
//! its CRC, table order and offsets hold.

use crate::plan::Lanes;
use crate::prepared::{Lane, PreparedShard};
use roaring::RoaringBitmap;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// First bytes of a segment.
const MAGIC: &[u8; 8] = b"RCSEG\x00\x00\x01";
/// Magic + CRC-32 + reserved.
const HEADER: usize = 16;
/// Grams of a term whose postings are intersected (the smallest ones): a
/// bitmap names at most one shard per posting, so intersecting more of them
/// costs little and prunes big shards holding every common trigram.
const GRAMS_PER_TERM: usize = 8;
/// A gram: three folded bytes.
const N: usize = 3;

/// Why segment bytes were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Not a segment, or another format version.
    #[error("not a segment of this version")]
    Magic,
    /// The checksum does not match the bytes (torn or altered).
    #[error("segment checksum mismatch")]
    Checksum,
    /// The body is malformed.
    #[error("segment body is malformed: {0}")]
    Malformed(&'static str),
}

#[inline]
fn gram(w: &[u8]) -> u32 {
    (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2])
}

/// Per gram, the most windows any one record of `lane` has equal to it.
fn lane_grams(lane: &Lane) -> Vec<(u32, u8)> {
    let mut best: HashMap<u32, u8> = HashMap::new();
    let mut windows: Vec<u32> = Vec::new();
    for i in 0..lane.len() {
        windows.clear();
        windows.extend(lane.text(i).windows(N).map(gram));
        windows.sort_unstable();
        for run in windows.chunk_by(|a, b| a == b) {
            let c = u8::try_from(run.len()).unwrap_or(u8::MAX);
            let e = best.entry(run[0]).or_insert(0);
            *e = (*e).max(c);
        }
    }
    let mut out: Vec<(u32, u8)> = best.into_iter().collect();
    out.sort_unstable();
    out
}

/// Builds the bytes of a segment over `shards` (generation name, prepared
/// shard with its tool lane); ordinals follow the order given.
pub fn build(shards: &[(&str, &PreparedShard)]) -> Vec<u8> {
    let mut b = Builder::default();
    for (name, shard) in shards {
        b.add(name, shard);
    }
    b.finish()
}

/// A gram's postings while building: shard ordinals and occurrence bytes.
type Postings = (Vec<u32>, Vec<u8>);

/// A term's intersected postings with their occurrence bytes.
type TermPostings<'s> = Vec<(RoaringBitmap, &'s [u8])>;

/// Builds a segment one shard at a time, so a host never holds more than one
/// prepared shard besides the postings.
#[derive(Debug, Default)]
pub struct Builder {
    names: Vec<String>,
    seen: HashSet<String>,
    /// Per lane: gram → (ordinals, occurrence bytes).
    lanes: [BTreeMap<u32, Postings>; 2],
}

impl Builder {
    /// Adds a shard (prepared with its tool lane) under its generation name.
    /// A name already added is ignored.
    pub fn add(&mut self, name: &str, shard: &PreparedShard) {
        if !self.seen.insert(name.to_string()) {
            return;
        }
        let ord = self.names.len() as u32;
        self.names.push(name.to_string());
        for (lane, postings) in [&shard.conversation, &shard.tool]
            .into_iter()
            .zip(self.lanes.iter_mut())
        {
            for (g, c) in lane_grams(lane) {
                let p = postings.entry(g).or_default();
                p.0.push(ord);
                p.1.push(c);
            }
        }
    }

    /// Shards added so far.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no shard was added.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The segment's bytes.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[0; HEADER - 8]);
        put_u32(&mut out, self.names.len() as u32);
        for name in &self.names {
            put_u32(&mut out, name.len() as u32);
            out.extend_from_slice(name.as_bytes());
        }
        for postings in &self.lanes {
            let mut table = Vec::with_capacity(postings.len() * 12);
            let mut blob = Vec::new();
            for (g, (ords, occ)) in postings {
                let start = blob.len();
                let bitmap =
                    RoaringBitmap::from_sorted_iter(ords.iter().copied()).unwrap_or_default();
                // Writing to a Vec cannot fail.
                let _ = bitmap.serialize_into(&mut blob);
                blob.extend_from_slice(occ);
                put_u32(&mut table, *g);
                put_u32(&mut table, start as u32);
                put_u32(&mut table, (blob.len() - start) as u32);
            }
            put_u32(&mut out, postings.len() as u32);
            out.extend_from_slice(&table);
            put_u32(&mut out, blob.len() as u32);
            out.extend_from_slice(&blob);
        }
        let crc = crc32fast::hash(&out[HEADER..]);
        out[8..12].copy_from_slice(&crc.to_le_bytes());
        out
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Reads little-endian fields from a byte slice, failing on overrun.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Result<u32, SegmentError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], SegmentError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(SegmentError::Malformed("truncated"))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

/// Where one lane's table and blob sit in the bytes.
#[derive(Clone, Debug)]
struct LaneTable {
    table: usize,
    grams: usize,
    blob: usize,
    blob_len: usize,
}

/// Bytes a segment is read from: a `Vec`, or a memory map in the host.
pub type SegmentBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// An opened segment.
pub struct Segment {
    bytes: SegmentBytes,
    names: Vec<String>,
    by_name: HashMap<String, u32>,
    lanes: [LaneTable; 2],
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("bytes", &self.bytes().len())
            .field("generations", &self.names.len())
            .finish()
    }
}

impl Segment {
    /// Opens segment bytes, refusing torn, foreign or malformed ones.
    pub fn open(data: impl AsRef<[u8]> + Send + Sync + 'static) -> Result<Segment, SegmentError> {
        let data: SegmentBytes = Box::new(data);
        let bytes = (*data).as_ref();
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(SegmentError::Magic);
        }
        let crc = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if crc32fast::hash(&bytes[HEADER..]) != crc {
            return Err(SegmentError::Checksum);
        }
        let mut r = Reader { bytes, pos: HEADER };
        let n = r.u32()? as usize;
        let mut names = Vec::with_capacity(n.min(1 << 20));
        let mut by_name = HashMap::with_capacity(n.min(1 << 20));
        for ord in 0..n {
            let len = r.u32()? as usize;
            let name = std::str::from_utf8(r.take(len)?)
                .map_err(|_| SegmentError::Malformed("name is not UTF-8"))?
                .to_string();
            if by_name.insert(name.clone(), ord as u32).is_some() {
                return Err(SegmentError::Malformed("a generation is named twice"));
            }
            names.push(name);
        }
        let mut lanes = Vec::with_capacity(2);
        for _ in 0..2 {
            let grams = r.u32()? as usize;
            let table = r.pos;
            let t = r.take(
                grams
                    .checked_mul(12)
                    .ok_or(SegmentError::Malformed("table"))?,
            )?;
            let blob_len = r.u32()? as usize;
            let blob = r.pos;
            r.take(blob_len)?;
            let mut last = None;
            for e in t.chunks_exact(12) {
                let g = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
                let len = u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize;
                if last.is_some_and(|l| l >= g) || off.saturating_add(len) > blob_len {
                    return Err(SegmentError::Malformed("gram table"));
                }
                last = Some(g);
            }
            lanes.push(LaneTable {
                table,
                grams,
                blob,
                blob_len,
            });
        }
        if r.pos != bytes.len() {
            return Err(SegmentError::Malformed("trailing bytes"));
        }
        let tool = lanes.pop().ok_or(SegmentError::Malformed("lanes"))?;
        let conversation = lanes.pop().ok_or(SegmentError::Malformed("lanes"))?;
        Ok(Segment {
            bytes: data,
            names,
            by_name,
            lanes: [conversation, tool],
        })
    }

    /// The segment's bytes.
    pub fn bytes(&self) -> &[u8] {
        (*self.bytes).as_ref()
    }

    /// The generation names it covers, in ordinal order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The ordinal of a generation, if the segment covers it.
    pub fn ordinal(&self, generation: &str) -> Option<u32> {
        self.by_name.get(generation).copied()
    }

    /// Heap bytes (for byte-bounded caches).
    pub fn heap_bytes(&self) -> usize {
        self.bytes().len() + self.names.iter().map(|n| 2 * n.len() + 48).sum::<usize>()
    }

    /// The postings entry of `g` in a lane: `(len, bytes)`.
    fn entry(&self, lane: usize, g: u32) -> Option<&[u8]> {
        let t = &self.lanes[lane];
        let table = &self.bytes()[t.table..t.table + t.grams * 12];
        let at = |i: usize| {
            let e = &table[i * 12..i * 12 + 12];
            (
                u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize,
                u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize,
            )
        };
        let (mut lo, mut hi) = (0, t.grams);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (mg, off, len) = at(mid);
            match mg.cmp(&g) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let blob = &self.bytes()[t.blob..t.blob + t.blob_len];
                    return blob.get(off..off + len);
                }
            }
        }
        None
    }

    /// Looks up the query's terms (folded) in the wanted lanes.
    pub fn probe(&self, terms: &[&[u8]], lanes: Lanes) -> Probe<'_> {
        let lane = |i: usize, wanted: bool| wanted.then(|| self.probe_lane(i, terms));
        Probe {
            lanes: [lane(0, lanes.conversation), lane(1, lanes.tool)],
        }
    }

    fn probe_lane(&self, lane: usize, terms: &[&[u8]]) -> LaneProbe<'_> {
        let mut out = LaneProbe {
            candidates: None,
            terms: Vec::with_capacity(terms.len()),
        };
        for t in terms {
            if t.len() < N {
                out.terms.push(None);
                continue;
            }
            let mut grams: Vec<u32> = t.windows(N).map(gram).collect();
            grams.sort_unstable();
            grams.dedup();
            let mut entries = Vec::with_capacity(grams.len());
            for g in grams {
                match self.entry(lane, g) {
                    Some(e) => entries.push(e),
                    None => {
                        // A gram no shard has: nothing in this lane matches.
                        out.candidates = Some(RoaringBitmap::new());
                        return out;
                    }
                }
            }
            // Shortest postings first: usually the most selective.
            entries.sort_by_key(|e| e.len());
            entries.truncate(GRAMS_PER_TERM);
            let mut postings = Vec::with_capacity(entries.len());
            for e in entries {
                let mut rest = e;
                let Ok(bitmap) = RoaringBitmap::deserialize_from(&mut rest) else {
                    // Unreadable postings (never written so): the term
                    // constrains nothing and bounds nothing.
                    postings.clear();
                    break;
                };
                if rest.len() as u64 != bitmap.len() {
                    postings.clear();
                    break;
                }
                out.candidates = Some(match out.candidates.take() {
                    None => bitmap.clone(),
                    Some(c) => c & &bitmap,
                });
                postings.push((bitmap, rest));
            }
            out.terms.push((!postings.is_empty()).then_some(postings));
        }
        out
    }
}

/// The segments a catalog holds, with one table from generation name to
/// (segment, ordinal) over all of them, so planning costs one lookup per
/// session whatever the number of segments.
#[derive(Debug, Default)]
pub struct SegmentSet {
    segments: Vec<Arc<Segment>>,
    by_name: HashMap<String, (usize, u32)>,
}

impl SegmentSet {
    /// A set over `segments`; a generation two segments list is answered by
    /// the first.
    pub fn new(segments: Vec<Arc<Segment>>) -> SegmentSet {
        let mut by_name = HashMap::new();
        for (i, s) in segments.iter().enumerate() {
            for (o, n) in s.names().iter().enumerate() {
                by_name.entry(n.clone()).or_insert((i, o as u32));
            }
        }
        SegmentSet { segments, by_name }
    }

    /// The segments, in order.
    pub fn segments(&self) -> &[Arc<Segment>] {
        &self.segments
    }

    /// Which segment covers a generation, and its ordinal there.
    pub fn locate(&self, generation: &str) -> Option<(usize, u32)> {
        self.by_name.get(generation).copied()
    }
}

/// One lane's answer for a query.
#[derive(Debug)]
struct LaneProbe<'s> {
    /// Ordinals that may match (`None` = every ordinal: no term has grams).
    candidates: Option<RoaringBitmap>,
    /// Per term: its intersected postings with their occurrence bytes
    /// (`None` = the term is shorter than a gram, or unbounded).
    terms: Vec<Option<TermPostings<'s>>>,
}

impl LaneProbe<'_> {
    fn contains(&self, ord: u32) -> bool {
        self.candidates.as_ref().is_none_or(|c| c.contains(ord))
    }

    /// Upper bound on a candidate's best record score in this lane.
    fn score_bound(&self, ord: u32) -> Option<u64> {
        if !self.contains(ord) {
            return Some(0);
        }
        let mut sum = 0u64;
        for t in &self.terms {
            let postings = t.as_ref()?;
            let mut best = u8::MAX;
            for (bitmap, occ) in postings {
                let rank = bitmap.rank(ord);
                let b = rank
                    .checked_sub(1)
                    .and_then(|i| occ.get(i as usize))
                    .copied()
                    .unwrap_or(0);
                best = best.min(b);
            }
            if best == u8::MAX {
                return None;
            }
            sum += u64::from(best);
        }
        Some(sum)
    }
}

/// A segment's answer for a query: which ordinals may match, and bounds.
#[derive(Debug)]
pub struct Probe<'s> {
    lanes: [Option<LaneProbe<'s>>; 2],
}

impl Probe<'_> {
    /// Whether the shard at `ord` may hold a record matching every term in
    /// some wanted lane.
    pub fn contains(&self, ord: u32) -> bool {
        self.lanes.iter().flatten().any(|l| l.contains(ord))
    }

    /// An upper bound on the relevance score of any record of the shard at
    /// `ord` in the wanted lanes; `None` = unbounded.
    pub fn score_bound(&self, ord: u32) -> Option<u64> {
        let mut best = 0;
        for l in self.lanes.iter().flatten() {
            best = best.max(l.score_bound(ord)?);
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

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
        assert_eq!(probe(&["pool", "mig"], CONV).0, vec![1]);
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
}
