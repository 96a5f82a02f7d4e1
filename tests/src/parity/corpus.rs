//! Shards from corpus-gen truth: one [`Shard`] per truth session, with the
//! truth's user/assistant records, tool rows made from its `tool_token`
//! lines, and a `record_ids` mark that supersedes the records the truth
//! calls inactive. All seeds' sessions go into one manifest, with the real
//! sessions of the agents corpus-gen does not write ([`super::agents`]), as
//! the host extracts them.
//!
//! What the shards hold is also kept as [`Facts`] (tokens, where they sit,
//! the filters each record passes), so the request generator can say what
//! every request must find. A truth record's token is the one corpus-gen
//! planted; a real record's is a word of its own text that no other record
//! of the corpus holds ([`real_facts`]).

use super::{agents, ParityError};
use crate::truth::{self, planted_tokens};
use recall_core::fold::fold;
use recall_core::model::{
    Locator, Manifest, ManifestEntry, Mark, MessageRecord, Parent, Role, SessionMeta, Shard, Source,
};
use recall_core::naming::{generation_file_name, hash16};
use recall_host::extract::Extracted;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
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
/// the corpus from all their truth files and from the real sessions of every
/// agent of `tests/fixtures/parity-agents.json`.
pub fn from_seeds(seeds: &[u64], sessions: u32) -> Result<Corpus, ParityError> {
    let agents = agents::table()?;
    from_seeds_and(seeds, sessions, &agents)
}

/// [`from_seeds`] with the real sessions of `agents` only.
pub fn from_seeds_and(
    seeds: &[u64],
    sessions: u32,
    agents: &[agents::Agent],
) -> Result<Corpus, ParityError> {
    let mut all = Vec::new();
    let mut distractors = Vec::new();
    for &seed in seeds {
        let generated =
            truth::generate(seed, sessions, &Source::ALL).map_err(ParityError::Generate)?;
        let (s, d) = read_truth(&generated.truth())?;
        all.extend(s);
        distractors.extend(d);
    }
    let real = agents::sessions(agents)?;
    build(all, real, distractors)
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

fn build(
    sessions: Vec<Building>,
    real: Vec<Extracted>,
    distractors: Vec<String>,
) -> Result<Corpus, ParityError> {
    let mut shards: Vec<(Shard, SessionFacts)> = Vec::new();
    for mut b in sessions {
        let (records, marks) = records_and_marks(&b);
        b.meta.messages = b.facts.records.len() as u64;
        let shard = Shard {
            session: b.meta,
            records,
            marks,
        };
        shards.push((shard, b.facts));
    }
    let truth_sessions = shards.len();
    for x in real {
        let facts = SessionFacts {
            key: x.meta.key(),
            source: x.meta.source,
            cwd: x.meta.cwd.clone(),
            records: Vec::new(),
            tool_tokens: Vec::new(),
        };
        let shard = Shard {
            session: x.meta,
            records: x.records,
            marks: x.marks,
        };
        shards.push((shard, facts));
    }
    real_facts(&mut shards, truth_sessions);

    let mut manifest = Manifest::empty(STORE_ID.to_string(), 1);
    manifest.revision = REVISION;
    manifest.updated_at_ms = 1_793_000_000_000;
    let mut corpus = Corpus::default();
    for (n, (shard, facts)) in shards.into_iter().enumerate() {
        let max_ts_ms = shard.records.iter().map(|r| r.ts_ms).max();
        let bytes = serde_json::to_vec(&shard).map_err(|e| ParityError::Native(e.to_string()))?;
        let name = generation_file_name(&bytes);
        let entry = ManifestEntry {
            meta: shard.session,
            generation_file: name.clone(),
            records: shard.records.len() as u64,
            max_ts_ms,
            bytes: bytes.len() as u64,
            source_gone: n % 11 == 5,
            files: Vec::new(),
            watermark: 1_793_000_000_000,
            state: serde_json::Value::Null,
        };
        if manifest.sessions.insert(facts.key.clone(), entry).is_some() {
            return Err(ParityError::Native(format!(
                "duplicate session {}",
                facts.key
            )));
        }
        corpus.generations.push((name, bytes));
        corpus.facts.sessions.push(facts);
    }
    corpus.facts.sessions.sort_by(|a, b| a.key.cmp(&b.key));
    corpus.facts.distractors = distractors;
    corpus.manifest =
        serde_json::to_vec(&manifest).map_err(|e| ParityError::Native(e.to_string()))?;
    Ok(corpus)
}

/// Shortest and longest word taken as a real record's token (the request
/// generator cuts 6–10 byte prefixes and suffixes of tokens).
const TOKEN_LEN: std::ops::RangeInclusive<usize> = 11..=40;
/// A record with a longer whitespace-free run gives no token: the phrase
/// requests around its words could pass the 1,024-byte query limit.
const MAX_RUN: usize = 300;
/// Tool tokens taken per real session.
const TOOL_TOKENS: usize = 6;

/// Every folded record text of the corpus in one string, for counting
/// which records hold a word (§4: a term matches a record when its fold
/// occurs in the record's fold; whole-char boundaries only ever remove
/// occurrences, so this count is an upper bound and a count of one exact).
struct Haystack {
    text: String,
    /// `(start in text, shard, record)`, in text order.
    starts: Vec<(usize, usize, usize)>,
}

impl Haystack {
    fn new(shards: &[(Shard, SessionFacts)]) -> Haystack {
        let mut text = String::new();
        let mut starts = Vec::new();
        for (s, (shard, _)) in shards.iter().enumerate() {
            for (r, rec) in shard.records.iter().enumerate() {
                starts.push((text.len(), s, r));
                text.push_str(&fold(&rec.text).text);
                // Tokens are ASCII letters and digits: never across records.
                text.push('\n');
            }
        }
        Haystack { text, starts }
    }

    /// Whether some record's fold holds `word`'s and every such record
    /// passes `ok(shard, record)`.
    fn only(&self, word: &str, ok: impl Fn(usize, usize) -> bool) -> bool {
        let needle = fold(word).text;
        let mut any = false;
        for (at, _) in self.text.match_indices(needle.as_str()) {
            let i = self.starts.partition_point(|&(start, _, _)| start <= at) - 1;
            let (_, s, r) = self.starts[i];
            if !ok(s, r) {
                return false;
            }
            any = true;
        }
        any
    }
}

/// The words of `text` that could be tokens, longest first.
fn candidates(text: &str) -> Vec<&str> {
    let mut words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| TOKEN_LEN.contains(&w.len()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
    words
}

/// The facts of the real sessions (`shards[from..]`): their user and
/// assistant records, each with a token when one of its words is held by no
/// other record of the corpus, and up to [`TOOL_TOKENS`] words held only by
/// tool rows of that session.
fn real_facts(shards: &mut [(Shard, SessionFacts)], from: usize) {
    let hay = Haystack::new(shards);
    for s in from..shards.len() {
        let (shard, _) = &shards[s];
        let active = recall_core::derive_active(&shard.records, &shard.marks);
        let mut records = Vec::new();
        let mut tool_tokens = Vec::new();
        for (r, rec) in shard.records.iter().enumerate() {
            if rec.role == Role::Tool {
                for w in candidates(&rec.text) {
                    if tool_tokens.len() >= TOOL_TOKENS {
                        break;
                    }
                    let tool_only = hay.only(w, |hs, hr| {
                        hs == s && shards[hs].0.records[hr].role == Role::Tool
                    });
                    if tool_only
                        && !tool_tokens
                            .iter()
                            .any(|t: &String| t.eq_ignore_ascii_case(w))
                    {
                        tool_tokens.push(w.to_string());
                    }
                }
                continue;
            }
            let short_runs = rec.text.split_whitespace().all(|w| w.len() <= MAX_RUN);
            let token = short_runs
                .then(|| {
                    candidates(&rec.text)
                        .into_iter()
                        .find(|w| hay.only(w, |hs, hr| (hs, hr) == (s, r)))
                })
                .flatten();
            records.push(RecordFacts {
                token: token.map(str::to_string),
                role: rec.role,
                ts_ms: rec.ts_ms,
                active: active[r],
                subagent: rec.subagent,
                text: rec.text.clone(),
            });
        }
        let facts = &mut shards[s].1;
        facts.records = records;
        facts.tool_tokens = tool_tokens;
    }
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
