//! One Kimi Code wire (`agents/<id>/wire.jsonl`) streamed into its own
//! records and `undo` marks (DESIGN.md §5 "kimi", FORMATS.md §3a). Wires
//! are independent of each other, so a session's wires each keep a
//! [`Wire`] state that a resumed extraction continues on its own.
//!
//! Two lane choices are per file: a wire with no `turn.prompt` takes user
//! prose from `context.append_message`, one with no `content.part` takes
//! assistant prose from it. A full read finds the needles first (a byte
//! scan, torn tail included); a resumed read keeps the choice it was
//! streaming with and checks the new bytes for the needles: a choice that
//! flips after a line it decided was fed cannot be resumed.

use crate::extract::common::Line;
use crate::extract::draft::{Draft, Loc};
use crate::extract::json::{
    blank, parse_line, sniff_type, tool_call_text, value_text, Part, TextOrParts, Ts,
};
use crate::extract::lenient::{Obj, Str, Uint};
use memchr::memmem;
use recall_core::model::{Mark, Role};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

const PROMPT: &[u8] = b"\"turn.prompt\"";
const PART: &[u8] = b"\"content.part\"";

/// The two per-wire lane flags: the wire has a `turn.prompt`, a
/// `content.part`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lanes {
    prompt: bool,
    part: bool,
}

impl Lanes {
    /// Notes the needles in `bytes`.
    fn scan(&mut self, bytes: &[u8]) {
        if !self.prompt && memmem::find(bytes, PROMPT).is_some() {
            self.prompt = true;
        }
        if !self.part && memmem::find(bytes, PART).is_some() {
            self.part = true;
        }
    }

    fn or(self, o: Lanes) -> Lanes {
        Lanes {
            prompt: self.prompt || o.prompt,
            part: self.part || o.part,
        }
    }
}

/// A wire's streaming state (serialized in resume checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wire {
    /// The lane flags the lines were handled with.
    lanes: Lanes,
    /// Needles seen in the complete lines fed.
    fed: Lanes,
    /// A line whose handling depends on the flag was fed while it was
    /// false / true.
    under_false: Lanes,
    under_true: Lanes,
    /// An over-long line was skipped: `fed` may miss a needle.
    opaque: bool,
    /// Draft index of each active user turn since the last compaction/clear.
    turns: Vec<usize>,
    /// `stepUuid` → draft index of that step's assistant record.
    steps: HashMap<String, usize>,
    /// Records in source order.
    pub drafts: Vec<Draft>,
    /// Marks; `at` counts this wire's records only.
    pub marks: Vec<Mark>,
    /// The first `config.update` cwd (read from the main wire only).
    pub cwd: Option<String>,
}

/// Who wrote a wire.
#[derive(Clone, Copy)]
pub struct Agent<'a> {
    /// `main` or the agent directory's name (used in item ids).
    pub name: &'a str,
    /// Records are subagent records.
    pub subagent: bool,
}

impl Wire {
    /// Whether a deserialized state is consistent.
    pub fn check(&self) -> bool {
        let n = self.drafts.len();
        self.turns.iter().all(|&i| i < n) && self.steps.values().all(|&i| i < n)
    }

    /// Cuts tool rows to the tool cap (they never change once pushed).
    pub fn seal(&mut self) {
        self.drafts.iter_mut().for_each(Draft::seal);
    }

    /// A wire read from byte 0: the lanes come from a scan of its first
    /// `end` bytes (`None` = all). Returns the wire and the bytes scanned.
    pub fn scanned(path: &Path, end: Option<u64>) -> std::io::Result<(Wire, u64)> {
        let ([prompt, part], read) = contains_all(path, end, [PROMPT, PART])?;
        let wire = Wire {
            lanes: Lanes { prompt, part },
            ..Wire::default()
        };
        Ok((wire, read))
    }

    /// Handles one complete line; `track` = keep what a resume needs
    /// (needles seen). Returns false for a bad line.
    pub fn line(&mut self, agent: Agent, line: &Line<'_>, track: bool) -> bool {
        if track {
            // A needle makes its flag true for good (bytes are only
            // appended), so the lines after it are decided for sure.
            self.fed.scan(line.bytes);
            self.lanes = self.lanes.or(self.fed);
        }
        if let Some(ty) = sniff_type(line.bytes) {
            if skipped(ty) {
                return true;
            }
        }
        match parse_line::<WireLine>(line.bytes) {
            Some(l) => {
                self.on_line(agent, l, line.no);
                true
            }
            None => blank(&String::from_utf8_lossy(line.bytes)),
        }
    }

    /// Where a line decided by a flag of value `flag` is noted.
    fn under(&mut self, flag: bool) -> &mut Lanes {
        if flag {
            &mut self.under_true
        } else {
            &mut self.under_false
        }
    }

    /// Notes that an over-long line was skipped.
    pub fn skipped_huge(&mut self) {
        self.opaque = true;
    }

    /// After a resumed or optimistic read: whether every line decided by
    /// a flag was decided by its final value (the needles in the fed lines
    /// and the torn tail `torn`). On `false` the wire must be read again
    /// from byte 0.
    pub fn settle(&mut self, torn: &[u8]) -> bool {
        let mut truth = self.fed;
        truth.scan(torn);
        let flags = [
            (
                truth.prompt,
                self.under_false.prompt,
                self.under_true.prompt,
            ),
            (truth.part, self.under_false.part, self.under_true.part),
        ];
        for (now, under_false, under_true) in flags {
            if !(under_false || under_true) {
                continue; // nothing depended on it
            }
            // Decided by the other value, or unknown (a skipped over-long
            // line may hold the needle).
            let wrong = if now {
                under_false
            } else {
                under_true || self.opaque
            };
            if wrong {
                return false;
            }
        }
        self.lanes = truth;
        true
    }

    fn on_line(&mut self, agent: Agent, l: WireLine, no: u64) {
        let ts = l.time.0;
        let id = || Some(format!("{}:{no}", agent.name));
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
                    self.turns.push(self.drafts.len());
                }
                self.push(agent, Role::User, ts, text, Loc::Event(no), id());
            }
            "context.append_message" => {
                let Some(m) = l.message.0 else { return };
                let text = m.content.map(|c| c.text("\n")).unwrap_or_default();
                if blank(&text) {
                    return;
                }
                let role = m.role.get();
                let user = role == Some("user") && user_origin(m.origin.as_ref());
                let assistant = role == Some("assistant");
                if user {
                    self.under(self.lanes.prompt).prompt = true;
                }
                if assistant {
                    self.under(self.lanes.part).part = true;
                }
                if user && !self.lanes.prompt {
                    self.turns.push(self.drafts.len());
                    self.push(agent, Role::User, ts, text, Loc::Event(no), id());
                } else if assistant && !self.lanes.part {
                    self.push(agent, Role::Assistant, ts, text, Loc::Event(no), id());
                }
            }
            "context.append_loop_event" => {
                if let Some(ev) = l.event.0 {
                    self.on_event(agent, ev, ts, no);
                }
            }
            "context.undo" => {
                let n = l.count.0.unwrap_or(1).max(1);
                let mut from = None;
                for _ in 0..n {
                    match self.turns.pop() {
                        Some(i) => from = Some(i),
                        None => break,
                    }
                }
                if let Some(from) = from {
                    let ids: Vec<String> = self.drafts[from..]
                        .iter()
                        .filter_map(|d| d.item_id.clone())
                        .collect();
                    self.marks.push(Mark::RecordIds {
                        at: self.drafts.len() as u64,
                        ids,
                        reason: "undo".into(),
                    });
                }
            }
            "context.apply_compaction" | "context.clear" => self.turns.clear(),
            "config.update" if !agent.subagent && self.cwd.is_none() => {
                self.cwd = l.cwd.non_empty().map(str::to_string)
            }
            _ => {}
        }
    }

    fn on_event(&mut self, agent: Agent, ev: LoopEvent, ts: Option<i64>, no: u64) {
        let id = Some(format!("{}:{no}", agent.name));
        let step_uuid = ev.step_uuid.non_empty();
        match ev.ty.get().unwrap_or("") {
            "content.part" => {
                let Some(part) = ev.part.0 else { return };
                if !part.is("text") {
                    return;
                }
                let Some(text) = part.text.get() else { return };
                if let Some(step) = step_uuid {
                    if let Some(&i) = self.steps.get(step) {
                        let d = &mut self.drafts[i];
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
                        self.steps.insert(s.to_string(), self.drafts.len());
                        Loc::MessageId(s.to_string())
                    }
                    None => Loc::Event(no),
                };
                self.push(agent, Role::Assistant, ts, text.to_string(), loc, id);
            }
            "tool.call" => {
                let text = tool_call_text(ev.name.get().unwrap_or(""), ev.args.as_ref());
                let loc = ev
                    .uuid
                    .non_empty()
                    .map(|u| Loc::MessageId(u.to_string()))
                    .unwrap_or(Loc::Event(no));
                self.push(agent, Role::Tool, ts, text, loc, id);
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
                    self.push(agent, Role::Tool, ts, text, loc, id);
                }
            }
            _ => {}
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        agent: Agent,
        role: Role,
        ts: Option<i64>,
        text: String,
        loc: Loc,
        item_id: Option<String>,
    ) {
        let mut d = Draft::new(role, ts, text, loc);
        d.item_id = item_id;
        d.subagent = agent.subagent;
        self.drafts.push(d);
    }
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

/// Whether each needle occurs anywhere in the file's first `end` bytes
/// (all of it when `None`; streamed, so a huge wire is never held in
/// memory), and the bytes read.
fn contains_all<const N: usize>(
    path: &Path,
    end: Option<u64>,
    needles: [&[u8]; N],
) -> std::io::Result<([bool; N], u64)> {
    let mut found = [false; N];
    let finders: Vec<memchr::memmem::Finder> =
        needles.iter().map(memchr::memmem::Finder::new).collect();
    let keep = needles
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(1)
        .saturating_sub(1);
    let mut f = crate::extract::open::open_regular(path)?.take(end.unwrap_or(u64::MAX));
    let mut read = 0u64;
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
        read += n as u64;
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
    Ok((found, read))
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
