//! The tools' arguments: typed, deny unknown fields, and read from the raw
//! JSON object by [`parse`], so that a malformed argument is a tool error
//! with the core's code (`invalid_param`), never a protocol error.

use crate::engine::answer::Shape as AnswerShape;
use crate::engine::budget::Fields;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Reads `T` from a tool call's arguments.
pub fn parse<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(args)).map_err(|e| format!("invalid_param: {e}"))
}

/// `sort` of a search.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// Newest matching session first (the default).
    Newest,
    /// Most occurrences of the terms first.
    Relevance,
}

/// `fields` as the schema shows it.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldsArg {
    /// Keys, titles, times and one snippet.
    Minimal,
    /// The default.
    Summary,
    /// Every field.
    Full,
}

impl From<FieldsArg> for Fields {
    fn from(f: FieldsArg) -> Fields {
        match f {
            FieldsArg::Minimal => Fields::Minimal,
            FieldsArg::Summary => Fields::Summary,
            FieldsArg::Full => Fields::Full,
        }
    }
}

/// The answer-shaping arguments every tool takes.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
pub struct Shape {
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal (keys, titles, times, one snippet), summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// `session_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in one message, as substrings after case and accent folding ("quoted phrases" keep their spaces); also `A OR B`, (groups), -word to exclude, w:word for whole words, role:/since:/model: filters.
    pub query: String,
    /// Only these agents (source ids).
    pub sources: Option<Vec<String>>,
    /// Only records of these roles: user, assistant, tool.
    pub roles: Option<Vec<String>>,
    /// Only sessions that record one of these models (case-insensitive, exact).
    pub models: Option<Vec<String>>,
    /// newest (default) or relevance.
    pub sort: Option<Sort>,
    /// Only messages at or after: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub since: Option<String>,
    /// Only messages at or before: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub until: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    pub cwd: Option<String>,
    /// Sessions per page (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// The `cursor` of the previous page, to read the next one.
    pub cursor: Option<String>,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal (keys, titles, times, one snippet), summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// `session_list` arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only sessions active at or after: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub since: Option<String>,
    /// Only sessions started at or before: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub until: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    pub cwd: Option<String>,
    /// Only these agents (source ids).
    pub sources: Option<Vec<String>>,
    /// Only sessions that record one of these models (case-insensitive, exact).
    pub models: Option<Vec<String>>,
    /// Sessions per page (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// The `cursor` of the previous page, to read the next one.
    pub cursor: Option<String>,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal (keys, titles, times), summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// `kind` of a deep search.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KindArg {
    /// What the person typed.
    User,
    /// What the agent said.
    Assistant,
    /// The agent's reasoning.
    Reasoning,
    /// Tool calls and their output.
    Tool,
    /// Every line (the default).
    All,
}

/// `session_deep_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeepArgs {
    /// What to find in the source files: a regular expression (Rust regex syntax), or a literal string with fixed_strings.
    pub pattern: String,
    /// Read the pattern as a literal string, not a regex.
    pub fixed_strings: Option<bool>,
    /// Letters match either case.
    pub ignore_case: Option<bool>,
    /// Only matches in records of this kind (default all).
    pub kind: Option<KindArg>,
    /// Only this session: a key `<source>:<id>`, or a session id that names one session.
    pub session: Option<String>,
    /// Only sessions active at or after: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub since: Option<String>,
    /// Only sessions started at or before: epoch ms, RFC 3339, 7d, 24h, 2w, today, yesterday.
    pub until: Option<String>,
    /// Only sessions whose working directory is this path or under it.
    pub cwd: Option<String>,
    /// Only these agents (source ids).
    pub sources: Option<Vec<String>>,
    /// Matching lines to return at most (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal (keys and matched text), summary (default: kinds, fields, locators) or full (files and offsets too).
    pub fields: Option<FieldsArg>,
}

/// `session_trace` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal, summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// `session_event_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventSearchArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
    /// Words that must all occur in one message.
    pub query: String,
    /// Only records of these roles (default user and assistant).
    pub roles: Option<Vec<String>>,
    /// Hits per page (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u64>,
    /// The `cursor` of the previous page, to read the next one.
    pub cursor: Option<String>,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal, summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// `session_event_read` / `session_event_trace` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventArgs {
    /// A session key `<source>:<id>`, or a session id that names one session.
    pub session: String,
    /// The record index (as search results give it); give this or `locator`.
    #[schemars(range(min = 0))]
    pub index: Option<u64>,
    /// The record's locator object, as search results give it; give this or `index`.
    #[schemars(with = "Option<LocatorSchema>")]
    pub locator: Option<Value>,
    /// Records before it (default 5, at most 50); session_event_read only.
    #[schemars(range(min = 0, max = 50))]
    pub before: Option<u64>,
    /// Records after it (default 5, at most 50); session_event_read only.
    #[schemars(range(min = 0, max = 50))]
    pub after: Option<u64>,
    /// Where the record's text window starts, in characters (default: centred on `around`, else 0).
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
    /// Characters of the record's text to return (default: what the budget leaves).
    #[schemars(range(min = 1))]
    pub chars: Option<u64>,
    /// A byte offset into the record's text (a search hit's `ranges[0][0]`) to centre the window on.
    #[schemars(range(min = 0))]
    pub around: Option<u64>,
    /// Most tokens the answer may take (characters / 4; default 8000, 200–250000).
    #[schemars(range(min = 200, max = 250000))]
    pub max_tokens: Option<u64>,
    /// Detail: minimal, summary (default) or full.
    pub fields: Option<FieldsArg>,
}

/// The schema of a record locator (`kind` plus the kind's fields).
#[derive(JsonSchema)]
#[allow(dead_code)]
pub struct LocatorSchema {
    /// native_message_id, native_event, native_sidecar_span, external_record_id or external_line.
    kind: String,
    /// native_message_id: the source's message id.
    message_id: Option<String>,
    /// native_event: 1-based line of the source file.
    line_no: Option<u64>,
    /// native_event: first 16 hex of the SHA-256 of the record's text.
    content_hash16: Option<String>,
    /// native_sidecar_span: the sidecar file.
    file: Option<String>,
    /// native_sidecar_span: byte offset.
    offset: Option<u64>,
    /// native_sidecar_span: byte length.
    len: Option<u64>,
    /// external_record_id: the record id.
    record_id: Option<String>,
    /// external_line: the source generation.
    generation: Option<u64>,
}

impl Shape {
    /// The answer shape of `max_tokens` / `fields` given separately.
    pub fn of(max_tokens: Option<u64>, fields: Option<FieldsArg>) -> AnswerShape {
        AnswerShape {
            max_tokens,
            fields: fields.map(Fields::from).unwrap_or_default(),
        }
    }
}
