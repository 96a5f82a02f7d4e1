//! Queuing damaged sessions for re-extraction (issue #12 item 4): an entry
//! whose generation file is missing, or not the length the manifest says
//! (truncated, or overwritten by other bytes), keeps its place — searches
//! answer `partial` (`unreadable`) for it — but loses its file cursors, so
//! the next plan finds its unit new and extracts it again. Indexer only:
//! readers never write.

use super::{wall_ms, Loaded, Store, StoreError};
use std::fs;

impl Store {
    /// Clears the file cursors of every entry whose generation file is
    /// damaged (one `stat` per entry) and publishes that as a new revision.
    /// Returns the keys queued.
    pub fn queue_damaged(&self) -> Result<Vec<String>, StoreError> {
        let cur = self.current()?;
        let damaged = |m: &recall_core::Manifest| -> Vec<String> {
            m.sessions
                .iter()
                .filter(|(_, e)| !e.files.is_empty())
                .filter(|(_, e)| {
                    let meta = self
                        .generation_path(&e.generation_file)
                        .and_then(|p| fs::metadata(p).ok());
                    meta.is_none_or(|m| e.bytes > 0 && m.len() != e.bytes)
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        if damaged(&cur).is_empty() {
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        let Loaded::Ok(base) = self.load()? else {
            return Ok(Vec::new());
        };
        let keys = damaged(&base);
        if keys.is_empty() {
            return Ok(keys);
        }
        let mut m = (*base).clone();
        for k in &keys {
            if let Some(e) = m.sessions.get_mut(k) {
                e.files.clear();
            }
        }
        m.revision = super::manifest::next_revision(self.dir(), m.revision)?;
        m.updated_at_ms = wall_ms();
        self.commit(m)?;
        Ok(keys)
    }
}
