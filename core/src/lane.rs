//! One lane of a prepared shard: the folded texts of one kind of record
//! (conversation or tool rows) packed into one contiguous buffer, so a term
//! is found with a single `memmem` pass, with each entry's record index and
//! folded→original offset map.

use crate::fold::{fold, OffsetMap};

/// Separates records in a lane buffer. 0xFF never occurs in UTF-8, so no
/// term (always valid UTF-8) can match across two records.
const SEP: u8 = 0xFF;

/// The folded texts of one kind of record, packed.
#[derive(Clone, Debug, Default)]
pub struct Lane {
    /// Folded texts, each followed by [`SEP`].
    pub buf: Vec<u8>,
    /// Start offset of each entry in `buf`.
    pub starts: Vec<u32>,
    /// The record index (in the shard) of each entry.
    pub records: Vec<u32>,
    /// Folded→original maps of non-ASCII entries (`None` = identity).
    pub maps: Vec<Option<OffsetMap>>,
}

impl Lane {
    pub(crate) fn push(&mut self, record: usize, text: &str) {
        let f = fold(text);
        self.starts.push(self.buf.len() as u32);
        self.records.push(record as u32);
        self.buf.extend_from_slice(f.text.as_bytes());
        self.buf.push(SEP);
        self.maps.push(f.map);
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the lane has no entries.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The folded text of entry `i`.
    pub fn text(&self, i: usize) -> &[u8] {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.buf.len(), |&s| s as usize)
            - 1;
        &self.buf[start..end]
    }

    /// The entry containing buffer position `pos`, searching from `from`.
    pub fn entry_at(&self, pos: usize, from: usize) -> usize {
        let rel = self.starts[from..].partition_point(|&s| s as usize <= pos);
        from + rel - 1
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.capacity()
            + self.starts.capacity() * 4
            + self.records.capacity() * 4
            + self
                .maps
                .iter()
                .flatten()
                .map(OffsetMap::heap_bytes)
                .sum::<usize>()
            + self.maps.capacity() * std::mem::size_of::<Option<OffsetMap>>()
    }
}
