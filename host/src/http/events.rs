//! Revision announcements for `GET /api/events` (DESIGN.md §13 "Events"):
//! [`Revisions`], the hub that watches the served catalog's manifest and
//! broadcasts each new revision with the session keys it changed.
//!
//! The hub learns of a revision by reading the manifest (cheap: the store
//! reuses its parsed copy while `catalog.json` is unchanged), whoever
//! published it — this server's sweeps and query-time refreshes, `recall
//! index` or `recall forget` in another process, a clear. It reads when
//! poked (the indexer loop pokes it after every sweep) and at least every
//! [`POLL_EVERY`]. What changed is the difference between the manifest it
//! last saw and the new one, key by key; a store id that changed (a clear)
//! is announced as a reset. Announcements go to at most
//! [`MAX_SUBSCRIBERS`] streams (429 `busy` beyond); a stream that falls
//! behind gets a reset instead of what it missed.

use crate::engine::ReadCatalog;
use recall_core::model::Manifest;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, Notify};

/// Event streams open at once (one per dashboard tab); 429 beyond.
pub const MAX_SUBSCRIBERS: usize = 16;
/// The manifest is read at least this often while the server runs.
pub const POLL_EVERY: Duration = Duration::from_secs(1);
/// Keys named in one announcement; a revision that changed more says
/// `truncated` (the client reloads what it shows instead).
pub const MAX_KEYS: usize = 500;
/// Announcements a slow stream may fall behind before it gets a reset.
const BACKLOG: usize = 64;

/// One published revision, as `GET /api/events` sends it (`event:
/// revision`, this as the JSON `data`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Announcement {
    /// The store id (a new one after a clear).
    pub store_id: String,
    /// The revision now current.
    pub revision: u64,
    /// When it was written (epoch ms).
    pub updated_ms: i64,
    /// Sessions added or changed (at most [`MAX_KEYS`]).
    pub changed: Vec<String>,
    /// Sessions no longer in the index (forgotten, excluded, retired).
    pub removed: Vec<String>,
    /// More keys changed than are named: reload whatever is shown.
    pub truncated: bool,
    /// The store was cleared or rebuilt (or this stream fell behind):
    /// nothing shown before can be trusted.
    pub reset: bool,
}

/// What the hub last saw: the manifest it diffs the next one against.
type Seen = Option<Arc<Manifest>>;

/// The announcement hub of one server.
#[derive(Debug)]
pub struct Revisions {
    tx: broadcast::Sender<Arc<Announcement>>,
    poke: Notify,
    seen: Mutex<Seen>,
    closed: AtomicBool,
    close: Notify,
    /// Stream slots ([`MAX_SUBSCRIBERS`]).
    pub slots: super::limits::Slots,
}

impl Default for Revisions {
    fn default() -> Revisions {
        Revisions::new(MAX_SUBSCRIBERS)
    }
}

impl Revisions {
    /// A hub with `max` stream slots.
    pub fn new(max: usize) -> Revisions {
        Revisions {
            tx: broadcast::channel(BACKLOG).0,
            poke: Notify::new(),
            seen: Mutex::new(None),
            closed: AtomicBool::new(false),
            close: Notify::new(),
            slots: super::limits::Slots::named(max, "event streams"),
        }
    }

    /// Whether a stream is listening (the indexer loop then follows the
    /// sources closely instead of waiting for its next sweep).
    pub fn listening(&self) -> bool {
        self.tx.receiver_count() > 0 && !self.is_closed()
    }

    /// Asks the hub to read the manifest now (after a sweep). Callable from
    /// any thread.
    pub fn poke(&self) {
        self.poke.notify_one();
    }

    /// A receiver of the announcements from now on, and the revision it
    /// starts from.
    pub fn subscribe(&self) -> (broadcast::Receiver<Arc<Announcement>>, Announcement) {
        let rx = self.tx.subscribe();
        let start = match &*lock(&self.seen) {
            Some(m) => Announcement {
                store_id: m.store_id.clone(),
                revision: m.revision,
                updated_ms: m.updated_at_ms,
                ..Announcement::default()
            },
            None => Announcement::default(),
        };
        (rx, start)
    }

    /// Ends every stream (the server is stopping).
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.close.notify_waiters();
    }

    /// Whether [`Revisions::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Resolves once the hub is closed.
    pub async fn closed(&self) {
        let wait = self.close.notified();
        tokio::pin!(wait);
        wait.as_mut().enable();
        if self.is_closed() {
            return;
        }
        wait.await;
    }

    /// Takes in the manifest now current: announces it when its revision
    /// differs from the one last seen (the first one seen is only
    /// remembered). Returns the announcement sent, if any.
    pub fn observe(&self, m: Arc<Manifest>) -> Option<Arc<Announcement>> {
        let mut seen = lock(&self.seen);
        let a = match &*seen {
            None => None,
            Some(old) if old.store_id == m.store_id && old.revision == m.revision => None,
            Some(old) => Some(Arc::new(announce(old, &m))),
        };
        *seen = Some(m);
        drop(seen);
        if let Some(a) = &a {
            // No receiver is no error: nobody is listening.
            let _ = self.tx.send(a.clone());
        }
        a
    }

    /// Reads `catalog`'s manifest when poked and every [`POLL_EVERY`] until
    /// closed (runs on the server's runtime; the read itself on a blocking
    /// thread).
    pub async fn run(self: Arc<Revisions>, catalog: Arc<dyn ReadCatalog>) {
        loop {
            let read = {
                let catalog = catalog.clone();
                tokio::task::spawn_blocking(move || catalog.manifest()).await
            };
            if let Ok(Ok(m)) = read {
                self.observe(m);
            }
            tokio::select! {
                _ = self.poke.notified() => {}
                _ = tokio::time::sleep(POLL_EVERY) => {}
                _ = self.closed() => return,
            }
        }
    }
}

/// What changed from `old` to `new`.
pub fn announce(old: &Manifest, new: &Manifest) -> Announcement {
    let mut a = Announcement {
        store_id: new.store_id.clone(),
        revision: new.revision,
        updated_ms: new.updated_at_ms,
        ..Announcement::default()
    };
    if old.store_id != new.store_id {
        a.reset = true;
        return a;
    }
    let mut count = 0usize;
    for (k, e) in &new.sessions {
        if old.sessions.get(k) != Some(e) {
            count += 1;
            if a.changed.len() < MAX_KEYS {
                a.changed.push(k.clone());
            }
        }
    }
    for k in old.sessions.keys() {
        if !new.sessions.contains_key(k) {
            count += 1;
            if a.removed.len() < MAX_KEYS {
                a.removed.push(k.clone());
            }
        }
    }
    a.truncated = count > a.changed.len() + a.removed.len();
    a
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use recall_core::model::ManifestEntry;

    fn manifest(store: &str, rev: u64, sessions: &[(&str, &str)]) -> Arc<Manifest> {
        let mut m = Manifest::empty(store.into(), 2);
        m.revision = rev;
        for (k, g) in sessions {
            let e: ManifestEntry = serde_json::from_value(serde_json::json!({
                "session_key": k, "source": "pi", "session_id": k,
                "messages": 1, "paths": [], "generation_file": g, "records": 1,
            }))
            .unwrap();
            m.sessions.insert(k.to_string(), e);
        }
        Arc::new(m)
    }

    #[test]
    fn names_added_changed_and_removed_keys_only() {
        let old = manifest("s", 1, &[("pi:a", "a1"), ("pi:b", "b1"), ("pi:c", "c1")]);
        let new = manifest("s", 2, &[("pi:a", "a1"), ("pi:b", "b2"), ("pi:d", "d1")]);
        let a = announce(&old, &new);
        assert_eq!(a.changed, vec!["pi:b", "pi:d"]);
        assert_eq!(a.removed, vec!["pi:c"]);
        assert!(!a.truncated && !a.reset);
        assert_eq!(a.revision, 2);
    }

    #[test]
    fn another_store_id_is_a_reset() {
        let old = manifest("s", 5, &[("pi:a", "a1")]);
        let new = manifest("t", 1, &[]);
        let a = announce(&old, &new);
        assert!(a.reset);
        assert!(a.changed.is_empty() && a.removed.is_empty());
    }

    #[test]
    fn too_many_keys_are_truncated() {
        let keys: Vec<(String, String)> = (0..MAX_KEYS + 3)
            .map(|i| (format!("pi:{i:05}"), format!("g{i}")))
            .collect();
        let refs: Vec<(&str, &str)> = keys.iter().map(|(k, g)| (k.as_str(), g.as_str())).collect();
        let a = announce(&manifest("s", 1, &[]), &manifest("s", 2, &refs));
        assert_eq!(a.changed.len(), MAX_KEYS);
        assert!(a.truncated);
    }

    #[test]
    fn the_first_manifest_is_remembered_and_the_same_revision_is_quiet() {
        let hub = Revisions::new(2);
        let (mut rx, _) = hub.subscribe();
        assert!(hub.observe(manifest("s", 1, &[])).is_none());
        assert!(hub.observe(manifest("s", 1, &[])).is_none());
        let sent = hub.observe(manifest("s", 2, &[("pi:a", "a1")])).unwrap();
        assert_eq!(sent.changed, vec!["pi:a"]);
        assert_eq!(*rx.try_recv().unwrap(), *sent);
        assert!(rx.try_recv().is_err());
        assert_eq!(hub.subscribe().1.revision, 2);
    }
}
