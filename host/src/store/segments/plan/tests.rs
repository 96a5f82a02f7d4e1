//! The merge policy as data: fixtures of lists and manifests and the plan
//! each makes (the property test against a naive reference is in
//! [`super::reference`]).

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
    let sizes: HashMap<&str, u64> = gens.iter().map(|g| (g.as_str(), CHUNK_BYTES / 2)).collect();
    let c = chunks(&gens, &sizes);
    assert_eq!(c.iter().map(|c| c.len()).collect::<Vec<_>>(), [2, 2, 1]);
}

pub(super) const MIB: u64 = 1 << 20;

/// A fixture segment: its list entry and the generations inside it
/// (`None`: it does not open).
pub(super) struct Seg {
    pub(super) entry: SegmentRef,
    pub(super) names: Option<Vec<String>>,
}

/// A segment of `mib` MiB of source naming `names`.
fn seg(name: &str, mib: u64, names: &[&str]) -> Seg {
    Seg {
        entry: SegmentRef {
            name: name.into(),
            generations: names.len() as u64,
            source_bytes: mib * MIB,
        },
        names: Some(names.iter().map(|n| n.to_string()).collect()),
    }
}

/// A listed segment that does not open.
fn broken(name: &str, mib: u64) -> Seg {
    Seg {
        names: None,
        ..seg(name, mib, &[])
    }
}

/// The manifest's generations, `(name, MiB)`.
fn live<'a>(gens: &[(&'a str, u64)]) -> HashMap<&'a str, u64> {
    gens.iter().map(|&(g, mib)| (g, mib * MIB)).collect()
}

/// What a pass decides by, in a fixture.
pub(super) struct Opts {
    pub(super) defer: Option<Deferral>,
    pub(super) merge: bool,
    pub(super) purge: HashSet<String>,
    pub(super) fresh: bool,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            defer: None,
            merge: true,
            purge: HashSet::new(),
            fresh: false,
        }
    }
}

pub(super) fn plan_of(segs: &[Seg], live: &HashMap<&str, u64>, o: &Opts) -> MergePlan {
    let listed: Vec<Listed<'_>> = segs
        .iter()
        .map(|s| Listed {
            entry: &s.entry,
            names: s.names.as_deref(),
        })
        .collect();
    plan(
        &listed,
        &Pass {
            live,
            defer: o.defer,
            merge: o.merge,
            purge: &o.purge,
            listed_fresh: o.fresh,
        },
    )
}

fn part(segment: usize, gens: &[&str]) -> Part {
    Part {
        segment,
        generations: gens.iter().map(|g| g.to_string()).collect(),
    }
}

fn build(gens: &[(&str, u64)]) -> Vec<(String, u64)> {
    gens.iter()
        .map(|&(g, mib)| (g.to_string(), mib * MIB))
        .collect()
}

#[test]
fn a_list_that_covers_everything_changes_nothing() {
    let segs = [seg("a", 8, &["g1", "g2"]), seg("b", 8, &["g3"])];
    let live = live(&[("g1", 1), ("g2", 1), ("g3", 1)]);
    let p = plan_of(&segs, &live, &Opts::default());
    assert!(!p.changes);
    assert_eq!(p.keep, [part(0, &["g1", "g2"]), part(1, &["g3"])]);
    assert!(p.merges.is_empty() && p.builds.is_empty());
    assert_eq!(p.merged(), 0);
    // Fresh segments appended: the same list, written.
    let fresh = Opts {
        fresh: true,
        ..Opts::default()
    };
    let p = plan_of(&segs, &live, &fresh);
    assert!(p.changes);
    assert_eq!(p.keep, [part(0, &["g1", "g2"]), part(1, &["g3"])]);
}

#[test]
fn uncovered_generations_are_built_in_chunks_by_name() {
    let gens: Vec<(&str, u64)> = ["g5", "g1", "g3", "g2", "g4"]
        .into_iter()
        .map(|g| (g, (CHUNK_BYTES / MIB) / 2))
        .collect();
    let p = plan_of(&[], &live(&gens), &Opts::default());
    let half = (CHUNK_BYTES / MIB) / 2;
    assert!(p.changes && p.sidecars);
    assert_eq!(
        p.builds,
        [
            build(&[("g1", half), ("g2", half)]),
            build(&[("g3", half), ("g4", half)]),
            build(&[("g5", half)]),
        ]
    );
}

#[test]
fn four_of_a_tier_merge_the_smallest_in_list_order() {
    // All of tier 2 (16–64 MiB): the four smallest merge, the fifth stays.
    let segs = [
        seg("e", 40, &["g0"]),
        seg("a", 36, &["g1"]),
        seg("b", 33, &["g2"]),
        seg("c", 35, &["g3"]),
        seg("d", 34, &["g4"]),
    ];
    let live = live(&[("g0", 4), ("g1", 1), ("g2", 2), ("g3", 3), ("g4", 4)]);
    let p = plan_of(&segs, &live, &Opts::default());
    assert_eq!(p.keep, [part(0, &["g0"])]);
    assert_eq!(
        p.merges,
        [Merge {
            inputs: vec![
                part(1, &["g1"]),
                part(2, &["g2"]),
                part(3, &["g3"]),
                part(4, &["g4"])
            ],
            source_bytes: 10 * MIB,
        }]
    );
    assert_eq!(p.merged(), 4);
    // Not in a pass told the sweep merged already.
    let no_merge = Opts {
        merge: false,
        ..Opts::default()
    };
    let p = plan_of(&segs, &live, &no_merge);
    assert!(!p.changes && p.merges.is_empty() && p.keep.len() == 5);
}

#[test]
fn a_tier_merge_never_passes_the_cap() {
    // Four of tier 4 (256 MiB–1 GiB) whose sum exceeds 1 GiB, and four
    // past the cap: none merges.
    let segs: Vec<Seg> = (0..4)
        .map(|i| seg(&format!("s{i}"), 300, &[["g0", "g1", "g2", "g3"][i]]))
        .chain((4..8).map(|i| seg(&format!("s{i}"), 1024, &[["g4", "g5", "g6", "g7"][i - 4]])))
        .collect();
    let gens: Vec<(&str, u64)> = ["g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7"]
        .into_iter()
        .map(|g| (g, 1))
        .collect();
    let p = plan_of(&segs, &live(&gens), &Opts::default());
    assert!(!p.changes && p.merges.is_empty());
}

#[test]
fn a_mostly_gone_segment_is_rebuilt_alone() {
    let segs = [seg("a", 8, &["g1", "g2", "g3"]), seg("b", 8, &["g4", "g5"])];
    // a keeps one of three (rebuilt); b one of two (half: kept).
    let live = live(&[("g1", 2), ("g4", 1)]);
    let p = plan_of(&segs, &live, &Opts::default());
    assert_eq!(p.keep, [part(1, &["g4"])]);
    assert_eq!(
        p.merges,
        [Merge {
            inputs: vec![part(0, &["g1"])],
            source_bytes: 2 * MIB,
        }]
    );
    assert!(p.builds.is_empty());
}

#[test]
fn unopened_and_emptied_segments_are_dropped_and_their_generations_rebuilt() {
    let segs = [broken("x", 8), seg("y", 8, &["gone"]), seg("z", 8, &["g1"])];
    let live = live(&[("g1", 1), ("g2", 1)]);
    let p = plan_of(&segs, &live, &Opts::default());
    assert_eq!(p.unopened, [0]);
    assert_eq!(p.emptied, [1]);
    assert_eq!(p.keep, [part(2, &["g1"])]);
    assert_eq!(p.builds, [build(&[("g2", 1)])]);
    assert_eq!(p.merged(), 1);
}

#[test]
fn a_generation_two_segments_name_counts_for_the_first() {
    let segs = [seg("a", 8, &["g1", "g2"]), seg("b", 8, &["g2", "g3"])];
    let live = live(&[("g1", 1), ("g2", 1), ("g3", 1)]);
    let p = plan_of(&segs, &live, &Opts::default());
    assert!(!p.changes);
    assert_eq!(p.keep, [part(0, &["g1", "g2"]), part(1, &["g3"])]);
}

#[test]
fn a_deferral_leaves_few_uncovered_and_merges_nothing() {
    let mut segs: Vec<Seg> = ["a", "b", "c", "d"]
        .iter()
        .enumerate()
        .map(|(i, n)| seg(n, 20, &[["g1", "g2", "g3", "g4"][i]]))
        .collect();
    segs.push(seg("half", 8, &["g5", "old1", "old2"]));
    let live = live(&[
        ("g1", 1),
        ("g2", 1),
        ("g3", 1),
        ("g4", 1),
        ("g5", 1),
        ("new", 1),
    ]);
    let open = Opts {
        defer: Some(Deferral::default()),
        ..Opts::default()
    };
    let p = plan_of(&segs, &live, &open);
    assert_eq!(p.deferred, 1);
    assert!(!p.changes && !p.sidecars);
    assert!(p.builds.is_empty() && p.merges.is_empty());
    // The window closes: everything is done, sidecars still left alone.
    let closed = Opts {
        defer: Some(Deferral::CLOSED),
        ..Opts::default()
    };
    let p = plan_of(&segs, &live, &closed);
    assert_eq!(p.deferred, 0);
    assert!(p.changes && !p.sidecars);
    assert_eq!(p.builds, [build(&[("new", 1)])]);
    assert_eq!(p.merges.len(), 2, "{:?}", p.merges);
    assert_eq!(p.merges[0].inputs, [part(4, &["g5"])]);
    assert_eq!(p.merges[1].inputs.len(), MERGE_FACTOR);
    // Too many uncovered to wait.
    let tight = Opts {
        defer: Some(Deferral {
            generations: 1,
            bytes: 0,
        }),
        ..Opts::default()
    };
    assert_eq!(plan_of(&segs, &live, &tight).deferred, 0);
}

#[test]
fn a_purged_generation_rebuilds_its_segment_even_when_deferring() {
    let segs = [seg("a", 8, &["g1", "forgotten"]), seg("b", 8, &["g2"])];
    let live = live(&[("g1", 1), ("g2", 1), ("new", 1)]);
    let o = Opts {
        defer: Some(Deferral::default()),
        purge: HashSet::from(["forgotten".to_string()]),
        ..Opts::default()
    };
    let p = plan_of(&segs, &live, &o);
    assert_eq!(p.deferred, 1);
    assert_eq!(p.keep, [part(1, &["g2"])]);
    assert_eq!(
        p.merges,
        [Merge {
            inputs: vec![part(0, &["g1"])],
            source_bytes: MIB,
        }]
    );
}
