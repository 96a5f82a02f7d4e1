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

use super::draft::{assemble, blank, mtime_ms, parse_line, sniff_key, Draft, Header, Loc, Ts};
use super::lenient::{Obj, Str, Uint};
use super::resume::{self, Call, Fed, Outcome};
use super::{Diagnostics, ExtractError, Extracted, SessionSource};
use dating::Dating;
use lanes::{Legacy, Messages};
use prints::Prints;
use recall_core::model::{session_key, Parent, Relation, Source};
use serde::Deserialize;
use serde::Serialize;
use sidecar::Sidecars;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

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
            if meta.is_file() {
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
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub role: Option<serde_json::Value>,
    #[serde(default)]
    pub parent_session_id: Option<String>,
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

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome, ExtractError> {
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
) -> Result<Option<Outcome>, ExtractError> {
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
) -> Result<Option<Outcome>, ExtractError> {
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
    let state = call.want.then(|| {
        resume::State::Intendant(Box::new(Resume {
            session_id: session_id.clone(),
            created_at: meta.created_at.clone(),
            stream: st.clone(),
            sidecars: prints,
        }))
    });
    Ok(Some(Outcome {
        extracted: st.finish(call.src, &meta, &session_id, &dir, &log),
        files: vec![fed],
        state,
    }))
}

impl Stream {
    fn new(created_at: Option<&str>) -> Stream {
        Stream {
            dating: Dating::new(created_at),
            legacy: Legacy::default(),
            messages: Messages::default(),
            era: Era::Undecided,
            wrapper: false,
            parent: None,
            used_sidecars: BTreeSet::new(),
            problems: Vec::new(),
        }
    }

    /// Whether a deserialized state is consistent.
    fn check(&self) -> bool {
        self.legacy.check()
    }

    /// The session (`None` for a wrapper log or a log without records).
    fn finish(
        self,
        src: &SessionSource,
        meta: &Meta,
        session_id: &str,
        dir: &Path,
        log: &Path,
    ) -> Option<Extracted> {
        if self.wrapper {
            return None;
        }
        let mut drafts = match self.era {
            Era::Undecided => self.legacy.finish(
                meta.task.as_deref(),
                meta.created_at.as_deref().and_then(super::common::iso_ms),
            ),
            Era::Mixed(legacy) => legacy,
            Era::New => Vec::new(),
        };
        let offset = drafts.len() as u64;
        let (new_drafts, mut marks) = self.messages.finish();
        for m in &mut marks {
            if let recall_core::model::Mark::SeqCut { at, .. } = m {
                *at += offset;
            }
        }
        drafts.extend(new_drafts);
        let subagent = meta.role.as_ref().is_some_and(|r| match r {
            serde_json::Value::Null => false,
            serde_json::Value::String(s) => !s.is_empty(),
            _ => true,
        });
        for d in &mut drafts {
            d.subagent = subagent;
        }
        let diag = Diagnostics {
            unreadable: self.problems,
            ..Diagnostics::default()
        };
        let parent = self
            .parent
            .or_else(|| meta.parent_session_id.clone().map(|p| (p, None)))
            .filter(|(p, _)| !p.is_empty() && *p != session_id)
            .map(|(p, rel)| Parent {
                key: session_key(Source::Intendant, &p),
                relation: relation(rel.as_deref()),
            });
        let mut paths: Vec<String> = src
            .files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        paths.extend(
            self.used_sidecars
                .iter()
                .map(|rel| dir.join(rel).to_string_lossy().into_owned()),
        );
        let header = Header {
            source: Source::Intendant,
            session_id: session_id.to_string(),
            title: meta
                .name
                .clone()
                .filter(|n| !blank(n))
                .or(meta.task.clone().filter(|t| !blank(t))),
            cwd: meta.cwd.clone().filter(|c| !c.is_empty()),
            branch: None,
            parent,
            resume: None,
            paths,
        };
        assemble(header, drafts, marks, diag, mtime_ms(log))
    }
}

/// `session_relationship` relation names; anything else is a subagent.
fn relation(r: Option<&str>) -> Relation {
    match r {
        Some("fork") => Relation::Fork,
        Some("resume") => Relation::Resume,
        Some("branch") => Relation::Branch,
        _ => Relation::Subagent,
    }
}

/// Which lane the log is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Era {
    /// No epoch and no `conversation_message` yet: legacy rows are buffered.
    Undecided,
    /// The first epoch closed the legacy lane with these records.
    Mixed(Vec<Draft>),
    /// A `conversation_message` came without an epoch: no legacy lane.
    New,
}

/// What streaming a log has gathered (serialized in resume checkpoints).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stream {
    dating: Dating,
    legacy: Legacy,
    messages: Messages,
    era: Era,
    wrapper: bool,
    parent: Option<(String, Option<String>)>,
    used_sidecars: BTreeSet<String>,
    problems: Vec<String>,
}

/// State of one extraction run.
struct Run<'s> {
    session_id: &'s str,
    sidecars: Sidecars,
    st: Stream,
    prints: Prints,
    /// Record span outcomes (a checkpoint is wanted).
    want: bool,
    span_bytes: u64,
}

impl Run<'_> {
    /// Advances the legacy day counter past a row that is not parsed (its
    /// `"ts"` is sniffed).
    fn note_time(&mut self, line: &[u8]) {
        if let Some(ts) = sniff_key(line, b"\"ts\"").and_then(|t| std::str::from_utf8(t).ok()) {
            let _ = self.st.dating.row(Some(ts));
        }
    }

    fn row(&mut self, row: Row, no: u64) {
        // Every row's time of day feeds the day counter, in file order.
        let dated = self.st.dating.row(row.ts.get());
        let ts = row.ts_ms.0.or(dated);
        let event = row.event.get().unwrap_or("");
        match event {
            "session_identity" => self.st.wrapper = true,
            "session_relationship" => {
                let Some(d) = &row.data.0 else { return };
                let me = d.child_session_id.non_empty().or(d.session_id.non_empty());
                if me.is_none_or(|m| m == self.session_id) {
                    if let Some(p) = d.parent_session_id.non_empty() {
                        let rel = d.relation.non_empty().map(str::to_string);
                        self.st.parent = Some((p.to_string(), rel));
                    }
                }
            }
            "conversation_message_epoch" => {
                if matches!(self.st.era, Era::Undecided) {
                    let mapping = match row.data.0.and_then(|d| d.mapping) {
                        Some(serde_json::Value::Array(m)) => m,
                        _ => Vec::new(),
                    };
                    let legacy = std::mem::take(&mut self.st.legacy).close(&mapping);
                    self.st.era = Era::Mixed(legacy);
                }
            }
            "conversation_message" | "conversation_rewound" => {
                if matches!(self.st.era, Era::Undecided) {
                    self.st.era = Era::New;
                }
                if event == "conversation_rewound" {
                    if let Some(cut) = row.data.0.and_then(|d| d.cut_after_seq.0) {
                        self.st.messages.rewound(cut);
                    }
                    return;
                }
                let Some(data) = row.data.0 else { return };
                if let Some(d) = self.message(data, row.file.non_empty(), ts, no) {
                    self.st.messages.push(d);
                }
            }
            _ => {
                if matches!(self.st.era, Era::Undecided) {
                    let span = self.span_text(&row);
                    self.st.legacy.row(row, ts, no, self.session_id, span);
                }
            }
        }
    }

    /// A `conversation_message` as a draft; `None` for harness provenance
    /// or a message without text.
    fn message(&mut self, d: Data, file: Option<&str>, ts: Option<i64>, no: u64) -> Option<Draft> {
        if matches!(
            d.provenance.get(),
            Some("system_injection" | "tool_output" | "context_summary")
        ) {
            return None;
        }
        let role = match d.role.get() {
            Some("user") => recall_core::model::Role::User,
            Some("assistant") => recall_core::model::Role::Assistant,
            _ => return None,
        };
        let (text, loc) = match (file, d.model_offset.0, d.model_bytes.0) {
            (Some(f), Some(off), Some(len)) => {
                let text = self.read_span(f, off, len)?;
                (
                    text,
                    Loc::Sidecar {
                        file: f.to_string(),
                        offset: off,
                        len,
                    },
                )
            }
            _ => {
                let text = d.text.get()?.to_string();
                let loc = match d.message_id.non_empty() {
                    Some(id) => Loc::MessageId(id.to_string()),
                    None => Loc::Event(no),
                };
                (text, loc)
            }
        };
        if blank(&text) {
            return None;
        }
        let mut draft = Draft::new(role, ts, text, loc);
        draft.seq = d.message_seq.0;
        draft.item_id = d.message_id.non_empty().map(str::to_string);
        Some(draft)
    }

    /// The sidecar text of a legacy `model_response` row.
    fn span_text(&mut self, row: &Row) -> Option<(String, String, u64, u64)> {
        if row.event.get() != Some("model_response") {
            return None;
        }
        let f = row.file.non_empty()?;
        let d = row.data.0.as_ref()?;
        let (off, len) = (d.model_offset.0?, d.model_bytes.0?);
        let text = self.read_span(f, off, len)?;
        Some((text, f.to_string(), off, len))
    }

    fn read_span(&mut self, file: &str, off: u64, len: u64) -> Option<String> {
        if len == 0 {
            return None;
        }
        if self.want {
            self.prints.before_read(&self.sidecars, file);
        }
        let got = self.sidecars.read(file, off, len);
        if self.want {
            let outcome = got.as_deref().map_err(|e| e.to_string());
            self.prints.note(file, off, len, outcome);
        }
        match got {
            Ok(t) => {
                self.span_bytes += len;
                self.st.used_sidecars.insert(file.to_string());
                Some(t)
            }
            Err(e) => {
                self.st.problems.push(e.to_string());
                None
            }
        }
    }
}
