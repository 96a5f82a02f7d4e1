//! Codex CLI extractor (DESIGN.md §5, FORMATS.md §2).
//!
//! Root = `CODEX_HOME`. Sessions are rollout files under `sessions/**` and
//! `archived_sessions/**`, plain `.jsonl` or zstd `.jsonl.zst` (a plain twin
//! wins). Titles come from `session_index.jsonl` (last entry per id wins),
//! read once at discovery and handed to each unit in its `context`.
//!
//! One rollout file is one session, whose identity is its first
//! `session_meta` id (bare era: line 1 `id`). Lines after that
//! `session_meta` stamped earlier than it are the replayed history of the
//! parent thread (forks and subagents) and are skipped.

mod line;
mod session;

use super::agent::Agent;
use super::common::resume_command;
use super::common::{for_each_line_in, walk_files};
use super::feed::{Call, Fed, Outcome};
use super::{ExtractError, Extracted, SessionSource};
use recall_core::model::{SessionMeta, Source};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// How deep `sessions/` is searched (`YYYY/MM/DD/` plus slack).
const WALK_DEPTH: usize = 8;
/// Largest `session_index.jsonl` read at discovery.
const INDEX_MAX_BYTES: u64 = 64 << 20;

/// Finds the rollout files under `CODEX_HOME` = `root`.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let titles = read_session_index(&root.join("session_index.jsonl"));
    let is_rollout = |n: &str| n.ends_with(".jsonl") || n.ends_with(".jsonl.zst");
    let mut files = walk_files(&root.join("sessions"), WALK_DEPTH, &is_rollout);
    files.extend(walk_files(
        &root.join("archived_sessions"),
        WALK_DEPTH,
        &is_rollout,
    ));
    let plain: std::collections::HashSet<PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .cloned()
        .collect();
    files
        .into_iter()
        .filter(|p| !(is_zst(p) && plain.contains(&p.with_extension(""))))
        .map(|path| {
            let context = id_in_name(&path)
                .and_then(|id| titles.get(id).map(|t| (id.to_string(), t.clone())))
                .map(|(id, t)| serde_json::json!({ "session_index": { id: t } }))
                .unwrap_or(serde_json::Value::Null);
            SessionSource {
                source: Source::Codex,
                unit: path.to_string_lossy().into_owned(),
                files: vec![path],
                context,
            }
        })
        .collect()
}

fn is_zst(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "zst")
}

/// The uuid at the end of a rollout file name (`rollout-…-<uuid>.jsonl`),
/// used only to pick the `session_index` entry handed to the extractor,
/// which checks it against the real identity.
fn id_in_name(p: &Path) -> Option<&str> {
    let name = p.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".zst")
        .unwrap_or(name)
        .strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    (id.bytes().filter(|&b| b == b'-').count() == 4).then_some(id)
}

/// `session_index.jsonl`: id → `thread_name`, the last entry per id winning.
fn read_session_index(path: &Path) -> HashMap<String, String> {
    #[derive(serde::Deserialize)]
    struct Entry {
        id: Option<String>,
        thread_name: Option<String>,
    }
    let mut out = HashMap::new();
    let Ok(f) = super::open::open_regular(path) else {
        return out;
    };
    let reader = BufReader::new(std::io::Read::take(f, INDEX_MAX_BYTES));
    for line in reader.split(b'\n').map_while(Result::ok) {
        if let Ok(Entry {
            id: Some(id),
            thread_name: Some(name),
        }) = serde_json::from_slice(&line)
        {
            if !name.trim().is_empty() {
                out.insert(id, name);
            }
        }
    }
    out
}

/// Extracts one rollout file.
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    super::resume::run(src, &[], None, false).map(|r| r.extracted)
}

/// A rollout's state for resuming ([`super::resume`]).
pub type Resume = session::Session;

/// Codex in the registry.
pub struct Codex;

impl Agent for Codex {
    const ID: &'static str = "codex";
    const SOURCE: Source = Source::Codex;
    const ENV: &'static str = "CODEX_HOME";
    const SCOPE: Option<&'static [&'static str]> =
        Some(&["sessions", "archived_sessions", "session_index.jsonl"]);
    type Resume = Resume;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".codex"))
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
        scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &Resume,
    ) -> Result<Option<Outcome<Resume>>, ExtractError> {
        resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        Some(resume_command("codex resume", &meta.session_id))
    }
}

/// Extracts from byte 0 (a `.jsonl.zst` is decoded whole and never resumed).
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<Resume>, ExtractError> {
    let Some(path) = call.src.files.first() else {
        return Ok(Outcome::none());
    };
    let io_err = |e| ExtractError::Io {
        path: path.clone(),
        source: e,
    };
    let file = super::open::open_regular(path).map_err(io_err)?;
    if !is_zst(path) {
        drop(file);
        return run(call, session::Session::default(), &Fed::start(path))?
            .ok_or_else(|| io_err(std::io::Error::other("cannot read")));
    }
    let mut s = session::Session::default();
    let decoder = zstd::stream::read::Decoder::new(file).map_err(io_err)?;
    // A truncated or damaged stream yields its decodable prefix, like a
    // torn plain file: the lines decoded before the error are indexed, the
    // partial last one is a torn tail.
    let mut damaged = None;
    let prefix = Prefix {
        inner: decoder,
        error: &mut damaged,
    };
    for_each_line_in(
        BufReader::with_capacity(256 << 10, prefix),
        0,
        0,
        &mut call.diag,
        &mut |l| s.line(l.no, l.bytes),
    )
    .map_err(io_err)?;
    if let Some(e) = damaged {
        call.diag
            .unreadable
            .push(format!("{}: zstd stream cut short: {e}", path.display()));
    }
    call.diag.bad_lines += s.take_bad_lines();
    Ok(Outcome {
        extracted: s.finish(path, |id| index_title(call.src, id)),
        files: Vec::new(),
        state: None,
    })
}

/// A reader that ends (EOF) at its inner reader's first error, keeping it:
/// what a truncated zstd stream decoded before its end is still read.
struct Prefix<'e, R> {
    inner: R,
    error: &'e mut Option<std::io::Error>,
}

impl<R: std::io::Read> std::io::Read for Prefix<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    *self.error = Some(e);
                    return Ok(0);
                }
                ok => return ok,
            }
        }
    }
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly.
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &session::Session,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    match (files, call.src.files.first()) {
        ([fed], Some(path)) if fed.path == *path && !is_zst(path) && state.check() => {
            run(call, state.clone(), fed)
        }
        _ => Ok(None),
    }
}

fn run(
    call: &mut Call,
    mut s: session::Session,
    from: &Fed,
) -> Result<Option<Outcome<Resume>>, ExtractError> {
    let fed = call
        .feed(from, &mut |l| s.line(l.no, l.bytes), &mut |_| {})
        .map_err(|source| ExtractError::Io {
            path: from.path.clone(),
            source,
        })?;
    let Some(fed) = fed else { return Ok(None) };
    call.diag.bad_lines += s.take_bad_lines();
    let state = call.want.then(|| {
        s.seal();
        s.clone()
    });
    Ok(Some(Outcome {
        extracted: s.finish(&fed.path, |id| index_title(call.src, id)),
        files: vec![fed],
        state,
    }))
}

/// The `session_index.jsonl` title discovery handed over for `id`.
fn index_title(src: &SessionSource, id: &str) -> Option<String> {
    src.context
        .get("session_index")
        .and_then(|m| m.get(id))
        .and_then(|t| t.as_str())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_from_rollout_names() {
        let p = Path::new(
            "/x/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl.zst",
        );
        assert_eq!(id_in_name(p), Some("11111111-1111-4111-8111-111111111111"));
        assert_eq!(id_in_name(Path::new("/x/short.jsonl")), None);
    }
}
