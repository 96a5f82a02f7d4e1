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

use crate::extract::common::{for_each_line, read_small};
use crate::extract::draft::{
    assemble, blank, mtime_ms, parse_line, sniff_key_at, tool_call_text, value_text, Draft, Header,
    Loc, TextOrParts, Ts,
};
use crate::extract::lenient::{Obj, Str};
use crate::extract::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::{Role, Source};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;

/// Extracts one legacy session (`files[0]` = `<uuid>/wire.jsonl`).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    let Some(main) = src.files.first() else {
        return Ok(None);
    };
    let session_dir = main.parent();
    let session_id = session_dir
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let title = src
        .files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "state.json"))
        .and_then(|p| read_title(p));
    let sub_wires: Vec<&Path> = src
        .files
        .iter()
        .skip(1)
        .filter(|f| f.file_name().is_some_and(|n| n == "wire.jsonl"))
        .map(|p| p.as_path())
        .collect();
    let own_wire: HashSet<String> = sub_wires
        .iter()
        .filter_map(|p| p.parent()?.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();

    let mut diag = Diagnostics::default();
    let mut drafts = Vec::new();
    read_wire(main, false, &own_wire, &mut drafts, &mut diag).map_err(|source| {
        ExtractError::Io {
            path: main.clone(),
            source,
        }
    })?;
    for wire in sub_wires {
        if let Err(e) = read_wire(wire, true, &own_wire, &mut drafts, &mut diag) {
            diag.unreadable.push(format!("{}: {e}", wire.display()));
        }
    }
    let header = Header {
        source: Source::Kimi,
        resume: (!session_id.is_empty()).then(|| format!("kimi --session {session_id}")),
        session_id,
        title,
        cwd: src
            .context
            .get("cwd")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        branch: None,
        parent: None,
        paths: src
            .files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
    };
    Ok(assemble(header, drafts, Vec::new(), diag, mtime_ms(main)))
}

/// `custom_title` (or `title`) from `state.json`; empty means none.
fn read_title(path: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Raw {
        custom_title: Option<String>,
        title: Option<String>,
    }
    let bytes = read_small(path, 16 << 20).ok()?;
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
#[derive(Default)]
struct Steps {
    main: Option<usize>,
    inline: std::collections::HashMap<String, Option<usize>>,
}

fn read_wire(
    path: &Path,
    subagent: bool,
    own_wire: &HashSet<String>,
    drafts: &mut Vec<Draft>,
    diag: &mut Diagnostics,
) -> std::io::Result<()> {
    let mut steps = Steps::default();
    let mut bad = 0u64;
    for_each_line(path, 0, 0, diag, |line| {
        // The record kind is `message.type`, one level down.
        if let Some(ty) = sniff_key_at(line.bytes, b"type", 2) {
            if !indexed(ty) {
                return;
            }
        }
        let Some(l) = parse_line::<WireLine>(line.bytes) else {
            if !blank(&String::from_utf8_lossy(line.bytes)) {
                bad += 1;
            }
            return;
        };
        let Some(msg) = l.message.0 else { return };
        let ts = l.timestamp.0;
        if msg.ty.get() == Some("SubagentEvent") {
            let Some(p) = msg.payload.0 else { return };
            let agent = p.agent_id.get().unwrap_or("").to_string();
            if own_wire.contains(&agent) {
                return;
            }
            if let Some(inner) = p.event.0 {
                let slot = steps.inline.entry(agent).or_default();
                on_msg(*inner, ts, line.no, true, slot, drafts);
            }
            return;
        }
        on_msg(msg, ts, line.no, subagent, &mut steps.main, drafts);
    })?;
    diag.bad_lines += bad;
    Ok(())
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
