//! The merge policy: pure functions of segment sizes (tiers of powers of
//! 4 MiB, [`MERGE_FACTOR`] of one tier merged, never past
//! [`MAX_MERGED_BYTES`]; new segments of at most [`CHUNK_BYTES`]).

use super::{SegmentRef, CHUNK_BYTES, MAX_MERGED_BYTES, MERGE_FACTOR};
use std::collections::HashMap;

/// The segments of `fresh` that the tier policy merges first: the first
/// [`MERGE_FACTOR`] of one tier (in the order given) whose merge stays
/// within [`MAX_MERGED_BYTES`]; their indices.
pub fn fresh_merge(fresh: &[SegmentRef]) -> Option<Vec<usize>> {
    let mut tiers: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, s) in fresh.iter().enumerate() {
        if s.source_bytes >= MAX_MERGED_BYTES {
            continue;
        }
        let members = tiers.entry(tier(s.source_bytes)).or_default();
        members.push(i);
        let total: u64 = members.iter().map(|&m| fresh[m].source_bytes).sum();
        if members.len() == MERGE_FACTOR && total <= MAX_MERGED_BYTES {
            return Some(members.clone());
        }
        if members.len() == MERGE_FACTOR {
            members.remove(0);
        }
    }
    None
}

/// Size tier: powers of 4 of MiB.
pub(super) fn tier(bytes: u64) -> u32 {
    let mib = (bytes >> 20).max(1);
    (63 - mib.leading_zeros()) / 2
}

/// Splits generations into runs of at most [`CHUNK_BYTES`] of source.
pub(super) fn chunks<'a>(gens: &'a [String], sizes: &HashMap<&str, u64>) -> Vec<&'a [String]> {
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0u64);
    for (i, g) in gens.iter().enumerate() {
        let sz = sizes.get(g.as_str()).copied().unwrap_or(0);
        if i > start && acc + sz > CHUNK_BYTES {
            out.push(&gens[start..i]);
            start = i;
            acc = 0;
        }
        acc += sz;
    }
    if start < gens.len() {
        out.push(&gens[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::segments::{is_segment_name, segment_name};

    #[test]
    fn a_sweep_merges_the_first_full_tier_that_fits() {
        let seg = |mib: u64| SegmentRef {
            name: format!("{mib}"),
            generations: 1,
            source_bytes: mib << 20,
        };
        let names = |f: &[SegmentRef], g: Vec<usize>| -> Vec<String> {
            g.into_iter().map(|i| f[i].name.clone()).collect()
        };
        // Three of one tier are not enough; a fourth of another tier does
        // not complete it.
        let mut f: Vec<SegmentRef> = [33, 34, 35, 200].map(seg).to_vec();
        assert_eq!(fresh_merge(&f), None);
        f.push(seg(36));
        assert_eq!(
            names(&f, fresh_merge(&f).unwrap()),
            ["33", "34", "35", "36"]
        );
        // Segments past the cap never merge; four that would exceed it slide
        // on to the next that fit.
        let f: Vec<SegmentRef> = [1024, 1024, 1024, 1024].map(seg).to_vec();
        assert_eq!(fresh_merge(&f), None);
        let f: Vec<SegmentRef> = [700, 256, 256, 256, 256].map(seg).to_vec();
        assert_eq!(names(&f, fresh_merge(&f).unwrap()), ["256"; 4]);
    }

    #[test]
    fn names_tiers_and_chunks() {
        let n = segment_name(b"x");
        assert!(is_segment_name(&n), "{n}");
        assert!(!is_segment_name("../x.seg"));
        assert_eq!(tier(0), 0);
        assert_eq!(tier(3 << 20), 0);
        assert_eq!(tier(4 << 20), 1);
        assert_eq!(tier(17 << 20), 2);
        let gens: Vec<String> = (0..5).map(|i| format!("g{i}")).collect();
        let sizes: HashMap<&str, u64> =
            gens.iter().map(|g| (g.as_str(), CHUNK_BYTES / 2)).collect();
        let c = chunks(&gens, &sizes);
        assert_eq!(c.iter().map(|c| c.len()).collect::<Vec<_>>(), [2, 2, 1]);
    }
}
