//! Legacy kimi-cli (Python) sessions: `<uuid>/wire.jsonl` lines
//! `{"timestamp": <s>, "message": {"type", "payload"}}` (DESIGN.md §5 "kimi",
//! FORMATS.md §3b).
//!
//! User prose: `TurnBegin.user_input`, `SteerInput.user_input`. Assistant
//! prose: `ContentPart` `text` parts of one step joined with `\n` (`think`
//! parts are reasoning). Tool rows: `ToolCall` (name + arguments) and
//! `ToolResult` output. Sub-agents: `subagents/<id>/wire.jsonl`, indexed
//! after the main wire with `subagent: true`; a `SubagentEvent` in the main
//! wire is indexed inline (as a subagent record) only when its agent has no
//! wire file of its own, so nothing is indexed twice.

use crate::extract::common::Line;
use crate::extract::draft::{assemble, mtime_ms, Draft, Header, Loc};
use crate::extract::feed::{Call, Fed, Outcome};
use crate::extract::json::{
    blank, parse_line, sniff_key_at, tool_call_text, value_text, TextOrParts, Ts,
};
use crate::extract::lenient::{Obj, Str};
use crate::extract::{Diagnostics, ExtractError, Extracted};
use recall_core::model::{Role, Source};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// A session's state for resuming ([`crate::extract::resume`]): one
/// state per wire in feed order (main first), and the agents whose
/// `SubagentEvent`s were indexed inline because they had no wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    wires: Vec<Wire>,
    inlined: BTreeSet<String>,
}

/// One wire's streaming state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Wire {
    steps: Steps,
    drafts: Vec<Draft>,
}

impl Wire {
    fn check(&self) -> bool {
        let n = self.drafts.len();
        let ok = |s: &Option<usize>| s.is_none_or(|i| i < n);
        ok(&self.steps.main) && self.steps.inline.values().all(ok)
    }
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
    Ok(read(call, None)?.unwrap_or_else(Outcome::none))
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly: a
/// wire is gone, or a new sub-agent wire belongs to an agent whose events
/// were already indexed inline.
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
    let own_wire: HashSet<String> = paths[1..]
        .iter()
        .filter_map(|p| p.parent()?.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let (olds, mut inlined) = match from {
        None => (vec![None; paths.len()], BTreeSet::new()),
        Some((fed, state)) => match super::continued(fed, &state.wires, &paths) {
            Some(olds) if !state.inlined.iter().any(|a| own_wire.contains(a)) => {
                (olds, state.inlined.clone())
            }
            _ => return Ok(None),
        },
    };
    let (mut wires, mut fed_out, mut broken) = (Vec::new(), Vec::new(), false);
    for (k, (path, old)) in paths.iter().zip(olds).enumerate() {
        let was_fed = old.is_some();
        let (from, mut wire) = old.unwrap_or_else(|| (Fed::start(path), Wire::default()));
        let mut ctx = Ctx {
            subagent: k > 0,
            own_wire: &own_wire,
            inlined: &mut inlined,
            bad: 0,
            lines: 0,
        };
        let fed = call.feed(&from, &mut |line| ctx.line(&mut wire, &line), &mut |_| {});
        let (bad, lines) = (ctx.bad, ctx.lines);
        call.diag.bad_lines += bad;
        match fed {
            Ok(Some(fed)) => {
                wires.push(wire);
                fed_out.push(fed);
            }
            Ok(None) => return Ok(None),
            Err(source) if k == 0 => {
                return Err(ExtractError::Io {
                    path: path.clone(),
                    source,
                })
            }
            Err(_) if was_fed => return Ok(None), // the full read reports it
            Err(e) => {
                call.diag
                    .unreadable
                    .push(format!("{}: {e}", path.display()));
                if lines > 0 {
                    broken = true; // lines fed before the failure count, untracked
                    wires.push(wire);
                }
            }
        }
    }
    let state = (call.want && !broken).then(|| {
        for w in &mut wires {
            w.drafts.iter_mut().for_each(Draft::seal);
        }
        Resume {
            wires: wires.clone(),
            inlined,
        }
    });
    let extracted = finish(call, &main, wires);
    Ok(Some(Outcome {
        extracted,
        files: fed_out,
        state,
    }))
}

/// The session: the wires' records in feed order, `state.json` read now.
fn finish(call: &mut Call, main: &Path, wires: Vec<Wire>) -> Option<Extracted> {
    let session_id = main
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let state_path = super::state_json(call.src);
    let title = state_path.and_then(|p| read_title(call, &p));
    let drafts: Vec<Draft> = wires.into_iter().flat_map(|w| w.drafts).collect();
    let header = Header {
        source: Source::Kimi,
        resume: None, // the agent's (`KimiLegacy::resume_command`)
        session_id,
        title,
        cwd: call
            .src
            .context
            .get("cwd")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        branch: None,
        parent: None,
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
        Vec::new(),
        Diagnostics::default(),
        mtime_ms(main),
    )
}

/// `custom_title` (or `title`) from `state.json`; empty means none.
fn read_title(call: &mut Call, path: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Raw {
        custom_title: Option<String>,
        title: Option<String>,
    }
    let bytes = call.read_small(path, 16 << 20).ok()?;
    let raw: Raw = serde_json::from_slice(&bytes).ok()?;
    raw.custom_title
        .filter(|t| !t.trim().is_empty())
        .or(raw.title.filter(|t| !t.trim().is_empty()))
}

/// One wire line. Fields with an unexpected shape read as absent (lenient
/// types), so a format change loses a field, not the line.
#[derive(Deserialize)]
struct WireLine<'a> {
    #[serde(default)]
    timestamp: Ts,
    #[serde(borrow, default)]
    message: Obj<Msg<'a>>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    payload: Obj<Payload<'a>>,
}

/// The payload fields of every indexed message type.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default)]
    user_input: Option<TextOrParts<'a>>,
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
    #[serde(borrow, default)]
    function: Obj<Function<'a>>,
    #[serde(default)]
    return_value: Obj<ReturnValue<'a>>,
    #[serde(borrow, default)]
    tool_call_id: Str<'a>,
    #[serde(borrow, default)]
    agent_id: Str<'a>,
    #[serde(borrow, default)]
    event: Obj<Box<Msg<'a>>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ReturnValue<'a> {
    #[serde(default)]
    output: Option<serde_json::Value>,
    #[serde(borrow, default)]
    message: Str<'a>,
}

fn indexed(ty: &[u8]) -> bool {
    matches!(
        ty,
        b"TurnBegin"
            | b"SteerInput"
            | b"StepBegin"
            | b"ContentPart"
            | b"ToolCall"
            | b"ToolResult"
            | b"SubagentEvent"
    )
}

/// Per-wire (and per inline sub-agent) step grouping: the draft that holds
/// the current step's assistant text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Steps {
    main: Option<usize>,
    inline: HashMap<String, Option<usize>>,
}

/// What handling one wire's lines needs besides the wire's state.
struct Ctx<'a> {
    subagent: bool,
    /// Agents that have a wire file of their own.
    own_wire: &'a HashSet<String>,
    /// Agents whose events were indexed inline.
    inlined: &'a mut BTreeSet<String>,
    bad: u64,
    lines: u64,
}

impl Ctx<'_> {
    fn line(&mut self, wire: &mut Wire, line: &Line<'_>) {
        self.lines += 1;
        // The record kind is `message.type`, one level down.
        if let Some(ty) = sniff_key_at(line.bytes, b"type", 2) {
            if !indexed(ty) {
                return;
            }
        }
        let Some(l) = parse_line::<WireLine>(line.bytes) else {
            if !blank(&String::from_utf8_lossy(line.bytes)) {
                self.bad += 1;
            }
            return;
        };
        let Some(msg) = l.message.0 else { return };
        let ts = l.timestamp.0;
        if msg.ty.get() == Some("SubagentEvent") {
            let Some(p) = msg.payload.0 else { return };
            let agent = p.agent_id.get().unwrap_or("").to_string();
            if self.own_wire.contains(&agent) {
                return;
            }
            if let Some(inner) = p.event.0 {
                self.inlined.insert(agent.clone());
                let slot = wire.steps.inline.entry(agent).or_default();
                on_msg(*inner, ts, line.no, true, slot, &mut wire.drafts);
            }
            return;
        }
        on_msg(
            msg,
            ts,
            line.no,
            self.subagent,
            &mut wire.steps.main,
            &mut wire.drafts,
        );
    }
}

fn on_msg(
    msg: Msg,
    ts: Option<i64>,
    no: u64,
    subagent: bool,
    step: &mut Option<usize>,
    drafts: &mut Vec<Draft>,
) {
    let ty = msg.ty.get().unwrap_or("");
    let Some(p) = msg.payload.0 else {
        if matches!(ty, "StepBegin" | "TurnBegin") {
            *step = None;
        }
        return;
    };
    let push_at = |drafts: &mut Vec<Draft>, role, text: String, loc: Loc| {
        let mut d = Draft::new(role, ts, text, loc);
        d.subagent = subagent;
        drafts.push(d);
    };
    let push =
        |drafts: &mut Vec<Draft>, role, text: String| push_at(drafts, role, text, Loc::Event(no));
    match ty {
        "TurnBegin" | "SteerInput" => {
            *step = None;
            let text = p.user_input.map(|u| u.text("\n")).unwrap_or_default();
            if !blank(&text) {
                push(drafts, Role::User, text);
            }
        }
        "StepBegin" => *step = None,
        "ContentPart" => {
            if p.ty.get() != Some("text") {
                return;
            }
            let Some(text) = p.text.get() else { return };
            if let Some(i) = *step {
                let d = &mut drafts[i];
                d.text.push('\n');
                d.text.push_str(text);
            } else if !blank(text) {
                *step = Some(drafts.len());
                push(drafts, Role::Assistant, text.to_string());
            }
        }
        "ToolCall" => {
            let (name, args) = p
                .function
                .0
                .map(|f| (f.name.get().unwrap_or("").to_string(), f.arguments))
                .unwrap_or_default();
            push(drafts, Role::Tool, tool_call_text(&name, args.as_ref()));
        }
        "ToolResult" => {
            let (output, message) = p
                .return_value
                .0
                .map(|r| (r.output, r.message.get().map(str::to_string)))
                .unwrap_or_default();
            let text = output
                .map(value_text)
                .filter(|t| !t.is_empty())
                .or(message)
                .unwrap_or_default();
            // Located by the call id it answers (the call itself is located
            // by line), so a large output is never hashed.
            let loc = match p.tool_call_id.non_empty() {
                Some(id) => Loc::MessageId(id.to_string()),
                None => Loc::Event(no),
            };
            if !text.is_empty() {
                push_at(drafts, Role::Tool, text, loc);
            }
        }
        _ => {}
    }
}
