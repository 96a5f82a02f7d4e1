//! The bytes of a segment, by version: where the names, each lane's gram
//! table and postings blob sit, read from a footer at the end, and the
//! writer of this version.
//!
//! This version (4), little-endian:
//!
//! ```text
//! header   magic "RCSEG\0\0\x04", 8 reserved bytes
//! names    count, then per generation (ordinal order) its length and bytes
//! lanes    per lane (conversation, tool): its gram table — sorted rows of
//!          (gram, offset, len) — then its postings blob
//! footer   block shift; names length; per lane: mask bytes, follow-mask
//!          bytes, gram count, table offset, blob offset, blob length, and
//!          the first table row of each 12-bit gram prefix (4,097 entries);
//!          block count and a CRC-32 per block of everything before the
//!          footer
//! trailer  footer offset (u64), CRC-32 of the footer, "RCSF"
//! ```
//!
//! Opening reads the trailer, the footer and the names' blocks; the rest is
//! checked block by block as lookups read it ([`super::blocks`]). Versions
//! 2 and 3 (one CRC-32 over the file after the header; each lane's widths,
//! gram count, table and blob inline; version 2 without follow masks) are
//! checked whole at open and read as they are.

use super::blocks::{checksums, Blocks};
use super::SegmentError;

/// First bytes of a segment of this version.
pub const MAGIC: &[u8; 8] = b"RCSEG\x00\x00\x04";
/// Version 3: one checksum over the file, follow masks.
pub const MAGIC_V3: &[u8; 8] = b"RCSEG\x00\x00\x03";
/// Version 2: one checksum over the file, no follow masks.
pub const MAGIC_V2: &[u8; 8] = b"RCSEG\x00\x00\x02";
/// Magic + reserved (versions 2 and 3: magic, CRC-32, reserved).
pub const HEADER: usize = 16;
/// Footer offset, footer CRC-32, [`TAIL`].
const TRAILER: usize = 16;
/// Last bytes of a segment of this version.
const TAIL: &[u8; 4] = b"RCSF";
/// Blocks of 16 KiB: a lookup reads a few of them.
pub const BLOCK_SHIFT: u32 = 14;
/// The smallest and largest block sizes a footer may name.
pub const MIN_SHIFT: u32 = 6;
/// See [`MIN_SHIFT`].
pub const MAX_SHIFT: u32 = 24;
/// Bits of a gram below its prefix in [`LaneTable::starts`].
pub const PREFIX_SHIFT: u32 = 12;
/// Entries of [`LaneTable::starts`].
const STARTS: usize = (1 << (24 - PREFIX_SHIFT)) + 1;

/// Where one lane's table and blob sit in the bytes.
#[derive(Clone, Debug)]
pub struct LaneTable {
    /// Mask bytes per posting (0 or 8).
    pub mask_bytes: usize,
    /// Follow-mask bytes per posting (0 or 8; 0 in version 2).
    pub follow_bytes: usize,
    pub table: usize,
    pub grams: usize,
    pub blob: usize,
    pub blob_len: usize,
    /// `starts[p]` = the first table row whose gram's top 12 bits are ≥ `p`
    /// (4,097 entries): a lookup binary searches only its prefix's rows.
    pub starts: Vec<u32>,
}

/// What opening found: the names, the lanes and the block checksums.
#[derive(Debug)]
pub struct Parts {
    pub names: Vec<String>,
    pub lanes: [LaneTable; 2],
    pub blocks: Blocks,
}

/// Reads little-endian fields from a byte slice, failing on overrun.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn u32(&mut self) -> Result<u32, SegmentError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, SegmentError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// A `u64` offset or length, as `usize`.
    fn at(&mut self) -> Result<usize, SegmentError> {
        usize::try_from(self.u64()?).map_err(|_| SegmentError::Malformed("offset"))
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], SegmentError> {
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

/// One gram-table row: `(gram, offset, len)`.
pub fn row(e: &[u8]) -> (u32, usize, usize) {
    let u = |i: usize| u32::from_le_bytes([e[i], e[i + 1], e[i + 2], e[i + 3]]);
    (u(0), u(4) as usize, u(8) as usize)
}

/// Reads the bytes of a segment of any readable version.
pub fn parse(bytes: &[u8]) -> Result<Parts, SegmentError> {
    match bytes.get(..8) {
        Some(m) if m == MAGIC => parse_footer(bytes),
        Some(m) if m == MAGIC_V3 || m == MAGIC_V2 => parse_whole(bytes, m == MAGIC_V3),
        _ => Err(SegmentError::Magic),
    }
}

/// This version: the trailer, the footer, then the names (their blocks
/// checked now; the tables' and blobs' when read).
fn parse_footer(bytes: &[u8]) -> Result<Parts, SegmentError> {
    let len = bytes.len();
    // A torn or altered trailer or footer is a checksum failure.
    let trailer = len
        .checked_sub(TRAILER)
        .filter(|&t| t >= HEADER)
        .map(|t| &bytes[t..])
        .ok_or(SegmentError::Checksum)?;
    let footer_at = u64::from_le_bytes(trailer[..8].try_into().unwrap_or([0xFF; 8]));
    let crc = u32::from_le_bytes([trailer[8], trailer[9], trailer[10], trailer[11]]);
    let footer_at = usize::try_from(footer_at)
        .ok()
        .filter(|&f| &trailer[12..] == TAIL && f >= HEADER && f <= len - TRAILER)
        .ok_or(SegmentError::Checksum)?;
    let footer = &bytes[footer_at..len - TRAILER];
    if crc32fast::hash(footer) != crc {
        return Err(SegmentError::Checksum);
    }
    let mut r = Reader {
        bytes: footer,
        pos: 0,
    };
    let shift = r.u32()?;
    if !(MIN_SHIFT..=MAX_SHIFT).contains(&shift) {
        return Err(SegmentError::Malformed("block size"));
    }
    let names_len = r.at()?;
    let within = |at: usize, n: usize| at.checked_add(n).is_some_and(|e| e <= footer_at);
    if !within(HEADER, names_len) {
        return Err(SegmentError::Malformed("names"));
    }
    let mut lanes = Vec::with_capacity(2);
    for _ in 0..2 {
        let (mask_bytes, follow_bytes) = widths(r.u32()?, r.u32()?)?;
        let grams = r.u32()? as usize;
        let (table, blob, blob_len) = (r.at()?, r.at()?, r.at()?);
        // Checked: on a 32-bit target (wasm) a hostile count would wrap.
        let rows = grams.checked_mul(12);
        if rows.is_none_or(|n| !within(table, n)) || !within(blob, blob_len) {
            return Err(SegmentError::Malformed("lane bounds"));
        }
        let starts: Vec<u32> = r
            .take(STARTS * 4)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if starts.windows(2).any(|w| w[0] > w[1]) || starts.last() != Some(&(grams as u32)) {
            return Err(SegmentError::Malformed("gram prefixes"));
        }
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
    let count = r.u32()? as usize;
    if count != Blocks::count(shift, footer_at) {
        return Err(SegmentError::Malformed("block count"));
    }
    let crcs = r
        .take(
            count
                .checked_mul(4)
                .ok_or(SegmentError::Malformed("blocks"))?,
        )?
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if r.pos != footer.len() {
        return Err(SegmentError::Malformed("trailing bytes"));
    }
    let blocks = Blocks::new(shift, footer_at, crcs);
    blocks
        .check(bytes, 0..HEADER + names_len)
        .map_err(|_| SegmentError::Checksum)?;
    let mut r = Reader {
        bytes: &bytes[..HEADER + names_len],
        pos: HEADER,
    };
    let names = read_names(&mut r)?;
    if r.pos != r.bytes.len() {
        return Err(SegmentError::Malformed("names"));
    }
    Ok(Parts {
        names,
        lanes: two(lanes)?,
        blocks,
    })
}

/// Versions 2 and 3: one checksum over everything after the header, and
/// each table's order and offsets checked at open.
fn parse_whole(bytes: &[u8], follows: bool) -> Result<Parts, SegmentError> {
    if bytes.len() < HEADER {
        return Err(SegmentError::Magic);
    }
    let crc = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if crc32fast::hash(&bytes[HEADER..]) != crc {
        return Err(SegmentError::Checksum);
    }
    let mut r = Reader { bytes, pos: HEADER };
    let names = read_names(&mut r)?;
    let mut lanes = Vec::with_capacity(2);
    for _ in 0..2 {
        let mask = r.u32()?;
        let follow = if follows { r.u32()? } else { 0 };
        let (mask_bytes, follow_bytes) = widths(mask, follow)?;
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
        for (g, off, len) in t.chunks_exact(12).map(row) {
            if last.is_some_and(|l| l >= g) || off.saturating_add(len) > blob_len || g >= 1 << 24 {
                return Err(SegmentError::Malformed("gram table"));
            }
            last = Some(g);
        }
        lanes.push(LaneTable {
            mask_bytes,
            follow_bytes,
            table,
            grams,
            blob,
            blob_len,
            starts: starts(t),
        });
    }
    if r.pos != bytes.len() {
        return Err(SegmentError::Malformed("trailing bytes"));
    }
    Ok(Parts {
        names,
        lanes: two(lanes)?,
        blocks: Blocks::verified(),
    })
}

/// The conversation and the tool lane, in that order.
fn two(lanes: Vec<LaneTable>) -> Result<[LaneTable; 2], SegmentError> {
    <[LaneTable; 2]>::try_from(lanes).map_err(|_| SegmentError::Malformed("lanes"))
}

/// A lane's mask and follow-mask widths: 0 or 8 bytes each.
fn widths(mask: u32, follow: u32) -> Result<(usize, usize), SegmentError> {
    let ok = |w: u32| w == 0 || w == 8;
    if ok(mask) && ok(follow) {
        Ok((mask as usize, follow as usize))
    } else {
        Err(SegmentError::Malformed("mask width"))
    }
}

fn read_names(r: &mut Reader<'_>) -> Result<Vec<String>, SegmentError> {
    let n = r.u32()? as usize;
    let mut names = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let len = r.u32()? as usize;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| SegmentError::Malformed("name is not UTF-8"))?;
        names.push(name.to_string());
    }
    Ok(names)
}

/// The prefix table of a sorted gram table.
fn starts(table: &[u8]) -> Vec<u32> {
    let mut starts = Vec::with_capacity(STARTS);
    let mut rows = 0;
    for (i, (g, _, _)) in table.chunks_exact(12).map(row).enumerate() {
        while starts.len() <= (g >> PREFIX_SHIFT) as usize && starts.len() < STARTS {
            starts.push(i as u32);
        }
        rows = i + 1;
    }
    starts.resize(STARTS, rows as u32);
    starts
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u64).to_le_bytes());
}

/// One gram-table row: the gram and where its postings sit in the blob
/// (`start..end`).
pub fn put_entry(table: &mut Vec<u8>, g: u32, start: usize, end: usize) {
    put_u32(table, g);
    put_u32(table, start as u32);
    put_u32(table, (end - start) as u32);
}

/// One lane to write: its widths (mask bytes, follow-mask bytes), its
/// sorted gram table and its blob.
pub struct LaneBytes {
    pub widths: [usize; 2],
    pub table: Vec<u8>,
    pub blob: Vec<u8>,
}

/// The bytes of a segment of this version, in blocks of `1 << shift` bytes.
pub fn write(names: &[String], lanes: [LaneBytes; 2], shift: u32) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[0; HEADER - 8]);
    put_u32(&mut out, names.len() as u32);
    for name in names {
        put_u32(&mut out, name.len() as u32);
        out.extend_from_slice(name.as_bytes());
    }
    let names_len = out.len() - HEADER;
    let mut footer = Vec::new();
    put_u32(&mut footer, shift);
    put_u64(&mut footer, names_len);
    for lane in &lanes {
        let table = out.len();
        out.extend_from_slice(&lane.table);
        let blob = out.len();
        out.extend_from_slice(&lane.blob);
        put_u32(&mut footer, lane.widths[0] as u32);
        put_u32(&mut footer, lane.widths[1] as u32);
        put_u32(&mut footer, (lane.table.len() / 12) as u32);
        put_u64(&mut footer, table);
        put_u64(&mut footer, blob);
        put_u64(&mut footer, lane.blob.len());
        for s in starts(&lane.table) {
            put_u32(&mut footer, s);
        }
    }
    let crcs = checksums(&out, shift);
    put_u32(&mut footer, crcs.len() as u32);
    for c in crcs {
        put_u32(&mut footer, c);
    }
    let footer_at = out.len();
    let crc = crc32fast::hash(&footer);
    out.extend_from_slice(&footer);
    put_u64(&mut out, footer_at);
    put_u32(&mut out, crc);
    out.extend_from_slice(TAIL);
    out
}
