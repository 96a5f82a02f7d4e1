//! Writing segments: per-lane postings gathered shard by shard (or from
//! built segments, for merges) and laid out as segment bytes.

use super::layout::{self, put_entry, LaneBytes};
use super::{
    follow_bit, gram, split_entry, Segment, SegmentError, CLASSES, FOLLOW_BYTES, MASK_BYTES, N,
};
use crate::lane::Lane;
use crate::prepared::PreparedShard;
use roaring::RoaringBitmap;
use std::collections::HashSet;

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
    /// Block size as a power of two (`None`: [`layout::BLOCK_SHIFT`]).
    block_shift: Option<u32>,
}

impl Builder {
    /// Blocks of `1 << shift` bytes (clamped to 64 B – 16 MiB) instead of
    /// 16 KiB: tests use small ones so that small segments span blocks.
    pub fn block_shift(mut self, shift: u32) -> Builder {
        self.block_shift = Some(shift.clamp(layout::MIN_SHIFT, layout::MAX_SHIFT));
        self
    }

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
    /// shard is read. Every block of `seg` is checked first: a segment
    /// with a bad block adds nothing (its shards are to be indexed again).
    /// Postings that do not decode (never written so: the checksums held)
    /// are skipped with their gram, which only a segment built by another
    /// version could cause.
    pub fn add_segment(
        &mut self,
        seg: &Segment,
        mut keep: impl FnMut(&str) -> bool,
    ) -> Result<(), SegmentError> {
        seg.verify()?;
        let map: Vec<Option<u32>> = seg
            .names()
            .iter()
            .map(|n| if keep(n) { self.ordinal_for(n) } else { None })
            .collect();
        if map.iter().all(Option::is_none) {
            return Ok(());
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
        Ok(())
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
        let lane = |lane: usize, mut postings: Vec<Posting>| {
            let widths = [MASK_BYTES[lane], FOLLOW_BYTES[lane]];
            let (table, blob) = lane_bytes(&mut postings, widths);
            LaneBytes {
                widths,
                table,
                blob,
            }
        };
        let [conversation, tool] = self.lanes;
        let shift = self.block_shift.unwrap_or(layout::BLOCK_SHIFT);
        layout::write(&self.names, [lane(0, conversation), lane(1, tool)], shift)
    }
}

/// A lane's gram table and postings blob (per gram: the roaring bitmap,
/// the occurrence bytes, the masks, the follow masks, as `widths` say);
/// `postings` is sorted here.
fn lane_bytes(postings: &mut [Posting], widths: [usize; 2]) -> (Vec<u8>, Vec<u8>) {
    // Packed values are unique (one per gram and shard).
    postings.sort_unstable_by_key(|&(p, _, _)| p);
    let mut table = Vec::new();
    let mut blob = Vec::new();
    for run in postings.chunk_by(|a, b| a.0 >> 40 == b.0 >> 40) {
        let start = blob.len();
        let bitmap = RoaringBitmap::from_sorted_iter(run.iter().map(|&(p, _, _)| unpack(p).1))
            .unwrap_or_default();
        // Writing to a Vec cannot fail.
        let _ = bitmap.serialize_into(&mut blob);
        blob.extend(run.iter().map(|&(p, _, _)| unpack(p).2));
        if widths[0] > 0 {
            for &(_, m, _) in run {
                blob.extend_from_slice(&m.to_le_bytes());
            }
        }
        if widths[1] > 0 {
            for &(_, _, f) in run {
                blob.extend_from_slice(&f.to_le_bytes());
            }
        }
        put_entry(&mut table, unpack(run[0].0).0, start, blob.len());
    }
    (table, blob)
}
