//! The merge policy against a naive reference, on random lists: every
//! listed segment is accounted for once, every live generation answered
//! for exactly once (or deferred), the tier merge keeps to the policy.

use super::tests::{plan_of, Opts, Seg, MIB};
use super::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// A random list: each segment's names (`None`: does not open), MiB of
/// source and generations claimed beyond its names.
type Fixture = Vec<(Option<Vec<u8>>, u64, u64)>;

fn name(g: u8) -> String {
    format!("g{g:02}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Against a naive reference (a generation belongs to the first listed
    /// segment that opens and names it): every listed segment is kept,
    /// merged, rebuilt or dropped exactly once; every live generation is
    /// answered for exactly once (by its owner, kept or merged, or by a
    /// new segment), or deferred; nothing else is; the tier merge keeps to
    /// the policy.
    #[test]
    fn a_plan_never_loses_or_duplicates_a_generation(
        fixture in proptest::collection::vec(
            (
                proptest::option::weighted(0.9, proptest::collection::vec(0u8..24, 0..8)),
                prop_oneof![1u64..64, 64u64..1500],
                0u64..3,
            ),
            0..10,
        ),
        gens in proptest::collection::btree_map(0u8..24, 1u64..40, 0..20),
        purged in proptest::collection::btree_set(0u8..24, 0..4),
        defer in proptest::option::of((0usize..8, 0u64..128)),
        merge in any::<bool>(),
        fresh in any::<bool>(),
    ) {
        check(&fixture, &gens, &purged, defer, merge, fresh)?;
    }
}

fn check(
    fixture: &Fixture,
    gens: &BTreeMap<u8, u64>,
    purged: &BTreeSet<u8>,
    defer: Option<(usize, u64)>,
    merge: bool,
    fresh: bool,
) -> Result<(), TestCaseError> {
    let segs: Vec<Seg> = fixture
        .iter()
        .enumerate()
        .map(|(i, (names, mib, extra))| {
            let names: Option<Vec<String>> =
                names.as_ref().map(|n| n.iter().map(|&g| name(g)).collect());
            Seg {
                entry: SegmentRef {
                    name: format!("s{i}"),
                    generations: names.as_ref().map_or(0, |n| n.len() as u64) + extra,
                    source_bytes: mib * MIB,
                },
                names,
            }
        })
        .collect();
    let gen_names: Vec<(String, u64)> =
        gens.iter().map(|(&g, &mib)| (name(g), mib * MIB)).collect();
    let live: HashMap<&str, u64> = gen_names.iter().map(|(g, b)| (g.as_str(), *b)).collect();
    // Purged generations are no longer in the manifest.
    let purge: HashSet<String> = purged
        .iter()
        .map(|&g| name(g))
        .filter(|g| !live.contains_key(g.as_str()))
        .collect();
    let o = Opts {
        defer: defer.map(|(generations, mib)| Deferral {
            generations,
            bytes: mib * MIB,
        }),
        merge,
        purge,
        fresh,
    };
    let p = plan_of(&segs, &live, &o);

    // The naive reference: each live generation's owner, and what each
    // opening segment owns (its live names, first occurrence, no earlier
    // owner).
    let mut owner: HashMap<&str, usize> = HashMap::new();
    let mut owns: Vec<Vec<String>> = vec![Vec::new(); segs.len()];
    for (i, s) in segs.iter().enumerate() {
        for n in s.names.iter().flatten() {
            if live.contains_key(n.as_str()) && !owner.contains_key(n.as_str()) {
                owner.insert(n.as_str(), i);
                owns[i].push(n.clone());
            }
        }
    }
    let mut uncovered: Vec<&str> = live
        .keys()
        .copied()
        .filter(|g| !owner.contains_key(g))
        .collect();
    uncovered.sort_unstable();
    let deferring = o.defer.is_some_and(|d| {
        !uncovered.is_empty()
            && uncovered.len() <= d.generations
            && uncovered.iter().map(|g| live[g]).sum::<u64>() <= d.bytes
    });

    // Every listed segment accounted for exactly once.
    let mut seen = vec![0usize; segs.len()];
    let parts: Vec<&Part> = p
        .keep
        .iter()
        .chain(p.merges.iter().flat_map(|m| &m.inputs))
        .collect();
    for i in parts
        .iter()
        .map(|q| q.segment)
        .chain(p.unopened.iter().copied())
        .chain(p.emptied.iter().copied())
    {
        seen[i] += 1;
    }
    prop_assert!(seen.iter().all(|&n| n == 1), "{seen:?} {p:?}");
    for (i, s) in segs.iter().enumerate() {
        prop_assert_eq!(p.unopened.contains(&i), s.names.is_none());
        prop_assert_eq!(
            p.emptied.contains(&i),
            s.names.is_some() && owns[i].is_empty()
        );
    }
    // Each part answers for exactly what its segment owns.
    for q in &parts {
        prop_assert_eq!(&q.generations, &owns[q.segment]);
    }
    // Every live generation exactly once (or deferred), nothing else.
    let mut answered: HashMap<&str, usize> = HashMap::new();
    for g in parts
        .iter()
        .flat_map(|q| q.generations.iter())
        .chain(p.builds.iter().flatten().map(|(g, _)| g))
    {
        *answered.entry(g.as_str()).or_default() += 1;
    }
    prop_assert!(answered.values().all(|&n| n == 1), "{answered:?}");
    prop_assert!(answered.keys().all(|g| live.contains_key(g)));
    if deferring {
        prop_assert_eq!(p.deferred, uncovered.len());
        prop_assert!(p.builds.is_empty());
        prop_assert_eq!(answered.len() + uncovered.len(), live.len());
    } else {
        prop_assert_eq!(p.deferred, 0);
        prop_assert_eq!(answered.len(), live.len());
        let built: Vec<&str> = p.builds.iter().flatten().map(|(g, _)| g.as_str()).collect();
        if p.changes {
            prop_assert_eq!(built, uncovered);
        }
        for b in &p.builds {
            let bytes: u64 = b.iter().map(|(_, n)| n).sum();
            prop_assert!(!b.is_empty() && (b.len() == 1 || bytes <= CHUNK_BYTES));
            prop_assert!(b.iter().all(|(g, n)| live[g.as_str()] == *n));
        }
    }
    // Rebuilt alone: exactly the mostly gone (unless deferring) and the
    // purged ones.
    let dead: Vec<usize> = (0..segs.len())
        .filter(|&i| {
            !owns[i].is_empty()
                && ((!deferring && (owns[i].len() as u64) * 2 < segs[i].entry.generations)
                    || segs[i].names.iter().flatten().any(|n| o.purge.contains(n)))
        })
        .collect();
    let alone: Vec<usize> = p
        .merges
        .iter()
        .filter(|m| m.inputs.len() == 1)
        .map(|m| m.inputs[0].segment)
        .collect();
    if p.changes {
        prop_assert_eq!(&alone, &dead);
    } else {
        prop_assert!(dead.is_empty());
    }
    for m in &p.merges {
        let bytes: u64 = m
            .inputs
            .iter()
            .flat_map(|q| &q.generations)
            .map(|g| live[g.as_str()])
            .sum();
        prop_assert_eq!(m.source_bytes, bytes);
    }
    // At most one tier merge, by the policy.
    let tiered: Vec<&Merge> = p.merges.iter().filter(|m| m.inputs.len() > 1).collect();
    prop_assert!(tiered.len() <= 1);
    if let Some(m) = tiered.first() {
        prop_assert!(merge && !deferring);
        prop_assert_eq!(m.inputs.len(), MERGE_FACTOR);
        let sizes: Vec<u64> = m
            .inputs
            .iter()
            .map(|q| segs[q.segment].entry.source_bytes)
            .collect();
        let t = tier(sizes[0]);
        prop_assert!(sizes.iter().all(|&b| tier(b) == t && b < MAX_MERGED_BYTES));
        prop_assert!(sizes.iter().sum::<u64>() <= MAX_MERGED_BYTES);
        // The smallest of their tier: every kept one of it is no smaller.
        let largest = sizes.iter().copied().max().unwrap_or(0);
        for q in &p.keep {
            let b = segs[q.segment].entry.source_bytes;
            prop_assert!(tier(b) != t || b >= largest);
        }
    }
    // Kept as they are: none names a purged generation.
    for q in &p.keep {
        prop_assert!(!segs[q.segment]
            .names
            .iter()
            .flatten()
            .any(|n| o.purge.contains(n)));
    }
    // No change: everything kept, nothing written.
    if !p.changes {
        prop_assert!(!fresh && p.merges.is_empty() && p.builds.is_empty());
        prop_assert!(p.unopened.is_empty() && p.emptied.is_empty());
    }
    Ok(())
}
