//! Resuming appended units (DESIGN.md §6: "Appended: read only past the
//! offset"): the extraction checkpoint of a live unit is saved with the
//! file cursors it was taken at, and trusted again only while each file it
//! read is, by those cursors, Unchanged or Appended.
//!
//! Checkpoints are written for units seen growing (Appended) or born since
//! the backfill (New outside a backfill) — the sessions an agent is writing
//! now. A backfill writes none, so it costs nothing for the archive.
//!
//! A one-shot process (`recall index`, a CLI search's refresh) writes each
//! checkpoint at once. A long-lived indexer (`recall serve`,
//! [`LiveCheckpoints`]) keeps them in memory and writes them out lazily:
//! once their session has been quiet for [`IDLE_FLUSH`], when the memory
//! cap evicts them, and when the indexer is dropped. A crash loses only
//! speed: the next sweep resumes from the older checkpoint on disk (still
//! exact: it is validated against its own cursors) or reads the unit whole.

use super::cursor::{classify, Change};
use super::PARSER_VERSION;
use crate::extract::Checkpoint;
use crate::store::{checkpoints, Store};
use recall_core::model::FileCursor;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A checkpoint as stored: with the parser version and the cursors of the
/// extraction that made it.
#[derive(Serialize, Deserialize)]
struct Saved {
    parser_version: u32,
    cursors: Vec<FileCursor>,
    checkpoint: Checkpoint,
}

/// How long a live checkpoint stays only in memory after its last update.
pub const IDLE_FLUSH: Duration = Duration::from_secs(300);

/// Source bytes (of the files the checkpoints read) the in-memory
/// checkpoints may cover; past it the least recently updated are written
/// out and dropped. Checkpoints measured 23–34 % of their sources, so this
/// holds roughly 20 MiB of checkpoint state.
pub const MEMORY_SOURCE_BYTES: u64 = 64 << 20;

/// Live units' checkpoints held in memory by a long-lived indexer.
#[derive(Default)]
pub struct LiveCheckpoints {
    held: Mutex<HashMap<String, Held>>,
}

struct Held {
    saved: Saved,
    /// Source bytes it covers (its cost toward [`MEMORY_SOURCE_BYTES`]).
    cost: u64,
    at: Instant,
    /// Not yet on disk.
    dirty: bool,
}

impl std::fmt::Debug for LiveCheckpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, dirty) = self.counts();
        write!(f, "LiveCheckpoints({n} held, {dirty} unwritten)")
    }
}

impl LiveCheckpoints {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// (held, not yet written).
    pub fn counts(&self) -> (usize, usize) {
        let h = self.lock();
        (h.len(), h.values().filter(|x| x.dirty).count())
    }

    /// Writes out the unwritten checkpoints not updated for `idle` (all of
    /// them for `Duration::ZERO`); they stay held. Returns how many.
    pub fn flush(&self, store: &Store, idle: Duration) -> usize {
        let due: Vec<(String, Vec<u8>)> = {
            let mut h = self.lock();
            h.iter_mut()
                .filter(|(_, x)| x.dirty && x.at.elapsed() >= idle)
                .filter_map(|(u, x)| {
                    x.dirty = false;
                    serde_json::to_vec(&x.saved).ok().map(|b| (u.clone(), b))
                })
                .collect()
        };
        for (unit, body) in &due {
            let _ = checkpoints::write(store.dir(), unit, body);
        }
        due.len()
    }

    fn take(&self, unit: &str) -> Option<Saved> {
        self.lock().remove(unit).map(|x| x.saved)
    }

    fn put(&self, store: &Store, unit: &str, saved: Saved) {
        let cost = saved.checkpoint.files.iter().map(|f| f.offset).sum::<u64>();
        let evicted: Vec<(String, Saved)> = {
            let mut h = self.lock();
            h.insert(
                unit.to_string(),
                Held {
                    saved,
                    cost,
                    at: Instant::now(),
                    dirty: true,
                },
            );
            let mut total: u64 = h.values().map(|x| x.cost).sum();
            let mut out = Vec::new();
            while total > MEMORY_SOURCE_BYTES && h.len() > 1 {
                let Some(oldest) = h.iter().min_by_key(|(_, x)| x.at).map(|(k, _)| k.clone())
                else {
                    break;
                };
                if let Some(x) = h.remove(&oldest) {
                    total -= x.cost;
                    if x.dirty {
                        out.push((oldest, x.saved));
                    }
                }
            }
            out
        };
        for (u, s) in evicted {
            write(store, &u, &s);
        }
    }
}

/// Whether `saved` can still be resumed from: written by this parser
/// version, and every file it read still holds the bytes it read (same
/// path and offset in its cursor, classified Unchanged or Appended now).
fn usable(saved: &Saved) -> bool {
    saved.parser_version == PARSER_VERSION
        && saved.checkpoint.files.iter().all(|fed| {
            saved
                .cursors
                .iter()
                .find(|c| Path::new(&c.path) == fed.path)
                .is_some_and(|c| {
                    c.offset == fed.offset
                        && matches!(classify(&fed.path, c), Change::Unchanged | Change::Appended)
                })
        })
}

/// The checkpoint of `unit`, when it can still be resumed from (see
/// [`usable`]): the one held in memory first, else the one on disk.
pub fn load(store: &Store, live: Option<&LiveCheckpoints>, unit: &str) -> Option<Checkpoint> {
    if let Some(saved) = live.and_then(|l| l.take(unit)) {
        if usable(&saved) {
            return Some(saved.checkpoint);
        }
    }
    let bytes = checkpoints::read(store.dir(), unit)?;
    let saved: Saved = serde_json::from_slice(&bytes).ok()?;
    usable(&saved).then_some(saved.checkpoint)
}

fn write(store: &Store, unit: &str, saved: &Saved) {
    if let Ok(body) = serde_json::to_vec(saved) {
        let _ = checkpoints::write(store.dir(), unit, &body);
    }
}

/// Saves the checkpoint of `unit` taken at `cursors`: in memory when `live`
/// holds checkpoints, else on disk. Failing to save only costs a full read
/// next time.
pub fn save(
    store: &Store,
    live: Option<&LiveCheckpoints>,
    unit: &str,
    checkpoint: Checkpoint,
    cursors: &[FileCursor],
) {
    let saved = Saved {
        parser_version: PARSER_VERSION,
        cursors: cursors.to_vec(),
        checkpoint,
    };
    match live {
        Some(l) => l.put(store, unit, saved),
        None => write(store, unit, &saved),
    }
}

/// Drops the checkpoint of `unit` (it no longer matches its files).
pub fn forget(store: &Store, live: Option<&LiveCheckpoints>, unit: &str) {
    if let Some(l) = live {
        l.take(unit);
    }
    checkpoints::remove(store.dir(), unit);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{self, Roots};

    /// A real checkpoint (of a fixture transcript) and its store.
    fn setup(tag: &str) -> (std::path::PathBuf, Store, Checkpoint) {
        let home =
            std::env::temp_dir().join(format!("recall-live-cp-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let dir = home.join(".pi/agent/sessions/--home-u-code--");
        std::fs::create_dir_all(&dir).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/store_support/fixtures/pi-alpha.jsonl");
        std::fs::copy(fixture, dir.join("pi-alpha.jsonl")).unwrap();
        let units = extract::discover(&Roots::resolve(&home, |_| None));
        let unit = &units[0];
        let ends: Vec<u64> = unit
            .files
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .collect();
        let cp = extract::extract_resumable(unit, &ends, None)
            .unwrap()
            .checkpoint
            .unwrap();
        let store = Store::open(&home.join("store")).unwrap();
        (home, store, cp)
    }

    fn costing(cp: &Checkpoint, bytes: u64) -> Checkpoint {
        let mut cp = cp.clone();
        cp.files[0].offset = bytes;
        cp
    }

    #[test]
    fn held_checkpoints_are_written_when_evicted_idle_or_flushed() {
        let (home, store, cp) = setup("cap");
        let live = LiveCheckpoints::default();
        let third = MEMORY_SOURCE_BYTES / 3 + 1;
        for u in ["a", "b"] {
            save(&store, Some(&live), u, costing(&cp, third), &[]);
        }
        assert_eq!(live.counts(), (2, 2));
        assert!(
            checkpoints::read(store.dir(), "a").is_none(),
            "held in memory"
        );
        // A third one passes the cap: the least recently saved goes to disk.
        save(&store, Some(&live), "c", costing(&cp, third), &[]);
        assert_eq!(live.counts(), (2, 2));
        assert!(
            checkpoints::read(store.dir(), "a").is_some(),
            "evicted to disk"
        );
        assert!(checkpoints::read(store.dir(), "b").is_none());
        // Not idle yet: nothing written; a shutdown flush writes the rest.
        assert_eq!(live.flush(&store, IDLE_FLUSH), 0);
        assert_eq!(live.flush(&store, Duration::ZERO), 2);
        assert_eq!(live.counts(), (2, 0));
        for u in ["b", "c"] {
            assert!(checkpoints::read(store.dir(), u).is_some(), "{u}");
        }
        // Taken by a load (unusable here: saved without cursors), forgotten
        // from memory and disk alike.
        assert!(load(&store, Some(&live), "b").is_none());
        forget(&store, Some(&live), "c");
        assert_eq!(live.counts(), (0, 0));
        assert!(checkpoints::read(store.dir(), "c").is_none());
        let _ = std::fs::remove_dir_all(home);
    }
}
