//! Extractor for Intendant native session logs (DESIGN.md §5 "intendant",
//! FORMATS.md §7): `logs/<dir>/session.jsonl` with `session_meta.json` and
//! model-text sidecars under `turns/`.
//!
//! A log with any `session_identity` event wraps an external agent and
//! yields nothing. Two eras: the legacy lane ([`lanes::Legacy`]: events
//! before the first `conversation_message_epoch`, or the whole file when it
//! has no `conversation_message`) and the message lane
//! (`conversation_message` rows after it, with `conversation_rewound` cuts).

mod dating;
mod lanes;
mod prints;
pub mod sidecar;
mod stream;

use super::agent::Agent;
use super::common::resume_command;
use super::feed::{Call, Fed, Outcome};
use super::json::{blank, parse_line, sniff_key, Ts};
use super::lenient::{Obj, Str, Uint};
use super::{ExtractError, Extracted, SessionSource};
use prints::Prints;
use recall_core::model::{SessionMeta, Source};
use serde::{Deserialize, Serialize};
use sidecar::Sidecars;
use std::fs;
use std::path::{Path, PathBuf};
use stream::{Run, Stream};

/// Finds every `logs/<dir>/session.jsonl` under `INTENDANT_HOME`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let Ok(rd) = fs::read_dir(root.join("logs")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let log = dir.join("session.jsonl");
            if !log.is_file() {
                return None;
            }
            let mut files = vec![log];
            let meta = dir.join("session_meta.json");
            if super::common::secondary_file(&meta) {
                files.push(meta);
            }
            Some(SessionSource {
                source: Source::Intendant,
                unit: dir.to_string_lossy().into_owned(),
                files,
                context: serde_json::Value::Null,
            })
        })
        .collect()
}

/// What `session_meta.json` contributes.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Meta {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub task: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The project directory, as Intendant itself writes it.
    #[serde(default)]
    pub project_root: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub role: Option<serde_json::Value>,
    #[serde(default)]
    pub parent_session_id: Option<String>,
    /// The model the session ran with (a string; any other shape is ignored).
    #[serde(default)]
    pub model: Option<serde_json::Value>,
}

/// One log row. Fields an event does not use, or with an unexpected shape,
/// read as absent (lenient types), so a format change loses a field, not
/// the line.
#[derive(Deserialize)]
pub(crate) struct Row<'a> {
    #[serde(borrow, default)]
    pub ts: Str<'a>,
    #[serde(default)]
    pub ts_ms: Ts,
    #[serde(borrow, default)]
    pub event: Str<'a>,
    #[serde(borrow, default)]
    pub message: Str<'a>,
    #[serde(borrow, default)]
    pub data: Obj<Data<'a>>,
    #[serde(borrow, default)]
    pub file: Str<'a>,
}

/// `data` fields of the indexed events.
#[derive(Default, Deserialize)]
pub(crate) struct Data<'a> {
    #[serde(borrow, default)]
    pub session_id: Str<'a>,
    #[serde(borrow, default)]
    pub task: Str<'a>,
    #[serde(borrow, default)]
    pub id: Str<'a>,
    #[serde(borrow, default)]
    pub text: Str<'a>,
    #[serde(borrow, default)]
    pub message_id: Str<'a>,
    #[serde(default)]
    pub message_seq: Uint,
    #[serde(borrow, default)]
    pub role: Str<'a>,
    #[serde(borrow, default)]
    pub provenance: Str<'a>,
    #[serde(default)]
    pub model_offset: Uint,
    #[serde(default)]
    pub model_bytes: Uint,
    #[serde(default)]
    pub cut_after_seq: Uint,
    #[serde(default)]
    pub mapping: Option<serde_json::Value>,
    // session_relationship
    #[serde(borrow, default)]
    pub parent_session_id: Str<'a>,
    #[serde(borrow, default)]
    pub child_session_id: Str<'a>,
    #[serde(borrow, default)]
    pub relation: Str<'a>,
}

/// Events the extractor reads; every other row is skipped unparsed.
fn indexed(event: &[u8]) -> bool {
    matches!(
        event,
        b"session_identity"
            | b"session_started"
            | b"steer_requested"
            | b"steer_delivered"
            | b"info"
            | b"model_response"
            | b"conversation_message"
            | b"conversation_message_epoch"
            | b"conversation_rewound"
            | b"session_relationship"
    )
}

/// Extracts one log directory (`files[0]` = `session.jsonl`).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    super::resume::run(src, &[], None, false).map(|r| r.extracted)
}

/// A log's state for resuming ([`super::resume`]): the stream state, the
/// meta fields it was read under, and its sidecars' fingerprints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    /// The session id the rows were read as (meta `session_id` or dir name).
    session_id: String,
    /// The meta `created_at` the rows were dated from.
    created_at: Option<String>,
    stream: Stream,
    sidecars: Prints,
}

/// Intendant in the registry.
pub struct Intendant;

impl Agent for Intendant {
    const ID: &'static str = "intendant";
    const SOURCE: Source = Source::Intendant;
    const ENV: &'static str = "INTENDANT_HOME";
    const SCOPE: Option<&'static [&'static str]> = Some(&["logs"]);
    type Resume = Resume;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".intendant"))
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
        scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &Resume,
    ) -> Result<Option<Outcome<Resume>>, ExtractError> {
        resume(call, files, state)
    }

    /// `intendant --resume <id>`; sub-agent sessions (meta `role` set, so
    /// every record is a subagent record) are not resumed on their own.
    fn resume_command(meta: &SessionMeta, subagent: bool) -> Option<String> {
        (!subagent).then(|| resume_command("intendant --resume", &meta.session_id))
    }
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
    let Some(log) = call.src.files.first() else {
        return Ok(Outcome::none());
    };
    let from = Fed::start(log);
    let meta = read_meta(call);
    let id = session_id(&meta, log);
    let stream = Stream::new(meta.created_at.as_deref());
    run(call, meta, id, stream, Prints::default(), &from)?.ok_or_else(|| ExtractError::Io {
        path: log.clone(),
        source: std::io::Error::other("cannot read"),
    })
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly (the
/// meta's id or `created_at` changed, or a sidecar span read earlier
/// reads differently now).
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &Resume,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    let (Some(log), [fed]) = (call.src.files.first(), files) else {
        return Ok(None);
    };
    if fed.path != *log || !state.stream.check() {
        return Ok(None);
    }
    let meta = read_meta(call);
    let id = session_id(&meta, log);
    if id != state.session_id || meta.created_at != state.created_at {
        return Ok(None);
    }
    let dir = log.parent().unwrap_or(Path::new("."));
    let mut prints = state.sidecars.clone();
    if !prints.verify(&Sidecars::new(dir), &mut call.extra_bytes) {
        return Ok(None);
    }
    run(call, meta, id, state.stream.clone(), prints, fed)
}

/// `session_meta.json` (default when absent or unreadable).
fn read_meta(call: &mut Call) -> Meta {
    let path = call
        .src
        .files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "session_meta.json"))
        .cloned();
    path.and_then(|p| call.read_small(&p, 16 << 20).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Meta `session_id`, else the log directory's name.
fn session_id(meta: &Meta, log: &Path) -> String {
    let dir = log.parent().unwrap_or(Path::new("."));
    meta.session_id
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

fn run(
    call: &mut Call,
    meta: Meta,
    session_id: String,
    stream: Stream,
    prints: Prints,
    from: &Fed,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    let log = from.path.clone();
    let dir = log.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut run = Run {
        session_id: &session_id,
        sidecars: Sidecars::new(&dir),
        st: stream,
        prints,
        want: call.want,
        span_bytes: 0,
    };
    let mut bad = 0u64;
    let fed = call
        .feed(
            from,
            &mut |line| {
                if let Some(ev) = sniff_key(line.bytes, b"\"event\"") {
                    if !indexed(ev) {
                        run.note_time(line.bytes);
                        return;
                    }
                }
                match parse_line::<Row>(line.bytes) {
                    Some(row) => run.row(row, line.no),
                    None => {
                        if !blank(&String::from_utf8_lossy(line.bytes)) {
                            bad += 1;
                        }
                    }
                }
            },
            &mut |_| {},
        )
        .map_err(|source| ExtractError::Io {
            path: log.clone(),
            source,
        })?;
    let Some(fed) = fed else { return Ok(None) };
    call.diag.bad_lines += bad;
    call.extra_bytes += run.span_bytes;
    let Run { st, prints, .. } = run;
    let state = call.want.then(|| Resume {
        session_id: session_id.clone(),
        created_at: meta.created_at.clone(),
        stream: st.clone(),
        sidecars: prints,
    });
    Ok(Some(Outcome {
        extracted: st.finish(call.src, &meta, &session_id, &dir, &log),
        files: vec![fed],
        state,
    }))
}
