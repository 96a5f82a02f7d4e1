//! Benchmark corpus: corpus-gen truth prose, replicated with fresh prose
//! tokens until it reaches a target size, as shards and a manifest in
//! memory. Shared by the native benches here and the wasmtime bench in
//! `tests/benches/` (included there by path), so both search the same bytes.
//!
//! The generator runs once per seed/size into `bench/work/` (git-ignored)
//! and is reused afterwards.

#![allow(dead_code)]

use recall_core::model::{
    Locator, Manifest, ManifestEntry, MessageRecord, Role, SessionMeta, Shard, Source,
};
use recall_core::naming::{generation_file_name, hash16};
use std::path::{Path, PathBuf};
use std::process::Command;

/// corpus-gen seed of the benchmark prose.
pub const SEED: u64 = 11;
/// corpus-gen source sessions (≈ 5 MB of user/assistant prose).
pub const SESSIONS: u32 = 300;
/// Prose bytes the search benchmarks hold in memory.
pub const TARGET_BYTES: usize = 200_000_000;
/// The common term of the search benchmarks.
pub const COMMON: &str = "error";
/// The 3-term query of the search benchmarks.
pub const THREE_TERMS: &str = "root cause initialized";

/// One user/assistant record of the truth.
#[derive(Clone, Debug)]
pub struct Prose {
    /// `user` or `assistant`.
    pub role: Role,
    /// Epoch ms.
    pub ts_ms: i64,
    /// The text.
    pub text: String,
}

/// One truth session.
#[derive(Clone, Debug)]
pub struct TruthSession {
    /// The agent.
    pub source: Source,
    /// Its id.
    pub session_id: String,
    /// Its cwd.
    pub cwd: Option<String>,
    /// Its records.
    pub records: Vec<Prose>,
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    // Both crates that include this file live one level below the root.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs corpus-gen once (cached in `bench/work/`) and reads its truth.
pub fn truth_sessions() -> Vec<TruthSession> {
    let dir = repo_root().join(format!("bench/work/gen-s{SEED}-n{SESSIONS}"));
    let truth = dir.join("truth.jsonl");
    if !truth.is_file() {
        let gen = repo_root().join("tests/shared/corpus-gen/gen.py");
        let status = Command::new("python3")
            .arg(&gen)
            .arg("--out")
            .arg(&dir)
            .args([
                "--seed",
                &SEED.to_string(),
                "--sessions",
                &SESSIONS.to_string(),
                "--force",
            ])
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", gen.display()));
        assert!(status.success(), "gen.py failed: {status}");
        // Only the truth is needed; the home is large.
        let _ = std::fs::remove_dir_all(dir.join("home"));
    }
    let text =
        std::fs::read_to_string(&truth).unwrap_or_else(|e| panic!("{}: {e}", truth.display()));
    let mut out: Vec<TruthSession> = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        match v["type"].as_str() {
            Some("session") => out.push(TruthSession {
                source: serde_json::from_value(v["source"].clone()).unwrap_or(Source::Pi),
                session_id: v["session_id"].as_str().unwrap_or("").to_string(),
                cwd: v["cwd"].as_str().map(str::to_string),
                records: Vec::new(),
            }),
            Some("record") => {
                if let Some(s) = out.last_mut() {
                    s.records.push(Prose {
                        role: if v["role"] == "user" {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        ts_ms: v["ts_ms"].as_i64().unwrap_or(1),
                        text: v["text"].as_str().unwrap_or("").to_string(),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Concatenated record texts, up to `limit` bytes: the all-ASCII ones, or
/// the ones holding non-ASCII text (mixed scripts).
pub fn fold_texts(sessions: &[TruthSession], limit: usize) -> (String, String) {
    let (mut ascii, mut mixed) = (String::new(), String::new());
    for r in sessions.iter().flat_map(|s| &s.records) {
        let dst = if r.text.is_ascii() {
            &mut ascii
        } else {
            &mut mixed
        };
        if dst.len() < limit {
            dst.push_str(&r.text);
            dst.push('\n');
        }
    }
    (ascii, mixed)
}

/// Shards and manifest of about `target` prose bytes in memory.
pub struct BenchCorpus {
    /// `manifest.json`.
    pub manifest: Vec<u8>,
    /// `(name, bytes)` of each generation file.
    pub generations: Vec<(String, Vec<u8>)>,
    /// Prose bytes held (record texts).
    pub prose_bytes: usize,
    /// Copies of the truth made.
    pub copies: usize,
    /// A prose token that occurs in exactly one record.
    pub rare: String,
}

const B32: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Rewrites every prose token (`u` + 10 base32) so copy `k` has its own.
fn retoken(text: &str, k: usize) -> String {
    let mut b = text.as_bytes().to_vec();
    let is_b32 = |c: u8| B32.contains(&c);
    let mut i = 0;
    while i + 11 <= b.len() {
        let edge = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let end = i + 11 == b.len() || !b[i + 11].is_ascii_alphanumeric();
        if b[i] == b'u' && edge && end && b[i + 1..i + 11].iter().all(|&c| is_b32(c)) {
            b[i + 1] = B32[k % 32];
            b[i + 2] = B32[(k / 32) % 32];
            b[i + 3] = B32[(k / 1024) % 32];
            i += 11;
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes.
    String::from_utf8(b).unwrap_or_else(|_| text.to_string())
}

/// Builds the corpus: copies of the truth sessions until `target` bytes.
pub fn build(sessions: &[TruthSession], target: usize) -> BenchCorpus {
    let one: usize = sessions
        .iter()
        .flat_map(|s| &s.records)
        .map(|r| r.text.len())
        .sum();
    let copies = target.div_ceil(one.max(1));
    let mut manifest = Manifest::empty("bench".to_string(), 1);
    manifest.revision = 1;
    let mut generations = Vec::new();
    let mut prose_bytes = 0;
    let mut rare = String::new();
    for k in 0..copies {
        for (n, s) in sessions.iter().enumerate() {
            let shift = k as i64 * 3_600_000;
            let records: Vec<MessageRecord> = s
                .records
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let text = retoken(&r.text, k);
                    MessageRecord {
                        role: r.role,
                        ts_ms: r.ts_ms - shift,
                        locator: Locator::NativeEvent {
                            line_no: i as u64 + 1,
                            content_hash16: hash16(text.as_bytes()),
                        },
                        text,
                        truncated: false,
                        seq: Some(i as u64 + 1),
                        turn: None,
                        item_id: None,
                        subagent: false,
                        generation: 0,
                    }
                })
                .collect();
            if k == copies / 2 && n == sessions.len() / 2 {
                rare = records
                    .iter()
                    .find_map(|r| first_token(&r.text))
                    .unwrap_or_default();
            }
            prose_bytes += records.iter().map(|r| r.text.len()).sum::<usize>();
            let meta = SessionMeta {
                source: s.source,
                session_id: format!("{}~{k}", s.session_id),
                title: None,
                cwd: s.cwd.clone(),
                branch: None,
                created_ms: records.iter().map(|r| r.ts_ms).min(),
                updated_ms: records.iter().map(|r| r.ts_ms).max(),
                messages: records.len() as u64,
                parent: None,
                resume: None,
                paths: Vec::new(),
                models: Vec::new(),
            };
            let max_ts_ms = meta.updated_ms;
            let shard = Shard {
                session: meta.clone(),
                records,
                marks: Vec::new(),
            };
            let bytes = serde_json::to_vec(&shard).unwrap_or_default();
            let name = generation_file_name(&bytes);
            let key = meta.key();
            manifest.sessions.insert(
                key,
                ManifestEntry {
                    meta,
                    generation_file: name.clone(),
                    records: shard.records.len() as u64,
                    max_ts_ms,
                    bytes: bytes.len() as u64,
                    source_gone: false,
                    files: Vec::new(),
                    watermark: 0,
                    state: serde_json::Value::Null,
                },
            );
            generations.push((name, bytes));
        }
    }
    BenchCorpus {
        manifest: serde_json::to_vec(&manifest).unwrap_or_default(),
        generations,
        prose_bytes,
        copies,
        rare,
    }
}

fn first_token(text: &str) -> Option<String> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(10)).find_map(|i| {
        let edge = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        (b[i] == b'u' && edge && b[i + 1..i + 11].iter().all(|c| B32.contains(c)))
            .then(|| text[i..i + 11].to_string())
    })
}

/// The search request JSON for `q` (default filters: newest, limit 20).
pub fn request(q: &str) -> String {
    serde_json::json!({ "q": q }).to_string()
}
