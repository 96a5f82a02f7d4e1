//! `writer.lock`: one writer at a time publishes.
//!
//! The lock is a file created with `O_EXCL` holding `pid start_time token`.
//! It is stale — and taken over — when it is older than five minutes, or at
//! once when its owner is provably dead (on Linux: `/proc/<pid>` is gone,
//! is a zombie, or belongs to a process with another start time). A
//! takeover renames the stale file away first and checks it renamed the
//! file it judged, so two writers never both take over.

use super::fsutil::{age_ms, random_hex, wall_ms};
use super::StoreError;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

pub use recall_core::layout::store::LOCK;

/// A lock older than this is stale whoever holds it.
pub const STALE_AFTER_MS: i64 = 5 * 60 * 1000;

/// An empty lock file (its writer died between create and write) older
/// than this is stale.
const EMPTY_STALE_MS: i64 = 2000;

/// The held lock; released on drop.
#[derive(Debug)]
pub struct WriterLock {
    path: PathBuf,
    token: String,
}

impl WriterLock {
    /// Takes the lock, waiting up to `timeout` for another writer.
    pub fn acquire(dir: &Path, timeout: Duration) -> Result<WriterLock, StoreError> {
        let path = dir.join(LOCK);
        let token = random_hex(8);
        let body = format!(
            "{} {} {}\n",
            std::process::id(),
            start_time(std::process::id()).unwrap_or(0),
            token
        );
        let started = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    if let Err(e) = f.write_all(body.as_bytes()) {
                        // A full disk must not leave an empty lock behind.
                        let _ = fs::remove_file(&path);
                        return Err(StoreError::io(&path, e));
                    }
                    return Ok(WriterLock { path, token });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if let Some(judged) = stale_content(&path) {
                        // A stale lock that cannot be moved (read-only
                        // mount, no permission) is an error at once, not a
                        // retry loop.
                        take_over(&path, &judged, &token).map_err(|e| {
                            StoreError::io(
                                &path,
                                io::Error::new(
                                    e.kind(),
                                    format!("a stale lock cannot be removed: {e}"),
                                ),
                            )
                        })?;
                        continue;
                    }
                }
                Err(e) => return Err(StoreError::io(&path, e)),
            }
            if started.elapsed() >= timeout {
                return Err(StoreError::Busy);
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Remove the file only if it is still ours (it may have been taken
        // over after five minutes).
        if let Ok(s) = fs::read_to_string(&self.path) {
            if s.split_whitespace().nth(2) == Some(self.token.as_str()) {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

/// The lock's content when it is stale, else `None`.
fn stale_content(path: &Path) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    let content = fs::read_to_string(path).ok()?;
    let age = age_ms(&meta, wall_ms());
    if age > STALE_AFTER_MS {
        return Some(content);
    }
    let mut parts = content.split_whitespace();
    let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
        return (age > EMPTY_STALE_MS).then_some(content);
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return (age > EMPTY_STALE_MS).then_some(content);
    };
    owner_dead(pid, start).then_some(content)
}

/// Whether the process that wrote a lock is provably gone. Without
/// `/proc`, nothing is provable and only age makes a lock stale.
fn owner_dead(pid: u32, start: u64) -> bool {
    if !Path::new("/proc/self/stat").exists() {
        return false;
    }
    match proc_stat(pid) {
        None => true,
        Some((state, st)) => state == 'Z' || state == 'X' || (start != 0 && st != start),
    }
}

/// `(state, start time)` from `/proc/<pid>/stat`.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    let rest = &s[s.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Field 22 of stat (starttime) is the 20th after the command name.
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// The start time of a process (clock ticks since boot), to tell a reused
/// pid from the lock's owner.
fn start_time(pid: u32) -> Option<u64> {
    proc_stat(pid).map(|(_, s)| s)
}

/// Moves a stale lock aside; if what was moved is not the lock judged stale
/// (another writer took over meanwhile), puts it back.
/// Fails only when the lock is still there and could not be moved.
fn take_over(path: &Path, judged: &str, token: &str) -> io::Result<()> {
    let aside = path.with_file_name(format!("{LOCK}.stale-{token}"));
    if let Err(e) = fs::rename(path, &aside) {
        // Gone meanwhile (another writer took it over): try again.
        return if path.exists() { Err(e) } else { Ok(()) };
    }
    let moved = fs::read_to_string(&aside).unwrap_or_default();
    if moved != judged {
        let _ = fs::hard_link(&aside, path);
    }
    let _ = fs::remove_file(&aside);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(format!("recall-lock-{}", random_hex(6)));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn exclusive_then_released() {
        let d = tmp();
        let a = WriterLock::acquire(&d, Duration::from_millis(10)).unwrap();
        assert!(matches!(
            WriterLock::acquire(&d, Duration::from_millis(30)),
            Err(StoreError::Busy)
        ));
        drop(a);
        assert!(WriterLock::acquire(&d, Duration::from_millis(10)).is_ok());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dead_owner_is_taken_over_at_once() {
        let d = tmp();
        // A pid that cannot be running: above the kernel's pid_max.
        fs::write(d.join(LOCK), "4194999 12345 deadbeef\n").unwrap();
        let l = WriterLock::acquire(&d, Duration::from_millis(200));
        if Path::new("/proc/self/stat").exists() {
            assert!(l.is_ok());
        }
        drop(l);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_lock_older_than_five_minutes_is_taken_over_even_if_its_owner_lives() {
        let d = tmp();
        let me = std::process::id();
        let st = start_time(me).unwrap_or(0);
        let p = d.join(LOCK);
        fs::write(&p, format!("{me} {st} cafe\n")).unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(6 * 60);
        fs::File::options()
            .append(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let l = WriterLock::acquire(&d, Duration::from_millis(50)).unwrap();
        assert!(fs::read_to_string(&p).unwrap().contains(&l.token));
        drop(l);
        assert!(!p.exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn live_owner_is_respected() {
        let d = tmp();
        let me = std::process::id();
        let st = start_time(me).unwrap_or(0);
        fs::write(d.join(LOCK), format!("{me} {st} cafe\n")).unwrap();
        assert!(matches!(
            WriterLock::acquire(&d, Duration::from_millis(30)),
            Err(StoreError::Busy)
        ));
        fs::remove_dir_all(&d).unwrap();
    }
}
