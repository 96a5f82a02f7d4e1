//! Resumable extraction (DESIGN.md §6: an Appended file is read only past
//! its offset), dispatched through the registry (`extract::AGENTS`).
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

use super::agent::{Entry, Erased};
use super::feed::Call;
pub use super::feed::{Fed, Tally};
use super::{dsh, ExtractError, Extracted, SessionSource, AGENTS};
use recall_core::model::Source;
use serde::{Deserialize, Serialize};

/// Bumped whenever a state's meaning changes: older checkpoints are then
/// ignored (a full extraction), never misread.
pub const CHECKPOINT_VERSION: u32 = 2;

/// Where a unit's extraction stopped: how far each line-fed file was read
/// and the extractor's state at that point. Serializable (serde JSON),
/// opaque to the indexer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// [`CHECKPOINT_VERSION`] of the code that wrote it.
    pub version: u32,
    /// The source.
    pub source: Source,
    /// The registry id of the agent that wrote it.
    pub agent: String,
    /// Line-fed files in feed order, with the offset they were fed up to
    /// (exclusive) and the number of complete lines fed.
    pub files: Vec<Fed>,
    /// Diagnostics counters so far.
    pub tally: Tally,
    /// The agent's own state (its `Agent::Resume`, serialized).
    pub state: serde_json::Value,
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
    /// What could not be read when the unit yields no session (a `.zst`
    /// cut inside its first block): reported, as a session's
    /// `diagnostics.unreadable` is.
    pub unreadable: Vec<String>,
}

/// Extracts `src`, reading line-fed file `src.files[i]` only up to
/// `ends[i]` (the cursor's offset just past the last complete line, or
/// frame; a missing `ends` entry = to EOF). With `from`, each file listed in
/// the checkpoint is read only from its `offset` (the caller guarantees the
/// bytes before it are unchanged). When the extractor cannot resume exactly,
/// it silently extracts from byte 0 (`resumed == false`).
pub fn extract_resumable(
    src: &SessionSource,
    ends: &[u64],
    from: Option<&Checkpoint>,
) -> Result<Resumed, ExtractError> {
    run(src, ends, from, true)
}

/// [`extract_resumable`], building the checkpoint only when `checkpoint`:
/// a sweep keeps checkpoints of live units only, and building one clones
/// the extractor's state (the same records either way).
pub fn extract_resumable_with(
    src: &SessionSource,
    ends: &[u64],
    from: Option<&Checkpoint>,
    checkpoint: bool,
) -> Result<Resumed, ExtractError> {
    run(src, ends, from, checkpoint)
}

/// The registry row that reads `src`.
fn agent_of(src: &SessionSource) -> Option<&'static Entry> {
    AGENTS
        .iter()
        .find(|a| a.source == src.source && (a.reads)(src))
}

/// [`extract_resumable`] with the checkpoint made only when `want`.
pub(crate) fn run(
    src: &SessionSource,
    ends: &[u64],
    from: Option<&Checkpoint>,
    want: bool,
) -> Result<Resumed, ExtractError> {
    let Some(agent) = agent_of(src) else {
        return Ok(Resumed {
            extracted: None,
            checkpoint: None,
            resumed: false,
            bytes_read: 0,
            unreadable: Vec::new(),
        });
    };
    let mut wasted = 0;
    if let Some(cp) = from.filter(|c| usable(c, src, agent)) {
        let mut call = Call::new(src, ends, want);
        call.diag.lines = cp.tally.lines;
        call.diag.bad_lines = cp.tally.bad_lines;
        call.diag.huge_lines = cp.tally.huge_lines;
        call.diag.bad_frames = cp.tally.bad_frames;
        match (agent.resume)(&mut call, &cp.files, &cp.state) {
            Ok(Some(out)) => return Ok(finish(call, agent, out, true, 0)),
            // Cannot resume exactly (or a read failed): start over.
            Ok(None) | Err(_) => wasted = call.bytes_read(),
        }
    }
    let mut call = Call::new(src, ends, want);
    let out = (agent.scratch)(&mut call)?;
    Ok(finish(call, agent, out, false, wasted))
}

/// A checkpoint this code wrote for this agent, whose offsets are sane.
fn usable(cp: &Checkpoint, src: &SessionSource, agent: &Entry) -> bool {
    // Every line ends in `\n`: a line count above the offset is garbage
    // (except in a zstd-framed file, whose offset counts compressed bytes);
    // the tally counts exactly the lines fed.
    let fed = cp.files.iter().try_fold(0u64, |n, f| {
        (f.lines <= f.offset || dsh::is_framed(&f.path)).then(|| n.checked_add(f.lines))?
    });
    let tally = cp.tally.lines.checked_add(cp.tally.huge_lines);
    cp.version == CHECKPOINT_VERSION
        && cp.source == src.source
        && cp.agent == agent.id
        && fed.is_some()
        && fed == tally
        && cp.tally.bad_lines <= cp.tally.lines
}

/// The call's result: diagnostics merged, the resume command set by the
/// agent, the checkpoint sealed when wanted.
fn finish(call: Call, agent: &Entry, out: Erased, resumed: bool, wasted: u64) -> Resumed {
    let bytes_read = call.bytes_read() + wasted;
    let tally = Tally {
        lines: call.diag.lines,
        bad_lines: call.diag.bad_lines,
        huge_lines: call.diag.huge_lines,
        bad_frames: call.diag.bad_frames,
    };
    let unreadable = match out.extracted {
        None => call.diag.unreadable.clone(),
        Some(_) => Vec::new(),
    };
    let extracted = out.extracted.map(|mut x| {
        // Problems an extractor found inside lines (Intendant sidecars)
        // follow the unreadable files, as in a plain extraction.
        let mut unreadable = call.diag.unreadable.clone();
        unreadable.append(&mut x.diagnostics.unreadable);
        x.diagnostics = super::Diagnostics {
            unreadable,
            ..call.diag.clone()
        };
        let subagent = !x.records.is_empty() && x.records.iter().all(|r| r.subagent);
        x.meta.resume = (agent.resume_command)(&x.meta, subagent);
        x
    });
    let checkpoint = out.state.filter(|_| call.want).map(|state| Checkpoint {
        version: CHECKPOINT_VERSION,
        source: call.src.source,
        agent: agent.id.to_string(),
        files: out.files,
        tally,
        state,
    });
    Resumed {
        extracted,
        checkpoint,
        resumed,
        bytes_read,
        unreadable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_without_files_yields_nothing() {
        for source in Source::ALL {
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
    fn every_source_has_an_agent() {
        for source in Source::ALL {
            assert!(
                AGENTS.iter().any(|a| a.source == source),
                "{source:?} has no registry row"
            );
        }
        let mut ids: Vec<&str> = AGENTS.iter().map(|a| a.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), AGENTS.len(), "registry ids are unique");
    }
}
