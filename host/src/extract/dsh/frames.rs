//! Zstd frame splitting for DSH's `.jsonl.zstd` logs (DESIGN.md §5 `dsh`,
//! FORMATS-dsh.md §2): a file is concatenated independent frames, each
//! holding whole lines. Frames are found by structure alone (magic, frame
//! header, block headers, optional checksum) without decompressing, then
//! decoded one at a time with the `zstd` crate's streaming decoder.
//!
//! An incomplete final frame is a torn tail: reading stops at its start,
//! which is where the next read continues (DSH's repair later truncates the
//! file there and re-appends its lines as a new frame). A complete frame
//! that fails to decode is skipped and counted; its lines are never fed.

use super::super::common::{read_lines, Line, Stop, MAX_LINE_BYTES};
use super::super::Diagnostics;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Little-endian magic of a zstd frame.
const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// Frames decoding to more than this are decoded twice (checked, then fed)
/// instead of being held in memory while checked.
const BUFFERED_FRAME: usize = MAX_LINE_BYTES;

/// What lies at an offset of a framed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// A structurally complete zstd frame `[start, end)`.
    Frame {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// A skippable frame `[start, end)` (no lines).
    Skippable {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// Bytes `[start, end)` that are not a frame: `end` is the next magic
    /// (or the limit).
    Garbage {
        /// First byte.
        start: u64,
        /// Where the next frame may start.
        end: u64,
    },
    /// An incomplete frame from `start` to the limit: a torn tail.
    Torn {
        /// First byte of the incomplete frame.
        start: u64,
    },
}

/// Reads frame structure from a buffered, seekable reader.
struct Scanner<R> {
    r: R,
    pos: u64,
    limit: u64,
}

impl<R: BufRead + Seek> Scanner<R> {
    /// Reads exactly `buf.len()` bytes; `Ok(false)` when the limit or EOF
    /// comes first.
    fn exact(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        if self.pos + buf.len() as u64 > self.limit {
            return Ok(false);
        }
        match self.r.read_exact(buf) {
            Ok(()) => {
                self.pos += buf.len() as u64;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Skips `n` bytes; `Ok(false)` past the limit or EOF (`len` = file length).
    fn skip(&mut self, n: u64, len: u64) -> io::Result<bool> {
        let to = self.pos.saturating_add(n);
        if to > self.limit || to > len {
            return Ok(false);
        }
        self.r
            .seek_relative(i64::try_from(n).map_err(io::Error::other)?)?;
        self.pos = to;
        Ok(true)
    }

    /// The span starting at `self.pos` (`None` at the limit).
    fn next(&mut self, len: u64) -> io::Result<Option<Span>> {
        let start = self.pos;
        if start >= self.limit {
            return Ok(None);
        }
        let mut magic = [0u8; 4];
        if !self.exact(&mut magic)? {
            return self.torn(start, len).map(Some);
        }
        if magic[1..] == [0x2A, 0x4D, 0x18] && magic[0] & 0xF0 == 0x50 {
            let mut size = [0u8; 4];
            if !self.exact(&mut size)? || !self.skip(u64::from(u32::from_le_bytes(size)), len)? {
                return self.torn(start, len).map(Some);
            }
            return Ok(Some(Span::Skippable {
                start,
                end: self.pos,
            }));
        }
        if magic != MAGIC {
            return self.garbage(start, len).map(Some);
        }
        let mut fhd = [0u8; 1];
        if !self.exact(&mut fhd)? {
            return self.torn(start, len).map(Some);
        }
        let fhd = fhd[0];
        if fhd & 0x08 != 0 {
            // Reserved bit set: not a frame header.
            return self.garbage(start, len).map(Some);
        }
        let single = fhd & 0x20 != 0;
        let checksum = fhd & 0x04 != 0;
        let dict = [0u64, 1, 2, 4][usize::from(fhd & 0x03)];
        let fcs = match fhd >> 6 {
            0 => u64::from(single),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let header_rest = u64::from(!single) + dict + fcs;
        if !self.skip(header_rest, len)? {
            return self.torn(start, len).map(Some);
        }
        loop {
            let mut bh = [0u8; 3];
            if !self.exact(&mut bh)? {
                return self.torn(start, len).map(Some);
            }
            let h = u32::from(bh[0]) | u32::from(bh[1]) << 8 | u32::from(bh[2]) << 16;
            let last = h & 1 != 0;
            let size = u64::from(h >> 3);
            let body = match (h >> 1) & 0x03 {
                0 | 2 => size,
                1 => 1,
                _ => return self.garbage(start, len).map(Some),
            };
            if !self.skip(body, len)? {
                return self.torn(start, len).map(Some);
            }
            if last {
                break;
            }
        }
        if checksum && !self.skip(4, len)? {
            return self.torn(start, len).map(Some);
        }
        Ok(Some(Span::Frame {
            start,
            end: self.pos,
        }))
    }

    /// A frame (or skippable frame) from `start` that runs past the limit:
    /// a torn tail when no frame follows it, else bytes that are not a frame
    /// up to the next one (a header claiming more than the file holds, e.g.
    /// a skippable frame of 4 GB, must not hide the frames after it).
    fn torn(&mut self, start: u64, len: u64) -> io::Result<Span> {
        let stop = self.limit.min(len);
        Ok(match self.garbage(start, len)? {
            g @ Span::Garbage { end, .. } if end < stop => g,
            _ => Span::Torn { start },
        })
    }

    /// From `start`, the bytes up to the next frame magic (or the limit).
    fn garbage(&mut self, start: u64, len: u64) -> io::Result<Span> {
        let from = start + 1;
        self.r.seek(SeekFrom::Start(from))?;
        self.pos = from;
        let stop = self.limit.min(len);
        let mut window: Vec<u8> = Vec::new();
        while self.pos < stop {
            let buf = self.r.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let take = buf
                .len()
                .min(usize::try_from(stop - self.pos).unwrap_or(usize::MAX));
            let base = self.pos - window.len() as u64;
            window.extend_from_slice(&buf[..take]);
            self.r.consume(take);
            self.pos += take as u64;
            if let Some(i) = memchr::memmem::find(&window, &MAGIC) {
                let at = base + i as u64;
                self.r.seek(SeekFrom::Start(at))?;
                self.pos = at;
                return Ok(Span::Garbage { start, end: at });
            }
            let keep = window.len().saturating_sub(MAGIC.len() - 1);
            window.drain(..keep);
        }
        Ok(Span::Garbage {
            start,
            end: self.pos,
        })
    }
}

/// Where feeding a framed file stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fed {
    /// Offset just past the last frame read (whole, skippable or garbage).
    pub offset: u64,
    /// Lines fed so far (over-long skipped lines included).
    pub lines: u64,
}

/// Reads the frames of `path` from `start` (a frame boundary, after
/// `first_line_no` lines) up to `end` (exclusive; `None` = EOF), calling `f`
/// for every line of every frame that decodes. A frame that does not decode
/// and bytes that are not a frame count in `diag.bad_frames`; an incomplete
/// final frame counts in `diag.torn_tails` and is left unread.
pub fn feed_frames(
    path: &Path,
    start: u64,
    first_line_no: u64,
    end: Option<u64>,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
) -> io::Result<Fed> {
    let file = crate::extract::open::open_regular(path)?;
    let len = file.metadata()?.len();
    // Opened apart: a cloned handle would share the scanner's file offset.
    let mut decode_file = crate::extract::open::open_regular(path)?;
    let mut r = BufReader::with_capacity(64 << 10, file);
    r.seek(SeekFrom::Start(start))?;
    let mut scan = Scanner {
        r,
        pos: start,
        limit: end.unwrap_or(u64::MAX).min(len),
    };
    let mut fed = Fed {
        offset: start,
        lines: first_line_no,
    };
    let bad_before = diag.bad_frames;
    let mut skipped = 0u64;
    while let Some(span) = scan.next(len)? {
        match span {
            Span::Frame { start, end } => {
                diag.bytes += end - start;
                match decode(&mut decode_file, start, end, fed.lines, diag, f)? {
                    Some(lines) => fed.lines = lines,
                    None => {
                        diag.bad_frames += 1;
                        skipped += end - start;
                    }
                }
                fed.offset = end;
            }
            Span::Skippable { start, end } => {
                diag.bytes += end - start;
                fed.offset = end;
            }
            Span::Garbage { start, end } => {
                diag.bytes += end - start;
                diag.bad_frames += 1;
                skipped += end - start;
                fed.offset = end;
            }
            Span::Torn { start } => {
                diag.bytes += scan.limit.saturating_sub(start);
                diag.torn_tails += 1;
                break;
            }
        }
    }
    // Lines lost in the file's middle are reported (a torn tail is not:
    // the next sweep reads it once it is whole).
    let bad = diag.bad_frames - bad_before;
    if bad > 0 {
        diag.unreadable.push(format!(
            "{}: {bad} zstd span(s) of {skipped} byte(s) did not decode and were skipped",
            path.display()
        ));
    }
    Ok(fed)
}

/// The offset just past the last complete frame of `path` (what a cursor
/// may read up to): a torn final frame is not counted.
pub fn complete_end(path: &Path) -> io::Result<u64> {
    let file = crate::extract::open::open_regular(path)?;
    let len = file.metadata()?.len();
    let mut scan = Scanner {
        r: BufReader::with_capacity(16 << 10, file),
        pos: 0,
        limit: len,
    };
    let mut out = 0;
    while let Some(span) = scan.next(len)? {
        match span {
            Span::Frame { end, .. } | Span::Skippable { end, .. } | Span::Garbage { end, .. } => {
                out = end
            }
            Span::Torn { .. } => break,
        }
    }
    Ok(out)
}

/// Decodes the frame `[start, end)` and feeds its lines (numbered after
/// `lines`). `Ok(None)` = the frame does not decode: nothing was fed.
fn decode(
    file: &mut File,
    start: u64,
    end: u64,
    lines: u64,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
) -> io::Result<Option<u64>> {
    let mut plain = Vec::new();
    let fits = {
        let Some(mut d) = decoder(file, start, end)? else {
            return Ok(None);
        };
        match (&mut d)
            .take(BUFFERED_FRAME as u64 + 1)
            .read_to_end(&mut plain)
        {
            Ok(_) if plain.len() <= BUFFERED_FRAME => true,
            Ok(_) => false,
            Err(_) => return Ok(None),
        }
    };
    if fits {
        // A frame ends in `\n`; a last line without one is still a line of
        // this complete frame (and, when it is not JSON, a bad line).
        if plain.last().is_some_and(|&b| b != b'\n') {
            plain.push(b'\n');
        }
        return feed(&plain[..], start, lines, diag, f).map(Some);
    }
    // Too big to hold: check the whole frame first, then stream it.
    drop(plain);
    {
        let Some(mut d) = decoder(file, start, end)? else {
            return Ok(None);
        };
        if io::copy(&mut d, &mut io::sink()).is_err() {
            return Ok(None);
        }
    }
    let Some(d) = decoder(file, start, end)? else {
        return Ok(None);
    };
    feed(BufReader::new(d), start, lines, diag, f).map(Some)
}

/// A single-frame streaming decoder over `[start, end)` of `file`; `None`
/// when the decoder cannot be set up.
fn decoder(file: &mut File, start: u64, end: u64) -> io::Result<Option<impl Read + use<'_>>> {
    file.seek(SeekFrom::Start(start))?;
    let body = BufReader::new(Read::take(&mut *file, end - start));
    Ok(zstd::stream::read::Decoder::with_buffer(body)
        .ok()
        .map(zstd::stream::read::Decoder::single_frame))
}

/// Feeds the lines of one decoded frame.
fn feed(
    reader: impl BufRead,
    frame_start: u64,
    lines: u64,
    diag: &mut Diagnostics,
    f: &mut dyn FnMut(Line<'_>),
) -> io::Result<u64> {
    let bytes = diag.bytes;
    let Stop { lines, .. } = read_lines(reader, frame_start, lines, diag, f, &mut |_| {})?;
    // Compressed bytes were counted by the caller.
    diag.bytes = bytes;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn frame(text: &str) -> Vec<u8> {
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
        e.include_checksum(true).expect("checksum");
        e.write_all(text.as_bytes()).expect("write");
        e.finish().expect("finish")
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct Tmp(std::path::PathBuf);
    impl Tmp {
        fn new(name: &str) -> Tmp {
            let p =
                std::env::temp_dir().join(format!("recall-frames-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).expect("tmp");
            Tmp(p)
        }
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn lines_of(path: &Path, end: Option<u64>) -> (Vec<String>, Fed, Diagnostics) {
        let mut diag = Diagnostics::default();
        let mut out = Vec::new();
        let fed = feed_frames(path, 0, 0, end, &mut diag, &mut |l| {
            out.push(String::from_utf8_lossy(l.bytes).into_owned())
        })
        .expect("read");
        (out, fed, diag)
    }

    #[test]
    fn frames_decode_one_by_one_and_a_torn_tail_is_left() {
        let dir = Tmp::new("torn");
        let p = dir.path().join("s.jsonl.zstd");
        let (a, b, c) = (frame("h\n"), frame("x\ny\n"), frame("z\n"));
        let mut bytes = [a.clone(), b.clone()].concat();
        bytes.extend_from_slice(&c[..c.len() - 3]);
        std::fs::write(&p, &bytes).expect("write");
        let (lines, fed, diag) = lines_of(&p, None);
        assert_eq!(lines, ["h", "x", "y"]);
        assert_eq!(fed.offset, (a.len() + b.len()) as u64);
        assert_eq!(fed.lines, 3);
        assert_eq!((diag.torn_tails, diag.bad_frames), (1, 0));
        assert_eq!(complete_end(&p).expect("scan"), fed.offset);
    }

    #[test]
    fn files_larger_than_the_read_buffer_keep_their_frames_in_order() {
        let dir = Tmp::new("large");
        let p = dir.path().join("s.jsonl.zstd");
        // Incompressible lines, so the file is many read buffers long.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut want = Vec::new();
        let mut bytes = Vec::new();
        for i in 0..300 {
            let mut line = format!("{i}:");
            // Every 50th line is long: its blocks outrun the read buffer.
            let words = if i % 50 == 7 { 40_000 } else { 120 };
            for _ in 0..words {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                line.push_str(&format!("{:x}", x >> 40));
            }
            bytes.extend(frame(&format!("{line}\n")));
            want.push(line);
        }
        assert!(bytes.len() > 4 * (64 << 10), "{}", bytes.len());
        std::fs::write(&p, &bytes).expect("write");
        let (lines, fed, diag) = lines_of(&p, None);
        assert_eq!((diag.bad_frames, diag.torn_tails), (0, 0));
        assert_eq!(lines, want);
        assert_eq!(fed.offset, bytes.len() as u64);
    }

    #[test]
    fn a_corrupt_complete_frame_is_skipped_and_counted() {
        let dir = Tmp::new("corrupt");
        let p = dir.path().join("s.jsonl.zstd");
        let mut bad = frame("one line that will not survive\n");
        let n = bad.len();
        bad[n - 2] ^= 0xFF; // the checksum no longer matches
        let bytes = [frame("h\n"), bad, frame("z\n")].concat();
        std::fs::write(&p, &bytes).expect("write");
        let (lines, fed, diag) = lines_of(&p, None);
        assert_eq!(lines, ["h", "z"]);
        assert_eq!(fed.offset, bytes.len() as u64);
        assert_eq!((diag.torn_tails, diag.bad_frames), (0, 1));
    }

    #[test]
    fn garbage_between_frames_is_skipped_to_the_next_magic() {
        let dir = Tmp::new("garbage");
        let p = dir.path().join("s.jsonl.zstd");
        let bytes = [frame("h\n"), b"not zstd".to_vec(), frame("z\n")].concat();
        std::fs::write(&p, &bytes).expect("write");
        let (lines, _, diag) = lines_of(&p, None);
        assert_eq!(lines, ["h", "z"]);
        assert_eq!(diag.bad_frames, 1);
    }

    #[test]
    fn reading_stops_at_the_limit_and_resumes_from_the_offset() {
        let dir = Tmp::new("limit");
        let p = dir.path().join("s.jsonl.zstd");
        let (a, b) = (frame("h\n"), frame("x\n"));
        std::fs::write(&p, [a.clone(), b].concat()).expect("write");
        let (lines, fed, _) = lines_of(&p, Some(a.len() as u64));
        assert_eq!(
            (lines.as_slice(), fed.offset),
            (&["h".to_string()][..], a.len() as u64)
        );
        let mut diag = Diagnostics::default();
        let mut rest = Vec::new();
        let fed2 = feed_frames(&p, fed.offset, fed.lines, None, &mut diag, &mut |l| {
            rest.push((l.no, String::from_utf8_lossy(l.bytes).into_owned()))
        })
        .expect("read");
        assert_eq!(rest, [(2, "x".to_string())]);
        assert_eq!(fed2.lines, 2);
    }
}
