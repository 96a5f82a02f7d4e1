//! Change notification for the query-time refresh (DESIGN.md §6): an inotify
//! watch on every directory under the source roots tells whether anything
//! there changed since the last sweep began, so a search over a quiet home
//! skips the sweep instead of `stat`-ing every transcript again.
//!
//! The kernel queues an event before the `write` that caused it returns, so
//! draining the queue without blocking at query time sees every change made
//! before the query: "a line appended is found by the next search" holds.
//! Whenever the watch cannot vouch for the roots (a watch could not be added,
//! e.g. at the per-user limit; the queue overflowed; a symlinked directory
//! inside a root, whose target the kernel does not report on) it answers
//! "changed" and the refresh falls back to sweeping on age alone, as without
//! a watch. A root that does not exist yet is checked with one `stat` per
//! poll and watched from the moment it appears.
//!
//! Besides "changed or not", the watch says *what* changed when it can: the
//! files modified in place (appends, touches). Anything else — a file or
//! directory created, removed or renamed — is a change of layout that only
//! a discovery of the roots can account for.

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Most directories watched; a home with more is not vouched for.
const MAX_DIRS: usize = 100_000;
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

/// What makes a directory's entry count as a change.
fn mask() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::DONT_FOLLOW
}

/// A root to watch, and which of its top-level entries matter (`None` = all;
/// e.g. only `sessions`, `archived_sessions` and `session_index.jsonl` of
/// `CODEX_HOME`, whose logs change all the time).
pub type Scope = (PathBuf, Option<&'static [&'static str]>);

/// The watch over a set of roots.
#[derive(Debug)]
pub struct Watch {
    fd: OwnedFd,
    roots: Vec<Scope>,
    /// Watched roots with a top-level filter, by watch descriptor.
    filters: HashMap<i32, &'static [&'static str]>,
    /// Roots present and watched (by index into `roots`).
    watched: Vec<bool>,
    dirs: HashMap<i32, PathBuf>,
    changed: bool,
    /// Files modified in place since the last take.
    files: HashSet<PathBuf>,
    /// Files or directories came, went or moved since the last take.
    layout: bool,
    /// Events were lost or a watched path moved: the next reset walks the
    /// roots afresh (until then every poll says changed).
    stale: bool,
    /// The watch cannot see everything (a symlinked directory, the watch
    /// limit): every poll says changed, for good.
    blind: bool,
}

impl Watch {
    /// Watches every directory under `roots` (missing roots are watched once
    /// they appear). Fails only when inotify itself is unavailable.
    pub fn new(roots: &[Scope]) -> std::io::Result<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        let mut w = Watch {
            fd,
            roots: roots.to_vec(),
            filters: HashMap::new(),
            watched: vec![false; roots.len()],
            dirs: HashMap::new(),
            changed: false,
            files: HashSet::new(),
            layout: false,
            stale: false,
            blind: false,
        };
        w.watch_new_roots();
        w.changed = false;
        w.layout = false;
        Ok(w)
    }

    /// Whether anything under the roots changed since the last
    /// [`reset`](Self::reset), or the watch cannot tell. Never blocks.
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
        self.dirs.len()
    }

    /// Whether the watch currently cannot vouch for the roots.
    pub fn is_blind(&self) -> bool {
        self.blind
    }

    fn rewatch(&mut self) {
        for wd in std::mem::take(&mut self.dirs).into_keys() {
            let _ = inotify::remove_watch(&self.fd, wd);
        }
        self.filters.clear();
        self.watched.iter_mut().for_each(|w| *w = false);
        self.stale = false;
    }

    fn watch_new_roots(&mut self) {
        for i in 0..self.roots.len() {
            if self.watched[i] {
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
            self.watched[i] = true;
            self.changed = true;
            self.layout = true;
            self.walk(&real, only);
        }
    }

    /// Watches `dir` and every directory below it (of its own entries, only
    /// those named in `only`). The watch is added before the listing, so an
    /// entry created meanwhile is either listed or reported.
    fn walk(&mut self, dir: &Path, only: Option<&'static [&'static str]>) {
        let mut stack = vec![dir.to_path_buf()];
        let mut top = true;
        while let Some(d) = stack.pop() {
            let filter = if top { only } else { None };
            top = false;
            if self.dirs.len() >= MAX_DIRS {
                self.blind = true;
                return;
            }
            match inotify::add_watch(&self.fd, &d, mask()) {
                Ok(wd) => {
                    self.dirs.insert(wd, d.clone());
                    if let Some(f) = filter {
                        self.filters.insert(wd, f);
                    }
                }
                // Unreadable or vanished: discovery cannot see it either.
                Err(Errno::ACCESS | Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => continue,
                Err(_) => {
                    // The per-user watch limit, or no kernel memory.
                    self.blind = true;
                    return;
                }
            }
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                if filter.is_some_and(|f| !e.file_name().to_str().is_some_and(|n| f.contains(&n))) {
                    continue;
                }
                let Ok(t) = e.file_type() else { continue };
                if t.is_dir() {
                    stack.push(e.path());
                } else if t.is_symlink() && e.path().is_dir() {
                    self.blind = true;
                }
            }
        }
    }

    fn drain(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 16 << 10];
        let mut created = Vec::new();
        {
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            loop {
                let ev = match reader.next() {
                    Ok(ev) => ev,
                    Err(Errno::INTR) => continue,
                    // WOULDBLOCK: nothing more queued. Anything else: the
                    // queue cannot be read; stop trusting it.
                    Err(Errno::WOULDBLOCK) => break,
                    Err(_) => {
                        self.stale = true;
                        break;
                    }
                };
                let flags = ev.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    self.stale = true;
                    continue;
                }
                let Some(dir) = self.dirs.get(&ev.wd()) else {
                    continue;
                };
                if let (Some(only), Some(name)) = (self.filters.get(&ev.wd()), ev.file_name()) {
                    if !name.to_str().is_ok_and(|n| only.contains(&n)) {
                        continue; // an entry of the root that does not matter
                    }
                }
                self.changed = true;
                let in_place = ReadFlags::MODIFY | ReadFlags::ATTRIB | ReadFlags::CLOSE_WRITE;
                if flags.contains(ReadFlags::ISDIR) || !in_place.contains(flags) {
                    self.layout = true;
                }
                if flags.contains(ReadFlags::IGNORED) {
                    // The directory is gone (its parent reports that too).
                    self.dirs.remove(&ev.wd());
                    self.filters.remove(&ev.wd());
                    continue;
                }
                if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                    // A root went away, or a directory moved and the paths
                    // held for it are wrong: walk afresh at the next reset.
                    self.stale = true;
                    continue;
                }
                let name = ev.file_name().map(|n| {
                    use std::os::unix::ffi::OsStrExt;
                    dir.join(std::ffi::OsStr::from_bytes(n.to_bytes()))
                });
                if flags.contains(ReadFlags::ISDIR)
                    && flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO)
                {
                    created.extend(name);
                } else if !self.layout {
                    match name {
                        Some(p) if self.files.len() < MAX_FILES => {
                            self.files.insert(p);
                        }
                        _ => self.layout = true,
                    }
                }
            }
        }
        for d in created {
            self.walk(&d, None);
        }
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
        fs::write(root.join("p/new.jsonl"), "{}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout, "a new file is a layout change");
        fs::remove_file(root.join("p/new.jsonl")).unwrap();
        f.write_all(b"{\"x\":2}\n").unwrap();
        assert_eq!(w.take(), Pending::Layout, "so is a removed one");
        assert_eq!(w.take(), Pending::Quiet);
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
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_symlinked_directory_inside_a_root_makes_the_watch_blind() {
        let base = tmp("symlink");
        fs::create_dir_all(base.join("root")).unwrap();
        fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("root/link")).unwrap();
        let mut w = Watch::new(&[(base.join("root"), None)]).unwrap();
        assert!(w.is_blind());
        assert!(w.changed(), "a blind watch always says changed");
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_scoped_root_ignores_the_entries_that_do_not_matter() {
        let root = tmp("scoped");
        fs::create_dir_all(root.join("sessions/2026/10")).unwrap();
        fs::create_dir_all(root.join("log")).unwrap();
        fs::write(root.join("sessions/2026/10/r.jsonl"), "{}\n").unwrap();
        const ONLY: &[&str] = &["sessions", "session_index.jsonl"];
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
        fs::remove_dir_all(&root).unwrap();
    }
}
