//! One file of a deep search: opened as a regular file only (never
//! blocking on a FIFO), `.zst` decoded as a stream, searched line by line
//! with ripgrep's searcher, each matching line handed to the caller as it
//! is found. A database session (a member path) is searched as its rows,
//! one JSON line each.

use crate::extract::member;
use crate::extract::open::open_regular;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, SearcherBuilder, Sink, SinkMatch};
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// A line longer than this stops the file's scan (named as unreadable).
const HEAP_LIMIT: usize = 64 << 20;
/// Decoded bytes read from one file at most (a decompression bomb stops here).
const MAX_DECODED: u64 = 8 << 30;
/// Bytes of one database session's rows held at most (they are searched in
/// memory).
const MAX_MEMBER: u64 = 256 << 20;

/// How one file's scan went.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Bytes read (decoded).
    pub bytes: u64,
    /// Why the file (or its rest) could not be read.
    pub error: Option<String>,
}

/// Counts what passes through, and fails once `stop` is set.
struct Counting<'s, R> {
    inner: R,
    n: u64,
    stop: &'s AtomicBool,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(io::Error::other("the search stopped"));
        }
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

struct Lines<'a> {
    on_line: &'a mut dyn FnMut(u64, u64, &[u8]) -> bool,
}

impl Sink for Lines<'_> {
    type Error = io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let line = m.bytes();
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        Ok((self.on_line)(
            m.line_number().unwrap_or(0),
            m.absolute_byte_offset(),
            line,
        ))
    }
}

/// Searches `path` for `matcher`; `on_line(line_no, offset, line)` gets
/// each matching line and returns false to stop; setting `stop` ends the
/// read of a file part-way. Without `numbered` lines are not counted (and
/// `line_no` is 0): a scan that only asks whether a file matches.
pub fn file(
    path: &Path,
    matcher: &RegexMatcher,
    stop: &AtomicBool,
    numbered: bool,
    on_line: &mut dyn FnMut(u64, u64, &[u8]) -> bool,
) -> Scanned {
    let mut out = Scanned::default();
    // An OpenCode session is a member of its database: its rows as lines.
    if let Some((db, id)) = member::split(path) {
        match crate::extract::opencode::db::session_lines(db, id, MAX_MEMBER) {
            Ok(lines) => {
                out.bytes = lines.len() as u64;
                let mut searcher = SearcherBuilder::new().line_number(numbered).build();
                let r = searcher.search_slice(matcher, &lines, Lines { on_line });
                out.error = r.err().map(|e| e.to_string());
            }
            Err(e) => out.error = Some(e.to_string()),
        }
        return out;
    }
    let f = match open_regular(path) {
        Ok(f) => f,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let zst = path.extension().is_some_and(|x| x == "zst");
    let reader: Box<dyn Read> = if zst {
        match zstd::stream::read::Decoder::new(f) {
            Ok(d) => Box::new(d.take(MAX_DECODED)),
            Err(e) => {
                out.error = Some(e.to_string());
                return out;
            }
        }
    } else {
        Box::new(f.take(MAX_DECODED))
    };
    let mut reader = Counting {
        inner: reader,
        n: 0,
        stop,
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(numbered)
        .heap_limit(Some(HEAP_LIMIT))
        .build();
    let r = searcher.search_reader(matcher, &mut reader, Lines { on_line });
    out.bytes = reader.n;
    if let Err(e) = r {
        out.error = Some(e.to_string());
    }
    out
}
