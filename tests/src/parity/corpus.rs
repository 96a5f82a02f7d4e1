//! Shards from corpus-gen truth: one [`Shard`] per truth session, with the
//! truth's user/assistant records, tool rows made from its `tool_token`
//! lines, and a `record_ids` mark that supersedes the records the truth
//! calls inactive. All seeds' sessions go into one manifest.
//!
//! What the shards hold is also kept as [`Facts`] (tokens, where they sit,
//! the filters each record passes), so the request generator can say what
//! every request must find.

use super::ParityError;
use crate::truth::{self, planted_tokens};
use recall_core::model::{
    Locator, Manifest, ManifestEntry, Mark, MessageRecord, Parent, Role, SessionMeta, Shard, Source,
};
use recall_core::naming::{generation_file_name, hash16};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The store id every parity manifest carries.
pub const STORE_ID: &str = "parity-store";
/// The revision every parity manifest carries.
pub const REVISION: u64 = 41;

/// A manifest and its generation files, as bytes, plus what they hold.
#[derive(Debug, Default)]
pub struct Corpus {
    /// `manifest.json` bytes.
    pub manifest: Vec<u8>,
    /// `(name, bytes)` of every generation file.
    pub generations: Vec<(String, Vec<u8>)>,
    /// What the shards hold.
    pub facts: Facts,
}

/// What the corpus holds, for expectations.
#[derive(Debug, Default)]
pub struct Facts {
    /// Sessions in manifest key order.
    pub sessions: Vec<SessionFacts>,
    /// Tokens planted where recall must never index them.
    pub distractors: Vec<String>,
}

/// One session of the corpus.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// `<source>:<session_id>`.
    pub key: String,
    /// The agent.
    pub source: Source,
    /// The session cwd.
    pub cwd: Option<String>,
    /// User/assistant records in source order.
    pub records: Vec<RecordFacts>,
    /// Tokens of the session's tool rows.
    pub tool_tokens: Vec<String>,
}

/// One user/assistant record.
#[derive(Debug, Clone)]
pub struct RecordFacts {
    /// Its prose token (`u` + 10 chars), when the text holds exactly one.
    pub token: Option<String>,
    /// `user` or `assistant`.
    pub role: Role,
    /// Epoch ms.
    pub ts_ms: i64,
    /// Not superseded.
    pub active: bool,
    /// A subagent record.
    pub subagent: bool,
    /// The original text.
    pub text: String,
}

#[derive(Deserialize)]
struct TruthLine {
    #[serde(rename = "type")]
    kind: String,
    key: Option<String>,
    source: Option<Source>,
    session_id: Option<String>,
    title: Option<String>,
    cwd: Option<String>,
    branch: Option<String>,
    parent: Option<Parent>,
    created_ms: Option<i64>,
    updated_ms: Option<i64>,
    role: Option<Role>,
    ts_ms: Option<i64>,
    text: Option<String>,
    #[serde(default)]
    truncated: bool,
    #[serde(default = "yes")]
    active: bool,
    #[serde(default)]
    subagent: bool,
    token: Option<String>,
}

fn yes() -> bool {
    true
}

/// A truth session being assembled.
struct Building {
    meta: SessionMeta,
    facts: SessionFacts,
    truncated: Vec<bool>,
}

/// Generates one home per seed (`sessions` source sessions each) and builds
/// the corpus from all their truth files.
pub fn from_seeds(seeds: &[u64], sessions: u32) -> Result<Corpus, ParityError> {
    let mut all = Vec::new();
    let mut distractors = Vec::new();
    for &seed in seeds {
        let generated =
            truth::generate(seed, sessions, &Source::ALL).map_err(ParityError::Generate)?;
        let (s, d) = read_truth(&generated.truth())?;
        all.extend(s);
        distractors.extend(d);
    }
    build(all, distractors)
}

fn read_truth(path: &Path) -> Result<(Vec<Building>, Vec<String>), ParityError> {
    let err = |message: String| ParityError::Truth {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let mut sessions: Vec<Building> = Vec::new();
    let mut distractors = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t: TruthLine =
            serde_json::from_str(line).map_err(|e| err(format!("line {}: {e}", n + 1)))?;
        let missing = |what: &str| err(format!("line {}: {} without {what}", n + 1, t.kind));
        match t.kind.as_str() {
            "session" => {
                let source = t.source.ok_or_else(|| missing("source"))?;
                let session_id = t.session_id.clone().ok_or_else(|| missing("session_id"))?;
                let meta = SessionMeta {
                    source,
                    resume: resume_command(source, &session_id),
                    session_id,
                    title: t.title,
                    cwd: t.cwd.clone(),
                    branch: t.branch,
                    created_ms: t.created_ms,
                    updated_ms: t.updated_ms,
                    messages: 0,
                    parent: t.parent,
                    paths: Vec::new(),
                    models: Vec::new(),
                };
                let key = meta.key();
                sessions.push(Building {
                    meta,
                    facts: SessionFacts {
                        key,
                        source,
                        cwd: t.cwd,
                        records: Vec::new(),
                        tool_tokens: Vec::new(),
                    },
                    truncated: Vec::new(),
                });
            }
            "record" | "tool_token" => {
                let s = sessions
                    .last_mut()
                    .filter(|s| Some(&s.facts.key) == t.key.as_ref())
                    .ok_or_else(|| {
                        err(format!("line {}: {} outside its session", n + 1, t.kind))
                    })?;
                if t.kind == "tool_token" {
                    s.facts
                        .tool_tokens
                        .push(t.token.ok_or_else(|| missing("token"))?);
                    continue;
                }
                let text = t.text.ok_or_else(|| missing("text"))?;
                let tokens = planted_tokens(&text, b'u');
                s.facts.records.push(RecordFacts {
                    token: (tokens.len() == 1).then(|| tokens[0].to_string()),
                    role: t.role.ok_or_else(|| missing("role"))?,
                    ts_ms: t.ts_ms.ok_or_else(|| missing("ts_ms"))?,
                    active: t.active,
                    subagent: t.subagent,
                    text,
                });
                s.truncated.push(t.truncated);
            }
            "distractor" => distractors.push(t.token.ok_or_else(|| missing("token"))?),
            _ => {}
        }
    }
    Ok((sessions, distractors))
}

fn resume_command(source: Source, id: &str) -> Option<String> {
    match source {
        Source::ClaudeCode => Some(format!("claude --resume {id}")),
        Source::Codex => Some(format!("codex resume {id}")),
        Source::Kimi => Some(format!("kimi --session {id}")),
        Source::Pi | Source::Intendant | Source::Dsh => None,
        Source::Gemini => Some(format!("gemini --resume {id}")),
        Source::Copilot => Some(format!("copilot --resume {id}")),
        Source::Qwen => Some(format!("qwen --resume {id}")),
        Source::OpenCode => Some(format!("opencode --session {id}")),
    }
}

/// Tool rows for a session: alternating calls and outputs, each naming one
/// tool token; every fourth carries non-ASCII text so the tool lane folds too.
fn tool_text(i: usize, token: &str) -> String {
    match i % 4 {
        0 => format!(r#"Bash {{"command":"rg -n {token} src/ | head -20"}}"#),
        1 => format!(
            "src/index/shard.rs:{}: let key = \"{token}\"; // cached",
            10 + i
        ),
        2 => format!(r#"Read {{"file_path":"/home/mara/code/notes/{token}.md"}}"#),
        _ => format!("Größe der Datei: {} KiB — {token} geprüft ✅", 3 * i + 1),
    }
}

fn build(sessions: Vec<Building>, distractors: Vec<String>) -> Result<Corpus, ParityError> {
    let mut manifest = Manifest::empty(STORE_ID.to_string(), 1);
    manifest.revision = REVISION;
    manifest.updated_at_ms = 1_793_000_000_000;
    let mut corpus = Corpus::default();
    for (n, mut b) in sessions.into_iter().enumerate() {
        let (records, marks) = records_and_marks(&b);
        b.meta.messages = b.facts.records.len() as u64;
        let max_ts_ms = records.iter().map(|r| r.ts_ms).max();
        let shard = Shard {
            session: b.meta.clone(),
            records,
            marks,
        };
        let bytes = serde_json::to_vec(&shard).map_err(|e| ParityError::Native(e.to_string()))?;
        let name = generation_file_name(&bytes);
        let entry = ManifestEntry {
            meta: b.meta,
            generation_file: name.clone(),
            records: shard.records.len() as u64,
            max_ts_ms,
            bytes: bytes.len() as u64,
            source_gone: n % 11 == 5,
            files: Vec::new(),
            watermark: 1_793_000_000_000,
            state: serde_json::Value::Null,
        };
        if manifest
            .sessions
            .insert(b.facts.key.clone(), entry)
            .is_some()
        {
            return Err(ParityError::Native(format!(
                "duplicate session {}",
                b.facts.key
            )));
        }
        corpus.generations.push((name, bytes));
        corpus.facts.sessions.push(b.facts);
    }
    corpus.facts.sessions.sort_by(|a, b| a.key.cmp(&b.key));
    corpus.facts.distractors = distractors;
    corpus.manifest =
        serde_json::to_vec(&manifest).map_err(|e| ParityError::Native(e.to_string()))?;
    Ok(corpus)
}

/// The shard records (conversation records with tool rows interleaved) and
/// the mark superseding the inactive ones.
fn records_and_marks(b: &Building) -> (Vec<MessageRecord>, Vec<Mark>) {
    let conv = &b.facts.records;
    let tools = &b.facts.tool_tokens;
    // Tool row k follows conversation record (k + 1) * len / (tools + 1).
    let mut after: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for k in 0..tools.len() {
        let at = ((k + 1) * conv.len() / (tools.len() + 1)).min(conv.len().saturating_sub(1));
        after.entry(at).or_default().push(k);
    }
    let mut records = Vec::new();
    let mut superseded = Vec::new();
    for (i, r) in conv.iter().enumerate() {
        let item_id = format!("r{i}");
        if !r.active {
            superseded.push(item_id.clone());
        }
        records.push(MessageRecord {
            role: r.role,
            ts_ms: r.ts_ms,
            text: r.text.clone(),
            truncated: b.truncated.get(i).copied().unwrap_or(false),
            locator: Locator::NativeEvent {
                line_no: records.len() as u64 + 1,
                content_hash16: hash16(r.text.as_bytes()),
            },
            seq: Some(i as u64 + 1),
            turn: None,
            item_id: Some(item_id),
            subagent: r.subagent,
            generation: 0,
        });
        for &k in after.get(&i).into_iter().flatten() {
            let text = tool_text(k, &tools[k]);
            records.push(MessageRecord {
                role: Role::Tool,
                ts_ms: r.ts_ms,
                locator: Locator::NativeEvent {
                    line_no: records.len() as u64 + 1,
                    content_hash16: hash16(text.as_bytes()),
                },
                text,
                truncated: false,
                seq: None,
                turn: None,
                item_id: Some(format!("t{k}")),
                subagent: false,
                generation: 0,
            });
        }
    }
    let marks = if superseded.is_empty() {
        Vec::new()
    } else {
        vec![Mark::RecordIds {
            at: records.len() as u64,
            ids: superseded,
            reason: "rewind".to_string(),
        }]
    };
    (records, marks)
}
