//! The files of a deep search scanned ahead of the ordered report, on
//! worker threads: each file is only asked whether it holds a match (its
//! scan stops at the first), so the report, which must go session by
//! session in order, rescans just the files that do. At most [`WINDOW`]
//! files run ahead of the one being reported, and a stopped search stops
//! the workers mid-file.

use super::scan::{self, Scanned};
use super::Roots;
use grep_regex::RegexMatcher;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// Files scanned ahead of the reported one at most.
const WINDOW: usize = 32;

/// What a file's scan ahead found.
pub struct Verdict {
    /// It holds a matching line.
    pub matched: bool,
    /// Its bytes and error (bytes up to the first match when it matched).
    pub scanned: Scanned,
}

#[derive(Default)]
struct State {
    verdicts: Vec<Option<Verdict>>,
    next: usize,
    reported: usize,
}

/// The verdicts of the files being scanned ahead.
pub struct Ahead {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

/// Why a file is not opened: it is not under an agent's folder.
pub fn outside() -> Scanned {
    Scanned {
        bytes: 0,
        error: Some("not under an agent's folder of this machine".into()),
    }
}

impl Ahead {
    /// Runs `report` with `paths` scanned ahead for `matcher` on up to
    /// `workers` threads (files outside `roots` are never opened); the
    /// workers stop when `report` returns.
    pub fn run<R>(
        paths: &[&str],
        roots: &Roots,
        matcher: &RegexMatcher,
        workers: usize,
        report: impl FnOnce(&Ahead) -> R,
    ) -> R {
        let ahead = Ahead {
            state: Mutex::new(State {
                verdicts: (0..paths.len()).map(|_| None).collect(),
                ..State::default()
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        };
        std::thread::scope(|s| {
            for _ in 0..workers.min(paths.len()) {
                s.spawn(|| ahead.work(paths, roots, matcher));
            }
            let out = report(&ahead);
            ahead.stop.store(true, Ordering::Relaxed);
            ahead.changed.notify_all();
            out
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn work(&self, paths: &[&str], roots: &Roots, matcher: &RegexMatcher) {
        loop {
            let j = {
                let mut st = self.lock();
                loop {
                    if self.stop.load(Ordering::Relaxed) || st.next >= paths.len() {
                        return;
                    }
                    if st.next < st.reported + WINDOW {
                        break;
                    }
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
                st.next += 1;
                st.next - 1
            };
            let path = Path::new(paths[j]);
            let verdict = if roots.holds(path) {
                let mut matched = false;
                let scanned = scan::file(path, matcher, &self.stop, false, &mut |_, _, _| {
                    matched = true;
                    false
                });
                Verdict { matched, scanned }
            } else {
                Verdict {
                    matched: false,
                    scanned: outside(),
                }
            };
            self.lock().verdicts[j] = Some(verdict);
            self.changed.notify_all();
        }
    }

    /// The verdict of file `j`, waiting for it; files before `j` are
    /// taken as reported.
    pub fn take(&self, j: usize) -> Verdict {
        let mut st = self.lock();
        st.reported = st.reported.max(j);
        self.changed.notify_all();
        loop {
            if let Some(v) = st.verdicts.get_mut(j).and_then(Option::take) {
                return v;
            }
            if j >= st.verdicts.len() {
                return Verdict {
                    matched: false,
                    scanned: Scanned::default(),
                };
            }
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_regex::RegexMatcherBuilder;

    #[test]
    fn verdicts_come_in_order_and_files_outside_the_roots_are_never_opened() {
        let dir = std::env::temp_dir().join(format!("recall-ahead-{}", std::process::id()));
        let inside = dir.join("agent");
        std::fs::create_dir_all(&inside).expect("mkdir");
        let mut paths = Vec::new();
        for i in 0..80 {
            let p = inside.join(format!("{i}.jsonl"));
            let text = if i % 7 == 3 {
                "a needle here\n"
            } else {
                "nothing\n"
            };
            std::fs::write(&p, text.repeat(50)).expect("write");
            paths.push(p.to_string_lossy().into_owned());
        }
        let outside = dir.join("elsewhere.jsonl");
        std::fs::write(&outside, "a needle\n").expect("write");
        paths.push(outside.to_string_lossy().into_owned());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let roots = Roots::new([inside.clone()]);
        let m = RegexMatcherBuilder::new()
            .fixed_strings(true)
            .build("needle")
            .expect("matcher");
        let got: Vec<(bool, Option<String>)> = Ahead::run(&refs, &roots, &m, 3, |a| {
            (0..refs.len())
                .map(|j| {
                    let v = a.take(j);
                    (v.matched, v.scanned.error)
                })
                .collect()
        });
        for (i, (matched, error)) in got.iter().enumerate().take(80) {
            assert_eq!(*matched, i % 7 == 3, "file {i}");
            assert!(error.is_none());
        }
        assert!(!got[80].0, "outside the roots: not opened");
        assert!(got[80]
            .1
            .as_deref()
            .is_some_and(|e| e.contains("not under")));
        // A report that stops at once ends the workers too.
        let first = Ahead::run(&refs, &roots, &m, 2, |a| a.take(3).matched);
        assert!(first);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
