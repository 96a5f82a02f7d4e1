//! Planning a sweep: which discovered units must be (re-)extracted, which
//! are unchanged, and which sessions lost their sources.
//!
//! A unit is matched to its manifest entry by its main file (the first of
//! its files, which is also the first file cursor of the entry). Its files
//! are classified against the entry's cursors; only `.jsonl` logs can make a
//! session Rewritten — a changed sidecar or state file just re-extracts it.

use super::cursor::{classify, Change};
use crate::extract::SessionSource;
use crate::store::retention::newest_ms;
use crate::store::{publish::context_of, IndexerState, SkipReason};
use recall_core::model::{FileCursor, Manifest, ManifestEntry};
use std::collections::{HashMap, HashSet};
use std::fs;

/// Why a unit is extracted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Not in the manifest.
    New,
    /// Grown, touched, or a non-log file changed: same generation.
    Appended,
    /// A log file was replaced or changed before its old offset: generation + 1.
    Rewritten,
    /// The store was written by an older parser: extract afresh.
    Reparse,
}

/// One unit to extract.
#[derive(Clone, Debug)]
pub struct Work {
    /// The unit.
    pub src: SessionSource,
    /// Why.
    pub kind: Kind,
    /// The session it produced last time.
    pub old_key: Option<String>,
    /// Its generation file.
    pub old_file: Option<String>,
    /// Its generation.
    pub old_generation: u32,
    /// Discovery context fingerprint.
    pub context: Option<String>,
    /// Total size of its files now.
    pub bytes: u64,
    /// Newest mtime of its files (work runs newest first).
    pub mtime_ns: i128,
}

/// The plan of one sweep.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Units to extract, newest first.
    pub work: Vec<Work>,
    /// Units whose session is current.
    pub unchanged: usize,
    /// Units without a session whose files did not change.
    pub skipped_unchanged: usize,
    /// Keys that were `source_gone` and whose unchanged sources are back.
    pub revived: Vec<String>,
    /// Keys whose sources are no longer discovered.
    pub gone: Vec<String>,
    /// Skipped-unit records whose unit is no longer discovered.
    pub forget: Vec<String>,
    /// Main paths of units that keep their session (claims on keys).
    pub claims: HashMap<String, String>,
    /// Roots that cannot be listed or did not answer in time (filled by
    /// the bounded discovery, [`super::roots`]).
    pub degraded_roots: Vec<super::progress::DegradedRoot>,
    /// Files discovery left out (not regular, or not answering): `path:
    /// reason`. Empty unless the plan came from [`crate::index::Indexer::plan`].
    pub skipped_files: Vec<String>,
}

impl Plan {
    /// Files the plan reads.
    pub fn files_due(&self) -> u64 {
        self.work.iter().map(|w| w.src.files.len() as u64).sum()
    }

    /// Bytes the plan reads.
    pub fn bytes_due(&self) -> u64 {
        self.work.iter().map(|w| w.bytes).sum()
    }
}

/// Whether a path is a transcript log (rewrites bump the generation).
fn is_log(path: &str) -> bool {
    path.ends_with(".jsonl") || path.ends_with(".jsonl.zst") || path.ends_with(".jsonl.zstd")
}

/// The context fingerprint of a unit (`None` when it has none).
pub fn context_fingerprint(v: &serde_json::Value) -> Option<String> {
    (!v.is_null()).then(|| recall_core::naming::hash16(v.to_string().as_bytes()))
}

/// The session generation recorded in an entry's cursors.
pub fn generation_of(e: &ManifestEntry) -> u32 {
    e.files.iter().map(|c| c.generation).max().unwrap_or(0)
}

/// Classifies a unit's files against previous cursors.
fn classify_unit(files: &[std::path::PathBuf], cursors: &[FileCursor]) -> Change {
    // The common case: the same files in the same order, all unchanged.
    let same_list = files.len() == cursors.len()
        && files
            .iter()
            .zip(cursors)
            .all(|(f, c)| f.as_os_str().as_encoded_bytes() == c.path.as_bytes());
    if same_list
        && files
            .iter()
            .zip(cursors)
            .all(|(f, c)| classify(f, c) == Change::Unchanged)
    {
        return Change::Unchanged;
    }
    let old: HashMap<&str, &FileCursor> = cursors.iter().map(|c| (c.path.as_str(), c)).collect();
    let now: HashSet<String> = files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let mut worst = Change::Unchanged;
    let rank = |c: Change| match c {
        Change::Unchanged => 0,
        Change::Appended => 1,
        Change::Gone | Change::Rewritten => 2,
    };
    let bump = |worst: &mut Change, c: Change| {
        if rank(c) > rank(*worst) {
            *worst = c;
        }
    };
    for c in cursors {
        if !now.contains(&c.path) {
            bump(
                &mut worst,
                if is_log(&c.path) {
                    Change::Rewritten
                } else {
                    Change::Appended
                },
            );
        }
    }
    for f in files {
        let p = f.to_string_lossy();
        match old.get(p.as_ref()) {
            None => bump(&mut worst, Change::Appended),
            Some(c) => match classify(f, c) {
                Change::Unchanged => {}
                Change::Appended => bump(&mut worst, Change::Appended),
                Change::Rewritten | Change::Gone if is_log(&p) => {
                    bump(&mut worst, Change::Rewritten)
                }
                Change::Rewritten | Change::Gone => bump(&mut worst, Change::Appended),
            },
        }
        if worst == Change::Rewritten {
            break;
        }
    }
    match worst {
        Change::Gone => Change::Rewritten,
        w => w,
    }
}

fn size_and_mtime(files: &[std::path::PathBuf]) -> (u64, i128) {
    use std::os::unix::fs::MetadataExt;
    let mut bytes = 0;
    let mut mtime = 0i128;
    for f in files {
        if let Ok(m) = fs::metadata(f) {
            bytes += m.len();
            mtime = mtime.max(i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()));
        }
    }
    (bytes, mtime)
}

/// Plans a sweep over the discovered `units`. `focused` = `units` are not
/// a whole discovery but the few whose files changed in place: no session is
/// gone for not being among them, and every current session keeps its claim
/// on its key.
pub fn plan(
    units: Vec<SessionSource>,
    m: &Manifest,
    st: &IndexerState,
    reparse: bool,
    horizon: Option<i64>,
    focused: bool,
) -> Plan {
    let by_main: HashMap<&str, (&String, &ManifestEntry)> = m
        .sessions
        .iter()
        .filter_map(|(k, e)| e.files.first().map(|c| (c.path.as_str(), (k, e))))
        .collect();
    let mains: HashSet<String> = units
        .iter()
        .filter_map(|u| u.files.first().map(|p| p.to_string_lossy().into_owned()))
        .collect();
    let mut plan = Plan::default();
    if focused {
        plan.claims = by_main
            .iter()
            .filter(|(_, (_, e))| !e.source_gone)
            .map(|(main, (k, _))| ((*k).clone(), main.to_string()))
            .collect();
    }
    let mut seen: HashSet<String> = HashSet::new();
    for src in units {
        let Some(main) = src.files.first().map(|p| p.to_string_lossy().into_owned()) else {
            continue;
        };
        if !seen.insert(main.clone()) {
            continue;
        }
        let context = context_fingerprint(&src.context);
        let mut work = Work {
            src,
            kind: Kind::New,
            old_key: None,
            old_file: None,
            old_generation: 0,
            context,
            bytes: 0,
            mtime_ns: 0,
        };
        // A unit that failed is not read again until its files change (its
        // old entry, if any, stays and keeps its claim).
        if let Some(sk) = st
            .skipped
            .get(&main)
            .filter(|s| s.reason == SkipReason::Failed)
        {
            if !reparse
                && sk.context == work.context
                && classify_unit(&work.src.files, &sk.files) == Change::Unchanged
            {
                plan.skipped_unchanged += 1;
                if let Some((key, _)) = by_main.get(main.as_str()) {
                    plan.claims.insert((*key).clone(), main.clone());
                }
                continue;
            }
        }
        if let Some((key, e)) = by_main.get(main.as_str()) {
            work.old_key = Some((*key).clone());
            work.old_file = Some(e.generation_file.clone());
            work.old_generation = generation_of(e);
            let change = if reparse {
                Change::Rewritten
            } else {
                classify_unit(&work.src.files, &e.files)
            };
            work.kind = match change {
                _ if reparse => Kind::Reparse,
                Change::Unchanged if work.context == context_of(e) => {
                    plan.unchanged += 1;
                    plan.claims.insert((*key).clone(), main.clone());
                    if e.source_gone {
                        plan.revived.push((*key).clone());
                    }
                    continue;
                }
                Change::Unchanged | Change::Appended => Kind::Appended,
                Change::Rewritten | Change::Gone => Kind::Rewritten,
            };
        } else if let Some(sk) = st.skipped.get(&main) {
            // Forgotten: not read again while its files are unchanged (a
            // new parser or context changes nothing). Excluded: never read
            // while excluded (the sweep passes only those still excluded).
            let kept_out = match sk.reason {
                SkipReason::Forgotten => {
                    classify_unit(&work.src.files, &sk.files) == Change::Unchanged
                }
                SkipReason::Excluded => true,
                _ => false,
            };
            if kept_out {
                plan.skipped_unchanged += 1;
                continue;
            }
            let horizon_moved = sk.reason == SkipReason::Retired
                && sk.newest_ms.is_some_and(|n| horizon.is_none_or(|h| n >= h));
            // A duplicate whose owner lost its sources may take over.
            let owner_lost = sk.reason == SkipReason::Duplicate
                && sk.key.as_ref().is_none_or(|k| {
                    m.sessions.get(k).is_none_or(|e| {
                        e.source_gone
                            || e.files
                                .first()
                                .is_none_or(|c| !mains.contains(c.path.as_str()))
                    })
                });
            let same = !reparse
                && !horizon_moved
                && !owner_lost
                && sk.context == work.context
                && classify_unit(&work.src.files, &sk.files) == Change::Unchanged;
            if same {
                plan.skipped_unchanged += 1;
                continue;
            }
        }
        let (bytes, mtime) = size_and_mtime(&work.src.files);
        work.bytes = bytes;
        work.mtime_ns = mtime;
        plan.work.push(work);
    }
    if !focused {
        for (main, (key, e)) in &by_main {
            if !seen.contains(*main) && !e.source_gone {
                plan.gone.push((*key).clone());
            }
        }
        plan.gone.sort();
        plan.forget = st
            .skipped
            .keys()
            .filter(|p| !seen.contains(*p))
            .cloned()
            .collect();
    }
    plan.work.sort_by_key(|w| std::cmp::Reverse(w.mtime_ns));
    plan
}

/// Whether an entry is past the retention horizon.
pub fn expired(e: &ManifestEntry, horizon: Option<i64>) -> bool {
    match (horizon, newest_ms(e)) {
        (Some(h), Some(n)) => n < h,
        _ => false,
    }
}
