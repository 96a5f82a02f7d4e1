//! Extraction (DESIGN.md §5): one module per source turns an agent's
//! transcript files into session meta, records and supersession marks.
//!
//! Every extractor is hermetic: it reads only the paths it is given (roots
//! come from [`Roots`], never from the process environment inside an
//! extractor) and streams its files line by line (DSH's zstd logs frame by
//! frame). Each source is an `agent::Agent`; `AGENTS` is the one table
//! of them that roots, watch scopes, discovery and extraction dispatch read.

pub mod agent;
pub mod claude;
pub mod codex;
pub mod common;
pub mod copilot;
pub mod draft;
pub mod dsh;
pub mod feed;
pub mod gemini;
pub mod intendant;
pub mod json;
pub mod kimi;
pub mod lenient;
pub mod member;
pub mod open;
pub mod opencode;
pub mod pi;
pub mod qwen;
pub mod resume;
pub(crate) mod single;

pub use resume::{extract_resumable, extract_resumable_with, Checkpoint, Fed, Resumed};

use agent::{entry, Entry};
use recall_core::model::{Mark, MessageRecord, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The registry: every agent recall reads, in discovery order. The one
/// list a new source is added to (with its own module).
pub(crate) const AGENTS: &[Entry] = &[
    entry::<claude::Claude>(),
    entry::<codex::Codex>(),
    entry::<kimi::KimiCode>(),
    entry::<kimi::KimiLegacy>(),
    entry::<pi::Pi>(),
    entry::<intendant::Intendant>(),
    entry::<dsh::Dsh>(),
    entry::<gemini::Gemini>(),
    entry::<copilot::Copilot>(),
    entry::<qwen::Qwen>(),
    entry::<opencode::OpenCode>(),
];

/// The agents of the registry by name (`Claude Code, Codex, …`), each
/// once: what every message and help text that lists agents prints.
pub fn agent_names() -> String {
    let mut seen: Vec<Source> = Vec::new();
    for a in AGENTS {
        if !seen.contains(&a.source) {
            seen.push(a.source);
        }
    }
    seen.iter()
        .map(|s| s.label())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The canonical source ids of the registry (`claude-code, codex, …`).
pub fn source_ids() -> String {
    let mut seen: Vec<&str> = Vec::new();
    for a in AGENTS {
        if !seen.contains(&a.source.as_str()) {
            seen.push(a.source.as_str());
        }
    }
    seen.join(", ")
}

/// Every agent's root variable, in registry order (`CLAUDE_CONFIG_DIR, …`).
pub fn env_vars() -> String {
    AGENTS.iter().map(|a| a.env).collect::<Vec<_>>().join(", ")
}

/// Every agent's registry id, in registry order.
pub fn agent_ids() -> impl Iterator<Item = &'static str> {
    AGENTS.iter().map(|a| a.id)
}

/// The resume command registry agent `id` builds for `meta` (what
/// extraction stores); `None` when it has none or refuses this session's id
/// or path (an unknown `id` too).
pub fn resume_command(id: &str, meta: &SessionMeta, subagent: bool) -> Option<String> {
    let a = AGENTS.iter().find(|a| a.id == id)?;
    (a.resume_command)(meta, subagent)
}

/// Where each agent's transcripts live, by registry id (`claude`, `codex`,
/// `kimi_code`, `kimi_legacy`, `pi`, `intendant`, `dsh`, `gemini`,
/// `copilot`, `qwen`, `opencode`); an agent without
/// an entry is not configured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roots(BTreeMap<String, PathBuf>);

impl Roots {
    /// Every agent's root relative to `home`, overridden by its env
    /// variable (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `KIMI_CODE_HOME`,
    /// `KIMI_SHARE_DIR`, `PI_CODING_AGENT_DIR`, `INTENDANT_HOME`, `DSH_HOME`,
    /// `GEMINI_CLI_HOME`, `COPILOT_HOME`, `QWEN_HOME`, `OPENCODE_DB` with
    /// `XDG_DATA_HOME`)
    /// as read by `env` (pass `|k| std::env::var_os(k)` at the binary's edge).
    pub fn resolve(home: &Path, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Roots {
        let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Roots(
            AGENTS
                .iter()
                .map(|a| (a.id.to_string(), (a.root)(home, &var)))
                .collect(),
        )
    }

    /// The root of agent `id`, if configured.
    pub fn get(&self, id: &str) -> Option<&Path> {
        self.0.get(id).map(PathBuf::as_path)
    }

    /// Sets (or with `None`, removes) the root of agent `id`.
    pub fn set(&mut self, id: &str, root: Option<PathBuf>) {
        match root {
            Some(r) => self.0.insert(id.to_string(), r),
            None => self.0.remove(id),
        };
    }

    /// The configured agents with their roots, in registry order.
    fn configured(&self) -> impl Iterator<Item = (&'static Entry, &Path)> {
        AGENTS.iter().filter_map(|a| self.get(a.id).map(|p| (a, p)))
    }

    /// Every configured root with the top-level entries of it that
    /// discovery and extraction read (`None` = everything below it): what
    /// the roots watch of `recall serve` needs to see change (each agent's
    /// `Agent::SCOPE`).
    pub fn scopes(&self) -> Vec<(PathBuf, Option<&'static [&'static str]>)> {
        self.configured()
            .map(|(a, p)| (p.to_path_buf(), a.scope))
            .collect()
    }

    /// Every configured root on its own: its source, path, and the roots
    /// holding only it (what bounded discovery walks on a thread each).
    pub fn each(&self) -> Vec<(Source, PathBuf, Roots)> {
        self.configured()
            .map(|(a, p)| {
                let one = Roots(BTreeMap::from([(a.id.to_string(), p.to_path_buf())]));
                (a.source, p.to_path_buf(), one)
            })
            .collect()
    }

    /// Whether agent `source`'s root may be one regular file (a database).
    pub fn file_root(source: Source) -> bool {
        AGENTS.iter().any(|a| a.source == source && a.file_root)
    }

    /// Every configured root, with its source (for status and degraded-root reports).
    pub fn all(&self) -> Vec<(Source, &Path)> {
        self.configured().map(|(a, p)| (a.source, p)).collect()
    }
}

/// One session's files, as discovered. The session key is final only after
/// extraction (identity comes from records, never from directory names).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSource {
    /// The agent.
    pub source: Source,
    /// A stable id for this unit of discovery (e.g. the main file's path).
    pub unit: String,
    /// Every file whose content feeds the session, main file first.
    pub files: Vec<PathBuf>,
    /// Source-specific context found at discovery (e.g. a Codex
    /// `session_index.jsonl` title, a Kimi work dir); opaque to the store.
    #[serde(default)]
    pub context: serde_json::Value,
}

/// What reading went wrong without stopping the extraction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// Bytes read.
    pub bytes: u64,
    /// Complete lines read.
    pub lines: u64,
    /// Lines that were not valid JSON (or not UTF-8) and were skipped.
    pub bad_lines: u64,
    /// Lines over the 64 MiB cap, skipped.
    pub huge_lines: u64,
    /// Files that ended in a torn line or an incomplete zstd frame (left for
    /// the next sweep).
    pub torn_tails: u64,
    /// Complete zstd frames that did not decode, and bytes between frames
    /// that are not a frame (DSH logs), skipped. Omitted when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_frames: u64,
    /// Files that could not be read (path: reason).
    pub unreadable: Vec<String>,
    /// The session hit a per-session bound ([`common::session_bounds`]):
    /// only a bounded prefix was read. Omitted when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One extracted session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    /// Session header.
    pub meta: SessionMeta,
    /// Records in source order.
    pub records: Vec<MessageRecord>,
    /// Marks in source order.
    pub marks: Vec<Mark>,
    /// What was skipped.
    pub diagnostics: Diagnostics,
}

/// Why a session could not be extracted at all.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The main file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Discovers every session of every configured source.
pub fn discover(roots: &Roots) -> Vec<SessionSource> {
    roots
        .configured()
        .flat_map(|(a, root)| (a.discover)(root))
        .collect()
}

/// Extracts one session. `Ok(None)` = the unit yields no session (e.g. an
/// Intendant wrapper log, a Claude file with no session lines).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    resume::run(src, &[], None, false).map(|r| r.extracted)
}
