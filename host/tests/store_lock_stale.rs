//! A stale `writer.lock` that cannot be moved away (read-only mount, no
//! permission, an immutable file) is an error at once, never a retry loop
//! at 100 % CPU (issue 24, item 7): `recall search` warns that the index was
//! not refreshed and answers from the store as it is.

mod store_support;

use std::process::Command;
use std::time::{Duration, Instant};
use store_support::*;

/// Makes `path` immovable: `chattr +i` (root ignores permissions), else a
/// read-only parent folder. Returns how to undo it, or `None` when neither
/// works here.
fn pin(path: &std::path::Path) -> Option<Box<dyn Fn()>> {
    let p = path.to_path_buf();
    let ok = Command::new("chattr")
        .arg("+i")
        .arg(&p)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(Box::new(move || {
            let _ = Command::new("chattr").arg("-i").arg(&p).status();
        }));
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = p.parent()?.to_path_buf();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).ok()?;
    let probe = dir.join(".probe");
    if std::fs::write(&probe, b"x").is_ok() {
        let _ = std::fs::remove_file(&probe);
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
        return None;
    }
    Some(Box::new(move || {
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755));
    }))
}

#[test]
fn a_stale_lock_that_cannot_be_removed_fails_at_once_and_search_still_answers() {
    let home = temp_dir("lock-pinned");
    write_session(&home, 1, 2, 100);
    run_ok(&home, &["index"], 0);
    write_session(&home, 2, 2, 100);
    let lock = store_dir(&home).join("writer.lock");
    // A lock whose owner is provably dead (no such pid): stale at once.
    std::fs::write(&lock, "4194300 1 deadbeefdeadbeef\n").expect("lock");
    let Some(unpin) = pin(&lock) else {
        panic!("cannot make a file immovable here (no chattr, no read-only folder)");
    };
    // `index` must write: it meets the lock and must not spin on it.
    let index = bounded(&home, &["index"]);
    let search = bounded(&home, &["search", "w1x0"]);
    unpin();
    let (index, search) = (
        index.expect("recall index spun on the stale lock for 30 s"),
        search.expect("recall search spun on the stale lock for 30 s"),
    );
    let err = String::from_utf8_lossy(&index.stderr);
    assert_ne!(index.status.code(), Some(0));
    assert!(err.contains("stale lock cannot be removed"), "{err}");
    assert_eq!(
        search.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&search.stderr)
    );
    assert!(
        String::from_utf8_lossy(&search.stdout).contains("w1x0"),
        "the store answered as it is"
    );
}

/// Runs `recall <args>`; `None` when it did not finish in 30 s (killed).
fn bounded(home: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    let started = Instant::now();
    let mut child = recall(home)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("recall");
    loop {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
