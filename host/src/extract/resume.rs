//! Resumable extraction (DESIGN.md §6: an Appended file is read only past
//! its offset).
//!
//! Every extractor keeps cross-line state while it streams a unit's files.
//! [`extract_resumable`] returns that state with the extraction, as an
//! opaque, serializable [`Checkpoint`]; given it back, the next call reads
//! each line-fed file only past the offset it was fed to, continues the
//! state and finishes from a copy of it. The result is the one a full
//! extraction of the same bytes gives (diagnostics aside from `bytes`).
//!
//! When the bytes or files changed in a way the state cannot absorb
//! exactly (a file shorter than its offset, a file gone, a file inserted
//! where the source's files depend on each other, a cross-file pattern the
//! extractor does not track), the call silently extracts from byte 0.
//! Small whole-read files (Kimi `state.json`, Intendant `session_meta.json`)
//! are re-read on every call and never cached; Intendant sidecar spans are
//! checked against their files' length and mtime.

use super::common::{feed_lines, read_small, Line, Stop};
use super::{claude, codex, intendant, kimi, pi};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::Source;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// Bumped whenever a state's meaning changes: older checkpoints are then
/// ignored (a full extraction), never misread.
pub const CHECKPOINT_VERSION: u32 = 1;

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
}

/// Where a unit's extraction stopped: how far each line-fed file was read
/// and the extractor's state at that point. Serializable (serde JSON),
/// opaque to the indexer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// [`CHECKPOINT_VERSION`] of the code that wrote it.
    pub version: u32,
    /// The agent.
    pub source: Source,
    /// Line-fed files in feed order, with the offset they were fed up to
    /// (exclusive) and the number of complete lines fed.
    pub files: Vec<Fed>,
    /// Diagnostics counters so far.
    pub tally: Tally,
    /// Source-specific state.
    pub state: State,
}

/// The extractor state inside a [`Checkpoint`], one variant per source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Claude Code: per-file states plus the main file's tree and meta.
    Claude(Box<claude::Resume>),
    /// Codex: the rollout's streaming state.
    Codex(Box<codex::Resume>),
    /// Kimi Code: per-wire states.
    KimiCode(Box<kimi::code::Resume>),
    /// Legacy kimi-cli: per-wire states.
    KimiLegacy(Box<kimi::legacy::Resume>),
    /// Pi: the file's streaming state.
    Pi(Box<pi::Resume>),
    /// Intendant: the log's streaming state and its sidecars' fingerprints.
    Intendant(Box<intendant::Resume>),
}

/// What [`extract_resumable`] returns.
#[derive(Debug)]
pub struct Resumed {
    /// Same as `extract()` would return for the same bytes (None = unit
    /// yields no session).
    pub extracted: Option<Extracted>,
    /// The state after this call, to pass as `from` next time. None = no
    /// resume from this call (a Codex `.jsonl.zst`, always rebuilt whole, or
    /// a file that failed part-way through).
    pub checkpoint: Option<Checkpoint>,
    /// Whether `from` was used (false = extracted from byte 0).
    pub resumed: bool,
    /// Source bytes read by this call (all files, including small
    /// whole-read files like state.json, sidecar spans and pre-scans).
    pub bytes_read: u64,
}

/// Extracts `src`, reading line-fed file `src.files[i]` only up to
/// `ends[i]` (the cursor's offset just past the last complete line; a
/// missing `ends` entry = to EOF). With `from`, each file listed in the
/// checkpoint is read only from its `offset` (the caller guarantees the
/// bytes before it are unchanged). When the extractor cannot resume exactly,
/// it silently extracts from byte 0 (`resumed == false`).
pub fn extract_resumable(
    src: &SessionSource,
    ends: &[u64],
    from: Option<&Checkpoint>,
) -> Result<Resumed, ExtractError> {
    run(src, ends, from, true)
}

/// [`extract_resumable`] with the checkpoint made only when `want`.
pub(crate) fn run(
    src: &SessionSource,
    ends: &[u64],
    from: Option<&Checkpoint>,
    want: bool,
) -> Result<Resumed, ExtractError> {
    let mut wasted = 0;
    if let Some(cp) = from.filter(|c| usable(c, src)) {
        let mut call = Call::new(src, ends, want);
        call.diag.lines = cp.tally.lines;
        call.diag.bad_lines = cp.tally.bad_lines;
        call.diag.huge_lines = cp.tally.huge_lines;
        let out = match &cp.state {
            State::Claude(s) => claude::resume(&mut call, &cp.files, s),
            State::Codex(s) => codex::resume(&mut call, &cp.files, s),
            State::KimiCode(s) => kimi::code::resume(&mut call, &cp.files, s),
            State::KimiLegacy(s) => kimi::legacy::resume(&mut call, &cp.files, s),
            State::Pi(s) => pi::resume(&mut call, &cp.files, s),
            State::Intendant(s) => intendant::resume(&mut call, &cp.files, s),
        };
        match out {
            Ok(Some(out)) => return Ok(call.finish(out, true, 0)),
            // Cannot resume exactly (or a read failed): start over.
            Ok(None) | Err(_) => wasted = call.bytes_read(),
        }
    }
    let mut call = Call::new(src, ends, want);
    let out = match src.source {
        Source::ClaudeCode => claude::scratch(&mut call),
        Source::Codex => codex::scratch(&mut call),
        Source::Kimi => kimi::scratch(&mut call),
        Source::Pi => pi::scratch(&mut call),
        Source::Intendant => intendant::scratch(&mut call),
    }?;
    Ok(call.finish(out, false, wasted))
}

/// A checkpoint this code wrote for this source, whose offsets are sane.
fn usable(cp: &Checkpoint, src: &SessionSource) -> bool {
    let source_matches = matches!(
        (&cp.state, src.source),
        (State::Claude(_), Source::ClaudeCode)
            | (State::Codex(_), Source::Codex)
            | (State::KimiCode(_), Source::Kimi)
            | (State::KimiLegacy(_), Source::Kimi)
            | (State::Pi(_), Source::Pi)
            | (State::Intendant(_), Source::Intendant)
    );
    // Every line ends in `\n`: a line count above the offset is garbage;
    // the tally counts exactly the lines fed.
    let fed = cp.files.iter().try_fold(0u64, |n, f| {
        (f.lines <= f.offset).then(|| n.checked_add(f.lines))?
    });
    let tally = cp.tally.lines.checked_add(cp.tally.huge_lines);
    let layout_matches = match &cp.state {
        State::KimiCode(_) => !kimi::is_legacy(src),
        State::KimiLegacy(_) => kimi::is_legacy(src),
        _ => true,
    };
    cp.version == CHECKPOINT_VERSION
        && cp.source == src.source
        && source_matches
        && layout_matches
        && fed.is_some()
        && fed == tally
        && cp.tally.bad_lines <= cp.tally.lines
}

/// What a source's extraction hands back to [`Call::finish`].
pub(crate) struct Outcome {
    /// The session, if any. Its diagnostics hold only problems found inside
    /// lines (`unreadable`); the call's own diagnostics are merged in.
    pub extracted: Option<Extracted>,
    /// Line-fed files as fed, in feed order.
    pub files: Vec<Fed>,
    /// The state to resume from; `None` = this call cannot be resumed.
    pub state: Option<State>,
}

impl Outcome {
    /// No session, no files, no state.
    pub fn none() -> Outcome {
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
    ends: &'a [u64],
    /// Whether a checkpoint is wanted (else no state is cloned or sealed).
    pub want: bool,
    /// Diagnostics: `lines`, `bad_lines`, `huge_lines` start at the
    /// checkpoint's tally; the rest are this call's.
    pub diag: Diagnostics,
    /// Bytes read besides the line-fed reads counted in `diag.bytes`.
    pub extra_bytes: u64,
}

impl<'a> Call<'a> {
    fn new(src: &'a SessionSource, ends: &'a [u64], want: bool) -> Call<'a> {
        Call {
            src,
            ends,
            want,
            diag: Diagnostics::default(),
            extra_bytes: 0,
        }
    }

    fn bytes_read(&self) -> u64 {
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

    fn finish(self, out: Outcome, resumed: bool, wasted: u64) -> Resumed {
        let bytes_read = self.bytes_read() + wasted;
        let tally = Tally {
            lines: self.diag.lines,
            bad_lines: self.diag.bad_lines,
            huge_lines: self.diag.huge_lines,
        };
        let extracted = out.extracted.map(|mut x| {
            // Problems an extractor found inside lines (Intendant sidecars)
            // follow the unreadable files, as in a plain extraction.
            let mut unreadable = self.diag.unreadable.clone();
            unreadable.append(&mut x.diagnostics.unreadable);
            x.diagnostics = Diagnostics {
                unreadable,
                ..self.diag.clone()
            };
            x
        });
        let checkpoint = out.state.filter(|_| self.want).map(|state| Checkpoint {
            version: CHECKPOINT_VERSION,
            source: self.src.source,
            files: out.files,
            tally,
            state,
        });
        Resumed {
            extracted,
            checkpoint,
            resumed,
            bytes_read,
        }
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
    fn a_unit_without_files_yields_nothing() {
        for source in [
            Source::ClaudeCode,
            Source::Codex,
            Source::Kimi,
            Source::Pi,
            Source::Intendant,
        ] {
            let src = SessionSource {
                source,
                unit: "none".into(),
                files: Vec::new(),
                context: serde_json::Value::Null,
            };
            let r = extract_resumable(&src, &[], None).expect("no error");
            assert!(
                r.extracted.is_none() && r.checkpoint.is_none(),
                "{source:?}"
            );
            assert_eq!(r.bytes_read, 0);
        }
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
