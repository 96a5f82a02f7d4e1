//! Opening source files safely: only regular files, never blocking.
//!
//! A FIFO (or a device, a socket) named like a transcript must never hang
//! discovery, a cursor or an extraction: every source file is opened with
//! `O_NONBLOCK` (an `open` of a FIFO without a writer then returns at once)
//! and its type is checked on the open handle (`fstat`), so a file swapped
//! for a FIFO between a `stat` and the `open` is still refused. `O_NONBLOCK`
//! has no effect on reads of a regular file.

use std::fs::File;
use std::io;
use std::path::Path;

/// The error of a source path that is not a regular file.
pub fn not_regular(kind: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({kind})"),
    )
}

/// What a non-regular file is, for error messages.
fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "fifo";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Opens `path` for reading when it is a regular file (symlinks followed),
/// without ever blocking on the open; anything else is an `InvalidInput`
/// error naming its type.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(not_regular(kind_of(t)));
    }
    Ok(file)
}

/// Whether `path` is a regular file (symlinks followed; `stat` only, which
/// never blocks on a FIFO).
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("recall-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("s.jsonl");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("fifo"), "{e}");
        assert!(!is_regular(&fifo));
        let e = open_regular(&dir).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let f = dir.join("f.jsonl");
        std::fs::write(&f, b"x\n").unwrap();
        assert!(open_regular(&f).is_ok() && is_regular(&f));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
