//! The shape of one Codex rollout line, parsed borrowed and leniently.
//!
//! Wrapped eras write `{timestamp, type, payload}`; the bare era (≤ Sep 2025)
//! writes a meta object on line 1 and bare response items after it, which
//! parse directly as a [`Payload`].

use crate::extract::lenient::{List, Obj, Str, Uint};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// A wrapped rollout line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Outer<'a> {
    /// ISO-8601 time of the line.
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    /// `session_meta`, `response_item`, `event_msg`, `turn_context`, …
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    /// The item.
    #[serde(borrow)]
    pub payload: Obj<Payload<'a>>,
}

/// Every payload field the extractor reads, whatever the payload kind.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Payload<'a> {
    /// Item or event type (`message`, `user_message`, `function_call`, …).
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    /// Session id (`session_meta`, bare line 1) or item id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// `session_meta` / bare line-1 time.
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    /// `session_meta` and `turn_context` working directory.
    #[serde(borrow)]
    pub cwd: Str<'a>,
    /// `turn_context.model`.
    #[serde(borrow)]
    pub model: Str<'a>,
    /// `session_meta.git`.
    #[serde(borrow)]
    pub git: Obj<Git<'a>>,
    /// `session_meta.source` (a string, or `{subagent:{thread_spawn:…}}`).
    #[serde(borrow)]
    pub source: Obj<SessionSourceField<'a>>,
    /// `session_meta.forked_from_id`.
    #[serde(borrow)]
    pub forked_from_id: Str<'a>,
    /// Message role.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// Message content parts.
    #[serde(borrow)]
    pub content: List<Obj<Part<'a>>>,
    /// `user_message` / `agent_message` text.
    #[serde(borrow)]
    pub message: Str<'a>,
    /// `thread_rolled_back.num_turns`.
    pub num_turns: Uint,
    /// `thread_rolled_back.anchor`.
    #[serde(borrow)]
    pub anchor: Obj<Anchor<'a>>,
    /// Tool name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// `function_call.arguments`.
    #[serde(borrow)]
    pub arguments: Text<'a>,
    /// `custom_tool_call.input`.
    #[serde(borrow)]
    pub input: Text<'a>,
    /// Tool outputs.
    #[serde(borrow)]
    pub output: Text<'a>,
    /// `local_shell_call.action`.
    #[serde(borrow)]
    pub action: Text<'a>,
}

/// `session_meta.git`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Git<'a> {
    /// Branch name.
    #[serde(borrow)]
    pub branch: Str<'a>,
}

/// `session_meta.source` in its object form.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SessionSourceField<'a> {
    /// `{thread_spawn: {parent_thread_id, …}}`.
    #[serde(borrow)]
    pub subagent: Obj<Subagent<'a>>,
}

/// `source.subagent`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Subagent<'a> {
    /// `thread_spawn`.
    #[serde(borrow)]
    pub thread_spawn: Obj<ThreadSpawn<'a>>,
}

/// `source.subagent.thread_spawn`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadSpawn<'a> {
    /// The spawning thread.
    #[serde(borrow)]
    pub parent_thread_id: Str<'a>,
}

/// One message content part.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Part<'a> {
    /// `input_text`, `output_text`, `input_image`, …
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    /// Text of a text part.
    #[serde(borrow)]
    pub text: Str<'a>,
}

/// `thread_rolled_back.anchor`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Anchor<'a> {
    /// The anchor item's id.
    #[serde(borrow)]
    pub item_id: Str<'a>,
    /// `before` or `after`.
    #[serde(borrow)]
    pub position: Str<'a>,
}

/// A tool payload value as text: a string as is, an array's text parts
/// joined with `\n`, any other value as compact JSON.
#[derive(Debug, Default)]
pub struct Text<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor(std::marker::PhantomData))
    }
}

struct TextVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = String::new();
        let mut any = false;
        while let Some(v) = seq.next_element::<serde_json::Value>()? {
            let text = match &v {
                serde_json::Value::String(s) => Some(s.as_str()),
                serde_json::Value::Object(o) => o.get("text").and_then(|t| t.as_str()),
                _ => None,
            };
            if let Some(t) = text {
                if any {
                    out.push('\n');
                }
                out.push_str(t);
                any = true;
            }
        }
        Ok(Text(Some(Cow::Owned(out))))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let v = serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Text(None))
    }
}

/// `Err(true)` = not JSON (a bad line); `Err(false)` = JSON of another shape.
/// The line is validated as UTF-8 once, whole, then parsed from `&str`
/// (faster than serde_json's per-string validation of a byte slice).
pub fn parse_outer(bytes: &[u8]) -> Result<Outer<'_>, bool> {
    let text = std::str::from_utf8(bytes).map_err(|_| true)?;
    serde_json::from_str(text).map_err(|_| is_not_json(text))
}

/// A bare-era line (or line 1) parsed as a payload.
pub fn parse_bare(bytes: &[u8]) -> Result<Payload<'_>, bool> {
    let text = std::str::from_utf8(bytes).map_err(|_| true)?;
    serde_json::from_str(text).map_err(|_| is_not_json(text))
}

fn is_not_json(text: &str) -> bool {
    serde_json::from_str::<de::IgnoredAny>(text).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wrapped_lines() {
        let o = parse_outer(
            br#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p"}}},"git":{"branch":"main"}}}"#,
        )
        .unwrap();
        let p = o.payload.0.unwrap();
        let parent = p
            .source
            .0
            .and_then(|s| s.subagent.0)
            .and_then(|s| s.thread_spawn.0);
        assert_eq!(parent.unwrap().parent_thread_id.get(), Some("p"));
        assert_eq!(p.git.0.unwrap().branch.get(), Some("main"));
    }

    #[test]
    fn tool_text_takes_any_shape() {
        let p = parse_bare(br#"{"type":"x","output":[{"type":"output_text","text":"a"},{"text":"b"}],"action":{"command":["ls"]},"arguments":"{\"a\":1}"}"#).unwrap();
        assert_eq!(p.output.0.as_deref(), Some("a\nb"));
        assert_eq!(p.action.0.as_deref(), Some(r#"{"command":["ls"]}"#));
        assert_eq!(p.arguments.0.as_deref(), Some(r#"{"a":1}"#));
        assert!(parse_bare(b"{oops").unwrap_err());
    }
}
