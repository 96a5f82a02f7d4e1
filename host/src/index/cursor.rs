//! File cursors (DESIGN.md §6): what a source file looked like when it was
//! last read, and how it changed since.
//!
//! A cursor is identity (dev + inode), length, mtime in ns, the offset just
//! past the last complete line (of a zstd-framed DSH log: frame), and SHA-256 of the first 4 KiB and of the
//! 4 KiB ending at that offset. Same identity, length and mtime ⇒ Unchanged,
//! decided from one `stat` without reading. Otherwise the two hashed spans
//! are read again: if they still hash the same and the file did not shrink
//! below the offset, it was Appended; else it was Rewritten.
//!
//! A member path (one session of a database file, `extract::member`) has
//! the database's identity and nothing read: it is Unchanged while the
//! database is the same file, and the unit's discovery context (the
//! session's own update time) tells whether the session changed.

use crate::extract::member;
use crate::extract::open::open_regular;
use recall_core::model::FileCursor;
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Bytes hashed at the head and before the offset.
pub const SPAN: u64 = 4096;

/// How far back from the end we look for the last newline.
const MAX_BACKSCAN: u64 = 64 << 20;

/// How a file changed since its cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Same identity, length and mtime: not read at all.
    Unchanged,
    /// Grown (or touched) with the bytes before the old offset intact.
    Appended,
    /// Replaced, truncated, or changed before the old offset.
    Rewritten,
    /// No longer exists.
    Gone,
}

fn mtime_ns(m: &fs::Metadata) -> i128 {
    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_span(f: &mut File, start: u64, len: u64) -> io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(len as usize);
    f.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The offset just past the last `\n` at or before `len` (0 if none within
/// the last 64 MiB).
fn last_line_end(f: &mut File, len: u64) -> io::Result<u64> {
    let mut end = len;
    let floor = len.saturating_sub(MAX_BACKSCAN);
    while end > floor {
        let start = end.saturating_sub(64 << 10).max(floor);
        let chunk = read_span(f, start, end - start)?;
        if let Some(i) = memchr::memrchr(b'\n', &chunk) {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The cursor of member path `path` of database `db`: the database's
/// identity, no length, time or spans (see the module doc).
fn member_cursor(path: &Path, db: &Path, generation: u32) -> io::Result<FileCursor> {
    let m = fs::metadata(db)?;
    Ok(FileCursor {
        path: path.to_string_lossy().into_owned(),
        dev: m.dev(),
        ino: m.ino(),
        len: 0,
        mtime_ns: 0,
        offset: 0,
        head_sha: String::new(),
        tail_sha: String::new(),
        generation,
    })
}

/// Takes a cursor of `path` as it is now.
pub fn capture(path: &Path, generation: u32) -> io::Result<FileCursor> {
    if let Some((db, _)) = member::split(path) {
        return member_cursor(path, db, generation);
    }
    let mut f = open_regular(path)?;
    let m = f.metadata()?;
    let len = m.len();
    let head = read_span(&mut f, 0, SPAN.min(len))?;
    // A zstd-framed DSH log is read frame by frame: its offset is the end
    // of the last complete frame (a torn final frame is the next read's).
    let offset = if crate::extract::dsh::is_framed(path) {
        crate::extract::dsh::frames::complete_end(path)?
    } else {
        last_line_end(&mut f, len)?
    };
    let tail_start = offset.saturating_sub(SPAN);
    let tail = read_span(&mut f, tail_start, offset - tail_start)?;
    Ok(FileCursor {
        path: path.to_string_lossy().into_owned(),
        dev: m.dev(),
        ino: m.ino(),
        len,
        mtime_ns: mtime_ns(&m),
        offset,
        head_sha: sha_hex(&head),
        tail_sha: sha_hex(&tail),
        generation,
    })
}

/// A cursor of `path` from `stat` alone (no read: for a unit that cannot be
/// opened, e.g. a FIFO), so the failure is retried only when the file
/// changes. Its spans are empty: any change classifies it Rewritten.
pub fn stat_only(path: &Path, generation: u32) -> Option<FileCursor> {
    if let Some((db, _)) = member::split(path) {
        return member_cursor(path, db, generation).ok();
    }
    let m = fs::metadata(path).ok()?;
    Some(FileCursor {
        path: path.to_string_lossy().into_owned(),
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns: mtime_ns(&m),
        offset: 0,
        head_sha: String::new(),
        tail_sha: String::new(),
        generation,
    })
}

/// Classifies member path `path` (its parent is not a directory): Gone
/// with its database, Rewritten when the database is another file now,
/// else Unchanged (the context says whether the session moved).
fn classify_member(path: &Path, old: &FileCursor) -> Change {
    let Some((db, _)) = member::split(path) else {
        return Change::Gone;
    };
    match fs::metadata(db) {
        Ok(m) if m.dev() == old.dev && m.ino() == old.ino => Change::Unchanged,
        Ok(_) => Change::Rewritten,
        Err(_) => Change::Gone,
    }
}

/// Classifies `path` against its previous cursor.
pub fn classify(path: &Path, old: &FileCursor) -> Change {
    let m = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => return classify_member(path, old),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Change::Gone,
        Err(_) => return Change::Rewritten,
    };
    if m.dev() != old.dev || m.ino() != old.ino {
        return Change::Rewritten;
    }
    if m.len() == old.len && mtime_ns(&m) == old.mtime_ns {
        return Change::Unchanged;
    }
    if m.len() < old.offset {
        return Change::Rewritten;
    }
    let spans_match = (|| -> io::Result<bool> {
        let mut f = open_regular(path)?;
        let head = read_span(&mut f, 0, SPAN.min(old.len))?;
        if sha_hex(&head) != old.head_sha {
            return Ok(false);
        }
        let tail_start = old.offset.saturating_sub(SPAN);
        let tail = read_span(&mut f, tail_start, old.offset - tail_start)?;
        Ok(sha_hex(&tail) == old.tail_sha)
    })();
    match spans_match {
        Ok(true) => Change::Appended,
        _ => Change::Rewritten,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmpfile(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("recall-cursor-{}", crate::store::random_hex(6)));
        fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    #[test]
    fn unchanged_appended_rewritten_gone() {
        let p = tmpfile("a.jsonl");
        fs::write(&p, "{\"a\":1}\n{\"b\":2}\n{\"torn").unwrap();
        let c = capture(&p, 0).unwrap();
        assert_eq!(c.offset, 16);
        assert_eq!(c.len, 22);
        assert_eq!(classify(&p, &c), Change::Unchanged);

        let mut f = fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"\":3}\n").unwrap();
        drop(f);
        assert_eq!(classify(&p, &c), Change::Appended);

        // Same length, different bytes before the offset.
        let c2 = capture(&p, 0).unwrap();
        fs::write(&p, "{\"a\":9}\n{\"b\":2}\n{\"torn\":3}\n").unwrap();
        assert_eq!(classify(&p, &c2), Change::Rewritten);

        // Truncated below the offset.
        let c3 = capture(&p, 0).unwrap();
        fs::write(&p, "{}\n").unwrap();
        assert_eq!(classify(&p, &c3), Change::Rewritten);

        fs::remove_file(&p).unwrap();
        assert_eq!(classify(&p, &c3), Change::Gone);
        let _ = fs::remove_dir_all(p.parent().unwrap());
    }

    #[test]
    fn replaced_file_is_rewritten() {
        let p = tmpfile("b.jsonl");
        fs::write(&p, "x\n").unwrap();
        let c = capture(&p, 0).unwrap();
        let q = p.with_extension("new");
        fs::write(&q, "x\n").unwrap();
        fs::rename(&q, &p).unwrap();
        assert_eq!(classify(&p, &c), Change::Rewritten);
        let _ = fs::remove_dir_all(p.parent().unwrap());
    }

    #[test]
    fn a_member_path_follows_its_database_file() {
        let db = tmpfile("opencode.db");
        fs::write(&db, b"one").unwrap();
        let m = member::path(&db, "ses_a").unwrap();
        let c = capture(&m, 0).unwrap();
        assert_eq!((c.len, c.offset, c.mtime_ns), (0, 0, 0));
        assert_eq!(stat_only(&m, 0).as_ref(), Some(&c));
        // Written in place: the member is unchanged (its context says more).
        fs::write(&db, b"one and more").unwrap();
        assert_eq!(classify(&m, &c), Change::Unchanged);
        // Another file in its place.
        let q = db.with_extension("new");
        fs::write(&q, b"x").unwrap();
        fs::rename(&q, &db).unwrap();
        assert_eq!(classify(&m, &c), Change::Rewritten);
        fs::remove_file(&db).unwrap();
        assert_eq!(classify(&m, &c), Change::Gone);
        let _ = fs::remove_dir_all(db.parent().unwrap());
    }
}
