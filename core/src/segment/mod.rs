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
//! The bytes ([`layout`]) end in a footer that says where the names, the
//! tables and the blobs are, with a CRC-32 per 16 KiB block ([`blocks`]):
//! opening reads the footer and the names, and a lookup checks the blocks it
//! reads when it first reads them. A lookup that meets a bad block answers
//! "every ordinal" for its lane (the shards are scanned, never skipped) and
//! marks the segment [`Segment::damaged`], for the host to have it rebuilt.
//! Segments of earlier versions are checked whole at open and read as they
//! are (version 2 has no follow masks: every follow bit set).

use crate::query::Lanes;
use blocks::{BadBlock, Blocks};
use layout::{row, LaneTable, PREFIX_SHIFT};
use roaring::RoaringBitmap;
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;
use std::sync::Arc;

mod blocks;
mod build;
mod layout;

pub use build::{build, Builder};

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

/// Bytes a segment is read from: a `Vec`, or a memory map in the host.
pub type SegmentBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// An opened segment.
pub struct Segment {
    bytes: SegmentBytes,
    names: Vec<String>,
    by_name: HashMap<String, u32>,
    lanes: [LaneTable; 2],
    blocks: Blocks,
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
    /// Opens segment bytes, refusing foreign ones and those whose footer
    /// or names are torn, altered or malformed (the rest is checked as it
    /// is read).
    pub fn open(data: impl AsRef<[u8]> + Send + Sync + 'static) -> Result<Segment, SegmentError> {
        let data: SegmentBytes = Box::new(data);
        let parts = layout::parse((*data).as_ref())?;
        let mut by_name = HashMap::with_capacity(parts.names.len());
        for (ord, name) in parts.names.iter().enumerate() {
            if by_name.insert(name.clone(), ord as u32).is_some() {
                return Err(SegmentError::Malformed("a generation is named twice"));
            }
        }
        Ok(Segment {
            bytes: data,
            names: parts.names,
            by_name,
            lanes: parts.lanes,
            blocks: parts.blocks,
        })
    }

    /// Checks every block (what a merge, which reads every posting, needs
    /// first); a bad one marks the segment [`Segment::damaged`].
    pub fn verify(&self) -> Result<(), SegmentError> {
        self.blocks
            .check_all(self.bytes())
            .map_err(|_| SegmentError::Checksum)
    }

    /// Whether a read found a block whose checksum fails: the segment
    /// answers for its shards by naming them all, and should be rebuilt.
    pub fn damaged(&self) -> bool {
        self.blocks.damaged()
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
            + self.blocks.heap_bytes()
    }

    /// Every `(gram, postings bytes)` of a lane, in gram order (after
    /// [`Segment::verify`]: nothing here is checked).
    fn entries(&self, lane: usize) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        let t = &self.lanes[lane];
        let bytes = self.bytes();
        let table = bytes.get(t.table..t.table + t.grams * 12).unwrap_or(&[]);
        let blob = bytes.get(t.blob..t.blob + t.blob_len).unwrap_or(&[]);
        table
            .chunks_exact(12)
            .map(row)
            .filter_map(move |(g, off, len)| Some((g, blob.get(off..off.checked_add(len)?)?)))
    }

    /// The postings entry of `g` in a lane (`None`: no shard holds it),
    /// its table rows and postings checked first.
    fn entry(&self, lane: usize, g: u32) -> Result<Option<&[u8]>, BadBlock> {
        let t = &self.lanes[lane];
        let p = (g >> PREFIX_SHIFT) as usize;
        let (lo, hi) = match (t.starts.get(p), t.starts.get(p + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => return Ok(None),
        };
        if lo > hi || hi > t.grams {
            return Err(BadBlock);
        }
        let rows = t.table + lo * 12..t.table + hi * 12;
        self.blocks.check(self.bytes(), rows.clone())?;
        let table = self.bytes().get(rows).ok_or(BadBlock)?;
        let (mut lo, mut hi) = (0, hi - lo);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (mg, off, len) = row(&table[mid * 12..mid * 12 + 12]);
            match mg.cmp(&g) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    // Rows are written within their blob: one that is not
                    // cannot be trusted.
                    if off.checked_add(len).is_none_or(|e| e > t.blob_len) {
                        return Err(BadBlock);
                    }
                    let at = t.blob + off..t.blob + off + len;
                    self.blocks.check(self.bytes(), at.clone())?;
                    return self.bytes().get(at).map(Some).ok_or(BadBlock);
                }
            }
        }
        Ok(None)
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
                    Ok(Some(e)) => entries.push((e, need)),
                    Ok(None) => {
                        // A gram no shard has: nothing in this lane matches.
                        out.candidates = Some(RoaringBitmap::new());
                        return out;
                    }
                    Err(BadBlock) => {
                        // Nothing read here is trusted: every ordinal may
                        // match, unbounded (the scan verifies each).
                        return LaneProbe {
                            candidates: None,
                            terms: terms.iter().map(|_| None).collect(),
                            masked: false,
                        };
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
mod tests;
