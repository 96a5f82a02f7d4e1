//! Block checksums, verified when a block is first read: a segment of this
//! version names a CRC-32 per block of its bytes (footer excepted), and a
//! reader checks only the blocks its lookups touch, once per opened
//! segment. So opening costs the footer, not a pass over the file, and a
//! query reads (and pages in) what it probes.
//!
//! A block that fails is remembered as bad: every later read of it fails
//! too, and [`Blocks::damaged`] tells the host to have the segment rebuilt.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// A block's state.
const UNKNOWN: u8 = 0;
const GOOD: u8 = 1;
const BAD: u8 = 2;

/// A block of the covered bytes failed its checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadBlock;

/// The checksums of a segment's blocks and what is known of each.
#[derive(Debug)]
pub struct Blocks {
    /// Block size, as a power of two.
    shift: u32,
    /// The bytes covered: `0..end`.
    end: usize,
    /// CRC-32 per block (none: every byte was verified at open).
    crcs: Vec<u32>,
    state: Vec<AtomicU8>,
    damaged: AtomicBool,
}

impl Blocks {
    /// Bytes that were verified as a whole (segments of earlier versions:
    /// one checksum over the file, checked at open).
    pub fn verified() -> Blocks {
        Blocks {
            shift: 0,
            end: 0,
            crcs: Vec::new(),
            state: Vec::new(),
            damaged: AtomicBool::new(false),
        }
    }

    /// Blocks of `1 << shift` bytes over `0..end`, with their checksums.
    pub fn new(shift: u32, end: usize, crcs: Vec<u32>) -> Blocks {
        let state = crcs.iter().map(|_| AtomicU8::new(UNKNOWN)).collect();
        Blocks {
            shift,
            end,
            crcs,
            state,
            damaged: AtomicBool::new(false),
        }
    }

    /// How many blocks `end` bytes make at `shift`.
    pub fn count(shift: u32, end: usize) -> usize {
        end.div_ceil(1 << shift)
    }

    /// Checks the blocks under `range` of `bytes` (those not checked yet).
    pub fn check(&self, bytes: &[u8], range: Range<usize>) -> Result<(), BadBlock> {
        if self.crcs.is_empty() || range.start >= range.end {
            return Ok(());
        }
        if range.end > self.end {
            return Err(BadBlock);
        }
        let first = range.start >> self.shift;
        let last = (range.end - 1) >> self.shift;
        for b in first..=last {
            self.check_block(bytes, b)?;
        }
        Ok(())
    }

    fn check_block(&self, bytes: &[u8], b: usize) -> Result<(), BadBlock> {
        let (Some(state), Some(&crc)) = (self.state.get(b), self.crcs.get(b)) else {
            return Err(BadBlock);
        };
        match state.load(Ordering::Relaxed) {
            GOOD => return Ok(()),
            BAD => return Err(BadBlock),
            _ => {}
        }
        // Two readers may check one block at once: both reach the same
        // verdict.
        let start = b << self.shift;
        let end = (start + (1 << self.shift)).min(self.end);
        let good = bytes
            .get(start..end)
            .is_some_and(|s| crc32fast::hash(s) == crc);
        state.store(if good { GOOD } else { BAD }, Ordering::Relaxed);
        if good {
            Ok(())
        } else {
            self.damaged.store(true, Ordering::Relaxed);
            Err(BadBlock)
        }
    }

    /// Checks every block (a merge reads every posting).
    pub fn check_all(&self, bytes: &[u8]) -> Result<(), BadBlock> {
        self.check(bytes, 0..self.end)
    }

    /// Whether some block was found bad.
    pub fn damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.crcs.len() * 5
    }
}

/// The CRC-32 of each `1 << shift`-byte block of `bytes`.
pub fn checksums(bytes: &[u8], shift: u32) -> Vec<u32> {
    bytes.chunks(1 << shift).map(crc32fast::hash).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_block_fails_every_read_of_it_and_only_those() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let crcs = checksums(&bytes, 10);
        assert_eq!(crcs.len(), Blocks::count(10, bytes.len()));
        let mut torn = bytes.clone();
        torn[5_000] ^= 1;
        let blocks = Blocks::new(10, torn.len(), crcs);
        assert_eq!(blocks.check(&torn, 0..4_096), Ok(()));
        assert!(!blocks.damaged());
        assert_eq!(blocks.check(&torn, 4_900..4_901), Err(BadBlock));
        assert!(blocks.damaged());
        assert_eq!(blocks.check(&torn, 4_096..4_097), Err(BadBlock));
        assert_eq!(blocks.check(&torn, 6_000..10_000), Ok(()));
        assert_eq!(blocks.check_all(&torn), Err(BadBlock));
        // Past the covered bytes: never trusted.
        assert_eq!(blocks.check(&torn, 9_999..10_001), Err(BadBlock));
        assert_eq!(Blocks::verified().check(&torn, 0..1 << 30), Ok(()));
    }
}
