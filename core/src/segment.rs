//! Index segments: an immutable inverted trigram index over the folded text
//! of a set of generations (shards), one table per lane (conversation,
//! tool). A gram's postings are the roaring bitmap of the shard ordinals
//! whose lane holds it, followed by one byte per posting: the most windows
//! equal to that gram any one record of the shard has (255 = saturated), so
//! `relevance` can bound a shard's best score before loading it, and — in
//! the conversation lane — a 64-bit mask of the record classes holding it
//! (record `i` of the lane is class `i % 64`). Terms are ANDed within one
//! record, so a shard stays a candidate only if some class holds every
//! probed gram of every term: words that meet only across records (or grams
//! of one word scattered over records) no longer make a shard a candidate.
//! The conversation lane's postings also carry a follow mask: a 64-bit
//! Bloom filter of the two bytes after each window equal to the gram
//! ([`follow_bit`]). A term's adjacent grams must then be adjacent somewhere
//! in the shard (approximately: its 5-byte windows must all occur), which
//! is what identifiers made of common words (`renderRoute`, `fold_response`)
//! need: each of their trigrams is everywhere, their junctions are not.
//!
//! A query intersects, per lane, the postings of each term's most selective
//! grams; a term shorter than a gram constrains nothing (its lane is
//! scanned). Every candidate is still verified by the exact matcher, and a
//! term that occurs in a record has every one of its 3-byte windows in that
//! record's folded text, so the index never hides a match.
//!
//! Bytes (little-endian): magic, CRC-32 of everything after the header,
//! the generation names (ordinal order), then per lane its mask width and
//! its follow-mask width (0 or 8 bytes per posting each), a sorted table of
//! `(gram, offset, len)` and the postings blob (per gram: the roaring
//! bitmap, the occurrence bytes, the masks, the follow masks). A segment is
//! refused unless its CRC, table order and offsets hold. Segments of the
//! previous version (no follow-mask width, no follow masks) are read as
//! they are: every follow bit set, so they prune as they always did.

use crate::lane::Lane;
use crate::prepared::PreparedShard;
use crate::query::Lanes;
use roaring::RoaringBitmap;
use rustc_hash::FxBuildHasher;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// First bytes of a segment.
const MAGIC: &[u8; 8] = b"RCSEG\x00\x00\x03";
/// First bytes of a segment of the previous version (no follow masks).
const MAGIC_V2: &[u8; 8] = b"RCSEG\x00\x00\x02";
/// Magic + CRC-32 + reserved.
const HEADER: usize = 16;
/// Grams of a term whose postings are intersected (the smallest ones): a
/// bitmap names at most one shard per posting, so intersecting more of them
/// costs little and prunes big shards holding every common trigram.
const GRAMS_PER_TERM: usize = 8;
/// A gram: three folded bytes.
const N: usize = 3;
/// Record classes of a lane's masks: record `i` is class `i % CLASSES`.
pub const CLASSES: usize = 64;
/// Mask bytes per posting, per lane: the conversation lane (what a default
/// query reads) carries record-class masks; the tool lane, whose postings
/// are twice as many and which only `scope=all` reads, does not.
const MASK_BYTES: [usize; 2] = [8, 0];
/// Follow-mask bytes per posting, per lane (as the record-class masks: the
/// lane a default query reads).
const FOLLOW_BYTES: [usize; 2] = [8, 0];

/// The follow-mask bit of the two bytes after a window: a multiplicative
/// hash of the pair, top 6 bits (the same on every target).
#[inline]
pub fn follow_bit(a: u8, b: u8) -> u64 {
    let pair = (u32::from(a) << 8 | u32::from(b)).wrapping_add(1);
    1u64 << (pair.wrapping_mul(0x9E37_79B1) >> 26)
}

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

/// Reused buffers for reading a lane's grams: a dense table over every
/// possible gram (2^24 entries, allocated zeroed so only touched pages cost
/// memory) of `[count in the current record, best count in any record]`,
/// the grams touched in the lane and in the current record. Counting in a
/// table, not sorting each record's windows, is what keeps a backfill fast.
struct Scratch {
    table: Vec<[u8; 2]>,
    /// Per gram: the record classes of the lane holding it.
    masks: Vec<u64>,
    /// Per gram: the follow mask of its windows ([`follow_bit`]).
    follows: Vec<u64>,
    touched: Vec<u32>,
    record: Vec<u32>,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            table: vec![[0; 2]; 1 << (8 * N)],
            masks: vec![0; 1 << (8 * N)],
            follows: vec![0; 1 << (8 * N)],
            touched: Vec::new(),
            record: Vec::new(),
        }
    }

    /// Per gram of `lane` (ascending), the most windows any one record of
    /// it has equal to that gram (255 = saturated), the classes of the
    /// records holding it and its follow mask (when `follow`).
    fn lane_grams(&mut self, lane: &Lane, follow: bool, mut emit: impl FnMut(u32, u8, u64, u64)) {
        for i in 0..lane.len() {
            let class = 1u64 << (i % CLASSES);
            let text = lane.text(i);
            for (p, w) in text.windows(N).enumerate() {
                let g = gram(w);
                let e = &mut self.table[g as usize];
                if e[0] == 0 {
                    self.record.push(g);
                }
                e[0] = e[0].saturating_add(1);
                if follow {
                    if let (Some(&a), Some(&b)) = (text.get(p + N), text.get(p + N + 1)) {
                        self.follows[g as usize] |= follow_bit(a, b);
                    }
                }
            }
            for &g in &self.record {
                let e = &mut self.table[g as usize];
                if e[1] == 0 {
                    self.touched.push(g);
                }
                e[1] = e[1].max(e[0]);
                e[0] = 0;
                self.masks[g as usize] |= class;
            }
            self.record.clear();
        }
        self.touched.sort_unstable();
        for &g in &self.touched {
            let e = &mut self.table[g as usize];
            emit(
                g,
                e[1],
                std::mem::take(&mut self.masks[g as usize]),
                std::mem::take(&mut self.follows[g as usize]),
            );
            e[1] = 0;
        }
        self.touched.clear();
    }
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

/// One posting while building: packed ([`pack`]), record classes, follow
/// mask.
type Posting = (u64, u64, u64);

/// One posting while building: `gram << 40 | ordinal << 8 | occurrence
/// byte`, so sorting the packed values orders postings by gram, then shard.
/// One flat vector per lane (no map, no allocation per gram) is what keeps a
/// backfill's segment building cheap.
#[inline]
fn pack(g: u32, ord: u32, c: u8) -> u64 {
    (u64::from(g) << 40) | (u64::from(ord) << 8) | u64::from(c)
}

#[inline]
fn unpack(p: u64) -> (u32, u32, u8) {
    ((p >> 40) as u32, (p >> 8) as u32, p as u8)
}

/// One probed gram: its shard ordinals, occurrence bytes, masks and follow
/// masks (each empty when its lane carries none), and the follow bits the
/// term needs of it (0 when probed for no term, or at a term's end).
#[derive(Debug)]
struct GramPostings<'s> {
    bitmap: RoaringBitmap,
    occ: &'s [u8],
    masks: &'s [u8],
    follows: &'s [u8],
    need: u64,
}

/// The `i`-th 8-byte word of `words` (every bit when there is none).
fn word(words: &[u8], i: usize) -> u64 {
    words.get(i * 8..i * 8 + 8).map_or(u64::MAX, |b| {
        u64::from_le_bytes(b.try_into().unwrap_or([0xFF; 8]))
    })
}

impl GramPostings<'_> {
    /// The record classes of the `i`-th posting holding the gram (every
    /// class when the lane has no masks).
    fn mask(&self, i: usize) -> u64 {
        word(self.masks, i)
    }

    /// The follow mask of the `i`-th posting (every bit when the lane has
    /// none).
    fn follow(&self, i: usize) -> u64 {
        word(self.follows, i)
    }
}

/// A term's intersected postings.
type TermPostings<'s> = Vec<GramPostings<'s>>;

/// Splits a gram's postings entry (roaring bitmap, one occurrence byte per
/// posting, then `mask_bytes` and `follow_bytes` per posting); `None` if it
/// does not decode (never written so: the segment's checksum held).
fn split_entry<'s>(entry: &'s [u8], lane: &LaneTable) -> Option<GramPostings<'s>> {
    let mut rest = entry;
    let bitmap = RoaringBitmap::deserialize_from(&mut rest).ok()?;
    let n = usize::try_from(bitmap.len()).ok()?;
    if rest.len() != n.checked_mul(1 + lane.mask_bytes + lane.follow_bytes)? {
        return None;
    }
    let (occ, rest) = rest.split_at(n);
    let (masks, follows) = rest.split_at(n * lane.mask_bytes);
    Some(GramPostings {
        bitmap,
        occ,
        masks,
        follows,
        need: 0,
    })
}

/// Builds a segment one shard at a time, so a host never holds more than one
/// prepared shard besides the postings. Builders can also be combined
/// ([`Builder::append`]) and fed from built segments
/// ([`Builder::add_segment`]): a merge reads postings, not shards, and gives
/// the same bytes as building over the same shards in the same order.
#[derive(Debug, Default)]
pub struct Builder {
    names: Vec<String>,
    seen: HashSet<String>,
    /// Per lane: packed postings ([`pack`]) with their record-class masks
    /// and follow masks (0 in a lane without them), sorted at the end.
    lanes: [Vec<Posting>; 2],
    scratch: Option<Box<Scratch>>,
}

impl Builder {
    /// Adds a shard (prepared with its tool lane) under its generation name.
    /// A name already added is ignored.
    pub fn add(&mut self, name: &str, shard: &PreparedShard) {
        let Some(ord) = self.ordinal_for(name) else {
            return;
        };
        let scratch = self.scratch.get_or_insert_with(|| Box::new(Scratch::new()));
        for ((lane, postings), follow) in [&shard.conversation, &shard.tool]
            .into_iter()
            .zip(self.lanes.iter_mut())
            .zip(FOLLOW_BYTES.map(|b| b > 0))
        {
            scratch.lane_grams(lane, follow, |g, c, m, f| {
                postings.push((pack(g, ord, c), m, f))
            });
        }
    }

    /// A fresh ordinal for `name`, or `None` if it was added already.
    fn ordinal_for(&mut self, name: &str) -> Option<u32> {
        if !self.seen.insert(name.to_string()) {
            return None;
        }
        self.names.push(name.to_string());
        Some(self.names.len() as u32 - 1)
    }

    /// Adds every shard `other` holds after those of `self` (names already
    /// added are ignored), as if they had been added here one by one.
    pub fn append(&mut self, other: Builder) {
        let map: Vec<Option<u32>> = other.names.iter().map(|n| self.ordinal_for(n)).collect();
        for (mine, theirs) in self.lanes.iter_mut().zip(other.lanes) {
            mine.extend(theirs.into_iter().filter_map(|(p, m, f)| {
                let (g, o, c) = unpack(p);
                let n = map.get(o as usize).copied().flatten()?;
                Some((pack(g, n, c), m, f))
            }));
        }
    }

    /// Adds the shards of a built segment whose generation names `keep`
    /// accepts (names already added are ignored), from its postings: no
    /// shard is read. Postings that do not decode (never written so: the
    /// segment's checksum held) are skipped with their gram, which only a
    /// segment built by another version could cause.
    pub fn add_segment(&mut self, seg: &Segment, mut keep: impl FnMut(&str) -> bool) {
        let map: Vec<Option<u32>> = seg
            .names()
            .iter()
            .map(|n| if keep(n) { self.ordinal_for(n) } else { None })
            .collect();
        if map.iter().all(Option::is_none) {
            return;
        }
        for (lane, mine) in self.lanes.iter_mut().enumerate() {
            let keep_masks = MASK_BYTES[lane] > 0;
            let keep_follows = FOLLOW_BYTES[lane] > 0;
            for (g, entry) in seg.entries(lane) {
                let Some(p) = split_entry(entry, &seg.lanes[lane]) else {
                    continue;
                };
                for (i, (o, &c)) in p.bitmap.iter().zip(p.occ).enumerate() {
                    if let Some(n) = map.get(o as usize).copied().flatten() {
                        let m = if keep_masks { p.mask(i) } else { 0 };
                        // A previous version's posting has no follow mask:
                        // every bit, so it refuses nothing.
                        let f = if keep_follows { p.follow(i) } else { 0 };
                        mine.push((pack(g, n, c), m, f));
                    }
                }
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
        for (lane, mut postings) in self.lanes.into_iter().enumerate() {
            // Packed values are unique (one per gram and shard).
            postings.sort_unstable_by_key(|&(p, _, _)| p);
            let (mask_bytes, follow_bytes) = (MASK_BYTES[lane], FOLLOW_BYTES[lane]);
            let mut table = Vec::new();
            let mut blob = Vec::new();
            for run in postings.chunk_by(|a, b| a.0 >> 40 == b.0 >> 40) {
                let start = blob.len();
                let bitmap =
                    RoaringBitmap::from_sorted_iter(run.iter().map(|&(p, _, _)| unpack(p).1))
                        .unwrap_or_default();
                // Writing to a Vec cannot fail.
                let _ = bitmap.serialize_into(&mut blob);
                blob.extend(run.iter().map(|&(p, _, _)| unpack(p).2));
                if mask_bytes > 0 {
                    for &(_, m, _) in run {
                        blob.extend_from_slice(&m.to_le_bytes());
                    }
                }
                if follow_bytes > 0 {
                    for &(_, _, f) in run {
                        blob.extend_from_slice(&f.to_le_bytes());
                    }
                }
                put_entry(&mut table, unpack(run[0].0).0, start, blob.len());
            }
            put_lane(&mut out, &[mask_bytes, follow_bytes], &table, &blob);
        }
        let crc = crc32fast::hash(&out[HEADER..]);
        out[8..12].copy_from_slice(&crc.to_le_bytes());
        out
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// One gram-table row: the gram and where its postings sit in the blob
/// (`start..end`).
fn put_entry(table: &mut Vec<u8>, g: u32, start: usize, end: usize) {
    put_u32(table, g);
    put_u32(table, start as u32);
    put_u32(table, (end - start) as u32);
}

/// One lane: its widths (mask bytes, then follow-mask bytes in this
/// version), the gram count, the table and the blob.
fn put_lane(out: &mut Vec<u8>, widths: &[usize], table: &[u8], blob: &[u8]) {
    for &w in widths {
        put_u32(out, w as u32);
    }
    put_u32(out, (table.len() / 12) as u32);
    out.extend_from_slice(table);
    put_u32(out, blob.len() as u32);
    out.extend_from_slice(blob);
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
    /// Mask bytes per posting (0 or 8).
    mask_bytes: usize,
    /// Follow-mask bytes per posting (0 or 8; 0 in the previous version).
    follow_bytes: usize,
    table: usize,
    grams: usize,
    blob: usize,
    blob_len: usize,
    /// `starts[p]` = the first table index whose gram's top 12 bits are
    /// ≥ `p` (4,097 entries, built at open): a lookup binary searches only
    /// its prefix's few entries, not the whole mapped table.
    starts: Vec<u32>,
}

/// Bits of a gram below its prefix in [`LaneTable::starts`].
const PREFIX_SHIFT: u32 = 12;

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
        if bytes.len() < HEADER || (&bytes[..8] != MAGIC && &bytes[..8] != MAGIC_V2) {
            return Err(SegmentError::Magic);
        }
        let follows = &bytes[..8] == MAGIC;
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
            let mask_bytes = r.u32()? as usize;
            let follow_bytes = if follows { r.u32()? as usize } else { 0 };
            if (mask_bytes != 0 && mask_bytes != 8) || (follow_bytes != 0 && follow_bytes != 8) {
                return Err(SegmentError::Malformed("mask width"));
            }
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
            let mut starts = Vec::with_capacity((1 << (24 - PREFIX_SHIFT)) + 1);
            for (i, e) in t.chunks_exact(12).enumerate() {
                let g = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
                let len = u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize;
                if last.is_some_and(|l| l >= g)
                    || off.saturating_add(len) > blob_len
                    || g >= 1 << 24
                {
                    return Err(SegmentError::Malformed("gram table"));
                }
                last = Some(g);
                while starts.len() <= (g >> PREFIX_SHIFT) as usize {
                    starts.push(i as u32);
                }
            }
            starts.resize((1 << (24 - PREFIX_SHIFT)) + 1, grams as u32);
            lanes.push(LaneTable {
                mask_bytes,
                follow_bytes,
                table,
                grams,
                blob,
                blob_len,
                starts,
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
        self.bytes().len()
            + self.names.iter().map(|n| 2 * n.len() + 48).sum::<usize>()
            + self.lanes.iter().map(|l| 4 * l.starts.len()).sum::<usize>()
    }

    /// Every `(gram, postings bytes)` of a lane, in gram order.
    fn entries(&self, lane: usize) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let t = &self.lanes[lane];
        let table = &self.bytes()[t.table..t.table + t.grams * 12];
        let blob = &self.bytes()[t.blob..t.blob + t.blob_len];
        table.chunks_exact(12).filter_map(move |e| {
            let g = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let off = u32::from_le_bytes([e[4], e[5], e[6], e[7]]) as usize;
            let len = u32::from_le_bytes([e[8], e[9], e[10], e[11]]) as usize;
            Some((g, blob.get(off..off + len)?))
        })
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
        let p = (g >> PREFIX_SHIFT) as usize;
        let (mut lo, mut hi) = match (t.starts.get(p), t.starts.get(p + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => return None,
        };
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
            masked: false,
        };
        for t in terms {
            if t.len() < N {
                out.terms.push(None);
                continue;
            }
            // Each window with the follow bit of the two bytes after it in
            // the term (none for the last two windows).
            let mut grams: Vec<(u32, u64)> = t
                .windows(N)
                .enumerate()
                .map(|(p, w)| {
                    let need = match (t.get(p + N), t.get(p + N + 1)) {
                        (Some(&a), Some(&b)) => follow_bit(a, b),
                        _ => 0,
                    };
                    (gram(w), need)
                })
                .collect();
            grams.sort_unstable();
            grams.dedup_by(|later, first| {
                let same = later.0 == first.0;
                if same {
                    first.1 |= later.1;
                }
                same
            });
            let mut entries = Vec::with_capacity(grams.len());
            for (g, need) in grams {
                match self.entry(lane, g) {
                    Some(e) => entries.push((e, need)),
                    None => {
                        // A gram no shard has: nothing in this lane matches.
                        out.candidates = Some(RoaringBitmap::new());
                        return out;
                    }
                }
            }
            // Shortest postings first: usually the most selective.
            entries.sort_by_key(|(e, _)| e.len());
            entries.truncate(GRAMS_PER_TERM);
            let mut postings = Vec::with_capacity(entries.len());
            for (e, need) in entries {
                let Some(mut p) = split_entry(e, &self.lanes[lane]) else {
                    // Unreadable postings (never written so): the term
                    // constrains nothing and bounds nothing.
                    postings.clear();
                    break;
                };
                if self.lanes[lane].follow_bytes > 0 {
                    p.need = need;
                }
                out.candidates = Some(match out.candidates.take() {
                    None => p.bitmap.clone(),
                    Some(c) => c & &p.bitmap,
                });
                postings.push(p);
            }
            out.terms.push((!postings.is_empty()).then_some(postings));
        }
        let probed = || out.terms.iter().flatten().flatten();
        out.masked = (self.lanes[lane].mask_bytes > 0 && probed().count() > 1)
            || probed().any(|g| g.need != 0);
        out
    }
}

/// The segments a catalog holds, with one table from generation name to
/// (segment, ordinal) over all of them, so planning costs one lookup per
/// session whatever the number of segments.
#[derive(Debug, Default)]
pub struct SegmentSet {
    segments: Vec<Arc<Segment>>,
    /// Looked up once per session per query: FxHash, not SipHash (names are
    /// content hashes; nothing here is keyed by an adversary's choice that
    /// costs more than a slower lookup).
    by_name: HashMap<String, (usize, u32), FxBuildHasher>,
}

impl SegmentSet {
    /// A set over `segments`; a generation two segments list is answered by
    /// the first.
    pub fn new(segments: Vec<Arc<Segment>>) -> SegmentSet {
        let mut by_name = HashMap::with_hasher(FxBuildHasher);
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
    /// The postings carry record-class masks and more than one gram is
    /// probed (one gram's masks refuse nothing), or some probed gram needs
    /// follow bits.
    masked: bool,
}

impl LaneProbe<'_> {
    fn contains(&self, ord: u32) -> bool {
        self.candidates.as_ref().is_none_or(|c| c.contains(ord))
    }

    /// [`LaneProbe::contains`], some record class holds every probed gram
    /// of every term (the AND of their masks is not empty), and each probed
    /// gram's follow mask holds the bits its term needs. Asked per
    /// candidate the scan reaches (a rank per gram), so its cost follows
    /// what is visited, not how many shards hold the grams.
    fn admits(&self, ord: u32) -> bool {
        if !self.contains(ord) {
            return false;
        }
        if !self.masked {
            return true;
        }
        let mut m = u64::MAX;
        for g in self.terms.iter().flatten().flatten() {
            // A candidate is in every probed gram's postings.
            if let Some(i) = g.bitmap.rank(ord).checked_sub(1) {
                m &= g.mask(i as usize);
                if m == 0 || g.follow(i as usize) & g.need != g.need {
                    return false;
                }
            }
        }
        true
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
            for p in postings {
                let rank = p.bitmap.rank(ord);
                let b = rank
                    .checked_sub(1)
                    .and_then(|i| p.occ.get(i as usize))
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
    /// some wanted lane: it holds every probed gram there, in one record
    /// class where the lane has masks.
    pub fn contains(&self, ord: u32) -> bool {
        self.lanes.iter().flatten().any(|l| l.admits(ord))
    }

    /// The ordinals holding every probed gram in some wanted lane, a
    /// superset of those [`Probe::contains`] admits (record classes are
    /// asked per ordinal, as the scan reaches it); `None` = every ordinal:
    /// some wanted lane has no term long enough for a gram.
    pub fn candidates(&self) -> Option<RoaringBitmap> {
        let mut out = RoaringBitmap::new();
        for l in self.lanes.iter().flatten() {
            out |= l.candidates.as_ref()?;
        }
        Some(out)
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

    /// The bytes the previous version wrote for the same postings: no
    /// follow-mask widths, no follow masks.
    fn previous_version(seg: &Segment) -> Vec<u8> {
        let mut out = MAGIC_V2.to_vec();
        out.extend_from_slice(&[0; HEADER - 8]);
        put_u32(&mut out, seg.names().len() as u32);
        for name in seg.names() {
            put_u32(&mut out, name.len() as u32);
            out.extend_from_slice(name.as_bytes());
        }
        for lane in 0..2 {
            let (mut table, mut blob) = (Vec::new(), Vec::new());
            for (g, entry) in seg.entries(lane) {
                let p = split_entry(entry, &seg.lanes[lane]).unwrap();
                let start = blob.len();
                p.bitmap.serialize_into(&mut blob).unwrap();
                blob.extend_from_slice(p.occ);
                blob.extend_from_slice(p.masks);
                put_entry(&mut table, g, start, blob.len());
            }
            put_lane(&mut out, &[seg.lanes[lane].mask_bytes], &table, &blob);
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
        let old = Segment::open(previous_version(&seg)).unwrap();
        assert_eq!(old.names(), seg.names());
        assert_eq!(admitted(&old, "renderroute"), vec![0, 1]);
        assert_eq!(admitted(&old, "abcab"), vec![2]);
        let mut b = Builder::default();
        b.add_segment(&old, |_| true);
        let merged = Segment::open(b.finish()).unwrap();
        assert_eq!(admitted(&merged, "renderroute"), vec![0, 1]);
        // Rebuilt from its shards, it prunes again.
        let mut b = Builder::default();
        b.add_segment(&seg, |_| true);
        assert_eq!(b.finish(), seg.bytes());
    }
}
