//! The ledger: the indexer's private bookkeeping beside the catalog, which
//! searchers never read.
//!
//! It remembers what the catalog cannot: whether the first full backfill
//! finished, when the last sweep ran, the generations publishes took out of
//! the catalog (for the garbage collector), and the discovery units that
//! yield no published session (no session at all, dropped by retention, a
//! duplicate of another unit's session, or unreadable) with their file
//! cursors, so an unchanged one is not read again on every sweep.
//!
//! On disk: a base `indexer.json` (the whole state, with an `epoch`) and a
//! journal `ledger.jsonl`, one line per change (what a publish or a
//! collection changed, tagged with the base's epoch), appended and fsynced (a
//! torn tail left by a crash is cut off first)
//! under the writer lock, so a live append writes a line, not the whole
//! state. A reader replays the lines of its base's epoch and stops at the
//! first that does not parse (a torn tail). When the journal outgrows the
//! base (and [`JOURNAL_MIN`]) it is folded into a new base of the next epoch
//! (atomic rename) and removed: a crash in between leaves lines of the old
//! epoch, which are ignored. Losing the ledger costs work, never correctness.

use super::fsutil::write_replace;
use recall_core::model::FileCursor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

pub use recall_core::layout::store::{JOURNAL, STATE};
/// Journal bytes below which it is never folded into the base.
pub const JOURNAL_MIN: u64 = 256 << 10;

/// Why a discovered unit has no session in the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The extractor found no session in it (e.g. an Intendant wrapper log).
    Empty,
    /// Its newest message is older than the retention horizon.
    Retired,
    /// Another unit yields the same session key.
    Duplicate,
    /// It could not be read (see `error`): retried only when its files
    /// change, named in status meanwhile.
    Failed,
    /// Forgotten (`recall forget`): not read again until its files change.
    Forgotten,
    /// Its cwd (`cwd`) lies under an excluded path of the policy: never read
    /// again while it does, however its files change.
    Excluded,
}

/// A unit that is not in the manifest, and the cursors it was judged on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedUnit {
    /// Why.
    pub reason: SkipReason,
    /// The session key it yielded, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Newest message timestamp (retired units: re-read if the horizon moves back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest_ms: Option<i64>,
    /// Discovery context fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The unit's files when judged.
    pub files: Vec<FileCursor>,
    /// Why it failed (`Failed` units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The session's cwd (`Excluded` units: read again once no excluded
    /// path covers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// The whole state file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexerState {
    /// The store this state belongs to; a mismatch means the store was
    /// cleared or rebuilt and the state is void.
    pub store_id: String,
    /// The first full backfill of this store finished.
    pub backfilled: bool,
    /// Wall-clock ms when the last complete sweep finished.
    pub last_sweep_ms: i64,
    /// Wall-clock ms of the last full garbage collection.
    #[serde(default)]
    pub last_full_gc_ms: i64,
    /// Units without a published session, by main file path.
    #[serde(default)]
    pub skipped: BTreeMap<String, SkippedUnit>,
    /// Generations a publish took out of the manifest, and when: deleted once
    /// no servable snapshot can reference them.
    #[serde(default)]
    pub garbage: BTreeMap<String, i64>,
    /// Which base this is: journal lines of another epoch are ignored.
    #[serde(default)]
    pub epoch: u64,
}

/// One journal line: what changed since the previous line.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Delta {
    epoch: u64,
    store_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backfilled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_sweep_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_full_gc_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<(String, Option<SkippedUnit>)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    garbage: Vec<(String, Option<i64>)>,
}

impl Delta {
    fn between(a: &IndexerState, b: &IndexerState) -> Delta {
        Delta {
            epoch: b.epoch,
            store_id: b.store_id.clone(),
            backfilled: (a.backfilled != b.backfilled).then_some(b.backfilled),
            last_sweep_ms: (a.last_sweep_ms != b.last_sweep_ms).then_some(b.last_sweep_ms),
            last_full_gc_ms: (a.last_full_gc_ms != b.last_full_gc_ms).then_some(b.last_full_gc_ms),
            skipped: diff(&a.skipped, &b.skipped),
            garbage: diff(&a.garbage, &b.garbage),
        }
    }

    fn is_empty(&self) -> bool {
        self.backfilled.is_none()
            && self.last_sweep_ms.is_none()
            && self.last_full_gc_ms.is_none()
            && self.skipped.is_empty()
            && self.garbage.is_empty()
    }

    fn apply(self, st: &mut IndexerState) {
        if let Some(v) = self.backfilled {
            st.backfilled = v;
        }
        if let Some(v) = self.last_sweep_ms {
            st.last_sweep_ms = v;
        }
        if let Some(v) = self.last_full_gc_ms {
            st.last_full_gc_ms = v;
        }
        patch(&mut st.skipped, self.skipped);
        patch(&mut st.garbage, self.garbage);
    }
}

fn diff<V: Clone + PartialEq>(
    a: &BTreeMap<String, V>,
    b: &BTreeMap<String, V>,
) -> Vec<(String, Option<V>)> {
    let mut out: Vec<(String, Option<V>)> = b
        .iter()
        .filter(|(k, v)| a.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), Some(v.clone())))
        .collect();
    out.extend(
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .map(|k| (k.clone(), None)),
    );
    out
}

fn patch<V>(m: &mut BTreeMap<String, V>, changes: Vec<(String, Option<V>)>) {
    for (k, v) in changes {
        match v {
            Some(v) => m.insert(k, v),
            None => m.remove(&k),
        };
    }
}

/// Reads the state for `store_id`: the base, then its journal (anything
/// unreadable or for another store is the default).
pub fn read(dir: &Path, store_id: &str) -> IndexerState {
    let mut st = fs::read(dir.join(STATE))
        .ok()
        .and_then(|b| serde_json::from_slice::<IndexerState>(&b).ok())
        .filter(|s| s.store_id == store_id && !store_id.is_empty())
        .unwrap_or_else(|| IndexerState {
            store_id: store_id.to_string(),
            ..IndexerState::default()
        });
    if let Ok(journal) = fs::read(dir.join(JOURNAL)) {
        for line in journal.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(d) = serde_json::from_slice::<Delta>(line) else {
                break;
            };
            if d.epoch == st.epoch && d.store_id == st.store_id && !store_id.is_empty() {
                d.apply(&mut st);
            }
        }
    }
    st
}

/// Records the change from `before` (what [`read`] returned) to `after`
/// (writer lock held): one journal line, or a new base when the store id
/// changed or the journal outgrew the base. Nothing changed ⇒ nothing
/// written.
pub fn write(dir: &Path, before: &IndexerState, after: &IndexerState) -> std::io::Result<()> {
    let jpath = dir.join(JOURNAL);
    let journal = fs::metadata(&jpath).map_or(0, |m| m.len());
    let base = fs::metadata(dir.join(STATE)).map_or(0, |m| m.len());
    if before.store_id != after.store_id || journal > JOURNAL_MIN.max(base) {
        return write_base(dir, after);
    }
    let delta = Delta::between(before, after);
    if delta.is_empty() {
        return Ok(());
    }
    let mut line = serde_json::to_vec(&delta).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&jpath)?;
    // A torn line left by a crash would hide this one: cut it off first.
    if journal > 0 {
        if let Ok(b) = fs::read(&jpath) {
            if b.last() != Some(&b'\n') {
                let keep = b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
                f.set_len(keep as u64)?;
            }
        }
    }
    f.write_all(&line)?;
    f.sync_data()
}

/// Folds everything into a new base of the next epoch and drops the journal.
fn write_base(dir: &Path, state: &IndexerState) -> std::io::Result<()> {
    let mut st = state.clone();
    st.epoch = st.epoch.wrapping_add(1);
    let bytes = serde_json::to_vec(&st).map_err(std::io::Error::other)?;
    write_replace(dir, ".state.tmp", &dir.join(STATE), &bytes)?;
    match fs::remove_file(dir.join(JOURNAL)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(reason: SkipReason) -> SkippedUnit {
        SkippedUnit {
            reason,
            key: None,
            newest_ms: None,
            context: None,
            files: vec![],
            error: None,
            cwd: None,
        }
    }

    #[test]
    fn the_journal_replays_ignores_a_torn_tail_and_folds_into_the_base() {
        let dir =
            std::env::temp_dir().join(format!("recall-ledger-{}", super::super::random_hex(6)));
        fs::create_dir_all(&dir).unwrap();
        let mut st = read(&dir, "s");
        let mut prev = st.clone();
        st.backfilled = true;
        st.skipped.insert("/a".into(), unit(SkipReason::Empty));
        write(&dir, &prev, &st).unwrap();
        assert_eq!(read(&dir, "s"), st);
        for i in 0..50 {
            prev = st.clone();
            st.garbage.insert(format!("g{i}"), i);
            if i % 3 == 0 {
                st.skipped.remove("/a");
            } else {
                st.skipped.insert("/a".into(), unit(SkipReason::Failed));
            }
            write(&dir, &prev, &st).unwrap();
            assert_eq!(read(&dir, "s"), st);
        }
        let base = fs::metadata(dir.join(STATE)).map_or(0, |m| m.len());
        let journal = fs::metadata(dir.join(JOURNAL)).unwrap().len();
        assert!(
            journal / 50 < 200,
            "{journal} B for 50 small changes (base {base} B)"
        );
        // Nothing changed: nothing written.
        write(&dir, &st, &st).unwrap();
        assert_eq!(fs::metadata(dir.join(JOURNAL)).unwrap().len(), journal);
        // A torn last line is ignored, and the next line starts fresh.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(dir.join(JOURNAL))
            .unwrap();
        f.write_all(b"{\"epoch\":1,\"store_id\":\"s\",\"garb")
            .unwrap();
        drop(f);
        assert_eq!(read(&dir, "s"), st);
        prev = st.clone();
        st.last_sweep_ms = 77;
        write(&dir, &prev, &st).unwrap();
        assert_eq!(read(&dir, "s"), st);
        // Another store's ledger is void.
        assert_eq!(read(&dir, "t").garbage.len(), 0);
        // Lines of an older epoch are ignored after a fold.
        let folded = IndexerState {
            epoch: st.epoch,
            ..st.clone()
        };
        write_base(&dir, &folded).unwrap();
        let mut again = read(&dir, "s");
        again.epoch = st.epoch;
        assert_eq!(again, st);
        let _ = fs::remove_dir_all(&dir);
    }
}
