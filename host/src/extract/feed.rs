//! The feeding framework every extractor uses (a leaf: it knows no
//! extractor): one extraction [`Call`] with its read limits and
//! diagnostics, how far each line-fed file was [`Fed`], what an extractor
//! hands back ([`Outcome`]), and [`align`] for per-file states.

use super::common::{feed_lines, read_small, Line, Stop};
use super::{Diagnostics, Extracted, SessionSource};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// How far one line-fed file was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fed {
    /// The file.
    pub path: PathBuf,
    /// Offset just past the last complete line fed (exclusive).
    pub offset: u64,
    /// Complete lines fed (over-long skipped lines included).
    pub lines: u64,
}

impl Fed {
    /// Nothing of `path` fed yet.
    pub fn start(path: &Path) -> Fed {
        Fed {
            path: path.to_path_buf(),
            offset: 0,
            lines: 0,
        }
    }
}

/// Diagnostics counters accumulated over the lines fed so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Complete lines read.
    pub lines: u64,
    /// Lines skipped as not JSON.
    pub bad_lines: u64,
    /// Lines skipped as over the line cap.
    pub huge_lines: u64,
    /// Zstd frames skipped as undecodable (DSH).
    #[serde(default)]
    pub bad_frames: u64,
}

/// What a source's extraction hands back to the framework.
pub(crate) struct Outcome<S> {
    /// The session, if any. Its diagnostics hold only problems found inside
    /// lines (`unreadable`); the call's own diagnostics are merged in.
    pub extracted: Option<Extracted>,
    /// Line-fed files as fed, in feed order.
    pub files: Vec<Fed>,
    /// The state to resume from; `None` = this call cannot be resumed.
    pub state: Option<S>,
}

impl<S> Outcome<S> {
    /// No session, no files, no state.
    pub fn none() -> Outcome<S> {
        Outcome {
            extracted: None,
            files: Vec::new(),
            state: None,
        }
    }
}

/// One extraction call: the unit, the read limits, and what was read.
pub(crate) struct Call<'a> {
    /// The unit.
    pub src: &'a SessionSource,
    pub(crate) ends: &'a [u64],
    /// Whether a checkpoint is wanted (else no state is cloned or sealed).
    pub want: bool,
    /// Diagnostics: `lines`, `bad_lines`, `huge_lines` start at the
    /// checkpoint's tally; the rest are this call's.
    pub diag: Diagnostics,
    /// Bytes read besides the line-fed reads counted in `diag.bytes`.
    pub extra_bytes: u64,
}

impl<'a> Call<'a> {
    pub(crate) fn new(src: &'a SessionSource, ends: &'a [u64], want: bool) -> Call<'a> {
        Call {
            src,
            ends,
            want,
            diag: Diagnostics::default(),
            extra_bytes: 0,
        }
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.diag.bytes + self.extra_bytes
    }

    /// The read limit of `path` (`None` = EOF).
    pub fn end_of(&self, path: &Path) -> Option<u64> {
        let i = self.src.files.iter().position(|f| f == path)?;
        self.ends.get(i).copied()
    }

    /// Feeds `from.path` past `from`, calling `f` per complete line and
    /// `torn` with a torn tail. `Ok(None)` = cannot continue from `from`:
    /// the file is now shorter than its offset, or its read limit is below
    /// it. Bad-line counting is the caller's (`diag.bad_lines`).
    pub fn feed(
        &mut self,
        from: &Fed,
        f: &mut dyn FnMut(Line<'_>),
        torn: &mut dyn FnMut(&[u8]),
    ) -> io::Result<Option<Fed>> {
        let end = self.end_of(&from.path);
        if from.offset > 0 {
            let len = std::fs::metadata(&from.path)?.len();
            if len < from.offset || end.is_some_and(|e| e < from.offset) {
                return Ok(None);
            }
        }
        let Stop { offset, lines } = feed_lines(
            &from.path,
            from.offset,
            from.lines,
            end,
            &mut self.diag,
            f,
            torn,
        )?;
        Ok(Some(Fed {
            path: from.path.clone(),
            offset,
            lines,
        }))
    }

    /// Reads a small whole file, counting its bytes.
    pub fn read_small(&mut self, path: &Path, max: u64) -> io::Result<Vec<u8>> {
        let v = read_small(path, max)?;
        self.extra_bytes += v.len() as u64;
        Ok(v)
    }
}

/// For sources whose files feed independent per-file states: where each
/// of `now` (the unit's line-fed files, in feed order) was in `fed`
/// (`None` = a new file). `None` overall when a fed file is gone or the
/// order changed.
pub(crate) fn align(fed: &[Fed], now: &[&Path]) -> Option<Vec<Option<usize>>> {
    let mut out = Vec::with_capacity(now.len());
    let mut next = 0;
    for p in now {
        match fed.iter().position(|f| f.path == *p) {
            Some(i) if i == next => {
                out.push(Some(i));
                next += 1;
            }
            Some(_) => return None,
            None => out.push(None),
        }
    }
    (next == fed.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(p: &str) -> Fed {
        Fed::start(Path::new(p))
    }

    #[test]
    fn align_keeps_order_and_finds_new_files() {
        let old = [fed("a"), fed("c")];
        let now = [Path::new("a"), Path::new("b"), Path::new("c")];
        assert_eq!(align(&old, &now), Some(vec![Some(0), None, Some(1)]));
        assert_eq!(align(&old, &[Path::new("a")]), None, "c is gone");
        assert_eq!(align(&old, &[Path::new("c"), Path::new("a")]), None);
    }
}
