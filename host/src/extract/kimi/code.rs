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

use crate::extract::common::{for_each_line, read_small};
use crate::extract::draft::{
    assemble, blank, mtime_ms, parse_line, sniff_type, tool_call_text, value_text, Draft, Header,
    Loc, Part, TextOrParts, Ts,
};
use crate::extract::lenient::{Obj, Str, Uint};
use crate::extract::{Diagnostics, ExtractError, Extracted, SessionSource};
use recall_core::model::{Mark, Parent, Relation, Role, Source};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Extracts one Kimi Code session (`files[0]` = `agents/main/wire.jsonl`).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    let Some(main) = src.files.first() else {
        return Ok(None);
    };
    // <session>/agents/main/wire.jsonl
    let session_dir = main.parent().and_then(Path::parent).and_then(Path::parent);
    let session_id = session_dir
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let state = src
        .files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "state.json"))
        .map(|p| read_state(p))
        .unwrap_or_default();

    let mut diag = Diagnostics::default();
    let mut out = Wires::default();
    let mut main_cwd = None;
    read_wire(main, "main", false, &mut out, &mut diag, &mut main_cwd).map_err(|source| {
        ExtractError::Io {
            path: main.clone(),
            source,
        }
    })?;
    for wire in src.files.iter().skip(1) {
        if wire.file_name().is_none_or(|n| n != "wire.jsonl") {
            continue;
        }
        let agent = wire
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut ignored = None;
        if let Err(e) = read_wire(wire, &agent, true, &mut out, &mut diag, &mut ignored) {
            diag.unreadable.push(format!("{}: {e}", wire.display()));
        }
    }

    let context_dir = src
        .context
        .get("work_dir")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let header = Header {
        source: Source::Kimi,
        resume: (!session_id.is_empty()).then(|| format!("kimi --session {session_id}")),
        session_id,
        title: state.title,
        cwd: state.cwd.or(main_cwd).or(context_dir),
        branch: None,
        parent: state.forked_from.map(|id| Parent {
            key: recall_core::model::session_key(Source::Kimi, &id),
            relation: Relation::Fork,
        }),
        paths: src
            .files
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
    };
    Ok(assemble(
        header,
        out.drafts,
        out.marks,
        diag,
        mtime_ms(main),
    ))
}

/// What `state.json` contributes.
#[derive(Debug, Default)]
struct State {
    title: Option<String>,
    cwd: Option<String>,
    forked_from: Option<String>,
}

fn read_state(path: &Path) -> State {
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
    let Ok(bytes) = read_small(path, 16 << 20) else {
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

/// Records and marks of all wires of a session, in source order.
#[derive(Default)]
struct Wires {
    drafts: Vec<Draft>,
    marks: Vec<Mark>,
}

/// One wire line. Fields a type does not use, or that have an unexpected
/// shape, read as absent (lenient types), so a format change loses a field,
/// not the line.
#[derive(Deserialize)]
struct WireLine<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(default)]
    time: Ts,
    #[serde(borrow, default)]
    input: Option<TextOrParts<'a>>,
    #[serde(default)]
    origin: Option<serde_json::Value>,
    #[serde(borrow, default)]
    message: Obj<Message<'a>>,
    #[serde(borrow, default)]
    event: Obj<LoopEvent<'a>>,
    #[serde(default)]
    count: Uint,
    #[serde(borrow, default)]
    cwd: Str<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<TextOrParts<'a>>,
    #[serde(default)]
    origin: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct LoopEvent<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(rename = "stepUuid", borrow, default)]
    step_uuid: Str<'a>,
    #[serde(borrow, default)]
    uuid: Str<'a>,
    #[serde(borrow, default)]
    part: Obj<Part<'a>>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: Str<'a>,
    #[serde(default)]
    args: Option<serde_json::Value>,
    #[serde(default)]
    result: Obj<ToolResult>,
}

#[derive(Deserialize)]
struct ToolResult {
    #[serde(default)]
    output: Option<serde_json::Value>,
}

/// Whether an `origin` is the human's: absent, `user`, or a skill/plugin
/// command the user typed as a slash command.
fn user_origin(origin: Option<&serde_json::Value>) -> bool {
    let Some(o) = origin else { return true };
    match o {
        serde_json::Value::Null => true,
        serde_json::Value::String(k) => k == "user",
        serde_json::Value::Object(m) => match m.get("kind").and_then(|k| k.as_str()) {
            None | Some("user") => true,
            Some("skill_activation") | Some("plugin_command") => {
                m.get("trigger").and_then(|t| t.as_str()) == Some("user-slash")
            }
            Some(_) => false,
        },
        _ => false,
    }
}

/// Line types whose content is never indexed: skipped before parsing.
fn skipped(ty: &[u8]) -> bool {
    !matches!(
        ty,
        b"turn.prompt"
            | b"turn.steer"
            | b"context.append_message"
            | b"context.append_loop_event"
            | b"context.undo"
            | b"context.apply_compaction"
            | b"context.clear"
            | b"config.update"
    )
}

/// Per-wire state while streaming.
struct WireState<'w> {
    agent: &'w str,
    subagent: bool,
    /// The wire has `turn.prompt` lines (else append_message user is prose).
    has_prompt: bool,
    /// The wire has `content.part` lines (else append_message assistant is prose).
    has_part: bool,
    /// Draft index of each active user turn since the last compaction/clear.
    turns: Vec<usize>,
    /// `stepUuid` → draft index of that step's assistant record.
    steps: HashMap<String, usize>,
}

fn read_wire(
    path: &Path,
    agent: &str,
    subagent: bool,
    out: &mut Wires,
    diag: &mut Diagnostics,
    cwd: &mut Option<String>,
) -> std::io::Result<()> {
    let [has_prompt, has_part] = contains_all(path, [b"\"turn.prompt\"", b"\"content.part\""])?;
    let mut st = WireState {
        agent,
        subagent,
        has_prompt,
        has_part,
        turns: Vec::new(),
        steps: HashMap::new(),
    };
    let mut bad = 0u64;
    for_each_line(path, 0, 0, diag, |line| {
        if let Some(ty) = sniff_type(line.bytes) {
            if skipped(ty) {
                return;
            }
        }
        match parse_line::<WireLine>(line.bytes) {
            Some(l) => on_line(&mut st, l, line.no, out, cwd),
            None => {
                if !blank(&String::from_utf8_lossy(line.bytes)) {
                    bad += 1;
                }
            }
        }
    })?;
    diag.bad_lines += bad;
    Ok(())
}

fn on_line(st: &mut WireState, l: WireLine, no: u64, out: &mut Wires, cwd: &mut Option<String>) {
    let ts = l.time.0;
    let id = |st: &WireState| Some(format!("{}:{no}", st.agent));
    let ty = l.ty.get().unwrap_or("");
    match ty {
        "turn.prompt" | "turn.steer" => {
            if !user_origin(l.origin.as_ref()) {
                return;
            }
            let text = l.input.map(|i| i.text("\n")).unwrap_or_default();
            if blank(&text) {
                return;
            }
            if ty == "turn.prompt" {
                st.turns.push(out.drafts.len());
            }
            push(st, out, Role::User, ts, text, Loc::Event(no), id(st));
        }
        "context.append_message" => {
            let Some(m) = l.message.0 else { return };
            let text = m.content.map(|c| c.text("\n")).unwrap_or_default();
            if blank(&text) {
                return;
            }
            let role = m.role.get();
            if role == Some("user") && !st.has_prompt && user_origin(m.origin.as_ref()) {
                st.turns.push(out.drafts.len());
                push(st, out, Role::User, ts, text, Loc::Event(no), id(st));
            } else if role == Some("assistant") && !st.has_part {
                push(st, out, Role::Assistant, ts, text, Loc::Event(no), id(st));
            }
        }
        "context.append_loop_event" => {
            if let Some(ev) = l.event.0 {
                on_event(st, ev, ts, no, out);
            }
        }
        "context.undo" => {
            let n = l.count.0.unwrap_or(1).max(1);
            let mut from = None;
            for _ in 0..n {
                match st.turns.pop() {
                    Some(i) => from = Some(i),
                    None => break,
                }
            }
            if let Some(from) = from {
                let ids: Vec<String> = out.drafts[from..]
                    .iter()
                    .filter_map(|d| d.item_id.clone())
                    .collect();
                out.marks.push(Mark::RecordIds {
                    at: out.drafts.len() as u64,
                    ids,
                    reason: "undo".into(),
                });
            }
        }
        "context.apply_compaction" | "context.clear" => st.turns.clear(),
        "config.update" if cwd.is_none() => *cwd = l.cwd.non_empty().map(str::to_string),
        _ => {}
    }
}

fn on_event(st: &mut WireState, ev: LoopEvent, ts: Option<i64>, no: u64, out: &mut Wires) {
    let id = Some(format!("{}:{no}", st.agent));
    let step_uuid = ev.step_uuid.non_empty();
    match ev.ty.get().unwrap_or("") {
        "content.part" => {
            let Some(part) = ev.part.0 else { return };
            if !part.is("text") {
                return;
            }
            let Some(text) = part.text.get() else { return };
            if let Some(step) = step_uuid {
                if let Some(&i) = st.steps.get(step) {
                    let d = &mut out.drafts[i];
                    d.text.push('\n');
                    d.text.push_str(text);
                    return;
                }
            }
            if blank(text) {
                return;
            }
            let loc = match step_uuid {
                Some(s) => {
                    st.steps.insert(s.to_string(), out.drafts.len());
                    Loc::MessageId(s.to_string())
                }
                None => Loc::Event(no),
            };
            push(st, out, Role::Assistant, ts, text.to_string(), loc, id);
        }
        "tool.call" => {
            let text = tool_call_text(ev.name.get().unwrap_or(""), ev.args.as_ref());
            let loc = ev
                .uuid
                .non_empty()
                .map(|u| Loc::MessageId(u.to_string()))
                .unwrap_or(Loc::Event(no));
            push(st, out, Role::Tool, ts, text, loc, id);
        }
        "tool.result" => {
            let text = ev
                .result
                .0
                .and_then(|r| r.output)
                .map(value_text)
                .unwrap_or_default();
            // Located by the call id it answers, so a large output is never
            // hashed.
            let loc = match ev.tool_call_id.non_empty() {
                Some(c) => Loc::MessageId(c.to_string()),
                None => Loc::Event(no),
            };
            if !text.is_empty() {
                push(st, out, Role::Tool, ts, text, loc, id);
            }
        }
        _ => {}
    }
}

fn push(
    st: &WireState,
    out: &mut Wires,
    role: Role,
    ts: Option<i64>,
    text: String,
    loc: Loc,
    item_id: Option<String>,
) {
    let mut d = Draft::new(role, ts, text, loc);
    d.item_id = item_id;
    d.subagent = st.subagent;
    out.drafts.push(d);
}

/// Whether each needle occurs anywhere in the file (streamed, so a huge
/// wire is never held in memory). Used to pick the fallback lanes before
/// the single parsing pass.
fn contains_all<const N: usize>(path: &Path, needles: [&[u8]; N]) -> std::io::Result<[bool; N]> {
    let mut found = [false; N];
    let finders: Vec<memchr::memmem::Finder> =
        needles.iter().map(memchr::memmem::Finder::new).collect();
    let keep = needles
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(1)
        .saturating_sub(1);
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = 0usize;
    loop {
        let n = match f.read(&mut buf[carry..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        let end = carry + n;
        for (i, fd) in finders.iter().enumerate() {
            if !found[i] && fd.find(&buf[..end]).is_some() {
                found[i] = true;
            }
        }
        if found.iter().all(|&b| b) {
            break;
        }
        let k = keep.min(end);
        buf.copy_within(end - k..end, 0);
        carry = k;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let v = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        assert!(user_origin(None));
        assert!(user_origin(Some(&v(r#"{"kind":"user"}"#))));
        assert!(user_origin(Some(&v(
            r#"{"kind":"skill_activation","trigger":"user-slash"}"#
        ))));
        assert!(!user_origin(Some(&v(
            r#"{"kind":"skill_activation","trigger":"model-tool"}"#
        ))));
        assert!(!user_origin(Some(&v(r#"{"kind":"injection"}"#))));
        assert!(!user_origin(Some(&v(r#"{"kind":"system_trigger"}"#))));
    }
}
