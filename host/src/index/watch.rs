//! Change notification for the query-time refresh (DESIGN.md §6): a watch
//! over the source roots (the `notify` crate: inotify on Linux, FSEvents on
//! macOS, ReadDirectoryChangesW on Windows) tells whether anything there
//! changed since the last sweep began, so a search over a quiet home skips
//! the sweep instead of `stat`-ing every transcript again.
//!
//! On Linux the kernel queues an event before the `write` that caused it
//! returns, in order, and every poll waits for notify's reader thread to
//! hand over everything queued so far: it opens a *fence* directory of its
//! own (in the temp dir, watched by the same inotify instance, opened by
//! nothing else) and reads events up to the report of that open. So a poll
//! at query time sees every change made before the query: "a line appended
//! is found by the next search" holds. FSEvents and ReadDirectoryChangesW
//! report no opens and deliver with a small delay of their own, so there a
//! change made a few milliseconds before a query may wait for the next one.
//!
//! Whenever the watch cannot vouch for the roots (the watch limit; more than
//! [`MAX_DIRS`] directories; an error from the backend; a symlinked
//! directory inside a root, whose target is not reported on) it is *blind*
//! and answers "changed": the refresh falls back to sweeping on age alone, as
//! without a watch. Lost events (a queue overflow) or a root removed or moved
//! make it *stale*: it answers "changed" until the next take watches the
//! roots afresh. A root that does not exist yet is checked with one `stat`
//! per poll and watched from the moment it appears.
//!
//! Besides "changed or not", the watch says *what* changed when it can: the
//! files modified in place (appends, touches). Anything else — a file or
//! directory created, removed or renamed — is a change of layout that only
//! a discovery of the roots can account for.

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{Config, Event, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};

/// Most directories watched; a home with more is not vouched for.
pub const MAX_DIRS: usize = 100_000;
/// Most modified files remembered between two takes; more is a layout change.
const MAX_FILES: usize = 4096;

/// What changed under the roots since the last take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pending {
    /// Nothing.
    Quiet,
    /// Only these files, modified in place.
    Files(HashSet<PathBuf>),
    /// The layout changed, or the watch cannot tell: discover again.
    Layout,
}

/// A root to watch, and which of its top-level entries matter (`None` = all;
/// e.g. only `sessions`, `archived_sessions` and `session_index.jsonl` of
/// `CODEX_HOME`, whose logs change all the time).
pub type Scope = (PathBuf, Option<&'static [&'static str]>);

/// One root as watched: its real path and, for a scoped root, the entries
/// of it that matter and those of them watched recursively so far.
struct Root {
    real: PathBuf,
    only: Option<&'static [&'static str]>,
    /// Scoped roots: the top-level directories watched below the root.
    subtrees: HashSet<PathBuf>,
}

/// A directory of this watch's own, watched along with the roots, that only
/// [`Watch::settle`] opens; removed with the watch.
struct Fence(PathBuf);

impl Fence {
    /// A fresh fence watched by `w` (Linux only: elsewhere opens are not
    /// reported, so a fence could not be waited for).
    fn new(w: &mut RecommendedWatcher) -> Option<Fence> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("recall-watch-fence-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let fence = Fence(std::fs::canonicalize(&dir).ok()?);
        w.watch(&fence.0, RecursiveMode::NonRecursive).ok()?;
        Some(fence)
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The watch over a set of roots.
pub struct Watch {
    roots: Vec<Scope>,
    /// The backend, and where it sends its events.
    watcher: RecommendedWatcher,
    events: Receiver<notify::Result<Event>>,
    /// What polls wait for (`None` where opens are not reported).
    fence: Option<Fence>,
    /// Roots present and watched (by index into `roots`).
    watched: Vec<Option<Root>>,
    /// Directories seen by the walks (an estimate of the watches held).
    dirs: usize,
    changed: bool,
    /// Files modified in place since the last take.
    files: HashSet<PathBuf>,
    /// Files or directories came, went or moved since the last take.
    layout: bool,
    /// Events were lost or a root went away: the next take watches the
    /// roots afresh (until then every poll says changed).
    stale: bool,
    /// The watch cannot see everything (a symlinked directory, the watch
    /// limit): every poll says changed, for good.
    blind: bool,
    /// Paths that appeared, to be looked at (and, at the top of a scoped
    /// root, watched) once the queue is drained.
    created: Vec<(usize, PathBuf)>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("roots", &self.roots)
            .field("dirs", &self.dirs)
            .field("stale", &self.stale)
            .field("blind", &self.blind)
            .finish_non_exhaustive()
    }
}

/// A fresh backend and the receiving end of its events.
fn backend() -> notify::Result<(RecommendedWatcher, Receiver<notify::Result<Event>>)> {
    let (tx, rx) = channel();
    // Symlinks are not followed (a symlinked directory makes the watch blind
    // instead), as discovery does not follow them below a root.
    let w = RecommendedWatcher::new(tx, Config::default().with_follow_symlinks(false))?;
    Ok((w, rx))
}

impl Watch {
    /// Watches every directory under `roots` (missing roots are watched once
    /// they appear). Fails only when the platform's watch itself is
    /// unavailable.
    pub fn new(roots: &[Scope]) -> std::io::Result<Watch> {
        let (mut watcher, events) = backend().map_err(std::io::Error::other)?;
        let fence = Fence::new(&mut watcher);
        let mut w = Watch {
            roots: roots.to_vec(),
            watcher,
            events,
            fence,
            watched: roots.iter().map(|_| None).collect(),
            dirs: 0,
            changed: false,
            files: HashSet::new(),
            layout: false,
            stale: false,
            blind: false,
            created: Vec::new(),
        };
        w.watch_new_roots();
        w.changed = false;
        w.layout = false;
        Ok(w)
    }

    /// Whether anything under the roots changed since the last
    /// [`reset`](Self::reset), or the watch cannot tell. Never blocks on the
    /// file system.
    pub fn changed(&mut self) -> bool {
        self.drain();
        self.watch_new_roots();
        self.changed || self.stale || self.blind
    }

    /// Forgets the changes seen so far: a sweep is starting and will see
    /// them. A watch that lost events starts again from a fresh walk of the
    /// roots.
    pub fn reset(&mut self) {
        let _ = self.take();
    }

    /// What changed since the last take (or reset), forgotten from now on:
    /// the caller sweeps it. A watch that lost events starts again from a
    /// fresh walk of the roots.
    pub fn take(&mut self) -> Pending {
        self.drain();
        let layout = self.layout || self.stale || self.blind;
        if self.stale && !self.blind {
            self.rewatch();
        }
        self.watch_new_roots();
        let pending = if layout || self.layout {
            Pending::Layout
        } else if self.changed {
            Pending::Files(std::mem::take(&mut self.files))
        } else {
            Pending::Quiet
        };
        self.changed = false;
        self.layout = false;
        self.files.clear();
        pending
    }

    /// Number of directories watched (for tests and status).
    pub fn dirs(&self) -> usize {
        self.dirs
    }

    /// Whether the watch currently cannot vouch for the roots.
    pub fn is_blind(&self) -> bool {
        self.blind
    }

    /// Drops every watch and starts a new backend; the roots are watched
    /// again by the next [`watch_new_roots`](Self::watch_new_roots).
    fn rewatch(&mut self) {
        match backend() {
            Ok((mut watcher, events)) => {
                self.fence = Fence::new(&mut watcher);
                self.watcher = watcher;
                self.events = events;
                self.watched.iter_mut().for_each(|w| *w = None);
                self.created.clear();
                self.dirs = 0;
                self.stale = false;
            }
            Err(_) => self.blind = true,
        }
    }

    fn watch_new_roots(&mut self) {
        for i in 0..self.roots.len() {
            if self.blind {
                return;
            }
            if self.watched[i].is_some() {
                continue;
            }
            let (root, only) = self.roots[i].clone();
            // A symlinked root is followed (like discovery does); the
            // directories below it are not.
            let Ok(real) = std::fs::canonicalize(&root) else {
                continue;
            };
            if !real.is_dir() {
                continue;
            }
            let mode = if only.is_some() {
                RecursiveMode::NonRecursive
            } else {
                RecursiveMode::Recursive
            };
            if !self.add(&real, mode) {
                continue;
            }
            self.watched[i] = Some(Root {
                real: real.clone(),
                only,
                subtrees: HashSet::new(),
            });
            match only {
                None => self.scan(&real),
                Some(names) => {
                    self.dirs += 1;
                    for name in names {
                        self.watch_subtree(i, &real.join(name));
                    }
                }
            }
            self.changed = true;
            self.layout = true;
        }
    }

    /// Watches one top-level entry of scoped root `i`, when it is a directory.
    fn watch_subtree(&mut self, i: usize, dir: &Path) {
        if self.watched[i]
            .as_ref()
            .is_none_or(|r| r.subtrees.contains(dir))
        {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if meta.file_type().is_symlink() {
            if dir.is_dir() {
                self.blind = true;
            }
            return;
        }
        if meta.is_dir() && self.add(dir, RecursiveMode::Recursive) {
            if let Some(r) = self.watched[i].as_mut() {
                r.subtrees.insert(dir.to_path_buf());
            }
            self.scan(dir);
        }
    }

    /// Adds a watch; false when the path is gone or unreadable (discovery
    /// cannot see it either). Any other failure — the watch limit, most
    /// often — makes the watch blind.
    fn add(&mut self, path: &Path, mode: RecursiveMode) -> bool {
        match self.watcher.watch(path, mode) {
            Ok(()) => true,
            Err(e) => {
                if !matches!(e.kind, notify::ErrorKind::PathNotFound) {
                    self.blind = true;
                }
                false
            }
        }
    }

    /// Counts the directories of a recursively watched tree and looks for
    /// symlinked directories in it (which the backend does not follow).
    fn scan(&mut self, dir: &Path) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            self.dirs += 1;
            if self.dirs > MAX_DIRS {
                self.blind = true;
                return;
            }
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(t) = e.file_type() else { continue };
                if t.is_dir() {
                    stack.push(e.path());
                } else if t.is_symlink() && e.path().is_dir() {
                    self.blind = true;
                    return;
                }
            }
        }
    }

    /// Waits until the backend has handed over every event queued before
    /// this call (Linux; elsewhere opens are not reported and this returns
    /// at once). The fence directory — private to this watch, watched by
    /// the same inotify instance — is opened (a read) and the events are
    /// read up to the report of that open: inotify queues events in order,
    /// so everything the kernel queued before, every change made before the
    /// query, has been seen. Bounded: a watch that does not answer in time
    /// is stale.
    fn settle(&mut self) {
        let Some(dir) = self.fence.as_ref().map(|f| f.0.clone()) else {
            return;
        };
        use std::time::{Duration, Instant};
        if std::fs::read_dir(&dir).is_err() {
            self.stale = true;
            return;
        }
        let deadline = Instant::now() + Duration::from_millis(250);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Ok(ev))
                    if matches!(ev.kind, EventKind::Access(AccessKind::Open(_)))
                        && ev.paths.contains(&dir) =>
                {
                    return;
                }
                Ok(ev) => self.handle(ev),
                Err(_) => {
                    self.stale = true;
                    return;
                }
            }
        }
    }

    fn drain(&mut self) {
        if self.blind {
            return;
        }
        self.settle();
        while let Ok(ev) = self.events.try_recv() {
            self.handle(ev);
        }
        while let Some((i, path)) = self.created.pop() {
            let Some(r) = self.watched[i].as_ref() else {
                continue;
            };
            if r.only.is_some() && path.parent() == Some(r.real.as_path()) {
                self.watch_subtree(i, &path);
            } else if let Ok(meta) = std::fs::symlink_metadata(&path) {
                // The backend watches a new directory itself; it is looked
                // through for symlinked directories, as at the start.
                if meta.file_type().is_symlink() {
                    self.blind |= path.is_dir();
                } else if meta.is_dir() {
                    self.scan(&path);
                }
            }
        }
    }

    fn handle(&mut self, ev: notify::Result<Event>) {
        match ev {
            Ok(ev) => self.event(ev),
            Err(e) => match e.kind {
                notify::ErrorKind::MaxFilesWatch => self.blind = true,
                _ => self.stale = true,
            },
        }
    }

    /// Accounts for one event.
    fn event(&mut self, ev: Event) {
        if ev.need_rescan() {
            self.stale = true;
            self.changed = true;
            return;
        }
        let in_place = match ev.kind {
            // Reads (a sweep opening transcripts) change nothing.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => return,
            EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Any) => {
                true
            }
            _ => false,
        };
        let appeared = matches!(
            ev.kind,
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_))
        );
        for path in &ev.paths {
            let Some((i, root)) = self.root_of(path) else {
                continue;
            };
            let rel = path.strip_prefix(&root.real).unwrap_or(Path::new(""));
            let top = match rel.components().next() {
                Some(Component::Normal(n)) => n.to_str(),
                _ => None,
            };
            if let (Some(only), Some(top)) = (root.only, top) {
                if !only.contains(&top) {
                    continue; // an entry of the root that does not matter
                }
            }
            let is_base = rel.as_os_str().is_empty() || root.subtrees.contains(path.as_path());
            self.changed = true;
            if is_base && !in_place {
                // A root (or a watched top-level directory) went away or
                // moved: watch afresh at the next take.
                self.stale = true;
            }
            if appeared && !is_base {
                self.created.push((i, path.clone()));
            }
            if !in_place || is_base {
                self.layout = true;
            } else if !self.layout {
                if self.files.len() < MAX_FILES {
                    self.files.insert(path.clone());
                } else {
                    self.layout = true;
                }
            }
        }
    }

    /// The watched root `path` lies under (the longest match).
    fn root_of(&self, path: &Path) -> Option<(usize, &Root)> {
        self.watched
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
            .filter(|(_, r)| path.starts_with(&r.real))
            .max_by_key(|(_, r)| r.real.as_os_str().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("recall-watch-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn quiet_roots_are_unchanged_and_an_append_is_seen_at_once() {
        let root = tmp("append");
        fs::create_dir_all(root.join("p/sub")).unwrap();
        fs::write(root.join("p/sub/a.jsonl"), "{}\n").unwrap();
        let mut w = Watch::new(&[(root.clone(), None)]).unwrap();
        assert_eq!(w.dirs(), 3);
        assert!(!w.changed());
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(root.join("p/sub/a.jsonl"))
            .unwrap();
        f.write_all(b"{\"x\":1}\n").unwrap();
        assert!(w.changed(), "an append is reported before the next poll");
        let real = fs::canonicalize(&root).unwrap();
        assert_eq!(
            w.take(),
            Pending::Files([real.join("p/sub/a.jsonl")].into_iter().collect()),
            "an append names its file"
        );
        assert!(!w.changed());
        assert_eq!(w.take(), Pending::Quiet);
        let _ = fs::read(root.join("p/sub/a.jsonl")).unwrap();
        let _ = fs::read_dir(root.join("p")).unwrap().count();
        assert_eq!(w.take(), Pending::Quiet, "reading is no change");
        fs::write(root.join("p/new.jsonl"), "{}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout, "a new file is a layout change");
        fs::remove_file(root.join("p/new.jsonl")).unwrap();
        f.write_all(b"{\"x\":2}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout, "so is a removed one");
        assert_eq!(w.take(), Pending::Quiet);
        fs::rename(root.join("p/sub/a.jsonl"), root.join("p/sub/b.jsonl")).unwrap();
        assert_eq!(w.take(), Pending::Layout, "and a renamed one");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn new_directories_are_watched_and_missing_roots_picked_up() {
        let base = tmp("mkdir");
        let root = base.join("later");
        let mut w = Watch::new(&[(root.clone(), None)]).unwrap();
        assert!(!w.changed(), "a missing root is no change");
        fs::create_dir_all(root.join("a")).unwrap();
        assert!(w.changed(), "a root that appears is a change");
        w.reset();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        assert!(w.changed());
        w.reset();
        assert!(!w.changed());
        fs::write(root.join("a/b/c/s.jsonl"), "{}\n").unwrap();
        assert!(
            w.changed(),
            "a file in a directory made after the watch began"
        );
        w.reset();
        fs::remove_dir_all(&root).unwrap();
        assert!(w.changed());
        w.reset();
        assert!(!w.changed(), "a removed root is quiet again");
        fs::create_dir_all(&root).unwrap();
        assert!(w.changed(), "and seen when it comes back");
        w.reset();
        fs::write(root.join("t.jsonl"), "{}\n").unwrap();
        assert!(w.changed(), "and watched again");
        fs::remove_dir_all(&base).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_directory_inside_a_root_makes_the_watch_blind() {
        let base = tmp("symlink");
        fs::create_dir_all(base.join("root")).unwrap();
        fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("root/link")).unwrap();
        let mut w = Watch::new(&[(base.join("root"), None)]).unwrap();
        assert!(w.is_blind());
        assert!(w.changed(), "a blind watch always says changed");
        assert_eq!(w.take(), Pending::Layout);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_scoped_root_ignores_the_entries_that_do_not_matter() {
        let root = tmp("scoped");
        fs::create_dir_all(root.join("sessions/2026/10")).unwrap();
        fs::create_dir_all(root.join("log")).unwrap();
        fs::write(root.join("sessions/2026/10/r.jsonl"), "{}\n").unwrap();
        const ONLY: &[&str] = &["sessions", "archived_sessions", "session_index.jsonl"];
        let mut w = Watch::new(&[(root.clone(), Some(ONLY))]).unwrap();
        assert_eq!(w.dirs(), 4, "the root, sessions/2026/10; not log/");
        fs::write(root.join("log/tui.log"), "noise\n").unwrap();
        fs::write(root.join("history.jsonl"), "noise\n").unwrap();
        fs::create_dir_all(root.join("tmp/x")).unwrap();
        assert_eq!(
            w.take(),
            Pending::Quiet,
            "logs and other entries do not matter"
        );
        fs::write(root.join("session_index.jsonl"), "{}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout);
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(root.join("sessions/2026/10/r.jsonl"))
            .unwrap();
        f.write_all(b"{}\n").unwrap();
        assert!(matches!(w.take(), Pending::Files(f) if f.len() == 1));
        // A top-level directory that matters, made after the watch began.
        fs::create_dir_all(root.join("archived_sessions/2026")).unwrap();
        assert_eq!(w.take(), Pending::Layout);
        fs::write(root.join("archived_sessions/2026/old.jsonl"), "{}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout, "is watched from then on");
        fs::remove_dir_all(&root).unwrap();
    }
}
