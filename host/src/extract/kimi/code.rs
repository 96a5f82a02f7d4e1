//! Kimi Code (TypeScript) sessions: `state.json` plus one `wire.jsonl` per
//! agent (DESIGN.md §5 "kimi", FORMATS.md §3a).
//!
//! User prose is `turn.prompt`/`turn.steer` with a user origin (and
//! `skill_activation`/`plugin_command` typed as a slash command); a wire with
//! no `turn.prompt` falls back to `context.append_message` role `user`.
//! Assistant prose is the `content.part` text of one `stepUuid` joined with
//! `\n` (a wire with no `content.part` falls back to `context.append_message`
//! role `assistant`). `tool.call`/`tool.result` are tool rows.
//! `context.undo{count}` supersedes the last `count` user turns (not across a
//! compaction or clear) with a `record_ids` mark. Sub-agent wires follow the
//! main wire, their records flagged `subagent`.

use super::wire::{Agent, Wire};
use crate::extract::draft::{assemble, mtime_ms, Header};
use crate::extract::feed::{Call, Fed, Outcome};
use crate::extract::{Diagnostics, ExtractError};
use recall_core::model::{Mark, Parent, Relation, Source};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A session's state for resuming ([`super::super::resume`]): one state per
/// wire, in feed order (main first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    wires: Vec<Wire>,
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
    Ok(read(call, None)?.unwrap_or_else(Outcome::none))
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly. Any
/// wire may have grown and new sub-agent wires may have appeared anywhere
/// (wires are independent); a wire whose lane choice flips after a line it
/// decided is read again from byte 0, and so is the whole session.
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &Resume,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    if !state.wires.iter().all(Wire::check) {
        return Ok(None);
    }
    read(call, Some((files, state)))
}

fn read(
    call: &mut Call,
    from: Option<(&[Fed], &Resume)>,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    let paths = super::wire_paths(call.src);
    let Some(main) = paths.first().cloned() else {
        return Ok(None);
    };
    let olds = match from {
        None => vec![None; paths.len()],
        Some((fed, state)) => match super::continued(fed, &state.wires, &paths) {
            Some(olds) => olds,
            None => return Ok(None),
        },
    };
    let resuming = from.is_some();
    let (mut wires, mut fed_out, mut broken) = (Vec::new(), Vec::new(), false);
    for (k, (path, old)) in paths.iter().zip(olds).enumerate() {
        let name = path
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let agent = Agent {
            name: if k == 0 { "main" } else { &name },
            subagent: k > 0,
        };
        let was_fed = old.is_some();
        let got = match old {
            Some((fed, wire)) => feed(call, agent, wire, &fed, true),
            // A new wire in a resumed call is read optimistically too.
            None if resuming => feed(call, agent, Wire::default(), &Fed::start(path), true),
            None => match Wire::scanned(path, call.end_of(path)) {
                Ok((wire, scanned)) => {
                    call.extra_bytes += scanned;
                    feed(call, agent, wire, &Fed::start(path), false)
                }
                Err(e) => Err(Box::new((e, None))),
            },
        };
        match got {
            Ok(Some((wire, fed))) => {
                wires.push(wire);
                fed_out.push(fed);
            }
            Ok(None) => return Ok(None),
            Err(failed) => {
                let (source, partial) = *failed;
                if k == 0 {
                    return Err(ExtractError::Io {
                        path: path.clone(),
                        source,
                    });
                }
                if was_fed {
                    return Ok(None); // the full read reports it
                }
                call.diag
                    .unreadable
                    .push(format!("{}: {source}", path.display()));
                if let Some(w) = partial {
                    broken = true; // lines fed before the failure count, untracked
                    wires.push(w);
                }
            }
        }
    }
    let state = (call.want && !broken).then(|| {
        wires.iter_mut().for_each(Wire::seal);
        Resume {
            wires: wires.clone(),
        }
    });
    let extracted = finish(call, &main, wires);
    Ok(Some(Outcome {
        extracted,
        files: fed_out,
        state,
    }))
}

/// A wire's read failure, with what it fed before failing (if anything).
type Failed = Box<(std::io::Error, Option<Wire>)>;

/// Feeds one wire past `from`; `settle` = check its lane choice after
/// (a resumed or optimistic read). `Ok(None)` = cannot resume exactly.
fn feed(
    call: &mut Call,
    agent: Agent,
    mut wire: Wire,
    from: &Fed,
    settle: bool,
) -> Result<Option<(Wire, Fed)>, Failed> {
    let track = call.want || settle;
    let huge = call.diag.huge_lines;
    let (mut bad, mut lines, mut torn) = (0u64, 0u64, Vec::new());
    let fed = call.feed(
        from,
        &mut |line| {
            lines += 1;
            if !wire.line(agent, &line, track) {
                bad += 1;
            }
        },
        &mut |t| torn = t.to_vec(),
    );
    call.diag.bad_lines += bad;
    if call.diag.huge_lines > huge {
        wire.skipped_huge();
    }
    match fed {
        Ok(Some(fed)) if !settle || wire.settle(&torn) => Ok(Some((wire, fed))),
        Ok(_) => Ok(None),
        Err(e) => Err(Box::new((e, (lines > 0).then_some(wire)))),
    }
}

/// The session: the wires' records in feed order (marks shifted to count
/// every earlier wire's records), `state.json` read now.
fn finish(call: &mut Call, main: &Path, wires: Vec<Wire>) -> Option<crate::extract::Extracted> {
    // <session>/agents/main/wire.jsonl
    let session_dir = main.parent().and_then(Path::parent).and_then(Path::parent);
    let session_id = session_dir
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let state_path = super::state_json(call.src);
    let state = state_path.map(|p| read_state(call, &p)).unwrap_or_default();
    let main_cwd = wires.first().and_then(|w| w.cwd.clone());
    let (mut drafts, mut marks) = (Vec::new(), Vec::new());
    for w in wires {
        let before = drafts.len() as u64;
        marks.extend(w.marks.into_iter().map(|m| match m {
            Mark::RecordIds { at, ids, reason } => Mark::RecordIds {
                at: at.saturating_add(before),
                ids,
                reason,
            },
            other => other,
        }));
        drafts.extend(w.drafts);
    }
    let context_dir = call
        .src
        .context
        .get("work_dir")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let header = Header {
        source: Source::Kimi,
        resume: None, // the agent's (`KimiCode::resume_command`)
        session_id,
        title: state.title,
        cwd: state.cwd.or(main_cwd).or(context_dir),
        branch: None,
        parent: state.forked_from.map(|id| Parent {
            key: recall_core::model::session_key(Source::Kimi, &id),
            relation: Relation::Fork,
        }),
        paths: call
            .src
            .files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        models: Vec::new(),
    };
    assemble(
        header,
        drafts,
        marks,
        Diagnostics::default(),
        mtime_ms(main),
    )
}

/// What `state.json` contributes.
#[derive(Debug, Default)]
struct State {
    title: Option<String>,
    cwd: Option<String>,
    forked_from: Option<String>,
}

fn read_state(call: &mut Call, path: &Path) -> State {
    #[derive(Deserialize)]
    struct Raw {
        title: Option<String>,
        custom_title: Option<String>,
        #[serde(rename = "workDir")]
        work_dir: Option<String>,
        cwd: Option<String>,
        #[serde(rename = "forkedFrom")]
        forked_from: Option<serde_json::Value>,
    }
    let Ok(bytes) = call.read_small(path, 16 << 20) else {
        return State::default();
    };
    let Ok(raw) = serde_json::from_slice::<Raw>(&bytes) else {
        return State::default();
    };
    let nonempty = |s: Option<String>| s.filter(|t| !t.trim().is_empty());
    let forked_from = match raw.forked_from {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(serde_json::Value::Object(o)) => o
            .get("sessionId")
            .or_else(|| o.get("id"))
            .and_then(|v| v.as_str())
            .map(str::to_string),
        _ => None,
    };
    State {
        title: nonempty(raw.title).or(nonempty(raw.custom_title)),
        cwd: nonempty(raw.work_dir).or(nonempty(raw.cwd)),
        forked_from: forked_from.filter(|s| !s.is_empty()),
    }
}
