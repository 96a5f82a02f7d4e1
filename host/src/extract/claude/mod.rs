//! Claude Code extractor (DESIGN.md §5, FORMATS.md §1).
//!
//! Root = the `projects/` directory. A session is `<project>/<sid>.jsonl`
//! plus its subagent transcripts — `<project>/<sid>/subagents/**/agent-*.jsonl`
//! (never `agent-acompact-*`, the compaction summariser) and legacy
//! `<project>/agent-*.jsonl` whose lines carry the session's `sessionId` —
//! and its inline `isSidechain:true` lines. Records come in source order:
//! the main file's, then each subagent file's, files sorted by path.
//!
//! Identity: the file stem when it has the UUID shape or some line carries
//! it, else the first `sessionId` seen. A main-file line that carries
//! another session's id is the replayed prefix of a resumed copy only when
//! its uuid is a line of that session's file beside it: then it is not a
//! record of this session, and that session becomes its parent (relation
//! `resume`). Otherwise it is this session's own line (the "clear context
//! and implement the plan" hand-off); a parent that is not indexed is never
//! claimed.

mod line;
mod prose;
mod rewind;
mod session;

use super::agent::Agent;
use super::common::resume_command;
use super::common::walk_files;
use super::feed::{align, Call, Fed, Outcome};
use super::{ExtractError, Extracted, SessionSource};
use recall_core::model::{SessionMeta, Source};
use session::Session;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How deep `<sid>/subagents/` is searched (workflows nest two levels).
const SUBAGENT_DEPTH: usize = 6;
/// How much of a legacy agent file is read to find its `sessionId`.
const SNIFF_BYTES: u64 = 1 << 20;

/// Finds the sessions under the `projects/` directory `root`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let mut out = Vec::new();
    let Ok(projects) = std::fs::read_dir(root) else {
        return out;
    };
    let mut projects: Vec<PathBuf> = projects
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    for project in projects {
        let Ok(entries) = std::fs::read_dir(&project) else {
            continue;
        };
        let mut mains = Vec::new();
        let mut legacy: HashMap<String, Vec<PathBuf>> = HashMap::new();
        for e in entries.flatten() {
            let path = e.path();
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if !name.ends_with(".jsonl") || path.is_dir() {
                continue;
            }
            if name.starts_with("agent-") {
                if is_subagent_name(&name) {
                    if let Some(sid) = sniff_session_id(&path) {
                        legacy.entry(sid).or_default().push(path);
                    }
                }
            } else {
                mains.push(path);
            }
        }
        mains.sort();
        for main in mains {
            let stem = file_stem(&main);
            let mut subs = walk_files(
                &project.join(&stem).join("subagents"),
                SUBAGENT_DEPTH,
                &|n| is_subagent_name(n) && n.ends_with(".jsonl"),
            );
            subs.extend(legacy.remove(&stem).unwrap_or_default());
            subs.sort();
            let mut files = vec![main.clone()];
            files.extend(subs);
            out.push(SessionSource {
                source: Source::ClaudeCode,
                unit: main.to_string_lossy().into_owned(),
                files,
                context: serde_json::Value::Null,
            });
        }
    }
    out
}

/// `agent-*.jsonl` but not a compaction run (`agent-acompact-*`).
fn is_subagent_name(name: &str) -> bool {
    name.starts_with("agent-") && !name.starts_with("agent-acompact-")
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first `sessionId` in the first MiB of a file.
fn sniff_session_id(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = super::open::open_regular(path).ok()?;
    let reader = std::io::BufReader::new(f.take(SNIFF_BYTES));
    for l in reader.split(b'\n') {
        let l = l.ok()?;
        if let Ok(line) = line::parse(&l) {
            if let Some(sid) = line.session_id.non_empty() {
                return Some(sid.to_string());
            }
        }
    }
    None
}

/// Extracts one session (its main file first, then its subagent files).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    super::resume::run(src, &[], None, false).map(|r| r.extracted)
}

/// A session's state for resuming ([`super::resume`]).
pub type Resume = Session;

/// Claude Code in the registry.
pub struct Claude;

impl Agent for Claude {
    const ID: &'static str = "claude";
    const SOURCE: Source = Source::ClaudeCode;
    const ENV: &'static str = "CLAUDE_CONFIG_DIR";
    type Resume = Session;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".claude")).join("projects")
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<Session>, ExtractError> {
        scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &Session,
    ) -> Result<Option<Outcome<Session>>, ExtractError> {
        resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        Some(resume_command("claude --resume", &meta.session_id))
    }
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<Session>, ExtractError> {
    if call.src.files.is_empty() {
        return Ok(Outcome::none());
    }
    let starts = call
        .src
        .files
        .iter()
        .map(|p| (Fed::start(p), false))
        .collect();
    read(call, Session::default(), starts)?.ok_or_else(|| ExtractError::Io {
        path: call.src.files.first().cloned().unwrap_or_default(),
        source: std::io::Error::other("inconsistent uuids"),
    })
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly. Any
/// file may have grown and new subagent files may sit anywhere in the feed
/// order; a uuid that a later file already holds turning up in an earlier
/// one (see [`session`]) needs a full extraction.
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &Session,
) -> Result<Option<Outcome<Session>>, ExtractError> {
    if !state.check(files.len()) {
        return Ok(None);
    }
    let paths: Vec<&Path> = call.src.files.iter().map(PathBuf::as_path).collect();
    let Some(map) = align(files, &paths) else {
        return Ok(None);
    };
    if map.first() != Some(&Some(0)) {
        return Ok(None); // not the same main file
    }
    let mut to = vec![0; files.len()];
    for (k, old) in map.iter().enumerate() {
        if let Some(i) = old {
            to[*i] = k;
        }
    }
    let starts = map
        .iter()
        .zip(&paths)
        .map(|(old, p)| match old {
            Some(i) => (files[*i].clone(), true),
            None => (Fed::start(p), false),
        })
        .collect();
    read(call, state.clone().reorder(&to, paths.len()), starts)
}

/// Feeds every file past its start (`was_fed` = listed in the checkpoint).
fn read(
    call: &mut Call,
    mut s: Session,
    starts: Vec<(Fed, bool)>,
) -> Result<Option<Outcome<Session>>, ExtractError> {
    let Some(main) = call.src.files.first().cloned() else {
        return Ok(None);
    };
    let (mut fed_out, mut broken) = (Vec::with_capacity(starts.len()), false);
    for (k, (from, was_fed)) in starts.into_iter().enumerate() {
        s.open(k);
        let (mut bad, mut lines, mut conflict) = (0u64, 0u64, false);
        let got = call.feed(
            &from,
            &mut |l| {
                if conflict {
                    return;
                }
                lines += 1;
                match s.line(k, l.bytes) {
                    Ok(true) => {}
                    Ok(false) => bad += 1,
                    Err(session::Conflict) => conflict = true,
                }
            },
            &mut |_| {},
        );
        call.diag.bad_lines += bad;
        if conflict {
            return Ok(None);
        }
        match got {
            Ok(Some(fed)) => fed_out.push(fed),
            Ok(None) => return Ok(None),
            Err(source) if k == 0 => {
                return Err(ExtractError::Io {
                    path: main.clone(),
                    source,
                })
            }
            Err(_) if was_fed && from.offset > 0 => return Ok(None), // the full read reports it
            Err(e) => {
                call.diag
                    .unreadable
                    .push(format!("{}: {e}", from.path.display()));
                // Lines fed before a failure count but are not tracked.
                broken |= lines > 0;
                fed_out.push(from);
            }
        }
    }
    let state = (call.want && !broken).then(|| {
        s.seal();
        s.clone()
    });
    Ok(Some(Outcome {
        extracted: s.finish(&main, call.src),
        files: fed_out,
        state,
    }))
}
