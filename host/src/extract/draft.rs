//! Record drafts: what an extractor collects while it streams a session,
//! before caps, content hashes and timestamp filling turn it into final
//! [`MessageRecord`]s and a [`SessionMeta`] summary (DESIGN.md §2).
//!
//! Drafts keep the full, uncapped text so that `content_hash16` is always of
//! the whole text, and so that records assembled from several lines (Kimi
//! `content.part`s of one step) can grow before they are finished.

use super::common::{cap_prose, cap_tool, content_hash16, title_from};
use super::lenient::{drain_map, drain_seq, Str};
use super::{Diagnostics, Extracted};
use recall_core::model::{Locator, Mark, MessageRecord, Parent, Role, SessionMeta, Source};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// How a draft will be located once its text is final.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Loc {
    /// `native_event{line_no, content_hash16}`.
    #[serde(rename = "e")]
    Event(u64),
    /// `native_message_id{message_id}`.
    #[serde(rename = "m")]
    MessageId(String),
    /// `native_sidecar_span{file, offset, len, content_hash16}`.
    #[serde(rename = "s")]
    Sidecar {
        /// Sidecar path relative to the session directory.
        file: String,
        /// Byte offset of the span.
        offset: u64,
        /// Byte length of the span.
        len: u64,
    },
}

/// One record in the making. Serialized (with short field names) inside
/// resume checkpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    /// Who said it.
    #[serde(rename = "r")]
    pub role: Role,
    /// Epoch ms, `None` when the source line had no usable timestamp.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<i64>,
    /// Full, uncapped text (already capped when `full_hash` is set).
    #[serde(rename = "x")]
    pub text: String,
    /// Where it lives.
    #[serde(rename = "l")]
    pub loc: Loc,
    /// Native message seq.
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Id used by `record_ids` marks.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Indexed under a parent session.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    pub subagent: bool,
    /// Set by [`Draft::seal`]: `text` is already cut to the tool cap.
    #[serde(rename = "c", default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// With `capped`, the `content_hash16` of the full text when the
    /// locator carries one.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub full_hash: Option<String>,
}

impl Draft {
    /// A draft with no seq, item id or subagent flag.
    pub fn new(role: Role, ts: Option<i64>, text: String, loc: Loc) -> Draft {
        Draft {
            role,
            ts,
            text,
            loc,
            seq: None,
            item_id: None,
            subagent: false,
            capped: false,
            full_hash: None,
        }
    }

    /// True for user and assistant drafts.
    pub fn is_prose(&self) -> bool {
        self.role != Role::Tool
    }

    /// `content_hash16` of the full text (prose is never sealed).
    pub fn hash16(&self) -> String {
        match &self.full_hash {
            Some(h) => h.clone(),
            None => content_hash16(&self.text),
        }
    }

    /// Cuts a tool row whose text can no longer change to the tool cap,
    /// keeping the full text's hash where the locator needs it, so a
    /// checkpoint does not carry text no record will show. Finishing a
    /// sealed draft gives the same record as finishing it unsealed. Prose is
    /// never sealed (titles, blank checks and joins read its whole text).
    pub fn seal(&mut self) {
        if self.role != Role::Tool || self.capped {
            return;
        }
        if let (capped, true) = cap_tool(&self.text) {
            if !matches!(self.loc, Loc::MessageId(_)) {
                self.full_hash = Some(content_hash16(&self.text));
            }
            self.text = capped;
            self.capped = true;
        }
    }
}

/// Timestamps, counts and title of a finished session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Oldest user/assistant ts (all records when there is no prose).
    pub created_ms: Option<i64>,
    /// Newest user/assistant ts (all records when there is no prose).
    pub updated_ms: Option<i64>,
    /// Number of user+assistant records.
    pub messages: u64,
    /// Title from the first non-subagent user prose (collapsed, ≤ 80 chars).
    pub first_prompt_title: Option<String>,
}

/// Finishes drafts: fills unknown timestamps, caps text, mints locators.
///
/// A draft without a timestamp takes the last known timestamp before it in
/// source order (the first known one after it when none precedes it, and
/// `fallback_ts` when the session has none at all); `ts_ms` is never 0.
pub fn finish(drafts: Vec<Draft>, fallback_ts: i64) -> (Vec<MessageRecord>, Summary) {
    let first_known = drafts.iter().find_map(|d| d.ts.filter(|&t| t != 0));
    let mut last = first_known.unwrap_or(if fallback_ts > 0 { fallback_ts } else { 1 });
    let mut summary = Summary::default();
    let (mut pmin, mut pmax, mut amin, mut amax) = (None, None, None, None);
    let mut records = Vec::with_capacity(drafts.len());
    let mut sub_title = None;
    for d in drafts {
        let ts = match d.ts {
            Some(t) if t != 0 => {
                last = t;
                t
            }
            _ => last,
        };
        amin = Some(amin.map_or(ts, |m: i64| m.min(ts)));
        amax = Some(amax.map_or(ts, |m: i64| m.max(ts)));
        if d.is_prose() {
            summary.messages += 1;
            pmin = Some(pmin.map_or(ts, |m: i64| m.min(ts)));
            pmax = Some(pmax.map_or(ts, |m: i64| m.max(ts)));
            if d.role == Role::User && !d.subagent && summary.first_prompt_title.is_none() {
                summary.first_prompt_title = title_from(&d.text);
            }
            if d.role == Role::User && sub_title.is_none() {
                sub_title = title_from(&d.text);
            }
        }
        let locator = match d.loc {
            Loc::Event(line_no) => Locator::NativeEvent {
                line_no,
                content_hash16: d
                    .full_hash
                    .clone()
                    .unwrap_or_else(|| content_hash16(&d.text)),
            },
            Loc::MessageId(message_id) => Locator::NativeMessageId { message_id },
            Loc::Sidecar { file, offset, len } => Locator::NativeSidecarSpan {
                file,
                offset,
                len,
                content_hash16: d
                    .full_hash
                    .clone()
                    .unwrap_or_else(|| content_hash16(&d.text)),
            },
        };
        let (text, truncated) = if d.capped {
            (d.text, true)
        } else if d.role != Role::Tool {
            cap_owned(d.text, cap_prose)
        } else {
            cap_owned(d.text, cap_tool)
        };
        records.push(MessageRecord {
            role: d.role,
            ts_ms: ts,
            text,
            truncated,
            locator,
            seq: d.seq,
            turn: None,
            item_id: d.item_id,
            subagent: d.subagent,
            generation: 0,
        });
    }
    summary.created_ms = pmin.or(amin);
    summary.updated_ms = pmax.or(amax);
    if summary.first_prompt_title.is_none() {
        summary.first_prompt_title = sub_title;
    }
    (records, summary)
}

/// Session fields an extractor knows besides its records.
#[derive(Clone, Debug)]
pub struct Header {
    /// The agent.
    pub source: Source,
    /// The source's session id.
    pub session_id: String,
    /// The source's own title (`None` ⇒ the first user prose).
    pub title: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Parent session.
    pub parent: Option<Parent>,
    /// Resume command.
    pub resume: Option<String>,
    /// Source files.
    pub paths: Vec<String>,
}

/// Finishes a session: records from drafts ([`finish`]) and the meta from
/// `header` plus the records' timestamps and counts. `None` when there is
/// not a single record.
pub fn assemble(
    header: Header,
    drafts: Vec<Draft>,
    marks: Vec<Mark>,
    diagnostics: Diagnostics,
    fallback_ts: i64,
) -> Option<Extracted> {
    if drafts.is_empty() {
        return None;
    }
    let (records, summary) = finish(drafts, fallback_ts);
    let title = header
        .title
        .as_deref()
        .and_then(title_from)
        .or(summary.first_prompt_title);
    Some(Extracted {
        meta: SessionMeta {
            source: header.source,
            session_id: header.session_id,
            title,
            cwd: header.cwd,
            branch: header.branch,
            created_ms: summary.created_ms,
            updated_ms: summary.updated_ms,
            messages: summary.messages,
            parent: header.parent,
            resume: header.resume,
            paths: header.paths,
        },
        records,
        marks,
        diagnostics,
    })
}

/// A file's modification time in epoch ms (0 when unknown): the timestamp
/// of last resort for a session whose lines carry none.
pub fn mtime_ms(path: &std::path::Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

/// Epoch ms from a JSON number that may be seconds (kimi-cli floats) or ms.
pub fn num_ts_ms(n: f64) -> Option<i64> {
    if !n.is_finite() || n <= 0.0 {
        return None;
    }
    let ms = if n < 1e11 { n * 1000.0 } else { n };
    (ms < 9.0e15).then_some(ms as i64)
}

/// Applies a cap without copying text that already fits.
fn cap_owned(text: String, cap: fn(&str) -> (String, bool)) -> (String, bool) {
    let (capped, cut) = cap(&text);
    if cut {
        (capped, true)
    } else {
        (text, false)
    }
}

/// The text of `content` that is either a JSON string or an array of parts
/// (`{"type":"text","text":…}` and others), parsed without buffering.
#[derive(Debug, Default)]
pub struct TextOrParts<'a> {
    /// Whole string content, when the value was a string.
    pub string: Option<Cow<'a, str>>,
    /// Parts, when the value was an array.
    pub parts: Vec<Part<'a>>,
}

impl<'a> TextOrParts<'a> {
    /// Text of the string or of the `text` parts, joined with `sep`.
    pub fn text(&self, sep: &str) -> String {
        if let Some(s) = &self.string {
            return s.to_string();
        }
        let mut out = String::new();
        let mut first = true;
        for p in self.parts.iter().filter(|p| p.is("text")) {
            if let Some(t) = p.text.get() {
                if !first {
                    out.push_str(sep);
                }
                out.push_str(t);
                first = false;
            }
        }
        out
    }
}

/// One content part. Fields a part kind does not use, or that have an
/// unexpected shape, read as absent.
#[derive(Debug, Deserialize)]
pub struct Part<'a> {
    /// `text`, `think`, `thinking`, `toolCall`, `image`, …
    #[serde(rename = "type", borrow, default)]
    pub ty: Str<'a>,
    /// Text of a `text` part.
    #[serde(borrow, default)]
    pub text: Str<'a>,
    /// Id of a tool call part.
    #[serde(borrow, default)]
    pub id: Str<'a>,
    /// Tool name of a tool call part.
    #[serde(borrow, default)]
    pub name: Str<'a>,
    /// Arguments of a tool call part.
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
}

impl Part<'_> {
    /// True when the part's `type` is `ty`.
    pub fn is(&self, ty: &str) -> bool {
        self.ty.get() == Some(ty)
    }
}

/// A timestamp field: an epoch number (seconds or ms) or an RFC 3339
/// string; any other value reads as absent.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Ts(pub Option<i64>);

impl<'de> Deserialize<'de> for Ts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ts;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a timestamp")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ts, E> {
                Ok(Ts(num_ts_ms(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ts, E> {
                Ok(Ts(num_ts_ms(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ts, E> {
                Ok(Ts(num_ts_ms(v as f64)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Ts, E> {
                Ok(Ts(super::common::iso_ms(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ts, E> {
                Ok(Ts(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ts, E> {
                Ok(Ts(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ts, A::Error> {
                drain_seq(seq).map(|_| Ts(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Ts, A::Error> {
                drain_map(map).map(|_| Ts(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TextOrParts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = TextOrParts<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(TextOrParts {
                    string: Some(Cow::Borrowed(v)),
                    parts: Vec::new(),
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TextOrParts {
                    string: Some(Cow::Owned(v.to_string())),
                    parts: Vec::new(),
                })
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(TextOrParts {
                    string: Some(Cow::Owned(v)),
                    parts: Vec::new(),
                })
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(TextOrParts::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(TextOrParts::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(TextOrParts::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(TextOrParts::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(TextOrParts::default())
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                // A single part object where a list was expected.
                let part = Part::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(TextOrParts {
                    string: None,
                    parts: vec![part],
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::new();
                while let Some(p) = seq.next_element::<PartOrOther<'a>>()? {
                    if let PartOrOther::Part(p) = p {
                        parts.push(p);
                    }
                }
                Ok(TextOrParts {
                    string: None,
                    parts,
                })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// An array element that may not be an object (kept lenient: a stray string
/// or number in a parts array is ignored rather than failing the line).
enum PartOrOther<'a> {
    Part(Part<'a>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for PartOrOther<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = PartOrOther<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content part")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Part::deserialize(de::value::MapAccessDeserializer::new(map)).map(PartOrOther::Part)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(PartOrOther::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|_| PartOrOther::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Parses one JSON line: validated as UTF-8 once, whole, then parsed from
/// `&str` (faster than serde_json's per-string validation of a byte slice).
/// `None` for invalid UTF-8 or JSON that does not fit `T`.
pub fn parse_line<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str(text).ok()
}

/// The string value of the line's top-level `"type"` key, read without
/// parsing the line (`None` when it is not there as a plain string). Lets
/// extractors skip lines whose kind they never index before paying for a
/// full parse. A nested `"type"` never counts, whatever the key order.
pub fn sniff_type(line: &[u8]) -> Option<&[u8]> {
    sniff_key_at(line, b"type", 1)
}

/// The string value of the top-level key `quoted_key` (with its quotes,
/// e.g. `b"\"event\""`) of a JSON line, read without parsing.
pub fn sniff_key<'l>(line: &'l [u8], quoted_key: &[u8]) -> Option<&'l [u8]> {
    let key = quoted_key.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    sniff_key_at(line, key, 1)
}

/// The string value of `key` where it is a key of an object nested `depth`
/// containers deep (1 = the line's own object), read without parsing.
/// `None` when absent, not a plain string (escapes included), or the line is
/// not JSON-shaped: callers then parse the line in full, so a `None` costs
/// time, never records.
pub fn sniff_key_at<'l>(line: &'l [u8], key: &[u8], depth: usize) -> Option<&'l [u8]> {
    let mut d = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'{' | b'[' => d += 1,
            b'}' | b']' => d = d.checked_sub(1)?,
            b'"' => {
                let start = i + 1;
                let end = string_end(line, start)?;
                i = end + 1;
                if d == depth && &line[start..end] == key {
                    if let Some(rest) = skip_ws(&line[i..]).strip_prefix(b":") {
                        let rest = skip_ws(rest).strip_prefix(b"\"")?;
                        let end = memchr::memchr2(b'"', b'\\', rest)?;
                        return (rest[end] == b'"').then(|| &rest[..end]);
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing a JSON string whose body starts at `i`.
fn string_end(line: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += memchr::memchr2(b'"', b'\\', line.get(i..)?)?;
        if line[i] == b'"' {
            return Some(i);
        }
        i += 2;
    }
}

fn skip_ws(mut b: &[u8]) -> &[u8] {
    while let [c, tail @ ..] = b {
        if c.is_ascii_whitespace() {
            b = tail;
        } else {
            break;
        }
    }
    b
}

/// A tool call row: `name` then the arguments (compact JSON, or the raw
/// string when the source stores them as a string).
pub fn tool_call_text(name: &str, args: Option<&serde_json::Value>) -> String {
    let args = match args {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    match (name.is_empty(), args.is_empty()) {
        (_, true) => name.to_string(),
        (true, false) => args,
        (false, false) => format!("{name} {args}"),
    }
}

/// A tool output value as text: a string as is (moved, not copied), text
/// parts joined with `\n`, anything else as compact JSON.
pub fn value_text(v: serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s,
        serde_json::Value::Array(items) => {
            let texts: Vec<&str> = items
                .iter()
                .filter_map(|p| match p {
                    serde_json::Value::String(s) => Some(s.as_str()),
                    serde_json::Value::Object(o) => o.get("text").and_then(|t| t.as_str()),
                    _ => None,
                })
                .collect();
            if texts.is_empty() && !items.is_empty() {
                serde_json::Value::Array(items).to_string()
            } else {
                texts.join("\n")
            }
        }
        other => other.to_string(),
    }
}

/// True when `text` is empty or only whitespace.
pub fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_the_top_level_type_only() {
        assert_eq!(
            sniff_type(br#"{"type":"turn.prompt","x":1}"#),
            Some(&b"turn.prompt"[..])
        );
        // A nested "type" before the top-level one does not count.
        assert_eq!(
            sniff_type(
                br#"{"message":{"role":"user","content":[{"type":"text"}]},"type":"message"}"#
            ),
            Some(&b"message"[..])
        );
        assert_eq!(
            sniff_type(br#"{"x":"a \"type\": \"no\"","type":"yes"}"#),
            Some(&b"yes"[..])
        );
        assert_eq!(
            sniff_key_at(br#"{"timestamp": 1.5, "message": {"payload":{"type":"text"},"type": "ContentPart"}}"#, b"type", 2),
            Some(&b"ContentPart"[..])
        );
        assert_eq!(
            sniff_type(br#"{"timestamp": 1.5, "message": {"type": "TurnBegin"}}"#),
            None
        );
        assert_eq!(sniff_type(b"<<<<<<< HEAD"), None);
        assert_eq!(sniff_type(br#"{"type":"a\"b"}"#), None);
        assert_eq!(sniff_type(br#"{"type":"x"#), None);
        assert_eq!(
            sniff_key(br#"{"data":{"event":"x"},"event":"y"}"#, b"\"event\""),
            Some(&b"y"[..])
        );
    }

    #[test]
    fn odd_shapes_read_as_absent() {
        let t: TextOrParts = serde_json::from_str(r#"{"type":"text","text":"one"}"#).unwrap();
        assert_eq!(t.text(""), "one");
        let t: TextOrParts = serde_json::from_str("42").unwrap();
        assert_eq!(t.text(""), "");
        let p: TextOrParts = serde_json::from_str(r#"[{"type":"text","text":{"x":1}}]"#).unwrap();
        assert_eq!(p.text(""), "");
        let ts: Vec<Ts> = serde_json::from_str(
            r#"[1779256800000, 1773723366.25, "2026-01-01T00:00:00Z", {"a":1}, null]"#,
        )
        .unwrap();
        let ts: Vec<Option<i64>> = ts.into_iter().map(|t| t.0).collect();
        assert_eq!(
            ts,
            [
                Some(1779256800000),
                Some(1773723366250),
                Some(1767225600000),
                None,
                None
            ]
        );
    }

    #[test]
    fn text_or_parts_reads_both_shapes() {
        let s: TextOrParts = serde_json::from_str(r#""hi""#).unwrap();
        assert_eq!(s.text(""), "hi");
        let p: TextOrParts = serde_json::from_str(
            r#"[{"type":"text","text":"a"},{"type":"image"},3,{"type":"text","text":"b"}]"#,
        )
        .unwrap();
        assert_eq!(p.text("\n"), "a\nb");
    }

    #[test]
    fn unknown_ts_takes_last_known_and_is_never_zero() {
        let d = |ts| Draft::new(Role::User, ts, "x".into(), Loc::Event(1));
        let (r, s) = finish(
            vec![d(None), d(Some(5)), d(None), d(Some(0)), d(Some(9))],
            77,
        );
        let ts: Vec<i64> = r.iter().map(|r| r.ts_ms).collect();
        assert_eq!(ts, vec![5, 5, 5, 5, 9]);
        assert_eq!(
            (s.created_ms, s.updated_ms, s.messages),
            (Some(5), Some(9), 5)
        );
        let (r, _) = finish(vec![d(None)], 0);
        assert_eq!(r[0].ts_ms, 1);
    }
}
