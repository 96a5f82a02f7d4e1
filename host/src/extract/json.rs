//! JSON helpers the extractors share: sniffing a line's keys without
//! parsing it, parsing a line leniently, and the lenient content, part and
//! timestamp types of transcript formats (see also [`super::lenient`]).

use super::lenient::{drain_map, drain_seq, Str};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// Epoch ms from a JSON number that may be seconds (kimi-cli floats) or ms.
pub fn num_ts_ms(n: f64) -> Option<i64> {
    if !n.is_finite() || n <= 0.0 {
        return None;
    }
    let ms = if n < 1e11 { n * 1000.0 } else { n };
    (ms < 9.0e15).then_some(ms as i64)
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
}
