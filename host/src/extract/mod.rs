//! Extraction (DESIGN.md §5): one module per source turns an agent's
//! transcript files into session meta, records and supersession marks.
//!
//! Every extractor is hermetic: it reads only the paths it is given (roots
//! come from [`Roots`], never from the process environment inside an
//! extractor) and streams its files line by line.

pub mod claude;
pub mod codex;
pub mod common;
pub mod draft;
pub mod intendant;
pub mod kimi;
pub mod lenient;
pub mod pi;
pub mod resume;

pub use resume::{extract_resumable, Checkpoint, Fed, Resumed, State};

use recall_core::model::{Mark, MessageRecord, SessionMeta, Source};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where each source's transcripts live. `None` = not configured.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roots {
    /// Claude Code `projects/` directory.
    pub claude: Option<PathBuf>,
    /// `CODEX_HOME`.
    pub codex: Option<PathBuf>,
    /// `KIMI_CODE_HOME` (Kimi Code).
    pub kimi_code: Option<PathBuf>,
    /// `KIMI_SHARE_DIR` (legacy kimi-cli).
    pub kimi_legacy: Option<PathBuf>,
    /// Pi `sessions/` directory.
    pub pi: Option<PathBuf>,
    /// `INTENDANT_HOME`.
    pub intendant: Option<PathBuf>,
}

impl Roots {
    /// The default roots relative to `home`, overridden by the sources' env
    /// variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `KIMI_CODE_HOME`,
    /// `KIMI_SHARE_DIR`, `PI_CODING_AGENT_DIR`, `INTENDANT_HOME`) as read by
    /// `env` (pass `|k| std::env::var_os(k)` at the binary's edge).
    pub fn resolve(home: &Path, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Roots {
        let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Roots {
            claude: Some(
                var("CLAUDE_CONFIG_DIR")
                    .unwrap_or_else(|| home.join(".claude"))
                    .join("projects"),
            ),
            codex: Some(var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"))),
            kimi_code: Some(var("KIMI_CODE_HOME").unwrap_or_else(|| home.join(".kimi-code"))),
            kimi_legacy: Some(var("KIMI_SHARE_DIR").unwrap_or_else(|| home.join(".kimi"))),
            pi: Some(
                var("PI_CODING_AGENT_DIR")
                    .unwrap_or_else(|| home.join(".pi").join("agent"))
                    .join("sessions"),
            ),
            intendant: Some(var("INTENDANT_HOME").unwrap_or_else(|| home.join(".intendant"))),
        }
    }

    /// Every configured root with the top-level entries of it that
    /// discovery and extraction read (`None` = everything below it): what
    /// the roots watch of `recall serve` needs to see change. Keep in step
    /// with the sources' `discover` functions.
    pub fn scopes(&self) -> Vec<(PathBuf, Option<&'static [&'static str]>)> {
        const CODEX: &[&str] = &["sessions", "archived_sessions", "session_index.jsonl"];
        const KIMI_CODE: &[&str] = &["sessions", "session_index.jsonl"];
        const KIMI_LEGACY: &[&str] = &["sessions", "kimi.json"];
        const INTENDANT: &[&str] = &["logs"];
        [
            (&self.claude, None),
            (&self.codex, Some(CODEX)),
            (&self.kimi_code, Some(KIMI_CODE)),
            (&self.kimi_legacy, Some(KIMI_LEGACY)),
            (&self.pi, None),
            (&self.intendant, Some(INTENDANT)),
        ]
        .into_iter()
        .filter_map(|(p, only)| p.clone().map(|p| (p, only)))
        .collect()
    }

    /// Every configured root, with its source (for status and degraded-root reports).
    pub fn all(&self) -> Vec<(Source, &Path)> {
        [
            (Source::ClaudeCode, &self.claude),
            (Source::Codex, &self.codex),
            (Source::Kimi, &self.kimi_code),
            (Source::Kimi, &self.kimi_legacy),
            (Source::Pi, &self.pi),
            (Source::Intendant, &self.intendant),
        ]
        .into_iter()
        .filter_map(|(s, p)| p.as_deref().map(|p| (s, p)))
        .collect()
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
    /// Files that ended in a torn line (left for the next sweep).
    pub torn_tails: u64,
    /// Files that could not be read (path: reason).
    pub unreadable: Vec<String>,
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
    let mut out = Vec::new();
    if let Some(r) = &roots.claude {
        out.extend(claude::discover(r));
    }
    if let Some(r) = &roots.codex {
        out.extend(codex::discover(r));
    }
    if let Some(r) = &roots.kimi_code {
        out.extend(kimi::discover_code(r));
    }
    if let Some(r) = &roots.kimi_legacy {
        out.extend(kimi::discover_legacy(r));
    }
    if let Some(r) = &roots.pi {
        out.extend(pi::discover(r));
    }
    if let Some(r) = &roots.intendant {
        out.extend(intendant::discover(r));
    }
    out
}

/// Extracts one session. `Ok(None)` = the unit yields no session (e.g. an
/// Intendant wrapper log, a Claude file with no session lines).
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    resume::run(src, &[], None, false).map(|r| r.extracted)
}
