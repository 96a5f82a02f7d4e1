//! The shape of one Claude Code JSONL line, parsed borrowed and leniently:
//! only the fields the extractor reads are declared, every field tolerates a
//! change of type (it then reads as absent), and text without escapes is not
//! copied.

use crate::extract::lenient::{Flag, Obj, Str};
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// One transcript line (any `type`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Line<'a> {
    /// `user`, `assistant`, `system`, `summary`, `custom-title`, …
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    /// The line's id (absent on summary/title/snapshot lines).
    #[serde(borrow)]
    pub uuid: Str<'a>,
    /// The parent line's id; null at a root or after compaction.
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Str<'a>,
    /// The pre-compaction parent of a `compact_boundary` line.
    #[serde(rename = "logicalParentUuid", borrow)]
    pub logical_parent_uuid: Str<'a>,
    /// ISO-8601 time.
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    /// The session the line belongs to.
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    /// Working directory.
    #[serde(borrow)]
    pub cwd: Str<'a>,
    /// Git branch.
    #[serde(rename = "gitBranch", borrow)]
    pub git_branch: Str<'a>,
    /// A subagent (Task) line.
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Flag,
    /// Harness-injected user line.
    #[serde(rename = "isMeta")]
    pub is_meta: Flag,
    /// The compaction summary user line.
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: Flag,
    /// A line shown in the transcript only.
    #[serde(rename = "isVisibleInTranscriptOnly")]
    pub visible_only: Flag,
    /// An API error rendered as an assistant line.
    #[serde(rename = "isApiErrorMessage")]
    pub api_error: Flag,
    /// The Anthropic Messages object of user/assistant lines.
    #[serde(borrow)]
    pub message: Obj<Message<'a>>,
    /// `custom-title` lines.
    #[serde(rename = "customTitle", borrow)]
    pub custom_title: Str<'a>,
    /// `ai-title` lines.
    #[serde(rename = "aiTitle", borrow)]
    pub ai_title: Str<'a>,
    /// `summary` lines.
    #[serde(borrow)]
    pub summary: Str<'a>,
    /// The line a `summary` describes (possibly in another session's file).
    #[serde(rename = "leafUuid", borrow)]
    pub leaf_uuid: Str<'a>,
}

/// `message` of a user/assistant line.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    /// API message id (`msg_…`); shared by the lines of one assistant message.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// Model; `<synthetic>` marks harness-made assistant lines.
    #[serde(borrow)]
    pub model: Str<'a>,
    /// A string or content blocks.
    #[serde(borrow)]
    pub content: Content<'a>,
}

/// Message or tool-result content: a string or a list of blocks.
#[derive(Debug, Default)]
pub enum Content<'a> {
    /// Absent, null or of an unknown shape.
    #[default]
    None,
    /// A plain string.
    Text(Cow<'a, str>),
    /// Content blocks.
    Blocks(Vec<Block<'a>>),
}

impl Content<'_> {
    /// Text of a string, or the `text` blocks joined with `\n`.
    pub fn joined_text(&self) -> String {
        match self {
            Content::None => String::new(),
            Content::Text(s) => s.to_string(),
            Content::Blocks(blocks) => {
                let mut out = String::new();
                for t in blocks
                    .iter()
                    .filter(|b| b.is("text"))
                    .filter_map(|b| b.text.get())
                {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(t);
                }
                out
            }
        }
    }
}

/// One content block (`text`, `thinking`, `tool_use`, `tool_result`, `image`, …).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    /// Block type.
    #[serde(rename = "type", borrow)]
    pub ty: Str<'a>,
    /// `text` blocks.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// `tool_use` id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// `tool_use` tool name.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// `tool_use` input, as the JSON written on disk.
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    /// `tool_result` content.
    #[serde(borrow)]
    pub content: Content<'a>,
}

impl Block<'_> {
    /// Whether the block has type `ty`.
    pub fn is(&self, ty: &str) -> bool {
        self.ty.get() == Some(ty)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(std::marker::PhantomData))
    }
}

struct ContentVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ContentVisitor<'a> {
    type Value = Content<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or content blocks")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut blocks = Vec::new();
        while let Some(Obj(b)) = seq.next_element::<Obj<Block<'a>>>()? {
            blocks.extend(b);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        crate::extract::lenient::drain_map(map).map(|_| Content::None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Content::None)
    }
}

/// Parses one line. `Err(true)` = not JSON (a bad line), `Err(false)` =
/// JSON of a shape this parser does not read (e.g. not an object).
///
/// The line is validated as UTF-8 once, whole, then parsed from `&str`
/// (faster than serde_json's per-string validation of a byte slice).
pub fn parse(bytes: &[u8]) -> Result<Line<'_>, bool> {
    let text = std::str::from_utf8(bytes).map_err(|_| true)?;
    match serde_json::from_str::<Line<'_>>(text) {
        Ok(l) => Ok(l),
        Err(_) => Err(serde_json::from_str::<IgnoredAny>(text).is_err()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_and_raw_input() {
        let l = parse(
            br#"{"type":"assistant","uuid":"u","message":{"id":"m","content":[
            {"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}},7]}}"#,
        )
        .unwrap();
        let m = l.message.0.unwrap();
        let Content::Blocks(b) = m.content else {
            panic!("blocks")
        };
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].input.map(|r| r.get()), Some(r#"{"command":"ls"}"#));
    }

    #[test]
    fn odd_shapes_do_not_fail_the_line() {
        let l = parse(br#"{"type":"user","message":"oops","isMeta":"yes","uuid":5}"#).unwrap();
        assert!(l.message.0.is_none() && !l.is_meta.0 && l.uuid.get().is_none());
        assert_eq!(parse(b"{torn").err(), Some(true));
        assert_eq!(parse(br#""a string""#).err(), Some(false));
    }
}
