//! The merge policy, pure: which segments a maintenance pass keeps,
//! merges, rebuilds and drops, and what it indexes anew ([`plan`], a
//! [`MergePlan`] the store then executes), and the merge a sweep runs
//! while its workers go on ([`fresh_merge`]). Tiers are powers of 4 MiB;
//! [`MERGE_FACTOR`] segments of one tier are merged, never past
//! [`MAX_MERGED_BYTES`]; new segments hold at most [`CHUNK_BYTES`].

use super::{Deferral, SegmentRef, CHUNK_BYTES, MAX_MERGED_BYTES, MERGE_FACTOR};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A listed segment as a maintenance pass found it.
#[derive(Clone, Copy, Debug)]
pub struct Listed<'a> {
    /// Its entry in the list.
    pub entry: &'a SegmentRef,
    /// The generations it indexes (every name inside it); `None` when it
    /// does not open.
    pub names: Option<&'a [String]>,
}

/// What a maintenance pass decides by, besides the list.
#[derive(Clone, Copy, Debug)]
pub struct Pass<'a> {
    /// The manifest's generations and their source bytes.
    pub live: &'a HashMap<&'a str, u64>,
    /// May the uncovered generations wait ([`Deferral`])? `None` = no (and
    /// lost `.grams` sidecars are restored).
    pub defer: Option<Deferral>,
    /// Whether the tier merge may run (`false`: the sweep already ran it).
    pub merge: bool,
    /// Generations whose text must leave the live index now: every
    /// segment naming one is rebuilt without them.
    pub purge: &'a HashSet<String>,
    /// Whether the list gained segments a sweep's workers just wrote (it
    /// is then written even when nothing else changes).
    pub listed_fresh: bool,
}

/// A listed segment and the live generations it answers for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its index in the list the plan was made from.
    pub segment: usize,
    /// Its live generations no earlier segment of the list covers.
    pub generations: Vec<String>,
}

/// A new segment merged from the postings of listed ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    /// Its inputs, each with the generations it keeps.
    pub inputs: Vec<Part>,
    /// The source bytes of the generations kept.
    pub source_bytes: u64,
}

/// What one maintenance pass does, decided before any segment is written.
/// The new list is `keep`, then the output of `merges`, then of `builds`,
/// in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergePlan {
    /// Listed segments kept as they are, in list order.
    pub keep: Vec<Part>,
    /// Segments merged from listed ones: first each segment rebuilt alone
    /// (mostly gone, or naming a purged generation), in list order, then
    /// the pass's one tier merge.
    pub merges: Vec<Merge>,
    /// New segments over the generations no listed segment covers (runs of
    /// at most [`CHUNK_BYTES`] of source): each generation and its bytes.
    pub builds: Vec<Vec<(String, u64)>>,
    /// Listed segments dropped because they do not open.
    pub unopened: Vec<usize>,
    /// Listed segments dropped because they hold no live generation.
    pub emptied: Vec<usize>,
    /// Live generations left uncovered on purpose ([`Deferral`]).
    pub deferred: usize,
    /// Whether building from generation files restores their lost `.grams`
    /// sidecars (not under a deferral: the long-lived indexer keeps its
    /// live shards' filters in its arena).
    pub sidecars: bool,
    /// Whether the list changes at all (`false`: nothing is written).
    pub changes: bool,
}

impl MergePlan {
    /// Listed segments the pass takes out of the list as they are: merged
    /// into a new one, rebuilt, or holding nothing live.
    pub fn merged(&self) -> usize {
        self.emptied.len() + self.merges.iter().map(|m| m.inputs.len()).sum::<usize>()
    }
}

/// Plans one maintenance pass over `listed` (the live list, a sweep's fresh
/// segments appended): a generation two segments name counts for the first
/// only; segments that do not open or hold nothing live are dropped; the
/// generations no segment covers are indexed anew unless `pass.defer` lets
/// them wait; a segment under half live (unless deferring) or naming a
/// purged generation is rebuilt alone; and, unless deferring or
/// `!pass.merge`, the [`MERGE_FACTOR`] smallest segments of the lowest
/// tier that has that many are merged when the result stays within
/// [`MAX_MERGED_BYTES`] (at most one merge per pass, so a pass's work stays
/// bounded and a merge moves its output up a tier).
pub fn plan(listed: &[Listed<'_>], pass: &Pass<'_>) -> MergePlan {
    let live = pass.live;
    let mut plan = MergePlan {
        sidecars: pass.defer.is_none(),
        ..MergePlan::default()
    };
    // Which live generations each listed segment covers.
    let mut kept: Vec<Part> = Vec::new();
    let mut covered: HashSet<&str> = HashSet::new();
    for (i, l) in listed.iter().enumerate() {
        let Some(names) = l.names else {
            plan.unopened.push(i);
            continue;
        };
        let generations: Vec<String> = names
            .iter()
            .filter_map(|n| live.get_key_value(n.as_str()).map(|(k, _)| *k))
            .filter(|n| covered.insert(n))
            .map(str::to_string)
            .collect();
        if generations.is_empty() {
            plan.emptied.push(i);
        } else {
            kept.push(Part {
                segment: i,
                generations,
            });
        }
    }
    let mut uncovered: Vec<&str> = live
        .keys()
        .copied()
        .filter(|g| !covered.contains(g))
        .collect();
    uncovered.sort_unstable();
    let deferring = pass.defer.is_some_and(|d| {
        d == Deferral::ALL
            || !uncovered.is_empty()
                && uncovered.len() <= d.generations
                && uncovered.iter().filter_map(|g| live.get(g)).sum::<u64>() <= d.bytes
    });
    if deferring {
        plan.deferred = uncovered.len();
        uncovered.clear();
    }
    let entry = |p: &Part| listed[p.segment].entry;
    // Rebuilt alone: segments whose generations are mostly gone, or that
    // name a purged one.
    let dead: Vec<bool> = kept
        .iter()
        .map(|p| {
            (!deferring && (p.generations.len() as u64) * 2 < entry(p).generations)
                || listed[p.segment]
                    .names
                    .is_some_and(|n| n.iter().any(|n| pass.purge.contains(n)))
        })
        .collect();
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (k, p) in kept.iter().enumerate() {
        let bytes = entry(p).source_bytes;
        if bytes < MAX_MERGED_BYTES && !dead[k] {
            tiers.entry(tier(bytes)).or_default().push(k);
        }
    }
    let mut group: Vec<usize> = Vec::new();
    for members in tiers.values_mut().filter(|_| !deferring && pass.merge) {
        if members.len() < MERGE_FACTOR {
            continue;
        }
        members.sort_by_key(|&k| entry(&kept[k]).source_bytes);
        members.truncate(MERGE_FACTOR);
        let total: u64 = members.iter().map(|&k| entry(&kept[k]).source_bytes).sum();
        if total <= MAX_MERGED_BYTES {
            group = members.clone();
            break;
        }
    }
    plan.changes = pass.listed_fresh
        || !uncovered.is_empty()
        || !group.is_empty()
        || dead.contains(&true)
        || !plan.unopened.is_empty()
        || !plan.emptied.is_empty();
    if !plan.changes {
        plan.keep = kept;
        return plan;
    }
    let merge_of = |inputs: Vec<Part>| Merge {
        source_bytes: inputs
            .iter()
            .flat_map(|p| &p.generations)
            .filter_map(|g| live.get(g.as_str()))
            .sum(),
        inputs,
    };
    let mut tier_merge: Vec<Part> = Vec::new();
    for (k, p) in kept.into_iter().enumerate() {
        if dead[k] {
            plan.merges.push(merge_of(vec![p]));
        } else if group.contains(&k) {
            tier_merge.push(p);
        } else {
            plan.keep.push(p);
        }
    }
    if !tier_merge.is_empty() {
        plan.merges.push(merge_of(tier_merge));
    }
    let uncovered: Vec<String> = uncovered.iter().map(|g| g.to_string()).collect();
    plan.builds = chunks(&uncovered, live)
        .into_iter()
        .map(|run| {
            run.iter()
                .map(|g| (g.clone(), live.get(g.as_str()).copied().unwrap_or(0)))
                .collect()
        })
        .collect();
    plan
}

/// The segments of `fresh` that the tier policy merges first: the first
/// [`MERGE_FACTOR`] of one tier (in the order given) whose merge stays
/// within [`MAX_MERGED_BYTES`]; their indices.
pub fn fresh_merge(fresh: &[SegmentRef]) -> Option<Vec<usize>> {
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
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
mod reference;
#[cfg(test)]
mod tests;
