//! The data model of DESIGN.md §2: sources, records, locators, supersession
//! marks, session metadata, shards (generation files) and the manifest.
//!
//! These are plain serde types. Everything that reads or writes them to disk
//! lives in the host; the core only (de)serializes bytes it is handed.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

mod flat;

/// One of the agents recall indexes. The serialized spelling is the one
/// used everywhere: shards, session keys, the API and the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Source {
    /// Anthropic's Claude Code.
    #[serde(rename = "claude-code")]
    ClaudeCode,
    /// OpenAI's Codex CLI.
    #[serde(rename = "codex")]
    Codex,
    /// Moonshot's Kimi Code and the legacy kimi-cli.
    #[serde(rename = "kimi")]
    Kimi,
    /// The pi coding agent.
    #[serde(rename = "pi")]
    Pi,
    /// Intendant's native session logs.
    #[serde(rename = "intendant")]
    Intendant,
    /// DeepSeek Harness (`dsh`) session logs.
    #[serde(rename = "dsh")]
    Dsh,
    /// Google's Gemini CLI.
    #[serde(rename = "gemini")]
    Gemini,
    /// GitHub Copilot CLI.
    #[serde(rename = "copilot")]
    Copilot,
    /// Qwen Code.
    #[serde(rename = "qwen")]
    Qwen,
    /// OpenCode (sst/opencode, now anomalyco/opencode).
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Source {
    /// All sources, in their canonical order.
    pub const ALL: [Source; 10] = [
        Source::ClaudeCode,
        Source::Codex,
        Source::Kimi,
        Source::Pi,
        Source::Intendant,
        Source::Dsh,
        Source::Gemini,
        Source::Copilot,
        Source::Qwen,
        Source::OpenCode,
    ];

    /// The canonical id (`claude-code`, `codex`, `kimi`, `pi`, `intendant`,
    /// `dsh`, `gemini`, `copilot`, `qwen`, `opencode`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::ClaudeCode => "claude-code",
            Source::Codex => "codex",
            Source::Kimi => "kimi",
            Source::Pi => "pi",
            Source::Intendant => "intendant",
            Source::Dsh => "dsh",
            Source::Gemini => "gemini",
            Source::Copilot => "copilot",
            Source::Qwen => "qwen",
            Source::OpenCode => "opencode",
        }
    }

    /// The agent's name as people write it (`Claude Code`, `DeepSeek
    /// Harness`, `Gemini CLI`, …), for messages and help.
    pub fn label(self) -> &'static str {
        match self {
            Source::ClaudeCode => "Claude Code",
            Source::Codex => "Codex",
            Source::Kimi => "Kimi",
            Source::Pi => "Pi",
            Source::Intendant => "Intendant",
            Source::Dsh => "DeepSeek Harness",
            Source::Gemini => "Gemini CLI",
            Source::Copilot => "Copilot CLI",
            Source::Qwen => "Qwen Code",
            Source::OpenCode => "OpenCode",
        }
    }

    /// Parses a canonical id or one of the accepted aliases (`claude`, `cc`,
    /// `kimi-code`, `pi-coding-agent`, `deepseek-harness`, `gemini-cli`,
    /// `copilot-cli`, `github-copilot`, `qwen-code`, `open-code`), ASCII
    /// case-insensitively, with a space accepted for each `-` (`claude code`,
    /// `kimi code`, `pi coding agent`, `DeepSeek Harness`, `Gemini CLI`,
    /// `GitHub Copilot CLI`, `Qwen Code`).
    pub fn parse(s: &str) -> Option<Source> {
        let name = s.trim().to_ascii_lowercase().replace(' ', "-");
        Some(match name.as_str() {
            "claude-code" | "claude" | "cc" => Source::ClaudeCode,
            "codex" => Source::Codex,
            "kimi" | "kimi-code" => Source::Kimi,
            "pi" | "pi-coding-agent" => Source::Pi,
            "intendant" => Source::Intendant,
            "dsh" | "deepseek-harness" => Source::Dsh,
            "gemini" | "gemini-cli" => Source::Gemini,
            "copilot" | "copilot-cli" | "github-copilot" | "github-copilot-cli" => Source::Copilot,
            "qwen" | "qwen-code" => Source::Qwen,
            "opencode" | "open-code" => Source::OpenCode,
            _ => return None,
        })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who said a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Human-typed prose.
    User,
    /// The model's visible prose.
    Assistant,
    /// Tool calls and results; searched only with `scope=all`.
    Tool,
}

impl Role {
    /// The serialized spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Where a record lives in its source. Opaque to clients and frozen once minted.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Locator {
    /// A message id the source itself assigns (Claude `message.id`/uuid, …).
    NativeMessageId {
        /// The source's id.
        message_id: String,
    },
    /// A line of the main source file.
    NativeEvent {
        /// 1-based line number in the source file.
        line_no: u64,
        /// First 16 hex of SHA-256 of the record's full (uncapped) text.
        content_hash16: String,
    },
    /// A byte span of a sidecar file (Intendant `turns/…_model.txt`).
    NativeSidecarSpan {
        /// Path of the sidecar relative to the session's log directory.
        file: String,
        /// Byte offset of the span.
        offset: u64,
        /// Byte length of the span.
        len: u64,
        /// First 16 hex of SHA-256 of the record's full (uncapped) text.
        content_hash16: String,
    },
    /// A record id assigned by an external store.
    ExternalRecordId {
        /// The id.
        record_id: String,
    },
    /// A line of a given generation of a source file.
    ExternalLine {
        /// The source generation the line belongs to.
        generation: u32,
        /// 1-based line number.
        line_no: u64,
        /// First 16 hex of SHA-256 of the record's full (uncapped) text.
        content_hash16: String,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One searchable unit (DESIGN.md §2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageRecord {
    /// Who said it.
    pub role: Role,
    /// Epoch milliseconds (UTC). Never 0: unknown ⇒ the session's last known timestamp.
    pub ts_ms: i64,
    /// The ORIGINAL text, capped (user/assistant 256 KiB, tool rows 3,072 chars).
    pub text: String,
    /// True when the cap cut the text.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// Where it lives in the source.
    pub locator: Locator,
    /// Native message sequence number, where the source has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Codex user-turn number (counts every user message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Record or item id used by marks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// True for subagent/sidechain records indexed under their parent session.
    #[serde(default, skip_serializing_if = "is_false")]
    pub subagent: bool,
    /// Source generation (bumped when a source file is rewritten in place).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generation: u32,
}

/// How a session relates to its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// Spawned by the parent as a subagent.
    Subagent,
    /// Forked from the parent.
    Fork,
    /// A resumed copy of the parent.
    Resume,
    /// A branch of the parent.
    Branch,
    /// Intendant: a side conversation of the parent.
    Side,
    /// Intendant: forked from an anchor of the parent.
    AnchorFork,
    /// Intendant: a rewind of the parent.
    Rewind,
    /// Intendant: split off the parent by fission.
    Fission,
}

/// A session's parent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Parent {
    /// The parent's session key.
    pub key: String,
    /// How this session relates to it.
    pub relation: Relation,
}

/// Session metadata: the shard header, copied into the manifest entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The agent.
    pub source: Source,
    /// The source's own session id.
    pub session_id: String,
    /// The source's title, else the first user prose (collapsed, ≤ 80 chars).
    pub title: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Oldest record timestamp.
    pub created_ms: Option<i64>,
    /// Newest record timestamp.
    pub updated_ms: Option<i64>,
    /// Number of user+assistant records.
    pub messages: u64,
    /// The parent session, if any.
    pub parent: Option<Parent>,
    /// The command that resumes it.
    pub resume: Option<String>,
    /// Source files.
    pub paths: Vec<String>,
    /// Distinct model names the source records for the session, in
    /// first-seen order (empty, and not serialized, when it records none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
}

impl SessionMeta {
    /// The session key `<source>:<session_id>`.
    pub fn key(&self) -> String {
        session_key(self.source, &self.session_id)
    }
}

/// Adds `model` to a [`SessionMeta::models`] list unless it is blank,
/// already there, or Claude's `<synthetic>` placeholder.
pub fn add_model(models: &mut Vec<String>, model: &str) {
    let m = model.trim();
    if !m.is_empty() && m != "<synthetic>" && !models.iter().any(|x| x == m) {
        models.push(m.to_string());
    }
}

/// Builds a session key `<source>:<session_id>`.
pub fn session_key(source: Source, session_id: &str) -> String {
    format!("{}:{}", source.as_str(), session_id)
}

/// Whether a mark's anchor record falls before or after the superseded range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnchorPosition {
    /// The anchor record itself is superseded too.
    Before,
    /// Supersede from the record after the anchor.
    After,
}

/// A supersession mark. `at` = number of records that preceded the mark in
/// source order; a mark applies only to records before `at`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mark {
    /// Records with `seq > cut_after_seq` are superseded.
    SeqCut {
        /// Records before this index are affected.
        at: u64,
        /// The last seq that stays.
        cut_after_seq: u64,
    },
    /// The last `num_turns` active user turns, with everything after each
    /// turn's user message, are superseded.
    TurnCount {
        /// Records before this index are affected.
        at: u64,
        /// How many user turns to roll back.
        num_turns: u64,
    },
    /// Everything from the anchor record up to `at`.
    ItemAnchor {
        /// Records before this index are affected.
        at: u64,
        /// The anchor record's `item_id`.
        item_id: String,
        /// Whether the anchor itself is included.
        position: AnchorPosition,
    },
    /// The records whose `item_id` is listed.
    RecordIds {
        /// Records before this index are affected.
        at: u64,
        /// `item_id`s of superseded records.
        ids: Vec<String>,
        /// Why (`rewind`, `undo`, `branch`, …).
        reason: String,
    },
    /// Records of a generation newer than `active_generation`.
    GenerationRestore {
        /// Records before this index are affected.
        at: u64,
        /// The generation that is active.
        active_generation: u32,
    },
}

impl Mark {
    /// The mark's position in source order.
    pub fn at(&self) -> u64 {
        match self {
            Mark::SeqCut { at, .. }
            | Mark::TurnCount { at, .. }
            | Mark::ItemAnchor { at, .. }
            | Mark::RecordIds { at, .. }
            | Mark::GenerationRestore { at, .. } => *at,
        }
    }
}

/// A generation file's body: `{"session", "records", "marks"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// The session header.
    pub session: SessionMeta,
    /// Records in source order.
    pub records: Vec<MessageRecord>,
    /// Marks in source order.
    #[serde(default)]
    pub marks: Vec<Mark>,
}

/// A per-source-file cursor kept in the manifest (DESIGN.md §6). The core
/// never interprets it; it is carried so the manifest round-trips.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCursor {
    /// The file's path.
    pub path: String,
    /// Device id.
    #[serde(default)]
    pub dev: u64,
    /// Inode number.
    #[serde(default)]
    pub ino: u64,
    /// Length when last read.
    #[serde(default)]
    pub len: u64,
    /// Modification time in nanoseconds.
    #[serde(default)]
    pub mtime_ns: i128,
    /// Offset just past the last complete line read.
    #[serde(default)]
    pub offset: u64,
    /// SHA-256 (hex) of the first 4 KiB.
    #[serde(default)]
    pub head_sha: String,
    /// SHA-256 (hex) of the 4 KiB ending at `offset`.
    #[serde(default)]
    pub tail_sha: String,
    /// Generation of the file (bumped on rewrite).
    #[serde(default)]
    pub generation: u32,
}

/// One session's entry in the manifest: the meta plus store bookkeeping.
/// Read through [`flat::FlatEntry`] (the same JSON, one level).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "flat::FlatEntry")]
pub struct ManifestEntry {
    /// The session meta (flattened).
    #[serde(flatten)]
    pub meta: SessionMeta,
    /// `<hash16>.json` of the current generation file.
    pub generation_file: String,
    /// Number of records in the shard (all roles).
    pub records: u64,
    /// Newest `ts_ms` of any record, tool rows included (search early-out bound).
    #[serde(default)]
    pub max_ts_ms: Option<i64>,
    /// Byte size of the generation file.
    #[serde(default)]
    pub bytes: u64,
    /// True when the session's source files are gone.
    #[serde(default)]
    pub source_gone: bool,
    /// Per-file cursors.
    #[serde(default)]
    pub files: Vec<FileCursor>,
    /// Sweep watermark (ms) of the sweep that produced this entry.
    #[serde(default)]
    pub watermark: i64,
    /// Parser-private state (e.g. generation counters); opaque to the core.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub state: serde_json::Value,
}

/// The manifest: the store's table of contents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always 1.
    pub schema: u32,
    /// Version of the extractors that wrote it.
    pub parser_version: u32,
    /// Random id made when the store is created or cleared.
    pub store_id: String,
    /// Increases by one on every write.
    pub revision: u64,
    /// When it was written.
    pub updated_at_ms: i64,
    /// Sessions by key (sorted).
    pub sessions: BTreeMap<String, ManifestEntry>,
    /// Deleted session keys and when.
    #[serde(default)]
    pub tombstones: BTreeMap<String, i64>,
}

impl Manifest {
    /// An empty manifest for a new store.
    pub fn empty(store_id: String, parser_version: u32) -> Manifest {
        Manifest {
            schema: 1,
            parser_version,
            store_id,
            revision: 0,
            updated_at_ms: 0,
            sessions: BTreeMap::new(),
            tombstones: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_distinct_in_first_seen_order_without_placeholders() {
        let mut m = Vec::new();
        for name in [
            "gpt-5.5",
            " ",
            "<synthetic>",
            "claude-opus-4-6",
            "gpt-5.5",
            " o3 ",
        ] {
            add_model(&mut m, name);
        }
        assert_eq!(m, ["gpt-5.5", "claude-opus-4-6", "o3"]);
    }

    #[test]
    fn a_session_without_models_keeps_its_bytes() {
        let json = r#"{"source":"kimi","session_id":"s","title":null,"cwd":null,"branch":null,"created_ms":null,"updated_ms":null,"messages":0,"parent":null,"resume":null,"paths":[]}"#;
        let meta: SessionMeta = serde_json::from_str(json).unwrap();
        assert!(meta.models.is_empty());
        assert_eq!(serde_json::to_string(&meta).unwrap(), json);
    }
}
