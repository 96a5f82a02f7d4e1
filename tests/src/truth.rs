//! Truth harness: generates a fake home with `tests/shared/corpus-gen/gen.py`, runs
//! the real extractors over it and compares their output with the
//! generator's exact `truth.jsonl` (DESIGN.md §10).
//!
//! Generic over sources: pass the source ids to generate and check. What is
//! compared, per session key: title, cwd, branch, parent, created_ms,
//! updated_ms, messages; per user/assistant record in order: role, ts_ms,
//! text, truncated, active (via [`recall_core::derive_active`] over all
//! records and marks) and subagent. Every `tool_token` must sit inside a tool
//! row of its session, and no `distractor` token may appear in any
//! user/assistant record of any session. Differences are collected as
//! readable lines (see [`Report`]), never as a bare "not equal".

use recall_core::model::{MessageRecord, Role, Source};
use recall_host::extract::{self, Extracted, Roots};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many differences a [`Report`] prints before summarising the rest.
pub const SHOWN_DIFFS: usize = 40;
/// How many differences one session may contribute (later ones are noise).
const DIFFS_PER_SESSION: usize = 6;

/// The vendored copy of the shared folder (`<repo>/tests/shared`, kept equal
/// to `<repo>/../shared` by `tests/tests/vendored.rs`).
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shared")
}

/// `<repo>/tests/shared/corpus-gen/gen.py`.
pub fn gen_py() -> PathBuf {
    shared_dir().join("corpus-gen/gen.py")
}

/// A generated home in a temporary directory, removed on drop (set
/// `RECALL_KEEP_TRUTH=1` to keep it for debugging).
pub struct Generated {
    /// The output directory (holds `home/` and `truth.jsonl`).
    pub dir: PathBuf,
}

impl Generated {
    /// The generated home (point `Roots::resolve` at it).
    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    /// The generator's `truth.jsonl`.
    pub fn truth(&self) -> PathBuf {
        self.dir.join("truth.jsonl")
    }
}

impl Drop for Generated {
    fn drop(&mut self) {
        if std::env::var_os("RECALL_KEEP_TRUTH").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("truth: kept {}", self.dir.display());
        }
    }
}

/// Generator flags beyond seed, sessions and sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `--intendant-project-root`: Intendant metas written the real way
    /// (the project in `project_root`, no `cwd`).
    pub intendant_project_root: bool,
}

impl Flags {
    /// The generator's default output.
    pub const DEFAULT: Flags = Flags {
        intendant_project_root: false,
    };
    /// The widest output: real-shaped Intendant metas.
    pub const WIDE: Flags = Flags {
        intendant_project_root: true,
    };
}

/// Runs `gen.py --out <tmp> --seed N --sessions M --sources <list>` (the
/// generator's default output). `Source::Dsh` in `sources` adds `--dsh`.
pub fn generate(seed: u64, sessions: u32, sources: &[Source]) -> Result<Generated, String> {
    generate_with(seed, sessions, sources, Flags::DEFAULT)
}

/// [`generate`] with `flags`. DeepSeek Harness is the generator's opt-in
/// sixth source: with `Source::Dsh` among `sources`, `--dsh` (15 % of
/// `sessions`, at least one per DSH feature) is added; with it alone, the
/// home holds `sessions` DSH sessions only (`--sessions 0 --dsh N`).
pub fn generate_with(
    seed: u64,
    sessions: u32,
    sources: &[Source],
    flags: Flags,
) -> Result<Generated, String> {
    let gen = gen_py();
    if !gen.is_file() {
        return Err(format!(
            "corpus generator missing at {} (vendored under tests/shared/)",
            gen.display()
        ));
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "recall-truth-{}-{seed}-{nanos}",
        std::process::id()
    ));
    let generated = Generated { dir };
    // The sources gen.py writes with `--sources` (DeepSeek Harness has its
    // own flag; it writes none of Gemini CLI, Copilot CLI or Qwen Code).
    const GENERATED: [Source; 5] = [
        Source::ClaudeCode,
        Source::Codex,
        Source::Kimi,
        Source::Pi,
        Source::Intendant,
    ];
    let five: Vec<&str> = sources
        .iter()
        .filter(|s| GENERATED.contains(s))
        .map(|s| s.as_str())
        .collect();
    let mut cmd = Command::new("python3");
    cmd.arg(&gen)
        .arg("--out")
        .arg(&generated.dir)
        .args(["--seed", &seed.to_string()]);
    if five.is_empty() {
        cmd.args(["--sessions", "0", "--dsh", &sessions.to_string()]);
    } else {
        cmd.args(["--sessions", &sessions.to_string()])
            .args(["--sources", &five.join(",")]);
        if sources.contains(&Source::Dsh) {
            cmd.arg("--dsh");
        }
    }
    if flags.intendant_project_root {
        cmd.arg("--intendant-project-root");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run python3 {}: {e}", gen.display()))?;
    if !out.status.success() {
        return Err(format!(
            "gen.py failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(generated)
}

/// The outcome of one comparison.
#[derive(Debug, Default)]
pub struct Report {
    /// Truth sessions compared.
    pub sessions: usize,
    /// Truth records compared.
    pub records: usize,
    /// Tool tokens checked.
    pub tool_tokens: usize,
    /// Distractor tokens checked.
    pub distractors: usize,
    /// Every difference found, readable, in truth order.
    pub diffs: Vec<String>,
}

impl Report {
    /// True when extraction matched the truth exactly.
    pub fn is_clean(&self) -> bool {
        self.diffs.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} sessions, {} records, {} tool tokens, {} distractors: {} differences",
            self.sessions,
            self.records,
            self.tool_tokens,
            self.distractors,
            self.diffs.len()
        )?;
        for d in self.diffs.iter().take(SHOWN_DIFFS) {
            writeln!(f, "  - {d}")?;
        }
        if self.diffs.len() > SHOWN_DIFFS {
            writeln!(f, "  … and {} more", self.diffs.len() - SHOWN_DIFFS)?;
        }
        Ok(())
    }
}

/// Generates a home for `sources` (the generator's default output) and
/// checks the extractors against it.
pub fn run(seed: u64, sessions: u32, sources: &[Source]) -> Result<Report, String> {
    run_with(seed, sessions, sources, Flags::DEFAULT)
}

/// [`run`] with generator `flags`.
pub fn run_with(
    seed: u64,
    sessions: u32,
    sources: &[Source],
    flags: Flags,
) -> Result<Report, String> {
    let g = generate_with(seed, sessions, sources, flags)?;
    check(&g.home(), &g.truth(), sources)
}

#[derive(Default)]
struct TruthSession {
    meta: Value,
    records: Vec<Value>,
    tool_tokens: Vec<String>,
}

/// Extracts every session of `sources` under `home` and compares with `truth`.
pub fn check(home: &Path, truth: &Path, sources: &[Source]) -> Result<Report, String> {
    let (expected, order, distractors) = read_truth(truth)?;
    let mut report = Report::default();
    let got = extract_all(home, sources, &mut report.diffs);

    for key in &order {
        let want = &expected[key];
        report.sessions += 1;
        report.records += want.records.len();
        report.tool_tokens += want.tool_tokens.len();
        let Some(x) = got.get(key) else {
            report.diffs.push(format!(
                "{key}: missing (truth has {} records; title {})",
                want.records.len(),
                want.meta["title"]
            ));
            continue;
        };
        let mut diffs = Vec::new();
        compare_session(key, want, x, &mut diffs);
        let n = diffs.len();
        report
            .diffs
            .extend(diffs.into_iter().take(DIFFS_PER_SESSION));
        if n > DIFFS_PER_SESSION {
            report.diffs.push(format!(
                "{key}: … {} more differences",
                n - DIFFS_PER_SESSION
            ));
        }
    }
    for (key, x) in &got {
        let prose = x.records.iter().filter(|r| r.role != Role::Tool).count();
        if !expected.contains_key(key) && prose > 0 {
            report.diffs.push(format!(
                "{key}: extracted ({prose} records, paths {:?}) but not in truth",
                x.meta.paths
            ));
        }
    }

    report.distractors = distractors.len();
    for (key, x) in &got {
        for (i, r) in x.records.iter().enumerate() {
            if r.role == Role::Tool {
                continue;
            }
            for tok in planted_tokens(&r.text, b'd') {
                if let Some(wh) = distractors.get(tok) {
                    report.diffs.push(format!(
                        "{key}: distractor {tok} ({wh}) found in {} record #{i}: {}",
                        r.role.as_str(),
                        around(&r.text, tok)
                    ));
                }
            }
        }
    }
    Ok(report)
}

type TruthFile = (
    HashMap<String, TruthSession>,
    Vec<String>,
    HashMap<String, String>,
);

fn read_truth(truth: &Path) -> Result<TruthFile, String> {
    let text = std::fs::read_to_string(truth)
        .map_err(|e| format!("cannot read {}: {e}", truth.display()))?;
    let mut sessions: HashMap<String, TruthSession> = HashMap::new();
    let mut order = Vec::new();
    let mut distractors = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: {e}", truth.display(), i + 1))?;
        let key = v["key"].as_str().unwrap_or_default().to_string();
        match v["type"].as_str() {
            Some("session") => {
                order.push(key.clone());
                sessions.entry(key).or_default().meta = v;
            }
            Some("record") => sessions.entry(key).or_default().records.push(v),
            Some("tool_token") => {
                let tok = v["token"].as_str().unwrap_or_default().to_string();
                sessions.entry(key).or_default().tool_tokens.push(tok);
            }
            Some("distractor") => {
                let tok = v["token"].as_str().unwrap_or_default().to_string();
                distractors.insert(tok, v["where"].as_str().unwrap_or("?").to_string());
            }
            _ => return Err(format!("{}:{}: unknown line type", truth.display(), i + 1)),
        }
    }
    Ok((sessions, order, distractors))
}

fn extract_all(
    home: &Path,
    sources: &[Source],
    diffs: &mut Vec<String>,
) -> BTreeMap<String, Extracted> {
    let roots = Roots::resolve(home, |_| None);
    let mut got = BTreeMap::new();
    for src in extract::discover(&roots) {
        if !sources.contains(&src.source) {
            continue;
        }
        match extract::extract(&src) {
            Ok(Some(x)) => {
                let key = x.meta.key();
                if let Some(prev) = got.insert(key.clone(), x) {
                    diffs.push(format!(
                        "{key}: extracted twice (units {:?} and {})",
                        prev.meta.paths, src.unit
                    ));
                }
            }
            Ok(None) => {}
            Err(e) => diffs.push(format!("unit {}: extract failed: {e}", src.unit)),
        }
    }
    got
}

fn compare_session(key: &str, want: &TruthSession, x: &Extracted, diffs: &mut Vec<String>) {
    let m = &want.meta;
    let parent = x
        .meta
        .parent
        .as_ref()
        .map(|p| serde_json::json!({"key": p.key, "relation": p.relation}));
    let fields: [(&str, Value); 7] = [
        ("title", x.meta.title.clone().into()),
        ("cwd", x.meta.cwd.clone().into()),
        ("branch", x.meta.branch.clone().into()),
        ("parent", parent.unwrap_or(Value::Null)),
        ("created_ms", x.meta.created_ms.into()),
        ("updated_ms", x.meta.updated_ms.into()),
        ("messages", x.meta.messages.into()),
    ];
    for (name, got) in fields {
        if m[name] != got {
            diffs.push(format!("{key}: {name}: expected {}, got {got}", m[name]));
        }
    }

    let active = recall_core::derive_active(&x.records, &x.marks);
    let prose: Vec<(usize, &MessageRecord)> = x
        .records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.role != Role::Tool)
        .collect();
    if prose.len() != want.records.len() {
        diffs.push(format!(
            "{key}: {} user/assistant records, expected {}",
            prose.len(),
            want.records.len()
        ));
    }
    for (n, (w, (i, r))) in want.records.iter().zip(&prose).enumerate() {
        let checks: [(&str, Value, Value); 6] = [
            ("role", w["role"].clone(), r.role.as_str().into()),
            ("ts_ms", w["ts_ms"].clone(), r.ts_ms.into()),
            ("truncated", w["truncated"].clone(), r.truncated.into()),
            ("active", w["active"].clone(), active[*i].into()),
            ("subagent", w["subagent"].clone(), r.subagent.into()),
            ("text", w["text"].clone(), r.text.clone().into()),
        ];
        for (name, want_v, got_v) in checks {
            if want_v == got_v {
                continue;
            }
            let detail = match (name, want_v.as_str(), got_v.as_str()) {
                ("text", Some(a), Some(b)) => text_diff(a, b),
                _ => format!("expected {want_v}, got {got_v}"),
            };
            diffs.push(format!(
                "{key}: record #{n} ({} {}): {name}: {detail}",
                w["role"].as_str().unwrap_or("?"),
                w["ts_ms"],
            ));
        }
    }

    for tok in &want.tool_tokens {
        let found = x
            .records
            .iter()
            .any(|r| r.role == Role::Tool && r.text.contains(tok.as_str()));
        if !found {
            diffs.push(format!("{key}: tool token {tok} not in any tool row"));
        }
    }
}

/// Shows where two texts first differ, with a little context.
fn text_diff(want: &str, got: &str) -> String {
    let at = want
        .char_indices()
        .zip(got.chars())
        .find(|((_, a), b)| a != b)
        .map(|((i, _), _)| i)
        .unwrap_or(want.len().min(got.len()));
    let at = floor_char(want, at).min(floor_char(got, at));
    let start = floor_char(want, at.saturating_sub(40));
    let clip = |s: &str| -> String { s.get(start..).unwrap_or("").chars().take(80).collect() };
    format!(
        "differ at byte {at} (lengths {} vs {}): expected …{:?}…, got …{:?}…",
        want.len(),
        got.len(),
        clip(want),
        clip(got)
    )
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A token and 40 bytes of context either side.
fn around(text: &str, tok: &str) -> String {
    let at = text.find(tok).unwrap_or(0);
    let a = floor_char(text, at.saturating_sub(40));
    let b = floor_char(text, at + tok.len() + 40);
    format!("…{:?}…", &text[a..b])
}

/// Every substring of `text` shaped like a planted token: `lead` + 10 chars of
/// Crockford base32 (lowercase, without i, l, o, u).
pub fn planted_tokens(text: &str, lead: u8) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in positions(lead, b) {
        if let Some(cand) = b.get(i + 1..i + 11) {
            if cand.iter().all(|&c| is_b32(c)) {
                // All 11 bytes are ASCII, so both ends are char boundaries.
                if let Some(t) = text.get(i..i + 11) {
                    out.push(t);
                }
            }
        }
    }
    out
}

fn positions(needle: u8, hay: &[u8]) -> impl Iterator<Item = usize> + '_ {
    hay.iter()
        .enumerate()
        .filter(move |(_, &c)| c == needle)
        .map(|(i, _)| i)
}

fn is_b32(c: u8) -> bool {
    matches!(c, b'0'..=b'9' | b'a'..=b'h' | b'j' | b'k' | b'm' | b'n' | b'p'..=b't' | b'v'..=b'z')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_token_shapes() {
        assert_eq!(
            planted_tokens("x d08aasqk6dm, dd", b'd'),
            vec!["d08aasqk6dm"]
        );
        assert!(planted_tokens("dilute things", b'd').is_empty());
    }

    #[test]
    fn text_diff_points_at_first_difference() {
        let d = text_diff("hello world", "hello wxrld");
        assert!(d.contains("byte 7"), "{d}");
    }
}
