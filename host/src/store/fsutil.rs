//! Small file-system helpers shared by the store: durable atomic writes,
//! directory fsync, random ids and the wall clock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch by the wall clock.
pub fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A random lowercase-hex id of `bytes` random bytes (from `/dev/urandom`,
/// else derived from the clock, the pid and a stack address).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    let filled = File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok();
    if !filled {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let local = 0u8;
        let seed = format!("{nanos}:{}:{:p}", std::process::id(), &local);
        let h = recall_core::naming::hash16(seed.as_bytes());
        return h.chars().cycle().take(bytes * 2).collect();
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `tmp`, fsyncs it and renames it over `dest`, then
/// fsyncs the directory: readers see the old file or the new one, never a
/// mix, and the new one survives a crash once this returns.
pub fn write_atomic(dir: &Path, tmp_name: &str, dest: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(dir, tmp_name, dest, bytes, |_| {})
}

/// [`write_atomic`], calling `before_rename` with the written file's
/// metadata (what `dest` will have) just before it gets its name.
pub fn write_atomic_with(
    dir: &Path,
    tmp_name: &str,
    dest: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&fs::Metadata),
) -> io::Result<()> {
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        let meta = f.metadata()?;
        drop(f);
        before_rename(&meta);
        fs::rename(&tmp, dest)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to a temp file of its own in `dir` (`<tmp_prefix>-<random>`,
/// so concurrent writers never rename each other's file away) without fsync
/// and renames it over `dest`. For expendable files (snapshots, the indexer
/// state, the policy).
pub fn write_replace(dir: &Path, tmp_prefix: &str, dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!("{tmp_prefix}-{}", random_hex(8)));
    let result = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, dest));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `dir/name`, a content name: nothing when the file
/// already holds exactly these bytes; else a temp file (`tmp_prefix` +
/// random), fsynced, then `link()`ed to the name (a damaged file already
/// under it is replaced whole by a rename). The folder is fsynced by the
/// caller, once per publish.
pub fn write_content_named(
    dir: &Path,
    tmp_prefix: &str,
    name: &str,
    bytes: &[u8],
) -> io::Result<()> {
    let dest = dir.join(name);
    if fs::read(&dest).is_ok_and(|b| b == bytes) {
        return Ok(());
    }
    let tmp = dir.join(format!("{tmp_prefix}{}", random_hex(8)));
    let result = (|| -> io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match fs::hard_link(&tmp, &dest) {
            Ok(()) => fs::remove_file(&tmp),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => fs::rename(&tmp, &dest),
            Err(e) => Err(e),
        }
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Fsyncs a directory so renames inside it are durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The age of a file by its modification time, in milliseconds (0 when the
/// mtime is in the future or unreadable).
pub fn age_ms(meta: &fs::Metadata, now_ms: i64) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| {
            now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        })
        .max(0)
}
