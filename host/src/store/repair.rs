//! Queuing damaged sessions for re-extraction: an entry whose generation
//! file is missing, not the length the manifest says, or found damaged by a
//! reader (its bytes do not hash to its name: overwritten, even at the same
//! length) keeps its place — searches answer `partial` (`unreadable`) for
//! it — but loses its file cursors, so the next plan finds its unit new and
//! extracts it again.
//!
//! A reader cannot re-extract, so it leaves a *damage note* (an empty file
//! `damaged/<generation>`, best effort: a read-only store only loses the
//! note); a note makes the indexer's next sweep a full one, which queues
//! what the notes name. Only the indexer queues and removes notes.
//!
//! A segment a reader found a bad block in gets a note too
//! (`damaged/<segment>`): the indexer's next maintenance pass checks every
//! block of it and drops it when one fails, so its sessions are indexed
//! into a new segment.

use super::{wall_ms, Loaded, Store, StoreError};
use recall_core::layout::{is_generation_name, is_segment_name, store::DAMAGED};
use std::collections::BTreeSet;
use std::fs;

impl Store {
    /// Notes that the generation `name` is damaged (a reader found that its
    /// bytes do not hash to its name). Best effort, never an error.
    pub fn note_damaged(&self, name: &str) {
        if is_generation_name(name) {
            self.note(name);
        }
    }

    /// Notes that the segment `name` has a bad block. Best effort.
    pub fn note_damaged_segment(&self, name: &str) {
        if is_segment_name(name) {
            self.note(name);
        }
    }

    /// Leaves the note `damaged/<name>` (a checked file name).
    fn note(&self, name: &str) {
        let dir = self.dir().join(DAMAGED);
        if fs::create_dir_all(&dir).is_ok() {
            let _ = fs::File::create(dir.join(name));
        }
    }

    /// The segments the damage notes name.
    pub(crate) fn segment_notes(&self) -> BTreeSet<String> {
        self.notes()
            .into_iter()
            .filter(|n| is_segment_name(n))
            .collect()
    }

    /// Removes the notes of segments (once the indexer checked them).
    pub(crate) fn remove_segment_notes(&self, notes: &BTreeSet<String>) {
        self.remove_notes(notes);
    }

    /// Whether any damage note waits for a sweep (one directory read).
    pub fn has_damage_notes(&self) -> bool {
        fs::read_dir(self.dir().join(DAMAGED)).is_ok_and(|mut d| d.next().is_some())
    }

    /// The generations the damage notes name.
    fn damage_notes(&self) -> BTreeSet<String> {
        self.notes()
            .into_iter()
            .filter(|n| is_generation_name(n))
            .collect()
    }

    /// Every damage note.
    fn notes(&self) -> BTreeSet<String> {
        let Ok(dir) = fs::read_dir(self.dir().join(DAMAGED)) else {
            return BTreeSet::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect()
    }

    /// Clears the file cursors of every entry whose generation is damaged —
    /// named by a damage note, missing, or of the wrong length (one `stat`
    /// per entry) — and publishes that as a new revision. The notes are
    /// removed once handled. Returns the keys queued.
    pub fn queue_damaged(&self) -> Result<Vec<String>, StoreError> {
        let notes = self.damage_notes();
        // A noted generation is checked again (its bytes must still not hash
        // to its name) and removed: a same-length body would otherwise be
        // taken for the re-extracted one and kept.
        let confirmed: BTreeSet<String> = notes
            .iter()
            .filter(|n| {
                self.generation_bytes(n)
                    .is_ok_and(|b| recall_core::layout::generation_file_name(&b) != **n)
            })
            .cloned()
            .collect();
        let damaged = |m: &recall_core::Manifest| -> Vec<String> {
            m.sessions
                .iter()
                .filter(|(_, e)| !e.files.is_empty())
                .filter(|(_, e)| {
                    if confirmed.contains(&e.generation_file) {
                        return true;
                    }
                    let meta = self
                        .generation_path(&e.generation_file)
                        .and_then(|p| fs::metadata(p).ok());
                    meta.is_none_or(|m| e.bytes > 0 && m.len() != e.bytes)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        let cur = self.current()?;
        if damaged(&cur).is_empty() {
            self.remove_notes(&notes);
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        let Loaded::Ok(base) = self.load()? else {
            return Ok(Vec::new());
        };
        let keys = damaged(&base);
        if !keys.is_empty() {
            let mut m = (*base).clone();
            for k in &keys {
                if let Some(e) = m.sessions.get_mut(k) {
                    e.files.clear();
                }
            }
            m.revision = super::manifest::next_revision(self.dir(), m.revision)?;
            m.updated_at_ms = wall_ms();
            self.commit(m)?;
        }
        for n in &confirmed {
            if let Some(p) = self.generation_path(n) {
                let _ = fs::remove_file(p);
            }
        }
        self.remove_notes(&notes);
        Ok(keys)
    }

    fn remove_notes(&self, notes: &BTreeSet<String>) {
        let dir = self.dir().join(DAMAGED);
        for n in notes {
            let _ = fs::remove_file(dir.join(n));
        }
        let _ = fs::remove_dir(dir);
    }
}
