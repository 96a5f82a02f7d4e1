//! Shared extraction helpers: a bounded JSONL line reader, the text caps,
//! content hashes, titles and timestamp parsing.

use super::Diagnostics;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Lines longer than this are skipped and counted, never held in memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Cap on user/assistant text, in UTF-8 bytes.
pub const PROSE_CAP_BYTES: usize = 256 << 10;
/// Cap on tool rows, in chars.
pub const TOOL_CAP_CHARS: usize = 3072;
/// Largest title, in chars.
pub const TITLE_CHARS: usize = 80;

/// Default bound on the lines read per session (all its files, resumed
/// reads included): beyond it a bounded prefix is indexed and the session
/// is flagged truncated. One huge session must not take the memory of the
/// whole index (a 99 KB zstd bomb inflates to 8 M lines).
pub const MAX_SESSION_LINES: u64 = 200_000;
/// Default bound on the (decompressed) bytes read per session and call.
pub const MAX_SESSION_BYTES: u64 = 256 << 20;

static SESSION_LINES: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(MAX_SESSION_LINES);
static SESSION_BYTES: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(MAX_SESSION_BYTES);

/// The per-session bounds now: (lines, bytes).
pub fn session_bounds() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (SESSION_LINES.load(Relaxed), SESSION_BYTES.load(Relaxed))
}

/// Sets the per-session bounds of this process (tests use small ones).
pub fn set_session_bounds(lines: u64, bytes: u64) {
    use std::sync::atomic::Ordering::Relaxed;
    SESSION_LINES.store(lines, Relaxed);
    SESSION_BYTES.store(bytes, Relaxed);
}

/// One complete line of a JSONL file.
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number.
    pub no: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// The line without its `\n` (and without a trailing `\r`).
    pub bytes: &'a [u8],
}

/// Reads `path` line by line from byte `start`, calling `f` for each complete
/// line. A torn final line (no `\n`) is not passed to `f` and is counted in
/// `diag.torn_tails`; lines over [`MAX_LINE_BYTES`] are skipped and counted.
/// Returns the offset just past the last complete line.
pub fn for_each_line(
    path: &Path,
    start: u64,
    first_line_no: u64,
    diag: &mut Diagnostics,
    mut f: impl FnMut(Line<'_>),
) -> io::Result<u64> {
    let mut file = super::open::open_regular(path)?;
    if start > 0 {
        io::Seek::seek(&mut file, io::SeekFrom::Start(start))?;
    }
    for_each_line_in(
        BufReader::with_capacity(256 << 10, file),
        start,
        first_line_no,
        diag,
        &mut f,
    )
}

/// [`for_each_line`] over any reader (e.g. a zstd decoder).
pub fn for_each_line_in(
    reader: impl BufRead,
    start: u64,
    first_line_no: u64,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
) -> io::Result<u64> {
    read_lines(reader, start, first_line_no, diag, f, &mut |_| {}).map(|stop| stop.offset)
}

/// Where reading a line-fed file stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// Offset just past the last complete line.
    pub offset: u64,
    /// Number of the last complete line (huge lines included).
    pub lines: u64,
}

/// Reads `path` from byte `start` (where line `first_line_no` + 1 begins)
/// up to byte `end` (exclusive; `None` = to EOF), like [`for_each_line`].
/// `torn` receives the bytes of a torn final line (unless it is over the
/// line cap). Bytes past `end` are never read.
pub fn feed_lines(
    path: &Path,
    start: u64,
    first_line_no: u64,
    end: Option<u64>,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
    torn: &mut dyn FnMut(&[u8]),
) -> io::Result<Stop> {
    let mut file = super::open::open_regular(path)?;
    if start > 0 {
        io::Seek::seek(&mut file, io::SeekFrom::Start(start))?;
    }
    let limit = end.map_or(u64::MAX, |e| e.saturating_sub(start));
    read_lines(
        BufReader::with_capacity(256 << 10, file.take(limit)),
        start,
        first_line_no,
        diag,
        f,
        torn,
    )
}

/// The line loop of [`for_each_line_in`] and [`feed_lines`] (and of each
/// decoded DSH frame).
pub(crate) fn read_lines(
    mut reader: impl BufRead,
    start: u64,
    first_line_no: u64,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
    torn: &mut dyn FnMut(&[u8]),
) -> io::Result<Stop> {
    let mut buf: Vec<u8> = Vec::new();
    let mut offset = start;
    let mut no = first_line_no;
    let (max_lines, max_bytes) = session_bounds();
    loop {
        if diag.lines >= max_lines || diag.bytes >= max_bytes {
            // A bounded prefix: stop here, like an end of file (nothing is
            // buffered past it), and say so.
            if !reader.fill_buf()?.is_empty() {
                diag.truncated = true;
            }
            break;
        }
        buf.clear();
        let (n, complete, oversize) = read_bounded_line(&mut reader, &mut buf)?;
        if n == 0 {
            break;
        }
        diag.bytes += n as u64;
        if !complete {
            diag.torn_tails += 1;
            if !oversize {
                torn(&buf);
            }
            break;
        }
        no = no.saturating_add(1);
        if oversize {
            diag.huge_lines += 1;
        } else {
            let mut bytes = &buf[..buf.len() - 1];
            if let Some(b) = bytes.strip_suffix(b"\r") {
                bytes = b;
            }
            diag.lines += 1;
            f(Line { no, offset, bytes });
        }
        offset += n as u64;
    }
    Ok(Stop { offset, lines: no })
}

/// Reads one line into `buf` (with its `\n`), but stops storing bytes past
/// [`MAX_LINE_BYTES`]. Returns (bytes consumed, ended in `\n`, oversize).
fn read_bounded_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
) -> io::Result<(usize, bool, bool)> {
    let mut consumed = 0;
    let mut oversize = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((consumed, false, oversize));
        }
        let (take, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if !oversize {
            if buf.len() + take > MAX_LINE_BYTES + 1 {
                oversize = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        reader.consume(take);
        consumed += take;
        if done {
            if oversize {
                buf.clear();
                buf.push(b'\n');
            }
            return Ok((consumed, true, oversize));
        }
    }
}

/// `s` quoted for a POSIX shell when it holds anything but safe characters
/// (an empty value is quoted too), so a resume command never runs what an
/// id or path smuggles in (`$(…)`, `;`, spaces).
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-:+=@%,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A resume command: `program` (e.g. `claude --resume`) and `value`
/// shell-quoted.
pub fn resume_command(program: &str, value: &str) -> String {
    format!("{program} {}", shell_quote(value))
}

/// Parses a line as JSON; counts and returns `None` for a bad line.
pub fn parse_json(line: &Line<'_>, diag: &mut Diagnostics) -> Option<serde_json::Value> {
    match serde_json::from_slice::<serde_json::Value>(line.bytes) {
        Ok(v) => Some(v),
        Err(_) => {
            if !line.bytes.iter().all(u8::is_ascii_whitespace) {
                diag.bad_lines += 1;
            }
            None
        }
    }
}

/// Reads a whole small file (state/meta JSON), bounded to `max` bytes.
pub fn read_small(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    super::open::open_regular(path)?
        .take(max)
        .read_to_end(&mut v)?;
    Ok(v)
}

/// Caps user/assistant text at 256 KiB on a char boundary.
/// Returns (text, truncated).
pub fn cap_prose(text: &str) -> (String, bool) {
    cap_bytes(text, PROSE_CAP_BYTES)
}

/// Caps `text` at `max` UTF-8 bytes, cut back to a char boundary.
pub fn cap_bytes(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

/// Caps a tool row at 3,072 chars. Returns (text, truncated).
pub fn cap_tool(text: &str) -> (String, bool) {
    match text.char_indices().nth(TOOL_CAP_CHARS) {
        Some((i, _)) => (text[..i].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// First 16 hex of SHA-256 of the full (uncapped) text.
pub fn content_hash16(text: &str) -> String {
    recall_core::naming::hash16(text.as_bytes())
}

/// A title from prose: whitespace collapsed, at most 80 chars.
pub fn title_from(text: &str) -> Option<String> {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t: String = collapsed.chars().take(TITLE_CHARS).collect();
    (!t.is_empty()).then_some(t)
}

/// Parses an RFC 3339 / ISO-8601 timestamp to epoch ms.
pub fn iso_ms(s: &str) -> Option<i64> {
    recall_core::time::parse_rfc3339_ms(s)
}

/// A JSON value's timestamp: ISO string, or epoch number (seconds if it
/// looks like seconds, else ms).
pub fn json_ts_ms(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::String(s) => iso_ms(s),
        serde_json::Value::Number(n) => {
            let f = n.as_f64()?;
            Some(if f < 1e11 {
                (f * 1000.0) as i64
            } else {
                f as i64
            })
        }
        _ => None,
    }
}

/// Every file under `dir` (recursively, at most `max_depth` levels) whose
/// file name satisfies `keep`, sorted by path. Symlinks are followed, but a
/// directory already visited (by canonical path) is not entered again, so a
/// symlink loop ends the walk of that branch instead of recursing forever,
/// and a directory that is `dir` itself or one of its ancestors (a symlink
/// back up, e.g. `sessions/loop -> ..`) is never entered: a loop cannot
/// re-enter the root and reach files beside the walked folder.
/// Unreadable directories are skipped.
pub fn walk_files(
    dir: &Path,
    max_depth: usize,
    keep: &dyn Fn(&str) -> bool,
) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let top = std::fs::canonicalize(dir).ok();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(canonical) = std::fs::canonicalize(&d) else {
            continue;
        };
        let above_top = depth > 0 && top.as_ref().is_some_and(|t| t.starts_with(&canonical));
        if above_top || !seen.insert(canonical) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if depth < max_depth {
                    stack.push((path, depth + 1));
                }
            } else if e.file_name().to_str().is_some_and(keep) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_commands_quote_every_value() {
        assert_eq!(
            resume_command("pi --session", "/a/b_c.jsonl"),
            "pi --session /a/b_c.jsonl"
        );
        assert_eq!(shell_quote("/a/Side Projects/x"), "'/a/Side Projects/x'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(
            resume_command("claude --resume", "$(touch x)"),
            "claude --resume '$(touch x)'"
        );
        assert_eq!(
            resume_command("kimi --session", "a;b"),
            "kimi --session 'a;b'"
        );
        assert_eq!(resume_command("codex resume", ""), "codex resume ''");
    }
    use std::io::Cursor;

    /// (line number, offset, bytes) of each line read.
    type Lines = Vec<(u64, u64, Vec<u8>)>;

    fn lines(data: &[u8]) -> (Lines, Diagnostics, u64) {
        let mut d = Diagnostics::default();
        let mut v = Vec::new();
        let end = for_each_line_in(Cursor::new(data), 0, 0, &mut d, &mut |l| {
            v.push((l.no, l.offset, l.bytes.to_vec()))
        })
        .unwrap();
        (v, d, end)
    }

    #[test]
    fn torn_tail_is_left() {
        let (v, d, end) = lines(b"a\r\nbb\ncc");
        assert_eq!(v, vec![(1, 0, b"a".to_vec()), (2, 3, b"bb".to_vec())]);
        assert_eq!(d.torn_tails, 1);
        assert_eq!(end, 6);
    }

    #[test]
    fn caps_cut_on_char_boundaries() {
        let s = "é".repeat(PROSE_CAP_BYTES);
        let (t, cut) = cap_prose(&s);
        assert!(cut && t.len() == PROSE_CAP_BYTES);
        let (t, cut) = cap_bytes("aé", 2);
        assert_eq!((t.as_str(), cut), ("a", true));
        let (t, cut) = cap_tool(&"ß".repeat(4000));
        assert!(cut && t.chars().count() == TOOL_CAP_CHARS);
    }

    #[test]
    fn titles_collapse() {
        assert_eq!(title_from("  a \n b ").as_deref(), Some("a b"));
        assert_eq!(title_from("x".repeat(100).as_str()).unwrap().len(), 80);
        assert_eq!(title_from(" \n "), None);
    }
}

thread_local! {
    /// Secondary files discovery left out on this thread (see
    /// [`secondary_file`]), until [`take_irregular`].
    static IRREGULAR: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether discovery includes `path` as a secondary file of a unit: a
/// regular file (symlinks followed). One that exists but is not (a FIFO, a
/// device, a socket: opening it could block) is left out and noted, so the
/// sweep names it ([`take_irregular`]); a `stat` never blocks on them.
pub fn secondary_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => true,
        Ok(_) => {
            IRREGULAR.with(|v| {
                v.borrow_mut()
                    .push(format!("{}: not a regular file, left out", path.display()))
            });
            false
        }
        Err(_) => false,
    }
}

/// The secondary files discovery left out on this thread since the last
/// call (`path: reason`).
pub fn take_irregular() -> Vec<String> {
    IRREGULAR.with(|v| std::mem::take(&mut *v.borrow_mut()))
}

thread_local! {
    /// Session databases discovery could not read on this thread (see
    /// [`note_unreadable_store`]), until [`take_unreadable_stores`].
    static UNREADABLE_STORES: std::cell::RefCell<Vec<(std::path::PathBuf, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes that discovery could not read session database `path` (locked,
/// corrupt, not a database): its sessions are kept as they are, and the
/// sweep reports the database as a degraded root.
pub fn note_unreadable_store(path: &Path, reason: String) {
    UNREADABLE_STORES.with(|v| v.borrow_mut().push((path.to_path_buf(), reason)));
}

/// The databases discovery could not read on this thread since the last call.
pub fn take_unreadable_stores() -> Vec<(std::path::PathBuf, String)> {
    UNREADABLE_STORES.with(|v| std::mem::take(&mut *v.borrow_mut()))
}
